"""The program keeps freed memory in the process (〈附录：让释放的内存留在进程里〉): after the first
rounds, a training round causes (almost) no page faults, with no MALLOC_* variable set. Counts,
not times: the test never asserts a time. Only main() changes the process; importing does not."""
import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

GENERATED = Path(__file__).resolve().parent.parent / "generated"

PROBE = """
import resource, sys
sys.path.insert(0, sys.argv[1])
import attention as A
A.keep_freed_memory()                                       # what both programs' main() do first
test = A.make_test_set(10)
A.train(A.Setting(), test, 5)                               # warm: the heap grows to its size
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
A.train(A.Setting(query="before", lr=0.02), test, 40)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def is_glibc():
    try:
        return hasattr(ctypes.CDLL(None), "gnu_get_libc_version")
    except (OSError, TypeError):
        return False


@pytest.mark.skipif(not is_glibc(), reason="the thresholds are glibc's; elsewhere the chunk does nothing")
def test_training_rounds_cause_no_page_faults_without_malloc_variables():
    env = {name: value for name, value in os.environ.items() if not name.startswith("MALLOC_")}
    done = subprocess.run([sys.executable, "-c", PROBE, str(GENERATED)], env=env, capture_output=True,
                          text=True, timeout=300, check=True)
    faults = int(done.stdout)
    # Without the thresholds these 40 rounds fault about 10 000 times (4 KiB each, every round).
    assert faults < 400, faults


def test_the_thresholds_change_no_bits():
    """The same short training with glibc's default thresholds (a fresh process, chunk disabled)
    and with the program's: identical parameters."""
    code = """
import ctypes, sys
sys.path.insert(0, sys.argv[1])
if sys.argv[2] == "default":
    ctypes.CDLL = None                                      # keep_freed_memory() then returns at once
import attention as A
import numpy as np
A.keep_freed_memory()
model = A.train(A.Setting(query="before", lr=0.02), A.make_test_set(10), 30)[0]
sys.stdout.write(np.concatenate([p.ravel() for p in model.values()]).tobytes().hex())
"""
    outputs = [subprocess.run([sys.executable, "-c", code, str(GENERATED), mode], capture_output=True,
                              text=True, timeout=300, check=True).stdout for mode in ("default", "kept")]
    assert outputs[0] == outputs[1] and len(outputs[0]) > 1000


@pytest.mark.parametrize("program", ["attention", "experiments"])
def test_importing_a_program_changes_nothing_in_the_process(program):
    """keep_freed_memory() runs from main() only: importing a program (as the tests, the notebook
    and the benchmark do) never reaches for the C library."""
    code = """
import ctypes, sys
sys.path.insert(0, sys.argv[1])
def refuse(*args, **kwargs):
    raise SystemExit("the C library was loaded at import")
ctypes.CDLL = refuse
import %s as program
try:
    program.keep_freed_memory()
except SystemExit:
    print("loaded only when asked")
""" % program
    done = subprocess.run([sys.executable, "-c", code, str(GENERATED)], capture_output=True, text=True,
                          timeout=300, check=True)
    assert done.stdout == "loaded only when asked\n"
