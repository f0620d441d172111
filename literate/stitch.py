"""stitch: bring edits made in a generated file back into the chunks of the lesson they came from.

The edited file is diffed, line by line, against what the lesson renders now (expansion.trace: each rendered
line knows its piece, its offset in the piece and the indentation expansion added), so the generated file
needs no markers beyond the `# MD:LINE (chunk)` comments it always had. Whatever cannot be placed without a
guess is refused, with the reason, and nothing is written: a hunk that touches a `# MD:LINE` comment or the
banner, one that straddles two chunks, a changed indentation that expansion added, a chunk included more
than once whose copies were not all changed alike, and a lesson that changed since the file was tangled.
Before writing, the edited lesson is parsed and rendered again: it must give back the edited file (up to the
`# MD:LINE` numbers, which move when lines are added), else that too is refused.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass

from .commands import planned_roots, write_planned
from .diffing import EXACT_DIFF_LINES, Stretch, common_ends, exact, side_by_side, too_long_to_diff_exactly
from .expansion import (BANNER, FIRST_BANNER, HASH_LINE, comment_forms, generated_state, is_banner,
                        read_generated, render, renumbered, trace)
from .files import rewrite_lesson
from .makefile import lesson_command
from .markdown import decode_markdown, load, normalize_newlines, parse_document
from .model import OK, Conflict, Document, LINE_WITH_END, Piece, UserError, blank, comment_safe


@dataclass(frozen=True)
class Edit:
    """Lines start..end of a piece replaced by new (start == end: inserted before line start)."""

    piece: Piece
    start: int
    end: int
    new: tuple[str, ...]
    where: str  # the generated file and line, for messages
    copy: tuple[str, int]  # which copy of the piece was edited: (target, index of its comment line)


def body_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").split("\n")[2:]


def blanked(lines: list[str]) -> list[str]:
    """A body with its lines of blanks emptied, as tangle writes them."""
    return ["" if blank(line) else line for line in lines]


def header_problem(doc: Document, target: str, text: str, rendered: str) -> str | None:
    shown = doc.target_shown(target)
    lines = text.replace("\r\n", "\n").split("\n")
    banner = BANNER.format(source=comment_safe(doc.path.name))
    if lines[0] != banner or len(lines) < 2 or not re.fullmatch(HASH_LINE.format(digest="[0-9a-f]{64}"), lines[1]):
        return (f"{shown}:1: error: the generated header (banner and hash line, lines 1-2) was changed; stitch "
                f"reads them to know what the file was tangled from: restore them, then run {lesson_command(doc, 'stitch')} "
                "again")
    if HASH_LINE.format(digest=hashlib.sha256(render_body(rendered).encode()).hexdigest()) != lines[1]:
        return (f"{shown}:2: error: {doc.path.name} changed since {shown} was last tangled, so stitch cannot "
                f"tell your edit from the lesson's; copy the edit into {doc.path.name} by hand (or save "
                f"{shown} elsewhere, run {lesson_command(doc, 'tangle')}, and edit again)")
    return None


def changed_banner(current: bytes) -> bool:
    """A file tangle wrote whose header was edited: one of its two lines is still tangle's."""
    lines = [line.decode("utf-8", "replace").rstrip() for line in current.split(b"\n", 2)[:2]]
    return (any(is_banner(lines[0], form) for form in (BANNER, FIRST_BANNER))
            or len(lines) > 1 and re.fullmatch(HASH_LINE.format(digest="[0-9a-f]{64}"), lines[1]) is not None)


def render_body(rendered: str) -> str:
    return rendered.split("\n", 2)[2]


