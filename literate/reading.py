"""The Markdown parser's tokens read once into the typed blocks of blocks.py: the part of the reading stage that
knows the shapes of the tokens (markdown.py parses; nothing after the reading stage sees a token)."""

from __future__ import annotations

import bisect
import collections
import itertools
import re
from collections.abc import Callable

from . import blocks as b
from .formulas import DISPLAY_MATH, INLINE_MATH, dollar_formulas
from .inline import (BARE_URL, NUMBER, SEPARATOR, caption_of, details_pairs, html_text, inline_reading,
                     unmatched)
from .model import Caption

CONTAINERS = ("bullet_list_open", "ordered_list_open", "list_item_open", "blockquote_open")


MAX_SPAN_DEPTH = 20  # emphasis, links and strikethrough inside each other, as deep as the parser nests blocks
MAX_FOLD_DEPTH = 20  # <details> folded inside each other; one deeper stays the HTML it is, drawn as such
FOLD_TAG_LINE = re.compile(r"[ \t]*</?details(?=[\s/>]|$)", re.I)  # a line that starts with <details> or </details>


def read_blocks(tokens: list, captions: dict[int, Caption],
                read_fence: Callable) -> tuple[list, list[tuple[int, str]]]:
    """The blocks of the lesson, and the problems found reading them (line, what): fences that cannot be read, spans
    nested deeper than MAX_SPAN_DEPTH. captions: fence line -> its caption; read_fence(token) -> the fence's role,
    label and piece (fences.read_fence)."""
    tokens = separate_folds(tokens)
    pairs = details_pairs(tokens)
    reader = Reader(pairs, {caption.line: fence for fence, caption in captions.items()})
    top: list = []
    stack: list = [top]  # the lists of blocks being filled (a list's: its items), innermost last
    folds = Folds(stack, fold_pairs(tokens, pairs))
    table = row = None
    caption_tokens: dict[int, tuple] = {}  # fence line -> its caption's inline token and Inline
    index = 0
    while index < len(tokens):
        token = tokens[index]
        kind, into = token.type, stack[-1]
        line, end = (token.map[0] + 1, token.map[1]) if token.map else (0, 0)
        index += 1
        if kind in CONTAINERS:  # what follows, up to its close, goes into it
            block = (b.ListItem(line, end) if kind == "list_item_open" else b.Quote(line, end)
                     if kind == "blockquote_open" else
                     b.ListBlock(line, end, kind == "ordered_list_open", token.attrs.get("start")))
            into.append(block)
            stack.append(b.children(block))
        elif kind in ("list_item_close", "bullet_list_close", "ordered_list_close", "blockquote_close"):
            folds.unclosed()
            stack.pop()
        elif kind == "paragraph_open":
            inline = tokens[index]
            index += 2
            paragraph = b.Paragraph(line, end, reader.inline(inline), token.hidden)
            match = DISPLAY_MATH.fullmatch(inline.content)
            paragraph.display = match[1] if match else None
            paragraph.caption_of = reader.caption_lines.get(line)
            if paragraph.caption_of is not None:
                caption_tokens[paragraph.caption_of] = (inline, paragraph.inline)
            into.append(paragraph)
        elif kind == "heading_open":
            inline = tokens[index]
            index += 2
            into.append(b.Heading(line, end, int(token.tag[1]), reader.inline(inline)))
        elif kind == "fence":
            into.append(fence(token, line, end, read_fence, reader, caption_tokens))
        elif kind == "code_block":
            into.append(b.CodeBlock(line, end, token.content))
        elif kind == "html_block":
            tags = reader.pairs.get(id(token), [])
            folds.add(b.HtmlBlock(line, end, token.content, unmatched(tags), reader.html_block(token.content, line)),
                      tags)
        elif kind == "hr":
            into.append(b.Rule(line, end))
        elif kind == "table_open":
            table = b.Table(line, end)
            into.append(table)
        elif kind == "tbody_open":
            table.body = []
        elif kind == "tr_open":
            row = b.Row(line, end)
            (table.head if table.body is None else table.body).append(row)
        elif kind in ("th_open", "td_open"):
            align = str(token.attrs.get("style", "")).removeprefix("text-align:")
            row.cells.append(b.Cell(kind == "th_open", align if align in ("left", "center", "right") else None,
                                    reader.inline(tokens[index])))
            index += 2
        elif kind == "tr_close":
            context = " | ".join(cell.inline.flat for cell in row.cells)
            for cell in row.cells:
                cell.inline.context = context
    folds.unclosed()
    return top, reader.problems


