"""The lesson's Markdown as the notebook's cells hold it, written again from the typed blocks and spans of the
reading stage (never from the lesson's lines): text escaped by construction (escaping.py), links only where the
page would keep them, images as links to them (never loaded; a figure the tools draw is carried as a data: URL),
HTML comments dropped, and of the author's HTML only
the captions' anchors (as ASCII ids, which JupyterLab keeps, with every link to them rewritten to match:
escaping.fragment),
<details> and <summary>; formulas written the way Jupyter wants ($`...`$ as $...$, a ```math fence as $$...$$).

Each line written stands for a line of the lesson, so that the cells can be cut where the lesson's headings and
code stand; the blank lines between two blocks are the lesson's."""

from __future__ import annotations

import html
import re
from urllib.parse import unquote

from .. import blocks, model
from ..blocks import Role, children as inside  # inside: the blocks inside a list, an item or a quote
from ..htmlsource import SourceParser  # the author's HTML read as the page reads it
from ..rendering import draw, draw_span
from .escaping import code_span, destination, formula, fragment, html_text, markdown_text, preformatted, title
from .words import Words

EMPHASIS = {"em": "*", "strong": "**"}

Line = tuple[int, str]  # (index of the lesson's line it stands for, the Markdown written for it)


def lesson_lines(doc: model.Document, words: Words, attached: dict[str, str] | None = None) -> list[str | None]:
    """For each line of the lesson (by index), the Markdown the notebook writes for it, or None: nothing.
    words: the notebook's, in the lesson's language (for a link or an image it does not keep); attached: the images
    shown from data in the cell itself (a figure the tools draw): their src -> that data URL."""
    written: list[str | None] = [None] * len(doc.lines)
    for index, text in MarkdownBlocks(words, attached or {}).siblings(doc.blocks):
        index = min(index, len(written) - 1)
        written[index] = text if written[index] is None else written[index] + "\n" + text
    return written


def stands_alone(block) -> bool:
    """Whether a block ends where the next begins, blank line or not: a heading, a fence (a ```math fence is
    written as a $$ paragraph)."""
    return isinstance(block, blocks.Heading) or isinstance(block, blocks.Fence) and not is_math(block)


def is_math(fence: blocks.Fence) -> bool:
    return fence.language == "math" and fence.role is Role.ILLUSTRATION


class MarkdownBlocks:
    """The notebook's drawing of each kind of block (rendering.Blocks): the Markdown lines written for it, each
    with the lesson's line it stands for. words, attached: see lesson_lines. other_marker: whether the list drawn next
    takes the other marker (siblings says so: a list right after another of its kind would continue it)."""

    def __init__(self, words: Words, attached: dict[str, str]):
        self.words, self.attached, self.other_marker = words, attached, False

    def siblings(self, siblings: list, tight: bool = False) -> list[Line]:
        """Blocks that stand side by side (the lesson's, a list item's, a quote's), a blank line or as many as the
        lesson has between two of them (none in a tight list). A block that writes nothing (a comment) leaves its
        lines blank."""
        out: list[Line] = []
        previous, other = None, False  # the last block written; whether the list written last took the other marker
        for block in siblings:
            if isinstance(block, blocks.ListBlock):
                other = isinstance(previous, blocks.ListBlock) and previous.ordered == block.ordered and not other
            self.other_marker = other
            lines = draw(block, self)
            if not lines:
                continue
            if previous is not None and not tight:
                gap = [(index, "") for index in range(previous.end, block.line - 1)]
                # none where the lesson has none between a heading or a fence and what is next to it; else one at
                # least (a list's or a quote's last line holds the blank lines after it: its next line would
                # continue it)
                closed = any(map(stands_alone, (previous, block))) and not inside(previous)
                out += gap or ([] if closed else [(block.line - 1, "")])
            out += lines
            previous = block
        return out

    def inline(self, spans: list, **where) -> str:
        return inline_markdown(spans, self.words, attached=self.attached, **where)

    def heading(self, block: blocks.Heading) -> list[Line]:
        text = self.inline(block.inline.spans, heading=True)
        text = text[:-1] + "\\#" if text.endswith("#") else text  # a closing # would be taken off
        return [(block.line - 1, "#" * block.level + (" " + text if text else ""))]

    def paragraph(self, block: blocks.Paragraph) -> list[Line]:
        text = formula(block.display, True) if block.display is not None else self.inline(block.inline.spans)
        return numbered(block, text.split("\n"))

    def fence(self, block: blocks.Fence) -> list[Line]:
        return numbered(block, fence_lines(block))

    def code_block(self, block: blocks.CodeBlock) -> list[Line]:
        content = block.content.rstrip("\n")
        return numbered(block, preformatted(content) or ["    " + line if line else "" for line in content.split("\n")])

    def html_block(self, block: blocks.HtmlBlock) -> list[Line]:
        text = html_block(block.html, block.unmatched).rstrip("\n")
        return numbered(block, text.split("\n")) if text.strip() else []

    def rule(self, block: blocks.Rule) -> list[Line]:
        return [(block.line - 1, "---")]

    def list_block(self, block: blocks.ListBlock) -> list[Line]:
        """Each item with its marker (- or 1., the other one, * or 1), for a list that follows one of its kind),
        the lines of what it holds indented under it; a blank line between two items unless the list is tight."""
        other_marker = self.other_marker
        tight = any(isinstance(child, blocks.Paragraph) and child.tight for item in block.items
                    for child in inside(item))
        out: list[Line] = []
        for number, item in enumerate(block.items, 1 if block.start is None else block.start):
            marker = (f"{number}{')' if other_marker else '.'}" if block.ordered else "*" if other_marker else "-")
            lines = self.siblings(inside(item), tight)
            if out and not tight:
                out.append((item.line - 1, ""))
            indent = " " * (len(marker) + 1)
            out += [(index, (marker + " " if k == 0 else indent if text else "") + text)
                    for k, (index, text) in enumerate(lines)] or [(item.line - 1, marker)]
        return out

    def quote(self, block: blocks.Quote) -> list[Line]:
        return [(index, "> " + text if text else ">") for index, text in self.siblings(inside(block))]

    def details(self, block: blocks.Details) -> list[Line]:
        return self.siblings(inside(block))  # its <details> and </details> are HTML blocks

    def table(self, block: blocks.Table) -> list[Line]:
        def row(cells) -> str:
            return "| " + " | ".join(self.inline(cell.inline.spans, table=True) or " " for cell in cells) + " |"
        rule = {None: "---", "left": ":---", "center": ":---:", "right": "---:"}
        out = [(r.line - 1, row(r.cells)) for r in block.head]
        out.append((block.line, "|" + "|".join(rule[cell.align] for cell in block.head[0].cells) + "|"))
        return out + [(r.line - 1, row(r.cells)) for r in block.body or []]


