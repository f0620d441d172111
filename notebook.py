#!/usr/bin/env python3
"""Make a literate Markdown lesson a Jupyter notebook that runs top to bottom and prints, where the
lesson shows each part of its program's transcript, exactly that part.

usage: python notebook.py [MD] [-o OUT]     (MD: ./attention.md; OUT: build/<MD's name>.ipynb beside MD)

examples:
  python notebook.py                       # build/attention.ipynb from ./attention.md
  python notebook.py docs/lesson.md -o /tmp/lesson.ipynb
  make notebook                            # the first, inside .venv (installs requirements-notebook.txt)

The notebook (nbformat 4, written with the nbformat library) reads like the lesson, in its order. Like
weave.py, it takes the document as tangle.py parses it (chunks, roots, transcripts, tokens):
  - prose as Markdown cells, a new cell at each heading; each caption's <a name> becomes an ASCII <a id>,
    and each link to it is rewritten to match (JupyterLab keeps neither <a name> nor ids that are not ASCII). GitHub's $`...`$ and ```math fences become
    $...$ and $$...$$, which Jupyter renders; captions stay as they are. A <details> that folds a
    transcript becomes its summary in bold, and the output of the cell that prints it is folded;
  - each fence of a named chunk as a code cell holding exactly its lines; a root chunk (its
    <<references>> are not Python) as Markdown, to read;
  - after the lesson's opening, a note and one collapsed cell: the program whose transcript comes first
    (generated/attention.py), as tangle.py renders it, minus its banner (which speaks to whoever edits that
    file) and its `if __name__ == "__main__":` block.
    It defines every name, so the main line runs although it calls code the lesson shows later; the
    cells below run each chunk again where the lesson shows it, so an edited cell counts from then on;
  - where a part of that transcript stands, a code cell that prints exactly that part: the lines of
    the program's printing function from its comment `# 第 N 段` to the next one, as they are, with the part as
    the stored output (tests/test_notebook.py runs the notebook in a fresh kernel and compares).
    Other programs' transcripts (the experiments, minutes long) stay as text and are not rerun;
  - at the end of the section of each experiment (a chunk named 实验一, 实验二, ...), a playground
    cell marked as the reader's: a small run of seconds, its knobs as variables at the top.

Writes OUT only when its content changes, atomically, and only over a notebook it wrote itself: the lesson, a
file the lesson tangles, any other file, a directory or a pipe is refused, saying why (weave.py's rule, the
same code: literate/outputs.py). Errors in the input are reported as
`MD:LINE: error: ...` on stderr. Exit status: 0 ok, 2 bad input or usage.
"""

import os  # os and sys are loaded with the interpreter: nothing to interrupt here
import sys


def interrupted_while_starting(_signum=None, _frame=None):
    print("notebook.py: interrupted (SIGINT) while starting; the notebook was not changed", file=sys.stderr)
    os._exit(130)


try:  # Ctrl-C while the modules load: one line, not the traceback of an import
    import signal
    if __name__ == "__main__":
        signal.signal(signal.SIGINT, interrupted_while_starting)
except KeyboardInterrupt:  # before the handler was in place
    interrupted_while_starting()

import argparse  # noqa: E402
import ast  # noqa: E402
import hashlib  # noqa: E402
import html  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import textwrap  # noqa: E402
from pathlib import Path  # noqa: E402
from urllib.parse import unquote  # noqa: E402

from literate import console, expansion, markdown, model, outputs  # noqa: E402

try:
    import nbformat
    from nbformat import v4
except ImportError:  # run outside the project's .venv
    print("notebook.py: error: needs nbformat; use make notebook (it installs requirements-notebook.txt into "
          ".venv), or pip install -r requirements-notebook.txt", file=sys.stderr)
    raise SystemExit(2) from None

