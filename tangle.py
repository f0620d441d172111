#!/usr/bin/env python3
"""Tangle the code fences of a literate Markdown lesson into programs, and check
that the transcript and the numbers in its prose are what the program prints.

usage: python tangle.py {tangle,check,update} [MD] [options]     (MD: ./attention.md)

  tangle   write every root chunk (generated/attention.py ...). Writes a file only
           when its content changes, atomically. Refuses to overwrite a generated
           file that was edited by hand (exit 2) unless --force.
  check    (1) generated/ must be what MD tangles to (else exit 1: run make tangle);
           (2) run every program that has a transcript, compare its stdout byte for
           byte with the transcript: a difference is shown as a diff numbered by
           MD's lines, after a verdict ("only numbers changed ... floating-point
           drift" or "text/layout changed"); a crash as its traceback with frames
           pointing at MD:LINE (chunk); (3) check the numbers in the prose (below)
           against the transcript each one cites.
           Prints a summary line; exit 0 if all agree, 1 otherwise.
  update   run each program twice; if both runs print the same, rewrite its
           transcript in MD in place (every other byte untouched; a transcript in
           parts part by part, see below) and re-tangle (code below a transcript
           moves); then list every prose number that the transcript it cites does
           not print (exit 1 if any).
  --progress (check, update) show what the program writes to stderr while it runs,
           each line prefixed with its path, up to a traceback; its stdout (the
           transcript) is untouched. make update/experiments set ATTENTION_PROGRESS=1,
           which makes the lesson's programs report each training there.

  Nothing is lost: update writes MD only if it still holds the bytes it read (an
  edit saved meanwhile is kept; exit 1, run it again), through symlinks, keeping
  the file's mode; a second update of the same MD gives up at once (flock). Each
  program runs in its own process group: on the timeout, Ctrl-C or SIGTERM the
  whole group is killed and temporary files removed (exit 130 after Ctrl-C, 143
  after SIGTERM). MD and the targets must be regular files; MD is at most 1 MiB, the
  generated files 16 MiB in all, chunks nest at most 100 deep. A generated file that
  differs from what MD tangles to only in CRLF line ends or its hash line is in sync.

examples:
  python tangle.py tangle                  # write generated/ from ./attention.md
  python tangle.py tangle --force          # overwrite hand edits in generated/
  python tangle.py check docs/lesson.md    # verify another lesson
  python tangle.py update                  # record the program's new output
  python tangle.py check --only generated/attention.py   # run one program only
  ATTENTION_PROGRESS=1 python tangle.py check --only generated/experiments.py --progress

Chunks (Entangled-style; the language word comes first so GitHub renders it):
  ```python {file=generated/attention.py}   root chunk, written to that path, relative
                                            to the folder of MD (no absolute paths, no
                                            ..). Repeating a file= appends to it.
  ```python {#训练 循环}                    named chunk. The name runs from # to the
                                            closing }; runs of spaces count as one.
                                            Repeating a name appends to the chunk.
  <<训练 循环>>                             a line holding only a reference (any
                                            indentation) includes that chunk there,
                                            re-indented, recursively.
  ```text {transcript}                      the documented stdout of the only .py root;
  ```text {transcript=generated/b.py}       ... or of the root named, when there are
                                            several. One per program, or:
  ```text {transcript=generated/b.py part=1}
  ```text {transcript=generated/b.py part=2}  ... the output in parts, shown where the
                                            text discusses them: numbered 1, 2, ... in
                                            document order, the output is their
                                            concatenation. check compares the whole and
                                            reports each part that differs at its own
                                            lines. update cuts the new output where each
                                            part N >= 2 begins: at the one line equal to
                                            the part's present first line. So a part
                                            never starts empty nor with a line the output
                                            prints twice (an input error, exit 2); if the
                                            new output no longer prints that line once,
                                            in order, update writes nothing (exit 1):
                                            begin the part with a line that does not
                                            change (a heading the program prints).
  A fence takes either #name, file= or transcript. Roots must be files that take
  # comments (.py .sh .toml .yaml .yml .cfg .ini); only .py roots are run.
  Fences without braces are illustrations, except that a python fence without
  #name or file= is an error (code the reader sees but that never runs). Fences
  inside HTML comments are not code; fences in list items and quotes are.
  The generated file starts with a do-not-edit banner and the sha256 of the rest
  (how tangle spots hand edits); each piece is preceded by `# MD:LINE (chunk)`.
  A transcript fence holds exactly the program's stdout, which must therefore end
  with a newline; update lengthens the fence when the output contains one.
  A ```math fence (and any other language) is an illustration; $`...`$ in text is a
  code span: neither is read for prose numbers. A $$...$$ or $...$ formula in text
  gets a warning (GitHub's Markdown eats the backslash of \\, and \\! and reads _ as
  emphasis there).

Captions (optional; once MD has one, every chunk, root and transcript fence needs
its own, and each link to a caption must lead to one). A caption is the paragraph
just above the fence (a blank line between is fine):
  <a name="chunk-训练_循环"></a>**〈训练 循环〉**              {#训练 循环} (its 2nd
                                            fence: chunk-训练_循环-2, 〈训练 循环〉（续）)
  <a name="file-generated/a.py"></a>**〈generated/a.py〉**，由这些代码块依次拼成：
      [〈训练 循环〉](#chunk-训练_循环)、[〈打印〉](#chunk-打印)
                                            {file=generated/a.py}: code that includes
                                            chunks links to each, in the order of its
                                            <<references>> (one paragraph, one line)
  <a name="output-generated/a.py-2"></a>**〈generated/a.py〉的实跑输出（第 2 段）**
                                            {transcript=generated/a.py part=2}; a whole
                                            transcript: output-generated/a.py, ...的实跑输出
  The anchor is chunk-/file-/output- and the name with blanks as _; GitHub keeps
  <a name> (as user-content-...) and follows #links to it, and so do browsers.
  A missing caption, one whose anchor or **bold name** is not the fence's (a renamed
  chunk), a link list that differs from the references, a caption above no fence
  and a link to no caption are input errors (exit 2) that spell out the caption to
  write. Captions are names, not prose: their numbers are not checked.

Prose numbers (part of check and update):
  Prose is the inline text of paragraphs, list items, quotes and table cells:
  not code spans, fences, headings, HTML or link targets. A number is a run of
  digits with an optional decimal part not touching ASCII letters, digits, _ or
  another .digits (so W1, x2, 6.5.1 and 1e-16 are not numbers; Chinese text may
  touch).
  Exempt: single-digit integers; a number followed, after at most one space, by
  one of 年 章 节 位 维 轮 步 列 行 层 种 套 头 秒.
  Every other number cites one transcript, and must appear there with exactly
  the same digits (sign ignored: 0.8707 matches +0.8707, but 0.25 does not match
  0.2500); another transcript printing it does not count. Which one it cites:
    by default, by section: a section starts at line 1 and at every # or ##
    heading (### and deeper stay in their section); it cites the program whose
    transcript (or a part of it) it holds (the first, if it holds several), or,
    holding none, the main program: the one whose transcript comes first in MD.
    (In attention.md all sections cite generated/attention.py except 「## 30 秒实验」,
    which holds the transcript of generated/experiments.py.)
    <!-- 数字出自 generated/experiments.py -->
                  alone on its line before a paragraph, list, quote or table
                  (a blank line between is fine): that whole block cites it.
    前一句 0.2303；<!-- 数字出自 generated/experiments.py -->这一句 0.9500。
                  inside a paragraph or cell: the numbers after it, up to the
                  end of its sentence (。；！？ or the end of the paragraph or
                  cell), cite it. It wins over a block comment.
    The path is a program that has a transcript, as in {transcript=PATH}; HTML
    comments are invisible on GitHub.
  The book's figures: a number from the word 原书 to the end of its sentence
  (。；！？, the word 本仓库, or the end of the paragraph or cell), or in a table
  column whose header cell contains 原书, is marked as the book's. It passes if
  book_figures.txt beside MD lists it (one number a line, as the book prints
  it; # starts a comment); otherwise it is checked as ours, like any other.
  The list is read only when MD marks a number as the book's.
  A number that fails is reported, and exit 1:
    MD:LINE: error: 0.2303 is not printed by generated/attention.py (its section's transcript; nearest: 0.230)
    MD:LINE: error: 0.9400 is marked as the book's (原书) but the book does not print it (not in
             book_figures.txt), nor does generated/attention.py (...)
  each followed by "; generated/experiments.py prints it: ..." when another
  transcript does. A <!-- 数字出自 --> comment that cannot be read, names no
  program with a transcript or stands before no block, and a missing or
  malformed book_figures.txt, are errors in the input (exit 2, before any run).

Errors in the input are reported as `MD:LINE: error: ...` on stderr, exit 2.
Exit status: 0 ok, 1 check found a difference, 2 bad input or usage.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import contextlib
import ctypes
import difflib
import errno
import hashlib
import html
import itertools
import os
import posixpath
import re
import selectors
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import unquote

if sys.version_info < (3, 10):
    print(f"tangle.py: error: needs Python 3.10 or newer, this is {sys.version.split()[0]}; "
          "run make clean, then make PYTHON=python3.12 (any 3.10 or newer)", file=sys.stderr)
    raise SystemExit(2)

try:
    from markdown_it import MarkdownIt
except ImportError:  # run outside the project's .venv, or a .venv that is broken
    print("tangle.py: error: needs markdown-it-py; use make (it builds .venv), or pip install -r "
          "requirements.txt; if .venv exists but is broken, run make clean first", file=sys.stderr)
    raise SystemExit(2) from None

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, so nothing stops two updates of one file there
    fcntl = None

OK, DIFFERENT, BAD_INPUT = 0, 1, 2
POSIX = os.name == "posix"
INTERRUPTS = [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)]
# Bounds on what tangle.py reads, writes and nests: a lesson is a few hundred KB, its programs a few
# thousand lines nested a few chunks deep (markdown-it takes up to ~12 s per MiB of pathological input).
MAX_MARKDOWN_BYTES = 1 << 20
MAX_GENERATED_BYTES = 16 << 20  # all the generated files together
MAX_OUTPUT_BYTES = 16 << 20  # per stream of one run
MAX_BOOK_FIGURES_BYTES = 1 << 20  # a list of a few hundred numbers
MAX_DEPTH = 100  # chunks included in chunks included in ...
MAX_TIMEOUT = 1e6
PR_SET_CHILD_SUBREAPER = 36  # prctl(2), Linux
HELD_GRACE = 2.0  # seconds a program's leftovers may hold its output after it exits
# Invisible characters that Markdown, Python and editors read differently (markdown-it turns NUL
# into U+FFFD; str.splitlines breaks at \x0b, \x1c-\x1e and \x85). Tab, LF, CR and form feed are fine.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
OUTPUT_CONTROL = re.compile(r"[\x00-\x08\x0b\x0d-\x1f\x7f-\x9f]")  # and CR: a transcript holds plain lines
# Bidi controls and characters that show nothing (zero-width space, joiners, word joiner, BOM, soft hyphen):
# refused in code and names, where they make code read differently from how it runs ("Trojan Source").
INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
MAX_SUGGESTIONS = 20  # "did you mean" for the first errors only: each compares every name (difflib)
LINE_BREAKING = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # never in a name written into a comment
PYTHON_LANGUAGES = {"python", "py", "python3"}
HASH_COMMENT_SUFFIXES = (".py", ".sh", ".toml", ".yaml", ".yml", ".cfg", ".ini")
BANNER = "# Generated from {source} by tangle.py — do not edit; edit {source} and run make tangle."
HASH_LINE = "# sha256 of the lines below: {digest}"
RUN_ENV = {
    "PYTHONIOENCODING": "utf-8",
    "PYTHONUTF8": "1",
    "PYTHONHASHSEED": "0",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}  # no MALLOC_*: the lesson's program sets glibc's allocator thresholds itself (its appendix)
REFERENCE = re.compile(r"^([ \t]*)<<(.+?)>>[ \t]*$")
LINE_WITH_END = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(?<![0-9][eE][+-])[0-9]+(?:\.[0-9]+)?(?![A-Za-z0-9_]|\.[0-9])")
UNIT_AFTER = re.compile(r" ?[年章节位维轮步列行层种套头秒]")
BOOK_WORD, BOOK_SPAN_END = "原书", re.compile(r"[。；！？]|本仓库")
SENTENCE_END = re.compile(r"[。；！？]")
BOOK_FIGURES = "book_figures.txt"  # beside MD: the figures the book prints, one a line
CITATION_WORD = "数字出自"  # <!-- 数字出自 PATH -->: the numbers of the next block (or sentence) come from PATH
CITING_BLOCKS = ("paragraph_open", "bullet_list_open", "ordered_list_open", "blockquote_open", "table_open")
BARE_URL = re.compile(r"\b(?:https?|ftp)://[!-~]+|\bwww\.[!-~]+")
SIGNED_NUMBER = re.compile(r" *[+-]?[0-9]+(?:\.[0-9]+)?")
FRAME = re.compile(r'^(\s*)File "([^"]+)", line (\d+)(.*)$')
CAUSE = "The above exception was the direct cause of the following exception:"
CONTEXT = "During handling of the above exception, another exception occurred:"


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

    @property
    def first_line(self) -> int:
        return self.fence_line + 1

    def pieces(self) -> list[Transcript]:
        """The fences that hold this output, in document order (itself, for a single fence)."""
        return self.parts or [self]

    def md_line(self, index: int) -> int:
        """The Markdown line of output line index (0-based); past the end: the last part's closing fence."""
        for piece in self.pieces():
            count = len(output_lines(piece.content))
            if index < count:
                return piece.first_line + index
            index -= count
        return self.pieces()[-1].closing_line


