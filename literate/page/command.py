"""weave.py's command line: read the lesson, make the page, write it (only over a page weave.py wrote)."""

from __future__ import annotations

import argparse
import sys

from .. import console, markdown, model, outputs
from . import __doc__ as MANUAL  # the package's docstring: what the page holds
from ..markup import tag
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
    chunks = sum(len(pieces) for pieces in [*doc.chunks.values(), *doc.roots.values()])

    def report(changed: bool, stream) -> None:
        print(f"{'wrote' if changed else 'unchanged:'} {output}: {chunks} code chunks, {len(page.linked)} numbers "
              f"linked to their transcript lines, {page.heatmaps} heatmaps", file=stream)
    default = doc.path.parent / "build" / (doc.path.stem + ".html")
    return outputs.deliver(doc, output, data, "weave.py", is_page, default, report) or model.OK
