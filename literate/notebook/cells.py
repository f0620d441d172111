"""The cells: the lesson's prose as Markdown cells, each chunk as a code cell, each part of the first program's
transcript as a cell that prints it (its part as the stored output), the program itself first, folded."""

from __future__ import annotations

import re

from .. import blocks, expansion, model
from ..startup import missing
from .lesson import first_program, part_blocks, without_main_block
from .text import jupyter_anchors, lesson_lines

try:
    import nbformat
    from nbformat import v4
except ImportError:  # run outside the project's .venv
    missing("notebook.py", "nbformat", "use make notebook (it installs requirements-notebook.txt into .venv), or "
            "pip install -r requirements-notebook.txt")

SUMMARY = re.compile(r"^\s*<summary>(.*)</summary>\s*$")
GENERATOR = "notebook.py"  # the notebook's metadata: marks the notebooks notebook.py wrote, the only files it overwrites
KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}

NOTE = """\
**这是讲义的笔记本版**（这一格和下面折叠着的那一格是 `notebook.py` 加的，讲义里没有）

`make notebook` 从 `{md}` 生成了它：讲义的文字是 Markdown 格，讲义的每个代码块是一格代码，顺序就是讲义的阅读顺序。从上往下运行全部格子（Run All）即可；{runs}

- **为什么能从上往下运行**：{names}下面折叠着的那一格，就是 `make tangle` 从讲义拼出来的整个程序 `{program}`，只去掉了开头两行来源说明和最后运行 `main` 的那几行：先运行它，所有名字就都有了。之后每一格运行的是讲义在那里给出的代码块（和折叠格里的是同一段代码），所以你改了哪一格、重新运行它，之后的格子用的就是你改过的版本。讲义的代码一行都没有另外写过。
{parts}- **邀请你改的格子**：每一格都可以改了再运行。{try_}
- **改乱了**：你的改动存在这个笔记本文件里，重启内核不会撤销它们。要回到讲义的样子，删掉这个文件（`build/{nbname}`）再 `make notebook`；要留下你的改动，先另存一份（File → Save Notebook As…）：讲义改了以后，`make notebook` 会重新生成这个文件，盖掉这里的改动。"""

PARTS_NOTE = ("- **实跑输出**：讲义里放实跑输出的地方，这里是一格打印它的代码，摘自〈{printing}〉里的 `{function}`（从注释"
              "「{mark}」到下一段为止）；格子下面已经放着讲义核对过的那一段输出。在新的内核里从头运行，打印出来的和它逐字节相同"
              "（`tests/test_notebook.py` 就是这样核对的）。讲义里折叠着的几段，这里折叠的是输出。\n")

PRELUDE_HEADER = """\
# 这一格是 make tangle 从 {md} 拼出来的整个程序 {program}（notebook.py 原样放进来），只去掉了文件开头
# 的两行来源说明和最后运行 main 的 `if __name__ == "__main__":` 那几行。先运行它，下面每一格用到的名字就都有了。
"""

ROOT_NOTE = {
    "program": "*（这一格只供阅读，不运行：`<<名字>>` 的地方拼进同名的代码块，Python 不认识这种写法。拼好的程序就是笔记本开头折叠着的那一格。）*",
    "other": "*（这一格只供阅读，不运行：这个程序要跑好几分钟。它的实跑输出照讲义放在各段代码的下面，`make experiments` 重新运行并逐字节核对它。）*",
}

PART_HEADER = "# 这几行摘自〈{printing}〉里的 {function}：\n"


class Notebook:
    """The cells so far, and whether a <details> that a code cell split is open."""

    def __init__(self):
        self.cells = []
        self.folding = False

    def add(self, cell, role: str, **facts):
        cell["id"] = f"{len(self.cells):03d}-{role}"  # the same every build
        cell.metadata["attention"] = {"role": role, **facts}
        self.cells.append(cell)
        return cell

    def markdown(self, lines: list[str]) -> None:
        """Prose up to the next cell. A <details> opened here and closed in a later cell (it folds a
        transcript that is a cell's output now) is dropped, and its summary kept in bold."""
        kept, opened = [], []
        for line in lines:
            stripped = line.strip()
            if stripped.startswith("<details"):
                opened.append(len(kept))
            elif stripped == "</details>":
                if opened:
                    opened.pop()
                else:  # closes a fold opened in an earlier cell
                    self.folding = False
                    continue
            kept.append(line)
        for index in reversed(opened):  # not closed here: the cells below fold their outputs
            summary = SUMMARY.match(kept[index + 1]) if index + 1 < len(kept) else None
            kept[index : index + (2 if summary else 1)] = \
                [f"**{summary[1]}**（讲义里折叠着；这里折叠的是下面格子的输出，点一下就展开）"] if summary else []
            self.folding = True
        text = jupyter_anchors("\n".join(kept).strip("\n"))
        if text.strip():
            self.add(v4.new_markdown_cell(text), "prose")

    def code(self, source: str, role: str, outputs=(), **facts):
        cell = self.add(v4.new_code_cell(source), role, **facts)
        if outputs:
            cell.outputs = [v4.new_output("stream", name="stdout", text=text) for text in outputs]
            if self.folding:
                cell.metadata["jupyter"] = {"outputs_hidden": True}
        return cell