@dataclass(frozen=True)
class Caption:
    """The paragraph just above a fence that names it: <a name="ANCHOR"></a>**〈TITLE〉**, then, for code that
    includes chunks, links to them in order (see the module docstring)."""

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
    tokens: list = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
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
class ProseNumber:
    line: int
    text: str
    book: bool  # marked as the book's: inside a 原书 span or column
    program: str  # the program whose transcript it cites
    cited_on: int | None = None  # line of the <!-- 数字出自 --> comment; None: its section's default
    # Where it stands, for weave.py: the inline token (of Document.tokens) holding it, and the offset
    # of its first digit in flatten_inline(token)[0].
    token: object = field(default=None, compare=False, repr=False)
    offset: int = field(default=-1, compare=False)


@dataclass(frozen=True)
class Run:
    returncode: int | None  # None: stopped by tangle.py, for the reason in why
    stdout: bytes
    stderr: bytes
    why: str = ""  # "timeout", "held" (it exited, something it started kept the output open) or "output"


# ---------------------------------------------------------------- reading


def describe(error: OSError) -> str:
    return "a symlink loop" if error.errno == errno.ELOOP else (error.strerror or str(error)).lower()


def file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


def read_regular(path: Path, shown: str, limit: int) -> bytes | None:
    """The bytes of a regular file (through symlinks), None if there is none. Checks with stat
    before opening, so that a FIFO or a device never blocks or floods us; at most limit bytes."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"{shown}: error: is {file_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise UserError(f"{shown}: error: too large ({info.st_size:,} bytes; the limit is {limit >> 20} MiB)")
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        with os.fdopen(os.open(path, flags), "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):  # swapped since the stat
                raise UserError(f"{shown}: error: is no longer a regular file")
            data = file.read(limit + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise UserError(f"{shown}: error: cannot read it: {describe(error)}") from None
    if len(data) > limit:
        raise UserError(f"{shown}: error: too large (more than {limit >> 20} MiB)")
    return data


def decode_markdown(raw: bytes, shown: str) -> tuple[str, bool]:
    """The file's text with its own line endings, and whether it had a BOM."""
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        return raw.decode("utf-8-sig"), bom
    except UnicodeDecodeError as error:
        line = len(LINE_WITH_END.findall(raw[: error.start].decode("utf-8", "replace") + "x"))
        bad = raw[error.start : error.start + 1].hex()
        raise UserError(f"{shown}:{line}: error: not UTF-8 (byte 0x{bad}); save the file as UTF-8") from None


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def markdown_parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def load(path: Path, shown: str) -> Document:
    """Read and parse the Markdown; print its warnings."""
    if LINE_BREAKING.search(path.name):
        raise UserError(f"{ascii(shown)}: error: the file's name holds a control character or line break, "
                        "which would end up in the generated files' comments; rename it")
    raw = read_regular(path, shown, MAX_MARKDOWN_BYTES)
    if raw is None:
        raise UserError(f"{shown}: error: no such file")
    text, bom = decode_markdown(raw, shown)
    doc = parse_document(path, shown, normalize_newlines(text))
    doc.raw, doc.bom = raw, bom
    problems = [f"{doc.where(pieces[0].fence_line)}: error: {problem}"
                for target, pieces in doc.roots.items() for problem in [existing_target_problem(doc, target)]
                if problem]
    if problems:
        raise UserError(*problems)
    print(*doc.warnings, sep="\n", file=sys.stderr, end="\n" if doc.warnings else "")
    return doc


def existing_target_problem(doc: Document, target: str) -> str | None:
    """Why what is at a root's path cannot be a generated file (absent is fine)."""
    try:
        info = os.stat(doc.folder / target)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            return f"file={target} is a symlink loop; remove it, then run make tangle"
        return f"file={target}: {describe(error)}"
    if stat.S_ISDIR(info.st_mode):
        return f"file={target} is a directory"
    if not stat.S_ISREG(info.st_mode):
        return f"file={target} is {file_kind(info.st_mode)}, not a regular file; remove it, then run make tangle"
    return None


# ---------------------------------------------------------------- parsing


def parse_document(path: Path, shown: str, text: str) -> Document:
    """Fences, chunks and transcripts of the Markdown text (line endings already \\n)."""
    try:
        tokens = markdown_parser().parse(text)
    except RecursionError:
        raise UserError(f"{shown}: error: nested too deeply for the Markdown parser") from None
    doc = Document(path=path, shown=shown, tokens=tokens)
    lines = text.split("\n")
    problems = control_problems(lines)
    problems += hidden_code_problems(doc, lines)
    loose_transcripts: list[tuple[str | None, Transcript]] = []
    for token in doc.tokens:
        if token.type != "fence":
            continue
        line = token.map[0] + 1
        if not is_closed(token, lines):
            where = "the file" if token.map[1] >= len(lines) - 1 else "its list item or quote"
            problems.append((line, f"unterminated code fence: no closing {token.markup} before the end of {where}"))
            continue
        try:
            lang, name, target, transcript, part = fence_attributes(token.info)
        except ValueError as error:
            problems.append((line, str(error)))
            continue
        code = token.content.split("\n")[:-1]
        if name is not None:
            doc.chunks.setdefault(name, []).append(Piece(line, name, code))
        elif target is not None:
            problem = target_problem(doc, target)
            if problem:
                problems.append((line, problem))
            else:
                target = posixpath.normpath(target)
                doc.roots.setdefault(target, []).append(Piece(line, target, code))
        elif transcript is not None:
            loose_transcripts.append((transcript, Transcript(line, token.map[1], token.content, token.markup, part)))
        elif lang in PYTHON_LANGUAGES:
            problems.append((line, f"{lang} fence with neither {{#name}} nor {{file=...}}: the reader would "
                             + "see code that never runs; name it, or use ```text for an illustration"))
    problems += nested_root_problems(doc)
    problems += assign_transcripts(doc, loose_transcripts)
    problems += invisible_problems(doc)
    problems += reference_problems(doc)
    problems += anchor_problems(doc)
    problems += caption_problems(doc)
    doc.warnings += math_warnings(doc)
    if problems:
        raise UserError(*(f"{doc.where(line)}: error: {what}" for line, what in sorted(problems)))
    if not doc.roots:
        raise UserError(f"{shown}: error: no root chunk, nothing to tangle; "
                        "start one with ```python {file=generated/attention.py}")
    return doc


def control_problems(lines: list[str]) -> list[tuple[int, str]]:
    """Invisible control characters: markdown-it would turn NUL into U+FFFD, and tools disagree on the rest."""
    problems = []
    for number, line in enumerate(lines, 1):
        match = CONTROL.search(line)
        if match:
            code = ord(match[0])
            what = "a NUL byte" if code == 0 else f"an invisible control character U+{code:04X}"
            problems.append((number, f"{what}; delete it (in code, write it as an escape: \\x{code:02x})"))
    return problems


HTML_BLOCK_END = [  # the HTML blocks that end only at a marker: (how one starts, what ends it, what it is)
    (re.compile(r"<!--"), re.compile(r"-->"), "HTML comment", "-->"),
    (re.compile(r"<(script|pre|style|textarea)(?=[\s>]|$)", re.I),
     re.compile(r"</(?:script|pre|style|textarea)>", re.I), "<{0}> block", "</{0}>"),
    (re.compile(r"<\?"), re.compile(r"\?>"), "HTML processing instruction", "?>"),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>"), "CDATA section", "]]>"),
    (re.compile(r"<![A-Za-z]"), re.compile(r">"), "HTML declaration", ">"),
]
FENCE_LIKE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})")
FENCE_WITH_ATTRIBUTES = re.compile(r"^[ \t>]*(?:(?:[-+*]|[0-9]{1,9}[.)])[ \t]+)*(?:`{3,}[^`]*|~{3,}.*)\{.*\}[ \t]*$")


def hidden_code_problems(doc: Document, lines: list[str]) -> list[tuple[int, str]]:
    """Code that Markdown silently reads as something else: an HTML comment (or <pre>, ...) that never
    closes hides the rest of the document (an error); a fence line with {attributes} that is not a fence,
    or an indented closing fence that does not close, changes what is code (warnings, in doc.warnings)."""
    problems, warnings = [], []
    owner: dict[int, object] = {}  # 0-based line -> the fence, indented code or HTML block holding it
    for token in doc.tokens:
        if token.type in ("fence", "code_block", "html_block") and token.map:
            for number in range(*token.map):
                owner.setdefault(number, token)
        if token.type == "html_block":
            content = token.content.lstrip(" ")
            for start, end, what, closer in HTML_BLOCK_END:
                opening = start.match(content)
                if opening:
                    tag = [group.lower() for group in opening.groups()]
                    what, closer = what.format(*tag), closer.format(*tag)
                    if not end.search(content):
                        fences = sum(bool(FENCE_LIKE.match(line)) for line in content.split("\n"))
                        where = "file" if token.map[1] >= len(lines) - 1 else "list item or quote"
                        hidden = f", {fences} code fence line{'s' if fences != 1 else ''} included" if fences else ""
                        problems.append((token.map[0] + 1, f"unclosed {what}: no {closer} follows, so Markdown "
                                         f"hides the rest of the {where}{hidden}; close it"))
                    break
        if token.type == "fence" and token.map and len(token.markup) >= 3:
            closing = re.compile(rf"(?: {{4,}}|[ ]*\t[ \t]*){re.escape(token.markup[0])}{{{len(token.markup)},}}[ \t]*")
            for offset, code in enumerate(token.content.split("\n")[:-1]):
                if closing.fullmatch(code):
                    warnings.append((token.map[0] + 2 + offset, f"indented 4 or more spaces, so it does not close "
                                     f"the fence opened at line {token.map[0] + 1}: it is code; unindent it to close"))
    for number, line in enumerate(lines):
        if not FENCE_WITH_ATTRIBUTES.match(line):
            continue
        token = owner.get(number)
        if token is None:
            why = "Markdown reads it as text (a line indented 4 or more spaces continues a paragraph)"
        elif token.type == "fence":
            continue  # its opening line, or code that shows a fence
        elif token.type == "code_block":
            why = "it is indented 4 or more spaces, which makes an indented code block"
        elif token.content.lstrip(" ").startswith("<!--"):
            continue  # commented out on purpose
        else:
            why = f"it is inside the HTML block that starts at line {token.map[0] + 1} (no blank line between them)"
        warnings.append((number + 1, f"looks like a code fence but is not one: {why}; its code is not tangled"))
    doc.warnings = [f"{doc.where(line)}: warning: {what}" for line, what in sorted(warnings)]
    return problems


def is_closed(token, lines: list[str]) -> bool:
    """markdown-it closes an unterminated fence silently at the end of the file
    (or of its list item): the last line of the block must be a closing fence."""
    start, end = token.map
    if end - 1 <= start:
        return False
    last = lines[end - 1].lstrip(" \t>")
    return any(len(run) >= len(token.markup) for run in fence_runs(token.markup[0], last))


def fence_runs(marker: str, text: str) -> list[str]:
    """The runs of fence characters on the lines of text that would close a fence of that marker."""
    return re.findall(rf"(?m)^ {{0,3}}({re.escape(marker)}+)[ \t]*$", text)