def numbered(block, lines: list[str]) -> list[Line]:
    """The lines written for a block, each standing for the block's line at the same place (its last, beyond)."""
    return [(min(block.line - 1 + offset, max(block.end - 1, block.line - 1)), line) for offset, line in
            enumerate(lines)]


def fence_lines(fence: blocks.Fence) -> list[str]:
    """A fence as written, its content exactly, within a fence that nothing in it can close; a ```math fence as
    $$...$$; one with a \\ or $ as an HTML <pre> block (escaping.preformatted)."""
    content = fence.content[:-1] if fence.content.endswith("\n") else fence.content
    if is_math(fence):
        return formula(f"\n{content}\n", True).split("\n")
    html = preformatted(content, fence.info)  # the info string, which only names the language, left out
    if html:
        return html
    character = "~" if "`" in fence.info else "`"  # an info string cannot hold a backtick after backticks
    longest = max(map(len, re.findall(re.escape(character) + "+", content)), default=0)
    marker = character * max(3, longest + 1)
    return [marker + fence.info, *(content.split("\n") if content else []), marker]


# ---------------------------------------------------------------- inline


def inline_markdown(spans: list, words: Words, table: bool = False, heading: bool = False, line_start: bool = True,
                    attached: dict[str, str] | None = None) -> str:
    """A paragraph's, heading's or cell's spans as Markdown (a heading's line breaks as blanks); line_start: whether
    they begin a line (a heading's and a cell's follow their marks); words, attached: see lesson_lines."""
    writer = InlineWriter(table, heading, line_start and not (table or heading), words, attached or {})
    writer.spans(spans)
    return "".join(writer.out)


