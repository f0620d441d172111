"""Tests of notebook.py: the lesson as a Jupyter notebook. Its code cells are the lesson's code, in reading
order; run top to bottom in a fresh kernel (nbclient, ipykernel), the cells that stand where the transcript's
parts stand print exactly those parts, byte for byte, and the notebook is valid nbformat 4.

Without the notebook's packages (requirements-notebook.txt; make test installs them) these tests are skipped;
under CI (CI set) they fail instead, so that CI never passes without having run them.
"""

import ast
import os
import textwrap
from pathlib import Path

import pytest

from conftest import modules_or_skip  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
modules_or_skip(("nbformat", "nbclient", "ipykernel"), "run the notebook", "requirements-notebook.txt")

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

import literate.notebook.lesson  # noqa: E402
from literate.notebook import command as notebook  # noqa: E402  (notebook.py's main, and build)
import literate.expansion  # noqa: E402
import literate.markdown  # noqa: E402
import tangle  # noqa: E402

PROGRAM = "generated/attention.py"


def lesson():
    return literate.markdown.load(ROOT / "attention.md", "attention.md")


def role(cell):
    return cell.metadata["attention"]["role"]


def stdout(cell):
    return "".join(output.text for output in cell.get("outputs", [])
                   if output.output_type == "stream" and output.name == "stdout")


