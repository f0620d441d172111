"""What the notebook says in its own words: the note at its top (with the lesson's declared words in it), the
comments at the head of the cells it writes, and the lines above what it shows but does not run. Everything taken
from the lesson goes in escaped: names and paths as code spans, the declared words as the prose is written."""

from __future__ import annotations

from .escaping import code_span, markdown_text

NOTE = """\
**这是讲义的笔记本版**（这一格{folded}是 `notebook.py` 加的，讲义里没有）

`make notebook` 从 {md} 生成了它：讲义的文字是 Markdown 格，讲义的每个代码块是一格代码，顺序就是讲义的阅读顺序。从上往下运行全部格子（Run All）即可；{runs}

- **内核**：在讲义的文件夹里运行 `make lab`。第一次它把 JupyterLab 装进 `.venv`{numpy}，然后用 `.venv` 的 Python 做内核打开这个笔记本。{elsewhere}
{why}{parts}- **邀请你改的格子**：每一格都可以改了再运行。{try_}
- **块名链接**：点一下，跳到那一块，块名停在屏幕顶上。`make lab` 打开的 JupyterLab 已经设好，第一次点就准。在你自己的 JupyterLab 里打开这个文件的话，先在 Settings → Settings Editor → Notebook → Windowing mode 选 `none`：JupyterLab 4 默认只画出你看过的格子，往前跳到还没看过的地方，块名常常停在屏幕外面，刚打开时点了还可能没有反应。
- **改乱了**：你保存了的改动存在这个笔记本文件里，重启内核不会撤销它们（`make lab` 的 JupyterLab 不自动保存，你自己的 JupyterLab 两分钟自动保存一次）。要回到讲义的样子，删掉这个文件（{notebook}）再 `make notebook`，然后在 JupyterLab 里点 File → Reload Notebook from Disk：打开着的标签页还是你改过的样子，不重新载入，下次保存又会把它写回文件。讲义改了以后，`make notebook` 不会盖掉改动过的这个文件（运行过格子再保存也算改动），而是停下来说明怎么办：要留下改动，先另存一份（File → Save Notebook As…，存到 `build/` 以外：`make clean` 会删掉 `build/`），再删掉这个文件、重新 `make notebook`。"""

# what the note says of numpy: only for a lesson whose program uses it
NUMPY = ("（讲义要的 numpy 也在那里）", "别处装的 JupyterLab 用的是它自己的 Python，多半没有 numpy，第一格代码就会出错。")
PLAYGROUNDS = "标着 playground 的格子是留给你试的。"  # where the lesson declares no words of its own for this


WHY = {
    "prelude": "- **为什么能从上往下运行**：{names}下面折叠着的那一格，就是 `make tangle` 从讲义拼出来的整个程序 {program}，只去掉了开头"
               "两行来源说明和最后运行 `main` 的那几行：先运行它，所有名字就都有了。之后每一格运行的是讲义在那里给出的代码块（和折叠格里"
               "的是同一段代码），所以你改了哪一格、重新运行它，之后的格子用的就是你改过的版本。讲义的代码一行都没有另外写过。\n",
    "whole": "- **怎样运行**：{names}每一格运行的是讲义在那里给出的代码块，讲义的代码一行都没有另外写过。讲义放实跑输出的地方是折叠着的"
             "一格：`make tangle` 从讲义拼出来的整个程序 {program}（只去掉了开头两行来源说明）。它没有 "
             "`if __name__ == \"__main__\":`，所以整个拼在一格里，在那里运行。\n",
}

