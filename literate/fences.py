"""What a fence's attributes say: its role (a chunk, a root, a transcript or its part, a playground, an illustration),
where a root may be written, each transcript fence attached to its program, and the fences a reader would take for a
program's output that are no transcript."""

from __future__ import annotations

import collections
import os
import posixpath
import re

from . import blocks
from .blocks import Role, fence_language
from .model import (Document, HASH_COMMENT_SUFFIXES, LINE_BREAKING, MAX_NAME, MAX_PATH_DEPTH, PYTHON_LANGUAGE,
                    chunk_name, fence_runs, output_lines, Piece, Playground, quoted, reference, Transcript, walk)
from .places import confinement_problem
from .validation import lookalike, shown_line


def read_fence(doc: Document, token) -> tuple[Role, str, Piece | Transcript | Playground | None]:
    """What a fence's attributes make it: its role, its label (a chunk's name, a file's path; a transcript's program
    as written, "" where it names none: index_fences settles which) and what tangle reads from it. ValueError: why
    it cannot be read."""
    line = token.map[0] + 1
    if not is_closed(token, doc.lines):
        where = "the file" if token.map[1] >= len(doc.lines) - 1 else "its list item or quote"
        raise ValueError(f"unterminated code fence: no closing {token.markup} before the end of {where}")
    lang, name, target, transcript, part, playground = fence_attributes(token.info)
    code = token.content.split("\n")[:-1]
    if name is not None:
        return Role.CHUNK, name, Piece(line, name, code, lang)
    if target is not None:
        problem = target_problem(doc, target)
        if problem:
            raise ValueError(problem)
        target = posixpath.normpath(target)
        return Role.ROOT, target, Piece(line, target, code, lang)
    if playground is not None:
        program = posixpath.normpath(playground)
        return Role.PLAYGROUND, program, Playground(line, program, code, lang)
    if transcript is not None:
        return Role.TRANSCRIPT, transcript, Transcript(line, token.map[1], token.content, token.markup, part)
    return Role.ILLUSTRATION, "", None


def is_closed(token, lines: list[str]) -> bool:
    """markdown-it closes an unterminated fence silently at the end of the file
    (or of its list item): the last line of the block must be a closing fence."""
    start, end = token.map
    if end - 1 <= start:
        return False
    last = lines[end - 1].lstrip(" \t>")
    return any(len(run) >= len(token.markup) for run in fence_runs(token.markup[0], last))


def fence_attributes(info: str) -> tuple[str, str | None, str | None, str | None, int | None, str | None]:
    """`python {#name}` / `python {file=PATH}` / `text {transcript[=PATH]} [part=N]` / `python {playground=PATH}`
    -> (language, name, file, transcript, N, playground); transcript is "" for a bare {transcript}, N None
    without part=. `pycon {illustration}` is an illustration, as a fence without braces is, said on purpose
    (output_fence_problems)."""
    info = info.strip()
    lang = fence_language(info)
    if "{" not in info:
        return lang, None, None, None, None, None
    brace = info.index("{")
    if not info.endswith("}"):
        raise ValueError(f"attributes {quoted(info[brace:])} do not end with }}")
    inner = info[brace + 1 : -1].strip()
    if inner.startswith("#"):
        name = chunk_name(inner[1:])
        if not name:
            raise ValueError("empty chunk name after #")
        if len(name) > MAX_NAME:
            raise ValueError(f"the chunk name {quoted(name)} is {len(name):,} characters long (the limit is "
                             f"{MAX_NAME}); a name is a few words")
        if reference(f"<<{name}>>") != ("", name):
            raise ValueError(f"a chunk name cannot hold << or >>: <<{name}>> would not name it")
        if re.search(r"(?:^|\s)(?:file|transcript)=", name):
            raise ValueError("a fence is either a named chunk {#name} or a root {file=...}, not both")
        return lang, name, None, None, None, None
    target = transcript = part = playground = illustration = None
    for word in filter(None, re.split(r"[ \t]+", inner)):  # ASCII blanks: a U+2028 in a path is reported as such
        key, equals, value = word.partition("=")
        if word == "illustration" and illustration is None:
            illustration = True
        elif key == "file" and equals and target is None:
            target = value.strip('"')
        elif key == "transcript" and transcript is None:
            transcript = value.strip('"')
        elif key == "playground" and equals and value and playground is None:
            playground = value.strip('"')
        elif key == "part" and equals and part is None:
            if not re.fullmatch(r"[1-9][0-9]{0,3}", value):
                raise ValueError(f"cannot read {quoted(word)}: a part is numbered 1, 2, 3, ... (part=1 on the first)")
            part = int(value)
        else:
            raise ValueError(f"cannot read attribute {quoted(word)}: expected {{#name}}, {{file=PATH}}, "
                             "{transcript} (with part=N), {playground=PATH} or {illustration}, once each (#name "
                             "must come first)")
    long = next((path for path in (target, transcript, playground) if path and len(path) > MAX_NAME), None)
    if long:
        raise ValueError(f"the path {quoted(long)} is {len(long):,} characters long (the limit is {MAX_NAME})")
    if sum(value is not None for value in (target, transcript, playground)) > 1:
        raise ValueError("a fence is one of a root {file=...}, a {transcript} and a {playground=...}, not two")
    if part is not None and transcript is None:
        raise ValueError("part=N numbers the fences of one {transcript}; this fence is no transcript")
    if illustration and any(value is not None for value in (target, transcript, playground)):
        raise ValueError("{illustration} marks a fence that tangle does not read: it takes no other attribute")
    return lang, None, target, transcript, part, playground


