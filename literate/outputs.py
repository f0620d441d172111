"""A back end (weave.py's page, notebook.py's notebook) as it describes itself once (BackEnd), and its output file:
which paths it may replace, and writing it. One rule for all: never the lesson, never a file the lesson tangles,
never through a symbolic link (one that leads nowhere would have the output created wherever it points), never
anything but a regular file, never a file that the back end did not write itself, and never one a reader changed
since, unless told to (its state says which bytes are its own, and whether they are still as it wrote them)."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from .files import describe, file_kind, holds, read_regular, signals_deferred, write_atomically
from .model import Conflict, Document, UserError


MAX_OUTPUT_BYTES = 64 << 20  # an existing output read back to compare; ours are a few MB


@dataclass(frozen=True)
class Made:
    """What a back end made of the lesson."""

    data: bytes  # the output as written, with the fingerprint that marks it as the back end's
    summary: str  # what it holds, for the line that reports it ("12 code chunks, ...")
    warning: str = ""  # a line for stderr before it is written; "" for none


@dataclass(frozen=True)
class BackEnd:
    """A back end, described once: the command line (literate/backends.py), the messages and the rule for what it
    may replace all read it. A new back end is one of these and its make."""

    tool: str  # its command, in messages: "weave.py"
    kind: str  # what it writes, in messages: "page"
    suffix: str  # of its default output: build/<MD's name><suffix> beside MD
    manual: str  # its --help
    nested: str  # what a lesson nested too deeply is to it, for the message ("nested too deeply to ...")
    changes: str  # how a reader changes what it wrote, for the refusal to replace it ("a cell edited or run")
    make: Callable[[Document], Made]
    state: Callable[[bytes], str]  # of a file's bytes: "foreign", "as written", "changed" (since) or "unmarked"


def default_output(doc: Document, back_end: BackEnd) -> Path:
    """Where the back end writes without -o: build/<MD's name><suffix> beside MD."""
    return doc.path.parent / "build" / f"{doc.path.stem}{back_end.suffix}"


def existing_output(doc: Document, output: Path, back_end: BackEnd, force: bool) -> bytes | None:
    """What is at output now (None: nothing), if tool may replace it; else UserError saying why not: it is
    the lesson, a file the lesson tangles, a symbolic link, no regular file, a file that tool did not write, or one
    changed since, unless force (ours)."""
    tool, kind, default = back_end.tool, back_end.kind, default_output(doc, back_end)
    shown = str(output)
    real = os.path.realpath(output)
    taken = {os.path.realpath(doc.folder / target): f"{doc.target_shown(target)}, which {doc.shown} tangles"
             for target in doc.roots}
    taken[os.path.realpath(doc.path)] = f"the lesson {doc.shown} itself"
    if real in taken:
        raise UserError(f"{shown}: error: is {taken[real]}; write the {kind} elsewhere (the default is "
                        f"{default})")
    try:
        info = os.lstat(output)  # the path itself: its last part may be a link, which is refused below
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        folder_problem(output)
    except OSError as error:
        raise UserError(f"{shown}: error: cannot use it: {describe(error)}") from None
    if stat.S_ISLNK(info.st_mode):
        link_problem(output, back_end)
    if not stat.S_ISREG(info.st_mode):
        raise UserError(f"{shown}: error: is {file_kind(info.st_mode)}, not a regular file; {tool} replaces only "
                        f"a {kind} it wrote: give -o the path of a {default.suffix} file")
    data = read_regular(output, shown, MAX_OUTPUT_BYTES) or b""
    if not ours(output, back_end, force, data):
        raise UserError(f"{shown}: error: exists and is not a {kind} {tool} wrote, so {tool} leaves it as "
                        "it is; give -o another path, or move that file away if it is to be replaced")
    return data