def parse_info(info: str) -> tuple[str, str | None, str | None, str | None]:
    """`python {#name}` / `python {file=PATH}` / `text {transcript[=PATH]}` ->
    (language, name, file, transcript); transcript is "" for a bare {transcript}."""
    return fence_attributes(info)[:4]


def fence_attributes(info: str) -> tuple[str, str | None, str | None, str | None, int | None]:
    """parse_info, and the N of a transcript's part=N (None without one)."""
    info = info.strip()
    if "{" not in info:
        return (info.split() or [""])[0], None, None, None, None
    brace = info.index("{")
    lang = (info[:brace].split() or [""])[0]
    if not info.endswith("}"):
        raise ValueError(f"attributes {info[brace:]!r} do not end with }}")
    inner = info[brace + 1 : -1].strip()
    if inner.startswith("#"):
        name = " ".join(inner[1:].split())
        if not name:
            raise ValueError("empty chunk name after #")
        if re.search(r"(?:^|\s)(?:file|transcript)=", name):
            raise ValueError("a fence is either a named chunk {#name} or a root {file=...}, not both")
        return lang, name, None, None, None
    target = transcript = part = None
    for word in filter(None, re.split(r"[ \t]+", inner)):  # ASCII blanks: a U+2028 in a path is reported as such
        key, equals, value = word.partition("=")
        if key == "file" and equals and target is None:
            target = value.strip('"')
        elif key == "transcript" and transcript is None:
            transcript = value.strip('"')
        elif key == "part" and equals and part is None:
            if not re.fullmatch(r"[1-9][0-9]{0,3}", value):
                raise ValueError(f"cannot read {word!r}: a part is numbered 1, 2, 3, ... (part=1 on the first)")
            part = int(value)
        else:
            raise ValueError(f"cannot read attribute {word!r}: expected {{#name}}, "
                             "{file=PATH} or {transcript} (with part=N), once each (#name must come first)")
    if target is not None and transcript is not None:
        raise ValueError("a fence is either a root {file=...} or a {transcript}, not both")
    if part is not None and transcript is None:
        raise ValueError("part=N numbers the fences of one {transcript}; this fence is no transcript")
    return lang, None, target, transcript, part


def target_problem(doc: Document, target: str) -> str | None:
    """Why a file= path cannot be written to, or None."""
    if not target or LINE_BREAKING.search(target):
        return f"file={target!r} is not a usable path"
    if target.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", target):
        return f"file={target} is absolute; write it relative to the folder of {doc.path.name}"
    normal = posixpath.normpath(target)
    if normal in (".", "..") or normal.startswith("../"):
        return f"file={target} is outside the folder of {doc.path.name}"
    if not normal.endswith(HASH_COMMENT_SUFFIXES):
        return f"file={target}: tangle writes only files that take # comments ({' '.join(HASH_COMMENT_SUFFIXES)})"
    if os.path.realpath(doc.folder / normal) == os.path.realpath(doc.path):
        return f"file={target} would overwrite the Markdown source"
    return None


def nested_root_problems(doc: Document) -> list[tuple[int, str]]:
    return [(pieces[0].fence_line, f"file={target} is also a folder of file={other}")
            for target, pieces in doc.roots.items()
            for other in doc.roots if other.startswith(target + "/")]


def assign_transcripts(doc: Document, found: list[tuple[str | None, Transcript]]) -> list[tuple[int, str]]:
    """Attach each {transcript} fence to its program; a program's fences numbered part=1, part=2, ... in
    document order are the parts of one output. Returns the problems."""
    programs = [target for target in doc.roots if target.endswith(".py")]
    problems = []
    fences: dict[str, list[Transcript]] = {}
    for target, transcript in found:
        line = transcript.fence_line
        if target:
            target = posixpath.normpath(target)
            if target not in programs:
                problems.append((line, f"{{transcript={target}}} names no .py root; the roots are: "
                                 + (", ".join(programs) or "none")))
                continue
        elif len(programs) != 1:
            problems.append((line, "{transcript} of which program? " + (
                f"there are several: {', '.join(programs)}; write {{transcript=PATH}}" if programs
                else "there is no .py root")))
            continue
        else:
            target = programs[0]
        fences.setdefault(target, []).append(transcript)
    for target, parts in fences.items():
        first = parts[0]
        if len(parts) == 1 and first.part is None:
            doc.transcripts[target] = first
            continue
        numbered = [part for part in parts if part.part is not None]
        if not numbered:
            problems.append((parts[1].fence_line, f"second transcript of {target} (the first is at line "
                             f"{first.fence_line}); to show its output in several places, number the fences "
                             f"{{transcript={target} part=1}}, part=2, ... in document order"))
            continue
        bad = next(((part, number) for number, part in enumerate(parts, 1) if part.part != number), None)
        if bad:
            part, number = bad
            problems.append((part.fence_line, f"transcript of {target} numbered "
                             + (f"part={part.part}" if part.part else "without part=")
                             + f"; it is part {number} of {target} in document order: write part={number} "
                             "(every fence of a program's output is numbered, 1, 2, ... in document order)"))
            continue
        problems += split_problems(target, parts)
        doc.transcripts[target] = Transcript(first.fence_line, first.closing_line,
                                             "".join(part.content for part in parts), first.markup, parts=parts)
    return problems


def split_problems(target: str, parts: list[Transcript]) -> list[tuple[int, str]]:
    """update finds where part N (N >= 2) begins in new output by its first line, so that line must be
    in the output exactly once: a part must not be empty, nor begin with a line printed twice."""
    problems = []
    printed = collections.Counter(line for part in parts for line in output_lines(part.content))
    for part in parts[1:]:
        own = output_lines(part.content)
        if not own:
            problems.append((part.fence_line, f"part={part.part} of {target} is empty: a part holds at least one "
                             "line, its first, by which make update finds where it begins; move lines into it "
                             "or delete the fence"))
            continue
        count = printed[own[0]]
        if count > 1:
            problems.append((part.fence_line, f"part={part.part} of {target} begins with {shown_line(own[0])}, "
                             f"which the output prints {count} times: make update finds where a part begins by "
                             "its first line, so a part must begin with a line printed once (a heading the "
                             "program prints); move the split"))
    return problems


def shown_line(line: str, width: int = 60) -> str:
    """An output line as it is quoted in a message: «…», shortened."""
    return "«" + (line if len(line) <= width else line[: width - 1] + "…") + "»"


def invisible_problems(doc: Document) -> list[tuple[int, str]]:
    """Bidi controls and zero-width characters in code, chunk names and paths: they make code read differently
    from how it runs ("Trojan Source"), or two names look the same, so they are refused, as compilers warn."""
    problems = []
    for table, what in ((doc.chunks, "the chunk name {{#{}}}"), (doc.roots, "the path {{file={}}}")):
        for label, pieces in table.items():
            match = INVISIBLE.search(label)
            if match:
                problems.append((pieces[0].fence_line, f"{code_point(match[0])} in {what.format(ascii(label)[1:-1])}: "
                                 "two names that look the same would differ; delete it"))
            for piece in pieces:
                for offset, code in enumerate(piece.lines):
                    match = INVISIBLE.search(code)
                    if match:
                        problems.append((piece.first_line + offset, f"{code_point(match[0])} in code: it makes the "
                                         "code read differently from how it runs (Trojan Source); delete it, or in a "
                                         f"string write it as an escape: \\u{ord(match[0]):04x}"))
    return problems


def code_point(character: str) -> str:
    """U+202E (RIGHT-TO-LEFT OVERRIDE): a character named as a message names it."""
    return f"U+{ord(character):04X} ({unicodedata.name(character, 'unnamed')})"


def looks(name: str) -> str:
    """A name as a reader sees it: composed (NFC), without the characters that show nothing."""
    return INVISIBLE.sub("", unicodedata.normalize("NFC", name))


def invisible_difference(name: str, other: str) -> str:
    """How two names that look the same differ."""
    if unicodedata.normalize("NFC", name) == unicodedata.normalize("NFC", other):
        return ("they differ only in invisible characters: one is written decomposed (Unicode NFD, as some "
                "editors and macOS file names save it), the other composed (NFC); retype one of them")
    hidden = sorted({code_point(c) for c in INVISIBLE.findall(name + other)})
    return f"they differ only in invisible characters ({', '.join(hidden)}); retype one of them"


def anchor_problems(doc: Document) -> list[tuple[int, str]]:
    """Two fences that would get the same anchor on the page and on GitHub ({#a b} and {#a_b}; {#x} twice
    and {#x-2}): a link to one would lead to the other."""
    problems, seen = [], {}
    for line, (label, anchor, *_) in sorted(expected_captions(doc).items()):
        if anchor in seen:
            problems.append((line, f"{label} gets the anchor #{anchor}, as {seen[anchor][1]} (line {seen[anchor][0]}) "
                             "does: a link to one would lead to the other; rename one of them"))
        else:
            seen[anchor] = (line, label)
    return problems


def references(pieces: list[Piece]):
    """(md line, chunk name) of every <<reference>> line in these pieces."""
    for piece in pieces:
        for offset, code in enumerate(piece.lines):
            match = REFERENCE.match(code)
            if match:
                yield piece.first_line + offset, " ".join(match[2].split())


def reference_problems(doc: Document) -> list[tuple[int, str]]:
    """Undefined, cyclic and unused chunks; then roots nested too deep or too large to write."""
    problems = []
    by_look: dict[str, str] = {}
    for name, pieces in doc.chunks.items():
        other = by_look.setdefault(looks(name), name)
        if other != name:
            problems.append((pieces[0].fence_line, f"chunk {{#{name}}} looks the same as {{#{other}}} (line "
                             f"{doc.chunks[other][0].fence_line}), but {invisible_difference(name, other)}"))
    for pieces in [*doc.chunks.values(), *doc.roots.values()]:
        for line, name in references(pieces):
            if name not in doc.chunks:
                problems.append((line, undefined(doc, name, by_look, len(problems) < MAX_SUGGESTIONS)))
    used: set[str] = set()
    for pieces in doc.roots.values():
        # depth first without recursion, so any depth is safe: the references left to visit at each
        # level, and the chunks we are in (path[i] is the chunk whose references stack[i + 1] holds)
        stack, path, on_path = [references(pieces)], [], set()
        while stack:
            line, name = next(stack[-1], (None, None))
            if name is None:
                stack.pop()
                on_path.discard(path.pop() if path else None)
            elif name not in doc.chunks:
                continue
            elif name in on_path:
                cycle = " → ".join([*path[path.index(name):], name])
                what = "includes itself" if path[-1] == name else f"is cyclic: {cycle}"
                problems.append((line, f"<<{name}>> {what}"))
            elif name not in used:
                used.add(name)
                path.append(name)
                on_path.add(name)
                stack.append(references(doc.chunks[name]))
    for name, pieces in doc.chunks.items():
        if name not in used:
            problems.append((pieces[0].fence_line, f"chunk {{#{name}}} is never used: no root includes <<{name}>>"))
    return problems or expansion_problems(doc)


def undefined(doc: Document, name: str, by_look: dict[str, str], suggest: bool) -> str:
    """Why <<name>> is not defined: a chunk that looks the same, or one spelled nearly so (suggest: look
    for one; each look compares every chunk name, so a long list of mistakes gets it only at its start)."""
    what = f"<<{name}>> is not defined: no fence has {{#{name}}}"
    same = by_look.get(looks(name))
    if same is not None:
        return f"{what}; {{#{same}}} looks the same, but {invisible_difference(name, same)}"
    near = difflib.get_close_matches(name, list(doc.chunks), n=1) if suggest else []
    return what + (f"; did you mean <<{near[0]}>>?" if near else "")


