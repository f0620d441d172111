"""update never deletes the lesson's text, and the transcript diff does linear work (ATTACK.md, G6 and G10).

A transcript fence whose closing line is missing runs on over the lesson's Markdown to the next fence line that
closes it; update must refuse to replace that text with the output, and check must say why it differs. A diff of
two long transcripts must not cost time quadratic in their lengths: difflib only ever sees short stretches."""

import difflib
import random

import pytest

import literate.diffing
import literate.transcripts
from conftest import ROOT, run, write
from literate.markdown import load, parse_document
from literate.model import UserError
from literate.diffing import EXACT_DIFF_LINES
from literate.transcripts import LESSON_MARKDOWN, MAX_DIFF_LINES, swallowed_problems, unified_diff


def lesson(transcript: str, code: str = 'print("value 0.75")\nprint("done")\n', after: str = "") -> str:
    """The attack's base lesson: with its two lines of code, the transcript fence opens at line 10."""
    return (f"# Lesson\n\nPROSE\n\n```python {{file=generated/a.py}}\n{code}```\n\n```text {{transcript}}\n"
            f"{transcript}```\n{after}")


SWALLOWED_SUMMARY = ("value 0.75\ndone\n\n## 小结\n\nA paragraph here.\n\n```\nan illustration\n```\n\n"
                     "More notes.\n")  # G6: the transcript's closing fence is missing; the last line closes it


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if ": error: " in line]


# ---------------------------------------------------------------- G6: a transcript that swallowed the lesson's text

