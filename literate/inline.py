"""The prose rules: how an inline token's text is read (flattened, with its HTML, marks and code spans), what a reader
may see of markup, numbers, sentences, the book's (原书) spans, and the caption paragraph's parts."""

from __future__ import annotations

import bisect
import html
import re
from urllib.parse import unquote, urlsplit

from .model import CAPTION_ANCHOR, OWN_LINK, chunk_name


# A number: digits, with thousands separators (1,000: one number, as the reader reads it) or without, and a decimal
# part; not touching ASCII letters, digits, _ or another .digits on its left (W1, 6.5.1, the 16 of 1e-16), nor on its
# right, except that a decimal may be followed by letters (0.93ms, 2.5x: a measure in units) but not by an exponent
# (1.5e-3). A plain integer is none where it begins a group of thousands that is no number (the 1 of 1,000GB).
WHOLE = r"(?:[0-9]{1,3}(?:,[0-9]{3}(?![0-9]))+|[0-9]+(?!,[0-9]{3}(?![0-9])))"
NUMBER = re.compile(rf"(?<![A-Za-z0-9_.])(?<![0-9][eE][+-])(?:{WHOLE}\.[0-9]+(?![0-9_]|\.[0-9]|[eE][+-]?[0-9])"
                    rf"|{WHOLE}(?![A-Za-z0-9_]|\.[0-9]))")
# The book's span: from its mark (原书, or the book in English: language.py) to the end of its clause (a comma or
# colon begins another claim, often ours: 原书报告 0.93，我们跑出来 0.87), of its line or of a quotation, or to a word that
# names our own runs, whichever comes first.
OUR_WORDS = r"本仓库|我|咱们|本文|本课|本次|讲义|这次|这里|实测|(?i:\b(?:we|our|us)\b)"  # words for our own runs
BOOK_SPAN_END = re.compile(r"[。；！？，：．｡﹐､…」』）\n]|——|[.,;:!?](?![0-9])|" + OUR_WORDS)
OUR_COLUMN = re.compile(OUR_WORDS)  # a header naming the book and our runs: ours
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


def inline_parts(token) -> tuple[list[str], dict[str, list]]:
    """The text of an inline token as the prose checks read it, one string for each child: line breaks as \\n;
    code spans, HTML, autolinks and bare URLs become a separator; an image, its description (the alt text, which
    the page shows and GitHub shows in its place) between two separators. Also, by kind, (offset in that text, ...)
    of: each inline HTML ("html": as written), each code span ("codes": its text), what the reader may see of markup
    ("markup": markup_text of inline HTML, and the title of a link or image, shown as a tooltip), and (start, end)
    of each image's description ("described")."""
    parts: list[str] = []
    found: dict[str, list] = {"html": [], "codes": [], "markup": [], "described": []}
    length = 0
    in_autolink = False
    for child in token.children or []:
        part = ""
        title = (child.attrs or {}).get("title") if child.type in ("link_open", "image") else None
        if title:
            found["markup"].append((length, str(title)))
        if child.type in ("link_open", "link_close") and child.markup == "autolink":
            in_autolink = child.type == "link_open"
        elif child.type == "text" and not in_autolink:
            part = BARE_URL.sub(SEPARATOR, child.content)
        elif child.type in ("softbreak", "hardbreak"):
            part = "\n"
        elif child.type == "image":
            part = SEPARATOR + BARE_URL.sub(SEPARATOR, child.content) + SEPARATOR
            found["described"].append((length + 1, length + len(part) - 1))
        elif child.type in ("code_inline", "html_inline"):
            if child.type == "html_inline":
                found["html"].append((length, child.content))
                seen = markup_text(child.content)
                if seen:
                    found["markup"].append((length, seen))
            else:
                found["codes"].append((length, child.content))
            part = SEPARATOR + "\n" * child.content.count("\n")
        parts.append(part)
        length += len(part)
    return parts, found


def inline_reading(token) -> tuple[list[str], dict[str, list]]:
    """inline_parts, and ("marks") the offsets where emphasis, strikethrough or a link opens or closes (they leave
    no character in the text: a number they split reads as one there, but not on the page). The reading stage
    keeps them all in the blocks.Inline it makes of the token."""
    parts, found = inline_parts(token)
    marks, length = [], 0
    for child, part in zip(token.children or [], parts):
        if child.type.endswith(("_open", "_close")):
            marks.append(length)
        length += len(part)
    found["marks"] = marks
    return parts, found


COMMENT_END = re.compile(r"--!?>")  # HTML5 ends a comment at --> and at --!> (GitHub and browsers show what follows)
TAG_END = re.compile(">")
# attributes whose value no reader sees: a link's target, an image's source, an anchor (as a Markdown link's target)
UNSEEN_VALUE = re.compile(r"""(\s(?:href|src|name|id)\s*=\s*)("[^"]*"|'[^']*'|[^\s"'=<>`]+)""", re.I)