def expansion_problems(doc: Document) -> list[tuple[int, str]]:
    """Roots whose chunks nest deeper than MAX_DEPTH or that would grow past MAX_GENERATED_BYTES (a chunk
    that uses the next one twice, 30 times over, is 2**30 lines). Measured without expanding: every chunk
    once, the chunks it includes first, without recursion. The chunk graph has no cycles here."""
    sizes: dict[str, tuple[int, int, int]] = {}  # chunk -> (bytes at most, lines, depth: 1 + its deepest)

    def measure(pieces: list[Piece]) -> tuple[int, int, int, dict[str, int]]:
        """(bytes, lines, deepest chunk included, how often each chunk is included) of these pieces."""
        size, lines, depth, uses = 0, 0, 0, {}
        for piece in pieces:
            size += len(f"# {doc.path.name}:{piece.first_line} ({piece.label})\n".encode())
            lines += 1
            for code in piece.lines:
                match = REFERENCE.match(code)
                if match:
                    name = " ".join(match[2].split())
                    child_size, child_lines, child_depth = sizes[name]
                    size += child_size + child_lines * len(match[1])  # every line re-indented, at most
                    lines += child_lines
                    depth = max(depth, child_depth)
                    uses[name] = uses.get(name, 0) + 1
                else:
                    size += len(code.encode()) + 1
                    lines += 1
        return size, lines, depth, uses

    for start in doc.chunks:
        stack = [] if start in sizes else [(start, references(doc.chunks[start]))]
        while stack:
            name, pending = stack[-1]
            _, child = next(pending, (None, None))
            if child is None:
                stack.pop()
                size, lines, depth, _ = measure(doc.chunks[name])
                sizes[name] = (size, lines, depth + 1)
            elif child not in sizes:
                stack.append((child, references(doc.chunks[child])))
    problems, total = [], 0
    for target, pieces in doc.roots.items():
        size, _, depth, _ = measure(pieces)
        total += size
        if depth > MAX_DEPTH:
            chain, inside = [], pieces
            while True:
                _, _, deepest, uses = measure(inside)
                name = next((name for name in uses if sizes[name][2] == deepest), None)
                if name is None:
                    break
                chain.append(f"<<{name}>>")
                inside = doc.chunks[name]
            problems.append((pieces[0].fence_line, f"file={target} nests chunks {depth} deep (the limit is "
                             f"{MAX_DEPTH}): {shorten_chain(chain)}"))
        elif size > MAX_GENERATED_BYTES:
            chain, inside = [], pieces
            while True:
                *_, uses = measure(inside)
                if not uses:
                    break
                name = max(uses, key=lambda name: uses[name] * sizes[name][0])
                chain.append(f"<<{name}>> ×{uses[name]}" if uses[name] > 1 else f"<<{name}>>")
                inside = doc.chunks[name]
            amount = f"{size:,} bytes" if size < 10**15 else f"about 10^{len(str(size)) - 1} bytes"
            problems.append((pieces[0].fence_line, f"file={target} would be {amount} (the limit is "
                             f"{MAX_GENERATED_BYTES >> 20} MiB): {shorten_chain(chain)}"))
        elif total > MAX_GENERATED_BYTES and not problems:
            problems.append((pieces[0].fence_line, f"file={target} would bring the generated files to {total:,} "
                             f"bytes in all (the limit is {MAX_GENERATED_BYTES >> 20} MiB)"))
    return problems


def shorten_chain(chain: list[str]) -> str:
    if len(chain) > 9:
        chain = [*chain[:4], f"… {len(chain) - 8} more …", *chain[-4:]]
    return " → ".join(chain)


# ---------------------------------------------------------------- captions and math


CAPTION_ANCHOR = re.compile(r'<a\s+name="((?:chunk|file|output)-[^"]*)"\s*>', re.I)
OWN_LINK = re.compile(r"#((?:chunk|file|output)-.*)", re.S)  # a link to a caption's anchor
DOLLAR_MATH = re.compile(r"\$\$|\$(?![\s\ufffc$])[^$\ufffc\n]*?[\\^{}][^$\ufffc\n]*?(?<!\s)\$")


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
    return html.unescape(match[1]), " ".join("".join(title).split()), tuple(links)


def find_captions(doc: Document) -> list[Caption]:
    """Every caption paragraph, with the fence just below it (at the same level, a blank line between is fine)."""
    captions = []
    tokens = doc.tokens
    for index, token in enumerate(tokens):
        if token.type != "inline" or not index or tokens[index - 1].type != "paragraph_open":
            continue
        found = caption_of(token)
        if found is None:
            continue
        opening = tokens[index - 1]
        after = tokens[index + 2] if index + 2 < len(tokens) else None
        below = (after.map[0] + 1 if after is not None and after.type == "fence" and after.map
                 and after.level == opening.level else None)
        captions.append(Caption(opening.map[0] + 1, *found, below))
    return captions


def own_links(doc: Document) -> list[tuple[int, str]]:
    """(md line, anchor) of every link to a caption's anchor (#chunk-..., #file-..., #output-...)."""
    found = []
    for token in doc.tokens:
        if token.type != "inline" or not token.map:
            continue
        line = token.map[0] + 1
        for child in token.children or []:
            if child.type in ("softbreak", "hardbreak"):
                line += 1
            elif child.type == "link_open":
                target = OWN_LINK.fullmatch(unquote(child.attrs.get("href", "")))
                if target:
                    found.append((line, target[1]))
            else:
                line += child.content.count("\n") if child.type != "text" else 0
    return found


def caption_markdown(anchor: str, title: str, includes: list[str] | None) -> str:
    """The caption a fence should have, as Markdown (what the messages tell the writer to put there)."""
    text = f'<a name="{html.escape(anchor)}"></a>**{title}**'
    if includes:
        text += "，由这些代码块依次拼成：" + "、".join(f"[〈{name}〉](#{chunk_anchor(name)})" for name in includes)
    return text


def expected_captions(doc: Document) -> dict[int, tuple[str, str, str, list[str] | None]]:
    """fence line -> (the fence as written, anchor, title, the chunks it includes in order or None) for every
    fence that tangle reads: pieces of chunks and roots, and transcripts (or their parts)."""
    expected = {}
    for table, label, anchor in ((doc.chunks, "{{#{}}}", chunk_anchor), (doc.roots, "{{file={}}}", root_anchor)):
        for name, pieces in table.items():
            for index, piece in enumerate(pieces, 1):
                title = f"〈{name}〉" + ("（续）" if index > 1 else "")
                includes = [included for _, included in references([piece])]
                expected[piece.fence_line] = (label.format(name), anchor(name, index), title, includes)
    for target, transcript in doc.transcripts.items():
        for piece in transcript.pieces():
            label = f"{{transcript={target}" + (f" part={piece.part}" if piece.part else "") + "}"
            title = f"〈{target}〉的实跑输出" + (f"（第 {piece.part} 段）" if piece.part else "")
            expected[piece.fence_line] = (label, output_anchor(target, piece.part), title, None)
    return expected


def caption_problems(doc: Document) -> list[tuple[int, str]]:
    """Captions that do not name the fence below them. A document that has no caption needs none; one that
    has any needs one above every chunk, root and transcript fence, and its links must lead somewhere."""
    captions = find_captions(doc)
    doc.captions = {caption.fence_line: caption for caption in captions if caption.fence_line is not None}
    if not captions:
        return []
    problems = []
    expected = expected_captions(doc)
    for caption in captions:
        if caption.fence_line is None:
            problems.append((caption.line, f'caption <a name="{caption.anchor}"> stands above no code fence; a '
                             "caption goes on the line just above the fence it names (its fence gone? delete it)"))
        elif caption.fence_line not in expected:
            problems.append((caption.line, f'caption <a name="{caption.anchor}"> stands above a fence that is no '
                             "chunk, root or transcript (only those take captions); delete it"))
    for line, (label, anchor, title, includes) in sorted(expected.items()):
        caption = doc.captions.get(line)
        wanted = caption_markdown(anchor, title, includes)
        if caption is None:
            problems.append((line, f"{label} has no caption (the other fences of {doc.path.name} have one); put "
                             f"this line just above the fence: {wanted}"))
        elif (caption.anchor, caption.title) != (anchor, " ".join(title.split())):
            said = (f'<a name="{caption.anchor}"> and **{caption.title}**' if caption.title else
                    f'<a name="{caption.anchor}"> and no **bold** name (a ** right after 〉 ends the bold only '
                    "before a blank or punctuation: write **〈…〉** alone, or follow it with ，)")
            problems.append((caption.line, f"the caption says {said}, but the fence below it is {label} (renamed "
                             f"it? rename the caption too); write: {wanted}"))
        elif includes is not None:
            linked = [link for link in caption.links if link.startswith("chunk-")]
            if linked != [chunk_anchor(name) for name in includes]:
                now = "、".join(f"#{link}" for link in linked) or "nothing"
                should = "、".join(f"〈{name}〉" for name in includes) or "nothing"
                problems.append((caption.line, f"the caption of {label} links {now}, but the fence includes "
                                 f"{should}, in this order; write: {wanted}"))
    anchors = {caption.anchor for caption in captions}
    for line, anchor in own_links(doc):
        if anchor not in anchors:
            near = difflib.get_close_matches(anchor, sorted(anchors), n=1) if len(problems) < MAX_SUGGESTIONS else []
            problems.append((line, f"the link to #{anchor} leads nowhere: no caption has <a name=\"{anchor}\">"
                             + (f"; did you mean #{near[0]}?" if near else "")))
    return problems


def math_warnings(doc: Document) -> list[str]:
    """Formulas that GitHub would mangle: $$...$$ and $...$ in text go through Markdown, which eats \\, and \\!
    and reads _ as emphasis. A ```math fence and $`...`$ reach the formula renderer untouched."""
    warnings: dict[str, None] = {}  # one a line and kind
    for token in doc.tokens:
        if token.type != "inline" or not token.map:
            continue
        text, _ = flatten_inline(token)
        for match in DOLLAR_MATH.finditer(text):
            line = token.map[0] + 1 + text.count("\n", 0, match.start())
            what, fix = (("$$...$$", "a ```math fence") if match[0] == "$$"
                         else ("$...$", "$`...`$ (a code span between the dollars)"))
            warnings[f"{doc.where(line)}: warning: a formula in {what}: Markdown escapes mangle it on GitHub; "
                     f"write it as {fix}"] = None
    return list(warnings)


# ---------------------------------------------------------------- tangling


def render(doc: Document, target: str) -> tuple[str, list[tuple[int, str] | None]]:
    """The generated file's text, and for each of its lines the (md line, chunk) it came from."""
    body: list[str] = []
    origin: list[tuple[int, str] | None] = []
    for number, piece in enumerate(doc.roots[target]):
        if number:
            body.append("")
            origin.append(None)
        expand(doc, [piece], "", body, origin)
    text = "\n".join(body) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()
    banner = [BANNER.format(source=comment_safe(doc.path.name)), HASH_LINE.format(digest=digest)]
    return "\n".join(banner) + "\n" + text, [None, None, *origin]


def expand(doc: Document, pieces: list[Piece], indent: str, body: list[str], origin: list) -> None:
    """Append the pieces' lines, references expanded (reference_problems bounds the depth)."""
    for piece in pieces:
        body.append(f"{indent}# {comment_safe(doc.path.name)}:{piece.first_line} ({comment_safe(piece.label)})")
        origin.append((piece.first_line, piece.label))
        for offset, code in enumerate(piece.lines):
            match = REFERENCE.match(code)
            if match:
                name = " ".join(match[2].split())
                expand(doc, doc.chunks[name], indent + match[1], body, origin)
                continue
            body.append(indent + code if code.strip() else "")
            origin.append((piece.first_line + offset, piece.label))


def comment_safe(name: str) -> str:
    """A name as it may stand in a # comment: no character that some reader takes for a line break."""
    return LINE_BREAKING.sub(lambda match: match[0].encode("unicode_escape").decode(), name)


def edited_by_hand(text: str) -> bool:
    """True unless the text is exactly what tangle last wrote (its hash line agrees)."""
    banner, _, rest = text.partition("\n")
    hash_line, _, body = rest.partition("\n")
    match = re.fullmatch(HASH_LINE.format(digest="([0-9a-f]{64})"), hash_line)
    return not (banner.startswith("# Generated from ") and match
                and hashlib.sha256(body.encode()).hexdigest() == match[1])


def generated_state(current: bytes | None, text: str) -> str:
    """Where a generated file stands against the text the Markdown tangles to now:
    "missing"; "same" (CRLF line ends, which a clone with core.autocrlf gives it, count as LF);
    "banner" (the code below the banner is the same: only the hash line is out of date);
    "stale" (tangle's own output for an older Markdown, or a hand edit already copied into the
    Markdown: only the `# MD:LINE` numbers differ); "edited" (a change found only here); "foreign" (no
    banner: a file tangle.py never wrote, such as tangle.py itself, which it never overwrites)."""
    if current is None:
        return "missing"
    now = current.decode("utf-8", "replace").replace("\r\n", "\n")
    if now == text:
        return "same"
    if not now.startswith(BANNER.partition("{")[0]):
        return "foreign"
    below_banner = [whole.split("\n", 2)[2:] for whole in (now, text)]
    if below_banner[0] == below_banner[1]:
        return "banner"
    numbers = re.compile(r"(?m)^([ \t]*# .*):[0-9]+ \(")
    unnumbered = [numbers.sub(r"\1:# (", "".join(part)) for part in below_banner]
    if not edited_by_hand(now) or unnumbered[0] == unnumbered[1]:
        return "stale"
    return "edited"


