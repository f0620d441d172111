"""The cells: the lesson's prose as Markdown cells, each chunk as a code cell, each part of the first program's
transcript as a cell that prints it (its part as the stored output), the program itself first, folded."""

from __future__ import annotations

import re

from .. import expansion, model
from ..startup import missing
from .lesson import first_program, part_blocks, without_main_block
from .text import jupyter_anchors, lesson_lines

try:
    import nbformat
    from nbformat import v4
except ImportError:  # run outside the project's .venv
    missing("notebook.py", "nbformat", "use make notebook (it installs requirements-notebook.txt into .venv), or "
            "pip install -r requirements-notebook.txt")

EXPERIMENT = re.compile(r"^实验([一二三四五六七八九十]+)")  # an experiment's chunk: 实验一：...
SUMMARY = re.compile(r"^\s*<summary>(.*)</summary>\s*$")
GENERATOR = "notebook.py"  # the notebook's metadata: marks the notebooks notebook.py wrote, the only files it overwrites
KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}

NOTE = """\
**这是讲义的笔记本版**（这一格和下面折叠着的那一格是 `notebook.py` 加的，讲义里没有）

`make notebook` 从 `{md}` 生成了它：讲义的文字是 Markdown 格，讲义的每个代码块是一格代码，顺序就是讲义的阅读顺序。从上往下运行全部格子（Run All）即可；它要训练讲义的四个模型和试验场的五个小模型，{timing}

- **为什么能从上往下运行**：主线的代码调用了「完整实现」里才讲的函数（`train`、`evaluate`、`mm`……）。下面折叠着的那一格，就是 `make tangle` 从讲义拼出来的整个程序 `{program}`，只去掉了开头两行来源说明和最后运行 `main` 的那几行：先运行它，所有名字就都有了。之后每一格运行的是讲义在那里给出的代码块（和折叠格里的是同一段代码），所以你改了哪一格、重新运行它，之后的格子用的就是你改过的版本。讲义的代码一行都没有另外写过。
- **实跑输出**：讲义里放实跑输出的地方，这里是一格打印它的代码，摘自〈{printing}〉里的 `main`（从注释「# 第 N 段」到下一段为止）；格子下面已经放着讲义核对过的那一段输出。在新的内核里从头运行，打印出来的和它逐字节相同（`tests/test_notebook.py` 就是这样核对的）。讲义里折叠着的几段，这里折叠的是输出。
- **邀请你改的格子**：每一格都可以改了再运行。最值得动的是〈{knobs}〉里的两组旋钮 `BOOK_SETTING`、`PICKING_SETTING`（查询的选法和学习率）：改完运行它，再运行打印第 3 段、第 5 段和第 7 段的那几格。改了以后，输出就和讲义的不一样了，那正是你改动的效果。「30 秒实验」的每个实验的最后，还有一格标着 **试验场**，几秒钟就跑完（一个种子、少一些轮数），旋钮是格子开头的变量。实验的完整结果（10 个种子、3000 轮，要几分钟）照讲义放在各实验的代码下面，笔记本不重新运行它们（`make experiments` 核对）。
- **改乱了**：你的改动存在这个笔记本文件里，重启内核不会撤销它们。要回到讲义的样子，删掉这个文件（`build/{nbname}`）再 `make notebook`；要留下你的改动，先另存一份（File → Save Notebook As…）：讲义改了以后，`make notebook` 会重新生成这个文件，盖掉这里的改动。"""

TIMING = ("内核用 CPU 约 33 秒。（2026-12-01 量的：那时这台双核机器被别的任务占着，负载约 11，实际等了 103 秒；"
          "空闲的机器上应该接近 CPU 时间，我们没有在空闲时量过。）打印第 2、3、5 段的格子要训练模型，各等一会儿。")

PRELUDE_HEADER = """\
# 这一格是 make tangle 从 {md} 拼出来的整个程序 {program}（notebook.py 原样放进来），只去掉了文件开头
# 的两行来源说明和最后运行 main 的 `if __name__ == "__main__":` 那几行。先运行它，下面每一格用到的名字就都有了。
"""

