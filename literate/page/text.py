"""Inline text: the spans of a paragraph, heading or cell rendered, numbers linked, formulas as MathML, the rest
from the page's vocabulary; a caption above a fence."""

from __future__ import annotations

import bisect
from urllib.parse import unquote

from .. import blocks, model
from ..figures import figure_path
from ..language import RULES
from ..markup import HTML_TAGS, PROSE_HTML, Markup, end_tag, escape, join, sanitized, start_tag, tag
from ..rendering import draw_span
from .maths import mathml
from .numbers import number_html
from .state import Page
from .words import say


def render_inline(page: Page, inline: blocks.Inline, name_link: str | None = None) -> Markup:
    """A paragraph's or cell's text: numbers linked, formulas as MathML, the rest from its spans.
    name_link: make the first **bold** a link to this anchor (a caption's name)."""
    spans = PageSpans(page, inline, name_link)
    text = spans.all(inline.spans)
    if inline.formula_problem:
        page.problems.append(f"{page.doc.where(inline.line)}: error: cannot find the formulas of this paragraph in "
                             "its text (emphasis or a link inside $...$?); write them as $`...`$")
    if name_link and spans.bold is None:  # no bold name: the whole caption is the link
        text = tag("a", {"class": "name", "href": f"#{name_link}"}, text)
    return text


class PageSpans:
    """The page's drawing of each kind of span (rendering.Spans) in one text, as HTML. name_link: the first **bold**
    is a link to this anchor (a caption's name); bold: None while that bold is still to come, True inside it."""

    def __init__(self, page: Page, inline: blocks.Inline, name_link: str | None):
        self.page, self.inline, self.name_link = page, inline, name_link
        self.numbers = page.numbers.get(inline.key, {})
        self.bold: bool | None = None if name_link else False

    def all(self, spans: list) -> Markup:
        return join([draw_span(span, self) for span in spans])

    def text(self, span: blocks.Text) -> Markup:
        return escape(span.text)

    def number(self, span: blocks.Number) -> Markup:
        found = self.numbers.get(span.offset)
        return number_html(self.page, *found, number_contexts(self.page, self.inline, span)) if found else escape(span.text)

    def formula(self, span: blocks.Formula) -> Markup:
        self.page.in_formulas += sum(offset in self.numbers for offset in span.numbers)  # the formula shows them
        return mathml(self.page, span.latex, span.display, self.inline.line)

    def code(self, span: blocks.Code) -> Markup:
        return tag("code", None, span.text)

    def html(self, span: blocks.Html) -> Markup:
        return sanitized(span.html, PROSE_HTML, span.unmatched)

    def image(self, span: blocks.Image) -> Markup:
        return image_html(self.page, span)

    def line_break(self, span: blocks.Break) -> Markup:
        return Markup(start_tag("br") + "\n") if span.hard else Markup("\n")

    def link(self, span: blocks.Link) -> Markup:
        own = model.OWN_LINK.fullmatch(unquote(span.href))  # a caption's anchor, as written (as the page's ids are)
        opening = start_tag("a", {"href": f"#{own[1]}" if own else span.href, "title": span.title})
        return join([opening, self.all(span.spans), end_tag("a")])

    def styled(self, span: blocks.Styled) -> Markup:
        known = span.tag in HTML_TAGS
        if span.tag == "strong" and self.bold is None:
            self.bold = True
            opening = Markup(start_tag("a", {"class": "name", "href": f"#{self.name_link}"}) + start_tag("strong"))
        else:
            opening = start_tag(span.tag) if known else Markup("")
        drawn = self.all(span.spans)
        if span.tag == "strong" and self.bold:
            self.bold = False
            closing = Markup(end_tag("strong") + end_tag("a"))
        else:
            closing = end_tag(span.tag) if known else Markup("")
        return join([opening, drawn, closing])


def image_html(page: Page, image: blocks.Image) -> Markup:
    """A figure the tools draw, drawn here (the same drawing as its file); any other image is not fetched: its
    description, a link to the picture."""
    folder = page.doc.declared.figures
    path = figure_path(image.src, folder) if folder else None
    if path in page.figures:
        return tag("span", {"class": "figure"}, page.figures[path])
    return tag("a", {"class": "image", "href": image.src}, say(page, "image", alt=image.alt))


def number_contexts(page: Page, inline: blocks.Inline, number: blocks.Number) -> list:
    """What a number's words are read in: its sentence (where the lesson's language ends one), then its paragraph
    (or table row), each a cache key and a function giving its text (read once)."""
    ends = page.links.sentence_ends.get(inline.key)
    if ends is None:
        ends = page.links.sentence_ends[inline.key] = [match.start() for match in
                                                       RULES[page.doc.language].sentence_end.finditer(inline.flat)]
    after = bisect.bisect_left(ends, number.offset)
    start, end = (ends[after - 1] + 1 if after else 0), (ends[after] if after < len(ends) else len(inline.flat))
    return [((inline.key, start, end), lambda: inline.flat[start:end]), ((inline.key,), lambda: inline.context)]


def block_open(name: str, attributes: dict | None = None) -> Markup:
    return Markup(start_tag(name, attributes) + "\n")


def block_close(name: str) -> Markup:
    return Markup(end_tag(name) + "\n")


def table_html(page: Page, table: blocks.Table) -> Markup:
    out = [block_open("table")]
    for part, rows in (("thead", table.head), ("tbody", table.body)):
        if rows is None:
            continue
        out.append(block_open(part))
        for row in rows:
            out.append(block_open("tr"))
            for cell in row.cells:
                name = "th" if cell.header else "td"
                out += [start_tag(name, {"class": f"align-{cell.align}" if cell.align else None}),
                        render_inline(page, cell.inline), block_close(name)]
            out.append(block_close("tr"))
        out.append(block_close(part))
    out.append(block_close("table"))
    return join(out)


def caption_html(page: Page, caption: blocks.Inline | None, anchor: str) -> Markup | None:
    """A fence's caption (blocks.Fence.caption) rendered as the prose is, without its <a name> (the figure carries
    the anchor) and with its **bold name** a link to the anchor; None: the fence has none."""
    return None if caption is None else render_inline(page, caption, name_link=anchor)
