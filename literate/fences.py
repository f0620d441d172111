"""What a fence's attributes say: its role (a chunk, a root, a transcript or its part, a playground), where a root
may be written, and each transcript fence attached to its program."""

from __future__ import annotations

import collections
import os
import posixpath
import re

from .model import (Document, HASH_COMMENT_SUFFIXES, LINE_BREAKING, MAX_NAME, MAX_PATH_DEPTH, PYTHON_LANGUAGE,
                    chunk_name, output_lines, quoted, reference, Transcript, walk)
from .places import confinement_problem
from .validation import lookalike, shown_line


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
                raise ValueError(f"cannot read {quoted(word)}: a part is numbered 1, 2, 3, ... (part=1 on the first)")
            part = int(value)
        else:
            raise ValueError(f"cannot read attribute {quoted(word)}: expected {{#name}}, {{file=PATH}}, "
                             "{transcript} (with part=N) or {playground=PATH}, once each (#name must come first)")
    long = next((path for path in (target, transcript, playground) if path and len(path) > MAX_NAME), None)
    if long:
        raise ValueError(f"the path {quoted(long)} is {len(long):,} characters long (the limit is {MAX_NAME})")
    if sum(value is not None for value in (target, transcript, playground)) > 1:
        raise ValueError("a fence is one of a root {file=...}, a {transcript} and a {playground=...}, not two")
    if part is not None and transcript is None:
        raise ValueError("part=N numbers the fences of one {transcript}; this fence is no transcript")
    return lang, None, target, transcript, part, playground


def target_problem(doc: Document, target: str) -> str | None:
    """Why a file= path cannot be written to, or None."""
    if not target or LINE_BREAKING.search(target):
        return f"file={quoted(target)} is not a usable path"
    if target.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", target):
        return f"file={target} is absolute; write it relative to the folder of {doc.path.name}"
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
