"""A second lesson, which declares nothing (no <!-- literate block): one root, one chunk, one transcript. tangle,
check, weave and notebook work on it as they are, and its notebook, run top to bottom in a fresh kernel, prints
its transcript in the cell that stands where the lesson shows it; where it cannot (a transcript in parts whose
printing lines the lesson does not declare), the notebook says so in that place.

Needs the notebook's packages (requirements-notebook.txt) and the page's; skipped without them, like
test_notebook.py and test_weave.py."""

import importlib.util
from pathlib import Path

import pytest

if any(importlib.util.find_spec(name) is None for name in ("nbformat", "nbclient", "ipykernel", "latex2mathml")):
    pytest.skip("the notebook's and the page's packages are not installed: make test installs them",
                allow_module_level=True)

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

from conftest import run  # noqa: E402
from literate.notebook import command as notebook  # noqa: E402
from literate.page import command as weave  # noqa: E402

TOP_LEVEL = ('```python {file=generated/a.py}\n<<body>>\n```\n\n'
             '```python {#body}\nprint("value 0.75")\nprint("done")\n```\n\n')
WITH_MAIN = ('```python {file=generated/a.py}\n<<body>>\n\n\nif __name__ == "__main__":\n    main()\n```\n\n'
             '```python {#body}\ndef main():\n    """Prints the result."""\n    print("value 0.75")\n    print("done")\n```\n\n')
TRANSCRIPT = "```text {transcript}\nvalue 0.75\ndone\n```\n"


def lesson(code: str, transcript: str = TRANSCRIPT) -> str:
    return f"# Lesson\n\nThe value is 0.75.\n\n{code}{transcript}"


def tools(tmp_path: Path, capsys, text: str) -> nbformat.NotebookNode:
    """tangle, check, weave and notebook on the lesson, each as its command line runs it: the notebook built."""
    md = tmp_path / "lesson.md"
    md.write_text(text, encoding="utf-8")
    assert run(capsys, "tangle", md)[0] == 0
    code, out, err = run(capsys, "check", md)
    assert code == 0 and "transcript matches" in out, err
    assert weave.main([str(md), "-o", str(tmp_path / "lesson.html")]) == 0
    assert notebook.main([str(md), "-o", str(tmp_path / "lesson.ipynb")]) == 0
    capsys.readouterr()
    built = nbformat.read(tmp_path / "lesson.ipynb", as_version=4)
    nbformat.validate(built)
    return built


def executed(built: nbformat.NotebookNode, folder: Path) -> nbformat.NotebookNode:
    NotebookClient(built, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    return built


def printed(cell) -> str:
    return "".join(output.text for output in cell.get("outputs", [])
                   if output.output_type == "stream" and output.name == "stdout")


def role(cell) -> str:
    return cell.metadata["attention"]["role"]


def transcript_line(text: str) -> int:
    return text.split("\n").index("```text {transcript}") + 1


@pytest.mark.parametrize("code", [TOP_LEVEL, WITH_MAIN], ids=["code at the top level", "a __main__ block"])
def test_the_notebook_prints_the_transcript_where_the_lesson_shows_it(tmp_path, capsys, code):
    built = tools(tmp_path, capsys, lesson(code))
    [cell] = [cell for cell in built.cells if role(cell) == "transcript"]
    assert cell.cell_type == "code" and cell.metadata.attention.line == transcript_line(lesson(code))
    assert printed(cell) == "value 0.75\ndone\n"  # stored: the lesson's transcript
    cell.outputs = []
    run_cells = executed(built, tmp_path).cells
    [ran] = [cell for cell in run_cells if role(cell) == "transcript"]
    assert printed(ran) == "value 0.75\ndone\n"  # printed again, in a fresh kernel
    assert run_cells.index(ran) == len(run_cells) - 1  # where the lesson shows it: after its code


def test_a_main_block_runs_after_the_program_and_nothing_else_prints(tmp_path, capsys):
    built = executed(tools(tmp_path, capsys, lesson(WITH_MAIN)), tmp_path)
    prelude = next(cell for cell in built.cells if role(cell) == "prelude")
    code = [line for line in prelude.source.split("\n") if not line.startswith("#")]
    assert "main()" not in code and prelude.metadata.jupyter.source_hidden
    [cell] = [cell for cell in built.cells if role(cell) == "transcript"]
    assert cell.source.split("\n")[1:] == ["main()"]
    assert [printed(cell) for cell in built.cells if cell.cell_type == "code"] == ["", "", "value 0.75\ndone\n"]


def test_code_at_the_top_level_runs_whole_where_the_transcript_stands(tmp_path, capsys):
    """Without a __main__ block there is no program to run first that would not print: the whole program is the
    cell where the transcript stands (folded), and the note says so."""
    built = tools(tmp_path, capsys, lesson(TOP_LEVEL))
    assert not [cell for cell in built.cells if role(cell) == "prelude"]
    [cell] = [cell for cell in built.cells if role(cell) == "transcript"]
    assert cell.source.rstrip().endswith('print("value 0.75")\nprint("done")') and cell.metadata.jupyter.source_hidden
    note = next(cell.source for cell in built.cells if role(cell) == "note")
    assert "the folded one below it" not in note and "It has no `if __name__ == \"__main__\":`" in note  # in English


def test_a_transcript_in_parts_the_lesson_does_not_say_how_to_print_is_shown_and_the_cell_says_why(tmp_path, capsys):
    parts = ("```text {transcript=generated/a.py part=1}\nvalue 0.75\n```\n\nMore.\n\n"
             "```text {transcript=generated/a.py part=2}\ndone\n```\n")
    built = tools(tmp_path, capsys, lesson(TOP_LEVEL, parts))
    assert not [cell for cell in built.cells if role(cell) == "transcript"]
    shown = [cell.source for cell in built.cells if "```text {transcript=generated/a.py part=" in cell.source]
    assert len(shown) == 2 and all("the lesson does not declare which lines print which part" in source for source in shown)
    note = next(cell.source for cell in built.cells if role(cell) == "note")
    assert "`parts:`" in note
