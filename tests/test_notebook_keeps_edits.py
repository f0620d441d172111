"""notebook.py never writes over a reader's changes. It writes the fingerprint of the notebook as written into the
notebook's metadata; a notebook that no longer matches it (a cell edited, added, deleted or run, then saved) is left
byte for byte as it is, with one line that says how to keep the changes and how to let them go (--force). A notebook
read and written again unchanged, as Jupyter saves one, is still its own; a file it did not write never is.

These tests need no kernel: only nbformat (requirements-notebook.txt), like notebook.py."""

import json
import shlex

import pytest

from conftest import modules_or_skip, small_lesson  # noqa: E402

modules_or_skip(("nbformat",), "test the notebook", "requirements-notebook.txt")

import nbformat  # noqa: E402

from literate.notebook import command as notebook  # noqa: E402

LESSON = small_lesson("开头，准确率是 0.75。")


def build(tmp_path, capsys, *extra, name="nb.ipynb"):
    """Build the notebook of the lesson in tmp_path to name; (exit status, stdout, stderr)."""
    capsys.readouterr()
    status = notebook.main([str(tmp_path / "lesson.md"), "-o", str(tmp_path / name), *extra])
    return status, *capsys.readouterr()


@pytest.fixture
def built(tmp_path, capsys):
    """A notebook notebook.py wrote, and then a change to the lesson, so that building again would replace it."""
    (tmp_path / "lesson.md").write_text(LESSON, encoding="utf-8")
    assert build(tmp_path, capsys)[0] == 0
    (tmp_path / "lesson.md").write_text(LESSON.replace("开头，", "新的开头，"), encoding="utf-8")
    return tmp_path / "nb.ipynb"


def edited(path, change) -> bytes:
    """Save the notebook at path with change(notebook as JSON) made, as Jupyter saves it; its new bytes."""
    found = json.loads(path.read_text(encoding="utf-8"))
    change(found)
    path.write_text(nbformat.writes(nbformat.from_dict(found)) + "\n", encoding="utf-8")
    return path.read_bytes()


def first_code(found):
    return next(cell for cell in found["cells"] if cell["cell_type"] == "code"
                and cell["metadata"]["attention"]["role"] == "chunk")


CHANGES = {
    "a cell edited": lambda found: first_code(found).update(source="print('mine')"),
    "a Markdown cell edited": lambda found: found["cells"][0].update(source="我的笔记"),
    "a cell added": lambda found: found["cells"].append(nbformat.v4.new_code_cell("x = 1", id="mine")),
    "a cell deleted": lambda found: found["cells"].pop(),
    "a cell run": lambda found: first_code(found).update(execution_count=1, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="value 0.75\n")]),
    "a tag added": lambda found: first_code(found)["metadata"].update(tags=["mine"]),
    "the fingerprint itself": lambda found: found["metadata"].update(sha256_as_written="0" * 64),
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES)
def test_a_notebook_the_reader_changed_is_left_as_it_is(built, capsys, change):
    before = edited(built, change)
    status, out, err = build(built.parent, capsys)
    assert status == 2 and out == "" and built.read_bytes() == before
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"{built}: error: holds changes made after notebook.py wrote it"), err
    assert "copy it under another name" in err and f"rm {built}" in err and "--force" in err, err


def test_force_replaces_a_changed_notebook(built, capsys):
    edited(built, CHANGES["a cell edited"])
    status, out, _ = build(built.parent, capsys, "--force")
    assert status == 0 and out.startswith(f"wrote {built}: ")
    assert "print('mine')" not in built.read_text(encoding="utf-8") and "新的开头" in built.read_text(encoding="utf-8")
    status, out, _ = build(built.parent, capsys)
    assert status == 0 and out.startswith(f"unchanged: {built}: ")  # its own again, as written


def test_a_notebook_saved_again_unchanged_is_still_its_own(built, capsys):
    """What Jupyter does on saving a notebook nobody changed (read it, write it) leaves it notebook.py's to replace;
    so does a file written again with other blanks (the fingerprint is of the content)."""
    assert edited(built, lambda found: None) == built.read_bytes()
    assert build(built.parent, capsys)[0] == 0 and "新的开头" in built.read_text(encoding="utf-8")
    built.write_text(json.dumps(json.loads(built.read_text(encoding="utf-8")), indent=4), encoding="utf-8")
    (built.parent / "lesson.md").write_text(LESSON.replace("开头，", "又一个开头，"), encoding="utf-8")
    assert build(built.parent, capsys)[0] == 0 and "又一个开头" in built.read_text(encoding="utf-8")


def test_a_notebook_from_before_the_fingerprint_is_not_written_over(built, capsys):
    """An older notebook.py's notebook may hold a reader's changes, and nothing tells: it is left, saying so."""
    before = edited(built, lambda found: found["metadata"].pop("sha256_as_written"))
    status, _, err = build(built.parent, capsys)
    assert status == 2 and built.read_bytes() == before
    assert "was written by an older notebook.py" in err and "--force" in err and err.count("\n") == 1, err
    assert build(built.parent, capsys, "--force")[0] == 0 and "sha256_as_written" in built.read_text(encoding="utf-8")


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["plain", "--force"])
def test_a_notebook_another_tool_wrote_is_never_replaced(built, capsys, force):
    other = built.parent / "other.ipynb"
    other.write_text(nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])),
                     encoding="utf-8")
    before = other.read_bytes()
    status, _, err = build(built.parent, capsys, *force, name="other.ipynb")
    assert status == 2 and other.read_bytes() == before
    assert f"{other}: error: exists and is not a notebook notebook.py wrote" in err, err


def test_the_way_to_delete_it_is_quoted_for_the_shell(tmp_path, capsys):
    (tmp_path / "lesson.md").write_text(LESSON, encoding="utf-8")
    name = "my notes; $(echo x).ipynb"
    assert build(tmp_path, capsys, name=name)[0] == 0
    edited(tmp_path / name, CHANGES["a cell edited"])
    status, _, err = build(tmp_path, capsys, name=name)
    assert status == 2 and f"rm {shlex.quote(str(tmp_path / name))})" in err, err
