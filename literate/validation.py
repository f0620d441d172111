"""What a parsed lesson must satisfy: visible names, defined references, bounded expansion, distinct anchors."""

from __future__ import annotations

import ast
import difflib
import re
import unicodedata

from .captions import expected_captions
from .characters import code_point, first_unseen, unseen, without_unseen
from .model import (Document, MAX_DEPTH, MAX_GENERATED_BYTES, MAX_NAME, MAX_SUGGESTIONS, Piece, REFERENCE,
                    REFERENCE_LIKE, location_comment, output_lines, reference, references, walk)


# Invisible characters that Markdown, Python and editors read differently (markdown-it turns NUL into U+FFFD;
# str.splitlines, and the editors and tools that read lines so, break at \x0b, the form feed \x0c, \x1c-\x1e and
# \x85, where the lesson's lines do not break). Tab, LF and CR are fine.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def shown_line(line: str, width: int = 60) -> str:
    """An output line as it is quoted in a message: «…», shortened."""
    return "«" + (line if len(line) <= width else line[: width - 1] + "…") + "»"


def invisible_problems(doc: Document) -> list[tuple[int, str]]:
    """Characters that show nothing (characters.py: bidi controls, zero-width and tag characters, fillers, line
    separators) in code, chunk names and paths: they make code read differently from how it runs ("Trojan
    Source"), or two names look the same, so they are refused, as compilers warn. Playgrounds are code too."""
    problems = []
    for table, what in ((doc.chunks, "the chunk name {{#{}}}"), (doc.roots, "the path {{file={}}}")):
        for label, pieces in table.items():
            found = first_unseen(label)
            if found:
                problems.append((pieces[0].fence_line, f"{code_point(found)} in {what.format(ascii(label)[1:-1])}: "
                                 "two names that look the same would differ; delete it"))
            problems += code_problems(pieces)
    return problems + code_problems(doc.playgrounds.values()) + transcript_problems(doc)


def transcript_problems(doc: Document) -> list[tuple[int, str]]:
    """A character that shows nothing in a transcript: the line reads differently from the bytes the check compares
    (a bidi override turns 52.0 into 0.25 on the screen), and update never writes one (transcripts.output_problem)."""
    problems = []
    for transcript in doc.transcripts.values():
        for part in transcript.pieces():
            for offset, line in enumerate(output_lines(part.content)):
                found = first_unseen(line)
                if found:
                    problems.append((part.first_line + offset, f"{code_point(found)} in a transcript: it shows "
                                     "nothing, so the line reads differently from the output it is checked against; "
                                     f"the program should print it as an escape (\\u{ord(found):04x})"))
    return problems


def code_problems(pieces) -> list[tuple[int, str]]:
    problems = []
    for piece in pieces:
        for offset, code in enumerate(piece.lines):
            found = first_unseen(code)
            if found:
                problems.append((piece.fence_line + 1 + offset, f"{code_point(found)} in code: it shows nothing, "
                                 "so the code reads differently from how it runs (Trojan Source); delete it, or in "
                                 f"a string write it as an escape: \\u{ord(found):04x}"))
    return problems


def looks(name: str) -> str:
    """A name as a reader sees it: composed (NFC), without the characters that show nothing."""
    return without_unseen(unicodedata.normalize("NFC", name))


def invisible_difference(name: str, other: str) -> str:
    """How two names that look the same differ."""
    if unicodedata.normalize("NFC", name) == unicodedata.normalize("NFC", other):
        return ("they differ only in invisible characters: one is written decomposed (Unicode NFD, as some "
                "editors and macOS file names save it), the other composed (NFC); retype one of them")
    hidden = sorted({code_point(c) for _, c in unseen(name + other)})
    return f"they differ only in invisible characters ({', '.join(hidden)}); retype one of them"


def lookalike(name: str, known) -> str:
    """For a message about a name that is none of the known ones: "; X looks the same, but ..." when one of them looks
    the same (composed or decomposed, a character that shows nothing), else ""."""
    same = next((other for other in known if looks(other) == looks(name)), None)
    return f"; {same} looks the same, but {invisible_difference(name, same)}" if same is not None else ""


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
        problems += misread_references(pieces)
        for line, name in references(pieces):
            if name not in doc.chunks:
                problems.append((line, undefined(doc, name, by_look, len(problems) < MAX_SUGGESTIONS)))
    used: set[str] = set()
    for pieces in doc.roots.values():
        for event, line, name, path in walk(doc.chunks, pieces, used):
            if event == "again" and name in path:
                cycle = " → ".join([*path[path.index(name):], name])
                what = "includes itself" if path[-1] == name else f"is cyclic: {cycle}"
                problems.append((line, f"<<{name}>> {what}"))
    for name, pieces in doc.chunks.items():
        if name not in used:
            problems.append((pieces[0].fence_line, f"chunk {{#{name}}} is never used: no root includes <<{name}>>"))
    return problems or expansion_problems(doc)


