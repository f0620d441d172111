#!/usr/bin/env python3
"""Weave a literate Markdown lesson into one self-contained HTML page: the prose, its
formulas as MathML, every code chunk with its name and links, the transcripts, and
every number of the prose linked to the transcript line that prints it.

usage: python weave.py [MD] [-o OUT]     (MD: ./attention.md; OUT: build/<MD's name>.html beside MD)

examples:
  python weave.py                          # build/attention.html from ./attention.md
  python weave.py docs/lesson.md -o /tmp/lesson.html
  make html                                # the same as the first, inside .venv

The page (like noweave beside notangle: weave.py reads the document as tangle.py
parses it and knows no Markdown syntax of its own, beyond the formulas):
  - a contents list of the # and ## sections, ### nested under them; on a wide screen
    beside the text, the sections in view marked (CSS view timelines, no script);
  - formulas converted to MathML when the page is built (latex2mathml; no script):
    $$...$$ or a ```math fence on its own (display), $...$ or $`...`$ (inline);
  - each code chunk, and each transcript (each of its parts, where it stands), under
    its caption: the one written above the fence in MD (<a name="chunk-NAME"></a>
    **〈NAME〉**..., which tangle.py checks), its bold name a link to the anchor it
    gives (#chunk-NAME[-N], #file-PATH[-N], #output-PATH[-N], as on GitHub), with
    its link list; a document without captions gets <<NAME>> ≡ and, for a root, the
    list of its parts in the order they are tangled. Beside it: which of several
    fences it is, links to the one before and after; its line of MD in the caption's
    tooltip (the reader's view is the lesson's). Under a chunk's last fence a "用在 →"
    link to each <<NAME>> that includes it; each <<NAME>> inside code a link to the
    chunk (where it is defined: in its tooltip);
    code is highlighted with Pygments when it is installed, plain otherwise;
  - every transcript line has the anchor #L<its line of MD> (a transcript in parts:
    each part's lines at their own lines); every prose number that make check
    verifies is a link to the number itself (#L<line>-<number>) on one transcript
    line that prints it, in whichever part (the one whose words best match the
    sentence), highlighted when you arrive; the book's
    figures are marked as the book's; the top of the page says how many numbers were
    verified, against which program's transcript;
  - each attention matrix printed in a transcript (a header of column numbers, then
    rows like `输出 1    0.10  0.10 ...`) also drawn as an SVG heatmap beside it, from
    the printed numbers (the programs are never run), grouped with the same matrix
    drawn in characters below it (`输出 1  |    ██|`) up to its legend; one colour
    scale for the whole page, by a weight's multiple of uniform (log, 1x grey, red
    above, blue below), with a legend in multiples;
  - in code and transcripts each wide character stands in a box two columns wide,
    every other non-ASCII one in a box one column wide, so columns line up on any fonts;
  - a phone's width scrolls no page sideways (boxes scroll in place); dark mode; print;
  - links to a caption's anchor keep it as written (not percent-encoded).
  The page needs nothing from the network: CSS is inline, there is no script.
  A number that the check does not verify is shown unlinked, marked, and counted
  in a warning (make check lists and fails on them); the page is still written.

Safe by construction: every tag and attribute of the page comes from one escaping path and a fixed
vocabulary (no script, no src, no style attribute, no event handler; links only to #fragments, relative
paths, http(s) and mailto); the author's raw HTML keeps only <a name>, <details> and <summary> (comments
are dropped, the rest is shown as text), formulas pass a MathML allow-list; images become links.

Writes OUT only when its content changes, atomically, and only over a page weave.py wrote: never over MD,
a file MD tangles, any other file, a folder, a FIFO or a device (-o - writes to stdout). Errors in the input
are reported as `MD:LINE: error: ...` on stderr. Exit status: 0 ok, 2 bad input or usage, 130 after Ctrl-C.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import html
import itertools
import math
import os
import re
import signal
import sys
import unicodedata
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote, urlsplit


def interrupted_while_starting(_signum, _frame):
    print("weave.py: interrupted (SIGINT) while starting; the page was not changed", file=sys.stderr)
    os._exit(130)


if __name__ == "__main__":  # Ctrl-C while the modules load: one line, not the traceback of an import
    signal.signal(signal.SIGINT, interrupted_while_starting)

from literate import console, inline, markdown, model, outputs, prose  # noqa: E402  (the model, the prose rules)

try:
    from latex2mathml.converter import convert as latex_to_mathml
except ImportError:  # run outside the project's .venv
    print("weave.py: error: needs latex2mathml; use make html (it installs requirements-html.txt into .venv), "
          "or pip install -r requirements-html.txt", file=sys.stderr)
    raise SystemExit(2) from None

try:
    from pygments.lexers import get_lexer_by_name
    from pygments.token import STANDARD_TYPES
    from pygments.util import ClassNotFound
    from pygments.formatters import HtmlFormatter
except ImportError:  # optional: code is shown plain
    get_lexer_by_name = None

OK, BAD_INPUT = 0, 2
DISPLAY_MATH = re.compile(r"\s*\$\$((?:(?!\$\$).)+)\$\$\s*", re.S)  # a paragraph that is one formula
# $...$ inside a line: the opening $ not followed by a space, ` or $; the closing one not preceded
# by a space or \, nor followed by a digit or $ (so prices like $5 and $6 stay text). $$...$$ too.
INLINE_MATH = re.compile(r"\$\$(?P<display>.+?)\$\$|(?<![\\$])\$(?![\s$`])(?P<inline>[^$\n]*?[^\s\\$])\$(?![0-9$])")
BACKTICKS = re.compile(r"`+")  # the runs that open and close code spans (code_spans)
TRANSCRIPT_MATRIX_ROW = re.compile(r"^(\S{1,64}?) ?(\d{1,9})((?:\s+-?\d+\.\d+)+)\s*$")  # 输出 1    0.10  0.10 ...
COLUMN_HEADER = re.compile(r"^\s+\d+(?:\s+\d+)+\s*$")  # the column numbers above a matrix
LEGEND = "图例"
CJK_FONTS = '"Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei", sans-serif'
# The transcripts' columns do not depend on these fonts: see columns() below.
MONO_FONTS = '"Noto Sans Mono CJK SC", "Sarasa Mono SC", "DejaVu Sans Mono", Menlo, Consolas, monospace'
LATIN_MONO_FONTS = '"DejaVu Sans Mono", Menlo, Consolas, "Liberation Mono", monospace'  # one column for ░ █ — α
MAX_CANDIDATES = 256  # a number printed on more lines links to the best of the first 256 (linear time)
GENERATOR = "weave.py"  # <meta name="generator">: marks the pages weave.py wrote, the only files it overwrites


# ---------------------------------------------------------------- HTML, escaped by construction
# Every byte of the page comes from the functions of this section. A Markup is HTML already; any other
# value is text and is escaped where it joins the page, so a forgotten escape shows as text and never runs.
# Tags and attributes come from a fixed vocabulary (no script, no style attribute, no src: nothing runs,
# nothing is fetched); a link goes only to #fragments, http(s) and mailto; the author's raw HTML and
# latex2mathml's output are parsed and rebuilt through an allow-list (Sanitizer).

HTML_TAGS = {"html", "head", "meta", "title", "style", "body", "main", "nav", "section", "h1", "h2", "h3", "h4", "h5", "h6",
             "p", "a", "strong", "em", "s", "code", "pre", "span", "div", "figure", "figcaption", "ol", "ul",
             "li", "table", "thead", "tbody", "tr", "th", "td", "blockquote", "details", "summary", "hr", "br"}
SVG_TAGS = {"svg", "title", "text", "rect"}
MATH_TAGS = {"math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msqrt", "mroot", "mfrac", "msub", "msup",
             "msubsup", "munder", "mover", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom",
             "merror", "semantics", "annotation", "mmultiscripts", "mprescripts", "none", "menclose"}
TAGS = HTML_TAGS | SVG_TAGS | MATH_TAGS
VOID_TAGS = {"meta", "hr", "br"}
# MathML Core's presentation attributes; not href, style, class, id, mathcolor or mathbackground
MATH_ATTRIBUTES = {"display", "mathvariant", "stretchy", "fence", "form", "separator", "lspace", "rspace",
                   "largeop", "movablelimits", "symmetric", "minsize", "maxsize", "accent", "accentunder",
                   "linethickness", "scriptlevel", "displaystyle", "columnalign", "rowalign", "columnspacing",
                   "rowspacing", "columnlines", "rowlines", "frame", "width", "height", "depth", "voffset",
                   "notation", "mathsize", "dir", "columnspan", "rowspan", "align"}
ATTRIBUTES = {"id", "class", "href", "title", "name", "lang", "charset", "content", "start", "open", "role",
              "viewBox", "width", "height", "x", "y", "text-anchor", "fill", "xmlns", "data-rows",
              "data-columns", "data-multiple", "aria-label"} | MATH_ATTRIBUTES
URL_SCHEMES = {"", "http", "https", "mailto"}
# The author's raw HTML that the page keeps (the lesson's own anchors and folds); comments are dropped,
# everything else is shown as the text it is written as.
PROSE_HTML = {"a": {"name", "href", "title"}, "details": {"open"}, "summary": set(), "br": set()}
MATH_HTML = {name: MATH_ATTRIBUTES for name in MATH_TAGS}


class Markup(str):
    """A piece of the page that is HTML already (see above: only this section makes one)."""

    __slots__ = ()


def escape(value) -> Markup:
    """Text as HTML: unchanged if it is Markup already."""
    return value if isinstance(value, Markup) else Markup(html.escape(str(value), quote=False))


def join(parts, separator="") -> Markup:
    return Markup(escape(separator).join(escape(part) for part in parts))


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


def start_tag(name: str, attributes: dict | None = None) -> Markup:
    """<name attributes>: the name and attributes from the vocabulary (else ValueError: a mistake of weave.py's
    own), each value escaped; True is an attribute without value, None and False leave it out."""
    if name not in TAGS:
        raise ValueError(f"weave.py writes no <{name}>")
    written = []
    for key, value in (attributes or {}).items():
        if key not in ATTRIBUTES:
            raise ValueError(f"weave.py writes no {key}= attribute")
        if key == "href" and value is not None:
            value = safe_url(str(value))
        if value is True:
            written.append(f" {key}")
        elif value is not None and value is not False:
            written.append(f' {key}="{html.escape(str(value), quote=True)}"')
    return Markup(f"<{name}{''.join(written)}>")


def end_tag(name: str) -> Markup:
    if name not in TAGS:
        raise ValueError(f"weave.py writes no <{name}>")
    return Markup(f"</{name}>")


def tag(name: str, attributes: dict | None = None, *children) -> Markup:
    """An element: its children are Markup or text (escaped)."""
    if name in VOID_TAGS:
        return start_tag(name, attributes)
    return Markup(start_tag(name, attributes) + join(children) + end_tag(name))


class Sanitizer(HTMLParser):
    """HTML written by someone else, rebuilt: a tag of the allow-list (name -> its allowed attributes) by
    start_tag, with only those attributes; any other tag, declaration or processing instruction shown as
    the text it is written as; comments dropped; text escaped. Parsed as a browser would (html.parser):
    the content of a <script> or <style> is text too. (A class because HTMLParser is one.)"""

    def __init__(self, allowed: dict[str, set[str]], unmatched: frozenset[int] = frozenset()):
        super().__init__(convert_charrefs=True)
        self.allowed, self.out = allowed, []
        self.unmatched, self.details = unmatched, 0  # which <details> and </details> of the text lead nowhere
        self.open: list[str] = []  # the tags opened here and not yet closed, other than <details>

    def handle_starttag(self, name, attributes):
        if name == "details" and self.allowed is PROSE_HTML:
            self.details += 1
            if self.details - 1 in self.unmatched:  # never closed: folding all that follows would swallow it
                self.out.append(escape(self.get_starttag_text()))
                return
        if name in self.allowed:
            kept = {key: True if value is None else value for key, value in attributes if key in self.allowed[name]}
            self.out.append(start_tag(name, kept))
            if self.allowed is PROSE_HTML and name in ("a", "summary"):
                self.open.append(name)
        else:
            self.out.append(escape(self.get_starttag_text()))

    def handle_startendtag(self, name, attributes):
        self.handle_starttag(name, attributes)
        if name in self.allowed and name not in VOID_TAGS:
            self.handle_endtag(name)

    def handle_endtag(self, name):
        if self.allowed is PROSE_HTML and name in ("a", "summary", "details"):
            if name == "details":
                self.details += 1
                if self.details - 1 in self.unmatched:
                    self.out.append(escape(f"</{name}>"))
                    return
            elif name not in self.open:  # closes nothing opened here: as text
                self.out.append(escape(f"</{name}>"))
                return
            else:
                while self.open and self.open.pop() != name:
                    pass
        self.out.append(end_tag(name) if name in self.allowed else escape(f"</{name}>"))

    def closed(self) -> list:
        """The output, with the <a> and <summary> it left open closed (else they would hold what follows)."""
        return self.out + [end_tag(name) for name in reversed(self.open)]

    def handle_data(self, data):
        self.out.append(escape(data))

    def handle_comment(self, data):
        pass

    def handle_decl(self, decl):
        self.out.append(escape(f"<!{decl}>"))

    def unknown_decl(self, data):
        self.out.append(escape(f"<![{data}]>"))

    def handle_pi(self, data):
        self.out.append(escape(f"<?{data}>"))


# ---------------------------------------------------------------- columns that do not depend on fonts
# The programs print their tables for a terminal: a wide character (East Asian Wide or Fullwidth, 中) takes two
# columns, a character of "ambiguous" width (— ░ █ · α) one. Fonts disagree (a proportional CJK fallback is about
# 1.7 columns wide, Noto Sans Mono CJK draws █ two wide), so each run of such characters stands in a box of
# exactly its columns (.w2 is 2 wide characters, 4ch); the text inside is the same, and copies the same.


def column_kind(character: str) -> str:
    """w: a wide character, two columns; a: any other beyond ASCII and Latin-1 (— · α █ ░ −), one column as the
    programs count it, whatever width fonts draw it; "": the rest."""
    if character < "\u00a1":
        return ""
    if unicodedata.east_asian_width(character) in ("W", "F"):
        return "w"
    # Any other character beyond Latin-1 is one column; fonts draw many of them wider: the ambiguous ones, but
    # also ░ ▒ ▓ and − ("neutral"). Marks that take no column of their own (accents, joiners) stay as they are.
    return "" if unicodedata.category(character) in ("Mn", "Me", "Cf") else "a"


def columns(text: str, widths: set[tuple[str, int]]) -> Markup:
    """Text for a <pre>: each run of wide characters in a box 2ch a character, each run of narrow ones in a box
    1ch a character (the classes used go into widths, for the stylesheet)."""
    out = []
    for kind, group in itertools.groupby(text, column_kind):
        run = "".join(group)
        if kind == "w":  # glyphs of a CJK font are 1em, at most two columns: the run shares a box
            widths.add((kind, len(run)))
            out.append(tag("span", {"class": f"w w{len(run)}"}, run))
        elif kind == "a":  # from a Latin monospace font, each cut to its column (█ of Noto Sans Mono CJK is 2)
            widths.add((kind, 1))
            out += [tag("span", {"class": "a a1"}, character) for character in run]
        else:
            out.append(run)
    return join(out)


def column_rules(widths: set[tuple[str, int]]) -> str:
    """The width of each box class that the page uses."""
    return "".join(f"pre .{kind}{count} {{ width: calc(var(--column) * {count * (2 if kind == 'w' else 1)}); }}\n"
                   for kind, count in sorted(widths))


def sanitized(text: str, allowed: dict[str, set[str]], unmatched: frozenset[int] = frozenset()) -> Markup:
    parser = Sanitizer(allowed, unmatched)
    parser.feed(text)
    parser.close()
    return join(parser.closed())


DETAILS_TAG = re.compile(r"<(/?)details(?=[\s/>])", re.I)


def without_comments(text: str) -> str:
    """The text without its <!-- ... --> comments, which the sanitizer drops (one pass: each --> looked for once)."""
    pieces, position = [], 0
    while (start := text.find("<!--", position)) >= 0 and (end := text.find("-->", start + 4)) >= 0:
        pieces.append(text[position:start])
        position = end + 3
    return "".join(pieces) + text[position:]


def mark_unmatched_details(tokens) -> None:
    """Pair the author's <details> and </details> over the whole lesson (a fold may open in one block and close
    in a later one), and note in each HTML token's meta which of its tags pair with nothing: the page shows
    those as text, so that an unclosed <details> cannot fold away the rest of the page."""
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
    for entry in found:
        if entry is not None:
            html, index = entry
            html.meta = {**(html.meta or {}), "unmatched_details": (html.meta or {}).get("unmatched_details",
                                                                                         frozenset()) | {index}}



@dataclass
class Page:
    """What the rendering functions share: the document, and what they have found so far."""

    doc: model.Document
    numbers: dict[int, list[tuple[model.ProseNumber, list[int]]]]  # id(inline token) -> its numbers
    transcript_text: dict[int, str]  # MD line -> the transcript line printed there
    fences: dict[int, tuple[str, str, int]]  # fence line -> (chunk, root or transcript; label; piece index)
    blocks: dict[int, str]  # id(inline token) -> the text of its paragraph or table row
    used_in: dict[str, list[tuple[int, str]]]  # chunk name -> (MD line of <<name>>, label of the piece using it)
    captions: dict[int, int] = field(default_factory=dict)  # token index of a caption's paragraph -> its fence line
    caption_tokens: dict[int, object] = field(default_factory=dict)  # fence line -> its caption's inline token
    ids: set[str] = field(default_factory=set)
    heading_counts: dict[str, int] = field(default_factory=dict)  # a heading's anchor -> how many have it
    headings: list[tuple[int, str, str]] = field(default_factory=list)  # (level, id, text)
    linked: list[tuple[model.ProseNumber, int]] = field(default_factory=list)  # number, transcript line
    # caches that keep the page linear in the size of the lesson: each text is read once
    line_words: dict[int, tuple[set[str], set[str]]] = field(default_factory=dict)  # MD line -> its words, numbers
    context_index: dict[tuple, int] = field(default_factory=dict)  # (token id, span) -> index of its text
    text_index: dict[str, int] = field(default_factory=dict)  # a context's text -> its index in texts
    texts: list[str] = field(default_factory=list)
    context_words: dict[int, tuple[set[str], set[str]]] = field(default_factory=dict)  # index -> words, numbers
    best: dict[tuple, int] = field(default_factory=dict)  # (number, program, contexts) -> the line it links
    formulas: dict[tuple[str, bool], Markup] = field(default_factory=dict)  # (LaTeX, display) -> its MathML
    targets: dict[int, set[str]] = field(default_factory=dict)  # MD line -> the numbers a prose link may land on
    scale: float = 2.0  # the largest multiple of uniform any matrix of the page prints: the heatmaps' full colour
    widths: set[tuple[str, int]] = field(default_factory=set)  # the column boxes used (see columns)
    in_formulas: int = 0
    heatmaps: int = 0
    problems: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- the document's parts


def fence_roles(doc: model.Document) -> dict[int, tuple[str, str, int]]:
    """Each fence that tangle reads: a piece of a chunk or root, or a transcript's part (index 0, 1, ...
    in document order; a transcript in one fence is its own only part)."""
    return {line: (kind, name, index) for line, (kind, name, index, _) in doc.fences().items()}


def caption_paragraphs(doc: model.Document) -> dict[int, int]:
    """token index of each caption's paragraph_open -> the line of the fence it names (tangle.py has checked
    that the caption is that fence's: its anchor is the one weave gives the fence)."""
    lines = {caption.line: fence for fence, caption in doc.captions.items()}
    return {index: lines[token.map[0] + 1] for index, token in enumerate(doc.tokens)
            if token.type == "paragraph_open" and token.map and token.map[0] + 1 in lines}


