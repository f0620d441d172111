"""weave.py's command line: read the lesson, make the page, write it (only over a page weave.py wrote)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from .. import console, markdown, model, outputs
from . import __doc__ as MANUAL  # the package's docstring: what the page holds
from .markup import tag
from .page import weave
from .state import GENERATOR


def parser() -> argparse.ArgumentParser:
    return console.back_end_parser("weave.py", MANUAL, "the page to write (default: build/<MD's name>.html beside "
                                   "MD; - writes it to stdout). An existing file is replaced only if weave.py wrote it")


def is_page(data: bytes) -> bool:
    """Whether a file's bytes are a page weave.py wrote (the generator mark; pages from before it had one say
    本页由 weave.py 生成 in their summary)."""
    mark = str(tag("meta", {"name": "generator", "content": GENERATOR})).encode()
    return data.startswith(b"<!DOCTYPE html>") and (mark in data[:4096] or "本页由 <code>weave.py</code>".encode() in data)


def write_page(doc: model.Document, output: Path, data: bytes) -> bool:
    """Write the page unless it holds these bytes already (whether it wrote): the rule every back-end keeps
    (literate/outputs.py): never the lesson, a file it tangles, or a file that weave.py did not write."""
    default = doc.path.parent / "build" / (doc.path.stem + ".html")
    return outputs.write_output(doc, output, data, "weave.py", is_page, default)


def main(argv: list[str] | None = None) -> int:
    """Ctrl-C, a closed pipe and a console that cannot show Chinese end it with one line, never a traceback."""
    return console.run_command("weave.py", parser(), make_page, argv, "the page was not changed",
                               "nested too deeply to draw as a page (lists or quotes inside each other)")


def make_page(args: argparse.Namespace) -> int:
    """Read the lesson, make its page, write it (or send it to stdout with -o -)."""
    output = args.output or args.md.parent / "build" / f"{args.md.stem}.html"
    doc = markdown.load(args.md, str(args.md))
    page_html, page, errors = weave(doc)
    if errors:
        print(f"{doc.shown}: warning: {len(errors)} prose number{'s are' if len(errors) != 1 else ' is'} not "
              "printed by the transcript cited (shown unlinked, marked in red); make check lists them",
              file=sys.stderr)
    data = page_html.encode()
    if str(output) == "-":
        with contextlib.suppress(OSError, ValueError):  # a reader that went away (| head) wants no more
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        report, changed = sys.stderr, True
    else:
        report, changed = sys.stdout, write_page(doc, output, data)
    chunks = sum(len(pieces) for pieces in [*doc.chunks.values(), *doc.roots.values()])
    print(f"{'wrote' if changed else 'unchanged:'} {output}: {chunks} code chunks, {len(page.linked)} numbers linked "
          f"to their transcript lines, {page.heatmaps} heatmaps", file=report)
    return model.OK