def build(doc: model.Document) -> nbformat.NotebookNode:
    """The notebook of the lesson (see the package's docstring)."""
    program = first_program(doc)
    transcript = doc.transcripts[program]
    printing, printing_lines = part_blocks(doc, len(transcript.pieces()))
    lines = lesson_lines(doc)

    def is_cell(fence: blocks.Fence) -> bool:  # not an illustration, a formula or another program's transcript
        return fence.kind in ("chunk", "root", "playground") or (fence.kind == "transcript" and fence.label == program
                                                                and bool(printing_lines))

    notebook, cursor, prelude_done = Notebook(), 0, False
    for event, block, depth in blocks.walk(doc.blocks):
        heading = isinstance(block, blocks.Heading) and depth == 0
        if event != "open" or not (heading or isinstance(block, blocks.Fence) and is_cell(block)):
            continue  # what is not a cell of its own stays in the prose
        start, end, line = block.line - 1, block.end, block.line
        notebook.markdown(lines[cursor:start])
        cursor = start
        if heading:
            if block.level == 2 and not prelude_done:  # after the lesson's opening
                prelude(notebook, doc, program, printing)
                prelude_done = True
            continue
        if not prelude_done:  # code before the first ## heading: the program must come first
            prelude(notebook, doc, program, printing)
            prelude_done = True
        cursor, piece = end, block.piece
        if block.kind == "chunk":
            if any(model.reference(code) for code in piece.lines):  # includes other chunks: not Python
                notebook.markdown([ROOT_NOTE["program"], *lines[start:end]])
            else:
                notebook.code("\n".join(piece.lines), "chunk", chunk=block.label, line=line)
        elif block.kind == "root":
            note = ROOT_NOTE["program" if block.label == program else "other"]
            notebook.markdown([note, "", *lines[start:end]])
        elif block.kind == "playground":  # the reader's, to change and run: not compared with anything
            cell = notebook.code("\n".join(piece.lines), "playground", program=piece.program, line=line)
            cell.metadata["tags"] = ["playground"]
        else:
            number = block.index + 1
            header = PART_HEADER.format(printing=printing, function=doc.declared.parts.function)
            notebook.code(header + "\n".join(printing_lines[number]), "transcript", outputs=[piece.content],
                          program=program, part=number, line=line)
    notebook.markdown(lines[cursor:])
    return v4.new_notebook(cells=notebook.cells, metadata={"kernelspec": KERNEL, "language_info": {"name": "python"},
                                                           "generator": GENERATOR})


def prelude(notebook: Notebook, doc: model.Document, program: str, printing: str) -> None:
    """The note on how to read the notebook (with what the lesson declares for it), and the program, folded."""
    md, declared, text = doc.path.name, doc.declared.parts, doc.declared.text or {}
    parts = PARTS_NOTE.format(printing=printing, function=declared.function, mark=declared.shown) if printing else ""
    notebook.add(v4.new_markdown_cell(NOTE.format(md=md, program=program, parts=parts, nbname=f"{doc.path.stem}.ipynb",
                                                  runs=text.get("notebook-runs", ""),
                                                  names=text.get("notebook-names", ""),
                                                  try_=text.get("notebook-try", ""))), "note")
    text, _ = expansion.render(doc, program)
    body = text.split("\n", 2)[2]  # without the file's banner and hash line: they speak to whoever edits the file
    cell = notebook.code(PRELUDE_HEADER.format(md=md, program=program) + without_main_block(body, program),
                         "prelude", program=program)
    cell.metadata["jupyter"] = {"source_hidden": True}
