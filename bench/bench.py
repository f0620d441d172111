"""Time generated/attention.py against plain numpy and a PyTorch reference (`make bench`).

A benchmark report, never a test: it prints times, which the lesson never does. Each
time is given as wall time and as CPU time (user + system, child processes included):
on a machine shared with other jobs the wall time stretches, the CPU time much less.
Every measurement is printed with the load average it saw.

  1. What a user pays, whole processes, taking turns (so that a change of load hits all
     alike), --runs times each, no MALLOC_* variable set, BLAS and torch on one thread:
     `python generated/attention.py`; the same program with plain numpy numerics
     (bench/plain_numpy.py: BLAS @, np.tanh, np.exp), which is what exactness costs; and
     bench/torch_reference.py, the same four trainings written in PyTorch (CPU, float64,
     autograd, one thread), import torch included. Medians, the page faults, and the
     ratios of CPU time.
  2. The phases of generated/attention.py in this process (the module imported): the hand
     example, the four trainings, the evaluations; rounds per second.
  3. The floor: numpy calls and elements of the product temporaries (mm's, and those of
     right_multiplier in the recurrence) per training round, counted by instrumenting the
     module, times the measured CPU cost of one small numpy call and of one product
     element, next to the measured CPU per round (and its system part and page faults).
  4. The four trainings alone, in-process: PyTorch's (from the runs of section 1) against
     ours (section 2), and the accuracies of both. torch is installed on first use into
     .cache/bench-venv with `pip install torch==2.13.0`; if that cannot be done (or pip
     would fetch a CUDA build), the reference is skipped with a line saying why.

Examples:
  python bench/bench.py                 # the full report: 3 runs, about 5 minutes on 2 idle cores
  python bench/bench.py --quick         # 1 run, a tenth of the rounds in-process: for development
  python bench/bench.py --runs 5 --no-torch

Progress goes to stderr when it is a terminal. Exit status: 0 done (the torch reference
may have been skipped), 1 a program under measurement failed, 2 bad usage. Linux and
other Unixes only (CPU time of child processes through the resource module).
"""

import argparse
import collections
import contextlib
import functools
import importlib.util
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
import timeit
import types

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "generated", "attention.py")
TORCH_SCRIPT = os.path.join(ROOT, "bench", "torch_reference.py")
BENCH_VENV = os.path.join(ROOT, ".cache", "bench-venv")
TORCH_PIN = "torch==2.13.0"          # on these machines a CPU build of it lies on local disk
# The four trainings of generated/attention.py (bench/torch_reference.py has the same list)
Model = collections.namedtuple("Model", "length attention rounds query lr")
MODELS = [Model(5, False, 2000, "after", 0.003), Model(5, True, 2000, "after", 0.003),
          Model(10, True, 3000, "after", 0.003), Model(10, True, 3000, "before", 0.02)]
COUNT_ROUNDS = 20                    # rounds of each training run under the counters
TORCH_TIMING_KEYS = ("train_s", "train_cpu_s", "train_sys_s", "train_faults")
INSTALL_TIMEOUT = 1800               # seconds for creating the venv and installing torch


def progress(message):
    if sys.stderr.isatty():
        print(message, file=sys.stderr, flush=True)


def model_name(model):
    if not model.attention:
        return "length %d, no attention" % model.length
    return "length %d, attention, query %s, lr %g" % (model.length, model.query, model.lr)


def scaled_models(fraction):
    return [model._replace(rounds=max(1, round(model.rounds * fraction))) for model in MODELS]


def load_now():
    return os.getloadavg()[0]


class MeasuredProgramFailed(Exception):
    pass


# ---------------------------------------------------------------------------
# Wall and CPU time

# cpu = user + system seconds, sys = the system part of it, faults = minor page faults
Timing = collections.namedtuple("Timing", "wall cpu sys faults")


def median_timing(timings):
    return Timing._make(map(statistics.median, zip(*timings, strict=True)))


def total_timing(timings):
    return Timing._make(map(sum, zip(*timings, strict=True)))


def difference(later, earlier):
    return Timing._make(a - b for a, b in zip(later, earlier, strict=True))