def read_generated(doc: Document, target: str) -> bytes | None:
    """The bytes of a generated file, None if missing."""
    return read_regular(doc.folder / target, doc.target_shown(target), MAX_GENERATED_BYTES)


def writable_problem(doc: Document, target: str) -> str | None:
    path = doc.folder / target
    if not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(doc.folder)):
        return f"file={target} leads outside the folder of {doc.path.name} (through a symlink)"
    folder = path.parent
    while not os.path.exists(folder) and folder != folder.parent:
        folder = folder.parent
    if not os.path.isdir(folder):
        return f"cannot write file={target}: {folder.relative_to(doc.folder)} is not a directory"
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        return f"cannot write file={target}: permission denied"
    return None


def write_atomically(path: Path, data: bytes, expected: bytes | None = ...) -> bool:
    """Write data to path (to the file at the end of its symlinks) through a temporary file in the same
    folder, fsync and a rename; keep its mode and, where allowed, its owner. Given expected (the bytes
    read earlier; None: no file), write only if the file still holds them, and return whether it did."""
    real = Path(os.path.realpath(path))
    real.parent.mkdir(parents=True, exist_ok=True)
    try:
        info = os.stat(real)
    except FileNotFoundError:
        info = None
    remove_stale_temporaries(real)
    handle, temporary = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.tangle-{os.getpid()}.",
                                         suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode) if info else 0o644)
        if info and hasattr(os, "chown") and (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
            with contextlib.suppress(OSError):
                os.chown(temporary, info.st_uid, info.st_gid)
        if expected is not ... and not holds(real, expected):
            os.unlink(temporary)
            return False
        os.replace(temporary, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return True


def holds(path: Path, expected: bytes | None) -> bool:
    """Whether the file at path still has exactly these bytes (None: there is no file)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return expected is None
    if expected is None or not stat.S_ISREG(info.st_mode) or info.st_size != len(expected):
        return False
    with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)),
                   "rb") as file:
        return file.read(len(expected) + 1) == expected


def remove_stale_temporaries(path: Path) -> None:
    """The temporary files that a tangle.py killed outright (SIGKILL, a power cut) left beside path."""
    if not POSIX:
        return
    pattern = re.compile(rf"\.{re.escape(path.name)}\.tangle-([0-9]{{1,9}})\.[^/]*\.tmp")
    with contextlib.suppress(OSError), os.scandir(path.parent) as entries:
        for entry in entries:
            match = pattern.fullmatch(entry.name)
            if match and not process_alive(int(match[1])):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


@contextlib.contextmanager
def signals_deferred():
    """Hold Ctrl-C, SIGTERM and SIGHUP while files are replaced: they take effect once all are written."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def command_tangle(args) -> int:
    write_roots(load(args.md, str(args.md)), args.force)
    return OK


def write_roots(doc: Document, force: bool) -> None:
    """Write every root whose text changed; refuse all writing if any target is unusable or hand-edited."""
    pending: list[tuple[str, str, bytes | None]] = []
    problems = []
    real_paths: dict[str, str] = {}
    for target, pieces in doc.roots.items():
        real = os.path.realpath(doc.folder / target)
        problem = writable_problem(doc, target) or (
            f"file={target} is the same file as file={real_paths[real]} (through a symlink)" if real in real_paths
            else None)
        real_paths.setdefault(real, target)
        if problem:
            problems.append(f"{doc.where(pieces[0].fence_line)}: error: {problem}")
            continue
        text, _ = render(doc, target)
        current = read_generated(doc, target)
        state = generated_state(current, text)
        if state == "same":
            continue
        if state == "foreign":
            problems.append(f"{doc.where(pieces[0].fence_line)}: error: {foreign(doc, target)}")
            continue
        if state == "edited" and not force:
            problems.append(f"{doc.target_shown(target)}: error: edited by hand since it was last tangled; "
                            f"move your change into {doc.path.name}, or rerun with --force to overwrite")
            continue
        pending.append((target, text, current))
    if problems:
        raise UserError(*problems)
    written, failure = [], None
    with signals_deferred():
        for target, text, current in pending:
            shown = doc.target_shown(target)
            try:
                if not write_atomically(doc.folder / target, text.encode(), expected=current):
                    failure = Conflict(f"{shown}: error: changed while tangle.py was about to write it; left as "
                                       "it is: run make tangle again")
            except OSError as error:
                failure = UserError(f"{shown}: error: cannot write it: {describe(error)}")
            if failure:
                break
            written.append(shown)
    for shown in written:
        print(f"wrote {shown}")
    if failure:
        raise failure


# ---------------------------------------------------------------- running


def sync_problems(doc: Document) -> list[str]:
    """Generated files that are not what the Markdown tangles to."""
    problems = []
    for target in doc.roots:
        state = generated_state(read_generated(doc, target), render(doc, target)[0])
        if state in ("same", "banner"):
            continue
        if state == "foreign":
            problems.append(f"{doc.where(doc.roots[target][0].fence_line)}: error: {foreign(doc, target)}")
            continue
        if state == "missing":
            why = "missing; run make tangle"
        elif state == "edited":
            why = (f"edited by hand since it was last tangled; move your change into {doc.path.name}, "
                   "then run make tangle")
        else:
            why = f"out of date with {doc.path.name}; run make tangle"
        problems.append(f"{doc.target_shown(target)}: error: {why}")
    return problems


def foreign(doc: Document, target: str) -> str:
    return (f"file={target}: {doc.target_shown(target)} exists and was not written by tangle.py (it does not start "
            f"with the banner \"# Generated from\"), so tangle.py never overwrites it, not even with --force; "
            f"give the root another path in {doc.path.name}, or move that file away if it is to be replaced")


def require_transcripts(doc: Document) -> None:
    if not doc.transcripts:
        raise UserError(f"{doc.shown}: error: no transcript; put a ```text {{transcript}} fence "
                        "(it may start empty) where the program's output is documented, then run make update")


def run_program(doc: Document, target: str, timeout: float, copies: int = 1, progress: bool = False) -> list[Run]:
    """Run a generated program (several copies side by side) in a controlled environment, each copy in
    its own process group, so that the timeout, Ctrl-C or any error ends it and all it started.
    progress: also copy the first copy's stderr lines to ours as they come (up to a traceback)."""
    # -s and no PYTHON* variable of the caller's (PYTHONSAFEPATH, PYTHONOPTIMIZE, PYTHONPATH, ...): what -I
    # does, except that -I would also ignore the PYTHON* variables the run needs (RUN_ENV) and drop the
    # program's folder from sys.path, from which generated/experiments.py imports generated/attention.py.
    env = {name: value for name, value in os.environ.items() if not name.upper().startswith("PYTHON")}
    env.update(RUN_ENV)
    command = [sys.executable, "-s", os.path.realpath(doc.folder / target)]
    processes: list[subprocess.Popen] = []
    ours = children() if become_subreaper() else None  # our children before the run: not the run's to stop
    try:
        for _ in range(copies):
            processes.append(subprocess.Popen(command, cwd=doc.folder, env=env, stdin=subprocess.DEVNULL,
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                              start_new_session=POSIX))
        echo = Echo(f"{doc.target_shown(target)}: ") if progress else None
        return collect(processes, timeout, echo) if POSIX else collect_plainly(processes, timeout)
    except OSError as error:
        raise UserError(f"{doc.target_shown(target)}: error: cannot run it: {describe(error)}") from None
    finally:
        for process in processes:
            end_group(process)
            for stream in (process.stdout, process.stderr):
                stream.close()
        if ours is not None:
            stop_leftovers(ours | {process.pid for process in processes}, {process.pid for process in processes})


def become_subreaper() -> bool:
    """Linux: make the processes that the programs leave behind (a daemon that double-forks into a session
    of its own, keeping or closing our pipes) our children when their parents die, instead of init's, so
    that stop_leftovers can find them. Whether it worked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def processes_where(field: int, values: set[int], zombies: bool = True) -> set[int]:
    """The ids of the processes whose /proc/PID/stat field (4: parent, 6: session, as proc(5) counts) is
    one of values; zombies too unless told not to (a killed process that someone else will reap)."""
    found = set()
    with contextlib.suppress(OSError), os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                fields = Path(entry.path, "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue  # gone meanwhile
            if int(fields[field - 3]) in values and (zombies or fields[0] != "Z"):
                found.add(int(entry.name))
    return found


def children() -> set[int]:
    return processes_where(4, {os.getpid()})


def stop_leftovers(ours: set[int], sessions: set[int]) -> None:
    """Kill and reap what the programs left running: every process of the sessions they created (each
    program leads one), and every process that became our child when its parent died (we are its
    subreaper), round after round, since each death can orphan more."""
    for _ in range(1000):
        found = (processes_where(6, sessions, zombies=False) | children()) - ours - {os.getpid()}
        if not found:
            return
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for pid in found & children():
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)


class Echo:
    """Copies a program's stderr to ours a line at a time, each line prefixed, until a traceback begins
    (report_failed_run prints that, pointed at the Markdown). (A class only to keep the partial line.)"""

    def __init__(self, prefix: str):
        self.prefix, self.pending, self.done = prefix, b"", False

    def feed(self, data: bytes) -> None:
        *lines, self.pending = (self.pending + data).split(b"\n")
        for line in lines:
            self.write(line)

    def close(self) -> None:
        if self.pending:
            self.write(self.pending)
        self.pending = b""

    def write(self, line: bytes) -> None:
        self.done = self.done or line.startswith(b"Traceback (most recent call last)")
        if not self.done:
            print(self.prefix + line.decode("utf-8", "replace").rstrip("\r"), file=sys.stderr, flush=True)


def collect(processes: list[subprocess.Popen], timeout: float, echo: Echo | None = None) -> list[Run]:
    """Read every process's stdout and stderr until they close, at most timeout seconds in all and
    MAX_OUTPUT_BYTES a stream. A process still holding a pipe at the end (itself, or something it
    started: a pipe stays open while anyone holds it) is killed with its group. echo: where the first
    process's stderr is copied as it arrives."""
    deadline = time.monotonic() + timeout
    output = {stream: bytearray() for process in processes for stream in (process.stdout, process.stderr)}
    why: dict[subprocess.Popen, str] = {}
    with selectors.DefaultSelector() as selector:
        for process in processes:
            for stream in (process.stdout, process.stderr):
                selector.register(stream, selectors.EVENT_READ, process)
        while selector.get_map() and (remaining := deadline - time.monotonic()) > 0:
            if all(exited(key.data) for key in selector.get_map().values()):
                # only what the programs started holds the pipes now: wait for those writers a little
                deadline = min(deadline, time.monotonic() + HELD_GRACE)
            for key, _ in selector.select(min(remaining, 0.2)):
                data = os.read(key.fd, 1 << 16)
                output[key.fileobj] += data
                if echo is not None and key.fileobj is processes[0].stderr:
                    if data:
                        echo.feed(data)
                    else:
                        echo.close()
                if not data:
                    selector.unregister(key.fileobj)
                elif len(output[key.fileobj]) > MAX_OUTPUT_BYTES:
                    why[key.data] = "output"
                    end_group(key.data)
                    for stream in (key.data.stdout, key.data.stderr):
                        with contextlib.suppress(KeyError):
                            selector.unregister(stream)
        for key in list(selector.get_map().values()):
            if key.data not in why:
                why[key.data] = "held" if exited(key.data) else "timeout"
            end_group(key.data)
    runs = []
    for process in processes:
        if process not in why:  # its output closed; it may still be running
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                why[process] = "timeout"
                end_group(process)
        runs.append(Run(None if process in why else process.returncode, bytes(output[process.stdout]),
                        bytes(output[process.stderr]), why.get(process, "")))
    return runs


def collect_plainly(processes: list[subprocess.Popen], timeout: float) -> list[Run]:
    """collect() where pipes cannot be selected (Windows): communicate, then kill the process."""
    deadline = time.monotonic() + timeout
    runs = []
    for process in processes:
        try:
            stdout, stderr = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
            runs.append(Run(process.returncode, stdout, stderr))
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            runs.append(Run(None, stdout, stderr, "timeout"))
    return runs


def exited(process: subprocess.Popen) -> bool:
    """Whether the process has exited, without reaping it (its id must keep naming its group)."""
    try:
        return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except (AttributeError, OSError):
        return False


def end_group(process: subprocess.Popen) -> None:
    """Kill the process and its process group, unless it has already been reaped (then its id may name
    someone else's group), and reap it."""
    if process.returncode is not None:
        return
    with contextlib.suppress(OSError):
        if POSIX:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)


def map_traceback(doc: Document, target: str, stderr: str) -> tuple[str, int | None]:
    """Point the frames of a traceback in the generated file at the Markdown; also return the md line
    where the error happened: the innermost such frame of the first exception in the chain of causes
    (an error in a ProcessPoolExecutor worker arrives as the cause of the one that .result() raises)."""
    _, origin = render(doc, target)
    generated = os.path.realpath(doc.folder / target)
    innermost: list[int | None] = [None]  # per traceback in the chain
    causes: list[bool] = []  # whether traceback i is the direct cause of traceback i + 1
    lines = []
    for text in stderr.splitlines():
        match = FRAME.match(text)
        if match and os.path.realpath(doc.folder / match[2]) == generated:
            number = int(match[3])
            if 1 <= number <= len(origin) and origin[number - 1]:
                md_line, label = origin[number - 1]
                innermost[-1] = md_line
                text = f"{match[1]}{doc.where(md_line)} ({label}){match[4]}"
        elif text in (CAUSE, CONTEXT):
            causes.append(text == CAUSE)
            innermost.append(None)
        lines.append(text)
    chosen = len(innermost) - 1
    while chosen > 0 and causes[chosen - 1] and innermost[chosen - 1] is not None:
        chosen -= 1
    line = innermost[chosen] or next((line for line in reversed(innermost) if line), None)
    return "\n".join(lines), line


def report_failed_run(doc: Document, target: str, run: Run, timeout: float, echoed: bool = False) -> None:
    """Say why a run failed: the traceback with its frames pointed at the Markdown, or the reason tangle.py
    stopped it. echoed: its stderr up to the traceback was shown already (--progress)."""
    shown = doc.target_shown(target)
    if run.why == "held":
        print(f"{shown}: error: exited, but a process it started still held its output open; stopped them all "
              "(wait for the processes a program starts before it exits)", file=sys.stderr)
        return
    if run.why == "output":
        print(f"{shown}: error: printed more than {MAX_OUTPUT_BYTES >> 20} MiB; stopped it", file=sys.stderr)
        return
    if run.returncode is None:
        print(f"{shown}: error: did not finish within {timeout:g} s; stopped it and all it started "
              "(more time: --timeout SECONDS)", file=sys.stderr)
        return
    stderr = run.stderr.decode("utf-8", "replace")
    if echoed:
        start = re.search(r"(?m)^Traceback \(most recent call last\)", stderr)
        stderr = stderr[start.start():] if start else ""
    traceback, line = map_traceback(doc, target, stderr)
    if traceback:
        print(traceback, file=sys.stderr)
    where = doc.where(line) if line else shown
    if run.returncode < 0 and POSIX:
        with contextlib.suppress(ValueError):
            print(f"{where}: error: {shown} was killed by {signal.Signals(-run.returncode).name}", file=sys.stderr)
            return
    print(f"{where}: error: {shown} exited with status {run.returncode} (traceback above)", file=sys.stderr)


# ---------------------------------------------------------------- comparing


def output_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def classify_change(old: str, new: str) -> str:
    """Explain a transcript difference: only numbers drifted, or the text itself changed."""
    old_lines, new_lines = output_lines(old), output_lines(new)
    changed = "text/layout changed"
    if len(old_lines) != len(new_lines):
        return changed
    deltas, decimals = [], 0
    for a, b in zip(old_lines, new_lines, strict=True):
        if SIGNED_NUMBER.sub(" #", a) != SIGNED_NUMBER.sub(" #", b):
            return changed
        for x, y in zip(SIGNED_NUMBER.findall(a), SIGNED_NUMBER.findall(b), strict=True):
            x, y = x.strip(), y.strip()
            if x == y:
                continue
            if "." not in x or "." not in y or len(x.split(".")[1]) != len(y.split(".")[1]):
                return changed
            deltas.append(abs(float(x) - float(y)))
            decimals = max(decimals, len(x.split(".")[1]))
    if not deltas:
        return changed
    values = f"{len(deltas)} value{'s' if len(deltas) != 1 else ''}"
    return (f"only numbers changed: {values}, max |Δ| = {max(deltas):.{decimals}f}, layout identical — "
            "looks like floating-point drift (a platform difference); see README, 可移植性")


def transcript_diff(doc: Document, transcript: Transcript, new: str, new_label: str, color: bool) -> list[str]:
    """A unified diff of the transcript against new output, numbered by the Markdown's lines."""
    old_lines, new_lines = output_lines(transcript.content), output_lines(new)
    spans = []
    for piece in transcript.pieces():  # one, or the parts of a transcript in parts
        count = len(output_lines(piece.content))
        spans.append(f"lines {piece.first_line}-{piece.first_line + count - 1}" if count
                     else f"empty, after line {piece.fence_line}")
    span = spans[0] if len(spans) == 1 else f"{len(spans)} parts: " + ", ".join(spans)

    def numbered(match: re.Match) -> str:
        """The hunk's output line numbers as Markdown lines: the old side where that line is, the new side
        shifted as much (a hunk of an empty transcript starts at line 0: after the opening fence)."""
        start = int(match[1])
        shift = (transcript.md_line(start - 1) - start) if start else transcript.fence_line
        return f"@@ -{start + shift}{match[2] or ''} +{int(match[3]) + shift}{match[4] or ''} @@"

    lines = []
    for text in difflib.unified_diff(old_lines, new_lines, f"{doc.shown} (transcript, {span})", new_label,
                                     lineterm=""):
        lines.append(paint(re.sub(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", numbered, text), color))
    if new and not new.endswith("\n"):
        lines.append("\\ the output does not end with a newline (a transcript holds whole lines)")
    return lines


def paint(line: str, color: bool) -> str:
    if not color or line.startswith(("---", "+++")):
        return line
    code = {"-": "31", "+": "32", "@": "36"}.get(line[:1])
    return f"\033[{code}m{line}\033[0m" if code else line


def use_color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


# ---------------------------------------------------------------- prose numbers


def prose_numbers(doc: Document) -> list[ProseNumber]:
    """Every number in the prose: whether it is marked as the book's, and the program it cites.
    Raises UserError for a <!-- 数字出自 --> comment that cannot be read or applies to nothing."""
    found: list[ProseNumber] = []
    problems: list[tuple[int, str]] = []
    sections = section_sources(doc)
    section_starts = [start for start, _ in sections]
    book_columns: set[int] = set()
    column, row_line = 0, 1
    pending = scope = None  # a block comment waiting for its block; the block it applies to
    for previous, token in itertools.pairwise([None, *doc.tokens]):
        if pending:
            program, line, level = pending
            if token.level == level and token.type in CITING_BLOCKS:
                scope = (program, line, token.type.replace("_open", "_close"), level)
            else:
                problems.append((line, cites_nothing(program)))
            pending = None
        if token.type == "html_block":
            line = token.map[0] + 1
            program = cited_program(doc, token.content, line, problems, alone=True)
            if program is not None:
                pending = (program, line, token.level)
        elif token.type == "thead_open":
            book_columns = set()
        elif token.type == "tr_open":
            column, row_line = 0, token.map[0] + 1
        elif token.type in ("th_close", "td_close"):
            column += 1
        elif (token.type == "inline" and previous.type in ("paragraph_open", "th_open", "td_open")
              and not (previous.type == "paragraph_open" and caption_of(token))):  # a caption is a name, no claim
            if previous.type == "th_open" and BOOK_WORD in token.content:
                book_columns.add(column)
            whole_book = previous.type == "td_open" and column in book_columns
            first_line = token.map[0] + 1 if token.map else row_line
            default = sections[bisect.bisect_right(section_starts, first_line) - 1][1]
            cites = scope[:2] if scope else (default, None)
            found += numbers_in_inline(doc, token, first_line, whole_book, cites, problems)
        if scope and token.type == scope[2] and token.level == scope[3]:
            scope = None
    if pending:
        problems.append((pending[1], cites_nothing(pending[0])))
    if problems:
        raise UserError(*(f"{doc.where(line)}: error: {what}" for line, what in sorted(problems)))
    return found


def cites_nothing(program: str) -> str:
    return (f"{CITATION_WORD} {program}: the comment is followed by no paragraph, list, quote or table; "
            "put it on the line just before the one it is for")


def section_sources(doc: Document) -> list[tuple[int, str]]:
    """The default citation, as (first line, program) of each section of MD. A section starts at line 1
    and at every # or ## heading (### and deeper stay in their section). Its prose cites the program
    whose transcript it holds (the first, if it holds several); a section holding none cites the
    main program, the one whose transcript comes first in MD."""
    starts = [1] + [token.map[0] + 1 for token in doc.tokens
                    if token.type == "heading_open" and token.tag in ("h1", "h2") and token.map[0] > 0]
    by_line = sorted((piece.fence_line, target) for target, transcript in doc.transcripts.items()
                     for piece in transcript.pieces())
    main = by_line[0][1] if by_line else ""
    fence_lines = [line for line, _ in by_line]
    sections = []
    for start, end in itertools.pairwise([*starts, float("inf")]):
        first = bisect.bisect_left(fence_lines, start)  # the first transcript fence at or after start
        held = first < len(by_line) and by_line[first][0] < end
        sections.append((start, by_line[first][1] if held else main))
    return sections


def cited_program(doc: Document, html: str, line: int, problems: list[tuple[int, str]], alone: bool) -> str | None:
    """The program a <!-- 数字出自 PATH --> comment names; None if the HTML is no such comment (or a bad one,
    which goes into problems). alone: an HTML block, which must hold nothing but the comment."""
    text = html.strip()
    if not re.match(rf"<!--\s*{CITATION_WORD}", text):
        return None
    match = re.fullmatch(rf"<!--\s*{CITATION_WORD}\s+(\S+)\s*-->", text)
    if not match:
        where = "alone on its line before a paragraph, list, quote or table" if alone else "in a sentence"
        problems.append((line, f"cannot read {text.splitlines()[0]!r}: write <!-- {CITATION_WORD} PATH --> {where}"))
        return None
    target = posixpath.normpath(match[1])
    if target not in doc.transcripts:
        known = ", ".join(doc.transcripts) or "none"
        problems.append((line, f"{CITATION_WORD} {match[1]}: no program with a transcript by that name "
                         f"(there are: {known})"))
        return None
    return target


def numbers_in_inline(doc: Document, token, first_line: int, whole_book: bool, cites: tuple[str, int | None],
                      problems: list[tuple[int, str]]) -> list[ProseNumber]:
    """The numbers of one paragraph or cell. cites: (program, line of its comment or None) for the whole
    text; a <!-- 数字出自 PATH --> inside it changes that up to the end of its sentence. Linear in the
    text: every lookup below is a bisection in positions found once."""
    text, comments = flatten_inline(token)
    newlines = [match.start() for match in re.finditer("\n", text)]
    book = Spans(text, [match.start() for match in re.finditer(BOOK_WORD, text)], BOOK_SPAN_END)
    cited = []
    for offset, html in comments:
        line = first_line + bisect.bisect_left(newlines, offset)
        program = cited_program(doc, html, line, problems, alone=False)
        if program is not None:
            cited.append((offset, program, line))
    sentences = Spans(text, [offset for offset, _, _ in cited], SENTENCE_END)
    numbers = []
    for match in NUMBER.finditer(text):
        if ("." not in match[0] and len(match[0]) == 1) or UNIT_AFTER.match(text, match.end()):
            continue
        inside = sentences.covering(match.start())
        program, cited_on = cited[inside][1:] if inside is not None else cites
        numbers.append(ProseNumber(first_line + bisect.bisect_left(newlines, match.start()), match[0],
                                   whole_book or book.covering(match.start()) is not None,
                                   program, cited_on, token, match.start()))
    return numbers


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


def inline_parts(token) -> tuple[list[str], list[tuple[int, str]]]:
    """flatten_inline, one string for each child of the token (weave.py places numbers with them)."""
    parts: list[str] = []
    html: list[tuple[int, str]] = []
    length = 0
    in_autolink = False
    for child in token.children or []:
        part = ""
        if child.type in ("link_open", "link_close") and child.markup == "autolink":
            in_autolink = child.type == "link_open"
        elif child.type == "text" and not in_autolink:
            part = BARE_URL.sub("\ufffc", child.content)
        elif child.type in ("softbreak", "hardbreak"):
            part = "\n"
        elif child.type in ("code_inline", "html_inline", "image"):
            if child.type == "html_inline":
                html.append((length, child.content))
            part = "\ufffc" + "\n" * child.content.count("\n")
        parts.append(part)
        length += len(part)
    return parts, html


def flatten_inline(token) -> tuple[str, list[tuple[int, str]]]:
    """The text children of an inline token, line breaks as \\n; code spans, HTML, images,
    autolinks and bare URLs become a separator. Also (offset in that text, HTML) of each inline HTML."""
    parts, html = inline_parts(token)
    return "".join(parts), html


def transcript_numbers(doc: Document) -> dict[str, set[str]]:
    """The numbers each program's transcript prints, by program."""
    return {target: {match[0] for match in NUMBER.finditer(transcript.content)}
            for target, transcript in doc.transcripts.items()}


def read_book_figures(doc: Document) -> set[str]:
    """The figures the book prints, from book_figures.txt beside MD: one number a line, # comments."""
    path = doc.folder / BOOK_FIGURES
    shown = os.path.join(os.path.dirname(doc.shown), BOOK_FIGURES)
    raw = read_regular(path, shown, MAX_BOOK_FIGURES_BYTES)  # like MD: a FIFO or /dev/zero is refused, not read
    if raw is None:
        raise UserError(f"{shown}: error: no such file; {doc.shown} marks numbers as the book's (原书), so "
                        f"{BOOK_FIGURES} beside it must list the figures the book prints, one a line")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"{shown}: error: not UTF-8; save the file as UTF-8") from None
    figures: dict[str, int] = {}
    problems = []
    for number, line in enumerate(normalize_newlines(text).split("\n"), start=1):
        entry = line.partition("#")[0].strip()
        if not entry:
            continue
        if not re.fullmatch(r"[+-]?[0-9]+(?:\.[0-9]+)?", entry):
            problems.append(f"{shown}:{number}: error: {entry!r} is not one number written as the book prints "
                            "it (one a line, like 0.6820 or 838; # starts a comment)")
        elif entry.lstrip("+-") in figures:
            problems.append(f"{shown}:{number}: error: {entry} is listed twice "
                            f"(first on line {figures[entry.lstrip('+-')]})")
        else:
            figures[entry.lstrip("+-")] = number
    if problems:
        raise UserError(*problems)
    return set(figures)


def nearest(number: str, candidates: set[str]) -> list[str]:
    """Up to three candidates like number: first the same value with other decimals (one of the two is
    the other rounded, to at least 2 decimals), then those with as many decimals, closest first."""
    decimals = len(number.partition(".")[2])

    def rounded(candidate: str) -> bool:
        places = len(candidate.partition(".")[2])
        if min(places, decimals) < 2 or places == decimals:
            return False
        return (f"{float(number):.{places}f}" == candidate if places < decimals
                else f"{float(candidate):.{decimals}f}" == number)

    first = sorted(c for c in candidates if rounded(c))
    same = [c for c in candidates if len(c.partition(".")[2]) == decimals and c not in first]
    return (first + sorted(same, key=lambda c: (abs(float(c) - float(number)), c)))[:3]


def stale_numbers(doc: Document) -> tuple[list[str], list[ProseNumber]]:
    """Error lines for the prose numbers their cited transcript does not print, and all prose numbers,
    with book true only for the book's figures (marked as the book's and on its list)."""
    numbers = prose_numbers(doc)
    printed = transcript_numbers(doc)
    figures = read_book_figures(doc) if any(number.book for number in numbers) else set()
    errors, checked = [], []
    for number in numbers:
        figure = number.book and number.text in figures
        checked.append(replace(number, book=figure))
        if not figure and number.text not in printed.get(number.program, ()):
            errors.append(f"{doc.where(number.line)}: error: {unprinted(number, printed)}")
    return errors, checked


def transcript_lines_printing(doc: Document) -> dict[str, dict[str, list[int]]]:
    """For each program, each number its transcript prints (read as the prose check reads it, sign
    ignored) and the MD lines of the transcript lines that print it, first to last."""
    found: dict[str, dict[str, list[int]]] = {}
    for target, transcript in doc.transcripts.items():
        lines = found[target] = {}
        for piece in transcript.pieces():  # each part at its own lines of MD
            for offset, text in enumerate(output_lines(piece.content)):
                for match in NUMBER.finditer(text):
                    where = lines.setdefault(match[0], [])
                    if not where or where[-1] != piece.first_line + offset:
                        where.append(piece.first_line + offset)
    return found


def prose_number_sources(doc: Document) -> tuple[list[str], list[tuple[ProseNumber, list[int]]]]:
    """For weave.py: the error lines of the prose check (as stale_numbers gives them), and every prose
    number with the MD lines of the transcript lines that print it, in the transcript it cites. The
    list is empty for the book's figures and for the numbers that fail."""
    errors, numbers = stale_numbers(doc)
    printed = transcript_lines_printing(doc)
    return errors, [(number, [] if number.book else printed.get(number.program, {}).get(number.text, []))
                    for number in numbers]


def unprinted(number: ProseNumber, printed: dict[str, set[str]]) -> str:
    """Why a number fails: what it is, the transcript it cites, and which other one prints it."""
    near = nearest(number.text, printed.get(number.program, set()))
    transcript = (f"the transcript named on line {number.cited_on}" if number.cited_on else "its section's transcript")
    transcript += f"; nearest: {', '.join(near)}" if near else ""
    if number.book:
        what = (f"{number.text} is marked as the book's (原书) but the book does not print it (not in "
                f"{BOOK_FIGURES}), nor does {number.program} ({transcript})")
    else:
        what = f"{number.text} is not printed by {number.program} ({transcript})"
    others = [target for target, numbers in printed.items() if target != number.program and number.text in numbers]
    if others:
        what += (f"; {others[0]} prints it: if it comes from there, cite it with "
                 f"<!-- {CITATION_WORD} {others[0]} --> on the line before the paragraph or before the sentence")
    return what


# ---------------------------------------------------------------- check and update


def selected_targets(doc: Document, only: str | None) -> list[str]:
    """The programs to run: every one with a transcript, or just the one --only names."""
    if only is None:
        return list(doc.transcripts)
    wanted = os.path.normpath(only)
    if wanted not in map(os.path.normpath, doc.transcripts):
        known = ", ".join(doc.transcripts) or "none"
        raise UserError(f"{doc.shown}: error: --only {only}: no program with a transcript by that name "
                        f"(there are: {known})")
    return [target for target in doc.transcripts if os.path.normpath(target) == wanted]


def command_check(args) -> int:
    doc = load(args.md, str(args.md))
    require_transcripts(doc)
    targets = selected_targets(doc, args.only)
    problems = sync_problems(doc)
    if problems:
        print(*problems, sep="\n", file=sys.stderr)
        return DIFFERENT
    errors, numbers = stale_numbers(doc)  # before the runs: a mistake in the prose's markup is exit 2 at once
    outcomes = []
    for target in targets:
        transcript = doc.transcripts[target]
        run = run_program(doc, target, args.timeout, progress=args.progress)[0]
        if run.returncode != 0:
            report_failed_run(doc, target, run, args.timeout, echoed=args.progress)
            outcomes.append(f"{doc.target_shown(target)} failed")
        elif run.stdout != transcript.content.encode():
            report_difference(doc, target, run.stdout.decode("utf-8", "replace"))
            outcomes.append("transcript differs")
    if errors:
        print(*errors, sep="\n", file=sys.stderr)
        outcomes.append(f"{len(errors)} not in the transcript")
    book = sum(number.book for number in numbers)
    verdict = "; ".join(outcomes) or ("transcript matches" if len(targets) == 1 else "transcripts match")
    print(f"checked {len(numbers)} prose numbers ({book} marked as the book's); {verdict}")
    return DIFFERENT if outcomes else OK


def report_difference(doc: Document, target: str, actual: str) -> None:
    """An output that differs from its transcript: for a transcript in parts, each part that differs, with
    its own lines (or, when the output cannot be cut into the parts, the whole, from the first difference)."""
    transcript = doc.transcripts[target]
    shown, color = doc.target_shown(target), use_color()
    fix = f"if the new output is right, record it: {update_command(doc, target)}"
    pieces = transcript.pieces()
    if len(pieces) == 1:
        print(f"{doc.where(transcript.first_line)}: error: the output of {shown} differs from its transcript; {fix}",
              file=sys.stderr)
        print(classify_change(transcript.content, actual))
        print(*transcript_diff(doc, transcript, actual, "actual output", color), sep="\n")
        return
    parts, why, _ = split_output(transcript, actual)
    if parts is None:
        old, new = output_lines(transcript.content), output_lines(actual)
        index = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        print(f"{doc.where(transcript.md_line(index))}: error: the output of {shown} differs from its transcript, "
              f"and cannot be cut into its {len(pieces)} parts ({why}); {fix}, once each part begins with a line "
              "the program prints exactly once", file=sys.stderr)
        print(classify_change(transcript.content, actual))
        print(*transcript_diff(doc, transcript, actual, "actual output", color), sep="\n")
        return
    print(classify_change(transcript.content, actual))
    for piece, new in zip(pieces, parts):
        if new != piece.content:
            print(f"{doc.where(piece.first_line)}: error: the output of {shown} differs from part {piece.part} of its "
                  f"transcript; {fix}", file=sys.stderr)
            print(*transcript_diff(doc, piece, new, f"actual output, part {piece.part}", color), sep="\n")


def split_output(transcript: Transcript, output: str) -> tuple[list[str] | None, str, Transcript | None]:
    """Cut output into the transcript's parts: part N (N >= 2) begins at the one line of the output that
    equals the first line of its present text. Returns (the parts' texts, "", None), or (None, why, the
    part) when that line is no longer printed, is printed more than once, or comes too early."""
    pieces = transcript.pieces()
    if len(pieces) == 1:
        return [output], "", None
    chunks = re.findall(r"[^\n]*\n|[^\n]+\Z", output)
    texts = [chunk.rstrip("\n") for chunk in chunks]
    starts = [0]
    for piece in pieces[1:]:
        first = output_lines(piece.content)[0]  # split_problems: a part after the first is never empty
        at = [index for index, text in enumerate(texts) if text == first]
        if len(at) != 1:
            where = ("no longer prints it" if not at else f"prints it {len(at)} times (output lines "
                     + ", ".join(str(index + 1) for index in at[:5]) + (", ..." if len(at) > 5 else "") + ")")
            return None, f"part {piece.part} began with {shown_line(first)}; the output {where}", piece
        if at[0] <= starts[-1] and len(starts) > 1:
            return None, (f"part {piece.part} begins with {shown_line(first)}, which the output now prints "
                          f"before the first line of part {piece.part - 1}"), piece
        starts.append(at[0])
    return ["".join(chunks[a:b]) for a, b in zip(starts, [*starts[1:], len(chunks)])], "", None


def deterministic_output(doc: Document, target: str, timeout: float, progress: bool = False) -> str | None:
    """The program's stdout if two runs agree and it is usable as a transcript; else report, None."""
    shown = doc.target_shown(target)
    first, second = run_program(doc, target, timeout, copies=2, progress=progress)
    for copy, run in enumerate((first, second)):
        if run.returncode != 0:
            report_failed_run(doc, target, run, timeout, echoed=progress and copy == 0)
            return None
    if first.stdout != second.stdout:
        a_lines, b_lines = (run.stdout.decode("utf-8", "replace").split("\n") for run in (first, second))
        pairs = list(itertools.zip_longest(a_lines, b_lines, fillvalue="(end of output)"))
        index = next(i for i, (a, b) in enumerate(pairs) if a != b)
        print(f"{shown}: error: not deterministic: two runs printed different output; transcript left as it was\n"
              f"  first difference, output line {index + 1}:\n    run 1: {pairs[index][0]}\n"
              f"    run 2: {pairs[index][1]}", file=sys.stderr)
        return None
    try:
        output = first.stdout.decode("utf-8")
    except UnicodeDecodeError:
        print(f"{shown}: error: its output is not UTF-8", file=sys.stderr)
        return None
    if output and not output.endswith("\n"):
        print(f"{shown}: error: its output does not end with a newline; a transcript holds whole lines",
              file=sys.stderr)
        return None
    if len(doc.raw) + len(first.stdout) > MAX_MARKDOWN_BYTES:
        print(f"{shown}: error: its output ({len(first.stdout):,} bytes) would make {doc.path.name} larger than "
              f"{MAX_MARKDOWN_BYTES >> 20} MiB, more than tangle.py reads; transcript left as it was", file=sys.stderr)
        return None
    control = OUTPUT_CONTROL.search(output)
    if control:
        name = {"\r": "a carriage return (\\r)", "\x1b": "an escape character (colours?)", "\x00": "a NUL byte"}.get(
            control[0], f"the control character U+{ord(control[0]):04X}")
        print(f"{shown}: error: output line {output.count(chr(10), 0, control.start()) + 1} holds {name}; a "
              "transcript holds plain lines (progress bars and colours belong on stderr); transcript left as "
              "it was", file=sys.stderr)
        return None
    return output


def update_command(doc: Document, target: str) -> str:
    """The command that records a new transcript: the make target where there is one."""
    if (doc.path.name == "attention.md" and (doc.folder / "Makefile").is_file()
            and os.path.realpath(doc.folder) == os.path.realpath(".")):
        make = {"generated/attention.py": "make update", "generated/experiments.py": "make update-experiments"}
        if target in make:
            return make[target]
    return f"python tangle.py update {doc.shown} --only {target}"


def rewrite_transcripts(doc: Document, text: str, new: dict[str, str]) -> str:
    """The Markdown text (original line endings) with these transcripts' contents replaced; a transcript in
    parts gets each part's slice of the new output (split_output), in place."""
    lines = LINE_WITH_END.findall(text)
    replacements: list[tuple[Transcript, str]] = []
    for target, output in new.items():
        parts, why, _ = split_output(doc.transcripts[target], output)
        if parts is None:
            raise UserError(f"{doc.target_shown(target)}: error: cannot cut its output into parts: {why}")
        replacements += zip(doc.transcripts[target].pieces(), parts)
    for transcript, content in sorted(replacements, key=lambda pair: -pair[0].fence_line):
        start, end = transcript.fence_line - 1, transcript.closing_line - 1
        opening, closing = lines[start], lines[end]
        eol = re.search(r"\r\n|\r|\n", opening)
        eol = eol[0] if eol else "\n"
        closing_body = closing.rstrip("\r\n")
        prefix = closing_body[: len(closing_body) - len(closing_body.lstrip(" \t>"))]
        marker = transcript.markup
        longest = max(map(len, fence_runs(marker[0], content)), default=0)
        if longest >= len(marker):
            opening = opening.replace(marker, marker[0] * (longest + 1), 1)
            closing = prefix + marker[0] * (longest + 1) + closing[len(closing_body):]
        body = [(prefix + line if line else prefix.rstrip()) + eol for line in output_lines(content)]
        lines[start : end + 1] = [opening, *body, closing]
    return "".join(lines)


def command_update(args) -> int:
    doc = load(args.md, str(args.md))
    require_transcripts(doc)
    targets = selected_targets(doc, args.only)
    problems = sync_problems(doc)
    if problems:
        print(*problems, sep="\n", file=sys.stderr)
        return DIFFERENT
    stale_numbers(doc)  # a mistake in the prose's markup (exit 2) stops before the runs, MD untouched
    new = {}
    for target in targets:
        output = deterministic_output(doc, target, args.timeout, args.progress)
        if output is None:
            return DIFFERENT
        new[target] = output
    changed = {target: output for target, output in new.items() if output != doc.transcripts[target].content}
    for target, output in changed.items():
        parts, why, piece = split_output(doc.transcripts[target], output)
        if parts is None:
            print(f"{doc.where(piece.fence_line)}: error: cannot cut the new output of {doc.target_shown(target)} "
                  f"into the {len(doc.transcripts[target].pieces())} parts of its transcript: {why}; nothing "
                  f"written. A part begins with a line the program prints exactly once (a heading it prints): "
                  f"move part {piece.part} to begin with such a line, or join it to the part before",
                  file=sys.stderr)
            return DIFFERENT
    if not changed:
        print("transcript unchanged")
        updated = doc
    else:
        updated = write_transcripts(doc, changed)
        write_roots(updated, force=False)  # code below a transcript has moved: its line comments change
    errors, _ = stale_numbers(updated)
    if errors:
        print(*errors, sep="\n", file=sys.stderr)
        print(f"{len(errors)} prose number{'s' if len(errors) != 1 else ''} not printed by the transcript "
              f"{'they cite' if len(errors) != 1 else 'it cites'} (listed above); correct {doc.path.name}",
              file=sys.stderr)
        return DIFFERENT
    return OK


def write_transcripts(doc: Document, changed: dict[str, str]) -> Document:
    """Show what changes, rewrite the Markdown in place, and return the document as rewritten. Writes
    only if the file still holds the bytes that load() read: an edit saved meanwhile is never lost."""
    text, bom = decode_markdown(doc.raw, doc.shown)
    rewritten = rewrite_transcripts(doc, text, changed)
    try:
        updated = parse_document(doc.path, doc.shown, normalize_newlines(rewritten))
    except UserError:
        updated = None
    for target, output in changed.items():
        if updated is None or updated.transcripts.get(target) is None or updated.transcripts[target].content != output:
            line = doc.transcripts[target].fence_line
            nested = not LINE_WITH_END.findall(text)[line - 1].startswith(doc.transcripts[target].markup)
            raise UserError(f"{doc.where(line)}: error: cannot rewrite this transcript in place: the new output "
                            "would change how the Markdown around it reads"
                            + ("; move its fence out of the list item or quote" if nested else ""))
        transcript = doc.transcripts[target]
        print(classify_change(transcript.content, output))
        parts, _, _ = split_output(transcript, output)
        for piece, content in zip(transcript.pieces(), parts):
            if content != piece.content or len(parts) == 1:
                label = "new output" + (f", part {piece.part}" if piece.part else "")
                print(*transcript_diff(doc, piece, content, label, use_color()), sep="\n")
    data = ("\ufeff" if bom else "").encode() + rewritten.encode()
    try:
        try:
            info = os.stat(doc.path)
        except (FileNotFoundError, NotADirectoryError):  # write_atomically would make its folder again
            raise Conflict(f"{doc.shown}: error: no longer exists (deleted while the program ran, with its folder?); "
                           f"nothing written: restore it (git checkout -- {doc.shown}), then run make update again") from None
        if not info.st_mode & 0o222:
            raise UserError(f"{doc.shown}: error: is read-only; transcript not written (chmod u+w it first)")
        links = info.st_nlink
        with signals_deferred():
            written = write_atomically(doc.path, data, expected=doc.raw)
    except OSError as error:
        raise UserError(f"{doc.shown}: error: cannot write it: {describe(error)}") from None
    if not written:
        raise Conflict(f"{doc.shown}: error: changed since update read it (saved from an editor?); nothing "
                       "written, your change is kept: run make update again")
    for target in changed:
        print(f"{doc.shown}: updated the transcript of {doc.target_shown(target)}")
    if links > 1:
        print(f"{doc.shown}: warning: it had {links - 1} other hard link{'s' if links > 2 else ''}, which keep "
              "the old text (update replaces the file; a symlink would have followed)", file=sys.stderr)
    return updated


# ---------------------------------------------------------------- command line


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_TIMEOUT:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0 and at most {MAX_TIMEOUT:g}")
    return value


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="tangle.py", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = top.add_subparsers(dest="command", required=True)
    for name, function, summary in (("tangle", command_tangle, "write the generated files"),
                                    ("check", command_check, "verify generated/, transcript and prose numbers"),
                                    ("update", command_update, "rewrite the transcript from a fresh run")):
        command = commands.add_parser(name, help=summary, description=summary)
        command.add_argument("md", nargs="?", type=Path, default=Path("attention.md"),
                             help="the Markdown lesson (default: ./attention.md)")
        if name == "tangle":
            command.add_argument("--force", action="store_true", help="overwrite generated files edited by hand")
        else:
            command.add_argument("--timeout", type=seconds, default=600, help="seconds a run may take (600)")
            command.add_argument("--only", metavar="PATH", help="run only the program written to PATH, e.g. "
                                 "generated/attention.py (the prose check still reads every transcript)")
            command.add_argument("--progress", action="store_true", help="show what the program writes to "
                                 "stderr (its progress) while it runs, each line prefixed with its path")
        command.set_defaults(function=function)
    return top


@contextlib.contextmanager
def document_lock(path: Path, shown: str):
    """One update of a Markdown file at a time: an exclusive flock on the file itself (so no lock file
    is left behind). A second update gives up at once instead of running the programs for nothing."""
    handle = None
    with contextlib.suppress(OSError):
        if fcntl is not None and stat.S_ISREG(os.stat(path).st_mode):  # else load() says what is wrong
            handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if handle is not None:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise Conflict(f"{shown}: error: another tangle.py update is running on it; "
                               "wait for it to finish, then run make update again") from None
            except OSError:
                pass  # a file system without locks: the byte comparison before writing still guards it
        yield
    finally:
        if handle is not None:
            os.close(handle)


@contextlib.contextmanager
def interrupts_raised():
    """Ctrl-C, SIGTERM and SIGHUP raise Interrupted wherever the program is, so that every finally runs:
    the programs it runs are stopped and temporary files removed (see main)."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {number: signal.getsignal(number) for number in INTERRUPTS}
        previous = {number: handler for number, handler in previous.items() if handler not in (signal.SIG_IGN, None)}
        for number in previous:
            signal.signal(number, raise_interrupted)
    stopped = False
    try:
        yield
    except KeyboardInterrupt:
        stopped = True
        raise
    finally:
        if not (stopped and __name__ == "__main__"):  # run as a script, it stays deaf to them until it exits
            for number, handler in previous.items():
                signal.signal(number, handler)


def raise_interrupted(signum: int, _frame) -> None:
    """The first interrupt raises; later ones (a second Ctrl-C, the SIGTERM of a second program copy)
    are ignored, so that they cannot cut short the cleanup the first one started."""
    for number in INTERRUPTS:
        signal.signal(number, signal.SIG_IGN)
    raise Interrupted(signum)


class ClosedPipeTolerant:
    """sys.stdout or sys.stderr while main() runs: when the reader goes away (check | head -1), the rest
    of the output is dropped instead of ending the command with BrokenPipeError; update still writes.
    (A class only because a stream is one.)"""

    def __init__(self, stream):
        self.stream, self.gone = stream, False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self.stream.write(text)
            except (OSError, ValueError):
                self.drop()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.stream.flush()
            except (OSError, ValueError):
                self.drop()

    def drop(self) -> None:
        self.gone = True
        with contextlib.suppress(OSError, ValueError, AttributeError):  # later flushes, at exit too, go nowhere
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def main(argv: list[str] | None = None) -> int:
    streams = sys.stdout, sys.stderr
    for stream in streams:  # a cp1252 or ASCII console: a Chinese line is shown escaped, never lost with the verdict
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")
    nowhere = open(os.devnull, "w", encoding="utf-8")  # for a stream that was closed before we started (>&-)
    sys.stdout, sys.stderr = (ClosedPipeTolerant(stream or nowhere) for stream in streams)
    try:
        with interrupts_raised():
            return run_command(argv)
    except KeyboardInterrupt as stop:  # Ctrl-C, SIGTERM or SIGHUP; every finally on the way has run
        number = getattr(stop, "signum", signal.SIGINT)
        print(f"tangle.py: interrupted ({signal.Signals(number).name}); stopped the programs it ran, and wrote "
              "nothing more", file=sys.stderr)
        return 128 + number
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        sys.stdout, sys.stderr = streams
        nowhere.close()


def run_command(argv: list[str] | None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as stop:  # argparse: --help (0) or a usage error (2)
        return stop.code if isinstance(stop.code, int) else BAD_INPUT
    try:
        with document_lock(args.md, str(args.md)) if args.command == "update" else contextlib.nullcontext():
            return args.function(args)
    except UserError as error:
        print(*error.messages, sep="\n", file=sys.stderr)
        return error.code
    except OSError as error:  # the environment, not tangle.py: a full disk, a vanished folder, ...
        name = f" {error.filename}" if error.filename else ""
        print(f"tangle.py: error:{name} {describe(error)}", file=sys.stderr)
        return BAD_INPUT
    except MemoryError:
        print("tangle.py: error: out of memory", file=sys.stderr)
        return BAD_INPUT


if __name__ == "__main__":
    raise SystemExit(main())
