"""The lesson as typed blocks and spans, what the reading stage (markdown.py) hands every back end: headings,
paragraphs of inline spans, fences with their role, captions, tables, lists, quotes, folds (<details>) and HTML,
each with the lines of MD it stands on. The back ends walk these; none of them sees the Markdown parser's tokens."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


# ---------------------------------------------------------------- inline spans


@dataclass
class Text:
    text: str


@dataclass
class Number:
    """A number as the prose check reads it (inline.NUMBER); the check says whether it is a claim and what it
    cites (ProseNumber, by the Inline's key and this offset)."""

    text: str
    offset: int  # of its first digit in Inline.flat


@dataclass
class Formula:
    """A formula: $...$ or $$...$$ in text (kind "dollar"; latex as written in the source), or GitHub's $`...`$
    (kind "github"). numbers: the offsets in Inline.flat of the numbers written inside it."""

    latex: str
    display: bool
    kind: str
    source: str  # as it stands in the text
    numbers: list[int] = field(default_factory=list)


@dataclass
class Code:
    text: str


@dataclass
class Html:
    html: str
    unmatched: frozenset[int] = frozenset()  # which of its <details> and </details> pair with nothing


@dataclass
class Image:
    src: str
    alt: str


@dataclass
class Break:
    hard: bool


@dataclass
class Link:
    href: str  # as the parser normalised it (percent-encoded)
    title: str | None
    spans: list = field(default_factory=list)


@dataclass
class Styled:
    """Emphasis (tag em) or strong emphasis (tag strong) around its spans."""

    tag: str
    spans: list = field(default_factory=list)


@dataclass
class Inline:
    """The text of a paragraph, heading or table cell: its spans, and the text as the prose checks read it."""

    key: int  # its place among the lesson's inline texts, 0, 1, ... (ProseNumber.inline)
    line: int  # its first line of MD (a table cell: its row's)
    source: str  # as written in MD
    spans: list = field(default_factory=list)
    flat: str = ""  # inline.inline_parts: code, HTML and URLs as one separator, line breaks as \n
    layout: Layout = field(default_factory=lambda: Layout())  # where its code, HTML, emphasis, images stand in flat
    context: str = ""  # what its numbers are read in: its text, or for a table cell the whole row
    plain: str = ""  # its text and code only (a heading's title; of an HTML block, the text a reader sees)
    caption: bool = False  # it opens with a caption's <a name="chunk-|file-|output-...">
    formulas: list[tuple[int, str, bool]] = field(default_factory=list)  # formulas.dollar_formulas of its source
    formula_problem: bool = False  # its $...$ formulas are not all found in its text


@dataclass
class Layout:
    """Where the code, HTML, emphasis and images of a text (Inline.layout) stand in its flat reading: what the
    prose check reads besides the characters (a number split by one of them is refused); no back end draws it."""

    comments: list[tuple[int, str]] = field(default_factory=list)  # (offset in flat, inline HTML)
    marks: list[int] = field(default_factory=list)  # offsets in flat where emphasis or a link opens or closes
    described: list[tuple[int, int]] = field(default_factory=list)  # (start, end) in flat of images' descriptions
    codes: list[tuple[int, str]] = field(default_factory=list)  # (offset in flat, code span's text)
    # (offset in flat, what a reader may see of it): of HTML markup (inline.markup_text: a title, an alt text, a
    # tag the page shows as text) and of a link's or image's title (a tooltip); its numbers are checked, not drawn
    markup: list[tuple[int, str]] = field(default_factory=list)


# ---------------------------------------------------------------- blocks


@dataclass
class Block:
    line: int  # first line of MD, 1-based
    end: int  # its last line, 1-based: lines[line - 1 : end] hold it


@dataclass
class Heading(Block):
    level: int
    inline: Inline


@dataclass
class Paragraph(Block):
    inline: Inline
    tight: bool = False  # in a tight list: drawn without <p>
    display: str | None = None  # the LaTeX of a paragraph that is one $$...$$ formula
    caption_of: int | None = None  # the line of the fence it is the caption of


class Role(enum.Enum):
    """What a fence is to the tools, as its attributes say (fences.fence_attributes)."""

    CHUNK = "chunk"  # a piece of a named chunk: {#name}
    ROOT = "root"  # a piece of a generated file: {file=PATH}
    TRANSCRIPT = "transcript"  # what a program printed, or one part of it: {transcript=PATH part=N}
    PLAYGROUND = "playground"  # code for the reader to change and run: {playground=PATH}
    ILLUSTRATION = "illustration"  # shown, never run: no attributes, or {illustration}
    UNREAD = "unread"  # never closed, unreadable attributes, a path no file may have, a transcript of no program


@dataclass
class Fence(Block):
    """A code fence and what the tools read from it. label: the chunk's name or the path of the file it belongs to
    (a transcript's: its program's); index: which of that label's fences it is (0, 1, ... in document order);
    piece: what tangle reads from it (a model.Piece, the model.Transcript part, the model.Playground; None: an
    illustration); caption: its caption's text, without the <a name> (None: it has none). The lesson's tables of
    chunks, roots, playgrounds and transcripts are gathered from these (fences.index_fences)."""

    info: str
    language: str  # fence_language(info)
    content: str
    role: Role = Role.ILLUSTRATION
    label: str = ""
    index: int = 0
    piece: object = None
    caption: Inline | None = None


@dataclass
class CodeBlock(Block):
    content: str


@dataclass
class HtmlBlock(Block):
    """The author's HTML. text: what the reader sees of it (inline.html_text: its text between tags and comments,
    each of those a separator and listed in its Layout's comments), read by the prose check as a paragraph is."""

    html: str
    unmatched: frozenset[int] = frozenset()
    text: Inline | None = None


@dataclass
class Rule(Block):
    pass


@dataclass
class ListItem(Block):
    children: list = field(default_factory=list)


@dataclass
class ListBlock(Block):
    ordered: bool
    start: int | None = None
    items: list[ListItem] = field(default_factory=list)


@dataclass
class Quote(Block):
    children: list = field(default_factory=list)


@dataclass
class Details(Block):
    """A fold: the HTML block that opens a <details> (its <summary> with it), the blocks it folds, and the HTML block
    that closes it, side by side in one list item, quote or the lesson's top. children holds all of them in that
    order, the opening first and the closing last. A <details> that opens or closes anywhere else (in a
    paragraph, in another list item) stays the HtmlBlock it is."""

    children: list = field(default_factory=list)

    @property
    def opening(self) -> HtmlBlock:
        return self.children[0]

    @property
    def closing(self) -> HtmlBlock:
        return self.children[-1]


@dataclass
class Cell:
    header: bool
    align: str | None
    inline: Inline


@dataclass
class Row(Block):
    cells: list[Cell] = field(default_factory=list)


@dataclass
class Table(Block):
    head: list[Row] = field(default_factory=list)
    body: list[Row] | None = None  # None: no body rows


def fence_language(info: str) -> str:
    """The language a fence's info names: its first word before any {attributes}."""
    return (info.split("{", 1)[0].split() or [""])[0]


def children(block) -> list:
    """The blocks directly inside a block (a list's items, an item's, a quote's or a fold's blocks)."""
    if isinstance(block, ListBlock):
        return block.items
    if isinstance(block, (ListItem, Quote, Details)):
        return block.children
    return []


def walk(blocks: list):
    """Every block in document order, as ("open", block, depth) and, after what is inside it, ("close", block,
    depth); depth 0 at the top. Without recursion, so that lists and quotes nested any depth are safe."""
    stack = [(iter(blocks), None)]
    while stack:
        items, owner = stack[-1]
        block = next(items, None)
        depth = len(stack) - 1
        if block is None:
            stack.pop()
            if owner is not None:
                yield "close", owner, depth - 1
            continue
        yield "open", block, depth
        inner = children(block)
        if inner:
            stack.append((iter(inner), block))
        else:
            yield "close", block, depth


def of_kind(blocks: list, kind: type):
    """Every block of that kind in document order, those in lists, quotes and folds too."""
    return (block for event, block, _ in walk(blocks) if event == "open" and isinstance(block, kind))


def fences(blocks: list):
    return of_kind(blocks, Fence)


def texts(blocks: list):
    """Every Inline of the lesson in document order: each paragraph's, heading's and table cell's."""
    for event, block, _ in walk(blocks):
        if event == "open" and isinstance(block, (Paragraph, Heading)):
            yield block.inline
        elif event == "open" and isinstance(block, Table):
            yield from (cell.inline for row in [*block.head, *(block.body or [])] for cell in row.cells)