def ours(output: Path, back_end: BackEnd, force: bool, data: bytes) -> bool:
    """Whether the back end may replace the file at output, which holds data. A file it did not write ("foreign")
    is not (existing_output says so). A changed or unmarked one (from before the fingerprint: none tells) may hold a
    reader's work, so it is left as it is too, unless force, with a line that says how to keep those changes and
    how to let them go."""
    tool, found = back_end.tool, back_end.state(data)
    if found in ("changed", "unmarked") and not force:
        why = (f"holds changes made after {tool} wrote it ({back_end.changes})" if found == "changed"
               else f"was written by an older {tool}, which left nothing to tell whether it was changed since")
        raise UserError(f"{output}: error: {why}, so {tool} leaves it as it is: to keep those changes, first "
                        f"copy it under another name; then, or to let them go, delete it (rm "
                        f"{shlex.quote(str(output))}) and build it again, or run {tool} with --force")
    return found != "foreign"


def link_problem(output: Path, back_end: BackEnd):
    """UserError: output is a symbolic link (a folder on the way may be one: the path's own last part may not)."""
    try:
        target = f" to {os.readlink(output)}" + ("" if os.path.exists(output) else ", which does not exist")
    except OSError:
        target = ""
    raise UserError(f"{output}: error: is a symbolic link{target}; {back_end.tool} never writes through a link, which "
                    f"could lead anywhere: give -o the path of the {back_end.kind} itself, or remove the link")


def folder_problem(output: Path):
    """UserError: a folder on the way to output is a file (-o lesson.md/page.html)."""
    blocking = next((folder for folder in reversed(output.parents) if os.path.exists(folder)
                     and not os.path.isdir(folder)), output.parent)
    raise UserError(f"{output}: error: cannot be written: {blocking} is a file, not a folder; "
                    "give -o a path in a folder")


def write_output(doc: Document, output: Path, data: bytes, back_end: BackEnd, force: bool) -> bool:
    """Write the output unless it holds these bytes already; whether it wrote. Atomically, and only if the file
    still holds what existing_output read (an output saved meanwhile is kept)."""
    current = existing_output(doc, output, back_end, force)
    if current == data:
        return False
    try:
        with signals_deferred():
            written = write_atomically(output, data, expected=current)
    except OSError as error:
        raise UserError(f"{output}: error: cannot write it: {describe(error)}; "
                        "check that its folder exists and is writable, or give another -o") from None
    if not written:
        raise Conflict(f"{output}: error: changed while {back_end.tool} was writing it; left as it is: run it again")
    return True


def deliver(doc: Document, output: Path, data: bytes, back_end: BackEnd, force: bool,
            report: Callable[[bool, TextIO], None]) -> int | None:
    """Write the output (-: send it to stdout), then report(whether it changed, the stream for the report: stdout,
    or stderr when stdout holds the output). An interrupt held back while the output was replaced takes effect
    once it is whole: then what the commands say after an interrupt (the output was not changed) would be false,
    so the line says what is true, and its exit status (128 + the signal) is returned; else None."""
    tool, kind = back_end.tool, back_end.kind
    if str(output) == "-":
        try:
            with contextlib.suppress(OSError, ValueError):  # a reader that went away (| head) wants no more
                sys.stdout.buffer.write(data)
                sys.stdout.flush()
        except KeyboardInterrupt as stop:
            return interrupted(tool, stop, f"the {kind} sent to stdout may be cut short")
        report(True, sys.stderr)
        return None
    try:
        report(write_output(doc, output, data, back_end, force), sys.stdout)
    except KeyboardInterrupt as stop:
        if not holds(output, data):
            raise  # before the output was replaced: it did not change, as the command's own line says
        return interrupted(tool, stop, f"{output} holds the new {kind} already")
    return None


def interrupted(tool: str, stop: KeyboardInterrupt, what: str) -> int:
    number = getattr(stop, "signum", signal.SIGINT)
    print(f"{tool}: interrupted ({signal.Signals(number).name}); {what}", file=sys.stderr)
    return 128 + number
