"""What the tools tell a reader to run is the command that works for the lesson in hand: a target of the Makefile
beside it that runs tangle.py on it (and nothing else of tangle.py's), else tangle.py's own command line."""

import shlex

import pytest

from conftest import ROOT, from_here, run, small_lesson, tangle_command, write
from literate.makefile import check_command, lesson_command, make_targets
from literate.markdown import load
from literate.notebook import cells

LESSON_MAKEFILE = """\
TOOLS := /opt/tools  # where the tools are
PY := $(TOOLS)/.venv/bin/python
export MD := lesson.md
MD ?= other.md

update: ## tangles first, then records: no answer to "run tangle"
\t@$(PY) $(TOOLS)/tangle.py tangle $(MD)
\t-$(PY) $(TOOLS)/tangle.py update $(MD)

tangle:
\t@$(PY) $(TOOLS)/tangle.py \\
\t    tangle $(MD) > build.log 2>&1

verify: ; $(PY) $(TOOLS)/tangle.py check $(MD) --only generated/a.py  # one program
"""


def lesson(tmp_path, makefile: str | None, folder: str = "lesson"):
    where = tmp_path / folder
    where.mkdir()
    md = write(where, small_lesson("值 0.75。"), "lesson.md")
    if makefile is not None:
        (where / "Makefile").write_text(makefile)
    return load(md, str(md))


def test_a_lesson_without_a_makefile_is_told_tangle_pys_own_command(tmp_path):
    doc = lesson(tmp_path, None)
    assert lesson_command(doc, "stitch") == tangle_command("stitch", doc.path)
    assert check_command(doc, "generated/a.py") == tangle_command("check", doc.path)


def test_a_target_that_runs_only_that_action_on_the_lesson_is_named(tmp_path, monkeypatch):
    doc = lesson(tmp_path, LESSON_MAKEFILE)
    monkeypatch.chdir(doc.folder)
    assert lesson_command(doc, "tangle") == "make tangle"  # its recipe continued over two lines, its output redirected
    assert lesson_command(doc, "check") == "make verify"  # a recipe after ;, with a comment
    assert check_command(doc, "generated/a.py") == "make verify"
    assert make_targets(doc) == {"generated/a.py": ["verify"]}
    # update tangles too: not named for update; no target stitches
    tools = shlex.quote(from_here(ROOT / "tangle.py"))
    assert lesson_command(doc, "update") == f"python {tools} update lesson.md"  # the lesson named from its folder
    assert lesson_command(doc, "stitch") == f"python {tools} stitch lesson.md"


def test_from_another_folder_make_runs_in_the_lessons(tmp_path, monkeypatch):
    doc = lesson(tmp_path, LESSON_MAKEFILE, folder="my lesson")
    monkeypatch.chdir(tmp_path)
    assert lesson_command(doc, "tangle") == "make -C 'my lesson' tangle"
    (tmp_path / "my lesson" / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "my lesson" / "sub")
    assert lesson_command(doc, "tangle") == "make -C .. tangle"


@pytest.mark.parametrize("makefile", [
    LESSON_MAKEFILE.replace("export MD := lesson.md", "MD := other.md"),  # another lesson's
    LESSON_MAKEFILE.replace("tangle $(MD) >", "tangle $$(MD) >"),  # the shell's variable, not make's
])
def test_a_makefile_target_for_another_lesson_is_not_named(tmp_path, makefile):
    doc = lesson(tmp_path, makefile)
    assert lesson_command(doc, "tangle").startswith("python ")


def test_the_notebook_names_the_command_its_reader_runs_wherever_it_is_built(tmp_path, monkeypatch):
    text = small_lesson("值 0.75。") + "\n```python {file=generated/b.py}\nprint(2)\n```\n\n```text {transcript=generated/b.py}\n2\n```\n"
    text = text.replace("```text {transcript}", "```text {transcript=generated/a.py}")
    md = write(tmp_path, text, "lesson.md")
    (tmp_path / "Makefile").write_text("more:\n\tpython tangle.py check lesson.md --only generated/b.py\n")
    notes = []
    for here in (tmp_path, ROOT):
        monkeypatch.chdir(here)
        notebook = cells.build(load(md, str(md)))
        notes.append([cell.source for cell in notebook.cells if "generated/b.py" in cell.source and "make" in cell.source])
    assert notes[0] == notes[1] and "`make more`" in notes[0][0]


def test_the_messages_name_the_lessons_own_command(tmp_path, capsys, monkeypatch):
    doc = lesson(tmp_path, None)
    code, _, err = run(capsys, "check", doc.path)  # generated/ was never written
    assert code != 0 and f"missing; run {tangle_command('tangle', doc.path)}" in err
    (doc.folder / "Makefile").write_text(LESSON_MAKEFILE)
    code, _, err = run(capsys, "check", doc.path)
    assert code != 0 and f"missing; run make -C {shlex.quote(from_here(doc.folder))} tangle" in err
    monkeypatch.chdir(doc.folder)
    code, _, err = run(capsys, "check", "lesson.md")
    assert code != 0 and "missing; run make tangle" in err
