"""Only code the program runs becomes a notebook cell, and only as the Python it is.

- A chunk that is no top-level statement of the program (text inside a string: a template, a usage message; the body
  of a function, which may never be called; the end of a statement) or that goes only into a file that is no Python
  never runs alone there, so it never runs alone in the notebook either: it is shown, under a note saying why,
  whatever it holds (IPython's `%%bash`, or Python that would do harm).
- A chunk the program runs as code that IPython would not run as the Python it is is refused, naming its line. In a
  cell IPython reads `%%bash` as a cell magic (the shell runs the rest), `%%html` as raw HTML, `!cmd` as a shell
  command. Code that Python parses, `%` formatting and strings that hold `%%bash` included, is left exactly as it is
  (the lesson's own notebook comes out byte for byte as before).

These tests need no kernel: only nbformat (requirements-notebook.txt), like notebook.py. Where IPython is installed
(make test installs it with ipykernel), they hold the rule to IPython's own reading of each cell."""

import textwrap
from pathlib import Path

import pytest

from conftest import modules_or_skip  # noqa: E402

modules_or_skip(("nbformat",), "test the notebook", "requirements-notebook.txt")

import literate.markdown  # noqa: E402
import tangle  # noqa: E402
from literate.notebook import command as notebook  # noqa: E402
from literate.ipython import LINE_MAGICS, ipython_line, parses  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# How the program holds the chunk 〈usage〉: as text in a string, in a file that is no Python, inside a statement (the
# end of one, a function's body), or as top-level code (statements, or the start of one the program ends).
IN_A_STRING = 'HELP = """\n<<usage>>\n"""\nprint("value 0.75")'
AS_CODE = '<<usage>>\nprint("value 0.75")'
ENDING_A_STATEMENT = 'print("value %.2f"\n<<usage>>'
STARTING_A_STATEMENT = '<<usage>>\n)\nprint("value 0.75")'
IN_A_FUNCTION = 'def cleanup():\n    <<usage>>\n\n\nprint("value 0.75")'
LESSON = '''\
# 课

开头，准确率是 0.75。

```python {file=generated/a.py}
PROGRAM
```

```python {#usage}
USAGE
```

```text {transcript=generated/a.py}
value 0.75
```
'''
IN_ANOTHER_FILE = "\n```sh {file=generated/usage.sh}\n<<usage>>\n```\n"
# the end of the print statement, as IPython reads it: a line magic named ''
CONTINUATION = "      % 0.75)"

# chunk -> the index of the line IPython would run as its own syntax
REFUSED = {
    "%%bash\ntouch PWNED_BY_NOTEBOOK": 0,
    "%%html\n<img src=x onerror=alert(1)>": 0,
    "用法：\n!touch PWNED_BY_NOTEBOOK": 1,
    "用法：\n  !!touch PWNED_BY_NOTEBOOK": 1,
    "files = !ls": 0,
    "用法：\nx = %who": 1,
    "%time 1": 0,
    "len?": 0,
    "?len": 0,
    ";__import__('os').system touch PWNED_BY_NOTEBOOK": 0,
}

# Python that parses (a % operator, a string holding magic-looking lines) or text without IPython's syntax
KEPT = [
    'x = 0.75\nprint("%.4f" % x)',
    'x = 0.75\nprint("value %s"\n      % x)',
    "HELP = '''\n%%bash\n!touch PWNED_BY_NOTEBOOK\n'''",
    'print(1 != 2, f"{0.75!r}")',
    "for i in range(2):\n    print(i % 2)",
    "用法：a.py [选项]",
    "100% 完成",
]


def build(tmp_path, capsys, usage: str, playground: str | None = None, program: str = AS_CODE, other: str = "",
          language: bool = False):
    """Build the notebook of LESSON with usage as the chunk, program as the program (and a playground of it); (exit
    status, stderr, the notebook's path, the chunk's first line in the lesson). language: the chunk is shell."""
    text = LESSON.replace("PROGRAM", program).replace("USAGE", usage) + other
    if language:
        text = text.replace("```python {#usage}", "```sh {#usage}")
    if playground is not None:
        text += f"\n```python {{playground=generated/a.py}}\n{playground}\n```\n"
    (tmp_path / "lesson.md").write_text(text, encoding="utf-8")
    out = tmp_path / "nb.ipynb"
    capsys.readouterr()
    status = notebook.main([str(tmp_path / "lesson.md"), "-o", str(out)])
    return status, capsys.readouterr().err, out, text.split("\n").index(usage.split("\n")[0]) + 1


# Python that does harm when run: the program holds it as text, so a cell must not run it either.
HARMFUL = ["import os\nos.system('touch PWNED_BY_NOTEBOOK')", "__import__('shutil').rmtree('.')"]


@pytest.mark.parametrize("holder", ["string", "other file"])
@pytest.mark.parametrize("usage", [*REFUSED, *KEPT, *HARMFUL])
def test_a_chunk_the_program_never_runs_is_shown_not_run(tmp_path, capsys, usage, holder):
    program, other = (IN_A_STRING, "") if holder == "string" else ('print("value 0.75")', IN_ANOTHER_FILE)
    status, err, out, _ = build(tmp_path, capsys, usage, program=program, other=other, language=holder != "string")
    assert status == 0, err
    cells = notebook.nbformat.read(out, as_version=4).cells
    assert not [cell for cell in cells if cell.metadata["attention"].get("chunk") == "usage"]
    shown = [cell.source for cell in cells if cell.cell_type == "markdown" and "{#usage}" in cell.source]
    assert len(shown) == 1 and "只供阅读，不运行" in shown[0] and "字符串" in shown[0], shown