def separate_folds(tokens: list) -> list:
    """The tokens, each HTML block that starts with a <details> or </details> and holds more, each at the start of a
    line of its own (a fold closed and the next opened with no blank line between), cut before each of those lines:
    so that each tag stands in an HTML block of its own, which can open or close a fold. A block with a comment is
    left whole (a tag in a comment is none)."""
    separated = []
    for token in tokens:
        lines = token.content.removesuffix("\n").split("\n")
        cuts = [index for index, line in enumerate(lines) if index and FOLD_TAG_LINE.match(line)]
        if (token.type != "html_block" or not token.map or not cuts or not FOLD_TAG_LINE.match(lines[0])
                or "<!--" in token.content):
            separated.append(token)
            continue
        for start, end in zip([0, *cuts], [*cuts, len(lines)]):
            separated.append(token.copy(content="\n".join(lines[start:end]) + "\n",
                                        map=[token.map[0] + start, token.map[0] + end]))
    return separated


def fold_pairs(tokens: list, pairs: dict[int, list[tuple[bool, int | None]]]) -> set[int]:
    """The pairs of <details> and </details> (inline.details_pairs) that can make a fold: each tag alone in its HTML
    block."""
    alone = collections.Counter(tags[0][1] for token in tokens if token.type == "html_block"
                                for tags in [pairs.get(id(token), [])] if len(tags) == 1 and tags[0][1] is not None)
    return {pair for pair, count in alone.items() if count == 2}


class Folds:
    """The <details> folds being read (blocks.Details): each opened by an HTML block whose only <details> or
    </details> is a <details>, closed by the HTML block at its level whose only one is the </details> paired with
    it (inline.details_pairs). A fold whose list item or quote ends first is none: its blocks go back among their
    neighbours. Folds nest at most MAX_FOLD_DEPTH deep (the back ends draw a fold's blocks by drawing it)."""

    def __init__(self, stack: list, foldable: set[int]):
        self.stack = stack  # read_blocks' lists of blocks being filled
        self.foldable = foldable  # the pairs that can make a fold (fold_pairs)
        self.open: list[tuple[b.Details, int]] = []  # each fold and its pair's number, innermost last

    def add(self, html: b.HtmlBlock, tags: list[tuple[bool, int | None]]) -> None:
        """An HTML block in the list being filled: it may open a fold, or close the innermost one there."""
        closes, pair = tags[0] if len(tags) == 1 else (None, None)
        if closes is False and pair in self.foldable and len(self.open) < MAX_FOLD_DEPTH:
            fold = b.Details(html.line, html.end, [html])
            self.stack[-1].append(fold)
            self.stack.append(fold.children)
            self.open.append((fold, pair))
            return
        closes_a_fold = closes and any(opened == pair for _, opened in self.open)
        while closes_a_fold and self.here() and self.open[-1][1] != pair:  # folds inside it not closed before it
            self.undo()
        self.stack[-1].append(html)
        if closes_a_fold and self.here():
            self.open.pop()[0].end = html.end
            self.stack.pop()

    def here(self) -> bool:
        """Whether the list being filled is an open fold's."""
        return bool(self.open) and self.stack[-1] is self.open[-1][0].children

    def unclosed(self) -> None:
        """The list being filled ends (its list item or quote, or the lesson): its open folds are none."""
        while self.here():
            self.undo()

    def undo(self) -> None:
        fold, _ = self.open.pop()
        self.stack.pop()
        siblings = self.stack[-1]
        place = next(index for index, block in enumerate(siblings) if block is fold)
        siblings[place : place + 1] = fold.children


