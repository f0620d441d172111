"""What the notebook says in its own words, in the lesson's language (language.py): the note at its top (with the
lesson's declared words in it), the comments at the head of the cells it writes, and the lines above what it shows but
does not run. Everything taken from the lesson goes in escaped: names and paths as code spans, the declared words as
the prose is written."""

from __future__ import annotations

from dataclasses import dataclass

from .escaping import code_span, markdown_text


@dataclass(frozen=True)
class Words:
    """The notebook's words in one language."""

    note: str  # the first cell
    folded_cell: str  # what it says it goes with where the program's folded cell follows it
    runs_joiner: str  # between "Run All" and what the lesson says running it all takes
    runs_none: str  # after "Run All" where the lesson says nothing of it
    numpy_kernel: str  # what the note says of numpy where it names the kernel: only for a program that uses it
    numpy_elsewhere: str  # ... and of a JupyterLab installed elsewhere
    venv: dict[str, tuple[str, str]]  # the .venv make lab uses (named, then named again), by whether the lesson's
    # folder is the tools' ("here") or not ("tools")
    playgrounds: str  # ... of the playgrounds, where the lesson declares no words of its own for them
    why: dict[str, str]  # ... of how the cells run, by how the transcript is printed
    parts: dict[str, str]  # ... of how the transcript is printed
    tested: str  # ... of the test that runs the notebook, where the lesson's folder has it
    chunk_links: str  # ... of the links to chunks, where the lesson has some
    prelude_header: str  # the comment at the head of the program's cell
    whole_header: str  # ... of the whole program where its transcript stands
    main_header: str  # ... of the cell that runs the program's __main__ block
    part_header: str  # ... of a cell that prints one part of the transcript
    root_note: dict[str, str]  # above a block the notebook shows but does not run, by why ({program}: the root's,
    # {first}: the program the notebook runs, {command}: what checks the root's transcript)
    unprinted_note: str  # above a transcript it does not print
    folded_prints: str  # after the summary of a fold it opens, whose cells print
    folded_quiet: str  # ... whose cells print nothing
    link_dropped: str  # in place of a link's target that no notebook may keep
    image_linked: str  # an image it does not load: a link to it
    image_alone: str  # ... where it cannot link to it


# In Chinese
ZH_NOTE = """\
**这是讲义的笔记本版**（这一格{folded}是 `notebook.py` 加的，讲义里没有）

`make notebook` 从 {md} 生成了它：讲义的文字是 Markdown 格，讲义的每个代码块是一格代码，顺序就是讲义的阅读顺序。从上往下运行全部格子（Run All）即可{runs}

- **内核**：在讲义的文件夹里运行 `make lab`。第一次它把 JupyterLab 装进{venv}{numpy}，然后用{venv_again}的 Python 做内核打开这个笔记本。{elsewhere}
{why}{parts}- **邀请你改的格子**：每一格都可以改了再运行。{try_}
{links}- **改乱了**：你保存了的改动存在这个笔记本文件里，重启内核不会撤销它们（`make lab` 的 JupyterLab 不自动保存，你自己的 JupyterLab 两分钟自动保存一次）。要回到讲义的样子，删掉这个文件（{notebook}）再 `make notebook`，然后在 JupyterLab 里点 File → Reload Notebook from Disk：打开着的标签页还是你改过的样子，不重新载入，下次保存又会把它写回文件。讲义改了以后，`make notebook` 不会盖掉改动过的这个文件（运行过格子再保存也算改动），而是停下来说明怎么办：要留下改动，先另存一份（File → Save Notebook As…，存到 `build/` 以外：`make clean` 会删掉 `build/`），再删掉这个文件、重新 `make notebook`。"""

ZH_PLAYGROUNDS = "标着 playground 的格子是留给你试的。"

