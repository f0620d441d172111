"""Transcripts: comparing a program's output with its transcript, the diff and its verdict, and rewriting
the transcript fences in the lesson."""

from __future__ import annotations

import decimal
import itertools
import os
import re
import shlex
import sys
from typing import Iterator

from .characters import code_point, unseen
from .diffing import Stretch, common_ends, exact, side_by_side, too_long_to_diff_exactly
from .files import rewrite_lesson
from .makefile import lesson_command, make_in, tangle_py_command
from .markdown import decode_markdown, normalize_newlines, parse_document
from .model import Document, LINE_WITH_END, MAX_MARKDOWN_BYTES, Transcript, UserError, blank, fence_runs, output_lines
from .printed import brief
from .runner import TERMINAL_CONTROL, inert, report_failed_run, run_program
from .validation import shown_line


DRIFT_UNITS = 10  # drift moves the last printed digits of a number by a few units at most
# A rounding difference between platforms shows in the last of many printed digits: in a number printed with fewer
# digits than this (0.95, 2.0), a changed last digit is a changed result. (0.0000 has 4: a sum that cancels to about
# zero is where drift shows first.)
DRIFT_DIGITS = 4
MAX_DIFF_LINES = 200  # of one diff shown: enough to see what changed, short enough to read
DIFF_CONTEXT = 3  # unchanged lines shown around a change, as difflib.unified_diff shows them
SIGNED_NUMBER = re.compile(r" *[+-]?[0-9]+(?:\.[0-9]+)?")
# A line of the lesson's own Markdown, which a program hardly ever prints: in a transcript, it tells of a fence whose
# closing line is missing, run on over the lesson. Blank lines and sentences tell nothing: a program prints those too.
LESSON_MARKDOWN = re.compile(r"^ {0,3}(?:#{1,6}(?:[ \t]|$)|`{3}|~{3}|\$\$)"  # a heading, a fence line, a formula
                             r"|^ {0,3}(?:[-*+] +[^\s\d.+-]|\d{1,9}[.)] +[^\s\d]|> |\|.*\|\s*$|\*\*[^*]+\*\*)"  # a list
                             r"|\*\*〈|\]\(|<(?:a name=|/?details|/?summary|!--)", re.I)  # item, quote, table, bold...


def printed_digits(number: str) -> int:
    """The digits a decimal is printed with, less the leading zeros of its integer part (0.95: 2; 0.0012: 4)."""
    whole, _, decimals = number.lstrip("+-").partition(".")
    return len(whole.lstrip("0")) + len(decimals)


def has_readme(doc: Document) -> bool:
    return (doc.folder / "README.md").is_file()


