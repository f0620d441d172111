"""A back end is a description (outputs.BackEnd) and a function that makes its output from the lesson: the command
line, the default path, what it may replace and every message come from the one shared command (literate/backends.py).
The proof: a plain-text back end, written here in a few lines, gets all of it, as weave.py and notebook.py do."""

import hashlib

import literate.blocks as blocks
from literate import backends, outputs
from conftest import small_lesson, write

MARK = "# plain text of the lesson, sha256 of the lines below: "


def make(doc) -> outputs.Made:
    """Each heading and paragraph as its text, each fence as its lines, below a line with their fingerprint."""
    lines = []
    for event, block, _ in blocks.walk(doc.blocks):
        if event != "open":
            continue
        if isinstance(block, blocks.Heading):
            lines += ["#" * block.level + " " + block.inline.flat, ""]
        elif isinstance(block, blocks.Paragraph):
            lines += [block.inline.flat, ""]
        elif isinstance(block, blocks.Fence):
            lines += ["    " + line for line in block.content.rstrip("\n").split("\n")] + [""]
    body = "\n".join(lines)
    return outputs.Made(f"{MARK}{hashlib.sha256(body.encode()).hexdigest()}\n{body}".encode(),
                        f"{len(lines)} lines")


def state(data: bytes) -> str:
    first, _, body = data.decode("utf-8", "replace").partition("\n")
    if not first.startswith(MARK):
        return "foreign"
    return "as written" if first[len(MARK):] == hashlib.sha256(body.encode()).hexdigest() else "changed"


TEXT = outputs.BackEnd("text.py", "text", ".txt", "The lesson as plain text.", "nested too deeply to write as text",
                       "a line edited", make, state)


def test_a_new_back_end_is_a_description_and_a_make(tmp_path, capsys):
    md = write(tmp_path, small_lesson("开头，准确率是 0.75。"), "lesson.md")
    out = tmp_path / "build" / "lesson.txt"
    (tmp_path / "build").mkdir()
    assert backends.main(TEXT, [str(md)]) == 0  # the default path: build/<MD's name><suffix> beside MD
    assert capsys.readouterr().out.startswith(f"wrote {out}: ") and "开头，准确率是 0.75。" in out.read_text()
    assert backends.main(TEXT, [str(md)]) == 0 and capsys.readouterr().out.startswith(f"unchanged: {out}")

    out.write_text(out.read_text() + "我的笔记\n")  # a reader's edit is kept, and the line says how to go on
    md.write_text(md.read_text() + "\n新的一段。\n")
    assert backends.main(TEXT, [str(md)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{out}: error: holds changes made after text.py wrote it (a line edited)") and "--force" in err
    assert "我的笔记" in out.read_text()
    assert backends.main(TEXT, [str(md), "--force"]) == 0 and "新的一段" in out.read_text()

    assert backends.main(TEXT, [str(md), "-o", str(md)]) == 2  # never the lesson
    assert "is the lesson" in capsys.readouterr().err and "新的一段" in md.read_text()
    assert backends.main(TEXT, [str(md), "-o", "-"]) == 0 and "新的一段" in capsys.readouterr().out
    assert backends.main(TEXT, ["--help"]) == 0 and "--force" in capsys.readouterr().out
