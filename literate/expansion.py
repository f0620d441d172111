"""Expansion: a root's pieces, references expanded, as the generated file's text, each line with its origin;
the banner and hash line, and where a generated file stands against the lesson."""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from .files import read_regular
from .model import (Document, HASH_COMMENT_SUFFIXES, MAX_GENERATED_BYTES, Piece, blank, comment_safe,
                    location_comment, reference)
from .places import confinement_problem


BANNER = "# Generated from {source} by tangle.py — edit {source} and run make tangle, or edit here and run make stitch."
HASH_LINE = "# sha256 of the lines below: {digest}"
# the banner tangle.py wrote before make stitch existed: files with it are tangle's own too
FIRST_BANNER = "# Generated from {source} by tangle.py — do not edit; edit {source} and run make tangle."
BANNER_BYTES = 4096  # enough for the banner line of any lesson's name


@dataclass(frozen=True)
class Origin:
    """Where a line of a generated file came from: a line of a piece (offset >= 0) or a `# MD:LINE (chunk)`
    comment (offset -1): the one above the piece, or one where the piece's own code resumes after a chunk it
    includes (at: the offset of the line it stands above, 0 for the first). Also the indentation expansion put
    before it, and which copy of the piece it belongs to (the index, in the body, of that copy's first comment)."""

    piece: Piece
    offset: int
    indent: str
    copy: int
    at: int = 0

    @property
    def md_line(self) -> int:
        return self.piece.first_line + (self.at if self.offset < 0 else self.offset)

    @property
    def opens(self) -> bool:
        """Whether it is the comment above its piece, where a copy of the piece begins."""
        return self.offset < 0 and self.at == 0


def trace(doc: Document, target: str) -> tuple[list[str], list[Origin | None]]:
    """The body of a generated file (below the banner and hash line) as lines, each with its Origin
    (None: the blank line between two pieces of the root)."""
    body: list[str] = []
    origin: list[Origin | None] = []
    for number, piece in enumerate(doc.roots[target]):
        if number:
            body.append("")
            origin.append(None)
        expand(doc, [piece], "", body, origin)
    return body, origin


def render(doc: Document, target: str) -> tuple[str, list[tuple[int, str] | None]]:
    """The generated file's text, and for each of its lines the (md line, chunk) it came from."""
    body, origin = trace(doc, target)
    text = "\n".join(body) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()
    banner = [BANNER.format(source=comment_safe(doc.path.name)), HASH_LINE.format(digest=digest)]
    return "\n".join(banner) + "\n" + text, [None, None, *((o.md_line, o.piece.label) if o else None for o in origin)]


def expand(doc: Document, pieces: list[Piece], indent: str, body: list[str], origin: list) -> None:
    """Append the pieces' lines, references expanded (reference_problems bounds the depth). Above each piece, and
    again where its own code resumes after a chunk it includes, a `# MD:LINE (chunk)` comment says where the next
    line comes from, so that a reader of the generated file never takes the including chunk's code for the
    included one's."""
    for piece in pieces:
        copy = len(body)
        head, tail = location_comment(doc.path.name, piece.label)
        body.append(f"{indent}{head}{piece.first_line}{tail}")
        origin.append(Origin(piece, -1, indent, copy))
        labelled = True  # whether the piece's own code below a comment of its own
        for offset, code in enumerate(piece.lines):
            found = reference(code)
            if found:
                expand(doc, doc.chunks[found[1]], indent + found[0], body, origin)
                labelled = False
                continue
            if not labelled and not blank(code):  # indented as the code it stands above
                body.append(f"{indent}{leading(code)}{head}{piece.first_line + offset}{tail}")
                origin.append(Origin(piece, -1, indent, copy, at=offset))
                labelled = True
            body.append("" if blank(code) else indent + code)
            origin.append(Origin(piece, offset, indent, copy))


def leading(code: str) -> str:
    return code[: len(code) - len(code.lstrip())]


def comment_indent(o: Origin) -> str:
    """The blanks before a location comment: the expansion's, and where the piece's code resumes, that code's own."""
    return o.indent + (leading(o.piece.lines[o.at]) if o.at else "")


def tangles_own(text: str) -> bool:
    """Whether a text starts the way every file tangle.py writes starts: its banner exactly (this one, or the
    one it wrote before make stitch existed), then a hash line. Nothing else counts as tangle's, however
    alike (ANTLR's output starts with "# Generated from" too), so nothing else is ever overwritten."""
    banner, _, rest = text.partition("\n")
    hash_line = rest.partition("\n")[0]
    return bool(any(is_banner(banner, form) for form in (BANNER, FIRST_BANNER))
                and re.fullmatch(HASH_LINE.format(digest="[0-9a-f]{64}"), hash_line.rstrip("\r")))


def is_banner(line: str, form: str) -> bool:
    """Whether line is form with one source name in both its places (found from the lengths: no regex)."""
    size, rest = divmod(len(line) - len(form.format(source="")), 2)
    start = len(form.partition("{source}")[0])
    return size > 0 and not rest and line == form.format(source=line[start : start + size])


