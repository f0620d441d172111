"""What a transcript prints that the tools can draw (drawing.py), read from its lines: attention matrices, and
tables of checkpoints. How they are printed, the lesson declares (declarations.py):

  heatmap: ROWS COLUMNS LEGEND [percent] [anti-diagonal|diagonal]
    A matrix is a line of column numbers (1 2 ... T, alone or after the word COLUMNS; repeated, 1 ... T 1 ... T, for
    matrices side by side), then one line a row: ROWS, the row's number, T numbers for each matrix (weights; with
    percent, each weight in percent: 10 for 0.10). The line just above the column numbers titles the matrices (one
    matrix: the whole line, a closing colon dropped; several: cut at runs of two or more blanks, or what follows its
    last colon cut at 、 or a comma, 从左到右：甲、乙). anti-diagonal (diagonal):
    the cells a reversal (a copy) needs are outlined. LEGEND starts the line that ends a drawing in characters.

  curves: X Y SERIES
    A table of checkpoints: a line `X：what the first column counts`, a line `Y：a、b、c` (the quantities, one panel
    each; the first number in brackets in a quantity's name, 降多少（规则：至少 0.10）, is drawn as a line across
    its panel), a line `SERIES：p、q` (the curves of every panel), then rows of numbers: the first column, then
    each series' quantities in order."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .declarations import Curves, Heatmap

NUMBER = r"-?\d+(?:\.\d+)?"
ROW_VALUES = re.compile(rf"((?:\s+{NUMBER})+)\s*$")


@dataclass(frozen=True)
class Panel:
    """One printed matrix: its title, its column numbers, and its rows (label, weights, the numbers as printed)."""

    title: str
    columns: list[str]
    rows: list[tuple[str, list[float], list[str]]]


@dataclass(frozen=True)
class Matrices:
    """Matrices printed side by side (one or more) from line start up to end (the lines of a drawing in
    characters that follows them included)."""

    start: int
    end: int
    panels: list[Panel]


def column_runs(numbers: list[str]) -> list[list[str]] | None:
    """1 2 ... T, once or repeated: the runs, all of the same T; None for anything else."""
    if not numbers or numbers[0] != "1":
        return None
    runs: list[list[str]] = []
    for number in numbers:
        if number == "1":
            runs.append([])
        runs[-1].append(number)
    width = len(runs[0])
    expected = [str(j) for j in range(1, width + 1)]
    return runs if width > 1 and all(run == expected for run in runs) else None


def titles(line: str, count: int) -> list[str]:
    """The titles above count matrices: one matrix, the whole line (a closing colon dropped); several, the line cut
    at runs of two or more blanks, or what follows its last colon cut at 、 or a comma (从左到右：甲、乙); else none."""
    text = line.strip()
    if count == 1 and text:
        return [text.rstrip("：:")]
    words = [word.strip() for word in re.split(r" {2,}|\t|\u3000", text) if word.strip()]
    listed = [word.strip() for word in re.split(r"[、,，]", re.split(r"[：:]", text)[-1]) if word.strip()]
    for found in (words, listed):
        if len(found) == count:
            return [word.rstrip("：:") for word in found]
    return [""] * count


def parse_matrices(lines: list[str], declared: Heatmap | None) -> list[Matrices]:
    """The matrices these transcript lines print, as the lesson declares them (see the module's docstring)."""
    if declared is None:
        return []
    header = re.compile(rf"^(?:{re.escape(declared.columns)})?\s+(\d+(?:\s+\d+)+)\s*$")
    row = re.compile(rf"^{re.escape(declared.rows)} ?(\d{{1,9}})" + ROW_VALUES.pattern)
    found, index = [], 0
    while index < len(lines):
        numbers = header.match(lines[index])
        runs = column_runs(numbers[1].split()) if numbers else None
        if runs is None:
            index += 1
            continue
        T, rows, end = len(runs[0]), [], index + 1
        while end < len(lines):
            match = row.match(lines[end])
            values = match[2].split() if match else []
            if len(values) != T * len(runs) or not all(re.fullmatch(NUMBER, value) for value in values):
                break
            rows.append((f"{declared.rows} {match[1]}", values))
            end += 1
        if not rows:
            index += 1
            continue
        named = titles(lines[index - 1], len(runs)) if index > 0 else [""] * len(runs)
        scale = 100 if declared.percent else 1
        panels = [Panel(named[k], runs[k], [(label, [float(value) / scale for value in values[k * T:(k + 1) * T]],
                                            values[k * T:(k + 1) * T]) for label, values in rows])
                  for k in range(len(runs))]
        end = drawing_end(lines, end, declared)
        found.append(Matrices(index, end, panels))
        index = end
    return found


def drawing_end(lines: list[str], end: int, declared: Heatmap) -> int:
    """A matrix drawn in characters often follows the numbers, up to its legend: keep them together."""
    for last in range(end, min(end + 16, len(lines))):
        text = lines[last]
        if text.startswith(declared.legend):  # the legend, long, closes the group: not in the matrix's box
            return last
        if text and not text.startswith((" ", declared.rows, declared.columns)):
            break
    return end


# ---------------------------------------------------------------- reading curves


@dataclass(frozen=True)
class Table:
    """A table of checkpoints (see the module's docstring): what the first column counts, the quantities (name,
    the value of its rule or None), the series, and the rows (first column, then each series' quantities)."""

    start: int
    end: int
    counts: str
    quantities: list[tuple[str, float | None]]
    series: list[str]
    rows: list[list[float]]

    def values(self, series: int, quantity: int) -> list[float]:
        return [row[1 + series * len(self.quantities) + quantity] for row in self.rows]


def split_names(text: str) -> list[str]:
    """Names separated by 、 (not inside brackets)."""
    names, depth, current = [], 0, ""
    for character in text:
        depth += character in "（(" and 1 or 0
        depth -= character in "）)" and 1 or 0
        if character == "、" and depth == 0:
            names.append(current.strip())
            current = ""
        else:
            current += character
    return [name for name in names + [current.strip()] if name]


def rule_value(name: str) -> float | None:
    """The first number in brackets in a quantity's name: its rule, drawn as a line."""
    match = re.search(rf"[（(][^）)]*?({NUMBER})", name)
    return float(match[1]) if match else None


def parse_curves(lines: list[str], declared: Curves | None) -> list[Table]:
    """The tables of checkpoints these transcript lines print (see the module's docstring)."""
    if declared is None:
        return []

    def spec(line: str, word: str) -> str | None:
        match = re.match(rf"{re.escape(word)}[：:]\s*(.+)$", line)
        return match[1].strip() if match else None

    found, index = [], 0
    while index + 3 < len(lines):
        counts, quantities, series = (spec(lines[index + k], word)
                                      for k, word in enumerate((declared.x, declared.y, declared.series)))
        if counts is None or quantities is None or series is None:
            index += 1
            continue
        names, curves = split_names(quantities), split_names(series)
        width, rows, end = 1 + len(names) * len(curves), [], index + 3
        while end < len(lines):
            values = lines[end].split()
            if len(values) != width or not all(re.fullmatch(NUMBER, value) for value in values):
                break
            rows.append([float(value) for value in values])
            end += 1
        if len(rows) >= 2:
            found.append(Table(index, end, counts, [(name, rule_value(name)) for name in names], curves, rows))
        index = max(end, index + 1)
    return found
