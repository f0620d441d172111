"""The commands tangle, check and update, as functions of parsed arguments."""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys

from .expansion import (comment_forms, edited_by_hand, generated_state, orphaned, read_generated, render,
                        writable_problem)
from .figures import draw_figures, lesson_figures, stale_figures
from .files import describe, read_regular, signals_deferred, write_atomically
from .makefile import lesson_command, make_command, make_targets
from .markdown import load
from .book import quotes_a_book
from .model import Conflict, DIFFERENT, Document, MAX_GENERATED_BYTES, OK, UserError, counted
from .playgrounds import undefined_name_problems
from .listing import followed_list, written_list
from .proofs import Proofs, proven, stale_numbers
from .quoting import list_path, list_shown
from .reach import unrun_problems
from .runner import report_failed_run, run_program
from .transcripts import deterministic_output, report_difference, split_output, update_command, write_transcripts
from .validation import lookalike


def command_tangle(args) -> int:
    doc = load(args.md, str(args.md))
    write_roots(doc, args.force)
    # not errors: tangle did write every root (and a lesson being written may have no transcript yet)
    unrun = unrun_messages(doc, "warning") if doc.transcripts else []
    for message in [*orphan_messages(doc, "warning"), *unrun]:
        print(message, file=sys.stderr)
    return OK


def unrun_messages(doc: Document, kind: str) -> list[str]:
    """The Python roots that no program with a transcript runs or imports (reach.py): an error for check and update,
    a warning for tangle."""
    return [f"{doc.where(line)}: {kind}: {why}" for line, why in unrun_problems(doc)]


def orphan_messages(doc: Document, kind: str) -> list[str]:
    """A file tangle wrote from this lesson that no root writes any more (expansion.orphaned), and what to do with
    it: the rm that removes it only if it is exactly what tangle wrote (its hash line agrees); one edited by hand
    since holds work that is nowhere else."""
    messages = []
    for target in orphaned(doc):
        shown, name = doc.target_shown(target), doc.path.name
        said = (f"{shown}: {kind}: tangle.py wrote it from {name}, but no root of {name} writes it any more (a fence "
                "deleted, or its file= renamed?), and a program may still import ")
        if untouched(doc, target):
            messages.append(said + f"it; delete it: rm {shlex.quote(shown)}")
        else:
            messages.append(said + f"it; it holds edits made by hand since (its sha256 line does not match), code "
                            f"that is nowhere in {name}: keep it by putting it back in {name} (a {{file={target}}} "
                            f"fence, or copied into the chunk it belongs to: stitch cannot move it, no root "
                            "writes it), then move the file away yourself")
    return messages


def untouched(doc: Document, target: str) -> bool:
    """Whether a generated file is byte for byte what tangle wrote (CRLF line ends counted as LF, as a clone with
    core.autocrlf gives them): its hash line agrees with the lines below it. Unreadable: not known to be."""
    try:
        current = read_regular(doc.folder / target, doc.target_shown(target), MAX_GENERATED_BYTES)
    except UserError:
        return False
    return current is not None and not edited_by_hand(current.decode("utf-8", "replace").replace("\r\n", "\n"))


def write_roots(doc: Document, force: bool, stitched: dict[str, bytes] | None = None) -> None:
    """Write every root whose text changed; refuse all writing if any target is unusable or hand-edited
    (except a file in stitched that still holds the bytes whose edits stitch moved into the lesson)."""
    write_planned(doc, planned_roots(doc, force, stitched))


Planned = list[tuple[str, str, bytes | None]]  # (target, its new text, the bytes there now)


def planned_roots(doc: Document, force: bool, stitched: dict[str, bytes] | None = None) -> Planned:
    """The roots to write, as (target, text, the bytes there now), after every check that can refuse them;
    UserError for all that stand in the way. Nothing is written: stitch plans before it writes the lesson."""
    pending: Planned = []
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
        state = generated_state(current, text, comment_forms(doc, target))
        if state == "same":
            continue
        if state == "foreign":
            problems.append(f"{doc.where(pieces[0].fence_line)}: error: {foreign(doc, target)}")
            continue
        if state == "edited" and not force and (stitched or {}).get(target) != current:
            problems.append(f"{doc.target_shown(target)}: error: edited by hand since it was last tangled; "
                            f"{hand_edit_advice(doc, current, text)}, or rerun with --force to overwrite it")
            continue
        pending.append((target, text, current))
    if problems:
        raise UserError(*problems)
    return pending


def write_planned(doc: Document, pending: Planned) -> None:
    written, failure = [], None
    with signals_deferred():
        for target, text, current in pending:
            shown = doc.target_shown(target)
            try:
                if not write_atomically(doc.folder / target, text.encode(), expected=current):
                    failure = Conflict(f"{shown}: error: changed while tangle.py was about to write it; left as "
                                       f"it is: run {lesson_command(doc, 'tangle')} again")
            except OSError as error:
                failure = UserError(f"{shown}: error: cannot write it: {describe(error)}")
            if failure:
                break
            written.append(shown)
    for shown in written:
        print(f"wrote {shown}")
    if failure:
        raise failure