OK, BAD_INPUT = 0, 2
INLINE_MATH = re.compile(r"\$`([^`\n]+)`\$")  # GitHub's $`...`$
PART_MARK = re.compile(r"^\s*# 第 (\d+) 段")  # in it: the lines from here print part N
EXPERIMENT = re.compile(r"^实验([一二三四五六七八九十]+)")  # an experiment's chunk: 实验一：...
ALLOWED_TAG = re.compile(r'<a\s+name="(?:chunk|file|output)-[^"<>]*"\s*>|</a>|</?details>|</?summary>', re.I)
TAG_LIKE = re.compile(r"<(?=[A-Za-z/!?])")  # where a tag, comment or declaration would start
BACKTICKS = re.compile(r"`+")
LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(\s*(<[^>\n]*>|(?:[^()\s]|\([^()\s]*\))*)(?:\s+\"[^\"\n]*\")?\s*\)")  # [t](url)
CAPTION_LINK = re.compile(r"\]\(#((?:chunk|file|output)-[^)\s]*)\)")  # [text](#chunk-...) in prose
SUMMARY = re.compile(r"^\s*<summary>(.*)</summary>\s*$")
GENERATOR = "notebook.py"  # the notebook's metadata: marks the notebooks notebook.py wrote, the only files it overwrites
KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}

NOTE = """\
**这是讲义的笔记本版**（这一格和下面折叠着的那一格是 `notebook.py` 加的，讲义里没有）

`make notebook` 从 `{md}` 生成了它：讲义的文字是 Markdown 格，讲义的每个代码块是一格代码，顺序就是讲义的阅读顺序。从上往下运行全部格子（Run All）即可；它要训练讲义的四个模型和试验场的五个小模型，{timing}

- **为什么能从上往下运行**：主线的代码调用了「完整实现」里才讲的函数（`train`、`evaluate`、`mm`……）。下面折叠着的那一格，就是 `make tangle` 从讲义拼出来的整个程序 `{program}`，只去掉了开头两行来源说明和最后运行 `main` 的那几行：先运行它，所有名字就都有了。之后每一格运行的是讲义在那里给出的代码块（和折叠格里的是同一段代码），所以你改了哪一格、重新运行它，之后的格子用的就是你改过的版本。讲义的代码一行都没有另外写过。
- **实跑输出**：讲义里放实跑输出的地方，这里是一格打印它的代码，摘自〈{printing}〉里的 `{function}`（从注释「# 第 N 段」到下一段为止）；格子下面已经放着讲义核对过的那一段输出。在新的内核里从头运行，打印出来的和它逐字节相同（`tests/test_notebook.py` 就是这样核对的）。讲义里折叠着的几段，这里折叠的是输出。
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

PART_HEADER = "# 这几行摘自〈{printing}〉里的 {function}：\n"

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
example = hand_example()
K, scaled = example.K, example.scaled
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
run = attention_runs(query, lr, [(seed, 100 + seed)], rounds=rounds, refit=False)[0]
print_long_run(run)"""),
    "五": ("训练途中反对角线怎么变：在 checkpoints 这几轮各量一次（实验五量到 30000 轮）。",
           """\
query, lr, seed = "before", 0.02, 0
checkpoints = (100, 200, 400, 800)   # 在这几轮量；训练到最后一个为止
run = attention_runs(query, lr, [(seed, 100 + seed)], rounds=max(checkpoints), checkpoints=checkpoints, refit=False)[0]
for n in checkpoints:
    print("第 %d 轮：反对角线是均匀的 %.2f 倍" % (n, run.diagonal_at[n]))"""),
    "六": ("训练之前（初始权重），第 1 行的峰值落在哪一列：换一个序列长度试试。不用训练，一眨眼就完。",
           """\
length = 10                    # 序列长度；试试 5 或 20
print_first_row_at_start(length)"""),
    "七": ("训练一个模型（一个种子、1000 轮），再把它的权重换成倒序要的、挪一列的、别的序列的、全是 1/10 的。",
           """\
query, lr, seed = "before", 0.02, 0   # 实验七换的是实验四的 60 个模型
rounds = 1000                         # 实验四训练 3000 轮
run = attention_runs(query, lr, [(seed, 100 + seed)], rounds=rounds, refit=False)[0]
print("%.4f  不换：模型自己算的" % run.per_token)
for name, label in REPLACEMENTS:
    print("%.4f  %s" % (run.replaced[name], label))"""),
}


# ---------------------------------------------------------------- what the notebook takes from the lesson


