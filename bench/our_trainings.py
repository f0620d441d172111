"""The lesson's own four trainings, alone, in a process of their own: what bench/bench.py sets
beside bench/torch_reference.py, so that the two whole processes do the same work.

Imports generated/attention.py as a module (its main() is not run), sets the allocator as its
main() does, and trains and evaluates the four models of measure/subjects.py with the lesson's
own `train` and `evaluate`. Prints one JSON object on stdout with the same keys per model as
torch_reference.py: training seconds (wall, CPU, system), page faults, evaluation seconds, and
the whole-sequence and per-token accuracy on the lesson's 100 held-out test sequences.

Examples:
  .venv/bin/python bench/our_trainings.py
  .venv/bin/python bench/our_trainings.py --fraction 0.1
"""

import argparse
import json
import resource
import time

from measure.clock import difference, usage_now  # bench/ is sys.path[0]
from measure.phases import load_lesson
from measure.subjects import MODELS


def run_model(lesson, length, attention, rounds, query, lr):
    test = lesson.make_test_set(length)
    before = usage_now(resource.RUSAGE_SELF)
    (model,) = lesson.train(lesson.Setting(attention=attention, query=query, lr=lr), test, rounds)
    training = difference(usage_now(resource.RUSAGE_SELF), before)
    trained = time.perf_counter()
    result = lesson.evaluate(model, test)
    return {
        "length": length, "attention": attention, "rounds": rounds, "query": query, "lr": lr,
        "params": lesson.count_params(model),
        "train_s": training.wall, "train_cpu_s": training.cpu, "train_sys_s": training.sys,
        "train_faults": training.faults,
        "eval_s": time.perf_counter() - trained,
        "whole": float(result.whole), "per_token": float(result.per_token),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fraction", type=float, default=1.0,
                        help="fraction of the lesson's rounds to train (default 1)")
    args = parser.parse_args(argv)
    if not 0 < args.fraction <= 1:
        parser.error("--fraction must be in (0, 1]")
    lesson, _ = load_lesson()
    lesson.keep_freed_memory()                       # as the program's main() does
    models = [run_model(lesson, length, attention, max(1, round(rounds * args.fraction)), query, lr)
              for length, attention, rounds, query, lr in MODELS]
    print(json.dumps({"models": models}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