def target_problem(doc: Document, target: str) -> str | None:
    """Why a file= path cannot be written to, or None."""
    if not target or LINE_BREAKING.search(target):
        return f"file={quoted(target)} is not a usable path"
    if target.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", target):
        return f"file={target} is absolute; write it relative to the folder of {doc.path.name}"
    if "\\" in target:  # on Linux and macOS a backslash is part of a file's name, not a separator
        return (f"file={target} has a backslash: write / between folders "
                f"({target.replace(chr(92), '/')}), as on every system")
    normal = posixpath.normpath(target)
    if normal.count("/") >= MAX_PATH_DEPTH:
        return f"file={quoted(target)} is {normal.count('/')} folders deep (the limit is {MAX_PATH_DEPTH - 1})"
    if normal in (".", "..") or normal.startswith("../"):
        return f"file={target} is outside the folder of {doc.path.name}"
    if not normal.endswith(HASH_COMMENT_SUFFIXES):
        return f"file={target}: tangle writes only files that take # comments ({' '.join(HASH_COMMENT_SUFFIXES)})"
    problem = confinement_problem(normal, doc.folder)
    if problem:
        return f"file={target} {problem}"
    if os.path.realpath(doc.folder / normal) == os.path.realpath(doc.path):
        return f"file={target} would overwrite the Markdown source"
    return None


def nested_root_problems(doc: Document) -> list[tuple[int, str]]:
    return [(pieces[0].fence_line, f"file={target} is also a folder of file={other}")
            for target, pieces in doc.roots.items()
            for other in doc.roots if other.startswith(target + "/")]


def index_fences(doc: Document) -> list[tuple[int, str]]:
    """The lesson's tables gathered from its fences, in document order: doc.chunks and doc.roots (each fence's index
    is its place in its label's list), doc.playgrounds, and doc.transcripts, each transcript fence then labelled
    with the program it belongs to and indexed among that program's parts. Returns the transcript fences that
    belong to no program (assign_transcripts says why): they are left UNREAD."""
    transcript_fences = {}
    for fence in blocks.fences(doc.blocks):
        if fence.role in (Role.CHUNK, Role.ROOT):
            pieces = (doc.chunks if fence.role is Role.CHUNK else doc.roots).setdefault(fence.label, [])
            fence.index = len(pieces)
            pieces.append(fence.piece)
        elif fence.role is Role.PLAYGROUND:
            doc.playgrounds[fence.line] = fence.piece
        elif fence.role is Role.TRANSCRIPT:
            transcript_fences[fence.line] = fence
    problems = assign_transcripts(doc, [(fence.label, fence.piece) for fence in transcript_fences.values()])
    for target, transcript in doc.transcripts.items():
        for index, part in enumerate(transcript.pieces()):
            fence = transcript_fences.pop(part.fence_line)
            fence.label, fence.index = target, index
    for fence in transcript_fences.values():
        fence.role = Role.UNREAD
    return problems


def assign_transcripts(doc: Document, found: list[tuple[str | None, Transcript]]) -> list[tuple[int, str]]:
    """Attach each {transcript} fence to its program; a program's fences numbered part=1, part=2, ... in
    document order are the parts of one output. Returns the fences it could not attach, and why."""
    programs = [target for target in doc.roots if target.endswith(".py")]
    problems = []
    fences: dict[str, list[Transcript]] = {}
    for target, transcript in found:
        line = transcript.fence_line
        if target:
            target = posixpath.normpath(target)
            if target not in programs:
                problems.append((line, f"{{transcript={target}}} names no .py root; the roots are: "
                                 + (", ".join(programs) or "none") + lookalike(target, programs)))
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
        doc.transcripts[target] = Transcript(first.fence_line, first.closing_line,
                                             "".join(part.content for part in parts), first.markup, parts=parts)
    return problems