ZH_WHY = {
    "prelude": "- **为什么能从上往下运行**：{names}下面折叠着的那一格，就是 `make tangle` 从讲义拼出来的整个程序 {program}，只去掉了开头"
               "两行来源说明和最后运行 `main` 的那几行：先运行它，所有名字就都有了。之后每一格运行的是讲义在那里给出的代码块（和折叠格里"
               "的是同一段代码），所以你改了哪一格、重新运行它，之后的格子用的就是你改过的版本。讲义的代码一行都没有另外写过。\n",
    "whole": "- **怎样运行**：{names}每一格运行的是讲义在那里给出的代码块，讲义的代码一行都没有另外写过。讲义放实跑输出的地方是折叠着的"
             "一格：`make tangle` 从讲义拼出来的整个程序 {program}（只去掉了开头两行来源说明）。它没有 "
             "`if __name__ == \"__main__\":`，所以整个拼在一格里，在那里运行。\n",
}

ZH_PARTS = {
    "parts": "- **实跑输出**：讲义里放实跑输出的地方，这里是一格打印它的代码，摘自〈{printing}〉里的 {function}（从注释"
             "「{mark}」到下一段为止）；格子下面已经放着讲义核对过的那一段输出。在新的内核里从头运行，打印出来的和它逐字节相同"
             "{tested}。讲义里折叠着的几段，这里折叠的是输出。\n",
    "main": "- **实跑输出**：讲义里放实跑输出的地方，这里是一格运行整个程序的代码：{program} 最后 "
            "`if __name__ == \"__main__\":` 里的那几行。格子下面已经放着讲义核对过的实跑输出；在新的内核里从头运行，打印出来的"
            "和它逐字节相同。\n",
    "whole": "- **实跑输出**：运行讲义放实跑输出的那一格，打印出来的就是格子下面已经放着的、讲义核对过的实跑输出。\n",
    "unprinted": "- **实跑输出**：照讲义放在原处，是文字，笔记本不重新打印它：它分成了几段，讲义却没有声明哪几行打印哪一段"
                 "（讲义开头 `<!-- literate` 里的 `parts:`，见 `docs/tangle.md`）。\n",
}

ZH_PRELUDE_HEADER = """\
# 这一格是 make tangle 从 {md} 拼出来的整个程序 {program}（notebook.py 原样放进来），只去掉了文件开头
# 的两行来源说明和最后运行 main 的 `if __name__ == "__main__":` 那几行。先运行它，下面每一格用到的名字就都有了。
"""

ZH_WHOLE_HEADER = """\
# 这一格是 make tangle 从 {md} 拼出来的整个程序 {program}（notebook.py 原样放进来），只去掉了文件开头
# 的两行来源说明。运行它，打印出来的就是讲义在这里放的实跑输出。
"""

ZH_MAIN_HEADER = '# 这几行是 {program} 最后 `if __name__ == "__main__":` 里的：运行整个程序，打印讲义在这里放的实跑输出。\n'

ZH_PART_HEADER = "# 这几行摘自〈{printing}〉里的 {function}：\n"

ZH_ROOT_NOTE = {
    "program": "*（这一格只供阅读，不运行：`<<名字>>` 的地方拼进同名的代码块，Python 不认识这种写法。拼好的程序就是笔记本开头折叠着的那一格。）*",
    "whole": "*（这一格只供阅读，不运行：`<<名字>>` 的地方拼进同名的代码块，Python 不认识这种写法。拼好的程序折叠在讲义放实跑输出的那一格里。）*",
    "other": "*（这一格只供阅读，不运行：这是另一个程序 {program}，笔记本只运行 {first}。它的实跑输出照讲义放在各段代码的下面，{command} 重新运行并逐字节核对它。）*",
    "module": "*（这一格只供阅读，不运行：它写进 {program}，笔记本只运行 {first}。）*",
    "text": "*（这一格只供阅读，不运行：程序不在最外层运行这一块（它在字符串里，在函数或别的语句里面，或在别的文件里）；单独放进代码格运行，意思就变了，还可能做程序从不做的事。）*",
    "file": "*（这一格只供阅读，不运行：它写进的文件不是 Python 程序。）*",
}

