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
  - a contents list of the # and ## sections, ### nested under them;
  - formulas converted to MathML when the page is built (latex2mathml; no script):
    $$...$$ or a ```math fence on its own (display), $...$ or $`...`$ (inline);
  - each code chunk, and each transcript (each of its parts, where it stands), under
    its caption: the one written above the fence in MD (<a name="chunk-NAME"></a>
    **〈NAME〉**..., which tangle.py checks), its bold name a link to the anchor it
    gives (#chunk-NAME[-N], #file-PATH[-N], #output-PATH[-N], as on GitHub), with
    its link list; a document without captions gets <<NAME>> ≡ and, for a root, the
    list of its parts in the order they are tangled. Beside it: which of several
    fences it is, links to the one before and after, and its line of MD. Under a
    chunk's last fence a "用在 →" link to each <<NAME>> that includes it; each
    <<NAME>> inside code a link to the chunk ("← MD:LINE", where it is defined);
    code is highlighted with Pygments when it is installed, plain otherwise;
  - every transcript line has the anchor #L<its line of MD> (a transcript in parts:
    each part's lines at their own lines); every prose number that make check
    verifies is a link to one transcript line that prints it, in whichever part (the
    one whose words best match the sentence), highlighted when you arrive; the book's
    figures are marked as the book's; the top of the page says how many numbers were
    verified, against which program's transcript;
  - each attention matrix printed in a transcript (a header of column numbers, then
    rows like `输出 1    0.10  0.10 ...`) also drawn as an SVG heatmap beside it, from
    the printed numbers (the programs are never run), grouped with the same matrix
    drawn in characters below it (`输出 1  |    ██|`) up to its legend;
  - links to a caption's anchor keep it as written (not percent-encoded).
  The page needs nothing from the network: CSS is inline, there is no script.
  A number that the check does not verify is shown unlinked, marked, and counted
  in a warning (make check lists and fails on them); the page is still written.

Writes OUT only when its content changes, atomically. Errors in the input are
reported as `MD:LINE: error: ...` on stderr. Exit status: 0 ok, 2 bad input or usage.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

import tangle

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
CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
TRANSCRIPT_MATRIX_ROW = re.compile(r"^(\S+?) ?(\d+)((?:\s+-?\d+\.\d+)+)\s*$")  # 输出 1    0.10  0.10 ...
COLUMN_HEADER = re.compile(r"^\s+\d+(?:\s+\d+)+\s*$")  # the column numbers above a matrix
LEGEND = "图例"
CJK_FONTS = '"Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei", sans-serif'
# Chinese is twice as wide as Latin in Noto Sans Mono CJK, so the transcripts' columns line up; but it also
# draws · ░ ▒ ▓ █ twice as wide (East Asian "ambiguous" width), while the program counts them as one column,
# as terminals do. Those characters come from a Latin monospace font scaled to half an em (size-adjust).
NARROW = "U+00B7, U+2013, U+2500-259F"
NARROW_BLOCKS = "".join(
    f'@font-face {{ font-family: "Narrow {name}"; src: {sources}; unicode-range: {NARROW}; size-adjust: {adjust}; }}\n'
    for name, sources, adjust in (("DejaVu", 'local("DejaVu Sans Mono"), local("DejaVuSansMono")', "83%"),
                                  ("Menlo", 'local("Menlo Regular"), local("Menlo-Regular")', "83%"),
                                  ("Consolas", 'local("Consolas")', "91%")))
MONO_FONTS = ('"Narrow DejaVu", "Narrow Menlo", "Narrow Consolas", "Noto Sans Mono CJK SC", "Sarasa Mono SC", '
              '"DejaVu Sans Mono", Menlo, Consolas, monospace')


@dataclass
class Page:
    """What the rendering functions share: the document, and what they have found so far."""

    doc: tangle.Document
    numbers: dict[int, list[tuple[tangle.ProseNumber, list[int]]]]  # id(inline token) -> its numbers
    transcript_text: dict[int, str]  # MD line -> the transcript line printed there
    fences: dict[int, tuple[str, str, int]]  # fence line -> (chunk, root or transcript; label; piece index)
    blocks: dict[int, str]  # id(inline token) -> the text of its paragraph or table row
    used_in: dict[str, list[tuple[int, str]]]  # chunk name -> (MD line of <<name>>, label of the piece using it)
    captions: dict[int, int] = field(default_factory=dict)  # token index of a caption's paragraph -> its fence line
    caption_tokens: dict[int, object] = field(default_factory=dict)  # fence line -> its caption's inline token
    ids: set[str] = field(default_factory=set)
    headings: list[tuple[int, str, str]] = field(default_factory=list)  # (level, id, text)
    linked: list[tuple[tangle.ProseNumber, int]] = field(default_factory=list)  # number, transcript line
    in_formulas: int = 0
    heatmaps: int = 0
    problems: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- the document's parts


def fence_roles(doc: tangle.Document) -> dict[int, tuple[str, str, int]]:
    """Each fence that tangle reads: a piece of a chunk or root, or a transcript's part (index 0, 1, ...
    in document order; a transcript in one fence is its own only part)."""
    roles = {}
    for kind, table in (("chunk", doc.chunks), ("root", doc.roots)):
        for label, pieces in table.items():
            for index, piece in enumerate(pieces):
                roles[piece.fence_line] = (kind, label, index)
    for target, transcript in doc.transcripts.items():
        for index, piece in enumerate(transcript.pieces()):
            roles[piece.fence_line] = ("transcript", target, index)
    return roles


def caption_paragraphs(doc: tangle.Document) -> dict[int, int]:
    """token index of each caption's paragraph_open -> the line of the fence it names (tangle.py has checked
    that the caption is that fence's: its anchor is the one weave gives the fence)."""
    lines = {caption.line: fence for fence, caption in doc.captions.items()}
    return {index: lines[token.map[0] + 1] for index, token in enumerate(doc.tokens)
            if token.type == "paragraph_open" and token.map and token.map[0] + 1 in lines}


def uses(doc: tangle.Document) -> dict[str, list[tuple[int, str]]]:
    found: dict[str, list[tuple[int, str]]] = {}
    for pieces in [*doc.roots.values(), *doc.chunks.values()]:
        for piece in pieces:
            for line, name in tangle.references([piece]):
                found.setdefault(name, []).append((line, piece.label))
    return {name: sorted(lines) for name, lines in found.items()}


# The anchors are those of the captions in the Markdown (tangle.py's chunk-/file-/output-NAME[-N]), so that
# a link written there (#chunk-...) leads to the same place on GitHub and on the page.


def chunk_id(name: str) -> str:
    return tangle.chunk_anchor(name)


def root_id(target: str) -> str:
    return tangle.root_anchor(target)


def transcript_id(target: str, part: int | None = None) -> str:
    """A transcript's anchor: output-TARGET for one fence, output-TARGET-N for its part N."""
    return tangle.output_anchor(target, part)


def piece_id(kind: str, label: str, index: int) -> str:
    return (tangle.root_anchor if kind == "root" else tangle.chunk_anchor)(label, index + 1)


def sentence_around(text: str, offset: int) -> str:
    starts = [match.end() for match in tangle.SENTENCE_END.finditer(text, 0, offset)]
    end = tangle.SENTENCE_END.search(text, offset)
    return text[starts[-1] if starts else 0 : end.start() if end else len(text)]


def best_line(number: tangle.ProseNumber, lines: list[int], contexts: tuple[str, str],
              transcript_text: dict[int, str]) -> int:
    """Of the transcript lines that print the number, the one whose words best match its sentence, then
    its paragraph (or table row): shared pairs of characters, and the other numbers there, count; the
    first line wins a tie."""
    def pairs(text: str) -> set[str]:
        text = re.sub(r"[\s0-9.+\-,，。：；、（）()|]+", " ", text)
        return {text[i : i + 2] for i in range(len(text) - 1) if " " not in text[i : i + 2]}

    def scorer(context: str):
        words = pairs(context)
        others = {match[0] for match in tangle.NUMBER.finditer(context)} - {number.text}

        def score(line: int) -> int:
            text = transcript_text[line]
            printed = {match[0] for match in tangle.NUMBER.finditer(text)}
            return len(words & pairs(text)) + 2 * len(others & printed)
        return score

    sentence, block = map(scorer, contexts)
    return max(lines, key=lambda line: (sentence(line), block(line), -line))


def block_contexts(tokens) -> dict[int, str]:
    """The text each inline token is read in: its paragraph, or for a table cell the whole row."""
    found, row = {}, []
    for token in tokens:
        if token.type == "inline":
            found[id(token)] = tangle.flatten_inline(token)[0]
            row.append(token)
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close":
            text = " | ".join(found[id(cell)] for cell in row)
            found.update((id(cell), text) for cell in row)
    return found


def numbers_by_token(sources: list[tuple[tangle.ProseNumber, list[int]]]):
    """The prose numbers of each inline token (by its id), in the order they stand."""
    found: dict[int, list[tuple[tangle.ProseNumber, list[int]]]] = {}
    for number, lines in sources:
        found.setdefault(id(number.token), []).append((number, lines))
    for entries in found.values():
        entries.sort(key=lambda entry: entry[0].offset)
    return found


# ---------------------------------------------------------------- formulas


def mathml(page: Page, latex: str, display: bool, line: int) -> str:
    try:
        converted = latex_to_mathml(latex.strip(), display="block" if display else "inline")
    except Exception as error:  # latex2mathml raises many kinds for what it cannot read
        page.problems.append(f"{page.doc.where(line)}: error: cannot convert the formula {latex.strip()!r} "
                             f"to MathML: {error}")
        return html.escape(latex)
    converted = converted.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "", 1)
    return f'<span class="formula{" display" if display else ""}">{converted}</span>'


def raw_formulas(raw: str) -> list[tuple[str, bool]]:
    """The $...$ and $$...$$ formulas of an inline token's source, in order (code spans skipped)."""
    raw = CODE_SPAN.sub(lambda match: " " * len(match[0]), raw)
    return [(match["display"] or match["inline"], match["display"] is not None) for match in INLINE_MATH.finditer(raw)]


# ---------------------------------------------------------------- inline text


def render_inline(page: Page, token, renderer, options) -> str:
    """A paragraph's or cell's text: numbers linked, formulas as MathML, the rest as markdown-it renders it."""
    children = token.children or []
    line = token.map[0] + 1 if token.map else 0
    # where each child starts in the text the prose check reads (tangle.flatten_inline), to place its numbers
    starts = [len(tangle.flatten_inline(SimpleNamespace(children=children[:i]))[0])
              for i in range(len(children) + 1)]
    formulas = raw_formulas(token.content)
    # $`...`$ (GitHub): a code span between a text ending in $ and one starting with $
    github = {i for i, child in enumerate(children)
              if child.type == "code_inline" and 0 < i < len(children) - 1
              and children[i - 1].type == "text" and children[i - 1].content.endswith("$")
              and children[i + 1].type == "text" and children[i + 1].content.startswith("$")}
    out, used = [], 0
    for i, child in enumerate(children):
        if i in github:
            out.append(mathml(page, child.content, False, line))
        elif child.type == "text":
            numbers = [(number, lines) for number, lines in page.numbers.get(id(token), [])
                       if starts[i] <= number.offset < starts[i + 1]]
            text, used = text_html(page, token, child.content, (i - 1 in github, i + 1 in github),
                                   [(number, lines, number.offset - starts[i]) for number, lines in numbers],
                                   formulas, used, line)
            out.append(text)
        elif child.type == "softbreak":
            out.append("\n")
        else:
            out.append(other_inline_html(child, renderer, options))
    if used != len(formulas):
        page.problems.append(f"{page.doc.where(line)}: error: cannot find the formulas of this paragraph in its "
                             "text (emphasis or a link inside $...$?); write them as $`...`$")
    return "".join(out)


def other_inline_html(child, renderer, options) -> str:
    """A child that is neither text nor a formula, as markdown-it renders it; but a link to a caption's anchor
    (#chunk-, #file-, #output-) keeps its anchor as written, not percent-encoded, as the page's ids are."""
    if child.type == "link_open":
        own = tangle.OWN_LINK.fullmatch(unquote(child.attrs.get("href", "")))
        if own:
            title = child.attrs.get("title")
            return (f'<a href="#{html.escape(own[1])}"'
                    + (f' title="{html.escape(str(title))}"' if title else "") + ">")
    return renderer.renderInline([child], options, {})


def text_html(page: Page, token, content: str, github: tuple[bool, bool], numbers, formulas, used: int,
              line: int) -> tuple[str, int]:
    """One text child: its $...$ formulas (the next of the paragraph's formulas, as written in the source:
    markdown-it has already undone the backslash escapes in content) and its numbers. github: whether its
    first and last $ belong to a $`...`$ around. Returns the HTML and how many formulas are used now."""
    first, last = int(github[0]), len(content) - int(github[1])
    events = [(match.start(), "formula", match.end()) for match in INLINE_MATH.finditer(content, first, last)]
    events += [(content_position(content, offset), "number", (number, lines)) for number, lines, offset in numbers]
    flat = tangle.flatten_inline(token)[0]
    pieces, position = [], first
    for where, kind, what in sorted(events, key=lambda event: event[0]):
        if where < position:  # a number inside a formula: the formula shows it
            page.in_formulas += 1
            continue
        pieces.append(html.escape(content[position:where], quote=False))
        if kind == "formula":
            latex, display = formulas[used] if used < len(formulas) else (content[where + 1 : what - 1], False)
            used += 1
            pieces.append(mathml(page, latex, display, line))
            position = what
        else:
            number, lines = what
            contexts = (sentence_around(flat, number.offset), page.blocks.get(id(token), flat))
            pieces.append(number_html(page, number, lines, contexts))
            position = where + len(number.text)
    pieces.append(html.escape(content[position:last], quote=False))
    return "".join(pieces), used


def content_position(content: str, offset: int) -> int:
    """Where a character of the flattened text (tangle.flatten_inline) is in a text child's content:
    there, each bare URL became one character."""
    shift = 0
    for match in tangle.BARE_URL.finditer(content):
        if match.start() - shift >= offset:
            break
        shift += len(match[0]) - 1
    return offset + shift


def number_html(page: Page, number: tangle.ProseNumber, lines: list[int], contexts: tuple[str, str]) -> str:
    text = html.escape(number.text)
    if number.book:
        return (f'<span class="num book" title="原书的数字（列在 {tangle.BOOK_FIGURES} 里），'
                f'不是本仓库的程序打印的">{text}</span>')
    if not lines:
        return (f'<span class="num unverified" title="没有核对上：{html.escape(number.program)} 的实跑输出里没有它">'
                f'{text}</span>')
    line = best_line(number, lines, contexts, page.transcript_text)
    page.linked.append((number, line))
    title = (f"出自 {number.program} 的实跑输出（{page.doc.path.name} 第 {line} 行）："
             f"{page.transcript_text[line].strip()}")
    return f'<a class="num" href="#L{line}" title="{html.escape(title)}">{text}</a>'


# ---------------------------------------------------------------- code and transcripts


def highlighted_lines(code: list[str], language: str) -> list[str]:
    """Each line of code as HTML: Pygments' token classes when it is installed, else escaped text."""
    lexer = None
    if get_lexer_by_name is not None and language:
        try:
            lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
        except ClassNotFound:
            lexer = None
    if lexer is None:
        return [html.escape(line, quote=False) for line in code]
    lines = [[]]
    for kind, value in lexer.get_tokens("\n".join(code)):
        while kind not in STANDARD_TYPES:
            kind = kind.parent
        css = STANDARD_TYPES[kind]
        for number, part in enumerate(value.split("\n")):
            if number:
                lines.append([])
            if part:
                escaped = html.escape(part, quote=False)
                lines[-1].append(f'<span class="{css}">{escaped}</span>' if css else escaped)
    return ["".join(parts) for parts in lines[: len(code)]] + [""] * (len(code) - len(lines))


def code_html(page: Page, piece: tangle.Piece, language: str) -> str:
    shown = highlighted_lines(piece.lines, language)
    out = []
    for offset, (code, text) in enumerate(zip(piece.lines, shown, strict=True)):
        line = piece.first_line + offset
        match = tangle.REFERENCE.match(code)
        if match:
            name = " ".join(match[2].split())
            where = page.doc.chunks[name][0].fence_line
            text = (f'{html.escape(match[1])}<a class="ref" href="#{chunk_id(name)}" '
                    f'title="定义 ← {html.escape(page.doc.where(where))}">&lt;&lt;{html.escape(match[2])}&gt;&gt;</a>'
                    f'<span class="def"> ← {page.doc.path.name}:{where}</span>')
        out.append(f'<span class="l" id="L{line}">{text}\n</span>')
    return f'<pre class="code"><code>{"".join(out)}</code></pre>'


def caption_html(page: Page, line: int, anchor: str, renderer, options) -> str | None:
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
    text = render_inline(page, SimpleNamespace(children=children, content=token.content, map=token.map),
                         renderer, options).strip()
    if "<strong>" in text:
        text = (text.replace("<strong>", f'<a class="name" href="#{html.escape(anchor)}"><strong>', 1)
                .replace("</strong>", "</strong></a>", 1))
    else:
        text = f'<a class="name" href="#{html.escape(anchor)}">{text}</a>'
    return text


def sequence_links(count: int, index: int, anchor_of) -> list[str]:
    """For one of several fences: which it is, and links to the one before and after."""
    if count < 2:
        return []
    links = [f'<span class="part">第 {index + 1} 段，共 {count} 段</span>']
    if index:
        links.append(f'<a href="#{html.escape(anchor_of(index - 1))}">← 上一段</a>')
    if index + 1 < count:
        links.append(f'<a href="#{html.escape(anchor_of(index + 1))}">下一段 →</a>')
    return links


def chunk_html(page: Page, token, kind: str, label: str, index: int, renderer, options) -> str:
    doc = page.doc
    pieces = (doc.chunks if kind == "chunk" else doc.roots)[label]
    piece = pieces[index]
    anchor = piece_id(kind, label, index)
    page.ids.add(anchor)
    language = (token.info.split("{")[0].split() or [""])[0]
    written = caption_html(page, piece.fence_line, anchor, renderer, options)
    if written is None:
        name = f"&lt;&lt;{html.escape(label)}&gt;&gt;" if kind == "chunk" else html.escape(label)
        caption = [f'<a class="name" href="#{html.escape(anchor)}">{name}</a> {"+≡" if index else "≡"}']
    else:
        caption = [f'<span class="written">{written}</span>']
    caption += sequence_links(len(pieces), index, lambda i: piece_id(kind, label, i))
    caption.append(f'<span class="where">{html.escape(doc.where(piece.fence_line))}</span>')
    foot = ""
    if kind == "chunk" and index == len(pieces) - 1:
        links = [f'<a href="#L{line}">{html.escape(user)}</a>' for line, user in page.used_in.get(label, [])]
        foot = f'<p class="used">用在 → {"，".join(links)}</p>'
    elif kind == "root" and index == len(pieces) - 1 and not doc.captions:
        # a captioned document lists the chunks of each piece in its caption already
        foot = f'<div class="parts">依次拼成 {html.escape(label)}：{parts_list(page, pieces)}</div>'
    return (f'<figure class="chunk {kind}" id="{html.escape(anchor)}"><figcaption>{" ".join(caption)}</figcaption>'
            f'{code_html(page, piece, language)}{foot}</figure>\n')


def parts_list(page: Page, pieces: list[tangle.Piece], seen: frozenset = frozenset()) -> str:
    """The chunks a root (or chunk) includes, in the order they are tangled, nested."""
    items = []
    for line, name in tangle.references(pieces):
        if name in seen or name not in page.doc.chunks:
            continue
        inner = parts_list(page, page.doc.chunks[name], seen | {name})
        items.append(f'<li><a href="#{chunk_id(name)}">&lt;&lt;{html.escape(name)}&gt;&gt;</a> '
                     f'<a class="def" href="#L{line}">（第 {line} 行）</a>{inner}</li>')
    return f"<ol>{''.join(items)}</ol>" if items else ""


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


def heatmap_svg(columns: list[str], rows, caption: str) -> str:
    cell, left, top = 20, 44, 40
    width, height = left + cell * len(columns) + 8, top + cell * len(rows) + 8
    parts = [f'<svg class="heatmap" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" role="img" data-rows="{len(rows)}" data-columns="{len(columns)}">'
             f"<title>{html.escape(caption)}</title>"]
    parts.append(f'<text class="axis" x="{left + cell * len(columns) / 2}" y="12" text-anchor="middle">'
                 '输入 →</text>')
    parts.append(f'<text class="axis vertical" x="12" y="{top + cell * len(rows) / 2}" text-anchor="middle">'
                 '输出 →</text>')
    for j, label in enumerate(columns):
        parts.append(f'<text x="{left + cell * j + cell / 2}" y="{top - 6}" text-anchor="middle">'
                     f'{html.escape(label)}</text>')
    for i, (label, weights, printed) in enumerate(rows):
        y = top + cell * i
        parts.append(f'<text x="{left - 6}" y="{y + cell / 2 + 4}" text-anchor="end">'
                     f'{html.escape(label.split()[-1])}</text>')
        for j, (weight, shown) in enumerate(zip(weights, printed, strict=True)):
            parts.append(f'<rect class="cell" x="{left + cell * j}" y="{y}" width="{cell}" height="{cell}" '
                         f'fill="{colour(weight)}"><title>{html.escape(label)}，输入 {html.escape(columns[j])}：'
                         f'{html.escape(shown)}</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


def colour(weight: float) -> str:
    """White to dark blue; the square root spreads out the small weights, 1 is the darkest."""
    t = min(max(weight, 0.0), 1.0) ** 0.5
    light, dark = (247, 251, 255), (8, 48, 107)
    return "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(light, dark, strict=True))


def transcript_html(page: Page, target: str, index: int, renderer, options) -> str:
    """One fence of a transcript (the whole output, or its part index + 1), where it stands in the document:
    each output line anchored by its own line of MD, each printed matrix beside its heatmap."""
    transcript = page.doc.transcripts[target]
    pieces = transcript.pieces()
    piece = pieces[index]
    lines = tangle.output_lines(piece.content)
    anchor = transcript_id(target, piece.part)
    page.ids.add(anchor)

    def pre(first: int, end: int) -> str:
        spans = "".join(f'<span class="l" id="L{piece.first_line + k}">'
                        f'{html.escape(lines[k], quote=False)}\n</span>' for k in range(first, end))
        return f'<pre class="output">{spans}</pre>' if spans else ""

    out, position = [], 0
    for start, end, columns, rows in parse_matrices(lines):
        out.append(pre(position, start))
        caption = (f"{target} 的实跑输出里的矩阵（{page.doc.where(piece.first_line + start)} 起），"
                   f"{len(rows)}×{len(columns)}，颜色越深权重越大")
        page.heatmaps += 1
        out.append(f'<div class="matrix">{pre(start, end)}<figure class="heatmap">'
                   f'{heatmap_svg(columns, rows, caption)}<figcaption>用这里印出来的数字画的热图：行是输出第几位，'
                   f'列是输入第几位；颜色越深权重越大，指着一格看它的数值。'
                   f'<span class="scale"><span>0</span><span>0.25</span><span>1</span></span>'
                   f'</figcaption></figure></div>')
        position = end
    out.append(pre(position, len(lines)))
    written = caption_html(page, piece.fence_line, anchor, renderer, options)
    if written is None:
        caption = [f'<a class="name" href="#{html.escape(anchor)}">实跑输出</a>：'
                   f'<code>{html.escape(target)}</code>']
    else:
        caption = [f'<span class="written">{written}</span>']
    around = sequence_links(len(pieces), index, lambda i: transcript_id(target, pieces[i].part))
    caption += around[1:] if written else around  # a written caption says 第 N 段 itself
    caption.append(f'<span class="where">{html.escape(page.doc.where(piece.fence_line))}</span>')
    caption.append('<span class="how">程序的标准输出：<code>tangle.py check</code> 重新运行程序，'
                   + ("和各段连起来" if len(pieces) > 1 else "和这一段") + "逐字节比对</span>")
    return (f'<figure class="transcript" id="{html.escape(anchor)}"><figcaption>{" ".join(caption)}</figcaption>'
            f'<div class="printed">{"".join(out)}</div></figure>\n')


# ---------------------------------------------------------------- the page


def heading_id(page: Page, text: str) -> str:
    """The heading's text, spaces as -, unless that looks like an anchor of the page's own."""
    base = re.sub(r"\s+", "-", text.strip()) or "section"
    if re.fullmatch(r"L\d+|(?:chunk|file|output)-.*|contents|verified", base):
        base = "section-" + base
    anchor, count = base, 1
    while anchor in page.ids:
        count += 1
        anchor = f"{base}-{count}"
    page.ids.add(anchor)
    return anchor


def body_html(page: Page) -> str:
    md = tangle.markdown_parser()
    renderer, options = md.renderer, md.options
    tokens = page.doc.tokens
    out = []
    skip_until = -1
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
                out.append(f'<div class="math">{mathml(page, match[1], True, token.map[0] + 1)}</div>\n')
                skip_until = index + 2
                continue
        if token.type == "heading_open":
            inline = tokens[index + 1]
            text = "".join(child.content for child in inline.children or [] if child.type in ("text", "code_inline"))
            anchor = heading_id(page, text)
            page.headings.append((int(token.tag[1]), anchor, text))
            out.append(f'<{token.tag} id="{html.escape(anchor)}">')
        elif token.type == "inline":
            out.append(render_inline(page, token, renderer, options))
        elif token.type == "fence":
            out.append(fence_html(page, token, renderer, options, tokens, index))
        elif token.type in renderer.rules:
            out.append(renderer.rules[token.type](tokens, index, options, {}))
        else:
            out.append(renderer.renderToken(tokens, index, options, {}))
    return "".join(out)


def fence_html(page: Page, token, renderer, options, tokens, index) -> str:
    line = token.map[0] + 1
    role = page.fences.get(line)
    if role and role[0] == "transcript":
        return transcript_html(page, role[1], role[2], renderer, options)
    if role:
        return chunk_html(page, token, *role, renderer, options)
    language = (token.info.split() or [""])[0]
    if language == "math":
        return f'<div class="math">{mathml(page, token.content, True, line)}</div>\n'
    piece = tangle.Piece(line, "", token.content.split("\n")[:-1])
    shown = highlighted_lines(piece.lines, language)
    return f'<pre class="code illustration"><code>{"".join(s + chr(10) for s in shown)}</code></pre>\n'


def contents_html(page: Page) -> str:
    items, open_sub = [], False
    for level, anchor, text in page.headings:
        if level == 1:
            continue
        link = f'<a href="#{html.escape(anchor)}">{html.escape(text)}</a>'
        if level == 2:
            items.append(("</ol></li>" if open_sub else "</li>" if items else "") + f"<li>{link}")
            open_sub = False
        else:
            items.append(("" if open_sub else "<ol>") + f"<li>{link}</li>")
            open_sub = True
    if items:
        items.append("</ol></li>" if open_sub else "</li>")
    return f'<nav id="contents"><h2>目录</h2><ol>{"".join(items)}</ol></nav>'


def summary_html(page: Page, sources) -> str:
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
    parts = "，".join(f'{count} 个对上了 <a href="#{first[program]}"><code>{html.escape(program)}</code> '
                     "的实跑输出</a>" for program, count in by_program.items())
    text = (f'<p id="verified">正文里要核对的数字有 {len(counted)} 个：<strong>{verified} 个核对过</strong>'
            f'（{parts}），{book} 个<span class="num book">标成原书的</span>（列在 <code>{tangle.BOOK_FIGURES}</code> 里）')
    if page.in_formulas:
        text += f"；其中 {page.in_formulas} 个写在公式里，没有链接"
    if failed:
        text += f'；<span class="num unverified">{failed} 个没有对上</span>（<code>make check</code> 会报错）'
    text += ("。点正文里带下划线的数字，跳到印出它的那一行实跑输出。一位数和后面跟着「位」「维」「轮」这类量词的数字不用核对，"
             f"规则见 README。本页由 <code>weave.py</code> 从 <code>{html.escape(doc.path.name)}</code> 生成。</p>")
    return text


def weave(doc: tangle.Document) -> tuple[str, Page, list[str]]:
    """The page's HTML, what went into it, and the prose check's error lines (as warnings)."""
    errors, sources = tangle.prose_number_sources(doc)
    transcript_text = {}
    for transcript in doc.transcripts.values():
        for piece in transcript.pieces():
            for offset, text in enumerate(tangle.output_lines(piece.content)):
                transcript_text[piece.first_line + offset] = text
    captions = caption_paragraphs(doc)
    page = Page(doc=doc, numbers=numbers_by_token(sources), transcript_text=transcript_text,
                fences=fence_roles(doc), blocks=block_contexts(doc.tokens), used_in=uses(doc), captions=captions,
                caption_tokens={line: doc.tokens[index + 1] for index, line in captions.items()})
    body = body_html(page)
    if page.problems:
        raise tangle.UserError(*page.problems)
    title = next((text for level, _, text in page.headings if level == 1), doc.path.stem)
    first_h1_end = body.find("</h1>")
    top = summary_html(page, sources) + contents_html(page)
    if first_h1_end >= 0:
        body = body[: first_h1_end + 5] + "\n" + top + body[first_h1_end + 5 :]
    else:
        body = top + body
    page_html = (f'<!DOCTYPE html>\n<html lang="zh-CN">\n<head>\n<meta charset="utf-8">\n'
                 f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                 f"<title>{html.escape(title)}</title>\n<style>\n{stylesheet()}</style>\n</head>\n"
                 f'<body>\n<main>\n{body}</main>\n</body>\n</html>\n')
    return page_html, page, errors


def stylesheet() -> str:
    css = f"""
:root {{ --text: #1f2328; --muted: #59636e; --line: #d1d9e0; --code-bg: #f6f8fa; --mark: #fff1a8; --link: #0550ae; }}
* {{ box-sizing: border-box; }}
html {{ scroll-padding-top: 4rem; }}
body {{ margin: 0; color: var(--text); background: #fff; font: 16px/1.75 {CJK_FONTS}; }}
main {{ max-width: 60rem; margin: 0 auto; padding: 1.5rem 1.25rem 6rem; }}
h1 {{ font-size: 1.9rem; line-height: 1.3; }}
h2 {{ font-size: 1.45rem; margin-top: 2.6rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; }}
h3 {{ font-size: 1.15rem; margin-top: 1.8rem; }}
a {{ color: var(--link); }}
{NARROW_BLOCKS}
code, pre, kbd {{ font-family: {MONO_FONTS}; }}
:not(pre) > code {{ background: var(--code-bg); padding: .1em .3em; border-radius: 4px; font-size: .9em; }}
pre {{ font-size: 13px; line-height: 1.5; overflow-x: auto; margin: 0; padding: .6rem .8rem; background: var(--code-bg); }}
pre .l {{ display: block; min-height: 1.5em; }}
pre .l:target, .chunk:target > figcaption {{ background: var(--mark); outline: 2px solid #d4a400; }}
table {{ border-collapse: collapse; margin: 1rem 0; display: block; overflow-x: auto; }}
th, td {{ border: 1px solid var(--line); padding: .3rem .7rem; }}
th {{ background: var(--code-bg); }}
blockquote {{ margin: 1rem 0; padding: 0 1rem; color: var(--muted); border-left: .25rem solid var(--line); }}
details {{ border: 1px solid var(--line); border-radius: 6px; padding: .4rem .9rem; margin: .8rem 0; }}
summary {{ cursor: pointer; font-weight: 600; }}
figure {{ margin: 1.2rem 0; }}
figure.chunk, figure.transcript {{ border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }}
figure.chunk > figcaption, figure.transcript > figcaption {{ font-size: .85rem; padding: .3rem .8rem; background: #eef2f6;
  border-bottom: 1px solid var(--line); }}
figcaption .name {{ font-family: {MONO_FONTS}; font-weight: 600; text-decoration: none; }}
figcaption .where, figcaption .part, figcaption .how {{ color: var(--muted); margin-left: .6rem; }}
figcaption .how code {{ font-size: 1em; background: none; padding: 0; }}
figcaption a:not(.name) {{ margin-left: .6rem; }}
.chunk .used, .chunk .parts {{ font-size: .85rem; margin: 0; padding: .3rem .8rem; border-top: 1px solid var(--line); }}
.chunk .parts ol {{ margin: .2rem 0; padding-left: 1.6rem; columns: 2; }}
.def {{ color: var(--muted); font-size: .85em; text-decoration: none; }}
a.ref {{ font-weight: 600; }}
.transcript .printed {{ padding: .6rem 0; background: var(--code-bg); }}
.transcript pre {{ padding: 0 .8rem; }}
.matrix {{ display: flex; flex-wrap: wrap; align-items: flex-start; background: var(--code-bg); }}
.matrix > pre {{ flex: 0 1 auto; }}
figure.heatmap {{ margin: .6rem 1rem; max-width: 16rem; font-size: .8rem; color: var(--muted); line-height: 1.5; }}
figure.heatmap svg {{ display: block; font: 11px {CJK_FONTS}; fill: var(--text); }}
figure.heatmap svg .axis {{ font-size: 12px; font-weight: 600; }}
figure.heatmap svg .vertical {{ writing-mode: vertical-rl; }}
figure.heatmap rect.cell {{ stroke: #fff; stroke-width: 1; }}
figure.heatmap rect.cell:hover {{ stroke: #d4a400; stroke-width: 2; }}
.scale {{ display: flex; justify-content: space-between; padding-top: .7rem; margin-top: .3rem; line-height: 1;
  background: linear-gradient(to right, {colour(0)}, {colour(1)}) top / 100% .6rem no-repeat; }}
.math {{ overflow-x: auto; margin: 1rem 0; }}
math {{ font-size: 1.1em; }}
math[display="block"] {{ display: block math; }}
a.num {{ text-decoration: underline dotted; text-underline-offset: .2em; }}
.num.book {{ background: #fbefe3; border-bottom: 1px dashed #b35900; }}
.num.unverified {{ background: #ffe3e3; }}
#verified {{ background: #eef6ee; border: 1px solid #b7dbb7; border-radius: 6px; padding: .6rem .9rem; }}
#contents {{ border: 1px solid var(--line); border-radius: 6px; padding: .2rem 1rem; margin: 1rem 0 2rem; }}
#contents h2 {{ font-size: 1.1rem; margin: .6rem 0; border: 0; }}
#contents ol {{ margin: 0; padding-left: 1.5rem; }}
@media (max-width: 40rem) {{ main {{ padding: 1rem .6rem 4rem; }} .chunk .parts ol {{ columns: 1; }} }}
"""
    if get_lexer_by_name is not None:
        css += HtmlFormatter(style="default").get_style_defs("pre.code") + "\n"
    return css.lstrip("\n")


# ---------------------------------------------------------------- command line


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="weave.py", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("md", nargs="?", type=Path, default=Path("attention.md"),
                     help="the Markdown lesson (default: ./attention.md)")
    top.add_argument("-o", "--output", type=Path, help="the page to write (default: build/<MD's name>.html beside MD)")
    return top


def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as stop:  # argparse: --help (0) or a usage error (2)
        return stop.code if isinstance(stop.code, int) else BAD_INPUT
    output = args.output or args.md.parent / "build" / f"{args.md.stem}.html"
    try:
        doc = tangle.load(args.md, str(args.md))
        page_html, page, errors = weave(doc)
    except tangle.UserError as error:
        print(*error.messages, sep="\n", file=sys.stderr)
        return BAD_INPUT
    if errors:
        print(f"{doc.shown}: warning: {len(errors)} prose number{'s are' if len(errors) != 1 else ' is'} not printed "
              "by the transcript cited (shown unlinked, marked in red); make check lists them", file=sys.stderr)
    data = page_html.encode()
    try:
        changed = not output.is_file() or output.read_bytes() != data
        if changed:
            tangle.write_atomically(output, data)
    except OSError as error:
        print(f"{output}: error: cannot write it: {error.strerror}", file=sys.stderr)
        return BAD_INPUT
    chunks = sum(len(pieces) for pieces in [*doc.chunks.values(), *doc.roots.values()])
    print(f"{'wrote' if changed else 'unchanged:'} {output}: {chunks} code chunks, {len(page.linked)} numbers linked "
          f"to their transcript lines, {page.heatmaps} heatmaps")
    return OK


if __name__ == "__main__":
    raise SystemExit(main())
