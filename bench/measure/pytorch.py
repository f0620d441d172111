"""Section 4's reference: torch installed on first use into .cache/bench-venv (a CPU build only), and
bench/torch_reference.py run there; its training times summed up per model."""

import json
import os
import shutil
import statistics
import subprocess
import sys

from . import subjects
from .clock import MeasuredProgramFailed, Timing, load_now, median_ratios, median_timing, progress, run_timed, total_timing
from .whole import Run, measured_command, measured_env

BENCH_VENV = os.path.join(subjects.ROOT, ".cache", "bench-venv")
TORCH_PIN = "torch==2.13.0"          # on these machines a CPU build of it lies on local disk
TRAINING_TIMING_KEYS = ("train_s", "train_cpu_s", "train_sys_s", "train_faults")   # in both scripts' reports
INSTALL_TIMEOUT = 1800               # seconds for creating the venv and installing torch


class TorchUnavailable(Exception):
    pass


def venv_python():
    return os.path.join(BENCH_VENV, "bin", "python")


def run_quietly(command, timeout=INSTALL_TIMEOUT):
    """The command's stdout; TorchUnavailable with its last error line if it fails."""
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["(no message)"]
        first_error = next((line for line in lines if line.startswith("ERROR:")), lines[-1])
        raise TorchUnavailable("`%s` failed: %s" % (" ".join(command[2:]), first_error))
    return done.stdout


def refuse_cuda_build(python):
    """Ask pip what it would install, and refuse a CUDA build (several GB of nvidia-*)."""
    try:
        report = json.loads(run_quietly([python, "-m", "pip", "install", "--dry-run", "--quiet",
                                         "--report", "-", TORCH_PIN]))
        names = [item["metadata"]["name"].lower() for item in report["install"]]
    except (ValueError, KeyError, TypeError):
        raise TorchUnavailable("could not read pip's install report (pip too old?)") from None
    cuda = [name for name in names if name.startswith(("nvidia-", "triton", "cuda-"))]
    if cuda:
        raise TorchUnavailable("pip would install a CUDA build of %s (%s, …), not a CPU one"
                               % (TORCH_PIN, ", ".join(cuda[:3])))


def ensure_torch():
    """The bench venv's python, with torch installed in it (on first use: a few minutes)."""
    marker = os.path.join(BENCH_VENV, "bench-installed.txt")
    try:
        with open(marker, encoding="utf-8") as f:
            if f.read().strip() == TORCH_PIN:
                return venv_python()
    except FileNotFoundError:
        pass
    print("installing %s into %s (first use only)" % (TORCH_PIN, os.path.relpath(BENCH_VENV)),
          file=sys.stderr, flush=True)
    shutil.rmtree(BENCH_VENV, ignore_errors=True)
    try:
        run_quietly([sys.executable, "-m", "venv", BENCH_VENV])
        refuse_cuda_build(venv_python())
        run_quietly([venv_python(), "-m", "pip", "install", "--quiet", TORCH_PIN])
        run_quietly([venv_python(), "-c", "import torch"])
    except subprocess.TimeoutExpired:
        raise TorchUnavailable("installing %s took over %d s"
                               % (TORCH_PIN, INSTALL_TIMEOUT)) from None
    with open(marker, "w", encoding="utf-8") as f:
        f.write(TORCH_PIN + "\n")
    return venv_python()


def run_torch_once(python, threads, fraction, timeout=None):
    """(Timing of the whole process, its JSON report) for bench/torch_reference.py."""
    command = measured_command(python, subjects.TORCH_SCRIPT, "--threads", str(threads),
                               "--fraction", repr(fraction))
    done, timing = run_timed(command, subprocess.PIPE, timeout, env=measured_env())
    if done.returncode != 0:
        raise MeasuredProgramFailed("bench/torch_reference.py exited with %d:\n%s"
                                    % (done.returncode, done.stderr[-2000:]))
    return timing, json.loads(done.stdout)


def time_torch(python, threads, fraction, runs):
    """Section 4 on its own, when section 1 did not run torch with the full rounds."""
    results = []
    for run in range(runs):
        progress("torch reference, %d thread(s): run %d of %d" % (threads, run + 1, runs))
        load = load_now()
        timing, report = run_torch_once(python, threads, fraction)
        results.append(Run(timing, load, report))
    return torch_summary(threads, results)


def reports_of(results):
    """The JSON report each run printed (torch_reference.py's, or our_trainings.py's)."""
    return [run.stdout if isinstance(run.stdout, dict) else json.loads(run.stdout) for run in results]


def training_timings(report):
    """Per model, the Timing of its training, as the script measured it in its own process."""
    return [Timing(*(model[key] for key in TRAINING_TIMING_KEYS)) for model in report["models"]]


def trainings_summary(results):
    """Medians over the runs: the whole process and each model's training; the last run's report
    (the accuracies do not depend on timing)."""
    reports = reports_of(results)
    train = [median_timing(timings) for timings in zip(*map(training_timings, reports), strict=True)]
    return {"load": statistics.median(run.load for run in results),
            "whole": median_timing([run.timing for run in results]), "train": train, "report": reports[-1]}


def torch_summary(threads, results):
    """trainings_summary, and the threads, import and warm-up seconds of the PyTorch runs."""
    reports, summary = reports_of(results), trainings_summary(results)
    summary["threads"] = threads
    summary["import"] = statistics.median(r["import_s"] for r in reports)
    summary["warmup"] = statistics.median(r["warmup_s"] for r in reports)
    return summary


def paired_ratios(torch_runs, our_runs):
    """PyTorch's four trainings over ours, taken pair by pair (a pair ran in the same turn, under the same
    load): the median over the pairs of the CPU ratio and of the wall ratio."""
    totals = [[total_timing(training_timings(report)) for report in reports_of(runs)] for runs in (torch_runs, our_runs)]
    return median_ratios(*totals)


def torch_or_skip(args):
    """The bench venv's python, or None after printing why the reference is skipped."""
    if args.no_torch:
        print()
        print("PyTorch reference: skipped (--no-torch)")
        return None
    try:
        return ensure_torch()
    except TorchUnavailable as why:
        print()
        print("PyTorch reference: skipped — %s" % why)
        return None