def uses(doc: model.Document) -> dict[str, list[tuple[int, str]]]:
    found: dict[str, list[tuple[int, str]]] = {}
    for pieces in [*doc.roots.values(), *doc.chunks.values()]:
        for piece in pieces:
            for line, name in model.references([piece]):
                found.setdefault(name, []).append((line, piece.label))
    return {name: sorted(lines) for name, lines in found.items()}


# The anchors are those of the captions in the Markdown (tangle.py's chunk-/file-/output-NAME[-N]), so that
# a link written there (#chunk-...) leads to the same place on GitHub and on the page.


def chunk_id(name: str) -> str:
    return model.chunk_anchor(name)


def root_id(target: str) -> str:
    return model.root_anchor(target)


def transcript_id(target: str, part: int | None = None) -> str:
    """A transcript's anchor: output-TARGET for one fence, output-TARGET-N for its part N."""
    return model.output_anchor(target, part)


def piece_id(kind: str, label: str, index: int) -> str:
    return (model.root_anchor if kind == "root" else model.chunk_anchor)(label, index + 1)


class Flat:
    """The text of an inline token as the prose check reads it (inline.inline_parts), read once: where each
    child starts in it, and where its sentences end. (A class only to keep them together.)"""

    def __init__(self, token):
        parts, _ = inline.inline_parts(token)
        self.text = "".join(parts)
        self.starts = list(itertools.accumulate(map(len, parts), initial=0))
        self.ends = [match.start() for match in inline.SENTENCE_END.finditer(self.text)]

    def sentence(self, offset: int) -> tuple[int, int]:
        """(start, end) of the sentence around offset."""
        after = bisect.bisect_left(self.ends, offset)
        return (self.ends[after - 1] + 1 if after else 0, self.ends[after] if after < len(self.ends) else len(self.text))