def test_a_chunk_that_ends_a_statement_or_is_a_functions_body_is_shown_not_run(tmp_path, capsys):
    """Python reads these chunks inside a statement; alone in a cell one would run a magic, the other would run at
    once what the program runs only when (if ever) it calls the function."""
    for program, usage in ((ENDING_A_STATEMENT, CONTINUATION), (IN_A_FUNCTION, HARMFUL[0])):
        status, err, out, _ = build(tmp_path, capsys, usage, program=program)
        assert status == 0, err
        cells = notebook.nbformat.read(out, as_version=4).cells
        assert not [cell for cell in cells if cell.metadata["attention"].get("chunk") == "usage"]
        assert [cell for cell in cells if cell.cell_type == "markdown" and "{#usage}" in cell.source
                and "在函数或别的语句里面" in cell.source]


def test_code_ipython_would_run_as_a_magic_is_refused(tmp_path, capsys):
    """The chunk begins a statement the program ends: it runs at the top level, and its second line, alone in a
    cell, IPython would run as a magic."""
    status, err, out, first = build(tmp_path, capsys, 'print("%.2f"\n      % 0.75', program=STARTING_A_STATEMENT)
    assert status == 2 and not out.exists()
    assert err.startswith(f"{tmp_path / 'lesson.md'}:{first + 1}: error: 〈usage〉 is not Python that parses"), err
    assert "magic, a shell command or a help request" in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("playground", ['print("试试")\n!touch PWNED_BY_NOTEBOOK', "%%bash\ntouch PWNED_BY_NOTEBOOK",
                                        "len?"])
def test_a_playground_ipython_would_run_otherwise_is_refused_by_every_tool(tmp_path, capsys, playground):
    """The playground is a cell in the notebook: check refuses it as the notebook does, before running anything."""
    status, err, out, _ = build(tmp_path, capsys, "x = 1", playground=playground)
    md = tmp_path / "lesson.md"
    misread = playground.split("\n")[ipython_line(playground.split("\n"))]
    line = md.read_text(encoding="utf-8").split("\n").index(misread) + 1
    assert status == 2 and not out.exists()
    assert err.startswith(f"{md}:{line}: error: the playground of generated/a.py is not Python"), err
    assert tangle.main(["check", str(md)]) == 2
    assert capsys.readouterr().err.startswith(f"{md}:{line}: error: the playground"), err
    assert not (tmp_path / "PWNED_BY_NOTEBOOK").exists()


@pytest.mark.parametrize("usage", [usage for usage in KEPT if parses(usage)])
def test_python_is_a_cell_as_written(tmp_path, capsys, usage):
    status, err, out, _ = build(tmp_path, capsys, usage)
    assert status == 0, err
    cells = notebook.nbformat.read(out, as_version=4).cells
    assert [cell.source for cell in cells if cell.metadata["attention"].get("chunk") == "usage"] == [usage]


def ipython_changes(source: str) -> bool:
    """Whether IPython runs something other than these lines as written (it dedents a cell as Python would not, and
    reads a cell of one line once more: its prefilter, for magics called without %)."""
    shell = pytest.importorskip("IPython.core.interactiveshell").InteractiveShell.instance()
    return shell.transform_cell(source).rstrip("\n") != textwrap.dedent(source).strip("\n")


# One line alone in a cell: IPython calls a line magic or exit; or not (an assignment, a call of exit, an attribute).
ONE_LINE = ["ls", "ls  # list", "  ls", "\nls", "env", "cd /tmp", "cd ..", "ls -l", "ls;", "ls(3)", "ls[0]", "ls += 3", "time 1",
            "history", "who_ls", "exit", "quit  # bye", "exit == 1", "exit = 1",
            "ls = 3", "ls == 3", "ls, x = 1, 2", "ls.x", "exit(0)", "exit.x", "x", "print(1)", "x = 1\nls", "ls\n\n"]


@pytest.mark.parametrize("source", [*REFUSED, *KEPT, CONTINUATION, *ONE_LINE])
def test_the_rule_refuses_exactly_what_ipython_would_change(source):
    assert (ipython_line(source.split("\n")) is not None) == ipython_changes(source)


def test_the_lessons_code_cells_are_python_as_written():
    """The real lesson's chunks and playgrounds (some with `%` at the start of a line, continuing a formatting
    expression) are all kept, and IPython runs each as written."""
    built = notebook.build(literate.markdown.load(ROOT / "attention.md", "attention.md"))
    code = [cell.source for cell in built.cells if cell.cell_type == "code"]
    assert any(line.lstrip().startswith("%") for source in code for line in source.split("\n"))
    assert [source for source in code if ipython_changes(source)] == []


def test_the_list_of_line_magics_is_ipythons():
    shell = pytest.importorskip("IPython.core.interactiveshell").InteractiveShell.instance()
    assert set(shell.magics_manager.lsmagic()["line"]) <= LINE_MAGICS


@pytest.mark.parametrize("playground", ["ls", "exit", "cd ..", "history"])
def test_a_playground_of_one_line_that_calls_a_magic_is_refused_by_every_tool(tmp_path, capsys, playground):
    status, err, out, _ = build(tmp_path, capsys, "x = 1", playground=playground)
    assert status == 2 and "error: the playground of generated/a.py" in err and not out.exists(), err
    assert tangle.main(["check", str(tmp_path / "lesson.md")]) == 2
