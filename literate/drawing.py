"""Pictures of what a transcript prints, as SVG: the attention matrices as heatmaps, a table of checkpoints as curves
(tables.py reads them). The page's heatmaps and the lesson's figures (figures.py) are drawn by these same functions,
from the printed numbers only: nothing is run.

A weight is coloured by its multiple of uniform (weight × T) on one fixed scale, the same in every picture, light to
dark as the multiple grows: told apart in greyscale and without colour vision. The curves' horizontal axis gives each
checkpoint the same width, so a stretch measured every 10 rounds is as readable as one measured every 100; where the
spacing changes, a mark on the axis says so. Every byte is the same on every machine: coordinates and colours come
from + − × ÷ on the printed numbers and fixed formats, never from the C library's log (log2 below is written out)."""

from __future__ import annotations

import math
import re

from .declarations import Heatmap
from .markup import Markup, tag
from .tables import Panel, Table

# ---------------------------------------------------------------- numbers that are the same on every machine

LN2 = 0.6931471805599453


def log2(x: float) -> float:
    """log2 of a positive number from + − × ÷ alone (frexp only reads the bits), so that every machine computes
    the same colours: math.log is the C library's, which may differ in its last bit."""
    mantissa, exponent = math.frexp(x)  # x = mantissa · 2**exponent, 0.5 ≤ mantissa < 1
    z = (mantissa - 1) / (mantissa + 1)  # ln m = 2 atanh z, |z| ≤ 1/3
    term, total, k = z, 0.0, 1
    while k < 40:
        total += term / k
        term *= z * z
        k += 2
    return exponent + 2 * total / LN2


def fmt(x: float) -> str:
    """A coordinate: at most one decimal, no trailing zeros."""
    text = "%.1f" % (x + 0.0)
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text == "-0" else text


def nice_step(span: float, most: int) -> float:
    """A step of 1, 2, 2.5 or 5 times a power of ten that cuts span into at most `most` pieces."""
    step = 10.0 ** math.floor(log2(span / most) / log2(10.0)) if span > 0 else 1.0
    for factor in (1, 2, 2.5, 5, 10):
        if span / (step * factor) <= most:
            return step * factor
    return step * 10


def label(value: float) -> str:
    return "%.10g" % value


# ---------------------------------------------------------------- the colour of a weight

LOWEST, HIGHEST = 0.25, 8.0  # the scale's ends, in multiples of uniform: lighter below, darkest above
# (position on the scale, colour): light to dark, the lightness falling all the way (greyscale keeps the order),
# grey at 1x (uniform), orange to red to purple above it
RAMP = ((0.0, (255, 255, 255)), (0.4, (232, 232, 232)), (0.5, (253, 212, 158)), (0.6, (252, 141, 89)),
        (0.8, (215, 48, 39)), (1.0, (63, 0, 125)))
LEGEND_MULTIPLES = ((0.25, "¼"), (0.5, "½"), (1.0, "1"), (2.0, "2"), (4.0, "4"), (8.0, "8"))


def scale_position(multiple: float) -> float:
    """Where a multiple of uniform stands on the scale: 0 at LOWEST (and below), 1 at HIGHEST (and above), by log."""
    if not multiple > 0:
        return 0.0
    position = (log2(multiple) - log2(LOWEST)) / (log2(HIGHEST) - log2(LOWEST))
    return max(0.0, min(1.0, position))


def ramp_colour(position: float) -> str:
    """The colour at a position on the scale (0 to 1), between the RAMP's colours."""
    for (start, low), (stop, high) in zip(RAMP, RAMP[1:]):
        if position <= stop:
            share = (position - start) / (stop - start)
            return "#" + "".join("%02x" % round(a + (b - a) * share) for a, b in zip(low, high))
    return "#%02x%02x%02x" % RAMP[-1][1]


def colour(multiple: float) -> str:
    """The colour of a weight that is `multiple` times uniform, on the one fixed scale."""
    return ramp_colour(scale_position(multiple))


# ---------------------------------------------------------------- drawing

FONT = "'Noto Sans CJK SC', 'Source Han Sans SC', 'PingFang SC', 'Microsoft YaHei', sans-serif"
INK, MUTED = "#1a1a1a", "#555555"
WIDTH = 360  # the drawing's width in its own units: at a phone's 390 pixels a unit is about a pixel
SHOWN = 1.5  # the size it asks for: one and a half times (a wider screen shows it larger, a phone fits it)


