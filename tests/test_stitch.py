"""Tests of stitch (literate/stitch.py): edits made in a generated file move back into the lesson's chunks;
whatever cannot be placed without a guess is refused, and then nothing is written."""

import contextlib
import io
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import literate.commands  # noqa: E402
import literate.markdown  # noqa: E402
import tangle
import conftest
from conftest import run
from test_tangle import write

LESSON = """\
# 注意力

```python {file=generated/attention.py}
def main():
    for step in range(2):
        <<训练 一步>>
    <<打印>>
```

```python {#训练 一步}
x = step * 2
y = x + 1
```

```python {#打印}
print("acc 0.9300")
```
"""


def program(md: Path, name: str = "attention.py") -> Path:
    return md.parent / "generated" / name


def edit(md: Path, old: str, new: str, name: str = "attention.py") -> None:
    path = program(md, name)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def unnumbered(text: str) -> str:
    """The generated text below the hash line, with the `# MD:LINE` numbers (they move as lines are added)
    taken out."""
    return re.sub(r"(?m)^([ \t]*# .*):[0-9]+ \(", r"\1:# (", text.split("\n", 2)[2])


def tangled(tmp_path, capsys, text: str = LESSON) -> Path:
    md = write(tmp_path, text)
    assert run(capsys, "tangle", md)[0] == 0
    return md


def test_an_edit_moves_into_its_chunk_and_is_shown_at_the_lesson_line(tmp_path, capsys):
    md = tangled(tmp_path, capsys)
    edit(md, "        y = x + 1\n", "        y = x + 2  # 改过\n")
    edited = program(md).read_text()
    code, out, err = run(capsys, "stitch", md)
    assert code == 0, err
    assert "y = x + 2  # 改过\n```" in md.read_text()
    assert f"{md}:12: 〈训练 一步〉 from {md.parent}/generated/attention.py:" in out
    assert "  - y = x + 1\n  + y = x + 2  # 改过\n" in out
    assert f"run {conftest.tangle_command('check', md)} to see" in out  # no Makefile beside it
    assert unnumbered(program(md).read_text()) == unnumbered(edited)
    assert literate.commands.sync_problems(literate.markdown.load(md, str(md))) == []  # what make check asks first
    assert run(capsys, "tangle", md)[0] == 0 and "wrote" not in capsys.readouterr().out


def test_added_and_removed_lines_keep_the_lesson_and_its_line_ends(tmp_path, capsys):
    md = write(tmp_path, LESSON.replace("\n", "\r\n"))
    assert run(capsys, "tangle", md)[0] == 0
    edit(md, "        x = step * 2\n", "")
    edit(md, '    print("acc 0.9300")\n', '    print("start")\n    print("acc 0.9300")\n')
    edited = program(md).read_text()
    code, out, _ = run(capsys, "stitch", md)
    assert code == 0
    raw = md.read_bytes()
    assert b"x = step" not in raw and b'print("start")\r\nprint("acc' in raw and b"\n" not in raw.replace(b"\r\n", b"")
    assert f"{md}:11: 〈训练 一步〉" in out and f"{md}:15: 〈打印〉" in out, out  # where each now stands
    assert unnumbered(program(md).read_text()) == unnumbered(edited)


def test_a_line_added_below_the_comment_where_code_resumes_goes_into_the_including_chunk(tmp_path, capsys):
    """The comment above `total = 0` says the root's code resumes there: a line added just below it belongs to the
    root, before that line, not to the chunk included above."""
    md = tangled(tmp_path, capsys, LESSON.replace("    <<打印>>\n", "    total = 0\n    <<打印>>\n"))
    text = program(md).read_text()
    comment = re.search(r"\n(    # attention\.md:[0-9]+ \(generated/attention\.py\))\n    total = 0\n", text)
    assert comment, text
    edit(md, comment[1] + "\n", comment[1] + "\n    begin = 1\n")
    code, out, err = run(capsys, "stitch", md)
    assert code == 0, err
    assert "        <<训练 一步>>\n    begin = 1\n    total = 0\n    <<打印>>\n" in md.read_text()


