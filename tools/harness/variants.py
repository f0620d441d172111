"""The variants of the matrix: environment switches, venvs with other numpy versions and Pythons, and
how numpy spells its SIMD levels (switched off at run time by runs.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

NEWEST_NUMPY = "2.4.6"  # the newest numpy 2.x on PyPI when this was written: bump it here


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
