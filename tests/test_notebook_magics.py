"""A chunk that IPython would not run as the Python it is never becomes a notebook cell. In a cell IPython reads
`%%bash` as a cell magic (the shell runs the rest), `%%html` as raw HTML, `!cmd` as a shell command; in the program
the same chunk may be harmless text inside a string, so `check` passes and only the notebook would run it. notebook.py
refuses such a chunk, naming its line; code that Python parses, `%` formatting and strings that hold `%%bash`
included, is left exactly as it is (the lesson's own notebook comes out byte for byte as before).

These tests need no kernel: only nbformat (requirements-notebook.txt), like notebook.py. Where IPython is installed
(make test installs it with ipykernel), they hold the rule to IPython's own reading of each cell."""

import textwrap
from pathlib import Path

import pytest

from conftest import modules_or_skip  # noqa: E402

modules_or_skip(("nbformat",), "test the notebook", "requirements-notebook.txt")

import literate.markdown  # noqa: E402
from literate.notebook import command as notebook  # noqa: E402
from literate.notebook.lesson import ipython_line  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# The attack (ATTACK.md, G9): the chunk is text in a string of the program, and a cell of its own in the notebook.
LESSON = '''\
# 课

开头，准确率是 0.75。

```python {file=generated/a.py}
HELP = """
<<usage>>
"""
print("value 0.75")
```

```python {#usage}
USAGE
```

```text {transcript=generated/a.py}
value 0.75
```
'''
USAGE_LINE = LESSON.split("\n").index("USAGE") + 1  # the chunk's first line in the lesson

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


def build(tmp_path, capsys, usage: str, playground: str | None = None):
    """Build the notebook of LESSON with usage as the chunk (and a playground of the program); (exit status,
    stderr, the notebook's path)."""
    text = LESSON.replace("USAGE", usage)
    if playground is not None:
        text += f"\n```python {{playground=generated/a.py}}\n{playground}\n```\n"
    (tmp_path / "lesson.md").write_text(text, encoding="utf-8")
    out = tmp_path / "nb.ipynb"
    capsys.readouterr()
    status = notebook.main([str(tmp_path / "lesson.md"), "-o", str(out)])
    return status, capsys.readouterr().err, out


@pytest.mark.parametrize("usage", REFUSED, ids=[usage.split("\n")[REFUSED[usage]] for usage in REFUSED])
def test_a_chunk_ipython_would_run_as_a_magic_or_in_the_shell_is_refused(tmp_path, capsys, usage):
    status, err, out = build(tmp_path, capsys, usage)
    line = USAGE_LINE + REFUSED[usage]
    assert status == 2 and not out.exists()
    assert err.startswith(f"{tmp_path / 'lesson.md'}:{line}: error: 〈usage〉 is not Python that parses"), err
    assert "magic, a shell command or a help request" in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_playground_ipython_would_run_in_the_shell_is_refused(tmp_path, capsys):
    status, err, out = build(tmp_path, capsys, "用法：a.py", playground='print("试试")\n!touch PWNED_BY_NOTEBOOK')
    line = (tmp_path / "lesson.md").read_text(encoding="utf-8").split("\n").index("!touch PWNED_BY_NOTEBOOK") + 1
    assert status == 2 and not out.exists()
    assert err.startswith(f"{tmp_path / 'lesson.md'}:{line}: error: the playground"), err


@pytest.mark.parametrize("usage", KEPT)
def test_python_and_plain_text_are_cells_as_written(tmp_path, capsys, usage):
    status, err, out = build(tmp_path, capsys, usage)
    assert status == 0, err
    cells = notebook.nbformat.read(out, as_version=4).cells
    assert [cell.source for cell in cells if cell.metadata["attention"].get("chunk") == "usage"] == [usage]


def ipython_changes(source: str) -> bool:
    """Whether IPython runs something other than these lines as written (it dedents a cell as Python would not)."""
    transformer = pytest.importorskip("IPython.core.inputtransformer2").TransformerManager()
    return transformer.transform_cell(source).rstrip("\n") != textwrap.dedent(source).rstrip("\n")


@pytest.mark.parametrize("source", [*REFUSED, *KEPT])
def test_the_rule_refuses_exactly_what_ipython_would_change(source):
    assert (ipython_line(source.split("\n")) is not None) == ipython_changes(source)


def test_the_lessons_code_cells_are_python_as_written():
    """The real lesson's chunks and playgrounds (some with `%` at the start of a line, continuing a formatting
    expression) are all kept, and IPython runs each as written."""
    built = notebook.build(literate.markdown.load(ROOT / "attention.md", "attention.md"))
    code = [cell.source for cell in built.cells if cell.cell_type == "code"]
    assert any(line.lstrip().startswith("%") for source in code for line in source.split("\n"))
    assert [source for source in code if ipython_changes(source)] == []
