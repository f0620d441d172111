"""The parsed lesson: pieces of code, chunks and roots, transcripts and their parts, captions, prose numbers;
the errors every stage raises, the limits and the names shared by the stages (anchors, references)."""

from __future__ import annotations

import bisect
import itertools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .declarations import Declarations


OK, DIFFERENT, BAD_INPUT = 0, 1, 2
# Bounds on what tangle.py reads, writes and nests: a lesson is a few hundred KB, its programs a few
# thousand lines nested a few chunks deep (markdown-it takes up to ~12 s per MiB of pathological input).
DEFAULT_LESSON = "attention.md"  # the lesson a command reads when none is named
MAX_MARKDOWN_BYTES = 1 << 20
MAX_GENERATED_BYTES = 16 << 20  # all the generated files together
MAX_DEPTH = 100  # chunks included in chunks included in ...
MAX_SUGGESTIONS = 20  # "did you mean" for the first errors only: each compares every name (difflib)
MAX_NAME = 300  # characters of a chunk name or a path: every message that names one stays short
MAX_PATH_DEPTH = 32  # folders in a root's path (a path thousands deep is no lesson's, and no file system's)
MAX_MESSAGE = 2000  # characters of one error line; beyond, it says how many more there were
LINE_BREAKING = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # never in a name written into a comment
# the language words that name Python, as GitHub and the highlighters read them: any case, a version after it
PYTHON_LANGUAGE = re.compile(r"(?:python|py)(?:[23](?:\.[0-9]+)?)?", re.I)
HASH_COMMENT_SUFFIXES = (".py", ".sh", ".toml", ".yaml", ".yml", ".cfg", ".ini")
# a line holding one <<name>> and nothing else; a name holds no << or >> (it may end in one >), so two
# references on one line are none
REFERENCE = re.compile(r"^([ \t]*)<<((?:(?!<<|>>).)+>?)>>[ \t]*$")
REFERENCE_LIKE = re.compile(r"^[ \t]*<<.*>>")  # what a reader takes for a reference line
LINE_WITH_END = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


class UserError(Exception):
    """A mistake in the input or the command line: its messages are printed, exit 2."""

    code = BAD_INPUT

    def __init__(self, *messages: str):
        super().__init__(*messages)
        self.messages = messages


class Conflict(UserError):
    """A file changed under us, or another update holds the lock: nothing written, exit 1."""

    code = DIFFERENT


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the program is, like Ctrl-C, so that every finally runs."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@dataclass
class Piece:
    """The code of one fence: part of a named chunk or of a root."""

    fence_line: int  # 1-based line of the opening fence
    label: str  # chunk name, or the root's path
    lines: list[str]
    language: str = ""  # the fence's language word (python), which the page highlights

    @property
    def first_line(self) -> int:
        return self.fence_line + 1


@dataclass
class Transcript:
    """A program's documented stdout. In doc.transcripts, one per program: content is the whole output,
    and parts its fences in document order (a single fence, or {transcript=PATH part=1}, part=2, ...),
    each a Transcript of its own with part set; fence_line, closing_line and markup are the first part's."""

    fence_line: int  # 1-based line of the opening fence
    closing_line: int  # 1-based line of the closing fence
    content: str
    markup: str
    part: int | None = None  # N of part=N; None: the fence holds the whole output
    parts: list[Transcript] = field(default_factory=list)
    starts: list[int] | None = field(default=None, repr=False, compare=False)  # md_line's: output line of each part

    @property
    def first_line(self) -> int:
        return self.fence_line + 1

    def pieces(self) -> list[Transcript]:
        """The fences that hold this output, in document order (itself, for a single fence)."""
        return self.parts or [self]

    def md_line(self, index: int) -> int:
        """The Markdown line of output line index (0-based); past the end: the last part's closing fence. Where each
        part begins in the output is counted once, then each question is a bisection."""
        if self.starts is None:
            self.starts = list(itertools.accumulate((len(output_lines(piece.content)) for piece in self.pieces()),
                                                    initial=0))
        part = bisect.bisect_right(self.starts, index) - 1
        if part >= len(self.pieces()):
            return self.pieces()[-1].closing_line
        return self.pieces()[part].first_line + index - self.starts[part]


