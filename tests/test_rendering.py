"""The back ends' one protocol (literate/rendering.py): a back end written against it alone, without the page or
the notebook, draws the whole lesson; and the dispatch refuses what is no block or span."""

import os
import subprocess
import sys

import pytest

import conftest
import literate.blocks as b
import literate.markdown
from literate.rendering import draw, draw_span
from plain_text import PlainBlocks, PlainSpans, plain_text

ROOT = conftest.ROOT
BACK_END_LINES = 100  # a new back end is short: the protocol gives it every kind of block and span


def test_a_plain_text_back_end_is_short_and_needs_neither_the_page_nor_the_notebook():
    source = ROOT / "tests" / "plain_text.py"
    assert len(source.read_text(encoding="utf-8").splitlines()) < BACK_END_LINES
    script = ("import sys; from plain_text import plain_text; from pathlib import Path; "
              "text = plain_text(Path('attention.md')); "
              "print(sorted(m for m in sys.modules if m.startswith(('literate.page', 'literate.notebook')))); "
              "print(len(text))")
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}, timeout=120)
    assert run.returncode == 0, run.stderr
    imported, length = run.stdout.splitlines()
    assert imported == "[]"
    assert int(length) > 10_000


def test_the_plain_text_holds_every_heading_in_order_and_every_fences_code():
    path = ROOT / "attention.md"
    text = plain_text(path)
    doc = literate.markdown.parse_document(path, "attention.md", path.read_text(encoding="utf-8"))
    headings = [block.inline.plain for _, block, _ in b.walk(doc.blocks) if isinstance(block, b.Heading)]
    fences = [block for _, block, _ in b.walk(doc.blocks) if isinstance(block, b.Fence) and block.role is not b.Role.ILLUSTRATION]
    assert len(headings) > 20 and len(fences) > 50
    place = 0
    for heading in headings:  # each after the one before
        place = text.index(heading, place)
    for fence in fences:  # a chunk's, a root's, a transcript's, a playground's code, each line indented
        code = [line for line in fence.content.split("\n") if line.strip()]
        assert all("    " + line in text for line in code), (fence.line, fence.role)


def test_nested_lists_and_quotes_are_drawn_inside_their_container(tmp_path):
    lesson = tmp_path / "lesson.md"
    lesson.write_text("```python {file=generated/p.py}\nprint(1)\n```\n\n1. one\n   - inner *x* `y` $z$\n\n> quoted\n"
                      "> > deeper\n", encoding="utf-8")
    text = plain_text(lesson)
    assert "1. one\n   - inner x y $z$" in text
    assert "> quoted\n> > deeper" in text


@pytest.mark.parametrize("thing", [b.ListItem(1, 2), b.Cell(False, None, b.Inline(0, 1, "")), "text"])
def test_what_is_no_block_is_refused_by_name(thing):
    with pytest.raises(TypeError, match=type(thing).__name__):
        draw(thing, PlainBlocks())


def test_what_is_no_span_is_refused_by_name():
    with pytest.raises(TypeError, match="Paragraph"):
        draw_span(b.Paragraph(1, 2, b.Inline(0, 1, "")), PlainSpans())