def first_program(doc: model.Document) -> str:
    """The program the notebook runs: the root whose transcript (or its first part) comes first."""
    programs = [target for target in doc.transcripts if target in doc.roots and target.endswith(".py")]
    if not programs:
        raise model.UserError(f"{doc.shown}: error: no program with a transcript; nothing to run in a notebook")
    return min(programs, key=lambda target: doc.transcripts[target].pieces()[0].fence_line)


def without_main_block(text: str, shown: str) -> str:
    """The program's text without its `if __name__ == "__main__":` block (in a kernel, __name__ is
    "__main__" too, and main() would print the whole transcript in the first cell)."""
    lines = text.split("\n")
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise model.UserError(f"{shown}: error: the program does not parse: {error.msg} "
                               f"(line {error.lineno} of the tangled file)") from None
    except (MemoryError, RecursionError):  # what Python's parser raises for code nested thousands deep
        raise model.UserError(f"{shown}: error: the program is nested too deeply for Python's parser to read "
                               "(brackets or operators thousands deep); run make check to see where") from None
    blocks = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"')
              in ('__name__ == "__main__"', '"__main__" == __name__')]
    for node in reversed(blocks):
        del lines[node.lineno - 1 : node.end_lineno]
    return "\n".join(lines).rstrip("\n")


def part_blocks(doc: model.Document, parts: int) -> tuple[str, str, dict[int, list[str]]]:
    """The chunk with the one function that marks the parts (`# 第 N 段`), and N -> the lines that print part N
    (dedented, its comment first)."""
    found, too_deep = [], []
    for name, pieces in doc.chunks.items():
        for piece in pieces:
            try:
                tree = ast.parse("\n".join(piece.lines))
            except SyntaxError:  # a fragment of code (an indented block): no function there
                continue
            except (MemoryError, RecursionError):  # what Python's parser raises for code nested thousands deep
                too_deep.append(f"〈{name}〉 ({doc.where(piece.fence_line)})")
                continue
            for node in tree.body:
                if isinstance(node, ast.FunctionDef):
                    body = piece.lines[node.lineno : node.end_lineno]  # below the def line
                    marks = [i for i, line in enumerate(body) if PART_MARK.match(line)]
                    if marks:
                        found.append((name, piece, node, body, marks))
    if len(found) != 1:
        where = ", ".join(f"〈{name}〉 ({doc.where(piece.fence_line)})" for name, piece, *_ in found)
        raise model.UserError(f"{doc.shown}: error: the notebook needs one function whose lines are marked "
                               f"`# 第 N 段` before the lines that print part N; found {len(found)}"
                               + (f": {where}" if where else "")
                               + (f"; Python's parser cannot read {', '.join(too_deep)}: nested too deeply"
                                  if too_deep else ""))
    name, piece, node, body, marks = found[0]
    first_code = min(statement.lineno for statement in node.body if not is_docstring(statement)) - node.lineno - 1
    if first_code < marks[0]:
        raise model.UserError(f"{doc.where(piece.first_line + node.lineno + first_code)}: error: {node.name}() runs "
                               "code before its first `# 第 1 段`; the notebook would leave it out")
    blocks = {}
    for number, (start, end) in enumerate(zip(marks, marks[1:] + [len(body)]), 1):
        line = piece.first_line + node.lineno + start
        part = int(PART_MARK.match(body[start])[1])
        if part != number:
            raise model.UserError(f"{doc.where(line)}: error: expected `# 第 {number} 段` here (the parts of "
                                   f"{node.name}() in order), found part {part}")
        blocks[part] = textwrap.dedent("\n".join(body[start:end]).rstrip()).split("\n")
    if len(blocks) != parts:
        raise model.UserError(f"{doc.where(piece.fence_line)}: error: {node.name}() in 〈{name}〉 marks {len(blocks)} "
                               f"parts (`# 第 N 段`), but its transcript has {parts}")
    return name, node.name, blocks


