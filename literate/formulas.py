"""What a formula is in the lesson's text: the one rule that the check (which warns about the formulas GitHub
would mangle) and the page (which typesets them) both read, so that they never disagree.

A formula is, in an inline token's source outside code spans: $$...$$; or $...$ whose opening $ is not
followed by a blank, ` or $, and whose closing $ is not preceded by a blank or \\ nor followed by a digit or $
(so prices like $5 and $6 stay text); or GitHub's $`...`$, a code span between two dollars. A paragraph that
is one $$...$$ is a display formula, and so is a ```math fence."""

from __future__ import annotations

import re

DISPLAY_MATH = re.compile(r"\s*\$\$((?:(?!\$\$).)+)\$\$\s*", re.S)  # a paragraph that is one formula
INLINE_MATH = re.compile(r"\$\$(?P<display>.+?)\$\$|(?<![\\$])\$(?![\s$`])(?P<inline>[^$\n]*?[^\s\\$])\$(?![0-9$])")
GITHUB_MATH = re.compile(r"\$`([^`\n]+)`\$")  # GitHub's $`...`$ on one line, as a Jupyter notebook rewrites it
BACKTICKS = re.compile(r"`+")  # the runs that open and close code spans (code_spans)


def code_spans(raw: str) -> list[tuple[int, int]]:
    """(start, end) of each code span of an inline token's source, as CommonMark pairs them: a run of backticks
    opens one, the next run of exactly as many closes it (a run with none after it is text). One pass over
    the runs, each run's partner found from the end (a lazy regex searched from every opener: quadratic)."""
    runs = [(match.start(), match.end()) for match in BACKTICKS.finditer(raw)]
    partner, latest = [None] * len(runs), {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        partner[index] = latest.get(length)
        latest[length] = index
    spans, index = [], 0
    while index < len(runs):
        closing = partner[index]
        if closing is None:
            index += 1
            continue
        spans.append((runs[index][0], runs[closing][1]))
        index = closing + 1
    return spans


def without_code(raw: str) -> str:
    """The source with each code span blanked (GitHub's $`...`$ with its dollars: else the text between two of
    them, as in $`a`$；$`b`$, reads as $...$), every other character where it was."""
    pieces, position = [], 0
    for start, end in code_spans(raw):
        if start > 0 and end < len(raw) and raw[start - 1] == raw[end] == "$" and start - 1 >= position:
            start, end = start - 1, end + 1  # $`...`$: GitHub's formula, its dollars with it
        pieces += [raw[position:start], " " * (end - start)]
        position = end
    return "".join(pieces) + raw[position:]


def dollar_formulas(raw: str) -> list[tuple[int, str, bool]]:
    """(offset, LaTeX, display) of each $...$ and $$...$$ formula of an inline token's source, in order."""
    return [(match.start(), match["display"] or match["inline"], match["display"] is not None)
            for match in INLINE_MATH.finditer(without_code(raw))]
