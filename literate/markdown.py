"""Reading the Markdown: bytes to text, markdown-it tokens to a Document (fences, chunks, roots, transcripts, and
the typed blocks of reading.py that the back ends walk)."""

from __future__ import annotations

import collections
import errno
import os
import posixpath
import re
import stat
import sys
from pathlib import Path

from .captions import caption_problems, find_captions, math_warnings
from .files import describe, file_kind, read_regular
from .model import (Document, HASH_COMMENT_SUFFIXES, LINE_BREAKING, LINE_WITH_END, MAX_MARKDOWN_BYTES,
                    PYTHON_LANGUAGES, chunk_name, confinement_problem, Piece, Playground, Transcript, UserError,
                    output_lines)
from .declarations import is_declaration, read_declarations
from .reading import Reader, read_blocks
from .startup import missing
from .validation import CONTROL, anchor_problems, invisible_problems, reference_problems, shown_line


try:
    from markdown_it import MarkdownIt
except ImportError:  # run outside the project's .venv, or a .venv that is broken
    missing("tangle.py", "markdown-it-py", "use make (it builds .venv), or pip install -r requirements.txt; if "
            ".venv exists but is broken, run make clean first")


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


def read_inline(text: str) -> list:
    """The spans (blocks.py) of a line of Markdown that is not in the lesson's body (the notebook's words the lesson
    declares), read as the lesson's own text is read."""
    return [span for token in markdown_parser().parseInline(text) for span in Reader({}, {}).inline(token).spans]


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


def parse_document(path: Path, shown: str, text: str) -> Document:
    """Fences, chunks and transcripts of the Markdown text (line endings already \\n)."""
    try:
        tokens = markdown_parser().parse(text)
    except RecursionError:
        raise UserError(f"{shown}: error: nested too deeply for the Markdown parser") from None
    lines = text.split("\n")
    doc = Document(path=path, shown=shown, lines=lines)
    problems = control_problems(lines)
    problems += hidden_code_problems(doc, tokens, lines)
    loose_transcripts: list[tuple[str | None, Transcript]] = []
    for token in tokens:
        if token.type != "fence":
            continue
        line = token.map[0] + 1
        if not is_closed(token, lines):
            where = "the file" if token.map[1] >= len(lines) - 1 else "its list item or quote"
            problems.append((line, f"unterminated code fence: no closing {token.markup} before the end of {where}"))
            continue
        try:
            lang, name, target, transcript, part, playground = fence_attributes(token.info)
        except ValueError as error:
            problems.append((line, str(error)))
            continue
        code = token.content.split("\n")[:-1]
        if name is not None:
            doc.chunks.setdefault(name, []).append(Piece(line, name, code, lang))
        elif target is not None:
            problem = target_problem(doc, target)
            if problem:
                problems.append((line, problem))
            else:
                target = posixpath.normpath(target)
                doc.roots.setdefault(target, []).append(Piece(line, target, code, lang))
        elif playground is not None:
            doc.playgrounds[line] = Playground(line, posixpath.normpath(playground), code, lang)
        elif transcript is not None:
            loose_transcripts.append((transcript, Transcript(line, token.map[1], token.content, token.markup, part)))
        elif lang in PYTHON_LANGUAGES:
            problems.append((line, f"{lang} fence with neither {{#name}} nor {{file=...}}: the reader would "
                             + "see code that never runs; name it, or use ```text for an illustration"))
    doc.declared, declaration_problems = read_declarations(
        [(token.map[0] + 1, token.content) for token in tokens if token.type == "html_block" and token.map
         and is_declaration(token.content)])
    problems += declaration_problems
    problems += [(line, f"〈{name}〉 in the notebook's {key} names no chunk: rename it to the chunk's name")
                 for key, text, line in doc.declared.texts() for name in re.findall(r"〈([^〈〉]+)〉", text)
                 if chunk_name(name) not in doc.chunks and name not in doc.roots]
    problems += [(line, f"{{playground={found.program}}} names no program: a playground uses the names of one "
                        "{file=....py} root") for line, found in doc.playgrounds.items()
                 if found.program not in doc.roots or not found.program.endswith(".py")]
    problems += nested_root_problems(doc)
    problems += assign_transcripts(doc, loose_transcripts)
    problems += invisible_problems(doc)
    problems += reference_problems(doc)
    problems += anchor_problems(doc)
    captions = find_captions(tokens)
    doc.captions = {caption.fence_line: caption for caption in captions if caption.fence_line is not None}
    problems += caption_problems(doc, captions, tokens)
    doc.blocks = read_blocks(tokens, doc.fences(), doc.playgrounds, doc.captions)
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
# the first { found without backtracking ([^`{]*, not [^`]*: that took time quadratic in a line of many {)
FENCE_WITH_ATTRIBUTES = re.compile(r"^[ \t>]*(?:(?:[-+*]|[0-9]{1,9}[.)])[ \t]+)*(?:`{3,}[^`{]*|~{3,}[^{]*)\{.*\}[ \t]*$")


