#!/usr/bin/env python3
"""Time tangle.py check and weave.py on 1 MiB lessons of the shapes that were once quadratic (issue 20).
A benchmark, not a test: it prints wall and CPU seconds and the load, and asserts nothing.

usage: .venv/bin/python tests/bench_pathological.py [SHAPE ...]     (default: every shape)
"""

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


def repeat(unit: str, size: int = SIZE) -> str:
    return unit * (size // len(unit.encode()))


def many_cites_transcript() -> str:
    """4,000-odd paragraphs citing one number, against a transcript that prints it on 4,000-odd lines."""
    count = 4000
    lines = "".join(f"line {i} 0.25\n" for i in range(count))
    program = f"```python {{file=generated/p.py}}\nfor i in range({count}):\n    print(f'line {{i}} 0.25')\n```\n\n"
    paragraphs = repeat("段落说 0.25 这个数。\n\n", SIZE - len(lines.encode()) - 200)
    return f"# 课\n\n{program}```text {{transcript}}\n{lines}```\n\n{paragraphs}"


SHAPES = {
    "one paragraph of `w *e*` lines": lambda: "# 课\n\n" + PROGRAM + repeat("w *e*\n"),
    "one line of numbers": lambda: "# 课\n\n" + PROGRAM + repeat("0.25 "),
    "4,000 paragraphs citing one number, 4,000-line transcript": many_cites_transcript,
    "原书 0.25 repeated": lambda: "# 课\n\n" + PROGRAM + repeat("原书 0.25 "),
    "one line of $x$ formulas": lambda: "# 课\n\n" + PROGRAM + repeat("$x$ "),
    "equal headings": lambda: "# 课\n\n" + PROGRAM + repeat("## 同名\n\n"),
    "numbers in one table": lambda: "# 课\n\n" + PROGRAM + "| a | b |\n|---|---|\n" + repeat("| 0.25 | 0.25 |\n"),
    "bare URLs between numbers": lambda: "# 课\n\n" + PROGRAM + repeat("http://x.y/0.25 0.25 "),
}


def timed(command: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system of the child), exit status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, cwd=ROOT)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.returncode


def main(argv: list[str]) -> int:
    wanted = [name for name in SHAPES if not argv or any(word in name for word in argv)]
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory() as folder:
        for name in wanted:
            md = Path(folder) / "lesson.md"
            md.write_text(SHAPES[name]())
            (Path(folder) / "book_figures.txt").write_text("0.25\n")
            subprocess.run([sys.executable, "tangle.py", "tangle", str(md)], capture_output=True, cwd=ROOT, check=True)
            check = timed([sys.executable, "tangle.py", "check", str(md)])
            weave = timed([sys.executable, "weave.py", str(md), "-o", str(Path(folder) / "page.html")])
            print(f"{name:58} {md.stat().st_size / 2**20:.2f} MiB  check {check[0]:6.2f} s wall {check[1]:6.2f} s CPU "
                  f"(exit {check[2]})  weave {weave[0]:6.2f} s wall {weave[1]:6.2f} s CPU (exit {weave[2]})", flush=True)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