def usage_now(who):
    """A Timing since the start of this process (RUSAGE_SELF) or of the waited-for
    descendants (RUSAGE_CHILDREN)."""
    usage = resource.getrusage(who)
    return Timing(time.perf_counter(), usage.ru_utime + usage.ru_stime, usage.ru_stime,
                  usage.ru_minflt)


def timed(function, *args, **kwargs):
    """(result, Timing) of function(*args, **kwargs) in this process."""
    before = usage_now(resource.RUSAGE_SELF)
    result = function(*args, **kwargs)
    return result, difference(usage_now(resource.RUSAGE_SELF), before)


def run_timed(command, stdout, timeout=None, env=None):
    """(completed process, Timing); the Timing includes the command's own children."""
    before = usage_now(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=ROOT, stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=timeout, env=env, check=False)
    return done, difference(usage_now(resource.RUSAGE_CHILDREN), before)


# ---------------------------------------------------------------------------
# 1. Whole processes: ours, plain numpy, PyTorch


# The program sets glibc's allocator thresholds itself (its appendix); no MALLOC_* variable
# may help it here. One thread for every BLAS and for torch: CPU seconds compare work.
PLAIN_SCRIPT = os.path.join(ROOT, "bench", "plain_numpy.py")
OURS = "ours: python generated/attention.py"
PLAIN = "plain numpy (@, np.tanh, np.exp)"
TORCH = "PyTorch, same four trainings, 1 thread"
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
PLAIN_BOUND, TORCH_BOUND = 2.7, 1.3      # targets: ours/plain at most, torch/ours at least

# One run: its Timing, the 1-minute load average at its start and its stdout (torch's JSON)
Run = collections.namedtuple("Run", "timing load stdout")


def measured_env():
    env = {name: value for name, value in os.environ.items() if not name.startswith("MALLOC_")}
    env.update(ONE_THREAD)
    return env


def whole_program_variants(torch_python=None, threads=1):
    """{name: command}, in the order they are run and printed."""
    variants = {OURS: [sys.executable, PROGRAM], PLAIN: [sys.executable, PLAIN_SCRIPT]}
    if torch_python is not None:
        variants[TORCH] = [torch_python, TORCH_SCRIPT, "--threads", str(threads)]
    return variants


def time_whole_program(runs, variants):
    """{variant: [Run, …]}; the variants take turns, so that a change of load hits all alike."""
    results = {name: [] for name in variants}
    for run in range(runs):
        for name, command in variants.items():
            progress("whole program, %s: run %d of %d" % (name, run + 1, runs))
            load = load_now()
            done, timing = run_timed(command, subprocess.PIPE, env=measured_env())
            if done.returncode != 0:
                raise MeasuredProgramFailed("%s exited with %d:\n%s"
                                            % (" ".join(map(os.path.basename, command[1:])),
                                               done.returncode, done.stderr[-2000:]))
            results[name].append(Run(timing, load, done.stdout))
    return results


# ---------------------------------------------------------------------------
# 2. The phases, in this process


def load_lesson():
    """Import generated/attention.py as a module (its main() is not run); (module, Timing)."""
    spec = importlib.util.spec_from_file_location("attention_under_bench", PROGRAM)
    lesson = importlib.util.module_from_spec(spec)
    _, timing = timed(spec.loader.exec_module, lesson)
    return lesson, timing


def time_phases_once(lesson, models):
    """{phase: Timing} for one pass, and {model: (whole, per_token)} accuracies."""
    timings, accuracy = {}, {}
    _, timings["hand example"] = timed(lesson.hand_example)
    for model in models:
        name = model_name(model)
        progress("in-process: training %s, %d rounds" % (name, model.rounds))
        test = lesson.make_test_set(model.length)
        (params,), timings["train " + name] = timed(lesson.train, model.length, model.attention,
                                                    model.rounds, test, query=model.query, lr=model.lr)
        result, timings["evaluate " + name] = timed(lesson.evaluate, params, test, model.query)
        accuracy[name] = (float(result[0]), float(result[1]))
    return timings, accuracy


