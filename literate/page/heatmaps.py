"""Heatmaps: each attention matrix printed in a transcript also drawn as an SVG, from the printed numbers (the
programs are never run); one colour scale for the whole page, by a weight's multiple of uniform. What a matrix
looks like in a transcript, and what its rows and columns are called, the lesson declares (heatmap: ROWS COLUMNS
LEGEND, see declarations.py); a lesson that declares none gets no heatmaps."""

from __future__ import annotations

import math
import re

from .. import model
from ..declarations import Heatmap
from .markup import Markup, tag

TRANSCRIPT_MATRIX_ROW = re.compile(r"^(\S{1,64}?) ?(\d{1,9})((?:\s+-?\d+\.\d+)+)\s*$")  # 输出 1    0.10  0.10 ...
COLUMN_NUMBERS = r"\s+(\d+(?:\s+\d+)+)\s*$"  # the column numbers above a matrix


def column_header(declared: Heatmap) -> re.Pattern:
    """The line of column numbers above a matrix, alone or after the columns' name (输入    1     2 ...): a name as
    wide in characters as the rows' keeps the numbers over their columns in any font."""
    return re.compile(f"^(?:{re.escape(declared.columns)})?{COLUMN_NUMBERS}")


def parse_matrices(lines: list[str], declared: Heatmap | None) -> list[tuple[int, int, list[str], list]]:
    """Attention matrices printed in a transcript: (first line index, end index, column labels, rows of
    (row label, weights, weights as printed)). A matrix is a header of column numbers followed by rows
    labelled as declared (输出 1) with one printed number per column."""
    if declared is None:
        return []
    found = []
    index = 0
    header = column_header(declared)
    while index < len(lines):
        numbers = header.match(lines[index])
        if not numbers:
            index += 1
            continue
        columns = numbers[1].split()
        rows, end = [], index + 1
        while end < len(lines):
            match = TRANSCRIPT_MATRIX_ROW.match(lines[end])
            if not match or match[1] != declared.rows or len(match[3].split()) != len(columns):
                break
            printed = match[3].split()
            rows.append((f"{match[1]} {match[2]}", [float(value) for value in printed], printed))
            end += 1
        if rows:
            end = unicode_block_end(lines, end, declared)
            found.append((index, end, columns, rows))
        index = max(end, index + 1)
    return found


def unicode_block_end(lines: list[str], end: int, declared: Heatmap) -> int:
    """A matrix drawn in characters often follows the numbers (up to its legend, which is long and
    comes after the group): keep them together."""
    for last in range(end, min(end + 16, len(lines))):
        text = lines[last]
        if text.startswith(declared.legend):
            return last
        if (text and not text.startswith((" ", declared.rows, declared.columns))) or TRANSCRIPT_MATRIX_ROW.match(text):
            break  # not a matrix drawn in characters, or the numbers of another matrix
    return end


def heatmap_svg(columns: list[str], rows, caption: str, scale: float, declared: Heatmap) -> Markup:
    cell, left, top = 20, 44, 40
    width, height = left + cell * len(columns) + 8, top + cell * len(rows) + 8
    parts = [tag("title", None, caption),
             tag("text", {"class": "axis", "x": left + cell * len(columns) / 2, "y": 12, "text-anchor": "middle"},
                 f"{declared.columns} →"),
             tag("text", {"class": "axis vertical", "x": 12, "y": top + cell * len(rows) / 2, "text-anchor": "middle"},
                 f"{declared.rows} →")]
    for j, label in enumerate(columns):
        parts.append(tag("text", {"x": left + cell * j + cell / 2, "y": top - 6, "text-anchor": "middle"}, label))
    for i, (label, weights, printed) in enumerate(rows):
        y = top + cell * i
        parts.append(tag("text", {"x": left - 6, "y": y + cell / 2 + 4, "text-anchor": "end"}, label.split()[-1]))
        for j, (weight, shown) in enumerate(zip(weights, printed, strict=True)):
            times = weight * len(columns)  # a weight's multiple of uniform (1/T)
            parts.append(tag("rect", {"class": "cell", "x": left + cell * j, "y": y, "width": cell, "height": cell,
                                      "fill": colour(times, scale), "data-multiple": f"{times:.4g}"},
                             tag("title", None, f"{label}，{declared.columns} {columns[j]}：{shown}（均匀的 {times:.2g} 倍）")))
    return tag("svg", {"class": "heatmap", "xmlns": "http://www.w3.org/2000/svg", "viewBox": f"0 0 {width} {height}",
                       "width": width, "height": height, "role": "img", "data-rows": len(rows),
                       "data-columns": len(columns)}, *parts)


MAX_MULTIPLE = 1e6  # the colour scale ends here, whatever a transcript prints
NEUTRAL, ABOVE, BELOW = (246, 246, 246), (165, 15, 21), (33, 102, 172)  # 1×: grey; above: red; below: blue


def colour(times: float, scale: float) -> str:
    """One colour scale for every heatmap of the page, by a weight's multiple of uniform: 1× neutral grey,
    above it red, below it blue, both by the logarithm, full colour at the page's largest multiple (scale)
    and at its inverse, so that 2× and ½× are as strong, and two pictures compare."""
    span = math.log(max(scale, 1.01))
    position = max(-1.0, min(1.0, math.log(times) / span)) if times > 0 else -1.0
    end = ABOVE if position > 0 else BELOW
    return "#" + "".join(f"{round(a + (b - a) * abs(position)):02x}" for a, b in zip(NEUTRAL, end, strict=True))


def legend_svg(scale: float) -> Markup:
    """The scale as a row of swatches, each labelled with its multiple of uniform."""
    marks = [1 / scale] + [m for m in (1 / 4, 1 / 2, 1, 2, 4) if 1 / scale < m < scale] + [scale]
    names = {1 / 4: "¼", 1 / 2: "½"}
    cell = 34
    parts = []
    for k, times in enumerate(marks):
        label = names.get(times) or (f"{times:.2g}" if times >= 1 else f"1/{1 / times:.2g}")
        parts.append(tag("rect", {"x": cell * k, "y": 0, "width": cell, "height": 12, "fill": colour(times, scale),
                                  "data-multiple": f"{times:.4g}"}))
        parts.append(tag("text", {"x": cell * k + cell / 2, "y": 26, "text-anchor": "middle"}, f"{label}×"))
    return tag("svg", {"class": "legend", "xmlns": "http://www.w3.org/2000/svg", "viewBox": f"0 0 {cell * len(marks)} 30",
                       "width": cell * len(marks), "height": 30, "role": "img",
                       "aria-label": "图例：权重是均匀的几倍"}, *parts)


def largest_multiple(doc: model.Document) -> float:
    """The largest multiple of uniform printed in any matrix of the page's transcripts (at least 2, at most
    MAX_MULTIPLE: a weight printed with hundreds of digits is no reason for a scale without end)."""
    largest = 2.0
    for transcript in doc.transcripts.values():
        for piece in transcript.pieces():
            for _, _, names, rows in parse_matrices(model.output_lines(piece.content), doc.declared.heatmap):
                largest = max([largest] + [weight * len(names) for _, weights, _ in rows for weight in weights
                                           if math.isfinite(weight * len(names))])
    return min(largest, MAX_MULTIPLE)
