"""Every number the reader sees (on GitHub or on the page) is checked or refused, and a number is checked against
what it quotes: small lessons in tmp_path, the reading decided once from the parser's tokens."""

import re
from pathlib import Path

import pytest

import literate.markdown
import literate.printed
import literate.prose
import tangle
from conftest import write

ROOT = Path(__file__).resolve().parent.parent


def lesson(prose: str, printed: str = "value 0.75") -> str:
    """A lesson whose program prints `printed` and "done", with prose above the code."""
    return (f"# Lesson\n\n{prose}\n\n```python {{file=generated/a.py}}\n<<body>>\n```\n\n```python {{#body}}\n"
            f"print({printed!r})\nprint('done')\n```\n\n```text {{transcript}}\n{printed}\ndone\n```\n")


def check(tmp_path: Path, capsys, text: str) -> tuple[int, str, str]:
    md = write(tmp_path, text, "lesson.md")
    (tmp_path / "book_figures.txt").write_text("0.25\n")
    code = tangle.main(["tangle", str(md)])
    if code == 0:
        capsys.readouterr()
        code = tangle.main(["check", str(md)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.split("\n"), 1) if needle in line)


# ---------------------------------------------------------------- what the reader sees is checked

SEEN = {
    "text after a comment that opens an HTML block": "<!-- TODO: recheck -->Accuracy was 0.93 after training.",
    "a summary": "<details><summary>Accuracy 0.93</summary>\n\nbody\n\n</details>",
    "a paragraph in HTML": "<p>Accuracy was 0.93.</p>",
    "a div": "<div>Accuracy 0.93</div>",
    "a character reference in HTML": "<div>Accuracy 0.9&#51;</div>",
    "HTML over several lines": "<div>\nfirst line\n\nAccuracy 0.93\n</div>",
    "an image's description": "Accuracy chart ![accuracy 0.93](chart.png) here.",
    "a heading": "## Accuracy 0.93",
    "a table cell": "| a |\n|---|\n| 0.93 |",
}


@pytest.mark.parametrize("prose", SEEN.values(), ids=SEEN.keys())
def test_a_stale_number_the_reader_sees_fails_the_check_at_its_line(tmp_path, capsys, prose):
    text = lesson(prose)
    code, out, err = check(tmp_path, capsys, text)
    assert code == 1 and "1 not in the transcript" in out
    assert f"lesson.md:{line_of(text, '0.9')}: error: 0.93 is not printed by generated/a.py" in err


@pytest.mark.parametrize("prose", SEEN.values(), ids=SEEN.keys())
def test_the_same_number_printed_passes(tmp_path, capsys, prose):
    code, out, err = check(tmp_path, capsys, lesson(prose.replace("0.9&#51;", "0.93"), printed="value 0.93"))
    assert (code, err) == (0, "") and "checked 1 prose numbers" in out


def test_an_html_block_that_is_only_a_comment_or_tags_shows_nothing(tmp_path, capsys):
    prose = "<!-- 0.93 is hidden -->\n\n<details>\n<summary>折叠</summary>\n\n正文 0.75\n\n</details>"
    code, out, err = check(tmp_path, capsys, lesson(prose))
    assert (code, err) == (0, "") and "checked 1 prose numbers" in out


def test_a_citation_inside_the_text_of_an_html_block_cites_for_its_sentence(tmp_path, capsys):
    prose = "<div>其一 0.75；<!-- 数字出自 generated/a.py -->其二 0.75。</div>"
    code, out, err = check(tmp_path, capsys, lesson(prose))
    assert (code, err) == (0, "") and "checked 2 prose numbers" in out


def test_html_text_is_read_in_one_pass_over_its_tags():
    """Thousands of < that no > closes, and comments that never close: each --> and > is looked for once."""
    parts, tags = literate.inline.html_text("<a" * 20000 + " 0.93 <!-- x --> <!-- 0.5" + " <!--" * 20000)
    text = "".join(parts)
    assert text.startswith("<a<a") and " 0.93 " in text and len(tags) == 2  # the closed comment, the open one
    assert tags[1][1].startswith("<!-- 0.5 <!--") and tags[1][1].endswith("<!--")
    parts, tags = literate.inline.html_text("<!-->0.5 <!--->0.6 <b>0.7</b>")
    assert "".join(parts) == "\ufffc0.5 \ufffc0.6 \ufffc0.7\ufffc"