def time_phases(lesson, models, runs):
    """{phase: median Timing} over `runs` passes, the (deterministic) accuracies, and the
    unit prices of section 3 (median seconds per small call and per product element),
    measured after each pass so that under a changing load they see what the trainings saw."""
    passes, prices = [], []
    for _ in range(runs):
        timings, accuracy = time_phases_once(lesson, models)
        passes.append(timings)
        prices.append((small_call_seconds(), element_seconds(lesson)))
    phases = {phase: median_timing([p[phase] for p in passes]) for phase in passes[0]}
    return phases, accuracy, tuple(map(statistics.median, zip(*prices, strict=True)))


# ---------------------------------------------------------------------------
# 3. The floor: count what one round asks numpy to do, and price it


CALL_KINDS = ("ufunc", "function", "method")   # operators and reductions are ufuncs


class CallCounter:
    """Counts entries into numpy from the lesson's code, by kind; what numpy calls inside
    one of them (np.mean calling add.reduce, say) is part of that call, not counted again."""

    def __init__(self):
        self.calls = dict.fromkeys(CALL_KINDS, 0)
        self.product_elements = 0
        self._depth = 0

    @contextlib.contextmanager
    def call(self, kind):
        if self._depth == 0:
            self.calls[kind] += 1
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1


COUNTER = CallCounter()
RANDOM_STATES = (np.random.RandomState, np.random.Generator)   # their draws are counted too


def _plain(x):
    return x.view(np.ndarray) if isinstance(x, Counted) else x


def _counted(x):
    """Results handed back to the lesson's code: arrays become Counted, so that what the
    lesson does with them next (operators, methods, indexing) is counted too."""
    if type(x) is np.ndarray:
        return x.view(Counted)
    if isinstance(x, (tuple, list)):
        return type(x)(_counted(item) for item in x)
    if isinstance(x, RANDOM_STATES):
        return CountingProxy(x)
    return x


class Counted(np.ndarray):
    """An ndarray that counts every ufunc (operators and reductions included), every
    array function (np.concatenate, …) and the common methods called on it."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        with COUNTER.call("ufunc"):
            if "out" in kwargs:
                kwargs["out"] = tuple(map(_plain, kwargs["out"]))
            return _counted(getattr(ufunc, method)(*map(_plain, inputs), **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        with COUNTER.call("function"):
            return _counted(super().__array_function__(func, types, args, kwargs))

    @property
    def T(self):
        return self.transpose()


def _counting_method(method):
    @functools.wraps(method)
    def counting(self, *args, **kwargs):
        with COUNTER.call("method"):
            return _counted(method(self.view(np.ndarray), *args, **kwargs))
    return counting


for _name in ("__getitem__", "__setitem__", "astype", "reshape", "ravel", "transpose",
              "swapaxes", "copy", "argmax", "argmin", "argsort", "sum", "mean", "max", "min",
              "any", "all", "cumsum", "nonzero", "tolist", "item"):
    setattr(Counted, _name, _counting_method(getattr(np.ndarray, _name)))


class CountingProxy:
    """Stands in for numpy (or a random generator) in the lesson's module: each call made
    through it is counted, and the arrays it returns are Counted."""

    def __init__(self, target):
        self._target = target

    def __getattr__(self, name):
        value = getattr(self._target, name)
        if isinstance(value, type):               # dtypes and np.ndarray stay themselves
            return CountingProxy(value) if issubclass(value, RANDOM_STATES) else value
        if isinstance(value, types.ModuleType) or callable(value):
            return CountingProxy(value)
        return value                              # constants

    def __call__(self, *args, **kwargs):
        is_ufunc = isinstance(getattr(self._target, "__self__", self._target), np.ufunc)
        with COUNTER.call("ufunc" if is_ufunc else "function"):
            return _counted(self._target(*args, **kwargs))


def product_elements(a, b):
    """Elements of mm's product temporary for a @ b: batch × M × K × N."""
    if a.ndim < 2 or b.ndim < 2:
        return a.size * b.size
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return math.prod(batch) * a.shape[-2] * a.shape[-1] * b.shape[-1]


