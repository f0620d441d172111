"""What a variant's run came to (identical, DIFFERS, FAILED, skipped), the first differing line, and the
table of outcomes."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from itertools import zip_longest


class Skip(Exception):
    """The variant cannot run here; not a portability failure."""


class Failure(Exception):
    """The variant could not be set up or run."""


@dataclass
class Outcome:
    status: str  # identical, DIFFERS, FAILED, skipped
    detail: str = ""

    def __str__(self) -> str:
        if not self.detail:
            return self.status
        if self.status == "identical":
            return f"identical ({self.detail})"
        return f"{self.status}{' ' if self.status == 'DIFFERS' else ': '}{self.detail}"


def first_difference(expected: bytes, got: bytes, width: int = 60) -> tuple[int, str, str] | None:
    """(line number, expected excerpt, got excerpt) of the first differing line, or None."""
    if expected == got:
        return None
    pairs = zip_longest(expected.splitlines(keepends=True), got.splitlines(keepends=True))
    for number, (want, have) in enumerate(pairs, 1):
        if want != have:
            return number, *_excerpts(want, have, width)
    raise AssertionError("unequal bytes with equal lines")


def _excerpts(want: bytes | None, have: bytes | None, width: int) -> tuple[str, str]:
    if want is None or have is None:
        def show(line: bytes | None) -> str:
            return "<end of output>" if line is None else _text(line).rstrip("\r\n")

        return show(want), show(have)
    a, b = _text(want), _text(have)
    if a.rstrip("\r\n") == b.rstrip("\r\n"):  # only the line ending differs
        return repr(a), repr(b)
    a, b = a.rstrip("\r\n"), b.rstrip("\r\n")
    pairs = enumerate(zip(a, b, strict=False))
    col = next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))
    start = max(0, col - width // 3)

    def cut(line: str) -> str:
        tail = "…" if len(line) > start + width else ""
        return ("…" if start else "") + line[start:start + width] + tail

    return cut(a), cut(b)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="backslashreplace")


def last_line(data: bytes | str) -> str:
    text = _text(data) if isinstance(data, bytes) else data
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def report(rows: list[tuple[str, Outcome]], out=None) -> int:
    out = out or sys.stdout
    width = max(len(name) for name, _ in rows)
    for name, outcome in rows:
        print(f"{name:<{width}}  {outcome}", file=out)
    count = {s: sum(o.status == s for _, o in rows)
             for s in ("identical", "DIFFERS", "FAILED", "skipped")}
    print(f"{len(rows)} variant{'' if len(rows) == 1 else 's'}: {count['identical']} identical, "
          f"{count['DIFFERS']} differ, {count['FAILED']} failed, {count['skipped']} skipped",
          file=out)
    return 1 if count["DIFFERS"] or count["FAILED"] else 0