def words(text: str) -> tuple[set[str], set[str]]:
    """The pairs of characters of a text (numbers and punctuation left out), and the numbers in it."""
    letters = re.sub(r"[\s0-9.+\-,，。：；、（）()|]+", " ", text)
    pairs = {letters[i : i + 2] for i in range(len(letters) - 1) if " " not in letters[i : i + 2]}
    return pairs, {match[0] for match in inline.NUMBER.finditer(text)}


def best_line(page: Page, number: model.ProseNumber, lines: list[int], contexts: list[tuple[tuple, str]]) -> int:
    """Of the transcript lines that print the number (the first MAX_CANDIDATES of them), the one whose words
    best match its sentence, then its paragraph (or table row): shared pairs of characters, and the other
    numbers there, count; the first line wins a tie. contexts: (cache key, text) of the sentence and the
    paragraph, each read once however many numbers it holds."""
    known = []  # each context as the index of its text among those read (equal paragraphs: one index)
    for key, text in contexts:
        if key not in page.context_index:
            value = text()
            if value not in page.text_index:
                page.text_index[value] = len(page.texts)
                page.texts.append(value)
            page.context_index[key] = page.text_index[value]
        known.append(page.context_index[key])
    memo = (number.text, number.program, *known)
    if memo not in page.best:
        page.best[memo] = max(lines[:MAX_CANDIDATES], key=line_scorer(page, number, known))
    return page.best[memo]


def line_scorer(page: Page, number: model.ProseNumber, contexts: list[int]):
    """The score of a transcript line for a number read in these contexts (indexes of their texts)."""
    scorers = []
    for index in contexts:
        if index not in page.context_words:
            page.context_words[index] = words(page.texts[index])
        context_pairs, context_numbers = page.context_words[index]
        scorers.append((context_pairs, context_numbers - {number.text}))

    def score(line: int) -> tuple:
        if line not in page.line_words:
            page.line_words[line] = words(page.transcript_text[line])
        pairs, printed = page.line_words[line]
        return (*(len(want & pairs) + 2 * len(others & printed) for want, others in scorers), -line)
    return score


def block_contexts(tokens) -> dict[int, str]:
    """The text each inline token is read in: its paragraph, or for a table cell the whole row."""
    found, row = {}, []
    for token in tokens:
        if token.type == "inline":
            found[id(token)] = inline.flatten_inline(token)[0]
            row.append(token)
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close":
            text = " | ".join(found[id(cell)] for cell in row)
            found.update((id(cell), text) for cell in row)
    return found


def numbers_by_token(sources: list[tuple[model.ProseNumber, list[int]]]):
    """The prose numbers of each inline token (by its id), in the order they stand."""
    found: dict[int, list[tuple[model.ProseNumber, list[int]]]] = {}
    for number, lines in sources:
        found.setdefault(id(number.token), []).append((number, lines))
    for entries in found.values():
        entries.sort(key=lambda entry: entry[0].offset)
    return found


# ---------------------------------------------------------------- formulas