@contextlib.contextmanager
def instrumented(lesson):
    """Swap the module's numpy, its two product functions (mm, and right_multiplier for the
    recurrence) and its array constants for counting stand-ins."""
    original_mm, original_right_multiplier = lesson.mm, getattr(lesson, "right_multiplier", None)

    def counting_mm(a, b):
        COUNTER.product_elements += product_elements(a, b)
        return original_mm(a, b)

    def counting_right_multiplier(W, batch):
        times_W = original_right_multiplier(W, batch)

        def counting_times_W(xT):
            COUNTER.product_elements += W.size * batch         # K × N × batch
            return times_W(xT)
        return counting_times_W

    swaps = {"np": CountingProxy(np), "mm": counting_mm}
    if original_right_multiplier is not None:         # older versions of the lesson had none
        swaps["right_multiplier"] = counting_right_multiplier
    swaps.update({name: value.view(Counted) for name, value in vars(lesson).items()
                  if type(value) is np.ndarray})
    saved = {name: getattr(lesson, name) for name in swaps}
    vars(lesson).update(swaps)
    try:
        yield COUNTER
    finally:
        vars(lesson).update(saved)


def count_training(lesson, length, attention, rounds, test, query="after", lr=0.003):
    """Numpy calls of each kind and product elements of train(...), set-up included."""
    COUNTER.__init__()
    with instrumented(lesson):
        lesson.train(length, attention, rounds, test, query=query, lr=lr)
    return dict(COUNTER.calls, elements=COUNTER.product_elements)


def count_per_round(lesson, length, attention, rounds=COUNT_ROUNDS, query="after", lr=0.003):
    """Per training round: the counts of `rounds` rounds less those of the set-up alone."""
    test = lesson.make_test_set(length)
    setup = count_training(lesson, length, attention, 0, test, query, lr)
    total = count_training(lesson, length, attention, rounds, test, query, lr)
    return {key: (total[key] - setup[key]) / rounds for key in total}


def median_cpu_seconds(statement, number, namespace):
    """CPU seconds of one execution of statement: the median of 7 repeats."""
    return statistics.median(timeit.repeat(statement, number=number, repeat=7, globals=namespace,
                                           timer=time.process_time)) / number


def small_call_seconds():
    """One small numpy call: x + y on 512 float64 (the size of a (32, 16) state)."""
    x, y = np.ones(512), np.ones(512)
    return median_cpu_seconds("x + y", 20000, {"x": x, "y": y})


def element_seconds(lesson):
    """One element of a large product temporary: the lesson's mm on (512, 16) @ (16, 16),
    131072 elements multiplied and summed."""
    a, b = np.full((512, 16), 0.5), np.full((16, 16), 0.25)
    namespace = {"mm": lesson.mm, "a": a, "b": b}
    return median_cpu_seconds("mm(a, b)", 200, namespace) / (512 * 16 * 16)


# ---------------------------------------------------------------------------
# 4. The PyTorch reference


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
    done, timing = run_timed([python, TORCH_SCRIPT, "--threads", str(threads),
                              "--fraction", repr(fraction)], subprocess.PIPE, timeout)
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


def torch_summary(threads, results):
    """Medians over the runs: whole-process and per-model training Timings, import and
    warm-up seconds; the last run's report (the accuracies do not depend on timing)."""
    timings = [run.timing for run in results]
    reports = [run.stdout if isinstance(run.stdout, dict) else json.loads(run.stdout)
               for run in results]
    load = statistics.median(run.load for run in results)
    train = [median_timing([Timing(*(r["models"][i][key] for key in TORCH_TIMING_KEYS))
                            for r in reports]) for i in range(len(MODELS))]
    return {"threads": threads, "load": load, "whole": median_timing(timings), "train": train,
            "import": statistics.median(r["import_s"] for r in reports),
            "warmup": statistics.median(r["warmup_s"] for r in reports),
            "report": reports[-1]}


# ---------------------------------------------------------------------------
# The report


def print_table(headers, rows):
    cells = [headers] + [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [table_row(row, widths) for row in cells]
    lines.insert(1, table_row(["-" * width for width in widths], widths))
    print("\n".join(lines))


def table_row(cells, widths):
    """Fixed-width columns: the first left-aligned, the others right-aligned."""
    first = cells[0].ljust(widths[0])
    rest = [cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True)]
    return "  " + "  ".join([first] + rest).rstrip()


def seconds(timing, digits=2):
    return ["%.*f" % (digits, timing.wall), "%.*f" % (digits, timing.cpu)]


def load_line():
    one, five, fifteen = os.getloadavg()
    return "load average %.2f %.2f %.2f on %d cores" % (one, five, fifteen, os.cpu_count())


