"""How a back end draws the lesson: it writes one method for each kind of block (Blocks) and of span (Spans), and
draw and draw_span call the one that fits: the only place that chooses what to draw by the kind. The page, the
notebook's Markdown and any new back end are such a pair of classes.

A list's, a quote's or a fold's method draws what is inside it by calling draw again. The reading stage reads lists
and quotes only a few levels deep (markdown.nesting_guard), folds only MAX_FOLD_DEPTH deep and spans MAX_SPAN_DEPTH
deep (reading.py), so this recursion is bounded too."""

from __future__ import annotations

from typing import Protocol, TypeVar

from . import blocks as b

Drawn = TypeVar("Drawn", covariant=True)  # what the back end makes of a block or span: HTML, lines, nothing


class Blocks(Protocol[Drawn]):
    """A back end's drawing of each kind of block."""

    def heading(self, block: b.Heading) -> Drawn: ...
    def paragraph(self, block: b.Paragraph) -> Drawn: ...
    def fence(self, block: b.Fence) -> Drawn: ...  # its role: block.role (a blocks.Role)
    def code_block(self, block: b.CodeBlock) -> Drawn: ...
    def html_block(self, block: b.HtmlBlock) -> Drawn: ...
    def rule(self, block: b.Rule) -> Drawn: ...
    def table(self, block: b.Table) -> Drawn: ...
    def list_block(self, block: b.ListBlock) -> Drawn: ...  # its items: block.items, each holding blocks (.children)
    def quote(self, block: b.Quote) -> Drawn: ...  # the blocks it holds: block.children
    def details(self, block: b.Details) -> Drawn: ...  # a fold: block.children, its opening and closing HTML included


class Spans(Protocol[Drawn]):
    """A back end's drawing of each kind of span in a paragraph, heading or table cell."""

    def text(self, span: b.Text) -> Drawn: ...
    def number(self, span: b.Number) -> Drawn: ...
    def formula(self, span: b.Formula) -> Drawn: ...
    def code(self, span: b.Code) -> Drawn: ...
    def html(self, span: b.Html) -> Drawn: ...
    def image(self, span: b.Image) -> Drawn: ...
    def line_break(self, span: b.Break) -> Drawn: ...
    def link(self, span: b.Link) -> Drawn: ...  # the spans it holds: span.spans
    def styled(self, span: b.Styled) -> Drawn: ...  # emphasis (span.tag em) or strong (strong) around span.spans


def draw(block, back_end: Blocks[Drawn]) -> Drawn:
    """The back end's drawing of one block."""
    match block:
        case b.Heading():
            return back_end.heading(block)
        case b.Paragraph():
            return back_end.paragraph(block)
        case b.Fence():
            return back_end.fence(block)
        case b.CodeBlock():
            return back_end.code_block(block)
        case b.HtmlBlock():
            return back_end.html_block(block)
        case b.Rule():
            return back_end.rule(block)
        case b.Table():
            return back_end.table(block)
        case b.ListBlock():
            return back_end.list_block(block)
        case b.Quote():
            return back_end.quote(block)
        case b.Details():
            return back_end.details(block)
    raise TypeError(f"no back end draws a {type(block).__name__} on its own")  # a list item: its list draws it


def draw_span(span, back_end: Spans[Drawn]) -> Drawn:
    """The back end's drawing of one span."""
    match span:
        case b.Text():
            return back_end.text(span)
        case b.Number():
            return back_end.number(span)
        case b.Formula():
            return back_end.formula(span)
        case b.Code():
            return back_end.code(span)
        case b.Html():
            return back_end.html(span)
        case b.Image():
            return back_end.image(span)
        case b.Break():
            return back_end.line_break(span)
        case b.Link():
            return back_end.link(span)
        case b.Styled():
            return back_end.styled(span)
    raise TypeError(f"{type(span).__name__} is no span")