ZH_UNPRINTED_NOTE = ("*（这一段实跑输出照讲义放在这里，笔记本不重新打印它：讲义没有声明哪几行打印哪一段（`<!-- literate` 里的 "
                  "`parts:`，见 `docs/tangle.md`）。）*")


ZH_CHUNK_LINKS = '- **块名链接**：点一下，跳到那一块，块名停在屏幕顶上。`make lab` 打开的 JupyterLab 已经设好，第一次点就准。在你自己的 JupyterLab 里打开这个文件的话，先在 Settings → Settings Editor → Notebook → Windowing mode 选 `none`：JupyterLab 4 默认只画出你看过的格子，往前跳到还没看过的地方，块名常常停在屏幕外面，刚打开时点了还可能没有反应。\n'


# In English
EN_NOTE = """\
**This is the lesson as a notebook** (`notebook.py` added this cell{folded}, which the lesson does not have)

`make notebook` made it from {md}: the lesson's text is in Markdown cells, each code block of the lesson is a code cell, in the lesson's reading order. Run all the cells from the top (Run All){runs}

- **Kernel**: run `make lab` in the lesson's folder. The first time, it installs JupyterLab into {venv}{numpy}, then opens this notebook with the Python of {venv_again} as its kernel. {elsewhere}
{why}{parts}- **Cells to change**: you may change any cell and run it again. {try_}
{links}- **Undoing changes**: the changes you saved are in this notebook file, and restarting the kernel does not undo them (the JupyterLab of `make lab` does not save by itself; your own JupyterLab saves every two minutes). To go back to the lesson as written, delete this file ({notebook}) and run `make notebook`, then click File → Reload Notebook from Disk in JupyterLab: until it is reloaded the open tab still shows your changes, and the next save would write them back. Once the lesson has changed, `make notebook` does not overwrite this file if you changed it (running cells and saving counts as a change): it stops and says what to do. To keep your changes, first save a copy (File → Save Notebook As…, outside `build/`: `make clean` deletes `build/`), then delete this file and run `make notebook` again."""
EN_PLAYGROUNDS = "The cells tagged playground are yours to try things in."
EN_WHY = {
    "prelude": "- **Why it runs from the top**: {names}The folded cell below is the whole program {program} that "
               "`make tangle` put together from the lesson, without its first two lines (where it came from) and the "
               "lines at its end that run `main`: run it first, and every name is defined. After it, each cell runs "
               "the code block the lesson gives at that place (the same code as in the folded cell), so when you "
               "change a cell and run it again, the cells after it use your version. Not one line of the lesson's "
               "code is written a second time.\n",
    "whole": "- **How it runs**: {names}Each cell runs the code block the lesson gives at that place; not one line of "
             "the lesson's code is written a second time. Where the lesson shows the output it ran stands a folded "
             "cell: the whole program {program} that `make tangle` put together from the lesson (without its first "
             "two lines, where it came from). It has no `if __name__ == \"__main__\":`, so it stands whole in that "
             "cell and runs there.\n",
}
EN_PARTS = {
    "parts": "- **Output**: where the lesson shows the output it ran stands a cell that prints it, taken from "
             "{function} in the chunk “{printing}” (from the comment “{mark}” to the next one); below the cell is "
             "the output the lesson checked. Run from the top in a fresh kernel, it prints exactly those bytes{tested}. "
             "Where the lesson folds parts, the notebook folds the outputs.\n",
    "main": "- **Output**: where the lesson shows the output it ran stands a cell that runs the whole program: the "
            "lines in the `if __name__ == \"__main__\":` at the end of {program}. Below it is the output the lesson "
            "checked; run from the top in a fresh kernel, it prints exactly those bytes.\n",
    "whole": "- **Output**: run the cell where the lesson shows the output it ran, and it prints what stands below "
             "it: the output the lesson checked.\n",
    "unprinted": "- **Output**: stands where the lesson shows it, as text; the notebook does not print it again: it "
                 "is in several parts, and the lesson does not declare which lines print which part (`parts:` in the "
                 "lesson's opening `<!-- literate`, see `docs/tangle.md`).\n",
}
EN_PRELUDE_HEADER = """\
# This cell is the whole program {program} that make tangle put together from {md} (notebook.py put it here as it
# is), without the file's first two lines (where it came from) and the `if __name__ == "__main__":` lines at its end
# that run main. Run it first, and every name the cells below use is defined.
"""
EN_WHOLE_HEADER = """\
# This cell is the whole program {program} that make tangle put together from {md} (notebook.py put it here as it
# is), without the file's first two lines (where it came from). Run it, and it prints the output the lesson shows here.
"""
EN_MAIN_HEADER = ('# These are the lines of `if __name__ == "__main__":` at the end of {program}: they run the whole '
                  'program and print the output the lesson shows here.\n')
