"""notebook.py's command line: read the lesson, build the notebook, write it (only over a notebook it wrote)."""

from __future__ import annotations

import argparse
import json

from .. import console, markdown, model, outputs
from . import __doc__ as MANUAL  # the package's docstring: what the notebook holds
from .cells import GENERATOR, build, nbformat


def parser() -> argparse.ArgumentParser:
    return console.back_end_parser("notebook.py", MANUAL, "the notebook to write (default: build/<MD's name>.ipynb "
                                   "beside MD; - writes it to stdout). An existing file is replaced only if "
                                   "notebook.py wrote it")


def is_notebook(data: bytes) -> bool:
    """Whether a file's bytes are a notebook notebook.py wrote: its generator mark, or (from before the mark)
    the role notebook.py gives its cells."""
    try:
        found = json.loads(data)
    except (ValueError, RecursionError):
        return False
    if not isinstance(found, dict) or not isinstance(found.get("metadata"), dict):
        return False
    if found["metadata"].get("generator") == GENERATOR:
        return True
    cells = found.get("cells") if isinstance(found.get("cells"), list) else []
    return any(isinstance(cell, dict) and isinstance(cell.get("metadata"), dict)
               and isinstance(cell["metadata"].get("attention"), dict) and "role" in cell["metadata"]["attention"]
               for cell in cells)




def main(argv: list[str] | None = None) -> int:
    """Ctrl-C, a closed pipe and a console that cannot show Chinese end it with one line, never a traceback."""
    return console.run_command("notebook.py", parser(), make_notebook, argv, "the notebook was not changed",
                               "nested too deeply to make a notebook of (lists or quotes inside each other, or "
                               "code nested that deep)")


def make_notebook(args: argparse.Namespace) -> int:
    """Read the lesson, build its notebook, validate it and write it."""
    default = args.md.parent / "build" / f"{args.md.stem}.ipynb"
    output = args.output or default
    doc = markdown.load(args.md, str(args.md))
    notebook = build(doc)
    nbformat.validate(notebook)
    data = (nbformat.writes(notebook) + "\n").encode()
    roles = [cell.metadata["attention"]["role"] for cell in notebook.cells]

    def report(changed: bool, stream) -> None:
        print(f"{'wrote' if changed else 'unchanged:'} {output}: {len(roles)} cells, {roles.count('chunk')} code "
              f"chunks, {roles.count('transcript')} printing the transcript, {roles.count('playground')} "
              "playgrounds", file=stream)
    return outputs.deliver(doc, output, data, "notebook.py", is_notebook, default, report) or model.OK
