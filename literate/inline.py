"""The prose rules: how an inline token's text is read (flattened, with its HTML and marks), numbers, sentences,
the book's (原书) spans, and the caption paragraph's parts."""

from __future__ import annotations

import bisect
import html
import re
import unicodedata
from urllib.parse import unquote, urlsplit

from .characters import shows_nothing
from .model import CAPTION_ANCHOR, OWN_LINK, chunk_name


NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(?<![0-9][eE][+-])[0-9]+(?:\.[0-9]+)?(?![A-Za-z0-9_]|\.[0-9])")
BOOK_WORD, BOOK_SPAN_END = "原书", re.compile(r"[。；！？]|本仓库")
SENTENCE_END = re.compile(r"[。；！？]")
DIGIT_RUN = re.compile(r"\d+(?:\.\d+)*")  # \d: 0-9, full-width ０-９ and the digits of other scripts
# between two digits (a dot on either side allowed): a run that is neither digit, dot nor blank
BETWEEN_DIGITS = re.compile(r"(?<=[0-9])\.?([^0-9. \t]+)(?=\.?[0-9])")
MARKS = {"Mn", "Me"}  # combining marks: over a digit, they change how it looks
NUMBER_LIKE = re.compile(r"[0-9]+(?:\.[0-9]+)?")
BARE_DECIMAL = re.compile(r"(?<![A-Za-z0-9_.])\.[0-9]+(?![A-Za-z0-9_]|\.[0-9])")  # .93: NUMBER needs a digit first
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
    return html.unescape(match[1]), chunk_name("".join(title)), tuple(links)


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


SEPARATOR = "\ufffc"  # what stands in the flattened text for what is no text: code, HTML, a URL


def inline_parts(token) -> tuple[list[str], list[tuple[int, str]], list[tuple[int, int]]]:
    """The text of an inline token as the prose checks read it, one string for each child: line breaks as \\n;
    code spans, HTML, autolinks and bare URLs become a separator; an image, its description (the alt text, which
    the page shows and GitHub shows in its place) between two separators. Also (offset in that text, HTML) of each
    inline HTML, and (start, end) of each image's description."""
    parts: list[str] = []
    html: list[tuple[int, str]] = []
    described: list[tuple[int, int]] = []
    length = 0
    in_autolink = False
    for child in token.children or []:
        part = ""
        if child.type in ("link_open", "link_close") and child.markup == "autolink":
            in_autolink = child.type == "link_open"
        elif child.type == "text" and not in_autolink:
            part = BARE_URL.sub(SEPARATOR, child.content)
        elif child.type in ("softbreak", "hardbreak"):
            part = "\n"
        elif child.type == "image":
            part = SEPARATOR + BARE_URL.sub(SEPARATOR, child.content) + SEPARATOR
            described.append((length + 1, length + len(part) - 1))
        elif child.type in ("code_inline", "html_inline"):
            if child.type == "html_inline":
                html.append((length, child.content))
            part = SEPARATOR + "\n" * child.content.count("\n")
        parts.append(part)
        length += len(part)
    return parts, html, described


def inline_reading(token) -> tuple[list[str], list[tuple[int, str]], list[int], list[tuple[int, int]]]:
    """inline_parts, and the offsets where emphasis, strikethrough or a link opens or closes (they leave no
    character in the text: a number they split reads as one there, but not on the page). The reading stage keeps
    them all in the blocks.Inline it makes of the token."""
    parts, html, described = inline_parts(token)
    marks, length = [], 0
    for child, part in zip(token.children or [], parts):
        if child.type.endswith(("_open", "_close")):
            marks.append(length)
        length += len(part)
    return parts, html, marks, described


def html_text(source: str) -> tuple[list[str], list[tuple[int, str]]]:
    """What a reader sees of an HTML block, read as the prose checks read a paragraph: the text between its tags
    and comments (character references decoded, as a browser shows them), each tag or comment a separator; and
    (offset in that text, tag or comment) of each. A comment ends at the first --> (<!--> and <!---> at once, as
    browsers read them) or, unclosed, at the end; a < that no > closes before the next < is text. One pass: each
    "-->" and ">" is looked for once."""
    parts: list[str] = []
    tags: list[tuple[int, str]] = []
    position = length = 0
    closing = {"-->": -2, ">": -2}  # the next of each at or after where it was last looked for (-1: none left)
    for match in re.finditer(r"<(?:!--|[A-Za-z/!?])", source):
        start = match.start()
        if start < position:
            continue
        comment = source.startswith("<!--", start)
        marker, after = ("-->", start + 2) if comment else (">", start + 1)
        if -1 < closing[marker] < after or closing[marker] == -2:
            closing[marker] = source.find(marker, after)
        end = closing[marker]
        if comment:
            end = len(source) if end < 0 else end + 3
        elif end < 0 or -1 < source.find("<", start + 1, end) < end:  # scans only up to the next <
            continue
        else:
            end += 1
        text = html.unescape(source[position:start])
        separator = SEPARATOR + "\n" * source.count("\n", start, end)
        tags.append((length + len(text), source[start:end]))
        parts += [text, separator]
        length += len(text) + len(separator)
        position = end
    parts.append(html.unescape(source[position:]))
    return parts, tags


