"""What the page's rendering functions share: the document, the roles of its fences, and what they have found
so far (the numbers linked, the formulas converted, the column boxes used, the problems)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .. import blocks, model
from ..markup import Markup

MAX_CANDIDATES = 256  # a number printed on more lines links to the best of the first 256 (linear time)
# The forms of the ids the page gives: a line of code or of a transcript (L12), a number on one (L12-0.75), a caption
# (chunk-, file-, output-...), the contents and the summary. A heading never takes one (page.heading_id).
OWN_ID = re.compile(r"L[0-9]+(?:-.*)?|(?:chunk|file|output)-.*|contents|verified", re.S)
GENERATOR = "weave.py"  # <meta name="generator">: marks the pages weave.py wrote, the only files it overwrites


@dataclass
class LinkCache:
    """What the page's number links have read so far (page/numbers.py), kept so that the page stays linear in the
    size of the lesson: each text read once."""

    line_words: dict[int, tuple[set[str], set[str]]] = field(default_factory=dict)  # MD line -> its words, numbers
    context_index: dict[tuple, int] = field(default_factory=dict)  # (Inline key, span) -> index of its text
    text_index: dict[str, int] = field(default_factory=dict)  # a context's text -> its index in texts
    texts: list[str] = field(default_factory=list)
    context_words: dict[int, tuple[set[str], set[str]]] = field(default_factory=dict)  # index -> words, numbers
    best: dict[tuple, int] = field(default_factory=dict)  # (number, program, contexts) -> the line it links
    number_places: dict[int, dict[str, int]] = field(default_factory=dict)  # long MD line -> number -> where first
    sentence_ends: dict[int, list[int]] = field(default_factory=dict)  # Inline key -> where its sentences end


@dataclass
class Page:
    """What the rendering functions share: the document, and what they have found so far."""

    doc: model.Document
    # Inline key -> the offset of each of its prose numbers -> (the number, the transcript lines printing it)
    numbers: dict[int, dict[int, tuple[model.ProseNumber, list[int]]]]
    transcript_text: dict[int, str]  # MD line -> the transcript line printed there
    used_in: dict[str, list[tuple[int, str]]]  # chunk name -> (MD line of <<name>>, label of the piece using it)
    ids: set[str] = field(default_factory=set)
    heading_counts: dict[str, int] = field(default_factory=dict)  # a heading's anchor -> how many have it
    headings: list[tuple[int, str, str]] = field(default_factory=list)  # (level, id, text)
    linked: list[tuple[model.ProseNumber, int]] = field(default_factory=list)  # number, transcript line
    targets: dict[int, set[str]] = field(default_factory=dict)  # MD line -> the numbers a prose link may land on
    links: LinkCache = field(default_factory=LinkCache)
    formulas: dict[tuple[str, bool], Markup] = field(default_factory=dict)  # (LaTeX, display) -> its MathML
    figures: dict[str, Markup] = field(default_factory=dict)  # a figure's path -> its drawing (figures.py)
    figure_sources: set[tuple[str, int]] = field(default_factory=set)  # (program, fence index) a figure draws
    widths: set[tuple[str, int]] = field(default_factory=set)  # the column boxes used (see columns)
    in_formulas: int = 0
    heatmaps: int = 0
    problems: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- the document's parts


def uses(doc: model.Document) -> dict[str, list[tuple[int, str]]]:
    found: dict[str, list[tuple[int, str]]] = {}
    for pieces in [*doc.roots.values(), *doc.chunks.values()]:
        for piece in pieces:
            for line, name in model.references([piece]):
                found.setdefault(name, []).append((line, piece.label))
    return {name: sorted(lines) for name, lines in found.items()}


def piece_id(role: blocks.Role, label: str, index: int) -> str:
    """The id of a chunk's or root's index-th fence: its caption's anchor."""
    return (model.root_anchor if role is blocks.Role.ROOT else model.chunk_anchor)(label, index + 1)


# ---------------------------------------------------------------- the page
