"""Section 1, what a user pays: whole processes of ours, plain numpy, our four trainings alone and PyTorch's,
taking turns."""

import collections
import os
import subprocess
import sys

from literate.runner import RUN_FLAGS, run_env

from . import subjects
from .clock import MeasuredProgramFailed, load_now, progress, run_timed

OURS = "ours: python generated/attention.py"
PLAIN = "plain numpy (@, np.tanh, np.exp)"
TRAININGS = "ours, the four trainings alone"
TORCH = "PyTorch, same four trainings, 1 thread"
PLAIN_BOUND, TORCH_BOUND = 2.0, 1.5      # targets: ours/plain at most, torch/(our trainings) at least

# One run: its Timing, the 1-minute load average at its start and its stdout (torch's JSON)
Run = collections.namedtuple("Run", "timing load stdout")


def measured_env():
    """The environment every run of a program gets (literate/runner.py's run_env: one thread for every
    BLAS, and for torch, so that CPU seconds compare work), with two differences. Bytecode is read where
    Python keeps it, as a reader's run reads it: a fresh pycache folder would compile numpy (and torch)
    anew inside every timed run. And no MALLOC_* variable: the program sets glibc's allocator thresholds
    itself (its appendix), and none may help it here."""
    return {name: value for name, value in run_env(None).items() if not name.startswith("MALLOC_")}


def measured_command(python, script, *args):
    """python with the options every run of a program gets (RUN_FLAGS: -B -s), then the script."""
    return [python, *RUN_FLAGS, script, *args]


def whole_program_variants(torch_python=None, threads=1):
    """{name: command}, in the order they are run and printed. PyTorch's four trainings are set beside
    ours alone (bench/our_trainings.py), not beside the whole program, which does more."""
    variants = {OURS: measured_command(sys.executable, subjects.PROGRAM),
                PLAIN: measured_command(sys.executable, subjects.PLAIN_SCRIPT)}
    if torch_python is not None:
        variants[TRAININGS] = measured_command(sys.executable, subjects.TRAININGS_SCRIPT)
        variants[TORCH] = measured_command(torch_python, subjects.TORCH_SCRIPT, "--threads", str(threads))
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
                script = command[1 + len(RUN_FLAGS):]
                raise MeasuredProgramFailed("%s exited with %d:\n%s"
                                            % (" ".join(map(os.path.basename, script)),
                                               done.returncode, done.stderr[-2000:]))
            results[name].append(Run(timing, load, done.stdout))
    return results