EN_PART_HEADER = "# These lines are taken from {function} in the chunk “{printing}”:\n"
EN_ROOT_NOTE = {
    "program": "*(This cell is for reading, not running: where it says `<<name>>` goes the code block of that name, "
               "which Python does not understand. The program put together is the folded cell at the top of the "
               "notebook.)*",
    "whole": "*(This cell is for reading, not running: where it says `<<name>>` goes the code block of that name, "
             "which Python does not understand. The program put together is folded in the cell where the lesson "
             "shows its output.)*",
    "other": "*(This cell is for reading, not running: it is another program, {program}, and the notebook runs only "
             "{first}. Its output stands below its code blocks as the lesson shows it; {command} runs it again and "
             "compares it byte for byte.)*",
    "module": "*(This cell is for reading, not running: it goes into {program}, and the notebook runs only {first}.)*",
    "text": "*(This cell is for reading, not running: the program does not run this block at its top level (it is in "
            "a string, inside a function or another statement, or in another file); run alone in a code cell, it "
            "would mean something else, and might do what the program never does.)*",
    "file": "*(This cell is for reading, not running: the file it goes into is no Python program.)*",
}
EN_UNPRINTED_NOTE = ("*(This output stands here as the lesson shows it; the notebook does not print it again: the "
                     "lesson does not declare which lines print which part (`parts:` in `<!-- literate`, see "
                     "`docs/tangle.md`).)*")

EN_CHUNK_LINKS = "- **Chunk links**: click one to jump to that chunk, its name at the top of the screen. The JupyterLab that `make lab` opens is set up for them: the first click lands. To open this file in a JupyterLab of your own, first choose `none` in Settings → Settings Editor → Notebook → Windowing mode: by default JupyterLab 4 draws only the cells you have seen, so a jump ahead to a place not yet seen often leaves the chunk's name off the screen, and a click just after opening may do nothing.\n"

