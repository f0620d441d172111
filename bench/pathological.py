#!/usr/bin/env python3
"""Time tangle.py check, weave.py and stitch on 1 MiB lessons of the shapes that were once quadratic.
A benchmark, not a test: it prints wall and CPU seconds and the load, and asserts nothing.

usage: .venv/bin/python bench/pathological.py [--ratio] [SHAPE ...]     (default: every shape)

--ratio runs each shape at a quarter of the size and at the full size and prints the ratio of the CPU
seconds: about 4 for a linear pass, about 16 for a quadratic one (a ratio, unlike a time, holds on a
loaded machine).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZE = (1 << 20) - 4096  # just under tangle.py's limit of 1 MiB, leaving room for the program and transcript
PROGRAM = "```python {file=generated/p.py}\nprint('0.25')\n```\n\n```text {transcript}\n0.25\n```\n\n"


def repeat(unit: str, size: int | None = None) -> str:
    return unit * ((SIZE if size is None else size) // len(unit.encode()))


def sized(size: int) -> None:
    """Make the shapes this many bytes (--ratio builds each one twice)."""
    global SIZE
    SIZE = size


def many_cites_transcript() -> str:
    """4,000-odd paragraphs citing one number, against a transcript that prints it on 4,000-odd lines."""
    count = 4000
    lines = "".join(f"line {i} 0.25\n" for i in range(count))
    program = f"```python {{file=generated/p.py}}\nfor i in range({count}):\n    print(f'line {{i}} 0.25')\n```\n\n"
    paragraphs = repeat("段落说 0.25 这个数。\n\n", SIZE - len(lines.encode()) - 200)
    return f"# 课\n\n{program}```text {{transcript}}\n{lines}```\n\n{paragraphs}"


TWO = PROGRAM.replace("{transcript}", "{transcript=generated/p.py}")  # for lessons with a second root

SHAPES = {
    "one paragraph of `w *e*` lines": lambda: "# 课\n\n" + PROGRAM + repeat("w *e*\n"),
    "one line of numbers": lambda: "# 课\n\n" + PROGRAM + repeat("0.25 "),
    "4,000 paragraphs citing one number, 4,000-line transcript": many_cites_transcript,
    "原书 0.25 repeated": lambda: "# 课\n\n" + PROGRAM + repeat("原书 0.25 "),
    "one line of $x$ formulas": lambda: "# 课\n\n" + PROGRAM + repeat("$x$ "),
    "equal headings": lambda: "# 课\n\n" + PROGRAM + repeat("## 同名\n\n"),
    "numbers in one table": lambda: "# 课\n\n" + PROGRAM + "| a | b |\n|---|---|\n" + repeat("| 0.25 | 0.25 |\n"),
    "bare URLs between numbers": lambda: "# 课\n\n" + PROGRAM + repeat("http://x.y/0.25 0.25 "),
    "$ and then many {": lambda: "# 课\n\n" + PROGRAM + "$" + repeat("{") + "\n",
    "a fence-like line of many { in a paragraph": lambda: "# 课\n\n" + PROGRAM + "段落\n    ```text " + repeat("{") + "\n",
    "$`a repeated": lambda: "# 课\n\n" + PROGRAM + repeat("$`a") + "\n",
    "``a repeated": lambda: "# 课\n\n" + PROGRAM + repeat("``a") + "\n",
    "blank-looking lines in a C fence": lambda: "# 课\n\n" + PROGRAM + "```c\n" + repeat("\t \n") + "x\n```\n",
    "blank-looking lines in a Python root": lambda: "# 课\n\n" + TWO + "```python {file=generated/q.py}\n"
                                                    + repeat(" \n") + "x = 1\n```\n",
}
STITCH_LINES = 40000  # stitch: a chunk of this many identical lines, every 100th edited in generated/p.py


def timed(command: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system of the child), exit status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, cwd=ROOT)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.returncode


def shape_run(folder: Path, text: str) -> tuple[tuple, tuple]:
    """(check, weave) as timed, for a lesson."""
    md = folder / "lesson.md"
    md.write_text(text)
    (folder / "book_figures.txt").write_text("0.25\n")
    subprocess.run([sys.executable, "tangle.py", "tangle", str(md)], capture_output=True, cwd=ROOT)
    return (timed([sys.executable, "tangle.py", "check", str(md)]),
            timed([sys.executable, "weave.py", str(md), "-o", str(folder / "page.html")]))


def stitch_run(folder: Path, lines: int) -> tuple:
    """stitch as timed, on a chunk of identical lines with every 100th edited in the generated file."""
    md = folder / "lesson.md"
    md.write_text("```python {file=generated/p.py}\n" + "x = 1\n" * lines + "```\n")
    subprocess.run([sys.executable, "tangle.py", "tangle", "--force", str(md)], capture_output=True, cwd=ROOT)
    generated = folder / "generated" / "p.py"
    body = generated.read_text().split("\n")
    for at in range(0, lines, 100):
        body[3 + at] = f"x = {at}"
    generated.write_text("\n".join(body))
    return timed([sys.executable, "tangle.py", "stitch", str(md)])


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv: list[str]) -> int:
    ratio = "--ratio" in argv
    argv = [word for word in argv if word != "--ratio"]
    wanted = [name for name in SHAPES if not argv or any(word in name for word in argv)]
    print(f"load: {load()} ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        for name in wanted:
            if ratio:
                full = SIZE
                sized(full // 4)
                small_check, small_weave = shape_run(folder, SHAPES[name]())
                sized(full)
            check, weave = shape_run(folder, SHAPES[name]())
            size = (folder / "lesson.md").stat().st_size / 2**20
            line = (f"{name:58} {size:.2f} MiB  check {check[0]:6.2f} s wall {check[1]:6.2f} s CPU (exit {check[2]})  "
                    f"weave {weave[0]:6.2f} s wall {weave[1]:6.2f} s CPU (exit {weave[2]})")
            if ratio:
                line += (f"  4n/n CPU: check {check[1] / max(small_check[1], 0.01):.1f}, "
                         f"weave {weave[1] / max(small_weave[1], 0.01):.1f}")
            print(line, flush=True)
        if not argv or any(word in "stitch" for word in argv):
            small = stitch_run(folder, STITCH_LINES // 4) if ratio else None
            full = stitch_run(folder, STITCH_LINES)
            print(f"{'stitch: ' + format(STITCH_LINES, ',') + ' identical lines, every 100th edited':58} "
                  f"stitch {full[0]:6.2f} s wall {full[1]:6.2f} s CPU (exit {full[2]})"
                  + (f"  4n/n CPU: {full[1] / max(small[1], 0.01):.1f}" if ratio else ""), flush=True)
    print(f"load: {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