def sync_problems(doc: Document) -> list[str]:
    """Generated files that are not what the Markdown tangles to, and the files tangle wrote that no root writes
    any more."""
    problems = orphan_messages(doc, "error")
    for target in doc.roots:
        state = generated_state(read_generated(doc, target), render(doc, target)[0], comment_forms(doc, target))
        if state in ("same", "banner"):
            continue
        if state == "foreign":
            problems.append(f"{doc.where(doc.roots[target][0].fence_line)}: error: {foreign(doc, target)}")
            continue
        if state == "missing":
            why = f"missing; run {lesson_command(doc, 'tangle')}"
        elif state == "edited":
            current, text = read_generated(doc, target), render(doc, target)[0]
            why = f"edited by hand since it was last tangled; {hand_edit_advice(doc, current, text)}"
        else:
            why = f"out of date with {doc.path.name}; run {lesson_command(doc, 'tangle')}"
        problems.append(f"{doc.target_shown(target)}: error: {why}")
    return problems


def hand_edit_advice(doc: Document, current: bytes, text: str) -> str:
    """What to do with a hand edit: stitch, if the lesson is still what the file was tangled from (the hash lines
    agree), else by hand."""
    tangled_from = current.decode("utf-8", "replace").replace("\r\n", "\n").split("\n", 2)[1:2]
    if tangled_from == text.split("\n", 2)[1:2]:
        return f"run {lesson_command(doc, 'stitch')} to move your change into {doc.path.name}"
    return (f"{doc.path.name} changed too since then, so stitch cannot place it: move your change into "
            f"{doc.path.name} by hand")


def foreign(doc: Document, target: str) -> str:
    return (f"file={target}: {doc.target_shown(target)} exists and was not written by tangle.py (it does not start "
            f"with tangle.py's own banner and hash line, \"# Generated from {doc.path.name} by tangle.py — ...\"), so "
            "tangle.py never overwrites it, not even with --force; "
            f"give the root another path in {doc.path.name}, or move that file away if it is to be replaced")


def require_transcripts(doc: Document) -> None:
    if not doc.transcripts:
        raise UserError(f"{doc.shown}: error: no transcript; put a ```text {{transcript}} fence "
                        f"(it may start empty) where the program's output is documented, then run "
                        f"{lesson_command(doc, 'update')}")


def selected_targets(doc: Document, only: str | None) -> list[str]:
    """The programs to run: every one with a transcript, or just the one --only names."""
    if only is None:
        return list(doc.transcripts)
    chosen = [target for target in doc.transcripts if names_program(doc, only, target)]
    if not chosen:
        raise UserError(f"{doc.shown}: error: --only {only}: no program with a transcript by that name (there are: "
                        f"{', '.join(doc.transcripts) or 'none'}){lookalike(os.path.normpath(only), doc.transcripts)}")
    return chosen


def names_program(doc: Document, only: str, target: str) -> bool:
    """Whether --only PATH names this program: PATH as the lesson writes it (relative to the lesson's folder, as in
    file=), or as the shell sees it from here (./generated/a.py, docs/generated/a.py, an absolute path, a symlink)."""
    if os.path.normpath(only) == os.path.normpath(target):
        return True
    try:
        return os.path.samefile(only, doc.folder / target)
    except (OSError, ValueError):  # either is missing (check says so later), or the path holds a NUL
        return os.path.abspath(only) == os.path.abspath(doc.folder / target)


def in_sync(args) -> tuple[Document, list[str]] | None:
    """What check and update start from: the lesson and the programs to run, or None (the reasons printed)
    when generated/ is not what the lesson tangles to."""
    doc = load(args.md, str(args.md))
    require_transcripts(doc)
    unrun = unrun_messages(doc, "error")
    if unrun:
        raise UserError(*unrun)
    targets = selected_targets(doc, args.only)
    problems = sync_problems(doc)
    if problems:
        print(*problems, sep="\n", file=sys.stderr)
        return None
    return doc, targets


def command_check(args) -> int:
    opened = in_sync(args)
    if opened is None:
        return DIFFERENT
    doc, targets = opened
    proofs = Proofs(doc)  # before the runs: a mistake in the prose's markup is exit 2 at once
    errors, numbers = proven(proofs)
    drawn = lesson_figures(doc)  # and so is a figure that cannot be drawn
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
    unknown = undefined_name_problems(doc)  # names a playground reads that nothing defines
    figures = stale_figures(doc, lambda target: update_command(doc, target))
    for found, outcome in ((errors, refused(doc, len(errors), len(proofs.unused))),
                           (unknown, f"{len(unknown)} undefined in a playground"),
                           (figures, f"{counted(len(figures), 'figure')} not what the transcript draws")):
        if found:
            print(*found, sep="\n", file=sys.stderr)
            outcomes.append(outcome)
    book = sum(number.book for number in numbers)
    verdict = "; ".join(outcomes) or ("transcript matches" if len(targets) == 1 else "transcripts match")
    left = not_run(doc, targets)
    print(f"checked {counted(len(numbers), 'prose number')}"
          + (f" ({book} marked as the book's)" if quotes_a_book(doc, book) else "")
          + (f" and {counted(len(drawn), 'figure')}" if drawn else "") + f"; {verdict}"
          + (f"; not run: {', '.join(left)}" if left else ""))
    return DIFFERENT if outcomes else OK


