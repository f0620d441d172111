"""What the page's rendering functions share: the document, the roles of its fences, and what they have found
so far (the numbers linked, the formulas converted, the column boxes used, the problems)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import model
from .markup import Markup

MAX_CANDIDATES = 256  # a number printed on more lines links to the best of the first 256 (linear time)
GENERATOR = "weave.py"  # <meta name="generator">: marks the pages weave.py wrote, the only files it overwrites


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


def piece_id(kind: str, label: str, index: int) -> str:
    return (model.root_anchor if kind == "root" else model.chunk_anchor)(label, index + 1)


# ---------------------------------------------------------------- the page
