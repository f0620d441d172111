"""Prove that a program's stdout is byte-identical across environments.

Runs PROGRAM once as the reference (this interpreter, the environment tangle.py check
runs programs in: RUN_ENV in literate/runner.py) and then under a
matrix of variants: OpenBLAS thread counts and kernels (OPENBLAS_CORETYPE), numpy's
SIMD code switched off by level (NPY_DISABLE_CPU_FEATURES), other numpy versions and
other Pythons (in venvs cached under .cache/portability/venvs), C and ASCII locales,
other hash seeds, another working directory. Every variant's stdout is compared with
the reference byte for byte; one row per variant, then a total. Progress goes to
stderr. Before each run a small probe in the variant's interpreter reports what the
variant really switched (OpenBLAS core and threads, numpy's enabled SIMD targets,
stdout encoding), so a row says "verified" only when the switch took effect.

A row is skipped, not failed, when the variant cannot exist here: a Python that is
not installed, a SIMD level that numpy compiled into its baseline (numpy refuses to
switch it off), OpenBLAS's SkylakeX kernels on a CPU without AVX-512 (SIGILL). The
ASCII-stdout row fails for a program that prints non-ASCII text through a stdout it
did not set to UTF-8 itself (sys.stdout.reconfigure(encoding="utf-8")).

Examples:
  python tools/portability.py                          # the full matrix
  python tools/portability.py --only CORETYPE          # rows whose name contains it
  python tools/portability.py --program /tmp/t.py --jobs 1
  python tools/portability.py --list                   # the variants, nothing run

Exit status: 0 every variant identical (skips allowed), 1 a variant differs or
failed, 2 bad usage. Linux only (reads /proc). The harness itself needs only the
standard library; the interpreters it runs need numpy.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from literate.runner import RUN_ENV  # noqa: E402  (standard library only, like this harness)

CACHE = ROOT / ".cache" / "portability"
TIMEOUT = 300  # seconds per run of the program
BUILD_TIMEOUT = 900  # seconds per venv build (pip downloads numpy)
NEWEST_NUMPY = "2.4.6"  # the newest numpy 2.x on PyPI when this was written: bump it here
CONTROLLED = RUN_ENV  # the environment tangle.py check runs the program in, defined once, there
DROPPED = ("PYTHONPATH", "PYTHONHOME")  # would mix another numpy into a venv's interpreter


# ---------------------------------------------------------------------------
# The variants


@dataclass(frozen=True)
class Venv:
    """A throwaway venv holding only numpy; python=None is the interpreter running this."""

    numpy: str
    python: str | None = None


@dataclass(frozen=True)
class Variant:
    name: str
    env: dict[str, str | None] = field(default_factory=dict)  # None unsets the variable
    venv: Venv | None = None  # None: the interpreter running this harness
    simd_off: str | None = None  # "AVX2" or "SSE4.2": spelled per numpy version at run time
    elsewhere: bool = False  # run from an empty temporary directory


def blas_variants() -> list[Variant]:
    threads = [Variant(f"OPENBLAS_NUM_THREADS={n}", {"OPENBLAS_NUM_THREADS": n})
               for n in ("1", "2")]
    threads.append(Variant("OPENBLAS_NUM_THREADS unset", {"OPENBLAS_NUM_THREADS": None}))
    cores = ("Prescott", "Nehalem", "Sandybridge", "Haswell", "Zen", "SkylakeX")
    return threads + [Variant(f"OPENBLAS_CORETYPE={c}", {"OPENBLAS_CORETYPE": c}) for c in cores]


def simd_variants() -> list[Variant]:
    return [Variant(f"numpy SIMD {level}-level off", simd_off=level) for level in SIMD_LEVELS]


def numpy_variants() -> list[Variant]:
    versions = ("1.26.4", "2.0.2", "2.2.6", NEWEST_NUMPY)
    return [Variant(f"numpy {v}", venv=Venv(v)) for v in versions]


def python_variants() -> list[Variant]:
    newest = {"3.10": "2.2.6", "3.12": NEWEST_NUMPY, "3.13": NEWEST_NUMPY}  # numpy for each
    return [Variant(f"Python {py} (numpy {np})", venv=Venv(np, py))
            for py, np in newest.items()]


def locale_variants() -> list[Variant]:
    return [
        Variant("LANG=C", {"LANG": "C", "LC_ALL": None, "LC_CTYPE": None, "PYTHONUTF8": None}),
        Variant("LC_ALL=C", {"LC_ALL": "C", "PYTHONUTF8": None}),
        Variant("LANG=C LC_ALL=C, PYTHONIOENCODING unset",
                {"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": None, "PYTHONUTF8": None}),
        # What a non-UTF-8 console gives (Windows cp1252, an old Latin-1 locale): only a
        # program that writes UTF-8 itself passes.
        Variant("ASCII stdout (LC_ALL=C PYTHONUTF8=0, PYTHONIOENCODING unset)",
                {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": None}),
    ]


def other_variants() -> list[Variant]:
    seeds = [Variant(f"PYTHONHASHSEED={s}", {"PYTHONHASHSEED": s}) for s in ("1", "2")]
    return seeds + [Variant("run from another directory", elsewhere=True)]


def combined_variants() -> list[Variant]:
    old = Venv("1.26.4")
    return [
        Variant("numpy 1.26.4 + OPENBLAS_CORETYPE=Prescott",
                {"OPENBLAS_CORETYPE": "Prescott"}, old),
        Variant("numpy 1.26.4 + SIMD AVX2-level off", venv=old, simd_off="AVX2"),
        Variant("numpy 1.26.4 + SIMD SSE4.2-level off", venv=old, simd_off="SSE4.2"),
        Variant("Python 3.13 + SIMD AVX2-level off",
                venv=Venv(NEWEST_NUMPY, "3.13"), simd_off="AVX2"),
        Variant("2011 PC: OPENBLAS_CORETYPE=Sandybridge + SIMD AVX2-level off",
                {"OPENBLAS_CORETYPE": "Sandybridge"}, simd_off="AVX2"),
    ]


def all_variants() -> list[Variant]:
    return (blas_variants() + simd_variants() + numpy_variants() + python_variants()
            + locale_variants() + other_variants() + combined_variants())


# ---------------------------------------------------------------------------
# numpy's SIMD levels
#
# "AVX2-level off" switches off x86-64-v3 and everything above it (AVX, F16C, FMA3,
# AVX2, AVX-512): numpy then runs the code it has for a Nehalem-class CPU.
# "SSE4.2-level off" also switches off x86-64-v2 (SSSE3, SSE4.1, POPCNT, SSE4.2).
# numpy >= 2.4 names the levels as groups (X86_V2, X86_V3, X86_V4); older numpy names
# the single features. A level that numpy compiled into its baseline cannot be
# switched off: numpy refuses at import, and the row says so.

# The first name to switch off for each level: (numpy >= 2.4, older numpy).
SIMD_LEVELS = {"AVX2": ("X86_V3", "AVX"), "SSE4.2": ("X86_V2", "SSSE3")}
GROUP_LADDER = ["X86_V2", "X86_V3", "X86_V4"]
FEATURE_LADDER = ["SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "F16C", "FMA3", "AVX2"]


def simd_names(level: str, baseline: list[str], dispatch: list[str]) -> list[str]:
    """The NPY_DISABLE_CPU_FEATURES names that switch off `level` and everything above it."""
    known = baseline + dispatch
    grouped = any(name.startswith("X86_V") for name in known)
    ladder = GROUP_LADDER if grouped else FEATURE_LADDER
    first = SIMD_LEVELS[level][0 if grouped else 1]
    wanted = ladder[ladder.index(first):]
    names = [name for name in wanted if name in known]
    return names + [name for name in dispatch if name.startswith("AVX512") and name not in names]


# ---------------------------------------------------------------------------
# The probe: what a variant really runs on

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
        done = subprocess.run([python, "-c", PROBE], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
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


# ---------------------------------------------------------------------------
# Interpreters and venvs


class Skip(Exception):
    """The variant cannot run here; not a portability failure."""


class Failure(Exception):
    """The variant could not be set up or run."""


def find_python(version: str) -> str | None:
    """A working python<version>: pyenv's installs first (its shims refuse without
    PYENV_VERSION), then PATH and the usual prefixes."""
    candidates = []
    pyenv = shutil.which("pyenv")
    if pyenv:
        done = subprocess.run([pyenv, "versions", "--bare"], capture_output=True, text=True)
        pattern = re.escape(version) + r"\.\d+"
        installed = [v for v in done.stdout.split() if re.fullmatch(pattern, v)]
        installed.sort(key=lambda v: int(v.rsplit(".", 1)[1]), reverse=True)
        root = subprocess.run([pyenv, "root"], capture_output=True, text=True).stdout.strip()
        candidates += [f"{root}/versions/{v}/bin/python{version}" for v in installed]
    candidates += [shutil.which(f"python{version}") or "", f"/usr/local/bin/python{version}",
                   f"/usr/bin/python{version}"]
    for path in filter(None, candidates):
        if _python_version(path, major_minor=True) == version:
            return path
    return None


def _python_version(python: str, major_minor: bool = False) -> str | None:
    code = f"import sys; print(*sys.version_info[:{2 if major_minor else 3}], sep='.')"
    env = {k: v for k, v in os.environ.items() if k != "PYENV_VERSION"}
    try:
        done = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


_venv_locks: dict[Path, threading.Lock] = {}
_venv_locks_guard = threading.Lock()
_venvs_ready: set[Path] = set()  # checked in this run: numpy imports


def venv_python(venv: Venv, progress) -> str:
    """The venv's interpreter, built (or rebuilt, if it no longer imports numpy) on demand."""
    if venv.python:
        base = find_python(venv.python)
    else:
        base = getattr(sys, "_base_executable", sys.executable)
    if base is None:
        raise Skip(f"Python {venv.python} is not installed here (looked in pyenv and PATH)")
    version = _python_version(base) or "unknown"
    path = CACHE / "venvs" / f"{version}-{venv.numpy}"
    python = path / "bin" / "python"
    with _venv_locks_guard:
        lock = _venv_locks.setdefault(path, threading.Lock())
    with lock:
        if path in _venvs_ready or _imports_numpy(python) == venv.numpy:
            _venvs_ready.add(path)
            return str(python)
        shutil.rmtree(path, ignore_errors=True)
        progress(f"building venv {path.relative_to(ROOT)}")
        steps = ([base, "-m", "venv", str(path)],
                 [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  "--no-input", f"numpy=={venv.numpy}"])
        env = controlled_env({})
        for step in steps:
            try:
                done = subprocess.run(step, env=env, capture_output=True, timeout=BUILD_TIMEOUT)
            except subprocess.TimeoutExpired:
                raise Failure(f"building {path.name} timed out after {BUILD_TIMEOUT} s") from None
            if done.returncode != 0:
                shutil.rmtree(path, ignore_errors=True)
                raise Failure(f"building {path.name}: {last_line(done.stderr or done.stdout)}")
        if _imports_numpy(python) != venv.numpy:
            raise Failure(f"{path.name}: numpy {venv.numpy} installed but does not import")
        _venvs_ready.add(path)
    return str(python)


