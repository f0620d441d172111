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
           transcript in MD in place (every other byte untouched) and re-tangle
           (code below a transcript moves); then list every prose number that
           the transcript it cites does not print (exit 1 if any).

examples:
  python tangle.py tangle                  # write generated/ from ./attention.md
  python tangle.py tangle --force          # overwrite hand edits in generated/
  python tangle.py check docs/lesson.md    # verify another lesson
  python tangle.py update                  # record the program's new output
  python tangle.py check --only generated/attention.py   # run one program only

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
                                            several. At most one per program.
  A fence takes either #name, file= or transcript. Roots must be files that take
  # comments (.py .sh .toml .yaml .yml .cfg .ini); only .py roots are run.
  Fences without braces are illustrations, except that a python fence without
  #name or file= is an error (code the reader sees but that never runs). Fences
  inside HTML comments are not code; fences in list items and quotes are.
  The generated file starts with a do-not-edit banner and the sha256 of the rest
  (how tangle spots hand edits); each piece is preceded by `# MD:LINE (chunk)`.
  A transcript fence holds exactly the program's stdout, which must therefore end
  with a newline; update lengthens the fence when the output contains one.

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
    transcript it holds (the first, if it holds several), or, holding none, the
    main program: the one whose transcript comes first in MD. (In attention.md
    all sections cite generated/attention.py except 「## 30 秒实验」, which holds the
    transcript of generated/experiments.py.)
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
import difflib
import hashlib
import itertools
import os
import posixpath
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

try:
    from markdown_it import MarkdownIt
except ImportError:  # run outside the project's .venv
    print("tangle.py: error: needs markdown-it-py; use make (it builds .venv), "
          "or pip install -r requirements.txt", file=sys.stderr)
    raise SystemExit(2) from None

OK, DIFFERENT, BAD_INPUT = 0, 1, 2
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
    # Speed only: glibc keeps 64 MiB at the top of the heap instead of returning it and
    # faulting it back in every round (measured by make bench: 13-17% of the lesson's time).
    "MALLOC_TOP_PAD_": str(64 << 20),
}
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


class UserError(Exception):
    """A mistake in the input or the command line: its messages are printed, exit 2."""

    def __init__(self, *messages: str):
        super().__init__(*messages)
        self.messages = messages


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
    fence_line: int  # 1-based line of the opening fence
    closing_line: int  # 1-based line of the closing fence
    content: str
    markup: str

    @property
    def first_line(self) -> int:
        return self.fence_line + 1


@dataclass
class Document:
    path: Path
    shown: str  # the path as the user wrote it, for messages
    roots: dict[str, list[Piece]] = field(default_factory=dict)
    chunks: dict[str, list[Piece]] = field(default_factory=dict)
    transcripts: dict[str, Transcript] = field(default_factory=dict)
    tokens: list = field(default_factory=list)

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
    returncode: int | None  # None: killed after the timeout
    stdout: bytes
    stderr: bytes


# ---------------------------------------------------------------- reading