def edits_in(doc: Document, target: str, text: str) -> tuple[list[Edit], list[str]]:
    """The edits of one generated file as edits of pieces, and the problems that stop them."""
    shown = doc.target_shown(target)
    rendered, origin = trace(doc, target)
    edited = body_lines(text)
    rendered = rendered + [""]  # the text ends with a line end: split gives a last empty line
    origin = origin + [None]
    edits, problems = [], []
    anchors = [index for index, o in enumerate(origin) if o is not None and o.offset < 0]
    hunks = changes(rendered, edited, anchors)
    for number, (i1, i2, j1, j2) in enumerate(hunks):
        where = f"{shown}:{j1 + 3}"
        touched = origin[i1:i2]
        if i1 < i2:
            if any(o is None or o.offset < 0 for o in touched):
                line = next(i for i, o in zip(range(i1, i2), touched) if o is None or o.offset < 0)
                what = ("the blank line tangle puts between two pieces of the root" if origin[line] is None
                        else f"the comment `{rendered[line].strip()}` that tangle writes above each chunk "
                        "and where its code resumes")
                problems.append(f"{where}: error: the edit changes {what}; keep it, and edit only the code "
                                "between two such comments")
                continue
            pieces = {(o.piece.fence_line, o.copy) for o in touched}
            if len(pieces) > 1:
                names = sorted({f"〈{o.piece.label}〉 ({doc.where(o.piece.first_line)})" for o in touched})
                problems.append(f"{where}: error: the edit straddles two chunks ({' and '.join(names)} or two "
                                "copies of one); stitch cannot tell where each of its lines belongs: edit each "
                                "chunk on its own")
                continue
            anchor, start, end = touched[0], touched[0].offset, touched[-1].offset + 1
        else:
            before, after = (origin[i1 - 1] if i1 else None), origin[i1]
            reach = (hunks[number - 1][3] if number else 0,
                     hunks[number + 1][2] if number + 1 < len(hunks) else len(edited))
            ending = next((origin[at - 1] for at in insertion_places(edited, i1, j1, j2, reach)
                           if at and origin[at - 1] is not None and ends_a_chunk(doc, origin[at - 1])), None)
            if ending is not None:
                label = ending.piece.label
                problems.append(f"{where}: error: the added lines stand just after the last line of 〈{label}〉 "
                                f"({doc.where(ending.piece.fence_line)}), where the code that includes it goes on: "
                                f"they may belong at the end of 〈{label}〉 or after its <<{label}>>, and stitch does "
                                f"not guess; make this edit in {doc.path.name}")
                continue
            if before is not None:
                anchor, start = before, (before.at if before.offset < 0 else before.offset + 1)
            elif after is not None and after.offset >= 0:
                anchor, start = after, after.offset
            else:
                problems.append(f"{where}: error: the added lines stand outside every chunk (before the "
                                "first `# MD:LINE` comment or between two pieces of the root); add them inside one")
                continue
            end = start
        new = []
        for j, line in enumerate(edited[j1:j2], j1 + 3):
            if blank(line):
                new.append("")
            elif line.startswith(anchor.indent):
                new.append(line[len(anchor.indent):])
            else:
                problems.append(f"{shown}:{j}: error: the line gives up indentation that expansion added "
                                f"({len(anchor.indent)} columns, where 〈{anchor.piece.label}〉 is included); "
                                "keep it, and indent relative to it")
                break
        else:
            edits.append(Edit(anchor.piece, start, end, tuple(new), where, (target, anchor.copy)))
    return edits, problems


def insertion_places(edited: list[str], i1: int, j1: int, j2: int, reach: tuple[int, int]) -> list[int]:
    """Where lines edited[j1:j2], added before rendered line i1, could as well have been added, giving the same
    file: a block slides over a line equal to its last (or first) one. reach: the edited lines between the
    hunks before and after, which the block may slide over. At most EXACT_DIFF_LINES each way."""
    places, step = [i1], 0
    while step < EXACT_DIFF_LINES and j1 - 1 - step >= reach[0] and edited[j1 - 1 - step] == edited[j2 - 1 - step]:
        step += 1
        places.append(i1 - step)
    step = 0
    while step < EXACT_DIFF_LINES and j2 + step < reach[1] and edited[j1 + step] == edited[j2 + step]:
        step += 1
        places.append(i1 + step)
    return places


def ends_a_chunk(doc: Document, line) -> bool:
    """Whether a rendered line (its Origin) is where a chunk's expansion ends: the last line of the chunk's last
    piece (or its location comment, if that piece is empty). Lines added after it could belong to the chunk or to
    the code that includes it, just after the <<reference>>: two lessons that tangle to the same file."""
    pieces = doc.chunks.get(line.piece.label)
    if pieces is None or pieces[-1] is not line.piece:
        return False
    return line.offset == len(line.piece.lines) - 1 if line.piece.lines else line.offset == -1


def changes(old: list[str], new: list[str], anchors: list[int]) -> list[tuple[int, int, int, int]]:
    """The hunks (i1, i2, j1, j2: old[i1:i2] became new[j1:j2]) that turn old into new. The anchors (the
    location comments, which an edit may not touch) are found in new first, in order, and each stretch
    between two of them is compared on its own, so a diff never pairs one copy of a chunk with another; if
    an anchor is missing, the whole file is compared (and the hunk that lost it is refused)."""
    pairs, j = [], 0
    for i in anchors:
        while j < len(new) and new[j] != old[i]:
            j += 1
        if j == len(new):
            return hunks(old, new, 0, 0)
        pairs.append((i, j))
        j += 1
    found, before = [], (0, 0)
    for i, j in pairs + [(len(old), len(new))]:
        found += hunks(old[before[0] : i], new[before[1] : j], *before)
        before = (i + 1, j + 1)
    return found