def _imports_numpy(python: Path) -> str | None:
    if not python.exists():
        return None
    try:
        done = subprocess.run([str(python), "-c", "import numpy; print(numpy.__version__)"],
                              capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


# ---------------------------------------------------------------------------
# Running


@dataclass
class Run:
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    info: dict  # the probe's answer
    note: str = ""  # what the variant verifiably switched


@dataclass
class Outcome:
    status: str  # identical, DIFFERS, FAILED, skipped
    detail: str = ""

    def __str__(self) -> str:
        if not self.detail:
            return self.status
        if self.status == "identical":
            return f"identical ({self.detail})"
        return f"{self.status}{' ' if self.status == 'DIFFERS' else ': '}{self.detail}"


def controlled_env(changes: dict[str, str | None]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    env.update(CONTROLLED)
    env.update(changes)
    return {k: v for k, v in env.items() if v is not None}


def run_variant(variant: Variant, program: Path, progress) -> Run:
    """Set the variant up, check what it switched, run the program once."""
    python = venv_python(variant.venv, progress) if variant.venv else sys.executable
    env = controlled_env(variant.env)
    with tempfile.TemporaryDirectory(prefix="portability-") as empty:
        cwd = empty if variant.elsewhere else os.getcwd()
        info = probe(python, env, cwd)
        simd_note = ""
        if variant.simd_off:
            simd_note, info = switch_simd_off(variant.simd_off, python, env, cwd, info)
        notes = verify_env(variant, info) + [simd_note]
        start = time.monotonic()
        try:
            done = subprocess.run([python, str(program)], env=env, cwd=cwd,
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


# ---------------------------------------------------------------------------
# Comparing and reporting


def first_difference(expected: bytes, got: bytes, width: int = 60) -> tuple[int, str, str] | None:
    """(line number, expected excerpt, got excerpt) of the first differing line, or None."""
    if expected == got:
        return None
    pairs = zip_longest(expected.splitlines(keepends=True), got.splitlines(keepends=True))
    for number, (want, have) in enumerate(pairs, 1):
        if want != have:
            return number, *_excerpts(want, have, width)
    raise AssertionError("unequal bytes with equal lines")


def _excerpts(want: bytes | None, have: bytes | None, width: int) -> tuple[str, str]:
    if want is None or have is None:
        def show(line: bytes | None) -> str:
            return "<end of output>" if line is None else _text(line).rstrip("\r\n")

        return show(want), show(have)
    a, b = _text(want), _text(have)
    if a.rstrip("\r\n") == b.rstrip("\r\n"):  # only the line ending differs
        return repr(a), repr(b)
    a, b = a.rstrip("\r\n"), b.rstrip("\r\n")
    pairs = enumerate(zip(a, b, strict=False))
    col = next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))
    start = max(0, col - width // 3)

    def cut(line: str) -> str:
        tail = "…" if len(line) > start + width else ""
        return ("…" if start else "") + line[start:start + width] + tail

    return cut(a), cut(b)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="backslashreplace")


def last_line(data: bytes | str) -> str:
    text = _text(data) if isinstance(data, bytes) else data
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


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


def report(rows: list[tuple[str, Outcome]], out=None) -> int:
    out = out or sys.stdout
    width = max(len(name) for name, _ in rows)
    for name, outcome in rows:
        print(f"{name:<{width}}  {outcome}", file=out)
    count = {s: sum(o.status == s for _, o in rows)
             for s in ("identical", "DIFFERS", "FAILED", "skipped")}
    print(f"{len(rows)} variant{'' if len(rows) == 1 else 's'}: {count['identical']} identical, "
          f"{count['DIFFERS']} differ, {count['FAILED']} failed, {count['skipped']} skipped",
          file=out)
    return 1 if count["DIFFERS"] or count["FAILED"] else 0


# ---------------------------------------------------------------------------
# Command line


def attempt(variant: Variant, program: Path, progress) -> Run | Outcome:
    try:
        return run_variant(variant, program, progress)
    except Skip as why:
        return Outcome("skipped", str(why))
    except Failure as why:
        return Outcome("FAILED", str(why))
    except (OSError, subprocess.SubprocessError) as why:  # e.g. a venv's python vanished
        return Outcome("FAILED", f"{type(why).__name__}: {why}")


def check(program: Path, variants: list[Variant], jobs: int, progress) -> int:
    """Run the reference and the variants, print the table; the exit status."""
    baseline = Variant("reference")
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        reference_job = pool.submit(attempt, baseline, program, progress)
        counter = iter(range(1, len(variants) + 1))
        lock = threading.Lock()

        def one(variant: Variant) -> Outcome:
            result = attempt(variant, program, progress)
            reference = reference_job.result()
            if isinstance(result, Run) and isinstance(reference, Run):
                result = judge(variant, result, reference)
            elif isinstance(result, Run):
                result = Outcome("skipped", "no reference")
            with lock:
                progress(f"[{next(counter)}/{len(variants)}] {variant.name}: {result}")
            return result

        outcomes = list(pool.map(one, variants))
    reference = reference_job.result()
    if isinstance(reference, Run) and reference.returncode != 0:
        reference = judge(baseline, reference, reference)
    if isinstance(reference, Outcome):
        print(f"reference run FAILED, nothing to compare with: {reference.detail}")
        return 1
    print(f"reference: {describe_reference(reference)}")
    return report([(v.name, o) for v, o in zip(variants, outcomes, strict=True)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="portability.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--program", default="generated/attention.py", help="the program to check")
    parser.add_argument("--only", metavar="SUBSTR", help="run only variants whose name contains it")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                        help="runs in parallel (default: the number of CPUs)")
    parser.add_argument("--list", action="store_true", help="print the variants and exit")
    args = parser.parse_args(argv)

    variants = all_variants()
    if args.only:
        variants = [v for v in variants if args.only.lower() in v.name.lower()]
    if args.list:
        for v in variants:
            print(v.name)
        print(f"{len(variants)} variants")
        return 0
    if not variants:
        print(f"portability.py: error: no variant name contains {args.only!r}", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("portability.py: error: --jobs must be at least 1", file=sys.stderr)
        return 2
    program = Path(args.program).resolve()
    if not program.is_file():
        print(f"portability.py: error: {args.program}: no such file", file=sys.stderr)
        return 2

    started = time.monotonic()

    def progress(message: str) -> None:
        elapsed = time.monotonic() - started
        print(f"portability: {elapsed:6.1f} s  {message}", file=sys.stderr, flush=True)

    return check(program, variants, args.jobs, progress)


if __name__ == "__main__":
    raise SystemExit(main())