class InlineWriter:
    """The notebook's drawing of each kind of span (rendering.Spans): the spans written in order, knowing whether
    the next one starts a line (where a text could open a block) and which caption anchors are open (the </a> that
    closes one is written with it). Texts and numbers side by side are written as one text (pending): 1 and . apart
    would make a list item."""

    def __init__(self, table: bool, heading: bool, line_start: bool, words: Words, attached: dict[str, str]):
        self.table, self.heading, self.line_start = table, heading, line_start
        self.words, self.attached = words, attached
        self.out, self.anchors, self.label = [], 0, False
        self.pending: list[str] = []

    def put(self, text: str) -> None:
        self.flush()
        if text:
            self.out.append(text)
            self.line_start = False

    def flush(self) -> None:
        """Write the texts and numbers waiting to be written together."""
        if self.pending:
            joined, self.pending = "".join(self.pending), []
            self.write_text(joined)

    def write_text(self, text: str) -> None:
        self.put(markdown_text(text, self.line_start, self.table, self.label))

    def spans(self, spans: list) -> None:
        for span in spans:
            draw_span(span, self)
        self.flush()

    def text(self, span: blocks.Text) -> None:
        self.pending.append(span.text)

    def number(self, span: blocks.Number) -> None:
        self.pending.append(span.text)

    def formula(self, span: blocks.Formula) -> None:
        self.put(formula(span.latex, span.display, self.table))

    def code(self, span: blocks.Code) -> None:
        self.put(code_span(span.text, self.table))

    def image(self, span: blocks.Image) -> None:
        alt = markdown_text(span.alt, False, self.table, True)
        if span.src in self.attached:  # a figure: the cell carries its drawing
            self.put(f"![{alt}]({self.attached[span.src]})")
            return
        target = destination(span.src) if span.src else None  # nothing is loaded: a link to the picture
        self.put(self.words.image_linked.format(alt=alt, target=target) if target
                 else self.words.image_alone.format(alt=alt))

    def line_break(self, span: blocks.Break) -> None:
        if self.heading:
            self.put(" ")
            return
        self.flush()
        self.out.append("\\\n" if span.hard else "\n")
        self.line_start = True

    def link(self, span: blocks.Link) -> None:
        own = model.OWN_LINK.fullmatch(unquote(span.href))  # a caption's anchor: the id it has here
        target = f"#{fragment(own[1])}" if own else destination(span.href)
        self.put("[" if target else "")
        self.label = bool(target)  # links do not nest
        self.spans(span.spans)
        self.label = False
        self.put(f"]({target}{' ' + title(span.title) if span.title else ''})" if target else self.words.link_dropped)

    def styled(self, span: blocks.Styled) -> None:
        mark = EMPHASIS.get(span.tag, "")
        self.put(mark)
        self.spans(span.spans)
        self.put(mark)

    def html(self, span: blocks.Html) -> None:
        """Inline HTML: a caption's <a name> as <a id> (closed at once: alone on a line, an open tag would start
        an HTML block, where code spans are not code), the </a> that closed it dropped, a comment dropped, the
        rest shown as the text it is."""
        self.flush()
        tag = span.html
        anchor = model.CAPTION_ANCHOR.fullmatch(tag.strip())
        if anchor:
            self.anchors += 1
            self.put(f'<a id="{fragment(html.unescape(anchor[1]))}"></a>')
        elif tag.strip().lower() == "</a>" and self.anchors:
            self.anchors -= 1
        elif not tag.startswith("<!--"):
            self.write_text(tag)


# ---------------------------------------------------------------- HTML blocks


def html_block(text: str, unmatched: frozenset[int]) -> str:
    """An HTML block rebuilt: comments dropped; <details> (but those that pair with nothing: they would fold all
    that follows) and <summary> without their attributes; a caption's <a name> as <a id>; every other tag, and
    all text, as text (html_text)."""
    parser = HtmlBlockWriter(unmatched)
    parser.feed(text)
    parser.close()
    return "".join(parser.out)


class HtmlBlockWriter(SourceParser):
    """An HTML block parsed as a browser would (html.parser) and rebuilt (see html_block), what is shown as text
    shown as exactly its source (SourceParser; a class because HTMLParser is one)."""

    def __init__(self, unmatched: frozenset[int]):
        super().__init__()
        self.unmatched, self.details, self.anchors = unmatched, 0, 0

    def shown(self, text: str) -> str:
        return html_text(text)

    def kept_details(self) -> bool:
        self.details += 1  # the <details> and </details> of the block, counted as the reading stage counts them
        return self.details - 1 not in self.unmatched

    def handle_starttag(self, name, attributes):
        anchor = dict(attributes).get("name") or ""
        if name == "details" and self.kept_details() or name == "summary":
            self.out.append(f"<{name}>")
        elif name == "a" and model.OWN_LINK.fullmatch("#" + anchor):
            self.anchors += 1
            self.out.append(f'<a id="{fragment(anchor)}"></a>')
        else:
            self.out.append(html_text(self.get_starttag_text() or ""))

    def handle_startendtag(self, name, attributes):
        self.handle_starttag(name, attributes)

    def handle_endtag(self, name):
        if name == "details" and self.kept_details() or name == "summary":
            self.out.append(f"</{name}>")
        elif name == "a" and self.anchors:
            self.anchors -= 1
        else:
            self.show_source(f"</{name}>")

    def handle_data(self, data):
        self.out.append(html_text(data))

    def handle_comment(self, data):
        pass
