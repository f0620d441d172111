"""The probe: a few lines run in a variant's interpreter, under the variant's environment, that report what
it really runs on (Python, numpy, its SIMD targets, the OpenBLAS kernels and threads, stdout's encoding)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from literate.runner import RUN_FLAGS

from .outcomes import Failure, last_line

# OpenBLAS's x86-64 kernel tables, exported as gotoblas_<NAME> by DYNAMIC_ARCH builds;
# a build made with a short DYNAMIC_LIST maps the missing ones onto a neighbour.
BLAS_CORES = ["Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Nano",
              "Opteron", "Opteron_SSE3", "Barcelona", "Bobcat", "Sandybridge", "Bulldozer",
              "Piledriver", "Steamroller", "Excavator", "Haswell", "Zen", "SkylakeX",
              "Cooperlake", "SapphireRapids"]

PROBE = f"CORES = {BLAS_CORES!r}\n" + r"""
import ctypes, json, sys
info = {"python": sys.version.split()[0], "stdout": sys.stdout.encoding}
try:
    import numpy
except Exception as exc:
    info["numpy_error"] = " ".join(str(exc).split())
else:
    info["numpy"] = numpy.__version__
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:
        from numpy.core import _multiarray_umath as umath
    info["baseline"] = list(umath.__cpu_baseline__)
    info["dispatch"] = list(umath.__cpu_dispatch__)
    info["features"] = {k: bool(v) for k, v in umath.__cpu_features__.items()}
    try:
        with open("/proc/self/maps") as maps:
            libs = sorted({l.split()[-1] for l in maps if "openblas" in l.lower() and "/" in l})
    except OSError:
        libs = []
    for path in libs:
        lib = ctypes.CDLL(path)
        for prefix, suffix in (("scipy_", "64_"), ("", "64_"), ("", "")):
            core = getattr(lib, prefix + "openblas_get_corename" + suffix, None)
            threads = getattr(lib, prefix + "openblas_get_num_threads" + suffix, None)
            if core is not None and threads is not None:
                core.restype = ctypes.c_char_p
                info["blas_core"] = core().decode()
                info["blas_threads"] = threads()
                break
        # The name above is the first alias of the kernel table in use (Katmai for
        # Prescott's); the table itself is found by comparing addresses.
        try:
            current = ctypes.c_void_p.in_dll(lib, "gotoblas").value
        except ValueError:
            continue
        for name in CORES:
            try:
                table = ctypes.c_char.in_dll(lib, "gotoblas_" + name.upper())
            except ValueError:
                continue
            info.setdefault("blas_tables", []).append(name)
            if ctypes.addressof(table) == current:
                info["blas_kernels"] = name
print(json.dumps(info))
"""


def probe(python: str, env: dict[str, str], cwd: str) -> dict:
    try:
        done = subprocess.run([python, *RUN_FLAGS, "-c", PROBE], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as why:
        raise Failure(f"probe of {python}: {why}") from None
    try:
        return json.loads(done.stdout)
    except ValueError:
        raise Failure(f"probe of {python}: {last_line(done.stderr) or 'no answer'}") from None


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    match = re.search(r"^flags\s*:(.*)$", text, re.MULTILINE)
    return set(match.group(1).split()) if match else set()