def mathml(page: Page, latex: str, display: bool, line: int) -> Markup:
    """The formula as MathML, rebuilt through the MathML allow-list (latex2mathml copies \\text{...} raw and
    turns \\href into an href): no link, no style, its text escaped."""
    if (latex, display) in page.formulas:  # a formula written many times is converted once
        return page.formulas[latex, display]
    try:
        converted = latex_to_mathml(latex.strip(), display="block" if display else "inline")
    except Exception as error:  # latex2mathml raises many kinds (a RecursionError too) for what it cannot read
        page.problems.append(f"{page.doc.where(line)}: error: cannot convert the formula {shorten(latex.strip())} "
                             f"to MathML ({type(error).__name__}: {shorten(str(error))}); check its braces "
                             "and commands")
        return escape(latex)
    shown = tag("span", {"class": "formula display" if display else "formula"},
                sanitized(NAMED_SPACE.sub(named_space, converted), MATH_HTML))
    page.formulas[latex, display] = shown
    return shown


# MathML 3's named spaces (\\! is width="negativethinmathspace"), which MathML Core, and so Chromium, does not read
NAMED_SPACE = re.compile(r'"(negative)?(veryverythin|verythin|thin|medium|thick|verythick|veryverythick)mathspace"')
SPACE_EIGHTEENTHS = {"veryverythin": 1, "verythin": 2, "thin": 3, "medium": 4, "thick": 5, "verythick": 6,
                     "veryverythick": 7}


def named_space(match: re.Match) -> str:
    return f'"{"-" if match[1] else ""}{SPACE_EIGHTEENTHS[match[2]] / 18:.4f}em"'