def classify_change(old: str, new: str, readme: bool = False) -> str:
    """Explain a transcript difference: only numbers drifted, or the text itself changed. readme: the lesson has a
    README beside it, whose section on portability says what to do about drift."""
    old_lines, new_lines = output_lines(old), output_lines(new)
    changed = "text/layout changed"
    if len(old_lines) != len(new_lines):
        return changed
    deltas, decimals, units, digits = [], 0, 0, None  # digits: the fewest digits a changed number is printed with
    for a, b in zip(old_lines, new_lines, strict=True):
        if SIGNED_NUMBER.sub(" #", a) != SIGNED_NUMBER.sub(" #", b):
            return changed
        for x, y in zip(SIGNED_NUMBER.findall(a), SIGNED_NUMBER.findall(b), strict=True):
            x, y = x.strip(), y.strip()
            if x == y:
                continue
            if "." not in x or "." not in y or len(x.split(".")[1]) != len(y.split(".")[1]):
                return changed
            with decimal.localcontext() as context:  # as many digits as the two numbers have: no float overflows
                context.prec = len(x) + len(y)
                deltas.append(abs(decimal.Decimal(x) - decimal.Decimal(y)))
                units = max(units, deltas[-1].scaleb(len(x.split(".")[1])))  # a whole number
            decimals = max(decimals, len(x.split(".")[1]))
            fewest = min(printed_digits(x), printed_digits(y))
            digits = fewest if digits is None else min(digits, fewest)
    if not deltas:
        return changed
    values = f"{len(deltas)} value{'s' if len(deltas) != 1 else ''}"
    said = f"only numbers changed: {values}, max |Δ| = {brief(f'{max(deltas):.{decimals}f}')}, layout identical — "
    if units > DRIFT_UNITS:
        return said + (f"a number moved by {brief(f'{units:f}')} units in its last printed digit, more than rounding "
                       "differences between platforms give: the results changed (not floating-point drift)")
    if digits < DRIFT_DIGITS:
        return said + (f"a number printed with {digits} digit{'s' if digits != 1 else ''} changed, "
                       f"too few (under {DRIFT_DIGITS}) for a rounding difference between platforms to show in it: "
                       "the results changed (not floating-point drift)")
    see = "; see README, 可移植性" if readme else ""
    return said + "looks like floating-point drift (a platform difference)" + see


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

    diff = unified_diff(old_lines, new_lines, f"{doc.shown} (transcript, {span})", new_label)
    lines = [paint(re.sub(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", numbered, inert(text)), color)
             for text in itertools.islice(diff, MAX_DIFF_LINES)]
    left_out = sum(1 for _ in diff)  # counted, not kept: a program that prints a million lines gets a short message
    if left_out:
        lines.append(f"… {left_out:,} more line{'s' if left_out != 1 else ''} of the diff left out (the first "
                     f"{MAX_DIFF_LINES} are shown)")
    if new and not new.endswith("\n"):
        lines.append("\\ the output does not end with a newline (a transcript holds whole lines)")
    return lines


def unified_diff(old: list[str], new: list[str], old_label: str, new_label: str) -> Iterator[str]:
    """The lines of a unified diff of old against new as difflib.unified_diff writes them (3 lines of context),
    lazily, from changed_stretches: making and counting them is linear in the lines."""
    groups: list[list[Stretch]] = []  # hunks, as difflib's: changes at most twice the context apart share one
    for change in changed_stretches(old, new):
        if groups and change[0] - groups[-1][-1][1] <= 2 * DIFF_CONTEXT:
            groups[-1].append(change)
        else:
            groups.append([change])
    if groups:
        yield from (f"--- {old_label}", f"+++ {new_label}")
    for group in groups:
        (i1, _, j1, _), (_, i2, _, j2) = group[0], group[-1]  # the hunk's changed lines, old and new
        before, after = min(DIFF_CONTEXT, i1), min(DIFF_CONTEXT, len(old) - i2)  # unchanged: alike on both sides
        yield f"@@ -{unified_range(i1 - before, i2 + after)} +{unified_range(j1 - before, j2 + after)} @@"
        shown = i1 - before  # old's lines up to here are in the hunk
        for a1, a2, b1, b2 in group:
            yield from [" " + line for line in old[shown:a1]] + ["-" + line for line in old[a1:a2]]
            yield from ("+" + line for line in new[b1:b2])
            shown = a2
        yield from (" " + line for line in old[shown : i2 + after])


def changed_stretches(old: list[str], new: list[str]) -> list[Stretch]:
    """What turns old into new, in order: difflib's exact diff up to EXACT_DIFF_LINES lines a side, as
    difflib.unified_diff diffs it; beyond, the common head and tail set aside and a middle still too long compared
    side by side (diffing.side_by_side): linear time, however long the transcript."""
    if not too_long_to_diff_exactly(old, new):
        return exact(old, new, 0, 0)
    head, tail = common_ends(old, new)
    a, b = old[head : len(old) - tail], new[head : len(new) - tail]
    return side_by_side(a, b, head, head) if too_long_to_diff_exactly(a, b) else exact(a, b, head, head)


def unified_range(start: int, stop: int) -> str:
    """A hunk's range as difflib writes it: its first line (1-based; of none, the line before), its length unless 1."""
    return str(start + 1) if stop - start == 1 else f"{start + 1 if stop > start else start},{stop - start}"


def paint(line: str, color: bool) -> str:
    if not color or line.startswith(("---", "+++")):
        return line
    code = {"-": "31", "+": "32", "@": "36"}.get(line[:1])
    return f"\033[{code}m{line}\033[0m" if code else line


def use_color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def report_difference(doc: Document, target: str, actual: str) -> None:
    """An output that differs from its transcript: for a transcript in parts, each part that differs, with
    its own lines (or, when the output cannot be cut into the parts, the whole, from the first difference)."""
    transcript = doc.transcripts[target]
    shown, color = doc.target_shown(target), use_color()
    fix = f"if the new output is right, record it: {update_command(doc, target)}"
    swallowed = swallowed_problems(doc, target, actual)
    if swallowed:  # not "record it": recording would delete the lesson's text
        print(*swallowed, sep="\n", file=sys.stderr)
        return
    pieces = transcript.pieces()
    if len(pieces) == 1:
        print(f"{doc.where(transcript.first_line)}: error: the output of {shown} differs from its transcript; {fix}",
              file=sys.stderr)
        print(classify_change(transcript.content, actual, has_readme(doc)))
        print(*transcript_diff(doc, transcript, actual, "actual output", color), sep="\n")
        return
    parts, why, _ = split_output(transcript, actual)
    if parts is None:
        old, new = output_lines(transcript.content), output_lines(actual)
        index = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        print(f"{doc.where(transcript.md_line(index))}: error: the output of {shown} differs from its transcript, "
              f"and cannot be cut into its {len(pieces)} parts ({why}); {fix}, once each part begins with a line "
              "the program prints exactly once", file=sys.stderr)
        print(classify_change(transcript.content, actual, has_readme(doc)))
        print(*transcript_diff(doc, transcript, actual, "actual output", color), sep="\n")
        return
    print(classify_change(transcript.content, actual, has_readme(doc)))
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
    firsts = {output_lines(piece.content)[0] for piece in pieces[1:]}  # split_problems: never empty
    where: dict[str, list[int]] = {}  # each part's first line -> the output lines equal to it (one pass)
    for index, chunk in enumerate(chunks):
        text = chunk.rstrip("\n")
        if text in firsts:
            where.setdefault(text, []).append(index)
    starts = [0]
    for piece in pieces[1:]:
        first = output_lines(piece.content)[0]
        at = where.get(first, [])
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
              f"  first difference, output line {index + 1}:\n    run 1: {inert(pairs[index][0])}\n"
              f"    run 2: {inert(pairs[index][1])}", file=sys.stderr)
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
    problem = output_problem(output)
    if problem:
        print(f"{shown}: error: {problem}; transcript left as it was", file=sys.stderr)
        return None
    return output


def output_problem(output: str) -> str | None:
    """Why an output cannot be a transcript, which holds plain lines that read as their bytes: a control character
    (a terminal acts on it), or a character that shows nothing (a bidi override, a soft hyphen, U+2028: the line
    would read differently from what is checked). None: it can."""
    control = TERMINAL_CONTROL.search(output)
    if control:
        name = {"\r": "a carriage return (\\r)", "\x1b": "an escape character (colours?)", "\x00": "a NUL byte"}.get(
            control[0], f"the control character U+{ord(control[0]):04X}")
        return (f"output line {output.count(chr(10), 0, control.start()) + 1} holds {name}; a transcript holds plain "
                "lines (progress bars and colours belong on stderr)")
    hidden = next(iter(unseen(output)), None)
    if hidden:
        offset, character = hidden
        return (f"output line {output.count(chr(10), 0, offset) + 1} holds {code_point(character)}, which shows "
                "nothing: the transcript would read differently from the bytes checked; print it as an escape "
                f"(\\u{ord(character):04x})")
    return None


def update_command(doc: Document, target: str) -> str:
    """The command that records a new transcript: the one the lesson declares for it (update: PROGRAM COMMAND), run
    where the lesson is (a make command from another folder: make -C there); else tangle.py's own."""
    declared = (doc.declared.update or {}).get(target)
    if declared and os.path.realpath(doc.folder) == os.path.realpath("."):
        return declared
    if declared and declared.startswith("make "):
        return make_in(doc) + declared.removeprefix("make")
    return f"{tangle_py_command(doc, 'update')} --only {shlex.quote(target)}"


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
    rewritten, done = [], 0  # the lines up to `done` are in rewritten: one pass, fence by fence in order
    for transcript, content in sorted(replacements, key=lambda pair: pair[0].fence_line):
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
        rewritten += [*lines[done:start], opening, *body, closing]
        done = end + 1
    return "".join(rewritten + lines[done:])


def swallowed_problems(doc: Document, target: str, output: str) -> list[str]:
    """An error for each fence of the transcript that holds a line of the lesson's own Markdown (LESSON_MARKDOWN)
    that the output does not print, up to its numbers: its closing fence is missing, and update would delete it."""
    printed = {masked(line) for line in output_lines(output)}
    problems = []
    for piece in doc.transcripts[target].pieces():
        lines = output_lines(piece.content)
        found = next((index for index, line in enumerate(lines)
                      if LESSON_MARKDOWN.search(line) and masked(line) not in printed), None)
        if found is not None:
            problems.append(
                f"{doc.where(piece.fence_line)}: error: this transcript of {doc.target_shown(target)} runs on to the "
                f"fence at line {piece.closing_line} over the lesson's own text (line {piece.md_line(found)}: "
                f"{shown_line(inert(lines[found]))}): its closing fence is probably missing before line "
                f"{piece.md_line(probable_close(lines, found, printed))}; close it there (update refuses to record "
                "output over the lesson's text; if those lines are the program's old output, empty the transcript)")
    return problems


def masked(line: str) -> str:
    """An output line with its numbers masked: a line the program prints with other numbers is still its own."""
    return SIGNED_NUMBER.sub(" #", line)


def probable_close(lines: list[str], swallowed: int, printed: set[str]) -> int:
    """The line before which the closing fence was probably meant: after the last line before the swallowed one that
    the program prints, and after the blank lines that follow it but the last (which parted fence and lesson)."""
    close = next((index for index in range(swallowed - 1, -1, -1)
                  if not blank(lines[index]) and masked(lines[index]) in printed), -1) + 1
    while close + 1 < swallowed and blank(lines[close]) and blank(lines[close + 1]):
        close += 1
    return close


def write_transcripts(doc: Document, changed: dict[str, str]) -> Document:
    """Show what changes, rewrite the Markdown in place, and return the document as rewritten. Writes
    only if the file still holds the bytes that load() read: an edit saved meanwhile is never lost."""
    swallowed = [problem for target, output in changed.items() for problem in swallowed_problems(doc, target, output)]
    if swallowed:
        raise UserError(*swallowed)
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
        print(classify_change(transcript.content, output, has_readme(doc)) if transcript.content
              else "the transcript was empty: what the program printed is its first content")
        parts, _, _ = split_output(transcript, output)
        for piece, content in zip(transcript.pieces(), parts):
            if content != piece.content or len(parts) == 1:
                label = "new output" + (f", part {piece.part}" if piece.part else "")
                print(*transcript_diff(doc, piece, content, label, use_color()), sep="\n")
    data = ("\ufeff" if bom else "").encode() + rewritten.encode()
    warning = rewrite_lesson(doc.path, doc.shown, data, doc.raw, "update", "transcript not written",
                             "changed since update read it (saved from an editor?); nothing written, your change "
                             f"is kept: run {lesson_command(doc, 'update')} again")
    for target in changed:
        print(f"{doc.shown}: updated the transcript of {doc.target_shown(target)}")
    if warning:
        print(warning, file=sys.stderr)
    return updated