PARTS = {
    "parts": "- **实跑输出**：讲义里放实跑输出的地方，这里是一格打印它的代码，摘自〈{printing}〉里的 {function}（从注释"
             "「{mark}」到下一段为止）；格子下面已经放着讲义核对过的那一段输出。在新的内核里从头运行，打印出来的和它逐字节相同"
             "（`tests/test_notebook.py` 就是这样核对的）。讲义里折叠着的几段，这里折叠的是输出。\n",
    "main": "- **实跑输出**：讲义里放实跑输出的地方，这里是一格运行整个程序的代码：{program} 最后 "
            "`if __name__ == \"__main__\":` 里的那几行。格子下面已经放着讲义核对过的实跑输出；在新的内核里从头运行，打印出来的"
            "和它逐字节相同。\n",
    "whole": "- **实跑输出**：运行讲义放实跑输出的那一格，打印出来的就是格子下面已经放着的、讲义核对过的实跑输出。\n",
    "unprinted": "- **实跑输出**：照讲义放在原处，是文字，笔记本不重新打印它：它分成了几段，讲义却没有声明哪几行打印哪一段"
                 "（讲义开头 `<!-- literate` 里的 `parts:`，见 `docs/tangle.md`）。\n",
}

PRELUDE_HEADER = """\
# 这一格是 make tangle 从 {md} 拼出来的整个程序 {program}（notebook.py 原样放进来），只去掉了文件开头
# 的两行来源说明和最后运行 main 的 `if __name__ == "__main__":` 那几行。先运行它，下面每一格用到的名字就都有了。
"""

WHOLE_HEADER = """\
# 这一格是 make tangle 从 {md} 拼出来的整个程序 {program}（notebook.py 原样放进来），只去掉了文件开头
# 的两行来源说明。运行它，打印出来的就是讲义在这里放的实跑输出。
"""

MAIN_HEADER = '# 这几行是 {program} 最后 `if __name__ == "__main__":` 里的：运行整个程序，打印讲义在这里放的实跑输出。\n'

PART_HEADER = "# 这几行摘自〈{printing}〉里的 {function}：\n"

ROOT_NOTE = {
    "program": "*（这一格只供阅读，不运行：`<<名字>>` 的地方拼进同名的代码块，Python 不认识这种写法。拼好的程序就是笔记本开头折叠着的那一格。）*",
    "whole": "*（这一格只供阅读，不运行：`<<名字>>` 的地方拼进同名的代码块，Python 不认识这种写法。拼好的程序折叠在讲义放实跑输出的那一格里。）*",
    "other": "*（这一格只供阅读，不运行：这个程序要跑好几分钟。它的实跑输出照讲义放在各段代码的下面，`make experiments` 重新运行并逐字节核对它。）*",
    "text": "*（这一格只供阅读，不运行：程序不在最外层运行这一块（它在字符串里，在函数或别的语句里面，或在别的文件里）；单独放进代码格运行，意思就变了，还可能做程序从不做的事。）*",
    "file": "*（这一格只供阅读，不运行：它写进的文件不是 Python 程序。）*",
}

UNPRINTED_NOTE = ("*（这一段实跑输出照讲义放在这里，笔记本不重新打印它：讲义没有声明哪几行打印哪一段（`<!-- literate` 里的 "
                  "`parts:`，见 `docs/tangle.md`）。）*")


def note(how: str, md: str, program: str, notebook: str, texts: dict[str, str], printing: str = "",
         function: str = "", mark: str = "", numpy: bool = True, playgrounds: bool = False) -> str:
    """The first cell's words. how: prelude (the program first, folded; then parts, main or unprinted says how the
    transcript is printed) or whole (the program where its transcript stands). texts: the lesson's declared words,
    as Markdown already. numpy: the program imports it; playgrounds: the lesson has some."""
    names = texts.get("notebook-names", "")
    printed = PARTS["whole" if how == "whole" else how].format(printing=markdown_text(printing),
                                                              function=code_span(function), mark=markdown_text(mark),
                                                              program=code_span(program))
    return NOTE.format(folded="" if how == "whole" else "和下面折叠着的那一格", md=code_span(md),
                       runs=texts.get("notebook-runs", ""),
                       why=WHY["whole" if how == "whole" else "prelude"].format(names=names, program=code_span(program)),
                       numpy=NUMPY[0] if numpy else "", elsewhere=NUMPY[1] if numpy else "",
                       parts=printed, try_=texts.get("notebook-try", PLAYGROUNDS if playgrounds else ""), notebook=code_span(f"build/{notebook}"))
