"""What the tools tell a reader to run is the command that works for the lesson in hand: a target of the Makefile
beside it that runs tangle.py on it, else tangle.py's own command line."""

import os

from conftest import ROOT, run, small_lesson, write
from literate.makefile import check_command, lesson_command
from literate.markdown import load

LESSON_MAKEFILE = """\
TOOLS := /opt/tools
PY := $(TOOLS)/.venv/bin/python
MD := lesson.md
MD ?= other.md

update: ## tangles first
\t$(PY) $(TOOLS)/tangle.py tangle $(MD)
\t$(PY) $(TOOLS)/tangle.py update $(MD)

tangle:
\t$(PY) $(TOOLS)/tangle.py tangle $(MD)

verify:
\t$(PY) $(TOOLS)/tangle.py check $(MD) --only generated/a.py
"""


def lesson(tmp_path, makefile: str | None):
    md = write(tmp_path, small_lesson("值 0.75。"), "lesson.md")
    if makefile is not None:
        (tmp_path / "Makefile").write_text(makefile)
    return load(md, str(md))


def test_a_lesson_without_a_makefile_is_told_tangle_pys_own_command(tmp_path):
    doc = lesson(tmp_path, None)
    tools = os.path.relpath(ROOT / "tangle.py")
    assert lesson_command(doc, "stitch") == f"python {tools} stitch {doc.shown}"
    assert check_command(doc, "generated/a.py") == f"python {tools} check {doc.shown}"


def test_a_target_that_runs_tangle_py_on_the_lesson_is_named_its_variables_read(tmp_path, monkeypatch):
    doc = lesson(tmp_path, LESSON_MAKEFILE)
    monkeypatch.chdir(tmp_path)  # the lesson's folder
    assert lesson_command(doc, "tangle") == "make tangle"  # the target of that name, though update runs it first
    assert lesson_command(doc, "update") == "make update"
    assert lesson_command(doc, "check") == "make verify"  # the only one that runs check
    assert check_command(doc, "generated/a.py") == "make verify"
    assert lesson_command(doc, "stitch").endswith(f"tangle.py stitch {doc.shown}")  # no target runs it
    monkeypatch.chdir(tmp_path.parent)  # another folder: make runs in the lesson's
    assert lesson_command(doc, "tangle") == f"make -C {tmp_path.name} tangle"


def test_a_makefile_for_another_lesson_names_none_of_its_targets(tmp_path):
    doc = lesson(tmp_path, LESSON_MAKEFILE.replace("MD := lesson.md", "MD := other.md"))
    assert lesson_command(doc, "tangle").startswith("python ") and check_command(doc, "generated/a.py").startswith(
        "python ")


def test_the_messages_name_the_lessons_own_command(tmp_path, capsys):
    md = write(tmp_path, small_lesson("值 0.75。"), "lesson.md")
    code, _, err = run(capsys, "check", md)  # generated/ was never written
    assert code != 0 and f"missing; run python {os.path.relpath(ROOT / 'tangle.py')} tangle {md}" in err
    (tmp_path / "Makefile").write_text(LESSON_MAKEFILE)
    code, _, err = run(capsys, "check", md)
    assert code != 0 and f"missing; run make -C {os.path.relpath(tmp_path)} tangle" in err