def split_problems(doc: Document) -> list[tuple[int, str]]:
    """update finds where part N (N >= 2) of a program's output begins in new output by its first line, so that
    line must be in the output exactly once: a part must not be empty, nor begin with a line printed twice."""
    return [problem for target, transcript in doc.transcripts.items()
            for problem in program_split_problems(target, transcript.parts)]


def program_split_problems(target: str, parts: list[Transcript]) -> list[tuple[int, str]]:
    """split_problems for the parts of one program's output (none: its output is one fence)."""
    problems = []
    printed = collections.Counter(line for part in parts for line in output_lines(part.content))
    for part in parts[1:]:
        own = output_lines(part.content)
        if not own:
            problems.append((part.fence_line, f"part={part.part} of {target} is empty: a part holds at least one "
                             "line, its first, by which update finds where it begins; move lines into it "
                             "or delete the fence"))
            continue
        count = printed[own[0]]
        if count > 1:
            problems.append((part.fence_line, f"part={part.part} of {target} begins with {shown_line(own[0])}, "
                             f"which the output prints {count} times: update finds where a part begins by "
                             "its first line, so a part must begin with a line printed once (a heading the "
                             "program prints); move the split"))
    return problems


def python_illustration_problems(doc: Document) -> list[tuple[int, str]]:
    """A fence in a Python language (python, py3, ...) that is no chunk, root or playground: the reader would see
    code that never runs. Marked {illustration} too: Python that is shown is Python that runs."""
    return [(fence.line, f"{fence.language} fence with neither {{#name}} nor {{file=...}}: the reader would see code "
                         "that never runs; name it, or use ```text for an illustration")
            for fence in blocks.fences(doc.blocks)
            if fence.role is Role.ILLUSTRATION and PYTHON_LANGUAGE.fullmatch(fence.language)]


def misplaced_python(doc: Document) -> list[tuple[int, str]]:
    """(line, why) for each fence in a Python language (python, py3, ...) that goes into a root that is no .py file:
    only .py roots run, so its Python would never run. Other roots (a .sh script, a .toml setting) are written as
    they are and not run: their fences are shown in their own language."""
    problems = []
    for target, pieces in doc.roots.items():
        if target.endswith(".py"):
            continue
        included = [piece for event, _, name, _ in walk(doc.chunks, pieces, set()) if event == "enter"
                    for piece in doc.chunks[name]]
        problems += [(piece.fence_line, f"{piece.language} code goes into file={target}, which is not run (only .py "
                      "roots are): the reader would see Python that never runs; write it to a .py root, or mark the "
                      "fence with the file's own language") for piece in [*pieces, *included]
                     if PYTHON_LANGUAGE.fullmatch(piece.language)]
    return problems


# What a reader takes for a program's output, shown in a fence that is no transcript. Languages, in any case: a
# session's (pycon, console, ...) or an output's (output, stdout, log). A session: a prompt line (>>> , In [1]:,
# $ ) with a line it printed below it (not a continuation: "... ", "   ...: ", or after a line ending in \).
# A caption: the paragraph or heading just above says the fence is what a program printed.
OUTPUT_LANGUAGES = frozenset({
    "pycon", "pytb", "py3tb", "ipython", "ipython3", "ipythonconsole", "console", "shell-session", "sh-session",
    "shellsession", "bash-session", "doscon", "ps1con", "pwsh-session", "powershell-session", "terminal", "output",
    "stdout", "stderr", "log", "out", "jupyter", "result", "results"})
# A session's or an output's language by its ending: Pygments' names (python-console, ipython-console, julia-repl,
# pycon3, python-traceback, jlcon, rconsole) and others' end so.
OUTPUT_LANGUAGE_ENDING = re.compile(r".*(?:console|session|repl|traceback|tb|con[0-9]*|logs?|output|stdout|stderr)")
# >>> (with or without a space, indented or not), In [1]:, and a shell's prompt before a command: $ or % (after a
# virtual environment's name in brackets, or user@host:folder), ❯, PS C:\>, PS>, C:\>
PROMPT = re.compile(r"[ \t]*(>>>|In \[[0-9]*\]:)(?: |$|(?=\S))"
                    r"|((?:\([^()\s]+\) )?(?:[\w.-]+@[\w.-]+:[^\s$#]*)?[$%]|❯) \S"
                    r"|(PS [A-Za-z]:\\[^>]*>|PS>|[A-Za-z]:\\[^>]*>) ")
