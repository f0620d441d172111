"""weave.py's command line: read the lesson, make the page, write it (only over a page weave.py wrote, and only while
that page is still as it wrote it: a reader's edits are never written over unless --force says so)."""

from __future__ import annotations

import hashlib
import re

from .. import backends, model, outputs
from . import __doc__ as MANUAL  # the package's docstring: what the page holds
from ..makefile import lesson_command
from ..markup import tag
from .page import weave
from .state import GENERATOR


MARK = str(tag("meta", {"name": "generator", "content": GENERATOR})).encode()
# The fingerprint of the page as weave.py wrote it, in the line after its mark: the SHA-256 of the page without
# that line. A page a reader edits no longer matches it.
AS_WRITTEN = "sha256-as-written"
FINGERPRINT = re.compile(rb'<meta name="%s" content="([0-9a-f]{64})">\r?\n' % AS_WRITTEN.encode())


def is_page(data: bytes) -> bool:
    """Whether a file's bytes are a page weave.py wrote (the generator mark; pages from before it had one say
    本页由 weave.py 生成 in their summary)."""
    return data.startswith(b"<!DOCTYPE html>") and (MARK in data[:4096] or "本页由 <code>weave.py</code>".encode() in data)


def written(page_html: str) -> bytes:
    """The page's bytes as weave.py writes them: its fingerprint in the line after its generator mark."""
    data = page_html.encode()
    line = str(tag("meta", {"name": AS_WRITTEN, "content": hashlib.sha256(data).hexdigest()})).encode()
    return data.replace(MARK + b"\n", MARK + b"\n" + line + b"\n", 1)


def state(data: bytes) -> str:
    """What an existing file's bytes are: "foreign" (no page weave.py wrote), "as written", "changed" (since weave.py
    wrote it), or "unmarked" (from before the fingerprint: nothing tells)."""
    if not is_page(data):
        return "foreign"
    found = FINGERPRINT.search(data, 0, 4096)
    if not found:
        return "unmarked"
    unmarked = data[: found.start()] + data[found.end() :]
    return "as written" if hashlib.sha256(unmarked).hexdigest() == found[1].decode() else "changed"


def make(doc) -> outputs.Made:
    """The page of the lesson, marked as weave.py's; the numbers that make check would refuse, as a warning."""
    page_html, page, errors = weave(doc)
    chunks = sum(len(pieces) for pieces in doc.chunks.values())  # as the notebook counts them: its programs apart
    programs = sum(len(pieces) for pieces in doc.roots.values())
    warning = (f"{model.counted(len(errors), 'prose number')} not proven (shown unlinked, marked in red); "
               f"{lesson_command(doc, 'check')} says why") if errors else ""
    return outputs.Made(written(page_html), f"{model.counted(chunks, 'code chunk')}, "
                        f"{model.counted(programs, 'program block')}, {model.counted(len(page.linked), 'number')} "
                        f"linked to the lines that print them, {model.counted(page.heatmaps, 'heatmap')}", warning)


PAGE = outputs.BackEnd("weave.py", "page", ".html", MANUAL,
                       "nested too deeply to draw as a page (lists or quotes inside each other)",
                       "a line edited, added or deleted", make, state)


def main(argv: list[str] | None = None) -> int:
    return backends.main(PAGE, argv)