def execute(nb, folder):
    """Run every cell, top to bottom, in a fresh kernel (a cell that raises fails the test)."""
    NotebookClient(nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    return nb


@pytest.fixture(scope="module")
def doc():
    return lesson()


@pytest.fixture(scope="module")
def built(doc):
    return notebook.build(doc)


@pytest.fixture(scope="module")
def executed(built, tmp_path_factory):
    """The notebook run top to bottom in a fresh kernel, once for the tests below (about as long as the
    lesson's program run in one process: it trains the same four models, and the playgrounds' three)."""
    return execute(nbformat.from_dict(built), tmp_path_factory.mktemp("kernel"))


def test_the_notebook_is_valid_nbformat_4(built):
    nbformat.validate(built)
    assert built.nbformat == 4 and built.metadata.kernelspec.name == "python3"
    assert len({cell.id for cell in built.cells}) == len(built.cells)


def test_every_code_cell_is_the_lessons_code_in_reading_order(doc, built):
    """Nothing retyped: a chunk's cell holds exactly its fence's lines, every fence once, in the order of
    the lesson; the collapsed first code cell is the tangled program without its __main__ block; a cell
    that prints a part holds print_transcript()'s lines for it as they stand in the lesson. Besides: playgrounds."""
    code = [cell for cell in built.cells if cell.cell_type == "code"]
    assert {role(cell) for cell in code} == {"prelude", "chunk", "transcript", "playground"}
    prelude = code[0]
    assert role(prelude) == "prelude" and prelude.metadata.jupyter.source_hidden
    program, _ = literate.expansion.render(doc, PROGRAM)
    assert (ROOT / PROGRAM).read_text(encoding="utf-8") == program, "generated/ is out of date: make tangle"
    tail = program.rstrip("\n").split("\n")[-3:]
    assert tail[0] == 'if __name__ == "__main__":' and tail[-1].strip() == "main()"
    body = "\n".join(program.rstrip("\n").split("\n")[2:-3]).rstrip("\n")  # no banner, no hash line, no main()
    assert prelude.source.endswith("\n" + body) and prelude.source.count("\n") == body.count("\n") + 2
    assert "edit here and run make stitch" not in prelude.source and "sha256" not in prelude.source

    pieces = sorted((piece.fence_line, name, "\n".join(piece.lines))
                    for name, chunk in doc.chunks.items() for piece in chunk)
    cells = [(cell.metadata.attention.line, cell.metadata.attention.chunk, cell.source)
             for cell in code if role(cell) == "chunk"]
    assert cells == pieces

    name, _ = literate.notebook.lesson.part_blocks(doc, len(doc.transcripts[PROGRAM].pieces()))
    printing = "\n".join(doc.chunks[name][0].lines)
    function = doc.declared.parts.function
    marked = next(node for node in ast.parse(printing).body if getattr(node, "name", "") == function)
    main_lines = textwrap.dedent("\n".join(printing.split("\n")[marked.body[1].lineno - 2 : marked.end_lineno]))
    parts = [cell for cell in code if role(cell) == "transcript"]
    assert [cell.metadata.attention.part for cell in parts] == list(range(1, len(doc.transcripts[PROGRAM].pieces()) + 1))
    joined = "\n".join(cell.source.split("\n", 1)[1] for cell in parts)
    assert joined == main_lines, "the part cells are print_transcript()'s body, from # 第 1 段 to its end"
    assert all(cell.source.startswith(f"# 这几行摘自〈{name}〉里的 {function}：\n# 第 {cell.metadata.attention.part} 段")
               for cell in parts)
    assert function == "print_transcript"  # as attention.md declares it (parts: print_transcript # 第 N 段)


def test_every_internal_link_leads_to_the_top_of_a_cell_a_caption_starts(doc, built):
    """JupyterLab's sanitizer drops <a name> and ids that are not ASCII. Every link to a caption is #cell-id=ID:
    the cell with that id starts with the caption, its <a id> the same cell-id=ID (a click scrolls to that <a>
    once the cell is drawn, else JupyterLab finds the cell by its id); each caption of the lesson starts one."""
    import re
    text = "\n".join(cell.source for cell in built.cells if cell.cell_type == "markdown")
    links = re.findall(r"\]\(#([^)]*)\)", text)
    assert len(links) >= 50 and "<a name=" not in text
    assert all(re.fullmatch(r"cell-id=(chunk|file|output)-[0-9a-f]{12}", link) for link in links)
    starts = {cell.id: cell for cell in built.cells if role(cell) == "caption"}
    assert len(starts) == len(doc.captions)
    for cell_id, cell in starts.items():
        assert cell.cell_type == "markdown" and cell.source.startswith(f'<a id="cell-id={cell_id}"></a>**〈')
        assert cell.source.count("<a id=") == 1
    assert {link.removeprefix("cell-id=") for link in links} <= set(starts)
    assert len(re.findall(r"<a id=", text)) == len(starts)


def test_opening_the_notebook_in_jupyterlab_has_nothing_to_add(built, executed):
    """What JupyterLab writes when its kernel starts is written already, so that opening the notebook leaves it
    unmodified (tests/test_notebook_jupyterlab.py opens it): the kernel spec as ipykernel's own names it; the
    language as the kernel reports it, which nbclient records from the same kernel (the .venv's, as under make
    lab); collapsed beside each folded output."""
    from ipykernel.kernelspec import get_kernel_dict
    spec = get_kernel_dict()
    assert built.metadata.kernelspec == {"name": "python3", "display_name": spec["display_name"],
                                         "language": spec["language"]}
    assert executed.metadata.language_info == built.metadata.language_info
    assert built.metadata.language_info.version == executed.metadata.language_info.version != ""
    folded = [cell for cell in built.cells if cell.metadata.get("jupyter", {}).get("outputs_hidden")]
    assert folded and all(cell.metadata.get("collapsed") is True for cell in folded)
    assert all("collapsed" not in cell.metadata for cell in built.cells if cell not in folded)


def test_the_advice_is_true(built):
    """Edits live in the notebook file (a kernel restart keeps them), and make notebook rebuilds it when the
    lesson changes: the note says so, how to get the lesson's version back into an open JupyterLab tab too
    (tests/test_notebook_jupyterlab.py does it), which kernel to use, and the setting that makes every link land."""
    note = next(cell.source for cell in built.cells if role(cell) == "note")
    assert "重启内核不会撤销它们" in note and "make notebook" in note and "另存" in note
    assert "重启内核，从头全部运行" not in note
    assert "File → Reload Notebook from Disk" in note and "`make lab`" in note and "`.venv` 的 Python" in note
    assert "Windowing mode 选 `none`" in note


def test_each_part_stands_where_the_lesson_shows_it_with_the_checked_output(doc, built):
    transcript = doc.transcripts[PROGRAM]
    parts = [cell for cell in built.cells if cell.cell_type == "code" and role(cell) == "transcript"]
    assert [cell.metadata.attention.line for cell in parts] == [piece.fence_line for piece in transcript.pieces()]
    assert [stdout(cell) for cell in parts] == [piece.content for piece in transcript.pieces()]
    folded = [cell.metadata.attention.part for cell in parts if cell.metadata.get("jupyter", {}).get("outputs_hidden")]
    lines, depth, in_details = (ROOT / "attention.md").read_text(encoding="utf-8").split("\n"), 0, set()
    for number, line in enumerate(lines, 1):
        depth += line.startswith("<details") - line.startswith("</details")
        if depth:
            in_details.add(number)
    assert folded == [n for n, piece in enumerate(transcript.pieces(), 1) if piece.fence_line in in_details]
    lines = [cell.metadata.attention.line for cell in built.cells if "line" in cell.metadata.attention]
    assert lines == sorted(lines), "reading order"
    text = "\n".join(cell.source for cell in built.cells if cell.cell_type == "markdown")
    assert "$`" not in text and "```math" not in text and "$$\n" in text
    assert text.count("<details>") == text.count("</details>")  # the ones that fold prose (自测) stay


def test_each_figure_travels_in_a_cell_of_its_own_as_data(doc, built):
    """The notebook lies in build/, where figures/ beside the lesson is out of reach, and JupyterLab shows no SVG
    attachment: each figure is its drawing (the same SVG as the file) as a data: URL, in a Markdown cell of its own,
    so that the prose around it stays readable when a reader opens a cell to edit it."""
    import base64
    import literate.figures
    found = literate.figures.lesson_figures(doc)
    assert found
    cells = [cell for cell in built.cells if cell.cell_type == "markdown" and "data:image/svg+xml" in cell.source]
    assert len(cells) == len(found)
    for figure, cell in zip(found, cells):
        data = base64.b64encode(literate.figures.drawing(doc, figure).encode()).decode()
        assert f"![{figure.alt}](data:image/svg+xml;base64,{data})" in cell.source
        assert (ROOT / figure.path).read_text(encoding="utf-8").split("\n", 2)[2] == base64.b64decode(data).decode() + "\n"
        prose = cell.source.replace(data, "")
        assert len(prose) < 200, prose  # the figure, its link to its numbers, a fold's title: no paragraph of prose


def test_each_playground_is_a_fence_of_the_lesson_marked_for_the_reader(doc, built):
    """The readers' playgrounds are the lesson's {playground=...} fences, one at the end of each experiment, each a
    cell where it stands, its code exactly the fence's, tagged, under the lesson's words that say it is the
    reader's and not checked; the notebook writes no playground of its own."""
    cells = built.cells
    playgrounds = [cell for cell in cells if cell.cell_type == "code" and role(cell) == "playground"]
    assert [(cell.metadata.attention.line, cell.source) for cell in playgrounds] == \
        [(line, "\n".join(found.lines)) for line, found in sorted(doc.playgrounds.items())]
    assert len(playgrounds) == len([name for name in doc.chunks if name.startswith("实验")]) == 7
    for cell in playgrounds:
        words = cells[cells.index(cell) - 1]
        assert words.cell_type == "markdown" and "试验场" in words.source and "不核对" in words.source
        assert cell.metadata.tags == ["playground"] and not cell.outputs


def test_each_playground_uses_only_names_its_program_defines(doc):
    """Without a kernel: every name a playground reads is defined by the program it declares, by itself, or is
    a builtin (the notebook test below runs them all)."""
    import builtins

    def defined(path):
        """The names a program defines at its top level (through `from module import *` of a file beside it too)."""
        names = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.ImportFrom) and node.names[0].name == "*":
                names |= defined(path.parent / f"{node.module}.py")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.With)):
                names |= {name.id for name in ast.walk(node) if isinstance(name, ast.Name)
                          and isinstance(name.ctx, ast.Store)}
        return names
    assert doc.playgrounds
    for line, found in doc.playgrounds.items():
        names = defined(ROOT / found.program) | set(dir(builtins))
        code = ast.parse("\n".join(found.lines))
        stored = {name.id for name in ast.walk(code) if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store)}
        read = {name.id for name in ast.walk(code) if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load)}
        assert read <= names | stored, (f"attention.md:{line}", sorted(read - names - stored))