def test_nothing_edited_is_nothing_to_stitch(tmp_path, capsys):
    md = tangled(tmp_path, capsys)
    before = md.read_bytes()
    code, out, _ = run(capsys, "stitch", md)
    assert code == 0 and "nothing to stitch" in out and md.read_bytes() == before


# ---------------------------------------------------------------- refusals: file:line, the reason, nothing written


def refused(capsys, md: Path, *reasons: str) -> str:
    files = {path: path.read_bytes() for path in [md, *sorted((md.parent / "generated").iterdir())]}
    code, out, err = run(capsys, "stitch", md)
    assert code == 2 and not out, (out, err)
    for reason in reasons:
        assert reason in err, err
    assert {path: path.read_bytes() for path in files} == files
    return err


def test_refused_an_edit_of_a_chunk_included_twice_unless_every_copy_changed_alike(tmp_path, capsys):
    twice = LESSON.replace("    <<打印>>\n", "    <<打印>>\n    <<打印>>\n")
    md = tangled(tmp_path, capsys, twice)
    edit(md, '    print("acc 0.9300")\n', '    print("acc 0.9400")\n')
    refused(capsys, md, "generated/attention.py:", "〈打印〉", "is included 2 times", "not every copy")
    edit(md, '    print("acc 0.9300")\n', '    print("acc 0.9400")\n')  # the second copy, the same way
    assert run(capsys, "stitch", md)[0] == 0
    assert 'print("acc 0.9400")' in md.read_text() and "0.9300" not in md.read_text()


def test_refused_a_copy_changed_in_one_file_but_not_in_another(tmp_path, capsys):
    two_files = LESSON + '\n```python {file=generated/other.py}\n<<打印>>\n```\n'
    md = tangled(tmp_path, capsys, two_files)
    edit(md, '    print("acc 0.9300")\n', '    print("acc 0.9400")\n')
    refused(capsys, md, "is included 2 times", "generated/other.py:")


BOUNDARY = """\
```python {file=generated/a.py}
print("header")
<<body>>
print("footer")
```

```python {#body}
print("body 1")
print("body 2")
```
"""


def test_refused_a_line_added_where_a_chunk_ends_and_the_code_that_includes_it_goes_on(tmp_path, capsys):
    """Just after body's last line, the line could end 〈body〉 or follow <<body>> in the root: the same file
    either way, two different lessons. Refused, not guessed; just before the last line, it is 〈body〉's."""
    md = tangled(tmp_path, capsys, BOUNDARY)
    edit(md, 'print("body 2")\n', 'print("body 2")\nprint("added before footer")\n', "a.py")
    refused(capsys, md, f"{md.parent}/generated/a.py:8: error: the added lines stand just after the last line of 〈body〉 "
            f"({md}:7), where the code that includes it goes on", "make this edit in attention.md")
    edit(md, 'print("body 2")\nprint("added before footer")\n', 'print("body 2")\n', "a.py")
    edit(md, 'print("body 2")\n', 'print("added in body")\nprint("body 2")\n', "a.py")
    assert run(capsys, "stitch", md)[0] == 0
    assert 'print("body 1")\nprint("added in body")\nprint("body 2")\n```' in md.read_text()


def test_refused_an_edit_straddling_two_chunks(tmp_path, capsys):
    """The last line of an included chunk and the blank line after it, of the chunk that includes it (the comment
    where that chunk's code resumes stands only above code): no telling where the new lines belong."""
    md = tangled(tmp_path, capsys, LESSON.replace("    <<打印>>\n", "\n    <<打印>>\n"))
    edit(md, "        y = x + 1\n\n", "        y = x + 2\n        z = 1\n")
    refused(capsys, md, "generated/attention.py:", "straddles two chunks", "〈训练 一步〉", "〈generated/attention.py〉")


def test_refused_an_edit_across_a_location_comment(tmp_path, capsys):
    md = tangled(tmp_path, capsys)
    text = program(md).read_text()
    start = text.index("        y = x + 1\n")
    end = text.index('    print("acc 0.9300")\n') + len('    print("acc 0.9300")\n')
    program(md).write_text(text[:start] + "        y = 0\n        print(y)\n" + text[end:])
    refused(capsys, md, "generated/attention.py:", "error: the edit changes the comment `# attention.md:")


