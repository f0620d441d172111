"""Tests for tools/portability.py: the harness run on tiny programs.

Only variants that change the environment of this interpreter are run here; the
variants that need a venv (other numpy versions, other Pythons) are never built by
the tests.
"""

import importlib.util
import platform
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("portability", ROOT / "tools" / "portability.py")
portability = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(portability)  # puts tools/ on sys.path: the harness is importable
from harness import outcomes, probe, runs, venvs  # noqa: E402
from harness import variants as matrix  # noqa: E402

ENV_ONLY = [v for v in matrix.all_variants() if v.venv is None]


def by_name(*names):
    variants = {v.name: v for v in matrix.all_variants()}
    return [variants[name] for name in names]


def program(tmp_path, text):
    path = tmp_path / "program.py"
    path.write_text(text, encoding="utf-8")
    return path


def check(path, variants, capsys):
    """Run the harness on `variants`; (exit status, {variant name: row text})."""
    status = portability.check(path, variants, jobs=2, progress=lambda message: None)
    out = capsys.readouterr().out
    rows = {}
    for line in out.splitlines():
        for v in variants:
            if line.startswith(v.name + "  "):
                rows[v.name] = line[len(v.name):].strip()
    return status, rows, out


@pytest.fixture(scope="module")
def here():
    """What this interpreter runs on, as the harness's probe sees it."""
    env = runs.controlled_env({})
    return probe.probe(sys.executable, env, str(ROOT))


# --- the matrix itself


def test_the_matrix_has_every_promised_variant():
    names = [v.name for v in matrix.all_variants()]
    assert len(names) == len(set(names)) >= 25
    promised = ["OPENBLAS_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=2", "numpy SIMD AVX2-level off",
                "numpy SIMD SSE4.2-level off", "numpy 1.26.4", "numpy 2.0.2", "numpy 2.2.6",
                f"numpy {matrix.NEWEST_NUMPY}", "Python 3.10 (numpy 2.2.6)",
                "Python 3.12 (numpy 2.4.6)", "Python 3.13 (numpy 2.4.6)", "LANG=C", "LC_ALL=C",
                "LANG=C LC_ALL=C, PYTHONIOENCODING unset",
                "numpy 1.26.4 + OPENBLAS_CORETYPE=Prescott", "Python 3.13 + SIMD AVX2-level off"]
    promised += [f"OPENBLAS_CORETYPE={core}"
                 for core in ("Prescott", "Nehalem", "Sandybridge", "Haswell", "Zen", "SkylakeX")]
    assert set(promised) <= set(names)