def edited_by_hand(text: str) -> bool:
    """True unless the text is exactly what tangle last wrote (its hash line agrees)."""
    _, _, rest = text.partition("\n")
    hash_line, _, body = rest.partition("\n")
    match = re.fullmatch(HASH_LINE.format(digest="([0-9a-f]{64})"), hash_line)
    return not (tangles_own(text) and match and hashlib.sha256(body.encode()).hexdigest() == match[1])


def comment_forms(doc: Document, target: str) -> dict[int, tuple[str, str]]:
    """For each `# MD:LINE (chunk)` comment of a generated file's body (by its index there): the text before
    and after its line number. Only these lines, in exactly this form, are location comments: a comment
    of the lesson's own code that looks like one (# 见 README:12 (速度)) is code like any other."""
    body, origin = trace(doc, target)
    forms = {}
    for index, o in enumerate(origin):
        if o is not None and o.offset < 0:
            head, tail = location_comment(doc.path.name, o.piece.label)
            forms[index] = (comment_indent(o) + head, tail)
    return forms


def renumbered(lines: list[str], rendered: list[str], forms: dict[int, tuple[str, str]]) -> bool:
    """Whether lines are the rendered lines with at most the numbers of their location comments changed."""
    if len(lines) != len(rendered):
        return False
    for index, (line, want) in enumerate(zip(lines, rendered)):
        if line == want:
            continue
        head, tail = forms.get(index, (None, None))
        if head is None or not (line.startswith(head) and line.endswith(tail)
                                and line[len(head) : len(line) - len(tail)].isdigit()
                                and line[len(head) : len(line) - len(tail)].isascii()):
            return False
    return True


def generated_state(current: bytes | None, text: str, forms: dict[int, tuple[str, str]]) -> str:
    """Where a generated file stands against the text the Markdown tangles to now (forms: its location
    comments, see comment_forms):
    "missing"; "same" (CRLF line ends, which a clone with core.autocrlf gives it, count as LF);
    "banner" (the code below the banner is the same: only the hash line is out of date);
    "stale" (tangle's own output for an older Markdown, or a hand edit already copied into the
    Markdown: only the numbers of the `# MD:LINE (chunk)` comments differ); "edited" (a change found only
    here); "foreign" (not tangle's banner: a file tangle.py never wrote, such as tangle.py itself, which
    it never overwrites)."""
    if current is None:
        return "missing"
    now = current.decode("utf-8", "replace").replace("\r\n", "\n")
    if now == text:
        return "same"
    if not tangles_own(now):
        return "foreign"
    below_banner = [whole.split("\n", 2)[2:] for whole in (now, text)]
    if below_banner[0] == below_banner[1]:
        return "banner"
    if not edited_by_hand(now) or renumbered("".join(below_banner[0]).split("\n"),
                                             "".join(below_banner[1]).split("\n"), forms):
        return "stale"
    return "edited"


def read_generated(doc: Document, target: str) -> bytes | None:
    """The bytes of a generated file, None if missing."""
    return read_regular(doc.folder / target, doc.target_shown(target), MAX_GENERATED_BYTES)


def writable_problem(doc: Document, target: str) -> str | None:
    path = doc.folder / target
    real, folder_real = Path(os.path.realpath(path)), Path(os.path.realpath(doc.folder))
    if not real.is_relative_to(folder_real):
        return f"file={target} leads outside the folder of {doc.path.name} (through a symlink)"
    inside = real.relative_to(folder_real).as_posix()
    problem = confinement_problem(inside, doc.folder) if inside != posixpath.normpath(target) else None
    if problem:  # a symlinked folder on the way
        return f"file={target} leads to {inside} (through a symlink): {problem}"
    folder = path.parent
    while not os.path.exists(folder) and folder != folder.parent:
        folder = folder.parent
    if not os.path.isdir(folder):
        return f"cannot write file={target}: {folder.relative_to(doc.folder)} is not a directory"
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        return f"cannot write file={target}: permission denied"
    return None


def orphaned(doc: Document) -> list[str]:
    """Files that tangle wrote from this lesson (their banner names it), in the folders its roots are written to,
    that no root writes any more (a fence deleted or its file= renamed): a program may still import them, and the
    check would pass on code the lesson no longer holds. Their paths relative to the lesson's folder."""
    own = {form.format(source=comment_safe(doc.path.name)) for form in (BANNER, FIRST_BANNER)}
    found = []
    for folder in sorted({posixpath.dirname(target) for target in doc.roots}):
        try:
            entries = list(os.scandir(doc.folder / folder))
        except OSError:  # not made yet, or unreadable: tangle says so when it writes there
            continue
        for entry in sorted(entries, key=lambda entry: entry.name):
            relative = posixpath.join(folder, entry.name)
            if relative in doc.roots or not entry.name.endswith(HASH_COMMENT_SUFFIXES):
                continue
            with contextlib.suppress(OSError):
                if entry.is_file(follow_symlinks=False):  # a regular file: reading it cannot block
                    with open(entry.path, "rb") as file:
                        head = file.read(BANNER_BYTES)
                    if head.partition(b"\n")[0].decode("utf-8", "replace").rstrip("\r") in own:
                        found.append(relative)
    return found
