"""Tangle the code fences of a literate Markdown lesson into programs, check that the transcript and the
numbers in its prose (every number not marked 原书, the book's) are what the programs print, and bring edits
made in a generated file back into the lesson.

examples:
  python tangle.py tangle                  write generated/ from ./attention.md
  python tangle.py check --only generated/attention.py
  python tangle.py update                  rerun the programs, rewrite their transcripts in place
  python tangle.py stitch                  move edits made in generated/*.py back into attention.md
  python tangle.py new ~/my-lesson         start a new lesson there (docs/new-lesson.md; --lang en: in English)

Errors read MD:LINE: error: ...; exit 0 ok, 1 a check found a difference, 2 bad input or usage.
The full manual: docs/tangle.md."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from .commands import command_check, command_quotes, command_tangle, command_update
from .console import run_command
from .files import document_lock
from .model import DEFAULT_LESSON
from .starter import command_new
from .stitch import command_stitch


MAX_TIMEOUT = 1e6


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_TIMEOUT:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0 and at most {MAX_TIMEOUT:g}")
    return value


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="tangle.py", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = top.add_subparsers(dest="command", required=True)
    for name, function, summary in (("tangle", command_tangle, "write the generated files"),
                                    ("check", command_check, "verify generated/, transcript and prose numbers"),
                                    ("update", command_update, "rewrite the transcript from a fresh run"),
                                    ("stitch", command_stitch, "move edits made in generated files into MD"),
                                    ("quotes", command_quotes, "list the transcript line each prose number quotes")):
        command = commands.add_parser(name, help=summary, description=summary)
        command.add_argument("md", nargs="?", type=Path, default=Path(DEFAULT_LESSON),
                             help=f"the Markdown lesson (default: ./{DEFAULT_LESSON})")
        if name == "tangle":
            command.add_argument("--force", action="store_true", help="overwrite generated files edited by hand")
        elif name not in ("stitch", "quotes"):
            command.add_argument("--timeout", type=seconds, default=600, help="seconds a run may take (600)")
            command.add_argument("--only", metavar="PATH", help="run only the program written to PATH, e.g. "
                                 "generated/attention.py (the prose check still reads every transcript; check's "
                                 "summary names the programs it did not run)")
            command.add_argument("--progress", action="store_true", help="show what the program writes to "
                                 "stderr (its progress) while it runs, each line prefixed with its path")
        command.set_defaults(function=function)
    new = commands.add_parser("new", help="start a new lesson in a folder of its own",
                              description="write the smallest lesson every tool takes, and a Makefile with its "
                              "commands, into FOLDER (new, or empty), then tangle it and run its program; "
                              "docs/new-lesson.md walks on from there")
    new.add_argument("folder", type=Path, metavar="FOLDER", help="where the lesson goes")
    new.add_argument("--lang", choices=("zh", "en"), default="zh", help="the lesson's language (zh: Chinese)")
    new.set_defaults(function=command_new)
    return top


def main(argv: list[str] | None = None, script: bool = False) -> int:
    """Run one command; script=True when run as tangle.py itself (see console.interrupts_raised)."""
    return run_command("tangle.py", parser(), command, argv, "stopped the programs it ran, and wrote nothing more",
                       script=script)


def command(args: argparse.Namespace) -> int:
    """update and stitch hold the document's lock while they run: two of them never write the lesson at once."""
    writes_md = args.command in ("update", "stitch")
    with document_lock(args.md, str(args.md), args.command) if writes_md else contextlib.nullcontext():
        return args.function(args)