def shorten(text: str, width: int = 60) -> str:
    """A piece of the input as a message quotes it: repr, at most about width characters."""
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def code_spans(raw: str) -> list[tuple[int, int]]:
    """(start, end) of each code span of an inline token's source, as CommonMark pairs them: a run of backticks
    opens one, the next run of exactly as many closes it (a run with none after it is text). One pass over
    the runs, each run's partner found from the end (a lazy regex searched from every opener: quadratic)."""
    runs = [(match.start(), match.end()) for match in BACKTICKS.finditer(raw)]
    partner, latest = [None] * len(runs), {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        partner[index] = latest.get(length)
        latest[length] = index
    spans, index = [], 0
    while index < len(runs):
        closing = partner[index]
        if closing is None:
            index += 1
            continue
        spans.append((runs[index][0], runs[closing][1]))
        index = closing + 1
    return spans


def raw_formulas(raw: str) -> list[tuple[str, bool]]:
    """The $...$ and $$...$$ formulas of an inline token's source, in order (code spans skipped, and
    GitHub's $`...`$ with its dollars: else the text between two of them, as in $`a`$；$`b`$, reads as $...$)."""
    pieces, position = [], 0
    for start, end in code_spans(raw):
        if start > 0 and end < len(raw) and raw[start - 1] == raw[end] == "$" and start - 1 >= position:
            start, end = start - 1, end + 1  # $`...`$: GitHub's formula, its dollars with it
        pieces += [raw[position:start], " " * (end - start)]
        position = end
    raw = "".join(pieces) + raw[position:]
    return [(match["display"] or match["inline"], match["display"] is not None) for match in INLINE_MATH.finditer(raw)]


# ---------------------------------------------------------------- inline text


def render_inline(page: Page, token, name_link: str | None = None) -> Markup:
    """A paragraph's or cell's text: numbers linked, formulas as MathML, the rest rebuilt from markdown-it's
    tokens. name_link: make the first **bold** a link to this anchor (a caption's name)."""
    children = token.children or []
    line = token.map[0] + 1 if token.map else 0
    flat = Flat(token)  # where each child starts in the text the prose check reads, to place its numbers
    numbers = page.numbers.get(id(token), [])
    formulas = raw_formulas(token.content)
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
            out.append(token_html(child))
    if used != len(formulas):
        page.problems.append(f"{page.doc.where(line)}: error: cannot find the formulas of this paragraph in its "
                             "text (emphasis or a link inside $...$?); write them as $`...`$")
    text = join(out)
    if name_link and bold is None:  # no bold name: the whole caption is the link
        text = tag("a", {"class": "name", "href": f"#{name_link}"}, text)
    return text


def token_html(token) -> Markup:
    """A markdown-it token other than a fence or the text of a paragraph, rebuilt from the page's vocabulary:
    its tag with the attributes that Markdown gives it (a link's href, a list's start, a cell's alignment)."""
    kind = token.type
    if kind in ("html_block", "html_inline"):
        return sanitized(token.content, PROSE_HTML, (token.meta or {}).get("unmatched_details", frozenset()))
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


def number_html(page: Page, number: model.ProseNumber, lines: list[int], contexts) -> Markup:
    if number.book:
        return tag("span", {"class": "num book", "title": f"原书的数字（列在 {prose.BOOK_FIGURES} 里），"
                                                           "不是本仓库的程序打印的"}, number.text)
    if not lines:
        why = (f"没有核对上：{number.program} 的实跑输出里没有它" if number.program
               else f"没有核对上：{page.doc.path.name} 里没有实跑输出")
        return tag("span", {"class": "num unverified", "title": why}, number.text)
    line = best_line(page, number, lines, contexts)
    page.linked.append((number, line))
    title = (f"出自 {number.program} 的实跑输出（{page.doc.path.name} 第 {line} 行）："
             f"{page.transcript_text[line].strip()}")
    return tag("a", {"class": "num", "href": f"#{number_anchor(line, number.text)}", "title": title}, number.text)


def number_anchor(line: int, text: str) -> str:
    """The anchor of a number printed on a transcript line: L<line>-<number> (its first time on the line)."""
    return f"L{line}-{text}"


def link_targets(sources) -> dict[int, set[str]]:
    """MD line -> the numbers that a prose number may link to there: each line best_line may choose."""
    targets: dict[int, set[str]] = {}
    for number, lines in sources:
        for line in lines[:MAX_CANDIDATES]:
            targets.setdefault(line, set()).add(number.text)
    return targets


def transcript_line(page: Page, line: int, text: str) -> Markup:
    """One output line, anchored L<line>; each number a prose link may land on in a box of its own, anchored
    too, so that the link highlights the number itself."""
    wanted, out, position = set(page.targets.get(line, ())), [], 0
    for match in inline.NUMBER.finditer(text) if wanted else ():
        if match[0] in wanted:
            wanted.discard(match[0])
            out += [columns(text[position : match.start()], page.widths),
                    tag("span", {"class": "n", "id": number_anchor(line, match[0])}, match[0])]
            position = match.end()
    out += [columns(text[position:], page.widths), "\n"]
    return tag("span", {"class": "l", "id": f"L{line}"}, *out)


# ---------------------------------------------------------------- code and transcripts


def highlighted_lines(code: list[str], language: str, widths: set[tuple[str, int]]) -> list[Markup]:
    """Each line of code as HTML: Pygments' token classes when it is installed, else escaped text; wide
    characters in their column boxes."""
    lexer = None
    if get_lexer_by_name is not None and language:
        try:
            lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
        except ClassNotFound:
            lexer = None
    if lexer is None:
        return [columns(line, widths) for line in code]
    # A run of blank lines goes to the lexer as one empty line (some lexers, Python's and C's among them,
    # take time quadratic in a long run of them); blank lines are shown as they are, without a class.
    kept = [number for number, line in enumerate(code) if line.strip() or not number or code[number - 1].strip()]
    lines = [[]]
    for kind, value in lexer.get_tokens("\n".join(code[number] if code[number].strip() else "" for number in kept)):
        while kind not in STANDARD_TYPES:
            kind = kind.parent
        css = STANDARD_TYPES[kind]
        for number, part in enumerate(value.split("\n")):
            if number:
                lines.append([])
            if part:
                lines[-1].append(tag("span", {"class": css}, columns(part, widths)) if css else columns(part, widths))
    lexed = dict(zip(kept, (join(parts) for parts in lines)))
    return [lexed.get(number, Markup("")) if line.strip() else columns(line, widths) for number, line in enumerate(code)]


def code_html(page: Page, piece: model.Piece, language: str) -> Markup:
    shown = highlighted_lines(piece.lines, language, page.widths)
    out = []
    for offset, (code, text) in enumerate(zip(piece.lines, shown, strict=True)):
        line = piece.first_line + offset
        match = model.REFERENCE.match(code)
        if match:
            name = " ".join(match[2].split())
            where = page.doc.chunks[name][0].fence_line
            text = join([match[1], tag("a", {"class": "ref", "href": f"#{chunk_id(name)}",
                                              "title": f"定义在 {page.doc.path.name}:{where}"}, f"<<{match[2]}>>")])
        out.append(tag("span", {"class": "l", "id": f"L{line}"}, text, "\n"))
    return tag("pre", {"class": "code"}, tag("code", None, *out))


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
    return render_inline(page, SimpleNamespace(children=children, content=token.content, map=token.map),
                         name_link=anchor)


def sequence_links(count: int, index: int, anchor_of) -> list[Markup]:
    """For one of several fences: which it is, and links to the one before and after."""
    if count < 2:
        return []
    links = [tag("span", {"class": "part"}, f"第 {index + 1} 段，共 {count} 段")]
    if index:
        links.append(tag("a", {"href": f"#{anchor_of(index - 1)}"}, "← 上一段"))
    if index + 1 < count:
        links.append(tag("a", {"href": f"#{anchor_of(index + 1)}"}, "下一段 →"))
    return links


def chunk_html(page: Page, token, kind: str, label: str, index: int) -> Markup:
    doc = page.doc
    pieces = (doc.chunks if kind == "chunk" else doc.roots)[label]
    piece = pieces[index]
    anchor = piece_id(kind, label, index)
    page.ids.add(anchor)
    language = (token.info.split("{")[0].split() or [""])[0]
    written = caption_html(page, piece.fence_line, anchor)
    if written is None:
        name = f"<<{label}>>" if kind == "chunk" else label
        caption = [tag("a", {"class": "name", "href": f"#{anchor}"}, name), "+≡" if index else "≡"]
    else:
        caption = [tag("span", {"class": "written"}, written)]
    caption += sequence_links(len(pieces), index, lambda i: piece_id(kind, label, i))
    where = f"{doc.path.name}:{piece.fence_line}（在源文件里的位置）"  # for the writer: in the tooltip, not in the text
    foot = ""
    if kind == "chunk" and index == len(pieces) - 1:
        links = [tag("a", {"href": f"#L{line}"}, user) for line, user in page.used_in.get(label, [])]
        foot = tag("p", {"class": "used"}, "用在 → ", join(links, "，"))
    elif kind == "root" and index == len(pieces) - 1 and not doc.captions:
        # a captioned document lists the chunks of each piece in its caption already
        foot = tag("div", {"class": "parts"}, f"依次拼成 {label}：", parts_list(page, pieces))
    return Markup(tag("figure", {"class": f"chunk {kind}", "id": anchor}, tag("figcaption", {"title": where},
                                                                            join(caption, " ")),
                      code_html(page, piece, language), foot) + "\n")


def parts_list(page: Page, pieces: list[model.Piece]) -> Markup:
    """The chunks a root includes, in the order they are tangled, nested; each chunk listed once, depth first
    without recursion (chunks nest up to model.MAX_DEPTH deep)."""
    out, stack, seen = [], [iter(model.references(pieces))], set()
    while stack:
        line, name = next(stack[-1], (None, None))
        if name is None:
            stack.pop()
            out.append(Markup("</ol></li>") if stack else Markup(""))
            continue
        if name in seen or name not in page.doc.chunks:
            continue
        seen.add(name)
        out.append(Markup(start_tag("li") + tag("a", {"href": f"#{chunk_id(name)}"}, f"<<{name}>>") + " "
                          + tag("a", {"class": "def", "href": f"#L{line}"}, f"（第 {line} 行）") + start_tag("ol")))
        stack.append(iter(model.references(page.doc.chunks[name])))
    return tag("ol", None, join(out))


def parse_matrices(lines: list[str]) -> list[tuple[int, int, list[str], list[tuple[str, list[float], list[str]]]]]:
    """Attention matrices printed in a transcript: (first line index, end index, column labels, rows of
    (row label, weights, weights as printed)). A matrix is a header of column numbers followed by rows
    with one printed number per column."""
    found = []
    index = 0
    while index < len(lines):
        if not COLUMN_HEADER.match(lines[index]):
            index += 1
            continue
        columns = lines[index].split()
        rows, end = [], index + 1
        while end < len(lines):
            match = TRANSCRIPT_MATRIX_ROW.match(lines[end])
            if not match or len(match[3].split()) != len(columns):
                break
            printed = match[3].split()
            rows.append((f"{match[1]} {match[2]}", [float(value) for value in printed], printed))
            end += 1
        if rows:
            end = unicode_block_end(lines, end)
            found.append((index, end, columns, rows))
        index = max(end, index + 1)
    return found


def unicode_block_end(lines: list[str], end: int) -> int:
    """A matrix drawn in characters often follows the numbers (up to its legend, which is long and
    comes after the group): keep them together."""
    for last in range(end, min(end + 16, len(lines))):
        text = lines[last]
        if text.startswith(LEGEND):
            return last
        if (text and not text.startswith((" ", "输出", "输入"))) or TRANSCRIPT_MATRIX_ROW.match(text):
            break  # not a matrix drawn in characters, or the numbers of another matrix
    return end


def heatmap_svg(columns: list[str], rows, caption: str, scale: float) -> Markup:
    cell, left, top = 20, 44, 40
    width, height = left + cell * len(columns) + 8, top + cell * len(rows) + 8
    parts = [tag("title", None, caption),
             tag("text", {"class": "axis", "x": left + cell * len(columns) / 2, "y": 12, "text-anchor": "middle"},
                 "输入 →"),
             tag("text", {"class": "axis vertical", "x": 12, "y": top + cell * len(rows) / 2, "text-anchor": "middle"},
                 "输出 →")]
    for j, label in enumerate(columns):
        parts.append(tag("text", {"x": left + cell * j + cell / 2, "y": top - 6, "text-anchor": "middle"}, label))
    for i, (label, weights, printed) in enumerate(rows):
        y = top + cell * i
        parts.append(tag("text", {"x": left - 6, "y": y + cell / 2 + 4, "text-anchor": "end"}, label.split()[-1]))
        for j, (weight, shown) in enumerate(zip(weights, printed, strict=True)):
            times = weight * len(columns)  # a weight's multiple of uniform (1/T)
            parts.append(tag("rect", {"class": "cell", "x": left + cell * j, "y": y, "width": cell, "height": cell,
                                      "fill": colour(times, scale), "data-multiple": f"{times:.4g}"},
                             tag("title", None, f"{label}，输入 {columns[j]}：{shown}（均匀的 {times:.2g} 倍）")))
    return tag("svg", {"class": "heatmap", "xmlns": "http://www.w3.org/2000/svg", "viewBox": f"0 0 {width} {height}",
                       "width": width, "height": height, "role": "img", "data-rows": len(rows),
                       "data-columns": len(columns)}, *parts)


MAX_MULTIPLE = 1e6  # the colour scale ends here, whatever a transcript prints
NEUTRAL, ABOVE, BELOW = (246, 246, 246), (165, 15, 21), (33, 102, 172)  # 1×: grey; above: red; below: blue


def colour(times: float, scale: float) -> str:
    """One colour scale for every heatmap of the page, by a weight's multiple of uniform: 1× neutral grey,
    above it red, below it blue, both by the logarithm, full colour at the page's largest multiple (scale)
    and at its inverse, so that 2× and ½× are as strong, and two pictures compare."""
    span = math.log(max(scale, 1.01))
    position = max(-1.0, min(1.0, math.log(times) / span)) if times > 0 else -1.0
    end = ABOVE if position > 0 else BELOW
    return "#" + "".join(f"{round(a + (b - a) * abs(position)):02x}" for a, b in zip(NEUTRAL, end, strict=True))


def legend_svg(scale: float) -> Markup:
    """The scale as a row of swatches, each labelled with its multiple of uniform."""
    marks = [1 / scale] + [m for m in (1 / 4, 1 / 2, 1, 2, 4) if 1 / scale < m < scale] + [scale]
    names = {1 / 4: "¼", 1 / 2: "½"}
    cell = 34
    parts = []
    for k, times in enumerate(marks):
        label = names.get(times) or (f"{times:.2g}" if times >= 1 else f"1/{1 / times:.2g}")
        parts.append(tag("rect", {"x": cell * k, "y": 0, "width": cell, "height": 12, "fill": colour(times, scale),
                                  "data-multiple": f"{times:.4g}"}))
        parts.append(tag("text", {"x": cell * k + cell / 2, "y": 26, "text-anchor": "middle"}, f"{label}×"))
    return tag("svg", {"class": "legend", "xmlns": "http://www.w3.org/2000/svg", "viewBox": f"0 0 {cell * len(marks)} 30",
                       "width": cell * len(marks), "height": 30, "role": "img",
                       "aria-label": "图例：权重是均匀的几倍"}, *parts)


def largest_multiple(doc: model.Document) -> float:
    """The largest multiple of uniform printed in any matrix of the page's transcripts (at least 2, at most
    MAX_MULTIPLE: a weight printed with hundreds of digits is no reason for a scale without end)."""
    largest = 2.0
    for transcript in doc.transcripts.values():
        for piece in transcript.pieces():
            for _, _, names, rows in parse_matrices(model.output_lines(piece.content)):
                largest = max([largest] + [weight * len(names) for _, weights, _ in rows for weight in weights
                                           if math.isfinite(weight * len(names))])
    return min(largest, MAX_MULTIPLE)


def transcript_html(page: Page, target: str, index: int) -> Markup:
    """One fence of a transcript (the whole output, or its part index + 1), where it stands in the document:
    each output line anchored by its own line of MD, each printed matrix beside its heatmap."""
    transcript = page.doc.transcripts[target]
    pieces = transcript.pieces()
    piece = pieces[index]
    lines = model.output_lines(piece.content)
    anchor = transcript_id(target, piece.part)
    page.ids.add(anchor)

    def pre(first: int, end: int) -> Markup:
        spans = [transcript_line(page, piece.first_line + k, lines[k]) for k in range(first, end)]
        return tag("pre", {"class": "output"}, *spans) if spans else Markup("")

    out, position = [], 0
    for start, end, columns, rows in parse_matrices(lines):
        out.append(pre(position, start))
        caption = (f"{target} 的实跑输出里的矩阵（{page.doc.where(piece.first_line + start)} 起），"
                   f"{len(rows)}×{len(columns)}，颜色是权重为均匀的几倍")
        page.heatmaps += 1
        out.append(tag("div", {"class": "matrix"}, pre(start, end), tag(
            "figure", {"class": "heatmap"}, heatmap_svg(columns, rows, caption, page.scale),
            tag("figcaption", None, "用这里印出来的数字画的热图：行是输出第几位，列是输入第几位。颜色是权重为均匀（1/T）"
                                    "的几倍：1 倍灰，高于均匀越红，低于均匀越蓝，全页的热图用同一把尺子；"
                                    "指着一格看它的数值。", legend_svg(page.scale)))))
        position = end
    out.append(pre(position, len(lines)))
    written = caption_html(page, piece.fence_line, anchor)
    if written is None:
        caption = [Markup(tag("a", {"class": "name", "href": f"#{anchor}"}, "实跑输出") + "："), tag("code", None, target)]
    else:
        caption = [tag("span", {"class": "written"}, written)]
    around = sequence_links(len(pieces), index, lambda i: transcript_id(target, pieces[i].part))
    caption += around[1:] if written else around  # a written caption says 第 N 段 itself
    how = (f"{page.doc.path.name}:{piece.fence_line}：程序的标准输出，tangle.py check 重新运行程序，"
           + ("和各段连起来" if len(pieces) > 1 else "和这一段") + "逐字节比对")  # the tooltip: the tool's words
    return Markup(tag("figure", {"class": "transcript", "id": anchor}, tag("figcaption", {"title": how},
                                                                           join(caption, " ")),
                      tag("div", {"class": "printed"}, *out)) + "\n")


# ---------------------------------------------------------------- the page


def heading_id(page: Page, text: str) -> str:
    """The heading's text, spaces as -, unless that looks like an anchor of the page's own; a second heading
    of the same text gets -2, and so on (counted, so that a thousand equal headings stay linear)."""
    base = re.sub(r"\s+", "-", text.strip()) or "section"
    if re.fullmatch(r"L\d+|(?:chunk|file|output)-.*|contents|verified", base):
        base = "section-" + base
    anchor = base
    while anchor in page.ids:
        page.heading_counts[base] = page.heading_counts.get(base, 1) + 1
        anchor = f"{base}-{page.heading_counts[base]}"
    page.ids.add(anchor)
    return anchor


def body_html(page: Page) -> Markup:
    tokens = page.doc.tokens
    out = []
    skip_until, in_section = -1, False
    for index, token in enumerate(tokens):
        if index <= skip_until:
            continue
        if index in page.captions:  # drawn as its fence's caption, there
            skip_until = index + 2
            continue
        if token.type == "paragraph_open" and index + 1 < len(tokens) and tokens[index + 1].type == "inline":
            match = DISPLAY_MATH.fullmatch(tokens[index + 1].content)
            if match:
                page.in_formulas += len(page.numbers.get(id(tokens[index + 1]), []))
                out.append(tag("div", {"class": "math"}, mathml(page, match[1], True, token.map[0] + 1)))
                out.append("\n")
                skip_until = index + 2
                continue
        if token.type == "heading_open":
            title = tokens[index + 1]
            text = "".join(child.content for child in title.children or [] if child.type in ("text", "code_inline"))
            anchor = heading_id(page, text)
            page.headings.append((int(token.tag[1]), anchor, text))
            if token.tag == "h2":  # each ## section in a <section>: the contents mark the ones in view
                out.append(Markup(("</section>\n" if in_section else "") + "<section>\n"))
                in_section = True
            out.append(start_tag(token.tag, {"id": anchor}))
        elif token.type == "heading_close" and token.tag == "h2":
            out.append(Markup(token_html(token) + tag("a", {"class": "back", "href": "#contents"}, "↑ 目录") + "\n"))
        elif token.type == "inline":
            out.append(render_inline(page, token))
        elif token.type == "fence":
            out.append(fence_html(page, token))
        else:
            out.append(token_html(token))
    if in_section:
        out.append(Markup("</section>\n"))
    return join(out)


def fence_html(page: Page, token) -> Markup:
    line = token.map[0] + 1
    role = page.fences.get(line)
    if role and role[0] == "transcript":
        return transcript_html(page, role[1], role[2])
    if role:
        return chunk_html(page, token, *role)
    language = (token.info.split() or [""])[0]
    if language == "math":
        return Markup(tag("div", {"class": "math"}, mathml(page, token.content, True, line)) + "\n")
    shown = highlighted_lines(token.content.split("\n")[:-1], language, page.widths)
    return Markup(tag("pre", {"class": "code illustration"}, tag("code", None, *(join([s, "\n"]) for s in shown)))
                  + "\n")


def contents_html(page: Page) -> Markup:
    items, open_sub = [], False
    for level, anchor, text in page.headings:
        if level == 1:
            continue
        link = tag("a", {"href": f"#{anchor}"}, text)
        if level == 2:
            items.append(Markup(("</ol></li>" if open_sub else "</li>" if items else "") + start_tag("li") + link))
            open_sub = False
        else:
            items.append(Markup(("" if open_sub else "<ol>") + tag("li", None, link)))
            open_sub = True
    if items:
        items.append(Markup("</ol></li>" if open_sub else "</li>"))
    return tag("nav", {"id": "contents"}, tag("h2", None, "目录"), tag("ol", None, *items))


def summary_html(page: Page, sources) -> Markup:
    doc = page.doc
    counted = [number for number, _ in sources]
    book = sum(number.book for number in counted)
    failed = sum(1 for number, lines in sources if not number.book and not lines)
    by_program = {}
    for number, _ in page.linked:
        by_program[number.program] = by_program.get(number.program, 0) + 1
    verified = len(counted) - book - failed
    first = {target: transcript_id(target, transcript.pieces()[0].part)  # its first part
             for target, transcript in doc.transcripts.items()}
    parts = join([join([f"{count} 个对上了 ", tag("a", {"href": f"#{first[program]}"}, tag("code", None, program),
                                                   " 的实跑输出")]) for program, count in by_program.items()], "，")
    text = [f"正文里要核对的数字有 {len(counted)} 个：", tag("strong", None, f"{verified} 个核对过"),
            "（", parts, f"），{book} 个", tag("span", {"class": "num book"}, "标成原书的"),
            "（列在 ", tag("code", None, prose.BOOK_FIGURES), " 里）"]
    if page.in_formulas:
        text.append(f"；其中 {page.in_formulas} 个写在公式里，没有链接")
    if failed:
        text += ["；", tag("span", {"class": "num unverified"}, f"{failed} 个没有对上"), "（", tag("code", None, "make check"),
                 " 会报错）"]
    text += ["。点正文里带下划线的数字，跳到印出它的那一行实跑输出。一位数和后面跟着「位」「维」「轮」这类量词的数字不用核对，"
             "规则见 README。本页由 ", tag("code", None, "weave.py"), " 从 ", tag("code", None, doc.path.name), " 生成。"]
    return tag("p", {"id": "verified"}, *text)


def weave(doc: model.Document) -> tuple[str, Page, list[str]]:
    """The page's HTML, what went into it, and the prose check's error lines (as warnings)."""
    errors, sources = prose.prose_number_sources(doc)
    transcript_text = {}
    for transcript in doc.transcripts.values():
        for piece in transcript.pieces():
            for offset, text in enumerate(model.output_lines(piece.content)):
                transcript_text[piece.first_line + offset] = text
    captions = caption_paragraphs(doc)
    mark_unmatched_details(doc.tokens)
    page = Page(doc=doc, numbers=numbers_by_token(sources), transcript_text=transcript_text,
                fences=fence_roles(doc), blocks=block_contexts(doc.tokens), used_in=uses(doc), captions=captions,
                caption_tokens={line: doc.tokens[index + 1] for index, line in captions.items()},
                targets=link_targets(sources), scale=largest_multiple(doc))
    body = body_html(page)
    if page.problems:
        raise model.UserError(*page.problems)
    title = next((text for level, _, text in page.headings if level == 1), doc.path.stem)
    first_h1_end = body.find("</h1>")
    top = Markup(summary_html(page, sources) + contents_html(page))
    if first_h1_end >= 0:  # cut between two Markups at a tag's end: both halves are Markup still
        body = join([Markup(body[: first_h1_end + 5]), "\n", top, Markup(body[first_h1_end + 5 :])])
    else:
        body = join([top, body])
    head = join([tag("meta", {"charset": "utf-8"}), "\n",
                 tag("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}), "\n",
                 tag("meta", {"name": "generator", "content": GENERATOR}), "\n",
                 tag("title", None, title), "\n", tag("style", None, Markup(stylesheet(page))), "\n"])
    page_html = join([Markup("<!DOCTYPE html>\n"), tag("html", {"lang": "zh-CN"}, "\n", tag("head", None, "\n", head),
                      "\n", tag("body", None, "\n", tag("main", None, "\n", body), "\n"), "\n"), "\n"])
    return page_html, page, errors


MATH_FONTS = ('"STIX Two Math", "Latin Modern Math", "Cambria Math", "DejaVu Math TeX Gyre", "Noto Sans Math", '
              'math')  # fonts with an OpenType MATH table, which Chromium needs to stretch brackets and roots
COLOURS = {  # light, dark (prefers-color-scheme)
    "text": ("#1f2328", "#e6edf3"), "muted": ("#59636e", "#9198a1"), "line": ("#d1d9e0", "#3d444d"),
    "bg": ("#ffffff", "#0d1117"), "code-bg": ("#f6f8fa", "#161b22"), "caption-bg": ("#eef2f6", "#1c2128"),
    "mark": ("#ffd84d", "#8a6d00"), "mark-line": ("#fff6cc", "#2e2a12"), "link": ("#0550ae", "#4493f8"),
    "book-bg": ("#fbefe3", "#3d2a14"), "bad-bg": ("#ffe3e3", "#4a1c1c"), "ok-bg": ("#eef6ee", "#12261a"),
    "ok-line": ("#b7dbb7", "#2f5a3a"), "shadow": ("rgba(0,0,0,.18)", "rgba(0,0,0,.6)"),
}


def stylesheet(page: Page) -> str:
    """The page's CSS: weave.py's own text (fonts, colours, the column boxes and the contents' scroll marks of
    this page), nothing from the lesson."""
    light = "; ".join(f"--{name}: {pair[0]}" for name, pair in COLOURS.items())
    dark = "; ".join(f"--{name}: {pair[1]}" for name, pair in COLOURS.items())
    css = f"""
:root {{ {light}; color-scheme: light dark; }}
@media (prefers-color-scheme: dark) {{ :root {{ {dark}; }} }}
* {{ box-sizing: border-box; }}
html {{ scroll-padding-top: 4rem; }}
body {{ margin: 0; color: var(--text); background: var(--bg); font: 16px/1.75 {CJK_FONTS}; overflow-wrap: break-word; }}
main {{ max-width: 60rem; margin: 0 auto; padding: 1.5rem 1.25rem 6rem; }}
h1 {{ font-size: 1.9rem; line-height: 1.3; }}
h2 {{ font-size: 1.45rem; margin-top: 2.6rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; }}
h3 {{ font-size: 1.15rem; margin-top: 1.8rem; }}
a {{ color: var(--link); }}
a.back {{ display: block; text-align: right; font-size: .8rem; color: var(--muted); margin-top: -.4rem; }}
code, pre, kbd {{ font-family: {MONO_FONTS}; }}
:not(pre) > code {{ background: var(--code-bg); padding: .1em .3em; border-radius: 4px; font-size: .9em;
  white-space: nowrap; }}  /* (1, 0, 1) or x[..., 0, :] is not broken in the middle on a narrow screen */
/* a box that scrolls sideways shows a shadow at the edge where more is hidden */
pre {{ font-size: 13px; line-height: 1.5; overflow-x: auto; max-width: 100%; margin: 0; padding: .6rem .8rem;
  background: linear-gradient(to right, var(--code-bg) 30%, transparent) left / 2rem 100% no-repeat local,
    linear-gradient(to left, var(--code-bg) 30%, transparent) right / 2rem 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, var(--shadow), transparent) left / .7rem 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, var(--shadow), transparent) right / .7rem 100% no-repeat scroll,
    var(--code-bg); }}
pre .l {{ display: block; min-height: 1.5em; min-width: max-content; }}
/* a column is 1ch of the <pre>'s font, fixed there (a registered property), so that a box in another font keeps it */
@property --column {{ syntax: "<length>"; inherits: true; initial-value: 0px; }}
pre {{ --column: 1ch; }}
pre .w, pre .a {{ display: inline-block; white-space: pre; vertical-align: bottom; }}
pre .a {{ font-family: {LATIN_MONO_FONTS}; overflow: hidden; }}
{column_rules(page.widths)}pre .l:target, pre .l:has(.n:target), .chunk:target > figcaption {{ background: var(--mark-line); }}
pre .n:target {{ background: var(--mark); outline: 2px solid var(--mark); border-radius: 2px; }}
table {{ border-collapse: collapse; margin: 1rem 0; display: block; overflow-x: auto; max-width: 100%; }}
th, td {{ border: 1px solid var(--line); padding: .3rem .7rem; }}
th {{ background: var(--code-bg); white-space: nowrap; }}
.align-left {{ text-align: left; }} .align-center {{ text-align: center; }} .align-right {{ text-align: right; }}
blockquote {{ margin: 1rem 0; padding: 0 1rem; color: var(--muted); border-left: .25rem solid var(--line); }}
details {{ border: 1px solid var(--line); border-radius: 6px; padding: .4rem .9rem; margin: .8rem 0; }}
summary {{ cursor: pointer; font-weight: 600; }}
figure {{ margin: 1.2rem 0; min-width: 0; }}
figure.chunk, figure.transcript {{ border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }}
figure.chunk > figcaption, figure.transcript > figcaption {{ font-size: .85rem; line-height: 1.5; padding: .3rem .8rem;
  background: var(--caption-bg); border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }}
figcaption .name {{ font-weight: 600; text-decoration: none; }}
figcaption .part {{ color: var(--muted); margin-left: .6rem; }}
figcaption a:not(.name) {{ margin-left: .6rem; }}
.chunk .used, .chunk .parts {{ font-size: .85rem; margin: 0; padding: .3rem .8rem; border-top: 1px solid var(--line); }}
.chunk .parts ol {{ margin: .2rem 0; padding-left: 1.6rem; columns: 2; }}
.def {{ color: var(--muted); font-size: .85em; text-decoration: none; }}
a.ref {{ font-weight: 600; }}
a.image {{ font-style: italic; }}
.transcript .printed {{ padding: .6rem 0; background: var(--code-bg); }}
.transcript pre {{ padding: 0 .8rem; }}
.matrix {{ display: flex; flex-wrap: wrap; align-items: flex-start; background: var(--code-bg); }}
.matrix > pre {{ flex: 0 1 auto; min-width: 0; }}
figure.heatmap {{ margin: .6rem 1rem; max-width: 17rem; font-size: .8rem; color: var(--muted); line-height: 1.5; }}
figure.heatmap svg {{ display: block; max-width: 100%; height: auto; font: 11px {CJK_FONTS}; fill: var(--text); }}
figure.heatmap svg.legend {{ margin-top: .4rem; }}
figure.heatmap svg .axis {{ font-size: 12px; font-weight: 600; }}
figure.heatmap svg .vertical {{ writing-mode: vertical-rl; }}
figure.heatmap rect.cell {{ stroke: var(--bg); stroke-width: 1; }}
figure.heatmap rect.cell:hover {{ stroke: #d4a400; stroke-width: 2; }}
.math {{ overflow-x: auto; margin: 1rem 0; }}
math {{ font-family: {MATH_FONTS}; font-size: 1.15em; }}
math[display="block"] {{ display: block math; }}
a.num {{ text-decoration: underline dotted; text-underline-offset: .2em; }}
.num.book {{ background: var(--book-bg); border-bottom: 1px dashed #b35900; }}
.num.unverified {{ background: var(--bad-bg); }}
#verified {{ background: var(--ok-bg); border: 1px solid var(--ok-line); border-radius: 6px; padding: .6rem .9rem; }}
#contents {{ border: 1px solid var(--line); border-radius: 6px; padding: .2rem 1rem; margin: 1rem 0 2rem; }}
#contents h2 {{ font-size: 1.1rem; margin: .6rem 0; border: 0; }}
#contents ol {{ margin: 0; padding-left: 1rem; list-style: none; }}
#contents > ol {{ padding-left: 0; }}
#contents a {{ display: block; padding: 0 .3rem; border-radius: 4px; text-decoration: none; }}
/* docstrings and comments: CJK fonts have no italic, and a synthetic slant is hard to read */
pre.code .sd, pre.code .c1, pre.code .ch, pre.code .cm, pre.code .cs {{ font-style: normal; }}
@media (min-width: 80rem) {{  /* the contents beside the text, marking the sections in view */
  #contents {{ position: fixed; top: 0; left: 0; width: 18rem; height: 100vh; overflow-y: auto; margin: 0; border: 0;
    border-right: 1px solid var(--line); border-radius: 0; padding: 1rem; font-size: .88rem; background: var(--bg); }}
  main {{ margin-left: max(19rem, calc(50vw - 30rem)); }}
  a.back {{ display: none; }}
}}
@media (max-width: 40rem) {{
  main {{ padding: 1rem .6rem 4rem; }}
  .chunk .parts ol {{ columns: 1; }}
  .matrix > figure.heatmap {{ order: -1; }}  /* the picture first; the characters scroll in their box below */
  figure.heatmap {{ margin: .6rem; }}
}}
@media print {{
  #contents, a.back {{ display: none; }}
  main {{ max-width: none; margin: 0; padding: 0; }}
  body {{ font-size: 10.5pt; background: none; }}
  pre {{ font-size: 7.5pt; overflow: visible; white-space: pre-wrap; background: none; }}
  figure, pre .l, tr {{ break-inside: avoid; }}
  h2, h3 {{ break-after: avoid; }}
  a {{ color: inherit; text-decoration: none; }}
}}
{scroll_marks(page)}"""
    if get_lexer_by_name is not None:
        css += HtmlFormatter(style="default").get_style_defs("pre.code") + "\n"
        dark_code = HtmlFormatter(style="monokai").get_style_defs("pre.code")
        css += f"@media (prefers-color-scheme: dark) {{\n{dark_code}\npre.code {{ background-color: var(--code-bg); }}\n}}\n"
        css += "pre.code .sd, pre.code .c1, pre.code .ch, pre.code .cm, pre.code .cs { font-style: normal; }\n"
    return css.lstrip("\n")


def scroll_marks(page: Page) -> str:
    """CSS only, no script: each ## section is a view timeline, and its entry in the contents is marked while
    any of it is on the screen (Chromium 116 and later; elsewhere the contents simply stay unmarked)."""
    count = sum(level == 2 for level, _, _ in page.headings)
    if not count:
        return ""
    names = [f"--section-{k}" for k in range(1, count + 1)]
    rules = [f"body {{ timeline-scope: {', '.join(names)}; }}",
             "@keyframes in-view { from, to { background: var(--mark-line); font-weight: 600; } }"]
    for k, name in enumerate(names, 1):
        rules.append(f"main > section:nth-of-type({k}) {{ view-timeline-name: {name}; }} "
                     f"#contents > ol > li:nth-child({k}) > a {{ animation: in-view linear none; "
                     f"animation-timeline: {name}; }}")
    return "\n".join(rules) + "\n"


# ---------------------------------------------------------------- command line


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="weave.py", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("md", nargs="?", type=Path, default=Path("attention.md"),
                     help="the Markdown lesson (default: ./attention.md)")
    top.add_argument("-o", "--output", type=Path, help="the page to write (default: build/<MD's name>.html beside "
                     "MD; - writes it to stdout). An existing file is replaced only if weave.py wrote it")
    return top


def is_page(data: bytes) -> bool:
    """Whether a file's bytes are a page weave.py wrote (the generator mark; pages from before it had one say
    本页由 weave.py 生成 in their summary)."""
    mark = str(tag("meta", {"name": "generator", "content": GENERATOR})).encode()
    return data.startswith(b"<!DOCTYPE html>") and (mark in data[:4096] or "本页由 <code>weave.py</code>".encode() in data)


def write_page(doc: model.Document, output: Path, data: bytes) -> bool:
    """Write the page unless it holds these bytes already (whether it wrote): the rule every back-end keeps
    (literate/outputs.py): never the lesson, a file it tangles, or a file that weave.py did not write."""
    default = doc.path.parent / "build" / (doc.path.stem + ".html")
    return outputs.write_output(doc, output, data, "weave.py", is_page, default)


def main(argv: list[str] | None = None) -> int:
    """Ctrl-C, a closed pipe and a console that cannot show Chinese end it with one line, never a traceback."""
    return console.guarded("weave.py", lambda: run_command(argv), "the page was not changed")


def run_command(argv: list[str] | None) -> int:
    args = console.parsed(parser(), argv)
    if isinstance(args, int):  # --help (0) or a usage error (2)
        return args
    output = args.output or args.md.parent / "build" / f"{args.md.stem}.html"
    try:
        doc = markdown.load(args.md, str(args.md))
        page_html, page, errors = weave(doc)
        if errors:
            print(f"{doc.shown}: warning: {len(errors)} prose number{'s are' if len(errors) != 1 else ' is'} not "
                  "printed by the transcript cited (shown unlinked, marked in red); make check lists them",
                  file=sys.stderr)
        data = page_html.encode()
        if str(output) == "-":
            with contextlib.suppress(OSError, ValueError):  # a reader that went away (| head) wants no more
                sys.stdout.buffer.write(data)
                sys.stdout.flush()
            report, changed = sys.stderr, True
        else:
            report, changed = sys.stdout, write_page(doc, output, data)
    except model.UserError as error:
        print(*error.messages, sep="\n", file=sys.stderr)
        return error.code
    except RecursionError:
        print(f"{args.md}: error: nested too deeply to draw as a page (lists or quotes inside each other)",
              file=sys.stderr)
        return BAD_INPUT
    except MemoryError:
        print("weave.py: error: out of memory", file=sys.stderr)
        return BAD_INPUT
    chunks = sum(len(pieces) for pieces in [*doc.chunks.values(), *doc.roots.values()])
    print(f"{'wrote' if changed else 'unchanged:'} {output}: {chunks} code chunks, {len(page.linked)} numbers linked "
          f"to their transcript lines, {page.heatmaps} heatmaps", file=report)
    return OK


if __name__ == "__main__":
    raise SystemExit(main())