def test_refused_an_edit_straddling_two_adjacent_chunks(tmp_path, capsys):
    adjacent = LESSON.replace("        <<训练 一步>>\n    <<打印>>\n", "        <<训练 一步>>\n        <<打印>>\n")
    md = tangled(tmp_path, capsys, adjacent)
    text = program(md).read_text()
    lines = text.split("\n")
    at = lines.index("        y = x + 1")
    assert lines[at + 1].startswith("        # attention.md:")
    del lines[at : at + 3]  # the last line of one chunk, the comment, the first line of the next
    program(md).write_text("\n".join(lines))
    refused(capsys, md, "generated/attention.py:", "the comment `# attention.md:")


def test_refused_a_line_that_gives_up_the_indentation_expansion_added(tmp_path, capsys):
    md = tangled(tmp_path, capsys)
    edit(md, "        y = x + 1\n", "    y = x + 1\n")
    err = refused(capsys, md, "generated/attention.py:", "indentation that expansion added", "8 columns")
    assert re.search(r"attention\.py:[0-9]+: error:", err)


def test_refused_a_changed_banner(tmp_path, capsys):
    md = tangled(tmp_path, capsys)
    edit(md, "edit attention.md and run make tangle", "edited here")
    edit(md, "        y = x + 1\n", "        y = x + 2\n")
    refused(capsys, md, "generated/attention.py:1: error: the generated header")


def test_refused_a_changed_location_comment(tmp_path, capsys):
    md = tangled(tmp_path, capsys)
    edit(md, "(训练 一步)", "(训练)")
    refused(capsys, md, "the comment `# attention.md:", "(训练 一步)`")


def test_refused_when_the_lesson_changed_since_the_last_tangle(tmp_path, capsys):
    md = tangled(tmp_path, capsys)
    edit(md, "        y = x + 1\n", "        y = x + 2\n")
    md.write_text(md.read_text().replace("x = step * 2", "x = step * 3"))
    refused(capsys, md, "generated/attention.py:2: error: attention.md changed since")


def test_refused_an_edit_that_would_not_come_back_the_same(tmp_path, capsys):
    md = tangled(tmp_path, capsys)
    edit(md, "        y = x + 1\n", "        <<打印>>\n")
    refused(capsys, md, "would not come back the same")


def test_refused_a_file_that_is_not_utf8(tmp_path, capsys):
    md = tangled(tmp_path, capsys)
    program(md).write_bytes(program(md).read_bytes().replace(b"y = x + 1", b"y = x + \xff"))
    refused(capsys, md, "generated/attention.py:", "not UTF-8 (byte 0xff)")


def test_a_file_edited_again_while_stitch_runs_keeps_its_new_edit(tmp_path, capsys, monkeypatch):
    import literate.stitch
    md = tangled(tmp_path, capsys)
    edit(md, "        y = x + 1\n", "        y = x + 2\n")
    original = literate.stitch.report

    def meanwhile(*args):
        edit(md, "        y = x + 2\n", "        y = x + 3\n")
        return original(*args)
    monkeypatch.setattr(literate.stitch, "report", meanwhile)
    code, _, err = run(capsys, "stitch", md)
    assert code == 1 and "changed while tangle.py was about to write it" in err and "copy your newer change" in err
    assert "y = x + 2" in md.read_text() and "y = x + 3" in program(md).read_text()


def test_refused_an_edit_that_would_break_the_lesson(tmp_path, capsys):
    md = tangled(tmp_path, capsys)
    edit(md, "        y = x + 1\n", "        ```\n")
    refused(capsys, md, "nothing written")


