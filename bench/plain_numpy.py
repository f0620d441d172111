"""Run generated/attention.py with plain numpy numerics, for `make bench` only.

The lesson computes every product and every exp/tanh with its own exact functions (mm,
right_multiplier, exp, tanh in the appendix of attention.md), so that every machine prints
the same digits. This runs the same program with those swapped for what a reader would
write by hand — BLAS `@`, np.exp, np.tanh — to measure what exactness costs (the target is
for at most 2.7× in CPU time). It keeps the lesson's allocator thresholds (its main() sets them),
so both pay the same for memory. Its output is not the lesson's transcript and is not checked.
"""

import importlib.util
import multiprocessing
import os
import sys

import numpy as np

PROGRAM = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "generated", "attention.py")


def plain_right_multiplier(W, batch):
    (W,) = W if W.ndim == 3 else (W,)        # the program trains one model at a time: a stack of one
    return lambda xT: (xT.T @ W).T


def load_plain_lesson():
    """The lesson as module "attention" (its main() hands work to a second process by that
    name), with the exact numerics replaced by plain numpy."""
    spec = importlib.util.spec_from_file_location("attention", PROGRAM)
    lesson = importlib.util.module_from_spec(spec)
    sys.modules["attention"] = lesson
    spec.loader.exec_module(lesson)
    lesson.mm, lesson.exp, lesson.tanh = np.matmul, np.exp, np.tanh
    lesson.right_multiplier = plain_right_multiplier
    return lesson


if __name__ == "__main__":
    # The second process must see the swapped functions: fork it from this one.
    multiprocessing.set_start_method("fork")
    sys.stdout.reconfigure(encoding="utf-8")
    load_plain_lesson().main()
