"""Reading the Markdown: bytes to text, markdown-it tokens to a Document (fences, chunks, roots, transcripts, and
the typed blocks of reading.py that the back ends walk), then the checks every tool runs on the finished document."""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from . import blocks
from .captions import caption_problems, find_captions, math_warnings
from .files import describe, file_kind, read_regular
from .ipython import misread
from .language import read_language
from .makefile import lesson_command
from .model import Document, LINE_BREAKING, LINE_WITH_END, MAX_MARKDOWN_BYTES, chunk_name, Source, UserError
from .declarations import is_declaration, read_declarations
from .fences import (index_fences, misplaced_python, nested_root_problems, output_fence_problems,
                     python_illustration_problems, read_fence, split_problems)
from .reading import Reader, read_blocks
from .startup import missing
from .validation import (CONTROL, anchor_problems, invisible_problems, lookalike, parts_problems,
                         reference_problems)


try:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import blockquote, list_block
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


class NestedTooDeeply(Exception):
    """A list or quote that would put its content deeper than the parser reads (its maxNesting): markdown-it
    would skip the rest of the document there, silently."""

    def __init__(self, line: int):
        super().__init__(line)
        self.line = line


def nesting_guard(state, line: int, end: int, silent: bool) -> bool:
    """A block rule tried before all others: refuses (NestedTooDeeply) a list or quote whose content the parser
    would not read, where markdown-it would drop it and all after it. A list nests its content two levels
    deeper (the list and its item), a quote one. Matches nothing, so every other rule runs as before."""
    deepest = state.md.options["maxNesting"]
    if state.level >= deepest - 2 and not silent and (
            list_block(state, line, end, True) or state.level >= deepest - 1 and blockquote(state, line, end, True)):
        raise NestedTooDeeply(line + 1)
    return False


def markdown_parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark").enable("table")
    parser.block.ruler.before("table", "nesting_guard", nesting_guard)
    return parser


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
            return f"file={target} is a symlink loop; remove it, then run {lesson_command(doc, 'tangle')}"
        return f"file={target}: {describe(error)}"
    if stat.S_ISDIR(info.st_mode):
        return f"file={target} is a directory"
    if not stat.S_ISREG(info.st_mode):
        return (f"file={target} is {file_kind(info.st_mode)}, not a regular file; remove it, then run "
                f"{lesson_command(doc, 'tangle')}")
    return None


def parse_document(path: Path, shown: str, text: str) -> Document:
    """Fences, chunks and transcripts of the Markdown text (line endings already \\n), built, then checked: every
    problem of either stage is reported at once, sorted by line."""
    doc, source, problems = build_document(path, shown, text)
    problems += [problem for check in DOCUMENT_CHECKS for problem in check(doc)]
    problems += [problem for check in SOURCE_CHECKS for problem in check(doc, source)]
    doc.warnings = hidden_code_warnings(doc, source) + math_warnings(doc)
    if problems:
        raise UserError(*(f"{doc.where(line)}: error: {what}" for line, what in sorted(problems)))
    if not doc.roots:
        raise UserError(f"{shown}: error: no root chunk, nothing to tangle; "
                        "start one with ```python {file=generated/attention.py}")
    return doc


def build_document(path: Path, shown: str, text: str) -> tuple[Document, Source, list[tuple[int, str]]]:
    """The whole Document (chunks, roots, playgrounds, declarations, transcripts, captions, blocks), what the parser
    saw besides it, and what could not be read into it (line, why): the checks then see a finished document."""
    tokens, references = parse_markdown(shown, text)
    doc = Document(path=path, shown=shown, lines=text.split("\n"))
    captions = find_captions(tokens)
    doc.captions = {caption.fence_line: caption for caption in captions if caption.fence_line is not None}
    doc.blocks, problems = read_blocks(tokens, doc.captions, functools.partial(read_fence, doc))
    problems += index_fences(doc)  # the tables of chunks, roots, playgrounds and transcripts, from the blocks
    doc.declared, declaration_problems = read_declarations(
        [(block.line, block.html) for block in blocks.of_kind(doc.blocks, blocks.HtmlBlock)
         if is_declaration(block.html) and "-->" in block.html])  # unclosed: hidden_code_problems says so
    problems += declaration_problems
    doc.language = read_language(doc.declared.language, seen_prose(doc.blocks))
    return doc, Source(tokens, references, captions), problems


