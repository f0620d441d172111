"""Time generated/attention.py against plain numpy and a PyTorch reference (`make bench`).

A benchmark report, never a test: it prints times, which the lesson never does. Each
time is given as wall time and as CPU time (user + system, child processes included):
on a machine shared with other jobs the wall time stretches, the CPU time much less.
Every measurement is printed with the load average it saw.

  1. What a user pays, whole processes, taking turns (so that a change of load hits all
     alike), --runs times each, no MALLOC_* variable set, BLAS and torch on one thread:
     `python generated/attention.py`; the same program with plain numpy numerics
     (bench/plain_numpy.py: BLAS @, np.tanh, np.exp), which is what exactness costs; and,
     with torch, the lesson's four trainings alone (bench/our_trainings.py) beside
     bench/torch_reference.py, the same four trainings written in PyTorch (CPU, float64,
     autograd, one thread), import torch included. Medians, the page faults, and the
     ratios of CPU time, taken turn by turn.
  2. The phases of generated/attention.py in this process (the module imported): the hand
     example, the four trainings, the evaluations; rounds per second.
  3. The floor: numpy calls and elements of the product temporaries (mm's, and those of
     right_multiplier in the recurrence) per training round, counted by instrumenting the
     module, times the measured CPU cost of one small numpy call and of one product
     element, next to the measured CPU per round (and its system part and page faults).
  4. The four trainings alone, in-process: PyTorch's against ours, as each script timed
     its trainings in the runs of section 1, the ratio taken pair by pair (the two ran in
     the same turn), and the accuracies of both. (With --runs 0 or --fraction below 1,
     torch runs on its own here and ours comes from section 2: not in the same turns.) torch is installed on first use into
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
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]  # literate/ and measure/, however this file is loaded
from measure import report  # noqa: E402
from measure.clock import MeasuredProgramFailed, load_now, median_timing  # noqa: E402
from measure.floor import COUNT_ROUNDS, count_per_round  # noqa: E402
from measure.phases import load_lesson, time_phases  # noqa: E402
from measure.pytorch import paired_ratios, time_torch, torch_or_skip, torch_summary, trainings_summary  # noqa: E402
from measure.subjects import model_name, scaled_models  # noqa: E402
from measure.whole import OURS, TORCH, TRAININGS, time_whole_program, whole_program_variants  # noqa: E402


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
    report.print_header(args.runs, args.fraction)
    models = scaled_models(args.fraction)
    try:
        python = torch_or_skip(args)
        sys.stdout.flush()
        # The two training scripts run here only at full length; at a fraction, section 4 runs torch alone.
        in_turns = python if args.fraction == 1 else None
        whole = (time_whole_program(args.runs, whole_program_variants(in_turns, args.torch_threads))
                 if args.runs else {})
        if whole:
            report.print_whole_program(whole)
        phases_load = load_now()
        lesson, import_timing = load_lesson()
        phases, accuracy, (call_s, element_s) = time_phases(lesson, models, max(1, args.runs))
        counts = [(model, count_per_round(lesson, model.length, model.attention,
                                          min(COUNT_ROUNDS, model.rounds), model.query, model.lr))
                  for model in models]
        # The whole program trains the full rounds: compare it only with full-round phases.
        ours_whole = (median_timing([run.timing for run in whole[OURS]])
                      if whole and args.fraction == 1 else None)
        report.print_phases(import_timing, phases, models, ours_whole, phases_load)
        report.print_floor(counts, call_s, element_s, phases)
        if python is not None and TORCH in whole and args.fraction == 1:     # both ran in the same turns
            best, trainings = torch_summary(args.torch_threads, whole[TORCH]), trainings_summary(whole[TRAININGS])
            ours = {"train": trainings["train"],
                    "accuracy": {model_name(model): (m["whole"], m["per_token"])
                                 for model, m in zip(models, trainings["report"]["models"], strict=True)}}
            report.print_torch(best, ours, paired_ratios(whole[TORCH], whole[TRAININGS]))
        elif python is not None:
            best = time_torch(python, args.torch_threads, args.fraction, max(1, args.runs))
            ours = {"train": [phases["train " + model_name(model)] for model in models],
                    "accuracy": accuracy}
            report.print_torch(best, ours)
    except MeasuredProgramFailed as failure:
        print("bench: error: %s" % failure, file=sys.stderr)
        return 1
    print()
    print("at end: %s" % report.load_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