WORDS = {
    "zh": Words(note=ZH_NOTE, folded_cell="和下面折叠着的那一格", runs_joiner="；", runs_none="。",
                numpy_kernel="（讲义要的 numpy 也在那里）",
                numpy_elsewhere="别处装的 JupyterLab 用的是它自己的 Python，多半没有 numpy，第一格代码就会出错。",
                venv={"here": (" `.venv`", " `.venv` "), "tools": ("工具的 `.venv`（讲义的 `Makefile` 里 `TOOLS` 说的那个文件夹里）", "它")},
                playgrounds=ZH_PLAYGROUNDS, why=ZH_WHY, parts=ZH_PARTS, tested="（`tests/test_notebook.py` 就是这样核对的）",
                chunk_links=ZH_CHUNK_LINKS, prelude_header=ZH_PRELUDE_HEADER, whole_header=ZH_WHOLE_HEADER,
                main_header=ZH_MAIN_HEADER, part_header=ZH_PART_HEADER, root_note=ZH_ROOT_NOTE,
                unprinted_note=ZH_UNPRINTED_NOTE,
                folded_prints="（讲义里折叠着；这里折叠的是下面格子的输出，点一下就展开）", folded_quiet="（讲义里折叠着）",
                link_dropped="（链接去掉了：只链到页内、相对路径、http(s) 和 mailto）",
                image_linked="[图片：{alt}]({target})", image_alone="图片：{alt}"),
    "en": Words(note=EN_NOTE, folded_cell=" and the folded one below it", runs_joiner="; ", runs_none=".",
                numpy_kernel=" (with numpy, which the lesson needs)",
                numpy_elsewhere="A JupyterLab installed elsewhere uses its own Python, which most likely has no "
                                "numpy: the first code cell would fail.",
                venv={"here": ("`.venv`", "`.venv`"),
                      "tools": ("the tools' `.venv` (in the folder `TOOLS` names in the lesson's `Makefile`)", "that `.venv`")},
                playgrounds=EN_PLAYGROUNDS, why=EN_WHY, parts=EN_PARTS, tested=" (`tests/test_notebook.py` checks it so)",
                chunk_links=EN_CHUNK_LINKS, prelude_header=EN_PRELUDE_HEADER, whole_header=EN_WHOLE_HEADER,
                main_header=EN_MAIN_HEADER, part_header=EN_PART_HEADER, root_note=EN_ROOT_NOTE,
                unprinted_note=EN_UNPRINTED_NOTE,
                folded_prints=" (folded in the lesson; here the outputs of the cells below are folded: click to open "
                              "them)",
                folded_quiet=" (folded in the lesson)",
                link_dropped=" (link removed: a notebook keeps links within itself, relative paths, http(s) and "
                             "mailto)",
                image_linked="[image: {alt}]({target})", image_alone="image: {alt}"),
}


@dataclass(frozen=True)
class About:
    """What the note says of the lesson: its file, its program, the notebook's file, its declared words (as Markdown
    already), the lines that print each part (printing, function, mark), and whether its program imports numpy, it
    has playgrounds, its folder has the test that runs the notebook, it has links to chunks, it is in the tools'
    folder."""

    md: str
    program: str
    notebook: str
    texts: dict[str, str]
    printing: str = ""
    function: str = ""
    mark: str = ""
    numpy: bool = True
    playgrounds: bool = False
    tested: bool = False
    links: bool = False
    tools_here: bool = True  # the lesson is in the tools' folder, whose .venv is its own


def note(words: Words, how: str, about: About) -> str:
    """The first cell's words. how: prelude (the program first, folded; then parts, main or unprinted says how the
    transcript is printed) or whole (the program where its transcript stands)."""
    whole, texts = how == "whole", about.texts
    printed = words.parts["whole" if whole else how].format(printing=markdown_text(about.printing),
                                                            function=code_span(about.function),
                                                            mark=markdown_text(about.mark),
                                                            program=code_span(about.program),
                                                            tested=words.tested if about.tested else "")
    why = words.why["whole" if whole else "prelude"].format(names=texts.get("notebook-names", ""),
                                                            program=code_span(about.program))
    runs = texts.get("notebook-runs")
    return words.note.format(folded="" if whole else words.folded_cell, md=code_span(about.md),
                             runs=words.runs_joiner + runs if runs else words.runs_none, why=why,
                             numpy=words.numpy_kernel if about.numpy else "",
                             **dict(zip(("venv", "venv_again"), words.venv["here" if about.tools_here else "tools"])),
                             elsewhere=words.numpy_elsewhere if about.numpy else "", parts=printed,
                             try_=texts.get("notebook-try", words.playgrounds if about.playgrounds else ""),
                             links=words.chunk_links if about.links else "",
                             notebook=code_span(f"build/{about.notebook}"))