def test_refused_when_the_lesson_changes_while_stitch_reads_it(tmp_path, capsys, monkeypatch):
    import literate.stitch
    md = tangled(tmp_path, capsys)
    edit(md, "        y = x + 1\n", "        y = x + 2\n")
    original = literate.stitch.parse_document

    def meanwhile(*args):
        md.write_text(md.read_text() + "\n另一处修改。\n")
        return original(*args)
    monkeypatch.setattr(literate.stitch, "parse_document", meanwhile)
    generated_before = program(md).read_bytes()
    code, _, err = run(capsys, "stitch", md)
    assert code == 1 and "changed while stitch was reading it; nothing written" in err
    assert md.read_text().endswith("另一处修改。\n") and "x + 2" not in md.read_text()
    assert program(md).read_bytes() == generated_before


# ---------------------------------------------------------------- the round trip, on random lessons

NAMES = ["甲", "乙", "丙 丁", "e"]
CODE = st.text(alphabet="abcxyz=+-() 0123456789\"'中文", min_size=1, max_size=12).map(str.strip).filter(
    lambda line: line and not line.startswith(("<<", "#", "`", "~")))


@st.composite
def lessons(draw):
    """A root that includes each of a few chunks once, at a random indentation, with random lines; the
    chunks' fences in random order, some before the root."""
    count = draw(st.integers(1, 3))
    chunks = {NAMES[i]: draw(st.lists(CODE, min_size=0, max_size=4)) for i in range(count)}
    root = []
    for name in chunks:
        root += draw(st.lists(CODE, max_size=2))
        root.append(" " * draw(st.sampled_from([0, 4, 8])) + f"<<{name}>>")
    fences = [f"```python {{#{name}}}\n" + "".join(line + "\n" for line in lines) + "```\n"
              for name, lines in chunks.items()]
    fences = draw(st.permutations(fences))
    at = draw(st.integers(0, len(fences)))
    root_fence = "```python {file=generated/attention.py}\n" + "".join(line + "\n" for line in root) + "```\n"
    parts = ["# 课\n", *fences[:at], root_fence, *fences[at:]]
    return "\n".join(parts), chunks


def tangled_lines(tmp_path_factory, text: str) -> tuple[Path, Path, list[str]]:
    md = write(tmp_path_factory.mktemp("lesson"), text)
    assert tangle.main(["tangle", str(md)]) == 0
    return md, program(md), program(md).read_text().split("\n")


def ends_ambiguously(md: Path, path: Path, must: bool) -> bool:
    """Stitch the edit; True if it was taken. Lines added just where a chunk ends could end the chunk or follow
    its <<reference>>: refused (must: certainly so), with nothing written. A refusal is allowed only for that
    reason: where the diff places added lines at a chunk's end (an edit that reaches it, or lines that slide
    there over equal lines, which a diff may do in more ways than a test should predict), and for no other."""
    files = {p: p.read_bytes() for p in (md, path)}
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        code = tangle.main(["stitch", str(md)])
    assert code in ((2,) if must else (0, 2)), said.getvalue()
    if code == 2:
        assert "error: the added lines stand just after the last line of 〈" in said.getvalue(), said.getvalue()
        assert {p: p.read_bytes() for p in files} == files
    return code == 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lesson=lessons(), data=st.data())
def test_stitch_then_tangle_gives_back_the_edited_file(tmp_path_factory, lesson, data):
    md, path, lines = tangled_lines(tmp_path_factory, lesson[0])
    chunks = lesson[1]
    name = data.draw(st.sampled_from(sorted(chunks)))
    header = next(i for i, line in enumerate(lines) if line.strip().endswith(f"({name})"))
    indent = lines[header][: len(lines[header]) - len(lines[header].lstrip())]
    first, last = header + 1, header + 1 + len(chunks[name])  # the chunk's lines: first .. last - 1
    start = data.draw(st.integers(first, last))
    end = data.draw(st.integers(start, last))
    new = [indent + line for line in data.draw(st.lists(CODE, max_size=3))]
    if start == end == last and new:  # added where the chunk ends: a line like no other, so that nothing slides
        new = [indent + "added_at_the_end"]
    lines[start:end] = new
    edited = "\n".join(lines)
    path.write_text(edited)
    if not ends_ambiguously(md, path, start == end == last and bool(new)):
        return
    assert tangle.main(["tangle", str(md)]) == 0
    after = path.read_text()
    assert unnumbered(after) == unnumbered(edited)
    if len(new) == end - start:  # no line added or removed: nothing moved, byte for byte below the hash
        assert after.split("\n", 2)[2] == edited.split("\n", 2)[2]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lesson=lessons(), data=st.data())
