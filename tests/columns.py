"""When does a transcript's table line up in any monospace font? The rule the tests hold every transcript to.

A terminal (and GitHub, and most editors, when their font has CJK glyphs of exactly two columns) draws a CJK
character two columns wide. Many fonts do not: JupyterLab's output font draws one 13 px wide against 2 × 7.8 px.
Two lines that start a column at the same terminal position then stay in line only if both have the same number of
wide characters before it. A table whose labels come after its numbers (or whose header carries as many wide
characters as its rows) aligns in any font; a Chinese header over numbers does not."""

from __future__ import annotations

import re
import unicodedata


def display_width(text: str) -> int:
    """Columns a terminal gives the text: CJK characters count 2. (░▓█· count one, as terminals and the usual
    monospace fonts draw them.)"""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def blocks(lines: list[str]) -> list[list[str]]:
    """The lines cut at blank lines: each piece is one table, picture or paragraph."""
    found, block = [], []
    for line in lines + [""]:
        if line.strip():
            block.append(line)
        elif block:
            found.append(block)
            block = []
    return found


def is_table_line(line: str) -> bool:
    """A row of a table or picture: a line with two spaces in a row between two of its words, or an indented line of
    numbers (column numbers over a picture). A sentence, indented or not, has its words one space apart and lines
    up with nothing."""
    return re.search(r"\S  +\S", line) is not None or (line.startswith(" ") and line.isascii())


def column_edges(line: str) -> dict[int, tuple[int, object, int]]:
    """Where a column starts or ends in a line, as the terminal counts columns: {edge: (wide characters before it,
    whether it stands beside a gap, index of its character)}. Starts are positive, ends negative (a start and an end
    never meet). A gap is two or more spaces or the line's start; a line's end is marked "line end" when its last
    word is numbers or other ASCII (a right-aligned column). A Chinese label's end lines up with nothing: labels are
    ragged, and browsers draw two full-width punctuation marks side by side narrower (text-spacing-trim)."""
    edges, column, wide = {}, 0, 0
    for i, char in enumerate(line):
        if char != " " and (i == 0 or line[i - 1] == " "):
            edges[column] = (wide, i < 2 or line[i - 2] == " ", i)
        column += display_width(char)
        wide += display_width(char) - 1
        if char != " " and (i + 1 == len(line) or line[i + 1] == " "):
            at_end = "line end" if line.rsplit(" ", 1)[-1].isascii() else False    # a label's end is no edge
            edges[-column] = (wide, at_end if i + 1 == len(line) else i + 2 == len(line) or line[i + 2] == " ", i)
    return edges


def columns_meet(a: object, b: object) -> bool:
    """Two edges at one terminal column are meant to line up if either stands beside a gap, or both end their lines
    (a table's right edge); a label's last word ending where another line has a word is chance."""
    return a is True or b is True or a == b == "line end"


def shared_edges(block: list[str]) -> list[tuple[int, int, int, int, int]]:
    """Every place two of the block's table lines are meant to line up: (line a, its character, line b, its
    character, edge), lines counted in the block, edges as in column_edges."""
    table = [(n, column_edges(line)) for n, line in enumerate(block) if is_table_line(line)]
    return [(a, edges_a[edge][2], b, edges_b[edge][2], edge)
            for i, (a, edges_a) in enumerate(table) for b, edges_b in table[i + 1:]
            for edge in edges_a if edge in edges_b and columns_meet(edges_a[edge][1], edges_b[edge][1])]


def misaligned(block: list[str]) -> list[tuple[str, str, int]]:
    """The places where two lines meant to line up have different numbers of wide characters before them: in a font
    whose CJK characters are not exactly two columns wide they do not line up."""
    edges = [column_edges(line) for line in block]
    return [(block[a], block[b], edge) for a, _, b, _, edge in shared_edges(block)
            if edges[a][edge][0] != edges[b][edge][0]]