def hunks(old: list[str], new: list[str], i0: int, j0: int) -> list[Stretch]:
    """The changed hunks of old against new, offset by (i0, j0). The common head and tail are set aside first
    (one pass each); what is left is diffed exactly (difflib) while that is cheap. Beyond EXACT_DIFF_LINES²
    (difflib takes time quadratic in lines that repeat, a chunk of many identical lines), lines changed in
    place (as many lines as before) are read side by side, and otherwise difflib skips the lines that
    repeat most (autojunk): either is a true diff, perhaps with larger hunks than the shortest."""
    head, tail = common_ends(old, new)
    a, b = old[head : len(old) - tail], new[head : len(new) - tail]
    long = too_long_to_diff_exactly(a, b)
    if long and len(a) == len(b):
        return side_by_side(a, b, i0 + head, j0 + head)
    return exact(a, b, i0 + head, j0 + head, autojunk=long)


def copies(doc: Document) -> dict[int, list[tuple[str, int]]]:
    """fence line of a piece -> its copies in every generated file: (target, index of its comment line)."""
    found: dict[int, list[tuple[str, int]]] = {}
    for target in doc.roots:
        _, origin = trace(doc, target)
        for index, o in enumerate(origin):
            if o is not None and o.opens:
                found.setdefault(o.piece.fence_line, []).append((target, index))
    return found


def edited_lines(piece: Piece, edits: list[Edit]) -> list[str]:
    """The piece's lines with these edits made."""
    lines = list(piece.lines)
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        lines[edit.start : edit.end] = edit.new
    return lines


def agreeing(doc: Document, edits: list[Edit]) -> tuple[list[Edit], list[str]]:
    """One edit list per piece: a piece included more than once must come out of every copy the same (a diff
    may place the same change differently in two copies of lines that repeat: what counts is the result)."""
    by_piece: dict[int, dict[tuple[str, int], list[Edit]]] = {}
    for edit in edits:
        by_piece.setdefault(edit.piece.fence_line, {}).setdefault(edit.copy, []).append(edit)
    every = copies(doc)
    kept, problems = [], []
    for fence_line, by_copy in by_piece.items():
        first = next(iter(by_copy.values()))
        results = {repr(edited_lines(first[0].piece, found)) for found in by_copy.values()}
        all_copies = every[fence_line]
        if len(all_copies) > 1 and (len(by_copy) < len(all_copies) or len(results) > 1):
            where = ", ".join(f"{doc.target_shown(target)}:{index + 3}" for target, index in all_copies)
            problems.append(f"{first[0].where}: error: 〈{first[0].piece.label}〉 "
                            f"({doc.where(first[0].piece.first_line)}) is included {len(all_copies)} times ({where}) "
                            "and not every copy was changed the same way; make the same change in each copy, "
                            f"or make it in {doc.path.name}")
            continue
        kept += first
    return kept, problems


def apply(doc: Document, edits: list[Edit]) -> tuple[str, list[str]]:
    """The lesson's text with the edits made (its own line ends kept), and the problems that stop it."""
    text, _ = decode_markdown(doc.raw, doc.shown)
    lines = LINE_WITH_END.findall(text)
    plain = [line.rstrip("\r\n") for line in lines]
    end = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    problems, at_margin = [], {}  # each piece compared with the lesson's lines once, however many its edits
    for edit in sorted(edits, key=lambda e: (e.piece.first_line + e.start, e.end), reverse=True):
        first = edit.piece.first_line + edit.start - 1  # 0-based index into lines
        piece = edit.piece
        if piece.fence_line not in at_margin:
            top = piece.first_line - 1
            at_margin[piece.fence_line] = plain[top : top + len(piece.lines)] == piece.lines
        if not at_margin[piece.fence_line]:
            problems.append(f"{edit.where}: error: the fence of 〈{edit.piece.label}〉 "
                            f"({doc.where(edit.piece.fence_line)}) is indented or quoted in {doc.path.name}; "
                            "stitch edits only fences at the margin: make this edit there")
            continue
        lines[first : edit.piece.first_line + edit.end - 1] = [line + end for line in edit.new]
    return "".join(lines), problems