def seen_prose(lesson: list):
    """What a reader sees of the prose, which the lesson's language is read from: paragraphs, headings and cells
    (not captions: they are names), and the text of HTML blocks."""
    yield from (inline.flat for inline in blocks.texts(lesson) if not inline.caption)
    yield from (block.text.flat for block in blocks.of_kind(lesson, blocks.HtmlBlock) if block.text is not None)


def parse_markdown(shown: str, text: str) -> tuple[list, dict]:
    """markdown-it's tokens of the text, and its link reference definitions."""
    environment: dict = {}
    try:
        tokens = markdown_parser().parse(text, environment)
    except RecursionError:
        raise UserError(f"{shown}: error: nested too deeply for the Markdown parser") from None
    except NestedTooDeeply as deep:
        raise UserError(f"{shown}:{deep.line}: error: lists and quotes nested too deeply here (the parser reads "
                        f"{MarkdownIt('commonmark').options['maxNesting']} levels: a list counts two, a quote "
                        "one): it would leave out this block and the rest of the lesson after it; nest them less "
                        "deeply") from None
    return tokens, environment.get("references", {})


# The checks: each refuses something a finished document says (building has refused what it could not read), and
# returns (line, why) for each: check(doc), or check(doc, source) for the few that read what the parser saw besides.
# All are run, and what they find is reported sorted by line (then by text).
DocumentCheck = Callable[[Document], list[tuple[int, str]]]
SourceCheck = Callable[[Document, Source], list[tuple[int, str]]]


def control_problems(doc: Document) -> list[tuple[int, str]]:
    """Invisible control characters: markdown-it would turn NUL into U+FFFD, and tools disagree on the rest."""
    problems = []
    for number, line in enumerate(doc.lines, 1):
        match = CONTROL.search(line)
        if match:
            code = ord(match[0])
            what = "a NUL byte" if code == 0 else f"an invisible control character U+{code:04X}"
            problems.append((number, f"{what}; delete it (in code, write it as an escape: \\x{code:02x})"))
    return problems


def footnote_problems(doc: Document, source: Source) -> list[tuple[int, str]]:
    """GitHub shows a footnote ([^1]: text) where CommonMark reads a link reference definition, which neither the
    check nor the page shows: its numbers would go unchecked, its text missing from the page. Refused, at the
    line that defines it (the parser gives a definition no line: the first line that holds its label)."""
    labels = {label for label in source.references if label.startswith("^")}  # as markdown-it keeps them: upper case
    found = {}
    for number, text in enumerate(doc.lines, 1):
        for match in re.finditer(r"\[(\^[^\]]{1,999})\]:", text) if labels and "[^" in text else ():
            found.setdefault(" ".join(match[1].split()).lower().upper(), (number, match[1]))
    why = ("GitHub shows it as a footnote, but CommonMark reads it as a link's target: the check does not read it "
           "and the page does not show it; write it as a sentence or in parentheses")
    return [(line, f"[{written[:40]}]: is a footnote: {why}")
            for line, written in sorted(found.get(label, (1, label)) for label in labels)]


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


