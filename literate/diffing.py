"""What changed between two lists of lines, in time that stays linear however long they are: used by check and update
to show a transcript's difference, and by stitch to find the edits made in a generated file."""

from __future__ import annotations

import difflib

EXACT_DIFF_LINES = 500  # lists up to this long a side are diffed exactly: difflib's time grows with the product
Stretch = tuple[int, int, int, int]  # (i1, i2, j1, j2): old lines i1:i2 became new lines j1:j2


def too_long_to_diff_exactly(a: list[str], b: list[str]) -> bool:
    return len(a) * len(b) > EXACT_DIFF_LINES ** 2


def common_ends(old: list[str], new: list[str]) -> tuple[int, int]:
    """How many lines old and new share at their start, and then at their end (one pass each; the two never
    overlap)."""
    head = next((index for index, (x, y) in enumerate(zip(old, new)) if x != y), min(len(old), len(new)))
    tail = 0
    while tail < min(len(old), len(new)) - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    return head, tail


def side_by_side(a: list[str], b: list[str], i0: int, j0: int) -> list[Stretch]:
    """The runs of lines that differ where a and b are read side by side, offset by (i0, j0), then what the longer
    one has past the end of the shorter: a true diff in one pass, its stretches perhaps larger than the shortest."""
    runs: list[list[int]] = []
    for index, (x, y) in enumerate(zip(a, b)):
        if x == y:
            continue
        if runs and runs[-1][1] == index:
            runs[-1][1] = index + 1
        else:
            runs.append([index, index + 1])
    stretches = [(i0 + start, i0 + end, j0 + start, j0 + end) for start, end in runs]
    common = min(len(a), len(b))
    if len(a) != len(b):
        stretches.append((i0 + common, i0 + len(a), j0 + common, j0 + len(b)))
    return stretches


def exact(a: list[str], b: list[str], i0: int, j0: int, autojunk: bool = True) -> list[Stretch]:
    """difflib's stretches of a against b, offset by (i0, j0)."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=autojunk)
    return [(i0 + i1, i0 + i2, j0 + j1, j0 + j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