MAX_NOTES = 8  # of what update followed in the list, said one by one: the rest counted


def follow_list(proofs: Proofs) -> bool:
    """After a new transcript: the list of quotes follows the lines it moved (listing.followed_list), saying so;
    what would take a guess is left to the quotes command, which check names. Whether it wrote the list."""
    followed = followed_list(proofs)
    if not followed:
        return False
    doc, (text, notes) = proofs.doc, followed
    write_atomically(list_path(doc), text.encode())
    shown = notes if len(notes) <= MAX_NOTES else [*notes[: MAX_NOTES - 1],
                                                   f"... and {len(notes) - MAX_NOTES + 1} more like them"]
    print(*shown, sep="\n", file=sys.stderr)
    print(f"{list_shown(doc)}: followed the new transcript ({counted(len(notes), 'entry', 'entries')})")
    return True


def refused(doc: Document, errors: int, unused: int, named: bool = False) -> str:
    """The summary of what the proofs refused: the prose numbers not proven (named: saying "prose numbers"), and
    apart from them the entries of the list of quotes whose sentence is gone (stale, but no number's)."""
    count = counted(errors - unused, "prose number") if named else f"{errors - unused}"
    numbers = [f"{count} not proven"] if errors > unused else []
    stale = [f"{counted(unused, 'entry', 'entries')} of {list_shown(doc)} for a sentence now gone"]
    return ", ".join(numbers + (stale if unused else []))


def not_run(doc: Document, targets: list[str]) -> list[str]:
    """The Python roots this check did not run, each with what runs it: the programs --only left out (their
    transcripts were read, not compared), and the modules that only they import. Nothing without --only."""
    left_out = [target for target in doc.transcripts if target not in targets]
    if not left_out:
        return []
    ran = dataclasses.replace(doc, transcripts={target: doc.transcripts[target] for target in targets})
    unreached = {line for line, _ in unrun_problems(ran)}
    modules = [target for target, pieces in doc.roots.items()
               if pieces[0].fence_line in unreached and target not in doc.transcripts]
    checking = make_targets(doc)
    return ([f"{doc.target_shown(target)} ({what_runs(doc, checking, target)})" for target in left_out]
            + [f"{doc.target_shown(target)} (only programs not run import it)" for target in modules])


def what_runs(doc: Document, checking: dict[str, list[str]] | None, target: str) -> str:
    """What runs a program left out: the make targets that check it (make_targets), else what does."""
    if checking is None:
        return "check without --only runs it"
    makes = checking[target]
    if not makes:
        return "no make target runs it"
    more = f" and {len(makes) - MAX_NAMED_MAKES:,} more" if len(makes) > MAX_NAMED_MAKES else ""
    named = ", ".join(make_command(doc, make) for make in makes[:MAX_NAMED_MAKES])
    return f"{named}{more} run{'s' if len(makes) == 1 else ''} it"


MAX_NAMED_MAKES = 3  # the summary stays one short line


def command_update(args) -> int:
    opened = in_sync(args)
    if opened is None:
        return DIFFERENT
    doc, targets = opened
    stale_numbers(doc)  # a mistake in the prose's markup (exit 2) stops before the runs, MD untouched
    lesson_figures(doc, drawable=False)  # so does a figure that cannot be drawn (from the output it is about to record)
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
    for shown in draw_figures(updated, lambda target: update_command(updated, target)):
        print(f"drew {shown}")
    proofs = Proofs(updated)
    if changed and follow_list(proofs):
        proofs = Proofs(updated)  # the list as followed
    errors, _ = proven(proofs)
    if errors:
        print(*errors, sep="\n", file=sys.stderr)
        what = refused(updated, len(errors), len(proofs.unused), named=True)
        print(f"the transcript is recorded; {what} (listed above: correct {doc.path.name} or its list of quotes as "
              "each says)", file=sys.stderr)
        return DIFFERENT
    return OK


def command_quotes(args) -> int:
    """Write the lesson's list of quotes again (listing.written_list): what check proves each number against."""
    doc = load(args.md, str(args.md))
    require_transcripts(doc)
    text, notes = written_list(doc)
    path, shown = list_path(doc), list_shown(doc)
    data = text.encode()
    if path.exists() and path.read_bytes() == data:
        print(f"{shown} unchanged")
    else:
        write_atomically(path, data)
        print(f"wrote {shown}")
    if notes:
        print(*notes, sep="\n", file=sys.stderr)
    guessed = sum(line.startswith("?") for line in text.split("\n"))
    if guessed:
        print(f"{counted(guessed, 'number')} guessed (marked ? in {shown}): "
              f"read each, remove its ? where right, name the right place where not; {lesson_command(doc, 'check')} "
              "refuses a ?",
              file=sys.stderr)
    return OK