def test_list_prints_the_variants_and_runs_nothing(capsys):
    assert portability.main(["--list", "--only", "coretype"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "8 variants"
    assert "OPENBLAS_CORETYPE=Zen" in out


@pytest.mark.parametrize("argv, message", [
    (["--program", "no/such/file.py"], "no/such/file.py: no such file"),
    (["--only", "no such variant"], "no variant name contains"),
    (["--jobs", "0"], "--jobs must be at least 1"),
])
def test_usage_errors_exit_2_without_a_traceback(argv, message, capsys):
    assert portability.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("numpy_names, level, expected", [
    ((["X86_V2"], ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]), "AVX2",
     ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]),
    ((["X86_V2"], ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]), "SSE4.2",
     ["X86_V2", "X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]),
    ((["SSE", "SSE2", "SSE3"], ["SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "F16C", "FMA3", "AVX2",
                                "AVX512F", "AVX512_SKX"]), "AVX2",
     ["AVX", "F16C", "FMA3", "AVX2", "AVX512F", "AVX512_SKX"]),
    ((["SSE", "SSE2", "SSE3"], ["SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "FMA3", "AVX2"]),
     "SSE4.2", ["SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "FMA3", "AVX2"]),
])
def test_simd_levels_are_spelled_for_each_numpy(numpy_names, level, expected):
    baseline, dispatch = numpy_names
    assert matrix.simd_names(level, baseline, dispatch) == expected


@pytest.mark.parametrize("expected, got, where", [
    (b"a\nb\nc\n", b"a\nB\nc\n", (2, "b", "B")),
    (b"a\nb\n", b"a\n", (2, "b", "<end of output>")),
    (b"a\n", b"a\nextra\n", (2, "<end of output>", "extra")),
    (b"a\nb\n", b"a\nb", (2, "'b\\n'", "'b'")),
    ("注意力 0.5\n".encode(), "注意力 0.6\n".encode(), (1, "注意力 0.5", "注意力 0.6")),
    (b"x" * 200 + b"1" + b"y" * 200 + b"\n", b"x" * 200 + b"2" + b"y" * 200 + b"\n",
     (1, "…" + "x" * 20 + "1" + "y" * 39 + "…", "…" + "x" * 20 + "2" + "y" * 39 + "…")),
])
def test_first_difference_names_the_line_and_shows_where(expected, got, where):
    assert outcomes.first_difference(expected, got) == where
    assert outcomes.first_difference(expected, expected) is None


# --- the four behaviours the harness exists for


def test_deterministic_program_is_identical_under_every_env_variant(tmp_path, capsys, here):
    # No numpy here, to keep the test fast: the guard's first line is the numpy control.
    path = program(tmp_path, (
        "import sys\n"
        "sys.stdout.reconfigure(encoding='utf-8')  # the way a program copes with any locale\n"
        "print('注意力权重', sorted({'q', 'K', 'V'}), 0.1 + 0.2)\n"
        "print(f'{2 ** 0.5:.17g}')\n"
    ))
    status, rows, out = check(path, ENV_ONLY, capsys)
    assert status == 0, out
    assert set(rows) == {v.name for v in ENV_ONLY}
    for name, row in rows.items():
        assert row.startswith(("identical", "skipped: numpy")), (name, row)
    assert f"{len(ENV_ONLY)} variants: " in out and " 0 differ, 0 failed" in out
    assert rows["OPENBLAS_NUM_THREADS=2"] == "identical (BLAS threads: 2)"
    assert "(stdout ascii)" in rows["ASCII stdout (LC_ALL=C PYTHONUTF8=0, PYTHONIOENCODING unset)"]
    if here.get("blas_kernels"):  # the probe found OpenBLAS's kernel tables
        assert rows["OPENBLAS_CORETYPE=Prescott"] == "identical (Prescott kernels: verified)"
    if here.get("features", {}).get("X86_V3") or here.get("features", {}).get("AVX2"):
        assert "AVX2-level off" in rows["numpy SIMD AVX2-level off"]
        assert ": verified" in rows["numpy SIMD AVX2-level off"]


def test_guard_non_portable_numerics_are_caught(tmp_path, capsys, here):
    """np.tanh's AVX2 code and the BLAS kernels give other bits than their fallbacks.

    Measured on an AMD EPYC (AVX2, no AVX-512), numpy 2.4.6, OpenBLAS 0.3.31: tanh of
    4001 points differs with X86_V3 off; a 16x16 `a @ a` differs between the Haswell
    kernels and the Prescott, Nehalem and Sandybridge ones (np.exp did not differ).
    Line 1 is the control: exact operations, the same bits everywhere.
    """
    path = program(tmp_path, (
        "import hashlib\n"
        "import numpy as np\n"
        "def h(v): return hashlib.sha256(v.tobytes()).hexdigest()[:16]\n"
        "x = np.linspace(-4, 4, 4001)\n"
        "a = np.sin(np.arange(256.0)).reshape(16, 16)\n"
        "print('exact', h((a[:, :, None] * a[None, :, :]).sum(axis=1)), h(np.sqrt(x * x + 1)))\n"
        "print('tanh', h(np.tanh(x)))\n"
        "print('a @ a', h(a @ a))\n"
    ))
    features = here.get("features", {})
    if not (features.get("X86_V3") or features.get("AVX2")):
        pytest.skip("this CPU has no AVX2: switching it off changes nothing")
    if here.get("blas_kernels") not in ("Haswell", "Zen", "SkylakeX", "Cooperlake"):
        pytest.skip(f"OpenBLAS runs {here.get('blas_kernels')!r} kernels here, not an AVX2 set")
    variants = by_name("numpy SIMD AVX2-level off", "OPENBLAS_CORETYPE=Prescott",
                       "OPENBLAS_CORETYPE=Sandybridge", "OPENBLAS_CORETYPE=SkylakeX",
                       "OPENBLAS_NUM_THREADS=2")
    status, rows, out = check(path, variants, capsys)
    assert status == 1
    assert rows["numpy SIMD AVX2-level off"].startswith("DIFFERS at line 2: tanh ")
    assert rows["OPENBLAS_CORETYPE=Prescott"].startswith("DIFFERS at line 3: a @ a ")
    assert rows["OPENBLAS_CORETYPE=Sandybridge"].startswith("DIFFERS at line 3: a @ a ")
    assert rows["OPENBLAS_NUM_THREADS=2"].startswith("identical")
    if "avx512f" not in probe.cpu_flags():  # the AVX-512 kernels cannot run: said, not hidden
        assert rows["OPENBLAS_CORETYPE=SkylakeX"].startswith("skipped: ")
        assert "SIGILL" in rows["OPENBLAS_CORETYPE=SkylakeX"]
    assert "5 variants: " in out and " 0 failed" in out


def test_env_dependent_output_differs_at_its_line(tmp_path, capsys):
    path = program(tmp_path, (
        "import os\n"
        "print('header')\n"
        "print('threads', os.environ.get('OPENBLAS_NUM_THREADS'))\n"
        "print('hash order', ''.join(set('abcdefghij')))\n"
        "print('cwd', os.path.basename(os.getcwd()))\n"
        "print('end')\n"
    ))
    variants = by_name("OPENBLAS_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=2",
                       "OPENBLAS_NUM_THREADS unset", "PYTHONHASHSEED=1",
                       "run from another directory")
    status, rows, out = check(path, variants, capsys)
    assert status == 1
    assert rows["OPENBLAS_NUM_THREADS=1"] == "identical (BLAS threads: 1)"
    assert rows["OPENBLAS_NUM_THREADS=2"] == "DIFFERS at line 2: threads 1 | threads 2"
    assert rows["OPENBLAS_NUM_THREADS unset"] == "DIFFERS at line 2: threads 1 | threads None"
    assert rows["PYTHONHASHSEED=1"].startswith("DIFFERS at line 3: hash order ")
    assert rows["run from another directory"].startswith("DIFFERS at line 4: cwd ")
    assert "5 variants: 1 identical, 4 differ, 0 failed, 0 skipped" in out


def test_crashing_program_fails_with_exit_1(tmp_path, capsys):
    path = program(tmp_path, "print('one line')\n1 / 0\n")
    assert portability.main(["--program", str(path), "--only", "OPENBLAS_NUM_THREADS=2"]) == 1
    out = capsys.readouterr().out
    assert "reference run FAILED" in out and "ZeroDivisionError: division by zero (exit 1)" in out


def test_program_crashing_under_one_variant_is_failed(tmp_path, capsys):
    path = program(tmp_path, (
        "import os\n"
        "print('ok')\n"
        "if os.environ.get('OPENBLAS_NUM_THREADS') == '2':\n"
        "    raise RuntimeError('two threads')\n"
    ))
    variants = by_name("OPENBLAS_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=2")
    status, rows, out = check(path, variants, capsys)
    assert status == 1
    assert rows["OPENBLAS_NUM_THREADS=2"] == "FAILED: RuntimeError: two threads (exit 1)"
    assert "2 variants: 1 identical, 0 differ, 1 failed, 0 skipped" in out


def test_plain_print_of_chinese_fails_only_on_an_ascii_stdout(tmp_path, capsys):
    path = program(tmp_path, "print('注意力')\n")
    variants = by_name("LANG=C LC_ALL=C, PYTHONIOENCODING unset",
                       "ASCII stdout (LC_ALL=C PYTHONUTF8=0, PYTHONIOENCODING unset)")
    status, rows, _ = check(path, variants, capsys)
    assert status == 1
    assert rows[variants[0].name] == "identical (stdout utf-8)"  # PEP 538/540 rescue the C locale
    assert rows[variants[1].name].startswith("FAILED: UnicodeEncodeError: 'ascii' codec")


def test_a_python_that_is_not_installed_is_skipped_without_building(tmp_path, capsys):
    path = program(tmp_path, "print('hi')\n")
    missing = matrix.Variant("Python 9.9", venv=matrix.Venv("2.4.6", "9.9"))
    status, rows, out = check(path, [missing], capsys)
    assert status == 0
    assert rows["Python 9.9"] == (
        "skipped: Python 9.9 is not installed here (looked in pyenv and PATH)")
    assert "1 variant: 0 identical, 0 differ, 0 failed, 1 skipped" in out


def test_old_numpy_spelling_when_its_venv_is_cached(tmp_path, capsys):
    """numpy 1.26 names single features (AVX2, FMA3, ...), not X86_V3. Needs the venv that
    `make portability` caches; the tests never build one."""
    venv = venvs.CACHE / "venvs" / f"{platform.python_version()}-1.26.4"
    if venvs._imports_numpy(venv / "bin" / "python") != "1.26.4":
        pytest.skip(f"{venv} is not built (make portability builds it)")
    path = program(tmp_path, "import numpy as np\nprint(np.arange(4.0).sum())\n")
    variants = by_name("numpy 1.26.4 + SIMD AVX2-level off", "numpy 1.26.4 + SIMD SSE4.2-level off")
    status, rows, _ = check(path, variants, capsys)
    assert status == 0
    assert "numpy 1.26.4; AVX2-level off (AVX and up): verified" in rows[variants[0].name]
    assert "numpy 1.26.4; SSE4.2-level off (SSSE3 and up): verified" in rows[variants[1].name]


def test_a_variant_runs_with_the_options_and_environment_check_runs_programs_with(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONOPTIMIZE", "1")  # a caller's PYTHON* variable does not reach the program
    path = program(tmp_path, "import os, sys\nprint(sys.flags.dont_write_bytecode, sys.flags.no_user_site,"
                             " sys.flags.optimize, os.environ['PYTHONHASHSEED'], os.path.isdir(sys.pycache_prefix))\n")
    run = runs.run_variant(by_name("PYTHONHASHSEED=1")[0], path, progress=lambda message: None)
    assert (run.returncode, run.stdout) == (0, b"1 1 0 1 True\n")
