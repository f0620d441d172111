"""Inline text: a paragraph's or cell's children rendered, numbers linked, formulas as MathML; the other tokens
of the prose rebuilt from the page's vocabulary; a caption above a fence."""

from __future__ import annotations

import bisect
import re
from types import SimpleNamespace
from urllib.parse import unquote

from .. import inline, model
from ..formulas import INLINE_MATH
from .markup import HTML_TAGS, PROSE_HTML, Markup, end_tag, escape, join, sanitized, start_tag, tag
from .maths import mathml
from .numbers import Flat, number_html
from .state import Page


def render_inline(page: Page, token, name_link: str | None = None, source=None) -> Markup:
    """A paragraph's or cell's text: numbers linked, formulas as MathML, the rest rebuilt from markdown-it's
    tokens. name_link: make the first **bold** a link to this anchor (a caption's name)."""
    children = token.children or []
    line = token.map[0] + 1 if token.map else 0
    flat = Flat(token)  # where each child starts in the text the prose check reads, to place its numbers
    numbers = page.numbers.get(id(token), [])
    formulas = [(latex, display) for _, latex, display in page.doc.formulas.get(id(source or token), [])]
    # $`...`$ (GitHub): a code span between a text ending in $ and one starting with $
    github = {i for i, child in enumerate(children)
              if child.type == "code_inline" and 0 < i < len(children) - 1
              and children[i - 1].type == "text" and children[i - 1].content.endswith("$")
              and children[i + 1].type == "text" and children[i + 1].content.startswith("$")}
    out, used, first_number = [], 0, 0
    bold = None if name_link else False  # None: the name's bold is still to come; True: inside it
    for i, child in enumerate(children):
        if i in github:
            out.append(mathml(page, child.content, False, line))
        elif child.type == "text":
            last_number = bisect.bisect_left([number.offset for number, _ in numbers], flat.starts[i + 1], first_number)
            mine = [(number, lines, number.offset - flat.starts[i]) for number, lines in numbers[first_number:last_number]]
            first_number = last_number
            text, used = text_html(page, token, flat, child.content, (i - 1 in github, i + 1 in github), mine,
                                   formulas, used, line)
            out.append(text)
        elif child.type == "strong_open" and bold is None:
            bold = True
            out.append(Markup(start_tag("a", {"class": "name", "href": f"#{name_link}"}) + start_tag("strong")))
        elif child.type == "strong_close" and bold:
            bold = False
            out.append(Markup(end_tag("strong") + end_tag("a")))
        else:
            out.append(token_html(page, child))
    if used != len(formulas):
        page.problems.append(f"{page.doc.where(line)}: error: cannot find the formulas of this paragraph in its "
                             "text (emphasis or a link inside $...$?); write them as $`...`$")
    text = join(out)
    if name_link and bold is None:  # no bold name: the whole caption is the link
        text = tag("a", {"class": "name", "href": f"#{name_link}"}, text)
    return text


def token_html(page: Page, token) -> Markup:
    """A markdown-it token other than a fence or the text of a paragraph, rebuilt from the page's vocabulary:
    its tag with the attributes that Markdown gives it (a link's href, a list's start, a cell's alignment)."""
    kind = token.type
    if kind in ("html_block", "html_inline"):
        return sanitized(token.content, PROSE_HTML, page.doc.unmatched_details.get(id(token), frozenset()))
    if kind in ("text", "code_inline"):
        return tag("code", None, token.content) if kind == "code_inline" else escape(token.content)
    if kind == "code_block":
        return Markup(tag("pre", None, tag("code", None, token.content)) + "\n")
    if kind == "softbreak":
        return Markup("\n")
    if kind == "image":  # nothing is fetched: its description, a link to the picture
        return tag("a", {"class": "image", "href": token.attrs.get("src", "")}, f"［图：{token.content}］")
    if token.hidden or token.tag not in HTML_TAGS:  # a tight list's paragraphs are not drawn
        return Markup("")
    if kind in ("hr", "hardbreak"):
        return Markup(start_tag(token.tag) + "\n")
    if token.nesting == -1:
        return Markup(end_tag(token.tag) + ("\n" if token.block else ""))
    attributes = {}
    if kind == "link_open":
        href = str(token.attrs.get("href", ""))
        own = model.OWN_LINK.fullmatch(unquote(href))  # a caption's anchor, as written (as the page's ids are)
        attributes = {"href": f"#{own[1]}" if own else href, "title": token.attrs.get("title")}
    elif kind == "ordered_list_open":
        attributes = {"start": token.attrs.get("start")}
    elif kind in ("th_open", "td_open"):
        align = re.fullmatch(r"text-align:(left|center|right)", str(token.attrs.get("style", "")))
        attributes = {"class": f"align-{align[1]}" if align else None}
    opening = start_tag(token.tag, attributes)
    return Markup(opening + "\n") if token.block and kind not in ("paragraph_open", "th_open", "td_open",
                                                                   "list_item_open") else opening


