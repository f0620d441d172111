"""Every output a reader sees is checked, or said not to be: a fence that reads as a program's output is a
transcript or refused (G4), check --only names the programs it did not run (G5), and a generated file that no
root writes any more is given an rm only when it is exactly what tangle wrote (G7)."""

import shutil
import sys
from pathlib import Path

import pytest

import conftest
import literate.commands
import literate.markdown
from conftest import run, small_lesson
from literate.fences import output_fence_problems

ROOT = Path(__file__).resolve().parent.parent

BASE = small_lesson("PROSE", title="Lesson", printed=("value 0.75", "done"))


def lesson(folder: Path, prose: str, text: str = BASE) -> Path:
    return conftest.write(folder, text.replace("PROSE", prose), "lesson.md")


# ---------------------------------------------------------------- G4: fences that read as output


PYCON = "```pycon\n>>> import a\n>>> a.accuracy()\n0.93\n```"
OUTPUT_LOOKING = {  # the prose, and the line of the fence in the lesson (the prose begins on line 3)
    "a pycon session (G4)": (PYCON, 3),
    "PyCon in capitals": (PYCON.replace("pycon", "PyCon"), 3),
    "a console fence": ("```console\nlesson ready\n```", 3),
    "an output fence": ("```output\nvalue 0.93\n```", 3),
    "a >>> session in a text fence": ("```text\n>>> print(a.accuracy())\n0.93\n```", 3),
    "a >>> session with no language": ("```\n>>> 1 + 1\n2\n```", 3),
    "an IPython session": ("```ipy\nIn [1]: a.accuracy()\nOut[1]: 0.93\n```", 3),
    "a shell session": ("```sh\n$ python generated/a.py\nvalue 0.93\n```", 3),
    "a session with a continuation, then output":
        ("```text\n>>> for i in range(1):\n...     print(0.93)\n...\n0.93\n```", 3),
    "a tilde fence": ("~~~pycon\n>>> 0.93\n0.93\n~~~", 3),
    "a fence in a list item": ("- look:\n\n  ```text\n  >>> a.accuracy()\n  0.93\n  ```", 5),
    "a fence in a quote": ("> ```text\n> >>> a.accuracy()\n> 0.93\n> ```", 3),
    "an indented code block": ("Run it:\n\n    >>> a.accuracy()\n    0.93", 5),
    "a text fence under an output caption (G4)":
        ("**〈generated/a.py〉的实跑输出（第 2 次）**\n\n```text\nvalue 0.93\n```", 5),
    "a text fence under 运行结果": ("运行结果如下：\n\n```text\nvalue 0.93\n```", 5),
    "a text fence under an English caption": ("The output of generated/a.py:\n\n```text\nvalue 0.93\n```", 5),
    "a text fence under a heading": ("## 实跑输出\n\n```text\nvalue 0.93\n```", 5),
    "a text fence under 屏幕上是：": ("运行后屏幕上是：\n\n```text\nvalue 0.93\n```", 5),
    "a text fence under You should see:": ("You should see:\n\n```text\nvalue 0.93\n```", 5),
    "a comment between the caption and its fence": ("实跑输出\n\n<!-- x -->\n\n```text\nvalue 0.93\n```", 7),
    "a >>> prompt without a space": ("```text\n>>>print(1)\n1\n```", 3),
    "IPython's Out mark alone": ("```text\nOut[3]: 0.93\n```", 3),
    "a PowerShell session": ("```text\nPS C:\\> python a.py\n0.93\n```", 3),
    "a jupyter fence": ("```jupyter\nvalue 0.93\n```", 3),
    # the language's ending, Pygments' names and others' alike
    **{f"a {name} fence": (f"```{name}\nvalue 0.93\n```", 3) for name in (
        "python-console", "ipython-console", "pycon3", "python-traceback", "traceback", "jlcon", "julia-repl",
        "rconsole", "logs", "psql-session")},
    "a traceback in a text fence": ("```text\nTraceback (most recent call last):\n  File \"a.py\"\nValueError\n```", 3),
    "a prompt after a virtual environment": ("```text\n(.venv) $ python a.py\nvalue 0.93\n```", 3),
    "a prompt with user@host": ("```text\nuser@host:~/lesson$ python a.py\nvalue 0.93\n```", 3),
    "PS> and C:\\>": ("```text\nPS> python a.py\nvalue 0.93\nC:\\lesson> python a.py\n0.93\n```", 3),
    "an indented >>>": ("```text\n  >>> a.accuracy()\n  0.93\n```", 3),
    "a ❯ prompt": ("```text\n❯ python a.py\nvalue 0.93\n```", 3),
    **{f"a text fence under {said}": (f"{said}\n\n```text\nvalue 0.93\n```", 5) for said in (
        "输出是：", "输出为：", "它打印：", "结果如下。", "跑一遍，程序会输出", "屏幕输出这样", "跑一遍，终端里是：",
        "Output:", "Its output:", "The result:", "We get:", "You will see:", "stdout:")},
}