def fence(token, line: int, end: int, read_fence: Callable, reader: Reader, caption_tokens) -> b.Fence:
    found = b.Fence(line, end, token.info, b.fence_language(token.info), token.content)
    try:
        found.role, found.label, found.piece = read_fence(token)
    except ValueError as error:
        found.role = b.Role.UNREAD
        reader.problems.append((line, str(error)))
    if line in caption_tokens:
        found.caption = reader.caption(*caption_tokens[line])
    return found


class Reader:
    """Inline tokens to Inline texts, numbered in document order; how the <details> pair (inline.details_pairs)."""

    def __init__(self, pairs: dict[int, list[tuple[bool, int | None]]], caption_lines: dict[int, int]):
        self.pairs, self.caption_lines, self.count = pairs, caption_lines, 0
        self.problems: list[tuple[int, str]] = []

    def html_block(self, html: str, line: int) -> b.Inline:
        """What the reader sees of an HTML block, as an Inline of its own (no spans: the page draws the HTML)."""
        parts, tags, markup = html_text(html)
        flat = "".join(parts)
        found = b.Inline(self.count, line, html, flat=flat, layout=b.Layout(comments=tags, markup=markup), context=flat,
                         plain=flat.replace(SEPARATOR, ""))
        self.count += 1
        return found

    def inline(self, token) -> b.Inline:
        parts, read = inline_reading(token)
        flat = "".join(parts)
        layout = b.Layout(read["html"], read["marks"], read["described"], read["codes"], read["markup"])
        found = b.Inline(self.count, token.map[0] + 1 if token.map else 0, token.content, flat=flat, layout=layout,
                         context=flat, caption=caption_of(token) is not None)
        self.count += 1
        children = token.children or []
        found.plain = "".join(child.content for child in children if child.type in ("text", "code_inline"))
        starts = list(itertools.accumulate(map(len, parts), initial=0))
        numbers = [(match.start(), match[0]) for match in NUMBER.finditer(flat)]
        found.formulas = dollar_formulas(token.content)
        found.spans, found.formula_problem = self.spans(children, found.formulas, starts, numbers, found.line)
        return found

    def caption(self, token, read: b.Inline) -> b.Inline:
        """A caption's text as the page shows it: without its <a name> and the </a> after it, nor the blanks
        then leading it."""
        children = list(token.children or [])
        anchor_tag = next((i for i, child in enumerate(children) if child.type == "html_inline"), None)
        if anchor_tag is not None:
            closing = next((i for i in range(anchor_tag + 1, len(children)) if children[i].type == "html_inline"
                            and children[i].content.strip().lower() == "</a>"), None)
            children = [child for i, child in enumerate(children) if i not in (anchor_tag, closing)]
        while children and children[0].type == "text" and not children[0].content.strip():
            children.pop(0)
        found = b.Inline(-1, read.line, read.source, formulas=read.formulas)
        reported = len(self.problems)
        found.spans, found.formula_problem = self.spans(children, read.formulas, None, [], read.line)
        del self.problems[reported:]  # its paragraph's reading has said so
        return found

    def spans(self, children: list, dollars: list, starts: list[int] | None, numbers: list,
              line: int) -> tuple[list, bool]:
        """The spans of these children, nested as their tokens open and close, and whether the source's formulas
        (dollars: formulas.dollar_formulas) were not all found in their text. starts: where each child begins in the
        flat text (numbers: (offset there, text)), None for children that stand in no flat text (a
        caption's). Spans nested deeper than MAX_SPAN_DEPTH are a problem (at line, the text's first), as the page
        could draw them only by recursing that deep: the reading itself keeps them all, with a stack."""
        formulas = [(latex, display) for _, latex, display in dollars]
        # $`...`$ (GitHub): a code span between a text ending in $ and one starting with $
        github = {i for i, child in enumerate(children)
                  if child.type == "code_inline" and 0 < i < len(children) - 1
                  and children[i - 1].type == "text" and children[i - 1].content.endswith("$")
                  and children[i + 1].type == "text" and children[i + 1].content.startswith("$")}
        top: list = []
        stack = [top]
        too_deep = False
        used, offsets = 0, [offset for offset, _ in numbers]
        for i, child in enumerate(children):
            kind, into = child.type, stack[-1]
            if i in github:
                into.append(b.Formula(child.content, False, "github", child.content))
            elif kind == "text":
                mine = []
                if starts is not None:
                    first, last = bisect.bisect_left(offsets, starts[i]), bisect.bisect_left(offsets, starts[i + 1])
                    mine = [(offset - starts[i], *rest) for offset, *rest in numbers[first:last]
                            if offset + len(rest[0]) <= starts[i + 1]]
                pieces, used = text_spans(child.content, (i - 1 in github, i + 1 in github), mine,
                                          starts[i] if starts else 0, formulas, used)
                into.extend(pieces)
            elif kind == "code_inline":
                into.append(b.Code(child.content))
            elif kind == "html_inline":
                into.append(b.Html(child.content, unmatched(self.pairs.get(id(child), []))))
            elif kind == "image":
                into.append(b.Image(child.attrs.get("src", ""), child.content))
            elif kind in ("softbreak", "hardbreak"):
                into.append(b.Break(kind == "hardbreak"))
            elif kind == "link_open":
                link = b.Link(str(child.attrs.get("href", "")), child.attrs.get("title"))
                into.append(link)
                stack.append(link.spans)
            elif kind.endswith("_open"):
                styled = b.Styled(child.tag)
                into.append(styled)
                stack.append(styled.spans)
            if len(stack) == MAX_SPAN_DEPTH + 2 and kind.endswith("_open") and not too_deep:
                too_deep = True
                self.problems.append((line, f"emphasis, links or strikethrough nested more than {MAX_SPAN_DEPTH} "
                                      "deep in this paragraph: the page cannot draw them; nest them less deeply"))
            elif kind.endswith("_close") and len(stack) > 1:
                stack.pop()
        return top, used != len(formulas)