def test_the_notebook_runs_top_to_bottom_and_prints_the_transcript(doc, executed):
    """The heart of it: in a fresh kernel, the cells print the lesson's transcript, byte for byte. Each part
    cell prints its part; no other cell of the lesson prints anything; every playground runs."""
    transcript = doc.transcripts[PROGRAM]
    lesson_cells = [cell for cell in executed.cells if cell.cell_type == "code" and role(cell) != "playground"]
    assert "".join(stdout(cell) for cell in lesson_cells).encode() == transcript.content.encode()
    for cell in lesson_cells:
        expected = transcript.pieces()[cell.metadata.attention.part - 1].content if role(cell) == "transcript" else ""
        assert stdout(cell) == expected, cell.id
    for cell in executed.cells:
        assert all(output.output_type in ("stream", "execute_result", "display_data") for output in cell.get("outputs", []))
    playgrounds = [cell for cell in executed.cells if cell.cell_type == "code" and role(cell) == "playground"]
    assert all(stdout(cell) for cell in playgrounds)
    nbformat.validate(executed)


# ---------------------------------------------------------------- the tool, on small lessons

LESSON = """\
<!-- literate
parts: main # 第 N 段
-->

# 小讲义

开头，公式 $`x_1`$。

## 一

<a name="chunk-用"></a>**〈用〉**
```python {#用}
def use():
    return later() + 1
```

```math
y = x^2
```

<details>
<summary>折起来的</summary>

<a name="output-generated/p.py-1"></a>**〈generated/p.py〉的实跑输出（第 1 段）**
```text {transcript=generated/p.py part=1}
2
```

</details>

## 完整实现

<a name="file-generated/p.py"></a>**〈generated/p.py〉**，由这些代码块依次拼成：[〈用〉](#chunk-用)、[〈后面〉](#chunk-后面)
```python {file=generated/p.py}
<<用>>

<<后面>>


if __name__ == "__main__":
    main()
```

<a name="chunk-后面"></a>**〈后面〉**
```python {#后面}
def later():
    return 1


def main():
    \"\"\"两段。\"\"\"
    # 第 1 段
    print(use())
    # 第 2 段
    print("完")
```

<a name="output-generated/p.py-2"></a>**〈generated/p.py〉的实跑输出（第 2 段）**
```text {transcript=generated/p.py part=2}
完
```
"""