def hidden_code_problems(doc: Document, tokens: list, lines: list[str]) -> list[tuple[int, str]]:
    """Code that Markdown silently reads as something else: an HTML comment (or <pre>, ...) that never
    closes hides the rest of the document (an error); a fence line with {attributes} that is not a fence,
    or an indented closing fence that does not close, changes what is code (warnings, in doc.warnings)."""
    problems, warnings = [], []
    owner: dict[int, object] = {}  # 0-based line -> the fence, indented code or HTML block holding it
    for token in tokens:
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


def fence_attributes(info: str) -> tuple[str, str | None, str | None, str | None, int | None, str | None]:
    """`python {#name}` / `python {file=PATH}` / `text {transcript[=PATH]} [part=N]` / `python {playground=PATH}`
    -> (language, name, file, transcript, N, playground); transcript is "" for a bare {transcript}, N None
    without part=."""
    info = info.strip()
    if "{" not in info:
        return (info.split() or [""])[0], None, None, None, None, None
    brace = info.index("{")
    lang = (info[:brace].split() or [""])[0]
    if not info.endswith("}"):
        raise ValueError(f"attributes {info[brace:]!r} do not end with }}")
    inner = info[brace + 1 : -1].strip()
    if inner.startswith("#"):
        name = chunk_name(inner[1:])
        if not name:
            raise ValueError("empty chunk name after #")
        if re.search(r"(?:^|\s)(?:file|transcript)=", name):
            raise ValueError("a fence is either a named chunk {#name} or a root {file=...}, not both")
        return lang, name, None, None, None, None
    target = transcript = part = playground = None
    for word in filter(None, re.split(r"[ \t]+", inner)):  # ASCII blanks: a U+2028 in a path is reported as such
        key, equals, value = word.partition("=")
        if key == "file" and equals and target is None:
            target = value.strip('"')
        elif key == "transcript" and transcript is None:
            transcript = value.strip('"')
        elif key == "playground" and equals and value and playground is None:
            playground = value.strip('"')
        elif key == "part" and equals and part is None:
            if not re.fullmatch(r"[1-9][0-9]{0,3}", value):
                raise ValueError(f"cannot read {word!r}: a part is numbered 1, 2, 3, ... (part=1 on the first)")
            part = int(value)
        else:
            raise ValueError(f"cannot read attribute {word!r}: expected {{#name}}, {{file=PATH}}, "
                             "{transcript} (with part=N) or {playground=PATH}, once each (#name must come first)")
    if sum(value is not None for value in (target, transcript, playground)) > 1:
        raise ValueError("a fence is one of a root {file=...}, a {transcript} and a {playground=...}, not two")
    if part is not None and transcript is None:
        raise ValueError("part=N numbers the fences of one {transcript}; this fence is no transcript")
    return lang, None, target, transcript, part, playground


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
    problem = confinement_problem(normal)
    if problem:
        return f"file={target} {problem}"
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