def read_markdown(path: Path, shown: str) -> tuple[str, bool]:
    """The file's text with its own line endings, and whether it had a BOM."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{shown}: error: no such file") from None
    except OSError as error:
        raise UserError(f"{shown}: error: cannot read it: {error.strerror}") from None
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
    text, _ = read_markdown(path, shown)
    doc = parse_document(path, shown, normalize_newlines(text))
    directories = [f"{doc.where(pieces[0].fence_line)}: error: file={target} is a directory"
                   for target, pieces in doc.roots.items() if (doc.folder / target).is_dir()]
    if directories:
        raise UserError(*directories)
    return doc


# ---------------------------------------------------------------- parsing


def parse_document(path: Path, shown: str, text: str) -> Document:
    """Fences, chunks and transcripts of the Markdown text (line endings already \\n)."""
    doc = Document(path=path, shown=shown, tokens=markdown_parser().parse(text))
    lines = text.split("\n")
    problems: list[tuple[int, str]] = []
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
            lang, name, target, transcript = parse_info(token.info)
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
            loose_transcripts.append((transcript, Transcript(line, token.map[1], token.content, token.markup)))
        elif lang in PYTHON_LANGUAGES:
            problems.append((line, f"{lang} fence with neither {{#name}} nor {{file=...}}: the reader would "
                             + "see code that never runs; name it, or use ```text for an illustration"))
    problems += nested_root_problems(doc)
    problems += assign_transcripts(doc, loose_transcripts)
    problems += reference_problems(doc)
    if problems:
        raise UserError(*(f"{doc.where(line)}: error: {what}" for line, what in sorted(problems)))
    if not doc.roots:
        raise UserError(f"{shown}: error: no root chunk, nothing to tangle; "
                        "start one with ```python {file=generated/attention.py}")
    return doc


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
    info = info.strip()
    if "{" not in info:
        return (info.split() or [""])[0], None, None, None
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
        return lang, name, None, None
    target = transcript = None
    for word in inner.split():
        key, equals, value = word.partition("=")
        if key == "file" and equals and target is None:
            target = value.strip('"')
        elif key == "transcript" and transcript is None:
            transcript = value.strip('"')
        else:
            raise ValueError(f"cannot read attribute {word!r}: expected {{#name}}, "
                             "{file=PATH} or {transcript}, once each (#name must come first)")
    if target is not None and transcript is not None:
        raise ValueError("a fence is either a root {file=...} or a {transcript}, not both")
    return lang, None, target, transcript


def target_problem(doc: Document, target: str) -> str | None:
    """Why a file= path cannot be written to, or None."""
    if not target or any(ord(c) < 32 for c in target):
        return f"file={target!r} is not a usable path"
    if target.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", target):
        return f"file={target} is absolute; write it relative to the folder of {doc.path.name}"
    normal = posixpath.normpath(target)
    if normal in (".", "..") or normal.startswith("../"):
        return f"file={target} is outside the folder of {doc.path.name}"
    if not normal.endswith(HASH_COMMENT_SUFFIXES):
        return f"file={target}: tangle writes only files that take # comments ({' '.join(HASH_COMMENT_SUFFIXES)})"
    if (doc.folder / normal).resolve() == doc.path.resolve():
        return f"file={target} would overwrite the Markdown source"
    return None


def nested_root_problems(doc: Document) -> list[tuple[int, str]]:
    return [(pieces[0].fence_line, f"file={target} is also a folder of file={other}")
            for target, pieces in doc.roots.items()
            for other in doc.roots if other.startswith(target + "/")]


def assign_transcripts(doc: Document, found: list[tuple[str | None, Transcript]]) -> list[tuple[int, str]]:
    """Attach each {transcript} fence to its program; returns the problems."""
    programs = [target for target in doc.roots if target.endswith(".py")]
    problems = []
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
        if target in doc.transcripts:
            first = doc.transcripts[target].fence_line
            problems.append((line, f"second transcript of {target} (the first is at line {first})"))
            continue
        doc.transcripts[target] = transcript
    return problems


def references(pieces: list[Piece]):
    """(md line, chunk name) of every <<reference>> line in these pieces."""
    for piece in pieces:
        for offset, code in enumerate(piece.lines):
            match = REFERENCE.match(code)
            if match:
                yield piece.first_line + offset, " ".join(match[2].split())


def reference_problems(doc: Document) -> list[tuple[int, str]]:
    """Undefined, cyclic and unused chunks."""
    problems = []
    for pieces in [*doc.chunks.values(), *doc.roots.values()]:
        for line, name in references(pieces):
            if name not in doc.chunks:
                near = difflib.get_close_matches(name, list(doc.chunks), n=1)
                hint = f"; did you mean <<{near[0]}>>?" if near else ""
                problems.append((line, f"<<{name}>> is not defined: no fence has {{#{name}}}{hint}"))
    used: set[str] = set()

    def visit(pieces: list[Piece], path: list[str]) -> None:
        for line, name in references(pieces):
            if name not in doc.chunks:
                continue
            if name in path:
                cycle = " → ".join([*path[path.index(name):], name])
                what = "includes itself" if len(path) - path.index(name) == 1 else f"is cyclic: {cycle}"
                problems.append((line, f"<<{name}>> {what}"))
            elif name not in used:
                used.add(name)
                visit(doc.chunks[name], [*path, name])

    for pieces in doc.roots.values():
        visit(pieces, [])
    for name, pieces in doc.chunks.items():
        if name not in used:
            problems.append((pieces[0].fence_line, f"chunk {{#{name}}} is never used: no root includes <<{name}>>"))
    return problems


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
    banner = [BANNER.format(source=doc.path.name), HASH_LINE.format(digest=digest)]
    return "\n".join(banner) + "\n" + text, [None, None, *origin]


def expand(doc: Document, pieces: list[Piece], indent: str, body: list[str], origin: list) -> None:
    for piece in pieces:
        body.append(f"{indent}# {doc.path.name}:{piece.first_line} ({piece.label})")
        origin.append((piece.first_line, piece.label))
        for offset, code in enumerate(piece.lines):
            match = REFERENCE.match(code)
            if match:
                name = " ".join(match[2].split())
                expand(doc, doc.chunks[name], indent + match[1], body, origin)
                continue
            body.append(indent + code if code.strip() else "")
            origin.append((piece.first_line + offset, piece.label))


def edited_by_hand(text: str) -> bool:
    """True unless the text is exactly what tangle last wrote (its hash line agrees)."""
    banner, _, rest = text.partition("\n")
    hash_line, _, body = rest.partition("\n")
    match = re.fullmatch(HASH_LINE.format(digest="([0-9a-f]{64})"), hash_line)
    return not (banner.startswith("# Generated from ") and match
                and hashlib.sha256(body.encode()).hexdigest() == match[1])


def read_generated(doc: Document, target: str) -> str | None:
    """The current text of a generated file, None if missing; undecodable text counts as an edit."""
    try:
        return (doc.folder / target).read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise UserError(f"{doc.target_shown(target)}: error: cannot read it: {error.strerror}") from None


def writable_problem(doc: Document, target: str) -> str | None:
    path = doc.folder / target
    if not path.resolve().is_relative_to(doc.folder.resolve()):
        return f"file={target} leads outside the folder of {doc.path.name} (through a symlink)"
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        return f"cannot write file={target}: {folder.relative_to(doc.folder)} is not a directory"
    if not os.access(path if path.exists() else folder, os.W_OK):
        return f"cannot write file={target}: permission denied"
    return None


def write_atomically(path: Path, data: bytes) -> None:
    """Write data to path through a temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def command_tangle(args) -> int:
    write_roots(load(args.md, str(args.md)), args.force)
    return OK


