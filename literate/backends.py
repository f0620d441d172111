"""The one command line of the back ends (weave.py, notebook.py): each describes itself once (outputs.BackEnd) and
makes its output from the lesson; reading the lesson, the default path, writing only what it may replace, the
report and the error policy (console.run_command) are the same for every back end."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import console, markdown, model, outputs
from .outputs import BackEnd


def parser(back_end: BackEnd) -> argparse.ArgumentParser:
    """The arguments of a back end: the lesson, -o for what it writes, and --force to write over what it wrote even
    after a reader changed it."""
    top = argparse.ArgumentParser(prog=back_end.tool, description=back_end.manual,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("md", nargs="?", type=Path, default=Path(model.DEFAULT_LESSON),
                     help=f"the Markdown lesson (default: ./{model.DEFAULT_LESSON})")
    top.add_argument("-o", "--output", type=Path,
                     help=f"the {back_end.kind} to write (default: build/<MD's name>{back_end.suffix} beside MD; - "
                     f"writes it to stdout). An existing file is replaced only if {back_end.tool} wrote it and it "
                     "has not been changed since")
    top.add_argument("--force", action="store_true", help=f"replace the {back_end.kind} even if it was changed "
                     f"since {back_end.tool} wrote it (those changes are lost)")
    return top


def main(back_end: BackEnd, argv: list[str] | None = None) -> int:
    """Ctrl-C, a closed pipe and a console that cannot show Chinese end it with one line, never a traceback."""
    return console.run_command(back_end.tool, parser(back_end), lambda args: write(back_end, args), argv,
                               f"the {back_end.kind} was not changed", back_end.nested)


def write(back_end: BackEnd, args: argparse.Namespace) -> int:
    """Read the lesson, make the back end's output, write it (or send it to stdout with -o -) and say so."""
    doc = markdown.load(args.md, str(args.md))
    output = args.output or outputs.default_output(doc, back_end)
    made = back_end.make(doc)
    if made.warning:
        print(f"{doc.shown}: warning: {made.warning}", file=sys.stderr)

    def report(changed: bool, stream) -> None:
        print(f"{'wrote' if changed else 'unchanged:'} {output}: {made.summary}", file=stream)
    return outputs.deliver(doc, output, made.data, back_end, args.force, report) or model.OK
