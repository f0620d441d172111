"""notebook.py's command line: read the lesson, build the notebook, write it (only over a notebook it wrote, and only
while that notebook is still as it wrote it: a reader's changes are never written over unless --force says so)."""

from __future__ import annotations

import hashlib
import json

from .. import backends, model, outputs
from . import __doc__ as MANUAL  # the package's docstring: what the notebook holds
from .cells import GENERATOR, build, nbformat

# The notebook's metadata: the fingerprint of the notebook as notebook.py wrote it. A reader who edits a cell, adds
# one or runs one (outputs change) and saves changes the notebook, and then no longer matches it; opening and saving
# in JupyterLab leaves the file as it is (see cells.KERNEL), so matches it still.
AS_WRITTEN = "sha256_as_written"


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


def make(doc: model.Document) -> outputs.Made:
    """The lesson's notebook, validated, marked as notebook.py's."""
    notebook = build(doc)
    data = written(notebook)
    nbformat.validate(notebook)
    roles = [cell.metadata["attention"]["role"] for cell in notebook.cells]
    return outputs.Made(data, f"{model.counted(len(roles), 'cell')}, {model.counted(roles.count('chunk'), 'code chunk')}, "
                        f"{roles.count('transcript')} printing the transcript, "
                        f"{model.counted(roles.count('playground'), 'playground')}")


NOTEBOOK = outputs.BackEnd("notebook.py", "notebook", ".ipynb", MANUAL,
                           "nested too deeply to make a notebook of (lists or quotes inside each other, or code "
                           "nested that deep)", "a cell edited, added, deleted or run", make, state)


def main(argv: list[str] | None = None) -> int:
    return backends.main(NOTEBOOK, argv)