# ---------------------------------------------------------------- what the check cannot read is refused

def test_a_footnote_is_refused_at_its_line(tmp_path, capsys):
    for prose in ("Accuracy is reported below.[^1]\n\n[^1]: 0.93", "> [^note one]:\n> 0.93"):
        text = lesson(prose)
        code, _, err = check(tmp_path, capsys, text)
        assert code == 2 and f"lesson.md:{line_of(text, ']:')}: error: [^" in err and "is a footnote" in err


def test_a_link_reference_definition_is_no_footnote(tmp_path, capsys):
    code, _, err = check(tmp_path, capsys, lesson("See [the book][b].\n\n[b]: https://example.com/0.93"))
    assert (code, err) == (0, "")


def nested_list(depth: int) -> str:
    return "".join("  " * level + "- a\n" for level in range(depth))


@pytest.mark.parametrize("depth", range(1, 16))
def test_a_list_nested_ten_deep_is_refused_not_dropped(tmp_path, capsys, depth):
    """markdown-it stops reading at its nesting limit and skips the rest of the document, silently: a list nested
    that deep is refused at its line; any shallower, the number and the code after it are read."""
    text = ("# L\n\n```python {file=generated/a.py}\nprint('v 0.75')\n```\n\n```text {transcript}\nv 0.75\n```\n\n"
            + nested_list(depth) + "\nStale number 0.93 after the nested list.\n")
    code, _, err = check(tmp_path, capsys, text)
    if depth >= 10:
        assert code == 2 and f"lesson.md:{11 + 9}: error: lists and quotes nested too deeply here" in err
    else:
        assert code == 1 and "error: 0.93 is not printed" in err


@pytest.mark.parametrize("depth, refused", [(19, False), (20, True), (25, True), (400, True)])
def test_a_quote_nested_past_the_parsers_limit_is_refused(tmp_path, capsys, depth, refused):
    code, _, err = check(tmp_path, capsys, lesson(">" * depth + " Accuracy 0.93"))
    assert code == (2 if refused else 1)
    assert ("lesson.md:3: error: lists and quotes nested too deeply" in err) == refused


def test_emphasis_nested_thousands_deep_is_refused_with_its_cause(tmp_path, capsys):
    code, _, err = check(tmp_path, capsys, lesson("*a " * 3000 + "0.75" + " b*" * 3000))
    assert code == 2 and "lesson.md:3: error: emphasis, links or strikethrough nested more than 20 deep" in err
    assert len(err) < 1000


# ---------------------------------------------------------------- a number is checked against what it quotes

QUOTING = """# L

## 手算

```python {file=generated/a.py}
print("权重 %s 0.2303" % WEIGHT)
print("准确率 0.41 0.13")
```

```text {transcript=generated/a.py part=1}
权重 WEIGHT 0.2303
```

第 3 个键拿到 0.41 的权重；第 1 个拿到 0.2303，约 0.23。

## 训练

```text {transcript=generated/a.py part=2}
准确率 0.41 0.13
```

准确率 0.41 和 0.13。
"""


def quoting(tmp_path: Path, weight: str) -> Path:
    text = QUOTING.replace("WEIGHT", weight, 1).replace("WEIGHT", weight)
    return write(tmp_path, text, "lesson.md")


def test_a_rounded_quote_passes_under_the_heading_of_what_it_rounds(tmp_path, capsys):
    md = quoting(tmp_path, "0.4102")
    assert tangle.main(["tangle", str(md)]) == 0
    assert tangle.main(["check", str(md)]) == 0, capsys.readouterr().err
    _, numbers = literate.prose.stale_numbers(literate.markdown.load(md, "lesson.md"))
    assert [(n.text, n.printed) for n in numbers if n.printed] == [("0.41", "0.4102"), ("0.23", "0.2303")]


