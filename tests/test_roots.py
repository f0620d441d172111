"""Where a root may be written, and which roots must run: a lesson's code never stands in for a module the tools, the
tests or its programs import, and the Python the reader sees is run by the check."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run, write

ROOT = Path(__file__).resolve().parent.parent


def lesson(roots: str = "", program: str = "print('acc 0.9300')\n", target: str = "generated/a.py") -> str:
    """A lesson whose program prints acc 0.9300 (its transcript), with the roots given after it."""
    return (f"# 课\n\n准确率 0.9300。\n\n```python {{file={target}}}\n{program}```\n\n"
            f"```text {{transcript={target}}}\nacc 0.9300\n```\n\n{roots}")


def root(target: str, code: str = "print('x')\n", language: str = "python") -> str:
    return f"```{language} {{file={target}}}\n{code}```\n\n"


# ---------------------------------------------------------------- no root stands in for another module

SHADOWING = {
    "markdown_it.py": "would be the module markdown_it in the folder of the lesson",
    "pytest.py": "would be the module pytest in the folder of the lesson",
    "venv.py": "would be the module venv in the folder of the lesson",
    "difflib.py": "would be the module difflib in the folder of the lesson",
    "helper.py": "would be the module helper in the folder of the lesson",
    "pkg/__init__.py": "would be the module pkg in the folder of the lesson",
    "generated/difflib.py": "takes the name of the standard module difflib",
    "generated/numpy.py": "takes the name of the installed module numpy",
    "generated/tangle.py": "takes the name of the tools' module tangle",
    "generated/literate/__init__.py": "takes the name of the tools' module literate",
    "generated/pytest.py": "takes the name of the installed module pytest",
}


@pytest.mark.parametrize("target, message", SHADOWING.items(), ids=SHADOWING.keys())
@pytest.mark.parametrize("command", ["tangle", "check"])
def test_a_root_python_would_import_in_place_of_another_module_is_refused(tmp_path, capsys, target, message, command):
    md = write(tmp_path, lesson(root(target, "import os\nos._exit(0)\n")), "lesson.md")
    code, _, err = run(capsys, command, md)
    assert code == 2 and f"lesson.md:13: error: file={target} {message}" in err
    assert not (tmp_path / target).exists()


def test_roots_under_names_no_module_has_are_written_and_run(tmp_path, capsys):
    roots = (root("generated/helpers.py", "X = 1\n") + root("generated/pkg/__init__.py", "Y = 2\n")
             + root("bin/run.sh", "python generated/a.py\n", "sh") + root("generated/settings.toml", "x = 1\n", "toml"))
    md = write(tmp_path, lesson(roots, program="import helpers\nimport pkg\nprint('acc 0.9300')\n"), "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    assert all((tmp_path / target).exists() for target in ("generated/helpers.py", "generated/pkg/__init__.py",
                                                             "bin/run.sh", "generated/settings.toml"))
    assert run(capsys, "check", md)[:3:2] == (0, "")


@pytest.mark.skipif(sys.platform != "linux", reason="symlinks")
def test_a_root_through_a_symlinked_folder_into_the_lessons_own_folder_is_refused(tmp_path, capsys):
    (tmp_path / "out").symlink_to(tmp_path)
    md = write(tmp_path, lesson(root("out/helper.py")), "lesson.md")
    code, _, err = run(capsys, "tangle", md)
    assert code == 2 and "file=out/helper.py leads to helper.py (through a symlink): would be the module helper" in err
    assert not (tmp_path / "helper.py").exists()


def tools_copy(folder: Path) -> Path:
    """tangle.py and its package in a folder of their own, as a checkout holds them beside its lesson."""
    shutil.copy(ROOT / "tangle.py", folder / "tangle.py")
    shutil.copytree(ROOT / "literate", folder / "literate", ignore=shutil.ignore_patterns("__pycache__"))
    return folder / "tangle.py"


def command(folder: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=folder, capture_output=True, text=True, timeout=120)


FAKE_CHECK = ("import os, sys\nif sys.argv[1:2] == ['check']:\n"
              "    print('checked 1 prose number (0 marked as the book\\'s); transcript matches')\n    os._exit(0)\n")


def test_a_lesson_beside_the_tools_cannot_make_check_or_pytest_pass_with_a_module_of_its_own(tmp_path):
    """The lesson beside tangle.py (as attention.md is) says 0.25 where its program prints 0.99, and brings a
    markdown_it.py that prints a passing check, and a pytest.py that says all passed: neither is written, and
    check fails."""
    tools_copy(tmp_path)
    text = ("# L\n\nvalue 0.25\n\n```python {file=generated/a.py}\nprint('value 0.99')\n```\n\n"
            "```text {transcript}\nvalue 0.99\n```\n\n```python {file=markdown_it.py}\n" + FAKE_CHECK + "```\n\n"
            "```python {file=pytest.py}\nimport sys\nprint('1 passed')\nsys.exit(0)\n```\n")
    (tmp_path / "attention.md").write_text(text)
    tangled = command(tmp_path, "tangle.py", "tangle")
    assert tangled.returncode == 2 and "file=markdown_it.py would be the module markdown_it" in tangled.stderr
    assert not (tmp_path / "markdown_it.py").exists() and not (tmp_path / "pytest.py").exists()
    checked = command(tmp_path, "tangle.py", "check")
    assert checked.returncode == 2 and "transcript matches" not in checked.stdout
    (tmp_path / "test_fails.py").write_text("def test_fails():\n    assert False\n")
    assert command(tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_fails.py").returncode == 1


def test_a_stray_module_beside_the_tools_does_not_stand_in_for_the_one_they_import(tmp_path):
    """Not the lesson's (it cannot write one there): a markdown_it.py left beside tangle.py is searched after the
    installed one, so check reads the lesson with the real parser and fails on its stale number."""
    tools_copy(tmp_path)
    (tmp_path / "markdown_it.py").write_text(FAKE_CHECK)
    (tmp_path / "attention.md").write_text("# L\n\nvalue 0.25\n\n```python {file=generated/a.py}\nprint('value 0.99')"
                                           "\n```\n\n```text {transcript}\nvalue 0.99\n```\n")
    assert command(tmp_path, "tangle.py", "tangle").returncode == 0
    checked = command(tmp_path, "tangle.py", "check")
    assert checked.returncode == 1 and "error: 0.25 is not printed by generated/a.py" in checked.stderr


# ---------------------------------------------------------------- the Python the reader sees runs


def test_a_python_root_that_nothing_runs_fails_check_and_update_and_tangle_warns(tmp_path, capsys):
    md = write(tmp_path, lesson(root("generated/b.py", "raise SystemExit('never run')\n")), "lesson.md")
    code, _, err = run(capsys, "tangle", md)
    assert code == 0 and "lesson.md:13: warning: file=generated/b.py is Python that never runs" in err
    for command_name in ("check", "update"):
        code, out, err = run(capsys, command_name, md)
        assert code == 2 and "lesson.md:13: error: file=generated/b.py is Python that never runs" in err
        assert "transcript matches" not in out


def test_a_module_a_program_imports_runs_through_packages_and_relative_imports(tmp_path, capsys):
    roots = (root("generated/b.py", "import c\n") + root("generated/c.py", "from pkg import mod\n")
             + root("generated/pkg/__init__.py", "") + root("generated/pkg/mod.py", "from . import other\n")
             + root("generated/pkg/other.py", "X = 1\n"))
    md = write(tmp_path, lesson(roots, program="import b\nprint('acc 0.9300')\n"), "lesson.md")
    assert run(capsys, "tangle", md)[:3:2] == (0, "")
    assert run(capsys, "check", md)[:3:2] == (0, "")
    md.write_text(md.read_text().replace("from . import other", "X = 2"))
    assert run(capsys, "tangle", md)[0] == 0
    code, _, err = run(capsys, "check", md)
    assert code == 2 and "file=generated/pkg/other.py is Python that never runs" in err


@pytest.mark.parametrize("importer, runs", [
    ("if False:\n    import b\n", False),                     # a branch never taken
    ("while 0:\n    import b\n", False),
    ("def never():\n    import b\n", False),                 # a function nothing names
    ("def later():\n    import b\n\n\nlater()\n", True),     # one the program calls
    ("class A:\n    def load(self):\n        import b\n\n\nA().load()\n", True),
    ("if True:\n    import b\n", True),
])
def test_an_import_counts_only_where_it_may_run(tmp_path, capsys, importer, runs):
    md = write(tmp_path, lesson(root("generated/b.py", "X = 1\n"), program=importer + "print('acc 0.9300')\n"),
               "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, _, err = run(capsys, "check", md)
    assert (code, "file=generated/b.py is Python that never runs" in err) == ((0, False) if runs else (2, True)), err


def test_a_program_with_its_own_transcript_runs(tmp_path, capsys):
    roots = root("generated/b.py", "print('b')\n") + "```text {transcript=generated/b.py}\nb\n```\n"
    md = write(tmp_path, lesson(roots), "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    assert run(capsys, "check", md)[:3:2] == (0, "")


@pytest.mark.parametrize("language", ["python", "py3", "Python"])
def test_python_written_into_a_root_that_is_not_run_is_refused(tmp_path, capsys, language):
    roots = (root("generated/run.sh", "<<步骤>>\n", "sh") + f"```{language} {{#步骤}}\nraise SystemExit('never')\n```\n\n"
             + root("generated/b.sh", "import os\n", language))
    md = write(tmp_path, lesson(roots), "lesson.md")
    code, _, err = run(capsys, "tangle", md)
    assert code == 2 and not (tmp_path / "generated").exists()
    assert f"lesson.md:17: error: {language} code goes into file=generated/run.sh, which is not run" in err
    assert f"lesson.md:21: error: {language} code goes into file=generated/b.sh, which is not run" in err


def test_a_form_feed_in_code_is_refused_like_the_other_control_characters(tmp_path, capsys):
    md = write(tmp_path, lesson(program="x = 1\x0c\nprint('acc 0.9300')\n"), "lesson.md")
    code, _, err = run(capsys, "tangle", md)
    assert code == 2 and "lesson.md:6: error: an invisible control character U+000C" in err
    assert not (tmp_path / "generated").exists()