def print_header(runs, fraction):
    print("bench: generated/attention.py — Python %s, numpy %s, %s"
          % (platform.python_version(), np.__version__, platform.machine()))
    print("runs %d, rounds × %s of the lesson's; at start: %s" % (runs, fraction, load_line()))
    print("wall = elapsed seconds; cpu = user + system seconds, child processes included;"
          " sys = the system part")


def print_whole_program(results):
    print()
    runs = len(next(iter(results.values())))
    print("1. what a user pays: whole processes, %d run(s) of each, taking turns; no MALLOC_*"
          " variable set, BLAS and torch on one thread" % runs)
    rows = []
    for name, samples in results.items():
        timings = [run.timing for run in samples]
        walls, median = [t.wall for t in timings], median_timing(timings)
        rows.append([name, "%.2f" % median.wall, "%.2f" % min(walls), "%.2f" % max(walls),
                     "%.2f" % median.cpu, "%.2f" % median.sys, "%.0f" % median.faults,
                     "%.2f" % statistics.median(run.load for run in samples)])
    print_table(["variant (medians)", "wall s", "min", "max", "cpu s", "of it sys",
                 "page faults", "load at start"], rows)
    ours, plain = (median_timing([run.timing for run in results[name]]) for name in (OURS, PLAIN))
    print("   ours / plain numpy: %.2f× cpu, %.2f× wall (target: cpu at most %.1f×)"
          % (ours.cpu / plain.cpu, ours.wall / plain.wall, PLAIN_BOUND))
    if TORCH in results:
        torch = median_timing([run.timing for run in results[TORCH]])
        print("   PyTorch / ours: %.2f× cpu, %.2f× wall (target: cpu at least %.1f×)"
              % (torch.cpu / ours.cpu, torch.wall / ours.wall, TORCH_BOUND))


def phase_row(name, timing, rounds=None):
    if rounds is None:
        return [name, ""] + seconds(timing, 3) + ["", ""]
    return ([name, rounds] + seconds(timing, 3)
            + ["%.0f" % (rounds / timing.wall), "%.2f" % (1e3 * timing.cpu / rounds)])


def print_phases(import_timing, phases, models, whole, load):
    print()
    print("2. phases, in-process, median over the runs (load %.2f at start)" % load)
    rounds = {"train " + model_name(model): model.rounds for model in models}
    rows = [phase_row("import generated/attention.py (tables)", import_timing)]
    rows += [phase_row(phase, timing, rounds.get(phase)) for phase, timing in phases.items()]
    total = total_timing([import_timing, *phases.values()])
    rows.append(phase_row("all phases", total))
    if whole is not None:
        rows.append(phase_row("whole program less all phases", difference(whole, total)))
    print_table(["phase", "rounds", "wall s", "cpu s", "rounds/s (wall)", "cpu ms/round"], rows)
    if whole is not None:
        print("   (start-up, test sets, printing and section 1's page faults; in wall time, less"
              " what the program's second process overlaps)")


def print_floor(counts, call_s, element_s, phases):
    print()
    print("3. the floor: per training round, counted over %d rounds (set-up excluded)"
          % min(COUNT_ROUNDS, counts[0][0].rounds))
    print_table(["model", "numpy calls", "ufunc/func/method", "product elements"],
                [[model_name(model), "%.0f" % sum(count[k] for k in CALL_KINDS),
                  "/".join("%.0f" % count[k] for k in CALL_KINDS), "%.0f" % count["elements"]]
                 for model, count in counts])
    print()
    print("   priced in CPU time, measured after each pass of section 2: one small numpy call"
          " (x + y, 512 float64) %.2f µs, one product element (mm, 131072 at once) %.3f ns"
          % (call_s * 1e6, element_s * 1e9))
    rows = []
    for model, count in counts:
        rounds = model.rounds
        calls_ms = sum(count[k] for k in CALL_KINDS) * call_s * 1e3
        elements_ms = count["elements"] * element_s * 1e3
        measured = phases["train " + model_name(model)]
        rows.append([model_name(model), "%.2f" % calls_ms, "%.2f" % elements_ms,
                     "%.2f" % (calls_ms + elements_ms), "%.2f" % (1e3 * measured.cpu / rounds),
                     "%.2f" % (1e3 * measured.sys / rounds), "%.0f" % (measured.faults / rounds),
                     "%.1f" % (measured.cpu / rounds * 1e3 / (calls_ms + elements_ms))])
    print_table(["ms per round", "calls", "elements", "floor", "measured cpu", "of it sys",
                 "page faults", "measured/floor"], rows)