def is_docstring(statement) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def lesson_lines(doc: model.Document) -> list[str]:
    """The Markdown's lines as tangle.py read them, with the formulas written the way Jupyter wants, and the
    prose held to the page's vocabulary (vocabulary): HTML comments dropped, other raw HTML shown as text."""
    lines = markdown.normalize_newlines(markdown.decode_markdown(doc.raw, doc.shown)[0]).split("\n")
    in_fence = set()
    for token in doc.tokens:
        if token.type == "code_block" and token.map:  # indented code: shown as written, like a fence
            in_fence.update(range(*token.map))
        elif token.type == "fence":
            start, end = token.map
            in_fence.update(range(start, end))
            if token.info.strip() == "math":  # ```math ... ``` -> $$ ... $$
                lines[start], lines[end - 1] = "$$", "$$"
        elif token.type == "html_block" and token.content.lstrip().startswith("<!--"):
            start, end = token.map
            lines[start:end] = [""] * (end - start)  # invisible on GitHub and on the page: not in the notebook
    return [line if number in in_fence else INLINE_MATH.sub(r"$\1$", vocabulary(line))
            for number, line in enumerate(lines)]


def vocabulary(line: str) -> str:
    """A line of prose built like the page's: outside code spans, HTML comments are dropped, a tag other than
    the captions' <a name>, <details> and <summary> is shown as text (its < escaped), a link goes only to
    #fragments, relative paths, http(s) and mailto, and an image becomes a link to it (never loaded)."""
    pieces, position = [], 0
    for start, end in [*code_spans(line), (len(line), len(line))]:
        outside = LINK.sub(safe_link, without_comments(line[position:start]))
        escaped, cursor = [], 0
        for match in TAG_LIKE.finditer(outside):
            escaped.append(outside[cursor : match.start()] + ("<" if ALLOWED_TAG.match(outside, match.start()) else "&lt;"))
            cursor = match.start() + 1
        pieces += ["".join(escaped), outside[cursor:], line[start:end]]
        position = end
    return "".join(pieces)


