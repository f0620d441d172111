"""A back end of the reader's own, written against rendering.Blocks and rendering.Spans alone: the lesson as plain
text, headings underlined, code indented, formulas as their LaTeX. It imports nothing of the page or the notebook:
what a new back end needs is the typed blocks and the protocol."""

from __future__ import annotations

from pathlib import Path

from literate import blocks, markdown
from literate.rendering import draw, draw_span


class PlainBlocks:
    """Each kind of block as lines of plain text."""

    def heading(self, block: blocks.Heading) -> list[str]:
        text = spans_text(block.inline.spans)
        return [text, ("=" if block.level == 1 else "-") * len(text)]

    def paragraph(self, block: blocks.Paragraph) -> list[str]:
        if block.caption_of is not None:  # drawn above its fence, by fence()
            return []
        return [block.display] if block.display is not None else spans_text(block.inline.spans).split("\n")

    def fence(self, block: blocks.Fence) -> list[str]:
        caption = [spans_text(block.caption.spans)] if block.caption else []
        role = [f"[{block.role.value} {block.label}]"] if block.label else []
        return caption + role + ["    " + line for line in block.content.split("\n")[:-1]]

    def code_block(self, block: blocks.CodeBlock) -> list[str]:
        return ["    " + line for line in block.content.split("\n")[:-1]]

    def html_block(self, block: blocks.HtmlBlock) -> list[str]:
        text = block.text.flat.strip() if block.text else ""
        return [text] if text else []

    def rule(self, block: blocks.Rule) -> list[str]:
        return ["* * *"]

    def table(self, block: blocks.Table) -> list[str]:
        return [" | ".join(spans_text(cell.inline.spans) for cell in row.cells)
                for row in [*block.head, *(block.body or [])]]

    def list_block(self, block: blocks.ListBlock) -> list[str]:
        out = []
        for number, item in enumerate(block.items, block.start or 1):
            marker = f"{number}. " if block.ordered else "- "
            inner = [line for child in blocks.children(item) for line in draw(child, self)]
            out += [(marker if k == 0 else " " * len(marker)) + line for k, line in enumerate(inner)]
        return out

    def quote(self, block: blocks.Quote) -> list[str]:
        return ["> " + line for child in blocks.children(block) for line in draw(child, self)]

    def details(self, block: blocks.Details) -> list[str]:
        return [line for child in blocks.children(block) for line in draw(child, self)]


class PlainSpans:
    """Each kind of span as its text."""

    def text(self, span: blocks.Text) -> str:
        return span.text

    def number(self, span: blocks.Number) -> str:
        return span.text

    def formula(self, span: blocks.Formula) -> str:
        return f"${span.latex}$"

    def code(self, span: blocks.Code) -> str:
        return span.text

    def html(self, span: blocks.Html) -> str:
        return ""  # an anchor, a comment, a tag: nothing a reader of plain text reads

    def image(self, span: blocks.Image) -> str:
        return f"[{span.alt}]"

    def line_break(self, span: blocks.Break) -> str:
        return "\n"

    def link(self, span: blocks.Link) -> str:
        return spans_text(span.spans)

    def styled(self, span: blocks.Styled) -> str:
        return spans_text(span.spans)


def spans_text(spans: list) -> str:
    return "".join(draw_span(span, PlainSpans()) for span in spans)


def plain_text(path: Path) -> str:
    """The lesson at path as plain text: its blocks one after another, a blank line between two."""
    doc = markdown.parse_document(path, str(path), path.read_text(encoding="utf-8"))
    return "\n\n".join("\n".join(lines) for lines in (draw(block, PlainBlocks()) for block in doc.blocks) if lines) + "\n"
