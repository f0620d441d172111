"""Inline text: the spans of a paragraph, heading or cell rendered, numbers linked, formulas as MathML, the rest
from the page's vocabulary; a caption above a fence."""

from __future__ import annotations

from urllib.parse import unquote

from .. import blocks, model
from ..figures import figure_path
from ..markup import HTML_TAGS, PROSE_HTML, Markup, end_tag, escape, join, sanitized, start_tag, tag
from .maths import mathml
from .numbers import number_html
from .state import Page


def render_inline(page: Page, inline: blocks.Inline, name_link: str | None = None) -> Markup:
    """A paragraph's or cell's text: numbers linked, formulas as MathML, the rest from its spans.
    name_link: make the first **bold** a link to this anchor (a caption's name)."""
    numbers = page.numbers.get(inline.key, {})
    bold = [None if name_link else False]  # None: the name's bold is still to come; True: inside it
    out: list = []
    spans_html(page, inline, inline.spans, numbers, name_link, bold, out)
    if inline.formula_problem:
        page.problems.append(f"{page.doc.where(inline.line)}: error: cannot find the formulas of this paragraph in "
                             "its text (emphasis or a link inside $...$?); write them as $`...`$")
    text = join(out)
    if name_link and bold[0] is None:  # no bold name: the whole caption is the link
        text = tag("a", {"class": "name", "href": f"#{name_link}"}, text)
    return text


def spans_html(page: Page, inline: blocks.Inline, spans: list, numbers: dict, name_link: str | None, bold: list,
               out: list) -> None:
    """The spans as HTML, appended to out (nested spans: as deep as the parser nests them, a few levels)."""
    for span in spans:
        if isinstance(span, blocks.Text):
            out.append(escape(span.text))
        elif isinstance(span, blocks.Number):
            found = numbers.get(span.offset)
            out.append(number_html(page, *found, number_contexts(inline, span)) if found else escape(span.text))
        elif isinstance(span, blocks.Formula):
            page.in_formulas += sum(offset in numbers for offset in span.numbers)  # the formula shows them
            out.append(mathml(page, span.latex, span.display, inline.line))
        elif isinstance(span, blocks.Code):
            out.append(tag("code", None, span.text))
        elif isinstance(span, blocks.Html):
            out.append(sanitized(span.html, PROSE_HTML, span.unmatched))
        elif isinstance(span, blocks.Image):
            out.append(image_html(page, span))
        elif isinstance(span, blocks.Break):
            out.append(Markup(start_tag("br") + "\n") if span.hard else Markup("\n"))
        elif isinstance(span, blocks.Link):
            own = model.OWN_LINK.fullmatch(unquote(span.href))  # a caption's anchor, as written (as the page's ids are)
            out.append(start_tag("a", {"href": f"#{own[1]}" if own else span.href, "title": span.title}))
            spans_html(page, inline, span.spans, numbers, name_link, bold, out)
            out.append(end_tag("a"))
        elif isinstance(span, blocks.Styled):
            known = span.tag in HTML_TAGS
            if span.tag == "strong" and bold[0] is None:
                bold[0] = True
                out.append(Markup(start_tag("a", {"class": "name", "href": f"#{name_link}"}) + start_tag("strong")))
            else:
                out.append(start_tag(span.tag) if known else Markup(""))
            spans_html(page, inline, span.spans, numbers, name_link, bold, out)
            if span.tag == "strong" and bold[0]:
                bold[0] = False
                out.append(Markup(end_tag("strong") + end_tag("a")))
            else:
                out.append(end_tag(span.tag) if known else Markup(""))


def image_html(page: Page, image: blocks.Image) -> Markup:
    """A figure the tools draw, drawn here (the same drawing as its file); any other image is not fetched: its
    description, a link to the picture."""
    folder = page.doc.declared.figures
    path = figure_path(image.src, folder) if folder else None
    if path in page.figures:
        return tag("span", {"class": "figure"}, page.figures[path])
    return tag("a", {"class": "image", "href": image.src}, f"［图：{image.alt}］")


def number_contexts(inline: blocks.Inline, number: blocks.Number) -> list:
    """What a number's words are read in: its sentence, then its paragraph (or table row), each a cache key and
    a function giving its text (read once)."""
    start, end = number.sentence
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


def caption_html(page: Page, line: int, anchor: str) -> Markup | None:
    """The caption written above the fence at line, rendered as the prose is, without its <a name> (the
    figure carries the anchor) and with its **bold name** a link to the anchor; None: the fence has none."""
    caption = page.captions.get(line)
    return None if caption is None else render_inline(page, caption, name_link=anchor)