def code_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of the code spans of a line: a run of backticks and the next run of as many (CommonMark)."""
    runs = [(match.start(), match.end()) for match in BACKTICKS.finditer(line)]
    partner, latest = [None] * len(runs), {}
    for index in range(len(runs) - 1, -1, -1):
        partner[index] = latest.get(runs[index][1] - runs[index][0])
        latest[runs[index][1] - runs[index][0]] = index
    spans, index = [], 0
    while index < len(runs):
        if partner[index] is None:
            index += 1
            continue
        spans.append((runs[index][0], runs[partner[index]][1]))
        index = partner[index] + 1
    return spans


def without_comments(text: str) -> str:
    """The text without its <!-- ... --> comments (one pass; an unclosed one is left, escaped later)."""
    pieces, position = [], 0
    while True:
        start = text.find("<!--", position)
        end = text.find("-->", start + 4) if start >= 0 else -1
        if end < 0:
            return "".join(pieces) + text[position:]
        pieces.append(text[position:start])
        position = end + 3


def safe_link(match: re.Match) -> str:
    image, label, url = match[1], match[2], match[3]
    url = url[1:-1] if url.startswith("<") else url
    compact = re.sub(r"[\x00-\x20\x7f]", "", url).replace("\\", "/")
    scheme = compact.partition(":")[0].lower() if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", compact) else ""
    safe = scheme in ("http", "https", "mailto") or (not scheme and not compact.startswith("//"))
    if image:
        return f"[图片：{label}]({url})" if safe and url else f"图片：{label}"
    return match[0] if safe else f"{label}（链接去掉了：只链到页内、相对路径、http(s) 和 mailto）"


def jupyter_id(anchor: str) -> str:
    """The id a caption's anchor gets in the notebook: JupyterLab's sanitizer drops <a name> and every id that
    is not ASCII (chunk-训练_循环 would lead nowhere), so the kind, then a short hash of the anchor."""
    kind = anchor.partition("-")[0]
    return f"{kind}-{hashlib.sha256(anchor.encode()).hexdigest()[:12]}"


def jupyter_anchors(text: str) -> str:
    """Markdown with each caption's <a name="..."> as <a id="..."> and each link to one rewritten to match
    (jupyter_id), so that every link to a caption lands, in JupyterLab as on GitHub."""
    text = model.CAPTION_ANCHOR.sub(lambda match: f'<a id="{jupyter_id(html.unescape(match[1]))}">', text)
    return CAPTION_LINK.sub(lambda match: f"](#{jupyter_id(unquote(match[1]))})", text)


# ---------------------------------------------------------------- the cells


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
    printing, function, blocks = part_blocks(doc, len(transcript.pieces()))
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
                prelude(notebook, doc, program, printing, function, knobs)
                prelude_done = True
            continue
        if not prelude_done:  # code before the first ## heading: the program must come first
            prelude(notebook, doc, program, printing, function, knobs)
            prelude_done = True
        cursor = end
        if line in chunk_fences:
            name, piece = chunk_fences[line]
            if any(model.REFERENCE.match(code) for code in piece.lines):  # includes other chunks: not Python
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
            notebook.code(PART_HEADER.format(printing=printing, function=function) + "\n".join(blocks[number]), "transcript",
                          outputs=[transcript.pieces()[number - 1].content], program=program, part=number, line=line)
    notebook.markdown(lines[cursor:])
    for experiment, chunk in pending:
        playground(notebook, experiment, chunk)
    return v4.new_notebook(cells=notebook.cells, metadata={"kernelspec": KERNEL, "language_info": {"name": "python"},
                                                           "generator": GENERATOR})


def prelude(notebook: Notebook, doc: model.Document, program: str, printing: str, function: str, knobs: str) -> None:
    md = doc.path.name
    notebook.add(v4.new_markdown_cell(NOTE.format(md=md, program=program, printing=printing, function=function, knobs=knobs,
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


# ---------------------------------------------------------------- command line


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="notebook.py", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("md", nargs="?", type=Path, default=Path("attention.md"),
                     help="the Markdown lesson (default: ./attention.md)")
    top.add_argument("-o", "--output", type=Path, help="the notebook to write (default: build/<MD's name>.ipynb "
                     "beside MD). An existing file is replaced only if notebook.py wrote it")
    return top


def is_notebook(data: bytes) -> bool:
    """Whether a file's bytes are a notebook notebook.py wrote: its generator mark, or (from before the mark)
    the role notebook.py gives its cells."""
    try:
        found = json.loads(data)
    except (ValueError, RecursionError):
        return False
    if not isinstance(found, dict) or not isinstance(found.get("metadata"), dict):
        return False
    if found["metadata"].get("generator") == GENERATOR:
        return True
    cells = found.get("cells") if isinstance(found.get("cells"), list) else []
    return any(isinstance(cell, dict) and isinstance(cell.get("metadata"), dict)
               and isinstance(cell["metadata"].get("attention"), dict) and "role" in cell["metadata"]["attention"]
               for cell in cells)


def main(argv: list[str] | None = None) -> int:
    """Ctrl-C, a closed pipe and a console that cannot show Chinese end it with one line, never a traceback."""
    return console.guarded("notebook.py", lambda: run_command(argv), "the notebook was not changed")


def run_command(argv: list[str] | None) -> int:
    args = console.parsed(parser(), argv)
    if isinstance(args, int):  # --help (0) or a usage error (2)
        return args
    default = args.md.parent / "build" / f"{args.md.stem}.ipynb"
    output = args.output or default
    try:
        doc = markdown.load(args.md, str(args.md))
        notebook = build(doc)
        nbformat.validate(notebook)
        data = (nbformat.writes(notebook) + "\n").encode()
        changed = outputs.write_output(doc, output, data, "notebook.py", is_notebook, default)
    except model.UserError as error:
        print(*error.messages, sep="\n", file=sys.stderr)
        return error.code
    except RecursionError:
        print(f"{args.md}: error: nested too deeply to make a notebook of (lists or quotes inside each other, "
              "or code nested that deep)", file=sys.stderr)
        return BAD_INPUT
    except MemoryError:
        print("notebook.py: error: out of memory", file=sys.stderr)
        return BAD_INPUT
    roles = [cell.metadata["attention"]["role"] for cell in notebook.cells]
    print(f"{'wrote' if changed else 'unchanged:'} {output}: {len(roles)} cells, {roles.count('chunk')} code "
          f"chunks, {roles.count('transcript')} printing the transcript, {roles.count('playground')} playgrounds")
    return OK


if __name__ == "__main__":
    raise SystemExit(main())