@pytest.mark.parametrize("prose, line", OUTPUT_LOOKING.values(), ids=OUTPUT_LOOKING.keys())
def test_a_fence_that_reads_as_output_but_is_no_transcript_is_refused(tmp_path, capsys, prose, line):
    md = lesson(tmp_path, prose)
    for command in ("tangle", "check", "update"):
        code, out, err = run(capsys, command, md)
        assert code == 2 and out == "", (command, err)
        assert err.startswith(f"{md}:{line}: error: this ") and "reads as a program's output" in err, err
        assert "{transcript=PATH}" in err and "{illustration}" in err and err.count("\n") == 1, err
    assert not (tmp_path / "generated").exists()


NOT_OUTPUT = {
    "plain text": "```text\nan illustration of the layout\n```",
    "shell commands alone": "```sh\n$ make tangle\n$ make check\n```",
    "a prompt alone": "```text\n>>> a.accuracy()\n```",
    "a formula under the word output":
        "The output of attention is a weighted sum:\n\n```math\nc = \\sum_i a_i v_i\n```",
    "a marked pycon illustration": PYCON.replace("```pycon", "```pycon {illustration}"),
    "a marked text illustration under an output caption":
        "**〈generated/a.py〉的实跑输出长这样（示意）**\n\n```text {illustration}\nvalue 0.93\n```",
    "a shell command continued": "```sh\n$ python tangle.py check \\\n    --only generated/a.py\n```",
    "a text fence under other prose": "The layout:\n\n```text\nvalue | weight\n```",
    "a shell script with comments": "```sh\n# build the page\nmake html\n```",
    "a json fence": "```json\n{\"value\": 0.93}\n```",
    "a python fence under 结果": "结果的算法：\n\n```text\nsum(a) / len(a)\n```",
}


@pytest.mark.parametrize("prose", NOT_OUTPUT.values(), ids=NOT_OUTPUT.keys())
def test_what_does_not_read_as_output_or_is_marked_as_an_illustration_passes(tmp_path, capsys, prose):
    md = lesson(tmp_path, prose)
    assert run(capsys, "tangle", md)[0] == 0
    code, out, err = run(capsys, "check", md)
    assert (code, err) == (0, "") and out.endswith("; transcript matches\n")


def test_a_declared_transcript_in_a_session_language_is_checked(tmp_path, capsys):
    """The fix the error offers: the output as a transcript, whatever its language; a wrong number then fails."""
    md = lesson(tmp_path, "", BASE.replace("```text {transcript}", "```console {transcript}"))
    assert run(capsys, "tangle", md)[0] == 0
    assert run(capsys, "check", md)[0] == 0
    md.write_text(md.read_text().replace("value 0.75\ndone", "value 0.93\ndone"))
    assert run(capsys, "check", md)[0] == 1


@pytest.mark.parametrize("info, why", [
    ("text {illustration file=generated/b.py}", "{illustration} marks a fence that tangle does not read"),
    ("text {illustration transcript}", "{illustration} marks a fence that tangle does not read"),
    ("text {illustrated}", "cannot read attribute 'illustrated'"),
])
def test_the_illustration_mark_takes_no_other_attribute(tmp_path, capsys, info, why):
    md = lesson(tmp_path, f"```{info}\nvalue 0.93\n```")
    code, _, err = run(capsys, "tangle", md)
    assert code == 2 and err.startswith(f"{md}:3: error: ") and why in err, err