def broken_numbers(text: str, html: list[tuple[int, str]], marks: list[int]) -> list[tuple[int, str]]:
    """(offset, why) for each number the reader sees whole but the prose check would read otherwise: digits
    other than 0-9, no digit before the decimal point (.93), a character that shows nothing (characters.py), a
    combining mark or inline HTML between its digits, or markup that splits it."""
    found = []
    for match in DIGIT_RUN.finditer(text):
        if not match[0].isascii():
            ascii_digits = "".join(str(unicodedata.digit(c)) if c != "." else c for c in match[0])
            names = sorted({unicodedata.name(c, "a digit") for c in match[0] if c != "." and not c.isascii()})
            found.append((match.start(), f"{match[0]} is written with other digits than 0-9 ({', '.join(names[:2])}"
                          f"{', ...' if len(names) > 2 else ''}), which the check does not read; write {ascii_digits}"))
    for match in BARE_DECIMAL.finditer(text):
        found.append((match.start(), f"{match[0]} has no digit before its decimal point, so the check would not "
                      f"read it as a number; write 0{match[0]}"))
    tags = dict(html)
    for match in BETWEEN_DIGITS.finditer(text):
        run = match[1]
        hidden = [(offset, character) for offset, character in enumerate(run, match.start(1))
                  if character != "\n" and (offset in tags or shows_nothing(character)
                                             or unicodedata.category(character) in MARKS)]
        if hidden and len(hidden) == len(run) - run.count("\n"):
            what = " and ".join(sorted({f"inline HTML {tags[offset].strip()[:30]!r}" if offset in tags
                                        else f"U+{ord(c):04X} {unicodedata.name(c, '')}".strip()
                                        for offset, c in hidden}))
            before = re.search(r"[0-9.]{0,40}$", text[max(0, match.start() - 40) : match.start()])[0]
            after = re.match(r"[0-9.]{0,40}", text[match.end(1) : match.end(1) + 40])[0]
            shown = before + match[0][: match.start(1) - match.start()] + after
            found.append((match.start(), f"{shown} has {what} between its digits, which the reader does not see "
                          "and the check would read as two numbers; remove it"))
    for match in NUMBER_LIKE.finditer(text):
        inside = bisect.bisect_right(marks, match.start())
        if inside < len(marks) and marks[inside] < match.end():
            found.append((match.start(), f"{match[0]} is split by emphasis, strikethrough or a link, which the "
                          "page would show as two numbers; put the markup around the whole number"))
    return sorted(found)


URL_SCHEMES = {"", "http", "https", "mailto"}  # where the page and the notebook let a link go


def safe_url(url: str) -> str | None:
    """The link as written if it goes to a #fragment, a relative path, http(s) or mailto; else None. Blanks
    and controls are taken out first, and backslashes read as slashes, as browsers do (java\tscript: is
    javascript:, \\\\host\\share is //host/share)."""
    compact = re.sub(r"[\x00-\x20\x7f]", "", url).replace("\\", "/")  # a browser reads \\host as //host
    try:
        scheme = urlsplit(compact).scheme.lower()
    except ValueError:
        return None
    return url if scheme in URL_SCHEMES and not compact.startswith("//") else None


def without_comments(text: str) -> str:
    """The text without its <!-- ... --> comments, which the sanitizer drops (one pass: each --> looked for once)."""
    pieces, position = [], 0
    while (start := text.find("<!--", position)) >= 0 and (end := text.find("-->", start + 4)) >= 0:
        pieces.append(text[position:start])
        position = end + 3
    return "".join(pieces) + text[position:]


DETAILS_TAG = re.compile(r"<(/?)details(?=[\s/>])", re.I)


def unmatched_details(tokens) -> dict[int, frozenset[int]]:
    """Pair the author's <details> and </details> over the whole lesson (a fold may open in one block and close
    in a later one): id(HTML token) -> which of its tags (0, 1, ... in the order they stand) pair with nothing.
    The page shows those as text, so that an unclosed <details> cannot fold away the rest of the page."""
    stack, found = [], []
    for token in tokens:
        for html in [token, *(token.children or [])]:
            if html.type not in ("html_block", "html_inline"):
                continue
            for index, match in enumerate(DETAILS_TAG.finditer(without_comments(html.content))):
                found.append((html, index))
                if not match[1]:
                    stack.append(len(found) - 1)
                elif stack:
                    found[stack.pop()] = found[-1] = None
    unmatched: dict[int, frozenset[int]] = {}
    for entry in found:
        if entry is not None:
            html, index = entry
            unmatched[id(html)] = unmatched.get(id(html), frozenset()) | {index}
    return unmatched
