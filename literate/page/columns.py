"""Columns that do not depend on fonts. The programs print their tables for a terminal: a wide character (East
Asian Wide or Fullwidth, 中) takes two columns, a character of "ambiguous" width (— ░ █ · α) one. Fonts disagree
(a proportional CJK fallback is about 1.7 columns wide, Noto Sans Mono CJK draws █ two wide), so each run of
such characters stands in a box of exactly its columns (.w2 is 2 wide characters, 4ch); the text inside is
the same, and copies the same."""

from __future__ import annotations

import itertools
import unicodedata

from ..markup import Markup, join, tag


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