@dataclass
class Playground:
    """A fence the lesson offers the reader to change and run ({playground=PROGRAM}): not tangled, not checked;
    it uses the names that PROGRAM defines, and the tests run it (in the notebook)."""

    fence_line: int
    program: str
    lines: list[str]
    language: str = ""


@dataclass(frozen=True)
class Caption:
    """The paragraph just above a fence that names it: <a name="ANCHOR"></a>**〈TITLE〉**, then, for code that
    includes chunks, links to them in order (see docs/tangle.md)."""

    line: int  # 1-based line of the caption paragraph
    anchor: str  # the value of its <a name="...">
    title: str  # its bold text, blanks collapsed
    links: tuple[str, ...]  # the anchors its #links point at, in order (percent-decoded, without #)
    fence_line: int | None  # the fence just below it; None: no fence follows


@dataclass
class Document:
    path: Path
    shown: str  # the path as the user wrote it, for messages
    roots: dict[str, list[Piece]] = field(default_factory=dict)
    chunks: dict[str, list[Piece]] = field(default_factory=dict)
    transcripts: dict[str, Transcript] = field(default_factory=dict)
    captions: dict[int, Caption] = field(default_factory=dict)  # fence line -> the caption just above it
    blocks: list = field(default_factory=list)  # the lesson as typed blocks (blocks.py), what the back ends walk
    warnings: list[str] = field(default_factory=list)
    playgrounds: dict[int, Playground] = field(default_factory=dict)  # fence line -> the playground there
    declared: Declarations = field(default_factory=Declarations)  # what the lesson declares for the tools
    language: str = "zh"  # zh or en: declared, or its prose's (language.py)
    lines: list[str] = field(default_factory=list)  # the text as parsed, line by line (line ends \n)
    raw: bytes = b""  # the file as load() read it: update writes only if it still is
    bom: bool = False

    @property
    def folder(self) -> Path:
        return self.path.parent

    def where(self, line: int) -> str:
        return f"{self.shown}:{line}"

    def target_shown(self, target: str) -> str:
        return os.path.join(os.path.dirname(self.shown), target)


@dataclass(frozen=True)
class Source:
    """What reading the Markdown saw besides the Document, kept for the checks that refuse what the document says
    (markdown.SOURCE_CHECKS); the back ends read the Document alone."""

    tokens: list  # the parser's tokens (markdown-it's), in document order
    references: dict  # the link reference definitions, by label as the parser keeps it (upper case)
    captions: list[Caption]  # every caption found, those above no fence too (doc.captions keeps the others)


@dataclass(frozen=True)
class ProseNumber:
    line: int
    text: str
    book: bool  # marked as the book's: inside a 原书 span or column
    program: str  # the program whose transcript it cites
    cited_on: int | None = None  # line of the <!-- 数字出自 --> comment; None: its section's default
    # Where it stands, for the page: the key of the text (blocks.Inline) holding it, and the offset of its first
    # digit in that text's flat reading (the blocks.Number there).
    inline: int = field(default=-1, compare=False)
    offset: int = field(default=-1, compare=False)
    drawn: bool = field(default=True, compare=False)  # the page draws it in its text (not in HTML, nor an image's alt)
    printed: str = field(default="", compare=False)  # what it quotes, if a rounding: the number printed (0.4102)
    sign: str = ""  # the sign written before it: "-" (also − and －), "+", or "" (none: a magnitude, either sign)
    setting: bool = False  # a whole number before a measure word (3000 轮): passes where the program declares it
    declared: bool = field(default=False, compare=False)  # passed as a setting the program declares, not printed
    setting_name: str = field(default="", compare=False)  # ... the name of that setting (ROUNDS), where known
    said: str = field(default="", compare=False)  # its sentence (a table cell: its row), itself marked ⟦ ⟧ (quoting)
    quotes: int = field(default=0, compare=False)  # the MD line of the transcript line it quotes, where one is known
    stated: str = field(default="", compare=False)  # listed as no quote: why (quoting.NOT_A_QUOTE)