def test_a_stale_rounded_quote_fails_though_another_part_prints_the_same_digits(tmp_path, capsys):
    """0.41 quoted 0.4102; the weight is now 0.4529, and the 0.41 that part 2 prints is another number."""
    md = quoting(tmp_path, "0.4529")
    assert tangle.main(["tangle", str(md)]) == 0
    capsys.readouterr()
    assert tangle.main(["check", str(md)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "lesson.md:14: error: 0.41 is not printed by generated/a.py (the output under its heading (part 1, lines "
        "11-11), printed as written or rounded from a number printed there; nearest: 0.4529, 0.2303); "
        "generated/a.py prints it elsewhere: if it quotes that, cite it with <!-- 数字出自 generated/a.py -->"
        .replace("lesson.md", str(md)))
    assert err.count("error:") == 1  # part 2's own 0.41 and 0.13 still pass


def test_a_cited_decimal_and_an_integer_may_come_from_anywhere_in_the_transcript(tmp_path, capsys):
    """Part 1 prints neither 0.13 nor 100: the comment cites the whole transcript for 0.13, and an integer (a count,
    a setting) may be printed anywhere in it."""
    text = QUOTING.replace("WEIGHT", "0.4102").replace("约 0.23。", "约 0.23，共 100 条。<!-- 数字出自 generated/a.py -->准确率 0.13。")
    text = text.replace('"准确率 0.41 0.13"', '"准确率 0.41 0.13 共 100 条"').replace("0.13\n```", "0.13 共 100 条\n```")
    md = write(tmp_path, text, "lesson.md")
    errors, numbers = literate.prose.stale_numbers(literate.markdown.load(md, "lesson.md"))
    assert errors == [] and "100" in [n.text for n in numbers]


def test_the_lessons_rounded_quote_goes_stale_when_its_table_changes():
    """attention.md's hand example: 0.41 and 0.13 round the table's 0.4102 and 0.1293. With other weights printed
    there, they fail, though part 3 prints a 0.41 and the book's matrix a 0.13."""
    text = (ROOT / "attention.md").read_text()
    doc = literate.markdown.parse_document(ROOT / "attention.md", "attention.md", text)
    errors, numbers = literate.prose.stale_numbers(doc)
    assert errors == [] and {("0.41", "0.4102"), ("0.13", "0.1293")} <= {(n.text, n.printed) for n in numbers}
    part = doc.transcripts["generated/attention.py"].pieces()[0]
    changed = part.content.replace("0.4102", "0.4529").replace("0.1293", "0.1069")
    lines = text.split("\n")
    lines[part.first_line - 1 : part.closing_line - 1] = changed.split("\n")[:-1]
    doc = literate.markdown.parse_document(ROOT / "attention.md", "attention.md", "\n".join(lines))
    errors, _ = literate.prose.stale_numbers(doc)
    stale = [re.match(r"attention\.md:\d+: error: (\S+)", error)[1] for error in errors]
    assert "0.41" in stale and "0.13" in stale


@pytest.mark.parametrize("count", [200, 4000])
def test_suggestions_for_every_stale_number_are_found_by_bisection(tmp_path, monkeypatch, count):
    """A transcript of `count` numbers and as many stale numbers in the prose (once each compared with every
    printed one): each number costs a few values, looked up in lists sorted once."""
    printed = " ".join(f"{i}.25" for i in range(count))
    md = write(tmp_path, lesson(" ".join(f"{i}.75" for i in range(count)), printed=printed), "lesson.md")
    doc = literate.markdown.load(md, "lesson.md")
    values = []
    original = literate.printed.value
    monkeypatch.setattr(literate.printed, "value", lambda text: (values.append(text), original(text))[1])
    errors, _ = literate.prose.stale_numbers(doc)
    assert len(errors) == count and "(its section's transcript; nearest: 0.25, 1.25, 2.25)" in errors[0]
    assert f"{count - 1}.75 is not printed" in errors[-1] and f"nearest: {count - 1}.25" in errors[-1]
    assert len(values) <= 20 * count