def write_roots(doc: Document, force: bool) -> None:
    """Write every root whose text changed; refuse all writing if any target is unusable or hand-edited."""
    pending: list[tuple[str, str]] = []
    problems = []
    for target, pieces in doc.roots.items():
        problem = writable_problem(doc, target)
        if problem:
            problems.append(f"{doc.where(pieces[0].fence_line)}: error: {problem}")
            continue
        text, _ = render(doc, target)
        current = read_generated(doc, target)
        if current == text:
            continue
        if current is not None and edited_by_hand(current) and not force:
            problems.append(f"{doc.target_shown(target)}: error: edited by hand since it was last tangled; "
                            f"move your change into {doc.path.name}, or rerun with --force to overwrite")
            continue
        pending.append((target, text))
    if problems:
        raise UserError(*problems)
    for target, text in pending:
        try:
            write_atomically(doc.folder / target, text.encode())
        except OSError as error:
            raise UserError(f"{doc.target_shown(target)}: error: cannot write it: {error.strerror}") from None
        print(f"wrote {doc.target_shown(target)}")


# ---------------------------------------------------------------- running


def sync_problems(doc: Document) -> list[str]:
    """Generated files that are not what the Markdown tangles to."""
    problems = []
    for target in doc.roots:
        current = read_generated(doc, target)
        if current == render(doc, target)[0]:
            continue
        if current is None:
            why = "missing; run make tangle"
        elif edited_by_hand(current):
            why = (f"edited by hand since it was last tangled; move your change into {doc.path.name}, "
                   "then run make tangle")
        else:
            why = f"out of date with {doc.path.name}; run make tangle"
        problems.append(f"{doc.target_shown(target)}: error: {why}")
    return problems


def require_transcripts(doc: Document) -> None:
    if not doc.transcripts:
        raise UserError(f"{doc.shown}: error: no transcript; put a ```text {{transcript}} fence "
                        "(it may start empty) where the program's output is documented, then run make update")


