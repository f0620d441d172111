"""The report: a fixed-width table per section, with the load each measurement saw."""

import os
import platform
import statistics

import numpy as np

from .clock import difference, median_ratios, median_timing, total_timing
from .floor import CALL_KINDS, COUNT_ROUNDS
from .subjects import Model, model_name
from .whole import OURS, PLAIN, PLAIN_BOUND, TORCH, TORCH_BOUND, TRAININGS


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
    print("   ratios taken turn by turn (the two ran one after the other), median over the turns:")
    print("   ours / plain numpy: %.2f× cpu, %.2f× wall (target: cpu at most %.1f×)"
          % (*turn_by_turn(results[OURS], results[PLAIN]), PLAIN_BOUND))
    if TORCH in results:
        print("   PyTorch / ours, the same four trainings, whole processes (import torch included): %.2f× cpu,"
              " %.2f× wall" % turn_by_turn(results[TORCH], results[TRAININGS]))


def turn_by_turn(runs, others):
    """The median over the turns of runs[i] / others[i], in CPU and in wall time."""
    return median_ratios([run.timing for run in runs], [other.timing for other in others])


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


def print_torch(best, ours, paired=None):
    """paired: (cpu, wall) ratios taken pair by pair when both ran in section 1's turns; else None."""
    report = best["report"]
    print()
    print("4. the four trainings alone, in-process: PyTorch %s (CPU, float64, autograd, Adam,"
          " %d thread(s); bench/torch_reference.py; load %.2f) against ours (%s)"
          % (report["torch"], best["threads"], best["load"],
             "bench/our_trainings.py, in the same turns of section 1" if paired else
             "section 2, not in the same turns"))
    print("   import torch %.2f s and its first round (which imports torch._dynamo) %.2f s:"
          " in its whole process (section 1), not in its trainings" % (best["import"], best["warmup"]))
    names = [model_name(Model(m["length"], m["attention"], m["rounds"], m["query"], m["lr"]))
             for m in report["models"]]
    rows = [ratio_row(name, best["train"][i], ours["train"][i]) for i, name in enumerate(names)]
    rows.append(ratio_row("the four trainings", total_timing(best["train"]),
                          total_timing(ours["train"])))
    print_table(["median seconds", "torch wall", "torch cpu", "ours wall", "ours cpu",
                 "torch/ours wall", "torch/ours cpu"], rows)
    if paired:
        print("   PyTorch / ours, the four trainings, pair by pair (each pair in one turn), median: %.2f× cpu,"
              " %.2f× wall (target: cpu at least %.1f×)" % (*paired, TORCH_BOUND))
    print()
    print_table(["same task: accuracy on 100 held-out sequences", "rounds",
                 "torch whole / per token", "ours whole / per token"],
                [[name, m["rounds"], "%.4f / %.4f" % (m["whole"], m["per_token"]),
                  "%.4f / %.4f" % ours["accuracy"][name]]
                 for name, m in zip(names, report["models"], strict=True)])
