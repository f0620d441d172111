"""Running one variant: its interpreter and environment set up, the switches verified by the probe, the
program run once, and the run judged against the reference's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from literate.runner import RUN_FLAGS, run_env

from .outcomes import Failure, Outcome, Skip, first_difference, last_line
from .probe import cpu_flags, probe
from .variants import Variant, simd_names
from .venvs import venv_python

TIMEOUT = 300  # seconds per run of the program


@dataclass
class Run:
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    info: dict  # the probe's answer
    note: str = ""  # what the variant verifiably switched


def controlled_env(changes: dict[str, str | None], pycache_prefix: str | None = None) -> dict[str, str]:
    """The environment tangle.py check runs programs in (literate/runner.py's run_env), with a variant's
    changes: None unsets a variable."""
    env = run_env(pycache_prefix)
    env.update(changes)
    return {k: v for k, v in env.items() if v is not None}


def run_variant(variant: Variant, program: Path, progress) -> Run:
    """Set the variant up, check what it switched, run the program once."""
    python = venv_python(variant.venv, progress) if variant.venv else sys.executable
    with (tempfile.TemporaryDirectory(prefix="portability-") as empty,
          tempfile.TemporaryDirectory(prefix="portability-no-bytecode-") as cache):
        env = controlled_env(variant.env, cache)
        cwd = empty if variant.elsewhere else os.getcwd()
        info = probe(python, env, cwd)
        simd_note = ""
        if variant.simd_off:
            simd_note, info = switch_simd_off(variant.simd_off, python, env, cwd, info)
        notes = verify_env(variant, info) + [simd_note]
        start = time.monotonic()
        try:
            done = subprocess.run([python, *RUN_FLAGS, str(program)], env=env, cwd=cwd,
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise Failure(f"timed out after {TIMEOUT} s") from None
        seconds = time.monotonic() - start
    note = "; ".join(filter(None, notes))
    return Run(done.returncode, done.stdout, done.stderr, seconds, info, note)


def switch_simd_off(level: str, python: str, env: dict[str, str], cwd: str,
                    before: dict) -> tuple[str, dict]:
    """Set NPY_DISABLE_CPU_FEATURES in env, spelled for this numpy, and verify it took;
    (a note, the probe's answer with the features off)."""
    if "numpy" not in before:
        raise Skip(f"numpy does not import: {before.get('numpy_error')}")
    names = simd_names(level, before["baseline"], before["dispatch"])
    env["NPY_DISABLE_CPU_FEATURES"] = " ".join(names)
    after = probe(python, env, cwd)
    if "numpy" not in after:  # numpy refuses to switch off its baseline
        reason = after["numpy_error"].replace(
            "During parsing environment variable: 'NPY_DISABLE_CPU_FEATURES': ", "")
        raise Skip(f"numpy {before['numpy']} refuses {names[0]} and up: {reason}")
    left_on = [n for n in names if after["features"].get(n)]
    if left_on:
        raise Failure(f"NPY_DISABLE_CPU_FEATURES={' '.join(names)!r} left {' '.join(left_on)} on")
    if not any(before["features"].get(n) for n in names):
        return f"{level}-level off: no effect, this CPU has none of {' '.join(names)}", after
    return f"{level}-level off ({names[0]} and up): verified", after


def verify_env(variant: Variant, info: dict) -> list[str]:
    notes = []
    if variant.venv:
        notes.append(f"Python {info['python']}, numpy {info.get('numpy', 'missing')}")
    wanted = variant.env.get("OPENBLAS_CORETYPE")
    if wanted:
        notes.append(blas_core_note(wanted, info))
    if "OPENBLAS_NUM_THREADS" in variant.env and "blas_threads" in info:
        notes.append(f"BLAS threads: {info['blas_threads']}")
    if any(name in variant.env for name in ("LANG", "LC_ALL", "PYTHONIOENCODING", "PYTHONUTF8")):
        notes.append(f"stdout {info['stdout']}")
    return notes


def blas_core_note(wanted: str, info: dict) -> str:
    kernels = info.get("blas_kernels")
    if kernels is None:  # no kernel tables exported: trust the name
        got = info.get("blas_core")
        if got is None:
            return "no OpenBLAS found: nothing to switch"
        if got.lower() == wanted.lower():
            return f"core {got}: verified"
        return f"core {got}, not {wanted}"
    if kernels.lower() == wanted.lower():
        return f"{kernels} kernels: verified"
    if wanted.lower() not in (t.lower() for t in info.get("blas_tables", [])):
        return f"this OpenBLAS has no {wanted} kernels: runs {kernels}'s"
    return f"runs {kernels} kernels, not {wanted}"


def cpu_path(info: dict) -> tuple:
    """The OpenBLAS kernels and numpy SIMD targets a run used."""
    simd = tuple(n for n in info.get("dispatch", []) if info.get("features", {}).get(n))
    return info.get("numpy"), info.get("blas_kernels", info.get("blas_core")), simd


def judge(variant: Variant, run: Run, reference: Run) -> Outcome:
    if run.returncode != 0:
        how = (f"killed by {signal.Signals(-run.returncode).name}" if run.returncode < 0
               else f"exit {run.returncode}")
        kernels = run.info.get("blas_kernels", run.info.get("blas_core"))
        no_avx512 = "avx512f" not in cpu_flags()
        if run.returncode == -signal.SIGILL and kernels == "SkylakeX" and no_avx512:
            return Outcome("skipped", "OpenBLAS's SkylakeX kernels need AVX-512, which this CPU "
                                      "lacks: the run died with SIGILL")
        return Outcome("FAILED", f"{last_line(run.stderr) or '(no stderr)'} ({how})")
    where = first_difference(reference.stdout, run.stdout)
    if where:
        line, expected, got = where
        return Outcome("DIFFERS", f"at line {line}: {expected} | {got}")
    note = run.note
    switches_cpu_path = variant.simd_off or "OPENBLAS_CORETYPE" in variant.env
    if switches_cpu_path and cpu_path(run.info) == cpu_path(reference.info):
        note += "; the reference's CPU path on this machine"
    return Outcome("identical", note)


def describe_reference(run: Run) -> str:
    info = run.info
    parts = [f"Python {info['python']}"]
    if "numpy" in info:
        simd = [n for n in info["dispatch"] if info["features"].get(n)]
        parts += [f"numpy {info['numpy']}", f"SIMD {' '.join(info['baseline'])}"
                  + (f" + {' '.join(simd)}" if simd else "")]
    if "blas_core" in info:
        kernels = info.get("blas_kernels", info["blas_core"])
        parts.append(f"OpenBLAS {kernels} kernels, {info['blas_threads']} thread(s)")
    lines = run.stdout.count(b"\n")
    return ", ".join(parts) + f"; {lines} lines, {len(run.stdout)} bytes, {run.seconds:.1f} s"