def run_program(doc: Document, target: str, timeout: float, copies: int = 1) -> list[Run]:
    """Run a generated program (several copies side by side) in a controlled environment."""
    env = {**os.environ, **RUN_ENV}
    command = [sys.executable, str((doc.folder / target).resolve())]
    processes = [subprocess.Popen(command, cwd=doc.folder, env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(copies)]
    runs = []
    for process in processes:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
            runs.append(Run(process.returncode, stdout, stderr))
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            runs.append(Run(None, stdout, stderr))
    return runs


def map_traceback(doc: Document, target: str, stderr: str) -> tuple[str, int | None]:
    """Point the frames of a traceback in the generated file at the Markdown; also
    return the md line of the innermost such frame."""
    _, origin = render(doc, target)
    generated = os.path.realpath(doc.folder / target)
    innermost = None
    lines = []
    for text in stderr.splitlines():
        match = FRAME.match(text)
        if match and os.path.realpath(doc.folder / match[2]) == generated:
            number = int(match[3])
            if 1 <= number <= len(origin) and origin[number - 1]:
                md_line, label = origin[number - 1]
                innermost = md_line
                text = f"{match[1]}{doc.where(md_line)} ({label}){match[4]}"
        lines.append(text)
    return "\n".join(lines), innermost


def report_failed_run(doc: Document, target: str, run: Run, timeout: float) -> None:
    shown = doc.target_shown(target)
    if run.returncode is None:
        print(f"{shown}: error: did not finish within {timeout:g} s", file=sys.stderr)
        return
    traceback, line = map_traceback(doc, target, run.stderr.decode("utf-8", "replace"))
    print(traceback, file=sys.stderr)
    where = doc.where(line) if line else shown
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
    first, last = transcript.first_line, transcript.first_line + len(old_lines) - 1
    span = f"lines {first}-{last}" if old_lines else f"empty, after line {transcript.fence_line}"
    offset = transcript.fence_line
    lines = []
    for text in difflib.unified_diff(old_lines, new_lines, f"{doc.shown} (transcript, {span})", new_label,
                                     lineterm=""):
        text = re.sub(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@",
                      lambda m: f"@@ -{int(m[1]) + offset}{m[2] or ''} +{int(m[3]) + offset}{m[4] or ''} @@", text)
        lines.append(paint(text, color))
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
        elif token.type == "inline" and previous.type in ("paragraph_open", "th_open", "td_open"):
            if previous.type == "th_open" and BOOK_WORD in token.content:
                book_columns.add(column)
            whole_book = previous.type == "td_open" and column in book_columns
            first_line = token.map[0] + 1 if token.map else row_line
            default = next(program for start, program in reversed(sections) if start <= first_line)
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
    by_line = sorted((transcript.fence_line, target) for target, transcript in doc.transcripts.items())
    main = by_line[0][1] if by_line else ""
    sections = []
    for start, end in itertools.pairwise([*starts, float("inf")]):
        held = [target for line, target in by_line if start <= line < end]
        sections.append((start, held[0] if held else main))
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
    text; a <!-- 数字出自 PATH --> inside it changes that up to the end of its sentence."""
    text, comments = flatten_inline(token)
    spans = []
    for start in (match.start() for match in re.finditer(BOOK_WORD, text)):
        end = BOOK_SPAN_END.search(text, start)
        spans.append((start, end.start() if end else len(text)))
    sentence_cites = []
    for offset, html in comments:
        line = first_line + text.count("\n", 0, offset)
        program = cited_program(doc, html, line, problems, alone=False)
        if program is not None:
            end = SENTENCE_END.search(text, offset)
            sentence_cites.append((offset, end.start() if end else len(text), program, line))
    numbers = []
    for match in NUMBER.finditer(text):
        if ("." not in match[0] and len(match[0]) == 1) or UNIT_AFTER.match(text, match.end()):
            continue
        book = whole_book or any(start <= match.start() < end for start, end in spans)
        program, cited_on = next(((program, line) for start, end, program, line in reversed(sentence_cites)
                                  if start <= match.start() < end), cites)
        numbers.append(ProseNumber(first_line + text.count("\n", 0, match.start()), match[0], book,
                                   program, cited_on, token, match.start()))
    return numbers


def flatten_inline(token) -> tuple[str, list[tuple[int, str]]]:
    """The text children of an inline token, line breaks as \\n; code spans, HTML, images,
    autolinks and bare URLs become a separator. Also (offset in that text, HTML) of each inline HTML."""
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
    return "".join(parts), html


def transcript_numbers(doc: Document) -> dict[str, set[str]]:
    """The numbers each program's transcript prints, by program."""
    return {target: {match[0] for match in NUMBER.finditer(transcript.content)}
            for target, transcript in doc.transcripts.items()}


def read_book_figures(doc: Document) -> set[str]:
    """The figures the book prints, from book_figures.txt beside MD: one number a line, # comments."""
    path = doc.folder / BOOK_FIGURES
    shown = os.path.join(os.path.dirname(doc.shown), BOOK_FIGURES)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{shown}: error: no such file; {doc.shown} marks numbers as the book's (原书), so "
                        f"{BOOK_FIGURES} beside it must list the figures the book prints, one a line") from None
    except OSError as error:
        raise UserError(f"{shown}: error: cannot read it: {error.strerror}") from None
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
        for offset, text in enumerate(output_lines(transcript.content)):
            for match in NUMBER.finditer(text):
                where = lines.setdefault(match[0], [])
                if not where or where[-1] != transcript.first_line + offset:
                    where.append(transcript.first_line + offset)
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
        run = run_program(doc, target, args.timeout)[0]
        if run.returncode != 0:
            report_failed_run(doc, target, run, args.timeout)
            outcomes.append(f"{doc.target_shown(target)} failed")
        elif run.stdout != transcript.content.encode():
            actual = run.stdout.decode("utf-8", "replace")
            print(f"{doc.where(transcript.first_line)}: error: the output of {doc.target_shown(target)} "
                  "differs from its transcript", file=sys.stderr)
            print(classify_change(transcript.content, actual))
            print(*transcript_diff(doc, transcript, actual, "actual output", use_color()), sep="\n")
            outcomes.append("transcript differs")
    if errors:
        print(*errors, sep="\n", file=sys.stderr)
        outcomes.append(f"{len(errors)} not in the transcript")
    book = sum(number.book for number in numbers)
    verdict = "; ".join(outcomes) or ("transcript matches" if len(targets) == 1 else "transcripts match")
    print(f"checked {len(numbers)} prose numbers ({book} marked as the book's); {verdict}")
    return DIFFERENT if outcomes else OK


