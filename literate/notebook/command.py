"""notebook.py's command line: read the lesson, build the notebook, write it (only over a notebook it wrote, and only
while that notebook is still as it wrote it: a reader's changes are never written over unless --force says so)."""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
from pathlib import Path

from .. import console, markdown, model, outputs
from . import __doc__ as MANUAL  # the package's docstring: what the notebook holds
from .cells import GENERATOR, build, nbformat

# The notebook's metadata: the fingerprint of the notebook as notebook.py wrote it. A reader who edits a cell, adds
# one or runs one (outputs change) and saves changes the notebook, and then no longer matches it; opening and saving
# in JupyterLab leaves the file as it is (see cells.KERNEL), so matches it still.
AS_WRITTEN = "sha256_as_written"


def parser() -> argparse.ArgumentParser:
    top = console.back_end_parser("notebook.py", MANUAL, "the notebook to write (default: build/<MD's name>.ipynb "
                                  "beside MD; - writes it to stdout). An existing file is replaced only if "
                                  "notebook.py wrote it and it has not been changed since")
    top.add_argument("--force", action="store_true", help="replace the notebook even if it was changed since "
                     "notebook.py wrote it (those changes are lost)")
    return top


def fingerprint(found: dict) -> str:
    """The SHA-256 of a notebook's content, leaving out its own fingerprint: its JSON with keys sorted and no blanks,
    so that any change to a cell, an output or the metadata changes it, and only such a change does."""
    content = {**found, "metadata": {key: value for key, value in found["metadata"].items() if key != AS_WRITTEN}}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def written(notebook: nbformat.NotebookNode) -> bytes:
    """The notebook's bytes as notebook.py writes them, with the fingerprint of what it writes in its metadata."""
    notebook.metadata[AS_WRITTEN] = fingerprint(json.loads(nbformat.writes(notebook)))
    return (nbformat.writes(notebook) + "\n").encode()


def state(data: bytes) -> str:
    """What an existing file's bytes are: "foreign" (no notebook notebook.py wrote), "as written", "changed" (since
    notebook.py wrote it), or "unmarked" (from before the fingerprint, or the generator mark: none tells)."""
    try:
        found = json.loads(data)
    except (ValueError, RecursionError):
        return "foreign"
    if not isinstance(found, dict) or not isinstance(found.get("metadata"), dict):
        return "foreign"
    if found["metadata"].get("generator") == GENERATOR:
        if AS_WRITTEN not in found["metadata"]:
            return "unmarked"
        return "as written" if found["metadata"][AS_WRITTEN] == fingerprint(found) else "changed"
    cells = found.get("cells") if isinstance(found.get("cells"), list) else []
    # from before the generator mark: the role notebook.py gives its cells
    return "unmarked" if any(isinstance(cell, dict) and isinstance(cell.get("metadata"), dict)
                             and isinstance(cell["metadata"].get("attention"), dict)
                             and "role" in cell["metadata"]["attention"] for cell in cells) else "foreign"


def replaceable(output: Path, force: bool):
    """What outputs.deliver asks of the file at output: whether notebook.py wrote it (a foreign file is left as it
    is, saying so); a notebook it wrote that holds a reader's changes, or may, is left as it is too, unless force,
    with a line that says how to keep those changes and how to let them go."""

    def ours(data: bytes) -> bool:
        found = state(data)
        if found in ("changed", "unmarked") and not force:
            why = ("holds changes made after notebook.py wrote it (a cell edited, added, deleted or run)"
                   if found == "changed" else "was written by an older notebook.py, which left nothing to tell "
                   "whether it was changed since")
            raise model.UserError(f"{output}: error: {why}, so notebook.py leaves it as it is: to keep those changes, "
                                  "first copy it under another name; then, or to let them go, delete it (rm "
                                  f"{shlex.quote(str(output))}) and build it again, or run notebook.py with --force")
        return found != "foreign"
    return ours


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
    data = written(notebook)
    nbformat.validate(notebook)
    roles = [cell.metadata["attention"]["role"] for cell in notebook.cells]

    def report(changed: bool, stream) -> None:
        print(f"{'wrote' if changed else 'unchanged:'} {output}: {len(roles)} cells, {roles.count('chunk')} code "
              f"chunks, {roles.count('transcript')} printing the transcript, {roles.count('playground')} "
              "playgrounds", file=stream)
    return outputs.deliver(doc, output, data, "notebook.py", replaceable(output, args.force), default, report) \
        or model.OK