def text_spans(content: str, github: tuple[bool, bool], numbers: list, start: int, formulas: list,
               used: int) -> tuple[list, int]:
    """One text child as spans: its $...$ formulas (the next of the paragraph's formulas, as written in the source:
    the parser has already undone the backslash escapes in content), its numbers (offset in this child's flat
    text, text, sentence) and the text between. github: whether its first and last $ belong to a $`...`$ around.
    Returns the spans and how many formulas are used now."""
    first, last = int(github[0]), len(content) - int(github[1])
    events = [(match.start(), "formula", match.end()) for match in INLINE_MATH.finditer(content, first, last)]
    positions = content_positions(content)
    events += [(positions(offset), "number", (offset, text)) for offset, text in numbers]
    pieces, position, formula = [], first, None
    for where, kind, what in sorted(events, key=lambda event: event[0]):
        if where < position:  # a number inside a formula: the formula shows it
            if formula is not None and kind == "number":
                formula.numbers.append(start + what[0])
            continue
        pieces.append(b.Text(content[position:where]))
        if kind == "formula":
            latex, display = formulas[used] if used < len(formulas) else (content[where + 1 : what - 1], False)
            used += 1
            formula = b.Formula(latex, display, "dollar", content[where:what])
            pieces.append(formula)
            position = what
        else:
            offset, text = what
            formula = None
            pieces.append(b.Number(text, start + offset))
            position = where + len(text)
    pieces.append(b.Text(content[position:last]))
    return [piece for piece in pieces if not isinstance(piece, b.Text) or piece.text], used


def content_positions(content: str):
    """A function from a character's offset in the flattened text (inline.inline_parts) to where it is in
    a text child's content: there, each bare URL became one character. The URLs are found once."""
    flat_starts, shifts, shift = [], [0], 0
    for match in BARE_URL.finditer(content):
        flat_starts.append(match.start() - shift)
        shift += len(match[0]) - 1
        shifts.append(shift)
    return lambda offset: offset + shifts[bisect.bisect_left(flat_starts, offset)]