def text_html(page: Page, token, flat: Flat, content: str, github: tuple[bool, bool], numbers, formulas,
              used: int, line: int) -> tuple[Markup, int]:
    """One text child: its $...$ formulas (the next of the paragraph's formulas, as written in the source:
    markdown-it has already undone the backslash escapes in content) and its numbers. github: whether its
    first and last $ belong to a $`...`$ around. Returns the HTML and how many formulas are used now."""
    first, last = int(github[0]), len(content) - int(github[1])
    events = [(match.start(), "formula", match.end()) for match in INLINE_MATH.finditer(content, first, last)]
    positions = content_positions(content)
    events += [(positions(offset), "number", (number, lines)) for number, lines, offset in numbers]
    pieces, position = [], first
    for where, kind, what in sorted(events, key=lambda event: event[0]):
        if where < position:  # a number inside a formula: the formula shows it
            page.in_formulas += 1
            continue
        pieces.append(content[position:where])
        if kind == "formula":
            latex, display = formulas[used] if used < len(formulas) else (content[where + 1 : what - 1], False)
            used += 1
            pieces.append(mathml(page, latex, display, line))
            position = what
        else:
            number, lines = what
            sentence = flat.sentence(number.offset)
            contexts = [((id(token), *sentence), lambda: flat.text[slice(*sentence)]),
                        ((id(token),), lambda: page.blocks.get(id(token), flat.text))]
            pieces.append(number_html(page, number, lines, contexts))
            position = where + len(number.text)
    pieces.append(content[position:last])
    return join(pieces), used


def content_positions(content: str):
    """A function from a character's offset in the flattened text (inline.flatten_inline) to where it is in
    a text child's content: there, each bare URL became one character. The URLs are found once."""
    flat_starts, shifts, shift = [], [0], 0
    for match in inline.BARE_URL.finditer(content):
        flat_starts.append(match.start() - shift)
        shift += len(match[0]) - 1
        shifts.append(shift)
    return lambda offset: offset + shifts[bisect.bisect_left(flat_starts, offset)]


def caption_html(page: Page, line: int, anchor: str) -> Markup | None:
    """The caption written above the fence at line, rendered as the prose is, without its <a name> (the
    figure carries the anchor) and with its **bold name** a link to the anchor; None: the fence has none."""
    token = page.caption_tokens.get(line)
    if token is None:
        return None
    children = list(token.children or [])
    anchor_tag = next((i for i, child in enumerate(children) if child.type == "html_inline"), None)
    if anchor_tag is not None:
        closing = next((i for i in range(anchor_tag + 1, len(children)) if children[i].type == "html_inline"
                        and children[i].content.strip().lower() == "</a>"), None)
        children = [child for i, child in enumerate(children) if i not in (anchor_tag, closing)]
    while children and children[0].type == "text" and not children[0].content.strip():
        children.pop(0)
    return render_inline(page, SimpleNamespace(children=children, content=token.content, map=token.map), source=token,
                         name_link=anchor)