def text(x: float, y: float, content: str, size: float = 11, anchor: str = "start", weight: str | None = None,
         fill: str = INK) -> Markup:
    return tag("text", {"x": fmt(x), "y": fmt(y), "font-size": fmt(size), "text-anchor": anchor,
                        "font-weight": weight, "fill": fill}, content)


def svg(kind: str, width: float, height: float, description: str, *parts) -> Markup:
    """The drawing (class kind): its description first (what a screen reader says; a tooltip), then its parts."""
    return tag("svg", {"xmlns": "http://www.w3.org/2000/svg", "class": kind, "viewBox": f"0 0 {fmt(width)} {fmt(height)}",
                       "width": fmt(width * SHOWN), "height": fmt(height * SHOWN), "role": "img",
                       "aria-label": description, "font-family": FONT},
               tag("title", None, description), tag("rect", {"width": fmt(width), "height": fmt(height),
                                                             "fill": "#ffffff"}), *parts)


def ticks(count: int) -> list[int]:
    """Which of count rows or columns (0-based) get their number: the first, every fifth, the last."""
    return sorted({0, count - 1} | set(range(4, count - 1, 5)))


# What a heatmap says in its own words, in the lesson's language (language.py): the line above the legend, and a
# cell's tooltip
HEATMAP_WORDS = {
    "zh": {"axes": "行：{rows}第几位　列：{columns}第几位　颜色：权重是均匀（1/T）的几倍",
           "panel": "{title}：", "cell": "{row}，{columns} {column}：{shown}（均匀的 {times} 倍）"},
    "en": {"axes": "rows: {rows} position · columns: {columns} position · colour: the weight in multiples of even (1/T)",
           "panel": "{title}: ", "cell": "{row}, {columns} {column}: {shown} ({times} × even)"},
}