def markup_text(markup: str) -> str:
    """What a reader may see of a piece of HTML markup, read for numbers: of a comment, what follows a --!> in it
    (HTML5 ends the comment there; nothing if none); of a processing instruction (<?...?>), a declaration
    (<!DOCTYPE ...>) or CDATA, all of it (GitHub drops it, the page and the notebook show it as text); of a tag,
    all of it but the values of href, src, name and id, with its character references decoded (a title is a
    tooltip, an alt text stands for an image, and the page shows a tag it does not draw as text)."""
    if markup.startswith("<!--"):
        end = COMMENT_END.search(markup, 2)
        return markup[end.end():] if end and end[0] == "--!>" else ""
    if markup.startswith(("<?", "<!")):
        return markup
    return html.unescape(UNSEEN_VALUE.sub(lambda match: match[1] + '""', markup))


def html_text(source: str) -> tuple[list[str], list[tuple[int, str]], list[tuple[int, str]]]:
    """What a reader sees of an HTML block, read as the prose checks read a paragraph: the text between its tags
    and comments (character references decoded, as a browser shows them), each tag or comment a separator; and
    (offset in that text, tag or comment) of each; and (offset, markup_text) of those a reader may see something
    of. A comment ends at the first --> or --!> (<!--> and <!---> at once, as browsers read them) or, unclosed, at
    the end; a < that no > closes before the next < is text. One pass: each comment end and > is looked for
    once."""
    parts: list[str] = []
    tags: list[tuple[int, str]] = []
    position = length = 0
    closing: dict[str, tuple[int, int] | None] = {}  # the next end of each kind (None: none left), once looked for
    for match in re.finditer(r"<(?:!--|[A-Za-z/!?])", source):
        start = match.start()
        if start < position:
            continue
        comment = source.startswith("<!--", start)
        kind, after = ("comment", start + 2) if comment else (">", start + 1)
        known = closing.get(kind, (-1, -1))
        if known is not None and known[0] < after:
            found = (COMMENT_END if comment else TAG_END).search(source, after)
            closing[kind] = known = found.span() if found else None
        if comment:
            end = len(source) if known is None else known[1]
        elif known is None or -1 < source.find("<", start + 1, known[0]) < known[0]:  # scans only up to the next <
            continue
        else:
            end = known[1]
        text = html.unescape(source[position:start])
        separator = SEPARATOR + "\n" * source.count("\n", start, end)
        tags.append((length + len(text), source[start:end]))
        parts += [text, separator]
        length += len(text) + len(separator)
        position = end
    parts.append(html.unescape(source[position:]))
    seen = [(offset, markup_text(tag)) for offset, tag in tags]
    return parts, tags, [(offset, text) for offset, text in seen if text]


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
    """The text without its <!-- ... --> comments (ended at --> or --!>, as html_text ends them), which the sanitizer
    drops (one pass: each end looked for once)."""
    pieces, position = [], 0
    while (start := text.find("<!--", position)) >= 0 and (end := COMMENT_END.search(text, start + 2)):
        pieces.append(text[position:start])
        position = end.end()
    return "".join(pieces) + text[position:]


DETAILS_TAG = re.compile(r"<(/?)details(?=[\s/>])", re.I)


def details_pairs(tokens) -> dict[int, list[tuple[bool, int | None]]]:
    """Pair the author's <details> and </details> over the whole lesson (a fold may open in one block and close
    in a later one): id(HTML token) -> for each of its tags in the order they stand, (whether it closes, the number
    of its pair, shared by a <details> and its </details>; None: it pairs with nothing). The page shows those that
    pair with nothing as text, so that an unclosed <details> cannot fold away the rest of the page."""
    stack, found = [], []
    for token in tokens:
        for html in [token, *(token.children or [])]:
            if html.type not in ("html_block", "html_inline"):
                continue
            for match in DETAILS_TAG.finditer(without_comments(html.content)):
                found.append([html, bool(match[1]), None])
                if not match[1]:
                    stack.append(found[-1])
                elif stack:
                    stack.pop()[2] = found[-1][2] = len(found)
    pairs: dict[int, list[tuple[bool, int | None]]] = {}
    for html, closes, pair in found:
        pairs.setdefault(id(html), []).append((closes, pair))
    return pairs


def unmatched(tags: list[tuple[bool, int | None]]) -> frozenset[int]:
    """Which of an HTML text's <details> and </details> (details_pairs) pair with nothing."""
    return frozenset(index for index, (_, pair) in enumerate(tags) if pair is None)


def words(text: str) -> tuple[set[str], set[str]]:
    """The pairs of characters of a text (numbers and punctuation left out), and the numbers in it: what a prose
    sentence and a transcript line are compared by, to tell which line the sentence speaks of."""
    letters = re.sub(r"[\s0-9.+\-,，。：；、（）()|]+", " ", text)
    pairs = {letters[i : i + 2] for i in range(len(letters) - 1) if " " not in letters[i : i + 2]}
    return pairs, {match[0] for match in NUMBER.finditer(text)}