def test_an_edit_that_cannot_be_placed_is_refused_and_nothing_is_written(tmp_path_factory, lesson, data):
    md, path, lines = tangled_lines(tmp_path_factory, lesson[0])
    comments = [i for i, line in enumerate(lines) if re.match(r"[ \t]*# attention\.md:[0-9]+ \(", line)]
    kind = data.draw(st.sampled_from(["comment", "banner", "straddle"]))
    if kind == "comment":
        at = data.draw(st.sampled_from(comments))
        lines[at] = lines[at] + data.draw(st.sampled_from([" x", "!"]))
    elif kind == "banner":  # and a code line added, else it is no edit (tangle rewrites a stale banner)
        lines[data.draw(st.integers(0, 1))] += " "
        lines.insert(len(lines) - 1, "added")
    else:  # replace a run of lines that holds a comment and a code line on either side of it
        at = data.draw(st.sampled_from(comments[1:] or comments))
        lines[max(at - 1, 2) : at + 2] = ["edited"]
    path.write_text("\n".join(lines))
    files = {p: p.read_bytes() for p in (md, path)}
    assert tangle.main(["stitch", str(md)]) == 2
    assert {p: p.read_bytes() for p in files} == files


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(CODE, min_size=1, max_size=4),
       indents=st.tuples(st.sampled_from([0, 4]), st.sampled_from([0, 8])), data=st.data())
def test_a_chunk_included_twice_is_stitched_only_when_both_copies_changed_alike(tmp_path_factory, lines, indents,
                                                                                data):
    root = "".join(" " * indent + "<<甲>>\n" for indent in indents)
    text = f"```python {{file=generated/attention.py}}\n{root}```\n\n```python {{#甲}}\n" + \
        "".join(line + "\n" for line in lines) + "```\n"
    md, path, generated_lines = tangled_lines(tmp_path_factory, text)
    comments = [i for i, line in enumerate(generated_lines) if line.strip().endswith("(甲)")]
    start = data.draw(st.integers(0, len(lines)))
    end = data.draw(st.integers(start, len(lines)))
    new = data.draw(st.lists(CODE, max_size=2).filter(lambda new: new != lines[start:end]))

    def edited(copies):
        out = list(generated_lines)
        for comment in sorted(copies, reverse=True):
            indent = " " * indents[comments.index(comment)]
            out[comment + 1 + start : comment + 1 + end] = [indent + line for line in new]
        return "\n".join(out)
    path.write_text(edited([data.draw(st.sampled_from(comments))]))
    files = {p: p.read_bytes() for p in (md, path)}
    assert tangle.main(["stitch", str(md)]) == 2
    assert {p: p.read_bytes() for p in files} == files
    both = edited(comments)
    path.write_text(both)
    if ends_ambiguously(md, path, False):
        assert unnumbered(path.read_text()) == unnumbered(both)


def test_copies_of_a_chunk_of_repeated_lines_are_compared_each_on_its_own(tmp_path, capsys):
    """Both copies of a chunk of repeated lines changed alike: the diff is taken between the location
    comments, so it never pairs a line of one copy with the other (a case hypothesis once found)."""
    text = "```python {file=generated/attention.py}\n<<甲>>\n<<甲>>\n```\n\n```python {#甲}\n0\n0\n0\n1\n```\n"
    md = write(tmp_path, text)
    assert tangle.main(["tangle", str(md)]) == 0
    path = program(md)
    lines = path.read_text().split("\n")
    for comment in sorted((i for i, line in enumerate(lines) if line.endswith("(甲)")), reverse=True):
        lines[comment + 1 : comment + 5] = ["1", "0"]
    path.write_text("\n".join(lines))
    capsys.readouterr()
    assert tangle.main(["stitch", str(md)]) == 0, capsys.readouterr().err
    assert "```python {#甲}\n1\n0\n```" in md.read_text()