def heatmaps_svg(panels: list[Panel], description: str, declared: Heatmap, language: str,
                 tooltips: bool = False) -> Markup:
    """The panels side by side (four and more in two rows), one fixed colour scale, a legend below, its words in
    language. tooltips: each cell titled with its number (the page, where a pointer shows it; a figure file is shown
    as an image, where nothing does)."""
    words = HEATMAP_WORDS[language]
    per_row = len(panels) if len(panels) <= 3 else -(-len(panels) // 2)
    T = max(len(panel.columns) for panel in panels)
    n_rows = max(len(panel.rows) for panel in panels)
    left, gap, title_height = 24.0, 16.0, 30.0
    cell = max(5.0, min(22.0, math.floor((WIDTH - left - 4 - gap * (per_row - 1)) / (per_row * T))))
    block_width, block_height = cell * T, title_height + cell * n_rows + 12
    parts = []
    for k, panel in enumerate(panels):
        x0 = left + (k % per_row) * (block_width + gap)
        y0 = (k // per_row) * block_height
        parts.append(panel_svg(panel, x0, y0, cell, title_height, declared, words if tooltips else None))
    grid_bottom = math.ceil(len(panels) / per_row) * block_height
    parts.append(text(0, grid_bottom + 6, words["axes"].format(rows=declared.rows, columns=declared.columns), 10,
                      fill=MUTED))
    parts.append(legend(12, grid_bottom + 14))
    return svg("heatmaps", WIDTH, grid_bottom + 44, description, *parts)


def panel_svg(panel: Panel, x0: float, y0: float, cell: float, title_height: float, declared: Heatmap,
              tooltips: dict[str, str] | None) -> Markup:
    """One panel; tooltips: the words of each cell's tooltip (HEATMAP_WORDS), None for none."""
    T, top = len(panel.columns), y0 + title_height
    parts = [text(x0 + cell * T / 2, y0 + 13, panel.title, 12, "middle", "600")]
    for j in ticks(T):
        parts.append(text(x0 + cell * (j + 0.5), top - 4, panel.columns[j], 10, "middle", fill=MUTED))
    for i in ticks(len(panel.rows)):
        parts.append(text(x0 - 4, top + cell * (i + 0.5) + 3.5, panel.rows[i][0].split()[-1], 10, "end", fill=MUTED))
    cells = []
    for i, (row_label, weights, printed) in enumerate(panel.rows):
        for j, (weight, shown) in enumerate(zip(weights, printed, strict=True)):
            times = weight * T
            attributes = {"class": "cell", "x": fmt(x0 + cell * j), "y": fmt(top + cell * i), "width": fmt(cell),
                          "height": fmt(cell), "fill": colour(times)}
            title = []
            if tooltips:
                attributes["data-multiple"] = "%.4g" % times
                said = tooltips["cell"].format(row=row_label, columns=declared.columns, column=panel.columns[j],
                                               shown=shown, times="%.2g" % times)
                title = [tag("title", None, (tooltips["panel"].format(title=panel.title) if panel.title else "") + said)]
            cells.append(tag("rect", attributes, *title))
    parts.append(tag("g", {"stroke": "#ffffff", "stroke-width": "0.5"}, *cells))  # a thin white line between cells
    for i, j in expected_cells(len(panel.rows), T, declared.mark):
        parts.append(tag("rect", {"class": "expected", "x": fmt(x0 + cell * j + 0.5), "y": fmt(top + cell * i + 0.5),
                                  "width": fmt(cell - 1), "height": fmt(cell - 1), "fill": "none", "stroke": INK,
                                  "stroke-width": "1"}))
    return tag("g", {"class": "panel", "data-rows": len(panel.rows), "data-columns": T}, *parts)


def expected_cells(rows: int, columns: int, mark: str | None) -> list[tuple[int, int]]:
    """The cells outlined: a reversal's (row r reads column T + 1 − r) or a copy's (row r reads column r)."""
    if mark == "anti-diagonal":
        return [(i, columns - 1 - i) for i in range(min(rows, columns))]
    if mark == "diagonal":
        return [(i, i) for i in range(min(rows, columns))]
    return []


def legend(x0: float, y0: float) -> Markup:
    """The scale as a continuous bar (the colour at each place is the colour of that multiple) with a tick and a
    label at each multiple of LEGEND_MULTIPLES."""
    width, slices = 204.0, 48
    parts = [tag("rect", {"x": fmt(x0 + width * k / slices), "y": fmt(y0), "width": fmt(width / slices + 0.3),
                          "height": "10", "fill": ramp_colour((k + 0.5) / slices)}) for k in range(slices)]
    parts.append(tag("rect", {"x": fmt(x0), "y": fmt(y0), "width": fmt(width), "height": "10", "fill": "none",
                              "stroke": "#bbbbbb", "stroke-width": "0.5"}))
    for multiple, name in LEGEND_MULTIPLES:
        x = x0 + width * scale_position(multiple)
        parts.append(tag("line", {"x1": fmt(x), "y1": fmt(y0 + 10), "x2": fmt(x), "y2": fmt(y0 + 14), "stroke": MUTED,
                                  "stroke-width": "0.8"}))
        parts.append(text(x, y0 + 24, f"{name}×", 10, "middle"))
    return tag("g", {"class": "legend"}, *parts)


# the curves: one style each, told apart by the dashes too (greyscale, colour vision)
SERIES_STYLES = (("#3f007d", "1.8", None), ("#e8743b", "1.6", "5 3"), ("#2a7fb8", "1.4", "1.5 2.5"),
                 ("#555555", "1.4", "8 3 2 3"))


def curves_svg(table: Table, description: str) -> Markup:
    """One panel per quantity, stacked, on one horizontal axis; each series a line, each rule a dotted line."""
    left, right, plot_height, title_height, gap = 40.0, 10.0, 78.0, 18.0, 10.0
    width = WIDTH - left - right
    xs = [row[0] for row in table.rows]
    position = {x: left + width * k / (len(xs) - 1) for k, x in enumerate(xs)}
    parts, y0 = [], 2.0
    for s, name in enumerate(table.series):
        colour_, stroke, dashes = SERIES_STYLES[s % len(SERIES_STYLES)]
        parts.append(tag("line", {"x1": "0", "y1": fmt(y0 + 8), "x2": "24", "y2": fmt(y0 + 8), "stroke": colour_,
                                  "stroke-width": stroke, "stroke-dasharray": dashes}))
        parts.append(text(30, y0 + 12, name, 10.5))
        y0 += 16
    y0 += 4
    for q, (name, rule) in enumerate(table.quantities):
        parts.append(text(left, y0 + 12, name, 11, weight="600"))
        top = y0 + title_height
        values = [v for s in range(len(table.series)) for v in table.values(s, q)] + ([rule] if rule is not None else [])
        low, high = min(0.0, min(values)), max(values)
        step = nice_step(high - low, 4)
        low, high = math.floor(low / step) * step, math.ceil(high / step) * step
        high = high if high > low else low + step

        def y(value: float, top=top, low=low, high=high) -> float:
            return top + plot_height * (high - value) / (high - low)

        parts.append(tag("rect", {"x": fmt(left), "y": fmt(top), "width": fmt(width), "height": fmt(plot_height),
                                  "fill": "none", "stroke": "#bbbbbb", "stroke-width": "0.6"}))
        for k in range(int(round((high - low) / step)) + 1):
            value = low + k * step
            parts.append(tag("line", {"x1": fmt(left - 3), "y1": fmt(y(value)), "x2": fmt(left), "y2": fmt(y(value)),
                                      "stroke": MUTED, "stroke-width": "0.6"}))
            parts.append(text(left - 5, y(value) + 3.5, label(value), 10, "end", fill=MUTED))
        if rule is not None:
            parts.append(tag("line", {"x1": fmt(left), "y1": fmt(y(rule)), "x2": fmt(left + width), "y2": fmt(y(rule)),
                                      "stroke": INK, "stroke-width": "0.8", "stroke-dasharray": "2 2"}))
            rule_text = re.search(r"[（(]([^）)]*)[）)]", name)
            parts.append(text(left + width - 2, y(rule) - 3, rule_text[1] if rule_text else label(rule), 9.5, "end"))
        for s in range(len(table.series)):
            colour_, stroke, dashes = SERIES_STYLES[s % len(SERIES_STYLES)]
            points = " ".join(f"{fmt(position[x])},{fmt(y(v))}" for x, v in zip(xs, table.values(s, q)))
            parts.append(tag("polyline", {"points": points, "fill": "none", "stroke": colour_, "stroke-width": stroke,
                                          "stroke-dasharray": dashes}))
        y0 = top + plot_height + gap
    parts += x_axis(xs, position, y0 - gap, table.counts)
    return svg("curves", WIDTH, y0 + (42 if "（" in table.counts else 28), description, *parts)


def x_axis(xs: list[float], position: dict, bottom: float, counts: str) -> list[Markup]:
    """Ticks at the roundest checkpoints that keep 28 units apart; where the spacing of the checkpoints changes, a
    mark on the axis (each checkpoint has the same width, so the scale changes there)."""
    def roundness(x: float) -> float:
        if x == 0:
            return float("inf")
        power = 1.0
        while x % (power * 10) == 0:
            power *= 10
        return power if x % power == 0 else 0.0

    chosen: list[float] = []
    for x in sorted(xs, key=lambda x: (-roundness(x), x)):
        if all(abs(position[x] - position[c]) >= 28 for c in chosen):
            chosen.append(x)
    parts = []
    for x in sorted(chosen):
        parts.append(tag("line", {"x1": fmt(position[x]), "y1": fmt(bottom), "x2": fmt(position[x]),
                                  "y2": fmt(bottom + 3), "stroke": MUTED, "stroke-width": "0.6"}))
        parts.append(text(position[x], bottom + 13, label(x), 10, "middle", fill=MUTED))
    steps = [b - a for a, b in zip(xs, xs[1:])]
    for k in range(1, len(steps)):
        if steps[k] != steps[k - 1]:
            x = position[xs[k]]
            parts.append(tag("line", {"x1": fmt(x - 2), "y1": fmt(bottom + 2), "x2": fmt(x + 1), "y2": fmt(bottom - 3),
                                      "stroke": INK, "stroke-width": "1"}))
            parts.append(tag("line", {"x1": fmt(x + 1), "y1": fmt(bottom + 2), "x2": fmt(x + 4), "y2": fmt(bottom - 3),
                                      "stroke": INK, "stroke-width": "1"}))
    name, _, note = counts.partition("（")  # what the axis counts; a note in brackets on a line of its own
    parts.append(text(WIDTH - 10, bottom + 25, name.strip() + " →", 10, "end", fill=MUTED))
    if note:
        parts.append(text(40, bottom + 39, "（" + note, 9.5, fill=MUTED))
    return parts