def write_lesson(tmp_path, text=LESSON):
    path = tmp_path / "lesson.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_make_notebook_writes_only_when_the_content_changes(tmp_path, capsys):
    path = write_lesson(tmp_path)
    out = tmp_path / "build" / "lesson.ipynb"
    assert notebook.main([str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out}: ")
    first = out.read_bytes()
    assert notebook.main([str(path), "-o", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"unchanged: {out}: ")
    assert out.read_bytes() == first


def test_a_small_lesson_runs_top_to_bottom_although_it_calls_later_code(tmp_path):
    nb = notebook.build(literate.markdown.load(write_lesson(tmp_path), "lesson.md"))
    nbformat.validate(nb)
    sources = [cell.source for cell in nb.cells]
    assert "开头，公式 $x_1$。" in sources[0] and any("$$\ny = x^2\n$$" in source for source in sources)
    assert any("\n**折起来的**（讲义里折叠着" in source for source in sources)
    assert not any("details>" in source for source in sources)
    parts = [cell for cell in nb.cells if cell.cell_type == "code" and role(cell) == "transcript"]
    assert [cell.source.split("\n")[1:] for cell in parts] == [["# 第 1 段", "print(use())"], ["# 第 2 段", 'print("完")']]
    assert parts[0].metadata.jupyter.outputs_hidden and "jupyter" not in parts[1].metadata
    run = execute(nb, tmp_path)
    assert [stdout(cell) for cell in run.cells if cell.cell_type == "code"] == ["", "", "2\n", "", "完\n"]


def test_each_caption_starts_a_cell_but_one_in_a_fold_of_prose(tmp_path):
    """Links lead to the cell a caption starts (its id from the anchor: the same every build). A caption inside
    a <details> that folds prose (here another program's transcript, which stays text) stays where it is: a cell
    of its own would tear the fold open."""
    other = """
<a name="file-generated/q.py"></a>**〈generated/q.py〉**
```python {file=generated/q.py}
print(3)
```

<details>
<summary>另一个程序的输出</summary>

前面的话。

<a name="output-generated/q.py"></a>**〈generated/q.py〉的实跑输出**
```text {transcript=generated/q.py}
3
```

</details>
"""
    nb = notebook.build(literate.markdown.load(write_lesson(tmp_path, LESSON + other), "lesson.md"))
    captions = [cell for cell in nb.cells if role(cell) == "caption"]
    assert [cell.source.split("**")[1] for cell in captions] == [
        "〈用〉", "〈generated/p.py〉的实跑输出（第 1 段）", "〈generated/p.py〉", "〈后面〉",
        "〈generated/p.py〉的实跑输出（第 2 段）", "〈generated/q.py〉"]
    assert [cell.id for cell in captions] == [cell.id for cell in notebook.build(
        literate.markdown.load(write_lesson(tmp_path, LESSON + other), "lesson.md")).cells if role(cell) == "caption"]
    folded = next(cell for cell in nb.cells if "前面的话" in cell.source)
    assert folded.source.startswith("<details>\n<summary>另一个程序的输出</summary>") and folded.source.endswith("</details>")
    assert '<a id="cell-id=output-' in folded.source and role(folded) == "prose"
    following = nb.cells[nb.cells.index(captions[0]) + 1]
    assert following.cell_type == "code" and following.source.startswith("def use():")


def test_a_details_shown_as_code_neither_folds_nor_loses_a_line(tmp_path):
    """A fold is the lesson's <details> block, not a line of text that looks like one: a fence that shows how to
    write a <details> keeps every line, and the transcript after it is not folded."""
    text = ("# 折叠\n\nHTML 里这样写一个折叠：\n\n```html\n<details>\n<summary>标题</summary>\n```\n\n"
            "```python {file=generated/p.py}\nprint('acc 0.93')\n```\n\n```text {transcript}\nacc 0.93\n```\n")
    nb = notebook.build(literate.markdown.load(write_lesson(tmp_path, text), "lesson.md"))
    assert any("```html\n<details>\n<summary>标题</summary>\n```" in cell.source for cell in nb.cells)
    [printing] = [cell for cell in nb.cells if role(cell) == "transcript"]
    assert "outputs_hidden" not in printing.metadata.get("jupyter", {})


FOLDED_OUTPUT = "```text {transcript}\nacc 0.93\n```"


@pytest.mark.parametrize("fold", [
    "<details>\n<summary>一</summary>\n\n甲\n\n</details>\n<details>\n<summary>二</summary>\n\n" + FOLDED_OUTPUT
    + "\n\n</details>\n",  # two folds, the second opened on the line after the first closes
    "> <details>\n> <summary>二</summary>\n>\n> " + FOLDED_OUTPUT.replace("\n", "\n> ") + "\n>\n> </details>\n",
    "<details><summary>二</summary>\n\n" + FOLDED_OUTPUT + "\n\n</details>\n",
    "- 一项\n\n  <details>\n  <summary>二</summary>\n\n  " + FOLDED_OUTPUT.replace("\n", "\n  ") + "\n\n  </details>\n",
], ids=["adjacent folds", "in a quote", "summary on the same line", "in a list item"])
def test_a_fold_that_a_code_cell_splits_becomes_its_summary_and_folds_the_output(tmp_path, fold):
    """The cell that prints the output stands inside the fold, so the fold cannot hold it: its summary stays, in
    bold, the cell's output is folded, and no cell is left with a <details> or </details> that pairs with nothing."""
    text = "# 课\n\n开头。\n\n```python {file=generated/p.py}\nprint('acc 0.93')\n```\n\n" + fold
    nb = notebook.build(literate.markdown.load(write_lesson(tmp_path, text), "lesson.md"))
    prose = [cell.source for cell in nb.cells if cell.cell_type == "markdown"]
    assert any("**二**（讲义里折叠着；这里折叠的是下面格子的输出" in source for source in prose)
    assert all(source.count("<details>") == source.count("</details>") for source in prose)
    [printing] = [cell for cell in nb.cells if role(cell) == "transcript"]
    assert printing.metadata.jupyter.outputs_hidden


def test_a_heading_in_a_fold_of_prose_leaves_the_fold_whole(tmp_path):
    text = ("# 课\n\n<details>\n<summary>细节</summary>\n\n### 小标题\n\n甲\n\n</details>\n\n"
            "```python {file=generated/p.py}\nprint('acc 0.93')\n```\n\n" + FOLDED_OUTPUT + "\n")
    nb = notebook.build(literate.markdown.load(write_lesson(tmp_path, text), "lesson.md"))
    [fold] = [cell.source for cell in nb.cells if "细节" in cell.source]
    assert "<details>\n<summary>细节</summary>\n\n### 小标题\n\n甲\n\n</details>" in fold


@pytest.mark.parametrize("mark, message", [
    ("", "marks 1 parts (`# 第 N 段`), but its transcript has 2"),
    ("    # 第 3 段\n", "expected `# 第 2 段` here (the parts of main() in order), found part 3"),
])
def test_main_must_mark_its_parts_in_order(tmp_path, capsys, mark, message):
    path = write_lesson(tmp_path, LESSON.replace("    # 第 2 段\n", mark))
    assert notebook.main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:") and message in err, err


def test_no_marked_main_is_an_input_error(tmp_path, capsys):
    path = write_lesson(tmp_path, LESSON.replace("# 第 1 段", "# 一").replace("# 第 2 段", "# 二"))
    assert notebook.main([str(path)]) == 2
    assert "needs one main() whose lines are marked `# 第 N 段` before the lines that print part N; found 0" in capsys.readouterr().err


def test_a_lesson_that_declares_no_parts_gets_no_cells_that_print_them(tmp_path):
    """Which lines print which part is the lesson's to declare (parts: FUNCTION MARK); undeclared, the notebook
    leaves the transcripts in the prose, as text."""
    nb = notebook.build(literate.markdown.load(write_lesson(tmp_path, LESSON.replace("parts: main # 第 N 段\n", "")),
                                               "lesson.md"))
    assert not [cell for cell in nb.cells if role(cell) == "transcript"]
    assert any("```text {transcript=generated/p.py part=2}" in cell.source for cell in nb.cells)


def test_minus_o_dash_writes_the_notebook_to_stdout_and_no_file_named_dash(tmp_path, capsys, monkeypatch):
    path = write_lesson(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert notebook.main([str(path), "-o", "-"]) == 0
    out, err = capsys.readouterr()
    assert not (tmp_path / "-").exists()
    nbformat.validate(nbformat.reads(out, as_version=4))
    assert err.startswith("wrote -: ") and "cells" in err  # the report, on stderr: stdout holds the notebook


def test_the_notebook_is_never_written_through_a_symlink(tmp_path, capsys):
    """notebook.py -o keeps weave.py's rule: a symlink, leading nowhere or to a notebook it wrote, is refused, and
    nothing is created or changed at either end."""
    path = write_lesson(tmp_path)
    out = tmp_path / "nb.ipynb"
    assert notebook.main([str(path), "-o", str(out)]) == 0
    before = out.read_bytes()
    (tmp_path / "dangling.ipynb").symlink_to(tmp_path / "elsewhere" / "new.ipynb")
    (tmp_path / "to-notebook.ipynb").symlink_to(out)
    path.write_text(LESSON.replace("开头，", "新的开头，"), encoding="utf-8")
    capsys.readouterr()
    for link in ("dangling.ipynb", "to-notebook.ipynb"):
        assert notebook.main([str(path), "-o", str(tmp_path / link)]) == 2
        err = capsys.readouterr().err
        assert f"{tmp_path / link}: error: is a symbolic link" in err and "Traceback" not in err, err
    assert not (tmp_path / "elsewhere").exists() and out.read_bytes() == before


def test_an_interrupt_while_the_notebook_is_written_says_it_was_written(tmp_path, capsys, monkeypatch):
    """SIGTERM while the notebook is written (held back until the file is whole, from the fsync of its temporary
    file, a slow disk's moment): the line says the notebook holds the new one, not that nothing changed."""
    import signal
    import threading
    path = write_lesson(tmp_path)
    out = tmp_path / "nb.ipynb"
    assert notebook.main([str(path), "-o", str(out)]) == 0
    path.write_text(LESSON.replace("开头，", "新的开头，"), encoding="utf-8")
    real = os.fsync

    def fsync(descriptor):
        # to the main thread, as a terminal's or a shell's signal reaches a one-threaded command: an other
        # thread left by an earlier test (which does not hold signals back) must not take it instead
        signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
        return real(descriptor)
    monkeypatch.setattr(os, "fsync", fsync)
    capsys.readouterr()
    assert notebook.main([str(path), "-o", str(out)]) == 128 + signal.SIGTERM
    err = capsys.readouterr().err
    assert "新的开头" in out.read_text() and "not changed" not in err
    assert err.strip().endswith(f"notebook.py: interrupted (SIGTERM); {out} holds the new notebook already"), err


def test_a_test_of_hundreds_of_terms_is_no_main_block_and_no_crash():
    """The main block is found by its shape in the syntax tree; a long top-level condition is read, not unparsed."""
    terms = " + ".join(["x"] * 400)                     # parses; unparsing it recursed past the limit
    program = f'x = 1\nif {terms} > 0:\n    print("many")\n\nif "__main__" == __name__:\n    print("run")\n'
    blocks = literate.notebook.lesson.main_blocks(program, "generated/p.py")
    assert [node.lineno for node in blocks] == [5]
    assert literate.notebook.lesson.main_block(program, "generated/p.py") == 'print("run")'