def quoted(text: str, width: int = 60) -> str:
    """Text from the input as a message quotes it: repr'd (controls escaped), at most about width characters."""
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def counted(count: int, noun: str, plural: str = "") -> str:
    """1 playground, 2 playgrounds: a count and its noun, in English (plural: where it is no noun + s)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def chunk_name(text: str) -> str:
    """A chunk's name as the lesson means it, in {#name} and in <<name>> alike: runs of blanks one space."""
    return " ".join(text.split())


def reference(code: str) -> tuple[str, str] | None:
    """(indentation, chunk name) of a line that holds only a <<reference>>; None for any other line."""
    match = REFERENCE.match(code)
    return (match[1], chunk_name(match[2])) if match else None


def references(pieces: list[Piece]):
    """(md line, chunk name) of every <<reference>> line in these pieces."""
    for piece in pieces:
        for offset, code in enumerate(piece.lines):
            found = reference(code)
            if found:
                yield piece.first_line + offset, found[1]


def walk(chunks: dict[str, list[Piece]], pieces: list[Piece], seen: set[str]):
    """Depth first over the chunks that these pieces include, in the order tangle expands them, without recursion
    (any depth is safe), each chunk once over all the walks that share seen: ("enter", line, name, path) at a
    <<reference>> to a chunk not seen yet, ("leave", line, name, path) when its own references are done, and
    ("again", line, name, path) at a reference to a chunk seen already; path: the chunks the walk is inside,
    outermost first. A reference to no chunk is passed over."""
    stack, path = [references(pieces)], []
    while stack:
        line, name = next(stack[-1], (None, None))
        if name is None:
            stack.pop()
            if path:
                name, line = path.pop()
                yield "leave", line, name, [name for name, _ in path]
        elif name not in chunks:
            continue
        elif name in seen:
            yield "again", line, name, [name for name, _ in path]
        else:
            seen.add(name)
            yield "enter", line, name, [name for name, _ in path]
            path.append((name, line))
            stack.append(references(chunks[name]))


def comment_safe(name: str) -> str:
    """A name as it may stand in a # comment: no character that some reader takes for a line break."""
    return LINE_BREAKING.sub(lambda match: match[0].encode("unicode_escape").decode(), name)


def location_comment(source: str, label: str) -> tuple[str, str]:
    """The `# MD:LINE (chunk)` comment above each piece in a generated file, as the text before its line number
    and the text after it: the one form that tangle writes, stitch reads and the size bound counts."""
    return f"# {comment_safe(source)}:", f" ({comment_safe(label)})"


CAPTION_ANCHOR = re.compile(r'<a\s+name="((?:chunk|file|output)-[^"]*)"\s*>', re.I)
OWN_LINK = re.compile(r"#((?:chunk|file|output)-.*)", re.S)  # a link to a caption's anchor


def anchor_text(text: str) -> str:
    """A name as it stands in an anchor: runs of blanks become one _ (GitHub keeps every other character)."""
    return re.sub(r"\s+", "_", text.strip())


def chunk_anchor(name: str, index: int = 1) -> str:
    """The anchor of the caption of a named chunk's index-th fence (1: the first)."""
    return f"chunk-{anchor_text(name)}" + (f"-{index}" if index > 1 else "")


def root_anchor(target: str, index: int = 1) -> str:
    return f"file-{anchor_text(target)}" + (f"-{index}" if index > 1 else "")


def output_anchor(target: str, part: int | None = None) -> str:
    return f"output-{anchor_text(target)}" + (f"-{part}" if part else "")


def output_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def fence_runs(marker: str, text: str) -> list[str]:
    """The runs of fence characters on the lines of text that would close a fence of that marker."""
    return re.findall(rf"(?m)^ {{0,3}}({re.escape(marker)}+)[ \t]*$", text)


def blank(line: str) -> bool:
    """A line of spaces and tabs only, which tangle writes empty. Only those: a line of no-break or ideographic
    spaces can be inside a string literal, and code is written exactly as the lesson has it."""
    return not line.strip(" \t")