TRACEBACK = "Traceback (most recent call last):"  # Python's own first line of an error: what a run printed
OUT_MARK = re.compile(r"Out\[[0-9]*\]: ")  # IPython's mark on what a line printed: output, prompt or not
CONTINUATION = re.compile(r"\.\.\.(?: |$)|[ \t]+\.\.\.:(?: |$)")
OUTPUT_CAPTION = re.compile(r"实跑输出|运行输出|实际输出|输出如下|结果如下|运行结果|打印出|打印结果|〉的输出|程序的输出|"
                            r"会输出|屏幕输出|终端输出|"
                            r"(?:(?:输出|结果|打印)(?:是|为|如下|出来是|出来的是)?|得到|屏幕上[^。]*|终端里[^。]*)[：:]\s*$|"
                            r"会看到|"
                            r"(?i:\b(?:output of|program output|console output|prints|printed|you should see|"
                            r"(?:it|this) gives|the output)\b|"
                            r"\b(?:output|result|we get|you get|you will see|you'll see|stdout)\b[^.:]{0,20}:\s*$)")
DRAWN_LANGUAGES = frozenset({"math", "mermaid"})  # GitHub draws these as a formula or a diagram, never as text


def output_fence_problems(doc: Document) -> list[tuple[int, str]]:
    """(line, why) for each fence (or indented code block) that a reader takes for what a program printed, but
    that is no transcript, so nothing compares it with a run: in a session's or an output's language, holding a
    session with its results, or under a paragraph or heading that calls it a program's output. Chunks, roots,
    transcripts and playgrounds are read by tangle; a fence marked {illustration} is one on purpose."""
    problems = []
    above: dict[int, object] = {}  # depth -> the block just closed there (None: the first in its container)
    for event, block, depth in blocks.walk(doc.blocks):
        if event == "close":
            if not unseen_block(block):  # a comment between a paragraph and its fence: the reader sees none
                above[depth] = block
            continue
        before, above[depth + 1] = above.get(depth), None
        if isinstance(block, blocks.Fence) and block.role is Role.ILLUSTRATION and not marked_illustration(block.info):
            why = output_reason(block.language, block.content, before)
            if why:
                shown = block.language or "text"
                problems.append((block.line, f"this ```{block.language} fence reads as a program's output ({why}), "
                                 f"but it is no transcript, so nothing checks what it shows; {OUTPUT_FIX}; or, if it "
                                 f"only shows what such output looks like, mark it ```{shown} {{illustration}}"))
        elif isinstance(block, blocks.CodeBlock):
            why = output_reason("", block.content, before)
            if why:
                problems.append((block.line, f"this indented code block reads as a program's output ({why}), but "
                                 f"it is no transcript, so nothing checks what it shows; {OUTPUT_FIX}; or, if it "
                                 "only shows what such output looks like, make it a ```text {illustration} fence"))
    return problems


def unseen_block(block) -> bool:
    """An HTML block the reader sees nothing of (comments only)."""
    return isinstance(block, blocks.HtmlBlock) and (block.text is None or not block.text.plain.strip())


OUTPUT_FIX = ("put the code in a ```python {file=...} root (or a chunk of one) and what it prints in a ```text "
              "{transcript=PATH} fence (it may start empty: update fills it)")


def marked_illustration(info: str) -> bool:
    return "{" in info and info[info.index("{") + 1 :].rstrip().removesuffix("}").split() == ["illustration"]


def output_reason(language: str, content: str, before) -> str | None:
    """Why a fence's language, content or the block just above it says it is a program's output, or None."""
    if language.lower() in OUTPUT_LANGUAGES or OUTPUT_LANGUAGE_ENDING.fullmatch(language.lower()):
        return f"its language, {language}, is a session's or an output's"
    if any(line.strip() == TRACEBACK for line in content.split("\n")):
        return f"it holds a traceback ({TRACEBACK})"
    prompt = session_prompt(content)
    if prompt:
        return f"a session: the prompt {prompt} with what it printed below it"
    if isinstance(before, (blocks.Paragraph, blocks.Heading)) and language.lower() not in DRAWN_LANGUAGES:
        said = OUTPUT_CAPTION.search(before.inline.plain)
        if said:
            return f"the {'heading' if isinstance(before, blocks.Heading) else 'paragraph'} above it says {said[0]}"
    return None


def session_prompt(content: str) -> str | None:
    """The first prompt of an interactive session that shows what it printed (a line below a prompt that is
    neither a prompt, nor a continuation of one, nor blank); None for code, output alone or prompts alone."""
    prompt, continued = None, False
    for line in content.split("\n"):
        if OUT_MARK.match(line):
            return OUT_MARK.match(line)[0].strip()
        match = PROMPT.match(line)
        if match:
            prompt = prompt or match[1] or match[2] or match[3]
            continued = line.endswith("\\")
        elif prompt is None or not line.strip():
            continue
        elif continued or CONTINUATION.match(line):
            continued = line.endswith("\\")
        else:
            return prompt
    return None