def test_a_python_fence_marked_as_an_illustration_is_still_refused(tmp_path, capsys):
    md = lesson(tmp_path, "```python {illustration}\nprint('unseen code')\n```")
    code, _, err = run(capsys, "tangle", md)
    assert code == 2 and "python fence with neither {#name} nor {file=...}" in err


def test_the_real_lesson_has_no_fence_that_reads_as_unchecked_output():
    doc = literate.markdown.load(ROOT / "attention.md", "attention.md")
    assert output_fence_problems(doc) == []


# ---------------------------------------------------------------- G5: check --only names what it did not run


TWO_PROGRAMS = """\
# Two

The first prints 0.75.

```python {file=generated/a.py}
print("value 0.75")
```

```text {transcript=generated/a.py}
value 0.75
```

<!-- 数字出自 generated/b.py -->
The second prints 0.99.

```python {file=generated/b.py}
import helper
helper.show()
```

```python {file=generated/helper.py}
def show():
    print("extra 0.50")
```

```text {transcript=generated/b.py}
extra 0.99
```
"""

SUMMARY = "checked 2 prose numbers; transcript matches; not run: "  # it quotes no book: says nothing of one


def test_check_only_names_the_programs_it_did_not_run(tmp_path, capsys):
    """G5: b.py prints 0.50 while its transcript and the prose say 0.99; --only a.py cannot see that, and says so."""
    md = conftest.write(tmp_path, TWO_PROGRAMS, "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, out, err = run(capsys, "check", md, "--only", "generated/a.py")
    b, helper = tmp_path / "generated" / "b.py", tmp_path / "generated" / "helper.py"
    assert (code, err) == (0, "")
    assert out == SUMMARY + f"{b} (check without --only runs it), {helper} (only programs not run import it)\n"
    assert run(capsys, "check", md)[0] == 1  # the whole check runs b.py and finds it


@pytest.mark.parametrize("makefile, said", [
    ("check:\n\t$(PY) tangle.py check lesson.md --only generated/a.py\n"
     "more: a.txt | stamp ## the second\n\tX=1 $(PY) tangle.py check lesson.md --only generated/b.py --timeout 9\n",
     "make more runs it"),
    ("check:\n\t$(PY) tangle.py check lesson.md --only generated/a.py\n"
     "all-checks:\n\tpython tangle.py check lesson.md\n"
     "both:\n\tpython tangle.py check --only=generated/b.py lesson.md\n",
     "make all-checks, make both run it"),
    ("".join(f"b{i}:\n\tpython tangle.py check lesson.md --only generated/b.py\n" for i in range(1, 6)),
     "make b1, make b2, make b3 and 2 more run it"),
    ("check:\n\t$(PY) tangle.py check lesson.md --only generated/a.py\n"
     "update-b:\n\t$(PY) tangle.py update lesson.md --only generated/b.py\n"
     "other:\n\t$(PY) tangle.py check other.md --only generated/b.py\n"
     "B := generated/b.py\n\t$(PY) tangle.py check lesson.md --only generated/b.py\n", "no make target runs it"),
])
def test_the_make_target_that_runs_a_program_left_out_is_named(tmp_path, capsys, monkeypatch, makefile, said):
    """The Makefile beside the lesson says which target runs the program left out; where none does (an update, a
    check of another lesson, a line after a variable, which ends the rule), the summary says that."""
    monkeypatch.chdir(tmp_path)  # where make runs it: from elsewhere, make -C the lesson's folder
    md = conftest.write(tmp_path, TWO_PROGRAMS, "lesson.md")
    (tmp_path / "Makefile").write_text(makefile)
    assert run(capsys, "tangle", md)[0] == 0
    code, out, _ = run(capsys, "check", md, "--only", "generated/a.py")
    assert code == 0 and out.startswith(SUMMARY + f"{tmp_path / 'generated' / 'b.py'} ({said})"), out


def test_without_only_nothing_is_said_not_run(tmp_path, capsys):
    md = conftest.write(tmp_path, TWO_PROGRAMS.replace("extra 0.99", "extra 0.50").replace("prints 0.99",
                                                                                           "prints 0.50"), "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, out, err = run(capsys, "check", md)
    assert (code, err, out) == (0, "", "checked 2 prose numbers; transcripts match\n")


def test_the_real_makefile_names_the_experiments_as_not_run_by_make_check():
    doc = literate.markdown.load(ROOT / "attention.md", "attention.md")
    assert literate.commands.not_run(doc, ["generated/attention.py"]) == [
        "generated/experiments.py (make experiments runs it)"]
    assert literate.commands.not_run(doc, ["generated/experiments.py"]) == [
        "generated/attention.py (make check runs it)"]


# ---------------------------------------------------------------- G7: a file no root writes any more


def orphan_lesson(tmp_path: Path, capsys) -> Path:
    md = lesson(tmp_path, "")
    assert run(capsys, "tangle", md)[0] == 0
    return md


@pytest.mark.parametrize("copy", ["exact", "CRLF"])
def test_an_orphan_exactly_as_tangle_wrote_it_gets_the_rm(tmp_path, capsys, monkeypatch, copy):
    md = orphan_lesson(tmp_path, capsys)
    monkeypatch.chdir(tmp_path)
    data = (tmp_path / "generated" / "a.py").read_bytes()
    (tmp_path / "generated" / "old.py").write_bytes(data.replace(b"\n", b"\r\n") if copy == "CRLF" else data)
    code, _, err = run(capsys, "check", md.name)
    assert code == 1 and err.endswith("and a program may still import it; delete it: rm generated/old.py\n"), err


@pytest.mark.parametrize("edit", [b'print("mine")\n', b"", b"\n# a note\n"])
def test_an_orphan_edited_by_hand_is_named_so_and_given_no_rm(tmp_path, capsys, monkeypatch, edit):
    """G7: cp generated/a.py generated/mine.py, then an edit (or the hash line emptied): the message says it holds
    edits, how to keep them, and never gives an rm; check fails, tangle warns, nothing is deleted."""
    md = orphan_lesson(tmp_path, capsys)
    monkeypatch.chdir(tmp_path)
    data = (tmp_path / "generated" / "a.py").read_bytes()
    mine = tmp_path / "generated" / "mine.py"
    edited = data + edit if edit else data.replace(b"sha256 of the lines below: ", b"sha256 of the lines below: 0")
    mine.write_bytes(edited)
    code, _, err = run(capsys, "check", md.name)
    assert code == 1 and err.startswith("generated/mine.py: error: tangle.py wrote it from lesson.md, but no root"), err
    assert "holds edits made by hand" in err and "{file=generated/mine.py}" in err and "rm " not in err, err
    assert err.count("\n") == 1
    code, _, err = run(capsys, "tangle", md.name)
    assert code == 0 and err.startswith("generated/mine.py: warning: ") and "rm " not in err
    assert mine.read_bytes() == edited


def test_an_unreadable_orphan_is_not_given_the_rm(tmp_path, capsys, monkeypatch):
    """Not known to be tangle's own output as it was (here: larger than any generated file may be)."""
    md = orphan_lesson(tmp_path, capsys)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(literate.commands, "MAX_GENERATED_BYTES", 10)
    shutil.copy(tmp_path / "generated" / "a.py", tmp_path / "generated" / "big.py")
    code, _, err = run(capsys, "check", md.name)
    assert code == 1 and "holds edits made by hand" in err and "rm " not in err, err


@pytest.mark.skipif(sys.platform == "win32", reason="paths")
def test_the_rm_quotes_an_odd_name(tmp_path, capsys, monkeypatch):
    md = orphan_lesson(tmp_path, capsys)
    monkeypatch.chdir(tmp_path)
    shutil.copy(tmp_path / "generated" / "a.py", tmp_path / "generated" / "a b;$(x).py")
    err = run(capsys, "check", md.name)[2]
    assert err.endswith("delete it: rm 'generated/a b;$(x).py'\n"), err
