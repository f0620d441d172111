"""Tests of literate/expansion.py: each line of a generated file knows where it came from."""

from pathlib import Path

from literate.expansion import render, trace
from literate.markdown import parse_document

LESSON = """\
```python {file=generated/out.py}
def main():
    <<一步>>
    <<一步>>
```

```python {#一步}
x = 1

y = 2
```
"""


def test_each_line_knows_its_piece_offset_indentation_and_copy():
    doc = parse_document(Path("lesson.md"), "lesson.md", LESSON)
    body, origin = trace(doc, "generated/out.py")
    assert body == ["# lesson.md:2 (generated/out.py)", "def main():", "    # lesson.md:8 (一步)", "    x = 1", "", "    y = 2",
                    "    # lesson.md:8 (一步)", "    x = 1", "", "    y = 2"]
    assert [(o.piece.label, o.offset, o.indent, o.copy) for o in origin[1:6]] == [
        ("generated/out.py", 0, "", 0), ("一步", -1, "    ", 2), ("一步", 0, "    ", 2), ("一步", 1, "    ", 2),
        ("一步", 2, "    ", 2)]
    assert origin[7].copy == 6 and origin[7].md_line == 8 and origin[5].md_line == 10


def test_render_is_trace_below_a_banner_with_the_body_hash():
    doc = parse_document(Path("lesson.md"), "lesson.md", LESSON)
    text, origin = render(doc, "generated/out.py")
    body, _ = trace(doc, "generated/out.py")
    assert text.split("\n")[2:] == body + [""]
    assert origin[:2] == [None, None] and origin[3] == (2, "generated/out.py") and origin[5] == (8, "一步")


RESUMING = """\
```python {file=generated/out.py}
def main():
    for step in range(2):
        <<一步>>

        print(step)
    <<一步>>
    <<一步>>
```

```python {#一步}
x = 1
```
"""


def test_a_comment_says_where_a_pieces_own_code_resumes_after_a_chunk_it_includes():
    """Above print(step), indented as it: it comes from the root (line 5), not from 〈一步〉 above it. Blank lines and
    a chunk that follows at once need none (the next chunk has its own comment)."""
    doc = parse_document(Path("lesson.md"), "lesson.md", RESUMING)
    body, origin = trace(doc, "generated/out.py")
    assert body == ["# lesson.md:2 (generated/out.py)", "def main():", "    for step in range(2):",
                    "        # lesson.md:12 (一步)", "        x = 1", "", "        # lesson.md:6 (generated/out.py)",
                    "        print(step)", "    # lesson.md:12 (一步)", "    x = 1", "    # lesson.md:12 (一步)", "    x = 1"]
    resumed = origin[6]
    assert (resumed.offset, resumed.at, resumed.copy, resumed.md_line, resumed.opens) == (-1, 4, 0, 6, False)
    assert origin[7].md_line == 6 and [index for index, o in enumerate(origin) if o.opens] == [0, 3, 8, 10]