def report(doc: Document, edits: list[Edit]) -> None:
    """What moved into the lesson, hunk by hunk, at the lines where it now stands."""
    moved = 0  # lines added above, by the edits before this one
    for edit in sorted(edits, key=lambda e: e.piece.first_line + e.start):
        print(f"{doc.where(edit.piece.first_line + edit.start + moved)}: 〈{edit.piece.label}〉 from {edit.where}")
        for old in edit.piece.lines[edit.start : edit.end]:
            print(f"  - {old}")
        for new in edit.new:
            print(f"  + {new}")
        moved += len(edit.new) - (edit.end - edit.start)


def stitch(doc: Document) -> Document | None:
    """Move every edit made in the generated files into doc's file and re-tangle; None if nothing was edited.
    Raises UserError (nothing written) for an edit it cannot place, Conflict if the lesson changed meanwhile."""
    texts: dict[str, str] = {}
    read: dict[str, bytes] = {}
    problems: list[str] = []
    for target in doc.roots:
        current = read_generated(doc, target)
        rendered, _ = render(doc, target)
        state = generated_state(current, rendered, comment_forms(doc, target))
        if state != "edited" and not (state == "foreign" and changed_banner(current)):
            continue
        try:
            text = current.decode("utf-8")
        except UnicodeDecodeError as error:
            line = current[: error.start].count(b"\n") + 1
            problems.append(f"{doc.target_shown(target)}:{line}: error: not UTF-8 (byte 0x{current[error.start]:02x}); "
                            f"save the file as UTF-8, then run {lesson_command(doc, 'stitch')} again")
            continue
        read[target] = current
        problem = header_problem(doc, target, text, rendered)
        if problem:
            problems.append(problem)
        else:
            texts[target] = text
    edits: list[Edit] = []
    for target, text in texts.items():
        found, trouble = edits_in(doc, target, text)
        edits += found
        problems += trouble
    if not problems:
        edits, problems = agreeing(doc, edits)
    if problems:
        raise UserError(*problems)
    if not texts:
        return None
    new_text, problems = apply(doc, edits)
    if problems:
        raise UserError(*problems)
    try:
        new_doc = parse_document(doc.path, doc.shown, normalize_newlines(new_text))
    except UserError as error:
        raise UserError(*error.messages, f"{doc.shown}: error: the edits would leave the lesson like that; "
                        "nothing written: make them in the lesson instead") from None
    for target, text in texts.items():
        if not renumbered(blanked(body_lines(text)), body_lines(render(new_doc, target)[0]),
                          comment_forms(new_doc, target)):
            raise UserError(f"{doc.target_shown(target)}: error: the edited file would not come back the same "
                            f"when tangled from the edited {doc.path.name} (a new <<reference>>, a fence or a "
                            "changed `# MD:LINE` comment?); nothing written: make that edit in the lesson")
    data = new_text.encode()
    if doc.bom:
        data = b"\xef\xbb\xbf" + data
    new_doc.raw, new_doc.bom = data, doc.bom
    pending = planned_roots(new_doc, force=False, stitched=read)  # every target checked before the lesson is written
    warning = rewrite_lesson(doc.path, doc.shown, data, doc.raw, "stitch", "nothing written",
                             f"changed while stitch was reading it; nothing written: run {lesson_command(doc, 'stitch')} "
                             "again")
    report(doc, edits)
    if warning:
        print(warning, file=sys.stderr)
    try:
        write_planned(new_doc, pending)
    except Conflict as error:  # edited again meanwhile: that edit is kept, and the lesson holds the earlier ones
        raise Conflict(*error.messages, f"{doc.shown}: the edits listed above are in it now; copy your newer change "
                       f"into {doc.path.name} by hand (stitch can no longer tell it from the lesson's), then run "
                       f"{lesson_command(doc, 'tangle')}") from None
    except UserError as error:
        raise UserError(*error.messages, f"{doc.shown}: the edits listed above are in it now; once the generated "
                        f"file can be written, run {lesson_command(doc, 'tangle')}") from None
    return new_doc


def command_stitch(args) -> int:
    doc = load(args.md, str(args.md))
    if stitch(doc) is None:
        print(f"nothing to stitch: no generated file was edited since it was tangled from {doc.shown}")
    else:
        print(f"stitch does not touch the transcripts: run {lesson_command(doc, 'check')} to see whether they still "
              "match")
    return OK