def test_update_refuses_the_attacks_swallowed_summary_and_leaves_the_lesson_as_it_was(tmp_path, capsys):
    md = write(tmp_path, lesson(SWALLOWED_SUMMARY), "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    before = md.read_bytes()
    code, out, err = run(capsys, "update", md)
    assert code == 2 and md.read_bytes() == before and "updated" not in out
    assert error_lines(err) == [line for line in err.splitlines() if line]  # nothing but the one error line
    [message] = error_lines(err)
    assert message.startswith(f"{md}:10: error: this transcript of {tmp_path}/generated/a.py runs on to the fence at line 18 ")
    assert "over the lesson's own text (line 14: «## 小结»)" in message
    assert "its closing fence is probably missing before line 13" in message  # after `done`, at the blank line
    assert "update refuses to record output over the lesson's text" in message


def test_check_says_the_transcript_swallowed_text_instead_of_recommending_update(tmp_path, capsys):
    md = write(tmp_path, lesson(SWALLOWED_SUMMARY), "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, out, err = run(capsys, "check", md)
    assert code == 1 and out.endswith("transcript differs\n")
    [message] = error_lines(err)
    assert message.startswith(f"{md}:10: error: this transcript of {tmp_path}/generated/a.py runs on to the fence at line 18 ")
    assert "probably missing before line 13" in message and "record it" not in err


@pytest.mark.parametrize("swallowed, at", [
    ("### 一个小标题\n", 14),  # a heading
    ('<a name="chunk-x"></a>**〈小结〉**\n', 14),  # a caption
    ("见**〈小结〉**一节。\n", 14),
    ('<a name="x"></a>\n', 14),
    ("见[上一节](#chunk-x)。\n", 14),  # a link
    ("<details>\n<summary>展开</summary>\n", 14),
    ("$$\n\\alpha = 1\n$$\n", 14),  # a formula
    ("结论写在下面：\n\n~~~python\nx = 1\n", 16),  # a fence line (the transcript's own ``` closes it)
    ("结论写在下面：\n\n```python {#extra}\nx = 1\n", 16),
    ("- 一条笔记\n- 又一条\n", 14),  # a list
    ("1. 第一步\n", 14),
    ("> 引一句话\n", 14),  # a quote
    ("| 甲 | 乙 |\n|---|---|\n", 14),  # a table
    ("**要紧**：别忘了。\n", 14),  # bold
])
def test_update_refuses_each_kind_of_swallowed_markdown(tmp_path, capsys, swallowed, at):
    md = write(tmp_path, lesson(f"value 0.75\ndone\n\n{swallowed}"), "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    before = md.read_bytes()
    code, _, err = run(capsys, "update", md)
    assert code == 2 and md.read_bytes() == before
    [message] = error_lines(err)
    assert f"over the lesson's own text (line {at}: «" in message and "probably missing before line 13" in message


def test_a_paragraph_swallowed_before_a_heading_is_inside_the_place_named_for_the_fence(tmp_path, capsys):
    """The fence belongs after the last line the program prints (up to its numbers), not just before the heading."""
    md = write(tmp_path, lesson("value 0.70\ndone\n\nSome prose the reader wrote.\n\n## 小结\n"), "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, _, err = run(capsys, "update", md)
    assert code == 2 and "(line 16: «## 小结»)" in err and "probably missing before line 13" in err


def test_each_swallowing_transcript_is_one_line_and_nothing_is_written(tmp_path, capsys):
    text = ("# L\n\n```python {file=generated/a.py}\nprint('a 1')\n```\n\n```python {file=generated/b.py}\n"
            "print('b 2')\n```\n\n```text {transcript=generated/a.py}\na 1\n\n## 一\n\n```\n\n"
            "```text {transcript=generated/b.py}\nb 2\n\n## 二\n\n```\n")
    md = write(tmp_path, text, "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, _, err = run(capsys, "update", md)
    assert code == 2 and md.read_text() == text
    assert [line.split(": error: ")[0] for line in error_lines(err)] == [f"{md}:11", f"{md}:18"]


def test_a_transcript_of_blank_lines_and_chinese_sentences_still_updates(tmp_path, capsys):
    code = ('print("结果如下。")\nprint()\nprint("准确率 0.93，比原书高。")\nprint()\n'
            'print("  注意：这是本仓库实测（不是原书）。")\nprint()\n')
    old = "结果如下。\n\n准确率 0.91，比原书高。\n\n这是实测，原书的图在第 2 页。\n\n"  # a sentence no longer printed
    md = write(tmp_path, lesson(old, code, "\n## 小结\n\n正文。\n"), "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, out, err = run(capsys, "update", md)
    assert code == 0 and error_lines(err) == [] and "updated the transcript" in out
    assert "准确率 0.93，比原书高。\n\n  注意" in md.read_text() and "\n## 小结\n\n正文。\n" in md.read_text()


def test_a_program_that_prints_markdown_still_updates_when_its_numbers_change(tmp_path, capsys):
    """Lines the program prints itself (up to their numbers) are its output, however Markdown they look."""
    text = ('# Lesson\n\n```python {file=generated/a.py}\nprint("## 结果 0.93")\nprint("见 [表](#x)")\nprint()\n'
            'print("```")\n```\n\n````text {transcript}\n## 结果 0.91\n见 [表](#x)\n\n```\n````\n')
    md = write(tmp_path, text, "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, out, err = run(capsys, "update", md)
    assert code == 0 and "updated the transcript" in out, err
    assert md.read_text() == text.replace("0.91", "0.93")


def test_no_transcript_of_the_real_lesson_holds_a_line_that_looks_like_markdown():
    doc = load(ROOT / "attention.md", "attention.md")
    found = [piece.md_line(index) for transcript in doc.transcripts.values() for piece in transcript.pieces()
             for index, line in enumerate(piece.content.split("\n")) if LESSON_MARKDOWN.search(line)]
    assert doc.transcripts and found == []


def test_every_closing_fence_of_the_real_lesson_left_out_is_caught_and_placed(capsys):
    """Each transcript fence of attention.md in turn loses its closing line: where the lesson still parses, the
    transcript is refused, and the place named for the fence is where it was."""
    doc = load(ROOT / "attention.md", "attention.md")
    lines = (ROOT / "attention.md").read_text(encoding="utf-8").split("\n")
    caught = 0
    for target, transcript in doc.transcripts.items():
        for piece in transcript.pieces():
            cut = lines[: piece.closing_line - 1] + lines[piece.closing_line :]
            try:
                broken = parse_document(ROOT / "attention.md", "attention.md", "\n".join(cut))
            except UserError:
                continue  # the parse refuses it already (a caption or a link left without its fence)
            problems = swallowed_problems(broken, target, transcript.content)
            assert len(problems) == 1 and f"missing before line {piece.closing_line};" in problems[0], problems
            caught += 1
    capsys.readouterr()
    assert caught >= 3


# ---------------------------------------------------------------- G10: the diff does linear work

def test_the_diff_of_short_transcripts_is_difflibs_byte_for_byte():
    chosen = random.Random(6)
    for _ in range(3000):
        old = chosen.choices("abc", k=chosen.randrange(13))
        new = chosen.choices("abc", k=chosen.randrange(13)) if chosen.random() < 0.5 else \
            [line if chosen.random() < 0.8 else "z" for line in old]
        assert list(unified_diff(old, new, "x", "y")) == list(difflib.unified_diff(old, new, "x", "y", lineterm=""))
    old = [f"v {chosen.randrange(40)}" for _ in range(EXACT_DIFF_LINES)]  # at the bound, autojunk and all
    new = [line if chosen.random() < 0.9 else "w" for line in old[5:]]
    assert list(unified_diff(old, new, "x", "y")) == list(difflib.unified_diff(old, new, "x", "y", lineterm=""))


def applied(old: list[str], diff: list[str]) -> list[str]:
    """old with a unified diff applied, each hunk's context and removed lines checked against old."""
    result, at = [], 0
    for line in diff[2:]:
        if line.startswith("@@"):
            start, _, length = line.split()[1][1:].partition(",")
            begin = int(start) - (length != "0")
            result += old[at:begin]
            at = begin
        elif line[0] in " -":
            assert old[at] == line[1:]
            result += [line[1:]] if line[0] == " " else []
            at += 1
        else:
            result.append(line[1:])
    return result + old[at:]


@pytest.mark.parametrize("change, changed", [("every 97th line", 2 * 31), ("every line", 2 * 2880),
                                             ("one line added at the top", 1), ("one line added in the middle", 1),
                                             ("100 lines cut from the end", 100),
                                             ("a middle replaced by a longer one", 2 * 1000 + 500)])
def test_the_diff_of_long_transcripts_is_a_true_diff_and_no_longer_than_its_change(change, changed):
    """Above the bound, the common head and tail are set aside before the rest is paired line by line: a line added
    shifts nothing after it into the diff."""
    old = [f"v {i % 150}" for i in range(3000)]
    new = {"every 97th line": [line + "!" if i % 97 == 0 else line for i, line in enumerate(old)],
           "every line": [f"v {i * 7 % 150}" for i in range(3000)],
           "one line added at the top": ["first", *old],
           "one line added in the middle": [*old[:1500], "added", *old[1500:]],
           "100 lines cut from the end": old[:-100],
           "a middle replaced by a longer one": old[:1000] + [f"w {i}" for i in range(1500)] + old[2000:]}[change]
    diff = list(unified_diff(old, new, "x", "y"))
    assert diff[:2] == ["--- x", "+++ y"] and applied(old, diff) == new
    assert sum(line[:1] in "+-" for line in diff[2:]) == changed
    if change == "every 97th line":
        assert sum(line.startswith("@@") for line in diff) == len(range(0, 3000, 97))  # paired in place


def test_check_and_update_of_40000_changed_lines_never_give_difflib_more_than_its_bound(tmp_path, capsys,
                                                                                         monkeypatch):
    """G10: transcript `v (i%150)`, program `v ((i*7)%150)`, 40,000 lines (once over 300 s): difflib is asked
    only for stretches within EXACT_DIFF_LINES a side, and the diff shown stays short."""
    asked, original = [], difflib.SequenceMatcher

    def matcher(junk=None, a="", b="", autojunk=True):
        asked.append(len(a) * len(b))
        if asked[-1] > EXACT_DIFF_LINES ** 2:
            raise AssertionError(f"difflib asked for {len(a)} x {len(b)} lines")  # at once, not after minutes
        return original(junk, a, b, autojunk)
    monkeypatch.setattr(literate.diffing.difflib, "SequenceMatcher", matcher)
    transcript = "".join(f"v {i % 150}\n" for i in range(40000))
    md = write(tmp_path, lesson(transcript, "for i in range(40000):\n    print('v', i * 7 % 150)\n"), "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, out, _ = run(capsys, "check", md)
    assert code == 1 and len(out.splitlines()) < MAX_DIFF_LINES + 10
    assert f"… 78,203 more lines of the diff left out (the first {MAX_DIFF_LINES} are shown)" in out
    code, out, err = run(capsys, "update", md)
    assert code == 0 and len(out.splitlines()) < MAX_DIFF_LINES + 10, err
    assert md.read_text().count("\nv ") == 40000 and "v 7\nv 14\n" in md.read_text()
    assert max(asked, default=0) <= EXACT_DIFF_LINES ** 2
