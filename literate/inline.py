"""The prose rules: how an inline token's text is read (flattened, with its links), numbers, sentences,
the book's (原书) spans, and the caption paragraph's parts."""

from __future__ import annotations

import bisect
import html
import re
from urllib.parse import unquote

from .model import CAPTION_ANCHOR, OWN_LINK


NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(?<![0-9][eE][+-])[0-9]+(?:\.[0-9]+)?(?![A-Za-z0-9_]|\.[0-9])")
BOOK_WORD, BOOK_SPAN_END = "原书", re.compile(r"[。；！？]|本仓库")
SENTENCE_END = re.compile(r"[。；！？]")
BARE_URL = re.compile(r"\b(?:https?|ftp)://[!-~]+|\bwww\.[!-~]+")


def caption_of(token) -> tuple[str, str, tuple[str, ...]] | None:
    """(anchor, title, links) of an inline token that opens with <a name="chunk-|file-|output-...">; else None.
    The title is the text of its first **bold**; links are the anchors of its links to captions, in order."""
    children = token.children or []
    first = next((child for child in children if not (child.type == "text" and not child.content)), None)
    if first is None or first.type != "html_inline":
        return None
    match = CAPTION_ANCHOR.fullmatch(first.content.strip())
    if not match:
        return None
    title: list[str] = []
    bold = None  # None: before the first bold, True: inside it, False: after it
    links = []
    for child in children:
        if child.type == "strong_open" and bold is None:
            bold = True
        elif child.type == "strong_close" and bold:
            bold = False
        elif bold and child.type in ("text", "code_inline", "softbreak"):
            title.append(child.content or " ")
        if child.type == "link_open":
            target = OWN_LINK.fullmatch(unquote(child.attrs.get("href", "")))
            if target:
                links.append(target[1])
    return html.unescape(match[1]), " ".join("".join(title).split()), tuple(links)


class Spans:
    """Spans of a text that each run from a start to the end of its sentence (the next match of end, or
    the end of the text), found in one pass; covering(position) is the latest span holding it. Starts
    come in order, so their ends do too, and only the latest start at or before a position can hold it.
    (A class only to keep the two sorted lists together.)"""

    def __init__(self, text: str, starts: list[int], end: re.Pattern):
        boundaries = [match.start() for match in end.finditer(text)]
        self.starts = starts
        after = [bisect.bisect_left(boundaries, start) for start in starts]
        self.ends = [boundaries[index] if index < len(boundaries) else len(text) for index in after]

    def covering(self, position: int) -> int | None:
        index = bisect.bisect_right(self.starts, position) - 1
        return index if index >= 0 and position < self.ends[index] else None


def inline_parts(token) -> tuple[list[str], list[tuple[int, str]]]:
    """flatten_inline, one string for each child of the token (weave.py places numbers with them)."""
    parts: list[str] = []
    html: list[tuple[int, str]] = []
    length = 0
    in_autolink = False
    for child in token.children or []:
        part = ""
        if child.type in ("link_open", "link_close") and child.markup == "autolink":
            in_autolink = child.type == "link_open"
        elif child.type == "text" and not in_autolink:
            part = BARE_URL.sub("\ufffc", child.content)
        elif child.type in ("softbreak", "hardbreak"):
            part = "\n"
        elif child.type in ("code_inline", "html_inline", "image"):
            if child.type == "html_inline":
                html.append((length, child.content))
            part = "\ufffc" + "\n" * child.content.count("\n")
        parts.append(part)
        length += len(part)
    return parts, html


def flatten_inline(token) -> tuple[str, list[tuple[int, str]]]:
    """The text children of an inline token, line breaks as \\n; code spans, HTML, images,
    autolinks and bare URLs become a separator. Also (offset in that text, HTML) of each inline HTML."""
    parts, html = inline_parts(token)
    return "".join(parts), html