ROOT_NOTE = {
    "program": "*（这一格只供阅读，不运行：`<<名字>>` 的地方拼进同名的代码块，Python 不认识这种写法。拼好的程序就是笔记本开头折叠着的那一格。）*",
    "other": "*（这一格只供阅读，不运行：这个程序要跑好几分钟。它的实跑输出照讲义放在各段代码的下面，`make experiments` 重新运行并逐字节核对它。）*",
}

PART_HEADER = "# 这几行摘自〈{printing}〉里的 main：\n"

# The reader's playgrounds, one per experiment: (what it is, the cell). They use only what the lesson
# defines; they are run by the tests (so they work) but not compared with anything.
PLAYGROUND_NOTE = ("**试验场（{experiment}）**：下面这一格是读者的，不在讲义里，也不核对。{what}改一改开头的变量，再运行。"
                   "上面的完整结果是 `make experiments` 核对过的。")
PLAYGROUNDS = {
    "一": ("换几个维度，看三种缩放的分数方差、最大权重和梯度怎么变；查询少一些（实验一是 2000 个），几秒钟就完。",
          """\
dims = (3, 30, 300, 3000)      # 向量的维度 d；实验一只看 3 和 300
n = 200                        # 查询的个数
scaling_experiment(dims=dims, n=n)"""),
    "二": ("分数乘上 sharpness 再做 softmax：sharpness 越大，越接近「只保留最大的那个」，看权重和输出对分数的梯度怎么变。",
           """\
sharpness = (1, 3, 10, 30, 100)   # 分数放大几倍；实验二比的是 1 和「只保留最大的那个」
q, K, dots, scaled, weights, context, _ = hand_example()
for s in sharpness:
    w = softmax(scaled * s)
    grad = w[:, None] * (K - mm(w, K))          # 输出对第 i 个（放大后的）分数的梯度，和实验二同一个公式
    print("放大 %-4g 权重 %s   梯度最大 %.4f" % (s, " ".join("%.4f" % x for x in w), np.abs(grad).max()))
print("只保留最大的那个：权重 %s   梯度处处是 0" % " ".join("%.4f" % x for x in hard_max(scaled)))"""),
    "三": ("5 位任务上，一个种子、少一些轮数，三种做法各训练一次。",
           """\
seed = (0, 100)                # (初始权重的种子, 抽批次的种子)；实验三用 (s, 100 + s)，s = 0…9
rounds = 500                   # 实验三训练 2000 轮
for label, attention, uniform in (("不用注意力", False, False), ("用注意力", True, False), ("平均对照", True, True)):
    whole, per_token, _, _ = train_and_evaluate(5, rounds, attention, seed, uniform=uniform)
    print("%-6s 整串全对 %.4f，逐位正确 %.4f" % (label, whole, per_token))"""),
    "四": ("10 位任务的两个旋钮：查询的选法和学习率。一个种子、1000 轮（实验四每格 10 个种子、3000 轮）。",
           """\
query = "before"               # 查询："after" 更新后的状态，"before" 更新前的状态
lr = 0.02                      # 学习率；实验四试了 0.003、0.01、0.02
seed = 0                       # 实验四的种子是 0…9
rounds = 1000
run = attention_run(query, lr, (seed, 100 + seed), rounds=rounds, refit=False)
print_long_run(run)"""),
    "五": ("训练途中反对角线怎么变：在 checkpoints 这几轮各量一次（实验五量到 30000 轮）。",
           """\
query, lr, seed = "before", 0.02, 0
checkpoints = (100, 200, 400, 800)   # 在这几轮量；训练到最后一个为止
run = attention_run(query, lr, (seed, 100 + seed), rounds=max(checkpoints), checkpoints=checkpoints, refit=False)
for n in checkpoints:
    print("第 %d 轮：反对角线是均匀的 %.2f 倍" % (n, run["diagonal_at"][n]))"""),
    "六": ("训练之前（初始权重），第 1 行的峰值落在哪一列：换一个序列长度试试。不用训练，一眨眼就完。",
           """\
length = 10                    # 序列长度；试试 5 或 20
print_first_row_at_start(length)"""),
    "七": ("训练一个模型（一个种子、1000 轮），再把它的权重换成倒序要的、挪一列的、别的序列的、全是 1/10 的。",
           """\
query, lr, seed = "before", 0.02, 0   # 实验七换的是实验四的 60 个模型
rounds = 1000                         # 实验四训练 3000 轮
run = attention_run(query, lr, (seed, 100 + seed), rounds=rounds, refit=False)
print("%.4f  不换：模型自己算的" % run["per_token"])
for name, label in REPLACEMENTS:
    print("%.4f  %s" % (run["replaced"][name], label))"""),
}



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
    """The notebook of the lesson (see the module's docstring)."""
    program = first_program(doc)
    transcript = doc.transcripts[program]
    printing, blocks = part_blocks(doc, len(transcript.pieces()))
    lines = lesson_lines(doc)
    chunk_fences = {piece.fence_line: (name, piece) for name, pieces in doc.chunks.items() for piece in pieces}
    root_fences = {piece.fence_line: target for target, pieces in doc.roots.items() for piece in pieces}
    part_fences = {piece.fence_line: number for number, piece in enumerate(transcript.pieces(), 1)}
    knobs = next((name for name, pieces in doc.chunks.items()
                  if any("PICKING_SETTING =" in line for piece in pieces for line in piece.lines)), "…")

    notebook, cursor, prelude_done, pending = Notebook(), 0, False, []
    for token in doc.tokens:
        if token.type not in ("heading_open", "fence") or token.level != 0 and token.type == "heading_open":
            continue
        start, end = token.map
        line = start + 1
        if token.type == "fence" and line not in chunk_fences | root_fences | part_fences:
            continue  # an illustration, a formula or another program's transcript: stays in the prose
        notebook.markdown(lines[cursor:start])
        cursor = start
        if token.type == "heading_open":
            if int(token.tag[1]) <= 3:
                for experiment, chunk in pending:  # the end of an experiment's section
                    playground(notebook, experiment, chunk)
                pending = []
            if token.tag == "h2" and not prelude_done:  # after the lesson's opening
                prelude(notebook, doc, program, printing, knobs)
                prelude_done = True
            continue
        if not prelude_done:  # code before the first ## heading: the program must come first
            prelude(notebook, doc, program, printing, knobs)
            prelude_done = True
        cursor = end
        if line in chunk_fences:
            name, piece = chunk_fences[line]
            if any(model.reference(code) for code in piece.lines):  # includes other chunks: not Python
                notebook.markdown([ROOT_NOTE["program"], *lines[start:end]])
            else:
                notebook.code("\n".join(piece.lines), "chunk", chunk=name, line=line)
            match = EXPERIMENT.match(name)
            if match and match[1] in PLAYGROUNDS:
                pending.append((match[1], name))
        elif line in root_fences:
            note = ROOT_NOTE["program" if root_fences[line] == program else "other"]
            notebook.markdown([note, "", *lines[start:end]])
        else:
            number = part_fences[line]
            notebook.code(PART_HEADER.format(printing=printing) + "\n".join(blocks[number]), "transcript",
                          outputs=[transcript.pieces()[number - 1].content], program=program, part=number, line=line)
    notebook.markdown(lines[cursor:])
    for experiment, chunk in pending:
        playground(notebook, experiment, chunk)
    return v4.new_notebook(cells=notebook.cells, metadata={"kernelspec": KERNEL, "language_info": {"name": "python"},
                                                           "generator": GENERATOR})


def prelude(notebook: Notebook, doc: model.Document, program: str, printing: str, knobs: str) -> None:
    md = doc.path.name
    notebook.add(v4.new_markdown_cell(NOTE.format(md=md, program=program, printing=printing, knobs=knobs,
                                                  timing=TIMING, nbname=f"{doc.path.stem}.ipynb")), "note")
    text, _ = expansion.render(doc, program)
    body = text.split("\n", 2)[2]  # without the file's banner and hash line: they speak to whoever edits the file
    cell = notebook.code(PRELUDE_HEADER.format(md=md, program=program) + without_main_block(body, program),
                         "prelude", program=program)
    cell.metadata["jupyter"] = {"source_hidden": True}


def playground(notebook: Notebook, experiment: str, chunk: str) -> None:
    what, code = PLAYGROUNDS[experiment]
    notebook.add(v4.new_markdown_cell(PLAYGROUND_NOTE.format(experiment="实验" + experiment, what=what)),
                 "playground-note", chunk=chunk)
    cell = notebook.code(f"# 试验场（实验{experiment}）：读者的，随便改\n" + code, "playground", chunk=chunk)
    cell.metadata["tags"] = ["playground"]