def misread_references(pieces: list[Piece]) -> list[tuple[int, str]]:
    """Lines that start like a <<reference>> but are not one (two on one line, or words after it): tangle would
    write them as code, where the reader sees chunks included."""
    return [(piece.first_line + offset, f"{shown_line(code.strip())} reads as a chunk reference but is not one: a "
             "reference line holds one <<name>> and nothing else; put each reference on a line of its own")
            for piece in pieces for offset, code in enumerate(piece.lines)
            if REFERENCE_LIKE.match(code) and reference(code) is None]


def undefined(doc: Document, name: str, by_look: dict[str, str], suggest: bool) -> str:
    """Why <<name>> is not defined: a chunk that looks the same, or one spelled nearly so (suggest: look
    for one; each look compares every chunk name, so a long list of mistakes gets it only at its start)."""
    shown = name if len(name) <= MAX_NAME else f"{name[:60]}…"  # a chunk's name is bounded, a reference's is not
    what = f"<<{shown}>> is not defined: no fence has {{#{shown}}}"
    same = by_look.get(looks(name))
    if same is not None:
        return f"{what}; {{#{same}}} looks the same, but {invisible_difference(name, same)}"
    near = difflib.get_close_matches(name, list(doc.chunks), n=1) if suggest and len(name) <= MAX_NAME else []
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
            head, tail = location_comment(doc.path.name, piece.label)
            size += len(f"{head}{piece.first_line}{tail}\n".encode())
            lines += 1
            for code in piece.lines:
                found = reference(code)
                if found:
                    indent, name = found
                    child_size, child_lines, child_depth = sizes[name]
                    size += child_size + child_lines * len(indent)  # every line re-indented, at most
                    size += len(f"{head}{piece.first_line + len(piece.lines)}{tail}\n".encode())  # where it
                    lines += child_lines + 1                                                     # resumes, at most
                    depth = max(depth, child_depth)
                    uses[name] = uses.get(name, 0) + 1
                else:
                    size += len(code.encode()) + 1
                    lines += 1
        return size, lines, depth, uses

    measured: set[str] = set()  # the chunks whose size is known, or on the way (the walk measures each once)
    for start in doc.chunks:
        if start in measured:
            continue
        measured.add(start)
        for event, _, name, _ in [*walk(doc.chunks, doc.chunks[start], measured), ("leave", None, start, None)]:
            if event == "leave":
                size, lines, depth, _ = measure(doc.chunks[name])
                sizes[name] = (size, lines, depth + 1)
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


def parts_problems(doc: Document) -> list[tuple[int, str]]:
    """The notebook prints each part of the transcript with the lines of FUNCTION() from each mark (the declaration
    parts: FUNCTION MARK), which it takes from the named chunk that defines FUNCTION() with marks in it. A FUNCTION()
    marked so in a root's own fence, and in no chunk, is refused here, at the declaration's line, saying where it is
    (the notebook, which looks in chunks, would say it found none; when there is none at all, it says so)."""
    declared = doc.declared.parts
    if declared is None:
        return []
    line, function = (doc.declared.lines or {}).get("parts", 0), declared.function
    if any(marked(piece, function, declared.mark) for pieces in doc.chunks.values() for piece in pieces):
        return []
    where = next((f"{{file={target}}} (line {piece.fence_line})" for target, pieces in doc.roots.items()
                  for piece in pieces if marked(piece, function, declared.mark)), None)
    return [] if where is None else [
        (line, f"parts: {function}() is defined in the fence of the root {where}, but the notebook takes the lines "
               f"that print each part from a named chunk: move {function}() into a chunk ({{#{function}}}) and "
               f"include it there with <<{function}>>")]


def marked(piece: Piece, function: str, mark: re.Pattern) -> bool:
    """Whether the piece defines function() at its top level with a line marked as a part's beginning in it."""
    if function not in "\n".join(piece.lines):
        return False
    # a root's <<references>> read as statements, so that the code around them parses
    code = [REFERENCE.sub(r"\1pass", line) for line in piece.lines]
    try:
        tree = ast.parse("\n".join(code))
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a fragment (an indented block), or too deep
        return False
    return any(isinstance(node, ast.FunctionDef) and node.name == function
               and any(mark.match(code) for code in piece.lines[node.lineno : node.end_lineno])
               for node in tree.body)