def ratio_row(name, torch_timing, ours_timing):
    return ([name] + seconds(torch_timing) + seconds(ours_timing)
            + ["%.2f" % (torch_timing.wall / ours_timing.wall),
               "%.2f" % (torch_timing.cpu / ours_timing.cpu)])


def print_torch(best, ours):
    report = best["report"]
    print()
    print("4. the four trainings alone, in-process: PyTorch %s (CPU, float64, autograd, Adam,"
          " %d thread(s); bench/torch_reference.py; load %.2f) against ours (section 2)"
          % (report["torch"], best["threads"], best["load"]))
    print("   import torch %.2f s and its first round (which imports torch._dynamo) %.2f s:"
          " in its whole process (section 1), not in its trainings" % (best["import"], best["warmup"]))
    names = [model_name(Model(m["length"], m["attention"], m["rounds"], m["query"], m["lr"]))
             for m in report["models"]]
    rows = [ratio_row(name, best["train"][i], ours["train"][i]) for i, name in enumerate(names)]
    rows.append(ratio_row("the four trainings", total_timing(best["train"]),
                          total_timing(ours["train"])))
    print_table(["median seconds", "torch wall", "torch cpu", "ours wall", "ours cpu",
                 "torch/ours wall", "torch/ours cpu"], rows)
    print()
    print_table(["same task: accuracy on 100 held-out sequences", "rounds",
                 "torch whole / per token", "ours whole / per token"],
                [[name, m["rounds"], "%.4f / %.4f" % (m["whole"], m["per_token"]),
                  "%.4f / %.4f" % ours["accuracy"][name]]
                 for name, m in zip(names, report["models"], strict=True)])


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


# ---------------------------------------------------------------------------


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3,
                        help="runs of each measurement (default 3; 0: no whole-process runs"
                             " and one of each other)")
    parser.add_argument("--fraction", type=float, default=1.0,
                        help="fraction of the lesson's rounds for the in-process and torch"
                             " trainings (default 1)")
    parser.add_argument("--quick", action="store_true", help="same as --runs 1 --fraction 0.1")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch reference")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="torch.set_num_threads for the reference (default 1)")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.fraction = 1, 0.1
    if args.runs < 0 or not 0 < args.fraction <= 1:
        parser.error("--runs must be ≥ 0 and --fraction in (0, 1]")
    return args


def main(argv=None):
    args = parse_args(argv)
    print_header(args.runs, args.fraction)
    models = scaled_models(args.fraction)
    try:
        python = torch_or_skip(args)
        sys.stdout.flush()
        whole = (time_whole_program(args.runs, whole_program_variants(python, args.torch_threads))
                 if args.runs else {})
        if whole:
            print_whole_program(whole)
        phases_load = load_now()
        lesson, import_timing = load_lesson()
        phases, accuracy, (call_s, element_s) = time_phases(lesson, models, max(1, args.runs))
        counts = [(model, count_per_round(lesson, model.length, model.attention,
                                          min(COUNT_ROUNDS, model.rounds), model.query, model.lr))
                  for model in models]
        # The whole program trains the full rounds: compare it only with full-round phases.
        ours_whole = (median_timing([run.timing for run in whole[OURS]])
                      if whole and args.fraction == 1 else None)
        print_phases(import_timing, phases, models, ours_whole, phases_load)
        print_floor(counts, call_s, element_s, phases)
        if python is not None:
            if TORCH in whole and args.fraction == 1:
                best = torch_summary(args.torch_threads, whole[TORCH])
            else:
                best = time_torch(python, args.torch_threads, args.fraction, max(1, args.runs))
            ours = {"train": [phases["train " + model_name(model)] for model in models],
                    "accuracy": accuracy}
            print_torch(best, ours)
    except MeasuredProgramFailed as failure:
        print("bench: error: %s" % failure, file=sys.stderr)
        return 1
    print()
    print("at end: %s" % load_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