def hidden_code_problems(doc: Document) -> list[tuple[int, str]]:
    """Code that Markdown silently reads as something else: an HTML comment (or <pre>, ...) that never closes hides
    the rest of the document (hidden_code_warnings says what else changes what is code, less harmfully)."""
    problems = []
    for block in blocks.of_kind(doc.blocks, blocks.HtmlBlock):
        content = block.html.lstrip(" ")
        for start, end, what, closer in HTML_BLOCK_END:
            opening = start.match(content)
            if opening:
                tag = [group.lower() for group in opening.groups()]
                what, closer = what.format(*tag), closer.format(*tag)
                if not end.search(content):
                    fences = sum(bool(FENCE_LIKE.match(line)) for line in content.split("\n"))
                    where = "file" if block.end >= len(doc.lines) - 1 else "list item or quote"
                    hidden = f", {fences} code fence line{'s' if fences != 1 else ''} included" if fences else ""
                    problems.append((block.line, f"unclosed {what}: no {closer} follows, so Markdown "
                                     f"hides the rest of the {where}{hidden}; close it"))
                break
    return problems


def hidden_code_warnings(doc: Document, source: Source) -> list[str]:
    """Code that Markdown silently reads as something else, warned about (the lesson may mean it): a fence line
    with {attributes} that is not a fence, or an indented closing fence that does not close, changes what is code."""
    warnings = []
    owner: dict[int, object] = {}  # 0-based line -> the fence, indented code or HTML block holding it
    for token in source.tokens:
        if token.type in ("fence", "code_block", "html_block") and token.map:
            for number in range(*token.map):
                owner.setdefault(number, token)
        if token.type == "fence" and token.map and len(token.markup) >= 3:
            closing = re.compile(rf"(?: {{4,}}|[ ]*\t[ \t]*){re.escape(token.markup[0])}{{{len(token.markup)},}}[ \t]*")
            for offset, code in enumerate(token.content.split("\n")[:-1]):
                if closing.fullmatch(code):
                    warnings.append((token.map[0] + 2 + offset, f"indented 4 or more spaces, so it does not close "
                                     f"the fence opened at line {token.map[0] + 1}: it is code; unindent it to close"))
    for number, line in enumerate(doc.lines):
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
    return [f"{doc.where(line)}: warning: {what}" for line, what in sorted(warnings)]


def declared_name_problems(doc: Document) -> list[tuple[int, str]]:
    """The notebook's words (its notebook-* declarations) name code as the lesson does, 〈name〉: a name that is no
    chunk or root would send the reader looking for code that is not there."""
    return [(line, f"〈{name}〉 in the notebook's {key} names no chunk: rename it to the chunk's name")
            for key, text, line in doc.declared.texts() for name in re.findall(r"〈([^〈〉]+)〉", text)
            if chunk_name(name) not in doc.chunks and name not in doc.roots]


def playground_name_problems(doc: Document) -> list[tuple[int, str]]:
    """A playground runs with the names one Python program defines: {playground=PATH} names a .py root."""
    return [(line, f"{{playground={found.program}}} names no program: a playground uses the names of one "
                   "{file=....py} root" + lookalike(found.program, doc.roots))
            for line, found in doc.playgrounds.items()
            if found.program not in doc.roots or not found.program.endswith(".py")]


def playground_problems(doc: Document) -> list[tuple[int, str]]:
    """A playground of a Python program is a cell in the notebook: one IPython would not run as the Python it is (a
    shell command, a magic) is refused by every tool, not only by the notebook."""
    problems = []
    for found in doc.playgrounds.values():
        python = found.program.endswith(".py")
        wrong = misread(found.lines, f"the playground of {found.program}") if python else None
        if wrong:
            problems.append((found.fence_line + 1 + wrong[0], f"{wrong[1]}; write it as Python"))
    return problems


DOCUMENT_CHECKS: tuple[DocumentCheck, ...] = (
    control_problems,
    python_illustration_problems,
    declared_name_problems,
    playground_name_problems,
    playground_problems,
    nested_root_problems,
    split_problems,
    invisible_problems,
    reference_problems,
    misplaced_python,
    parts_problems,
    anchor_problems,
    output_fence_problems,  # output nothing compares: refused by every tool, the page's too
    hidden_code_problems,
)
SOURCE_CHECKS: tuple[SourceCheck, ...] = (
    footnote_problems,
    caption_problems,
)
