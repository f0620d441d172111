"""check reads each playground against its program: a name that neither defines (a typo, a function the lesson
renamed) is an error at its line, as the notebook's kernel would stop there with a NameError."""

import pytest

from conftest import run, small_lesson, write


def playground(code: str) -> str:
    return f"试一试：\n\n```python {{playground=generated/a.py}}\n{code}```"


def test_a_name_nothing_defines_is_an_error_at_its_line(tmp_path, capsys):
    md = write(tmp_path, small_lesson(playground("total = 1\nprint(totl + 1)\n")))
    assert run(capsys, "tangle", md)[0] == 0
    code, out, err = run(capsys, "check", md)
    line = md.read_text().split("\n").index("print(totl + 1)") + 1
    assert code == 1 and f"attention.md:{line}: error: the playground reads totl" in err
    assert "did you mean total?" in err and "1 undefined in a playground" in out


@pytest.mark.parametrize("code", [
    "def twice(x):\n    return [y * 2 for y in range(x)]\n\n\nprint(twice(3), (lambda z: z)(1))\n",
    "try:\n    import math\nexcept ImportError as error:\n    print(error)\nprint(math.pi, len('ab'))\n",
    "print(shared)\n",  # the program's own name
])
def test_names_the_playground_or_its_program_defines_pass(tmp_path, capsys, code):
    lesson = small_lesson(playground(code)).replace("<<body>>\n", "<<body>>\nshared = 2\n")
    md = write(tmp_path, lesson)
    assert run(capsys, "tangle", md)[0] == 0
    code, out, err = run(capsys, "check", md)
    assert code == 0 and "transcript matches" in out, err


def test_a_program_that_imports_a_module_of_the_lesson_with_a_star_has_its_names(tmp_path, capsys):
    helper = "```python {file=generated/helper.py}\ndef helper():\n    return 2\n```\n\n"
    lesson = small_lesson(helper + playground("print(helper())\n")).replace(
        "<<body>>\n", "from helper import *  # noqa: F403\n<<body>>\n").replace("{transcript}",
                                                                              "{transcript=generated/a.py}")
    md = write(tmp_path, lesson)
    assert run(capsys, "tangle", md)[0] == 0
    code, out, err = run(capsys, "check", md)
    assert code == 0, err