def deterministic_output(doc: Document, target: str, timeout: float) -> str | None:
    """The program's stdout if two runs agree and it is usable as a transcript; else report, None."""
    shown = doc.target_shown(target)
    first, second = run_program(doc, target, timeout, copies=2)
    for run in (first, second):
        if run.returncode != 0:
            report_failed_run(doc, target, run, timeout)
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
    return output


def rewrite_transcripts(doc: Document, text: str, new: dict[str, str]) -> str:
    """The Markdown text (original line endings) with these transcripts' contents replaced."""
    lines = LINE_WITH_END.findall(text)
    for target in sorted(new, key=lambda t: -doc.transcripts[t].fence_line):
        transcript = doc.transcripts[target]
        start, end = transcript.fence_line - 1, transcript.closing_line - 1
        opening, closing = lines[start], lines[end]
        eol = re.search(r"\r\n|\r|\n", opening)
        eol = eol[0] if eol else "\n"
        closing_body = closing.rstrip("\r\n")
        prefix = closing_body[: len(closing_body) - len(closing_body.lstrip(" \t>"))]
        marker = transcript.markup
        longest = max(map(len, fence_runs(marker[0], new[target])), default=0)
        if longest >= len(marker):
            opening = opening.replace(marker, marker[0] * (longest + 1), 1)
            closing = prefix + marker[0] * (longest + 1) + closing[len(closing_body):]
        body = [(prefix + line if line else prefix.rstrip()) + eol for line in output_lines(new[target])]
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
        output = deterministic_output(doc, target, args.timeout)
        if output is None:
            return DIFFERENT
        new[target] = output
    changed = {target: output for target, output in new.items() if output != doc.transcripts[target].content}
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
    """Show what changes, rewrite the Markdown in place, and return the document as rewritten."""
    text, bom = read_markdown(doc.path, doc.shown)
    rewritten = rewrite_transcripts(doc, text, changed)
    updated = parse_document(doc.path, doc.shown, normalize_newlines(rewritten))
    for target, output in changed.items():
        if updated.transcripts.get(target) is None or updated.transcripts[target].content != output:
            line = doc.transcripts[target].fence_line
            raise UserError(f"{doc.where(line)}: error: cannot rewrite this transcript in place; "
                            "move its fence out of the list item or quote")
        transcript = doc.transcripts[target]
        print(classify_change(transcript.content, output))
        print(*transcript_diff(doc, transcript, output, "new output", use_color()), sep="\n")
    try:
        write_atomically(doc.path, ("\ufeff" if bom else "").encode() + rewritten.encode())
    except OSError as error:
        raise UserError(f"{doc.shown}: error: cannot write it: {error.strerror}") from None
    for target in changed:
        print(f"{doc.shown}: updated the transcript of {doc.target_shown(target)}")
    return updated


# ---------------------------------------------------------------- command line


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
            command.add_argument("--timeout", type=float, default=600, help="seconds a run may take (600)")
            command.add_argument("--only", metavar="PATH", help="run only the program written to PATH, e.g. "
                                 "generated/attention.py (the prose check still reads every transcript)")
        command.set_defaults(function=function)
    return top


def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as stop:  # argparse: --help (0) or a usage error (2)
        return stop.code if isinstance(stop.code, int) else BAD_INPUT
    try:
        return args.function(args)
    except UserError as error:
        print(*error.messages, sep="\n", file=sys.stderr)
        return BAD_INPUT


if __name__ == "__main__":
    raise SystemExit(main())
