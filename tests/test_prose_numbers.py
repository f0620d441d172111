"""Every number the reader sees (on GitHub or on the page) is checked or refused, and a number is checked against
what it quotes: small lessons in tmp_path, the reading decided once from the parser's tokens."""

import re
from pathlib import Path

import pytest

import literate.markdown
import literate.printed
import literate.proofs
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
    "an abbreviation's title (a tooltip)": '<abbr title="0.93">acc</abbr> here.',
    "a data attribute (the page shows the tag as text)": 'x <span data-v="0.93">y</span>',
    "an HTML image's alt text": '<img alt="0.93" src="chart.png">',
    "a character reference in an attribute": '<abbr title="0.9&#51;">acc</abbr> here.',
    "a processing instruction": "<?php echo 0.93; ?>",
    "CDATA": "A <![CDATA[ 0.93 ]]> B",
    "a declaration": "<!DOCTYPE 0.93>",
    "a link's title": '[acc](#x "0.93")',
    "an image's title": '![acc](chart.png "0.93")',
    "an HTML block after a comment ended by --!>": "<!-- note --!> 准确率 0.93 -->",
    "inline HTML after a comment ended by --!>": "x <!-- note --!> 准确率 0.93 --> y",
    "a decimal followed by a unit": "Each step takes 0.93ms.",
    "a decimal before a word that starts with a measure word": "准确率 0.93 位居第一。",
}


@pytest.mark.parametrize("prose", SEEN.values(), ids=SEEN.keys())
def test_a_stale_number_the_reader_sees_fails_the_check_at_its_line(tmp_path, capsys, prose):
    text = lesson(prose)
    code, out, err = check(tmp_path, capsys, text)
    assert code == 1 and "1 not proven" in out
    assert f"lesson.md:{line_of(text, '0.9')}: error: 0.93 is not printed by generated/a.py" in err


@pytest.mark.parametrize("prose", SEEN.values(), ids=SEEN.keys())
def test_the_same_number_printed_passes(tmp_path, capsys, prose):
    code, out, err = check(tmp_path, capsys, lesson(prose.replace("0.9&#51;", "0.93"), printed="value 0.93"))
    assert (code, err) == (0, "") and "checked 1 prose number" in out


def test_targets_and_anchors_in_markup_are_not_read(tmp_path, capsys):
    """A link's target and an anchor are no text, as a Markdown link's target is none."""
    prose = ('<a href="https://arxiv.org/abs/1409.0473" name="n12">论文</a> 和 '
             '<img src="fig/2024.png" alt="图"> [链接](https://example.com/3.14 "看这里")')
    code, out, err = check(tmp_path, capsys, lesson(prose))
    assert (code, err) == (0, "") and "checked 0 prose numbers" in out


def test_an_html_block_that_is_only_a_comment_or_tags_shows_nothing(tmp_path, capsys):
    prose = "<!-- 0.93 is hidden -->\n\n<details>\n<summary>折叠</summary>\n\n正文 0.75\n\n</details>"
    code, out, err = check(tmp_path, capsys, lesson(prose))
    assert (code, err) == (0, "") and "checked 1 prose number" in out


def test_a_citation_inside_the_text_of_an_html_block_cites_for_its_sentence(tmp_path, capsys):
    prose = "<div>其一 0.75；<!-- 数字出自 generated/a.py -->其二 0.75。</div>"
    code, out, err = check(tmp_path, capsys, lesson(prose))
    assert (code, err) == (0, "") and "checked 2 prose numbers" in out


def test_html_text_is_read_in_one_pass_over_its_tags():
    """Thousands of < that no > closes, and comments that never close: each --> and > is looked for once."""
    parts, tags, _ = literate.inline.html_text("<a" * 20000 + " 0.93 <!-- x --> <!-- 0.5" + " <!--" * 20000)
    text = "".join(parts)
    assert text.startswith("<a<a") and " 0.93 " in text and len(tags) == 2  # the closed comment, the open one
    assert tags[1][1].startswith("<!-- 0.5 <!--") and tags[1][1].endswith("<!--")
    parts, tags, _ = literate.inline.html_text("<!-->0.5 <!--->0.6 <b>0.7</b>")
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

第三个键拿到 0.41 的权重；第一个拿到 0.2303，约 0.23。

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
    _, numbers = literate.proofs.stale_numbers(literate.markdown.load(md, "lesson.md"))
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
        "generated/a.py prints it elsewhere, outside the output under this heading: if it quotes that, cite the whole "
        "transcript with <!-- 数字出自 generated/a.py -->"
        .replace("lesson.md", str(md)))
    assert err.count("error:") == 1  # part 2's own 0.41 and 0.13 still pass


def test_a_cited_number_may_come_from_anywhere_in_the_transcript_and_an_uncited_one_from_under_its_heading(tmp_path):
    """Part 1 prints neither 0.13 nor 100: the comment cites the whole transcript for both. Without it, an integer
    (a count) quotes the parts under its heading, as a decimal does: 100 printed in part 2 does not pass there."""
    text = QUOTING.replace("WEIGHT", "0.4102").replace("约 0.23。", "约 0.23。<!-- 数字出自 generated/a.py -->准确率 0.13，共 100 条。")
    text = text.replace('"准确率 0.41 0.13"', '"准确率 0.41 0.13 共 100 条"').replace("0.13\n```", "0.13 共 100 条\n```")
    md = write(tmp_path, text, "lesson.md")
    errors, numbers = literate.proofs.stale_numbers(literate.markdown.load(md, "lesson.md"))
    assert errors == [] and "100" in [n.text for n in numbers]
    md.write_text(text.replace("<!-- 数字出自 generated/a.py -->", ""))
    errors, _ = literate.proofs.stale_numbers(literate.markdown.load(md, "lesson.md"))
    assert [re.search(r"error: (\S+)", error)[1] for error in errors] == ["0.13", "100"]


def test_the_lessons_rounded_quote_goes_stale_when_its_table_changes():
    """attention.md's hand example: 0.41 and 0.13 round the table's 0.4102 and 0.1293. With other weights printed
    there, they fail, though part 3 prints a 0.41 and the book's matrix a 0.13."""
    text = (ROOT / "attention.md").read_text()
    doc = literate.markdown.parse_document(ROOT / "attention.md", "attention.md", text)
    errors, numbers = literate.proofs.stale_numbers(doc)
    assert errors == [] and {("0.41", "0.4102"), ("0.13", "0.1293")} <= {(n.text, n.printed) for n in numbers}
    part = doc.transcripts["generated/attention.py"].pieces()[0]
    changed = part.content.replace("0.4102", "0.4529").replace("0.1293", "0.1069")
    lines = text.split("\n")
    lines[part.first_line - 1 : part.closing_line - 1] = changed.split("\n")[:-1]
    doc = literate.markdown.parse_document(ROOT / "attention.md", "attention.md", "\n".join(lines))
    errors, _ = literate.proofs.stale_numbers(doc)
    stale = [re.match(r"attention\.md:\d+: error: ([0-9.]+)", error)[1] for error in errors]
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
    errors, _ = literate.proofs.stale_numbers(doc)
    assert len(errors) == count and "(its section's transcript; nearest: 0.25, 1.25, 2.25)" in errors[0]
    assert f"{count - 1}.75 is not printed" in errors[-1] and f"nearest: {count - 1}.25" in errors[-1]
    assert len(values) <= 20 * count


# ---------------------------------------------------------------- how numbers are written

READ_AS = {  # prose: the number the check reads in it (None: none)
    "thousands separators": ("训练用了 1,000 条序列。", "1,000"),
    "thousands with a decimal part": ("共 12,345.5 秒。", "12,345.5"),
    "two numbers after a comma": ("取 10,20 两种。", "10"),
    "a decimal and a unit": ("每步 0.93ms。", "0.93"),
    "a decimal and a factor": ("快 2.5x。", "2.5"),
    "an integer and a unit": ("显存 12GB。", None),
    "scientific notation": ("误差 1.5e-3。", None),
    "a version": ("用 v2.5 版。", None),
    "an integer before a measure word (a setting, or a count)": ("10 位的对比。", "10"),
    "a year": ("2017 年的论文。", None),
    "a decimal before a measure word": ("第 3.5 轮。", "3.5"),
    "an integer before a word that starts with a measure word": ("损失 41 行不行？", "41"),
    "a section number": ("见 6.5 节。", None),
}


@pytest.mark.parametrize("prose, read", READ_AS.values(), ids=READ_AS.keys())
def test_what_the_check_reads_as_a_number(tmp_path, prose, read):
    md = write(tmp_path, lesson(prose), "lesson.md")
    _, numbers = literate.proofs.stale_numbers(literate.markdown.load(md, "lesson.md"))
    assert [number.text for number in numbers][:1] == ([read] if read else [])


@pytest.mark.parametrize("printed, passes", [("sequences: 1,000", True), ("sequences: 9,000", False),
                                             ("sequences: 1000", False)])
def test_a_number_with_thousands_separators_is_checked_as_written(tmp_path, capsys, printed, passes):
    code, out, err = check(tmp_path, capsys, lesson("训练用了 1,000 条序列。", printed=printed))
    assert code == (0 if passes else 1)
    if not passes:
        assert "error: 1,000 is not printed by generated/a.py" in err


REFUSED = {  # prose: what the error says
    "a bidi override around a number": ("准确率 \u202e52.0\u202c，不错。", "U+202E (RIGHT-TO-LEFT OVERRIDE) reorders"),
    "a bidi override before the number": ("准确率 \u202e 是 52.0 和 0.3\u202c。", "U+202E (RIGHT-TO-LEFT OVERRIDE) reorders"),
    "a bidi isolate in a code span": ("`\u2067x` 之后 52.0。", "U+2067 (RIGHT-TO-LEFT ISOLATE) reorders"),
    "a zero-width space after a number": ("准确率 52.0\u200b，不错。",
                                          "U+200B (ZERO WIDTH SPACE) stands next to the number 52.0"),
    "a soft hyphen before a number": ("准确率 \u00ad52.0。", "U+00AD (SOFT HYPHEN) stands next to the number 52.0"),
    "a code span inside a number": ("准确率 0`.7`7。", "0.77 is split by the code span `.7`"),
    "a code span ending a number's first digits": ("准确率 `0.7`7。", "0.77 is split by the code span `0.7`"),
    "a code span after a decimal point": ("准确率 0.`77`。", "0.77 is split by the code span `77`"),
    "a code span in the middle": ("准确率 9`9.9`9。", "99.99 is split by the code span `9.9`"),
    "superscript decimals": ("准确率 0.⁷⁷。", "0.⁷⁷ is written with superscript or subscript digits"),
    "subscript digits": ("准确率 ₀.₇₇。", "₀.₇₇ is written with superscript or subscript digits"),
    "superscript digits alone": ("共 ¹⁰⁰⁰ 条。", "¹⁰⁰⁰ is written with superscript or subscript digits"),
    "a power of ten": ("误差 10⁻¹⁸。", "¹⁸ is written with superscript or subscript digits"),
    "a number in a title written with other digits": ('[a](#x "０.９３")', "０.９３ is written with other digits"),
}


@pytest.mark.parametrize("prose, message", REFUSED.values(), ids=REFUSED.keys())
def test_a_number_the_reader_sees_otherwise_is_refused_at_its_line(tmp_path, capsys, prose, message):
    text = lesson("第一行。\n\n" + prose)
    code, _, err = check(tmp_path, capsys, text)
    assert code == 2 and f"lesson.md:5: error: {message}" in err


@pytest.mark.parametrize("prose", ["x² 和 T₁₀，(a+b)² 与 m³", "`a`0.75", "0.75`x`", "v`0.75`", "`9`，0.75"])
def test_exponents_indices_and_code_beside_a_number_are_no_split(tmp_path, capsys, prose):
    code, _, err = check(tmp_path, capsys, lesson(prose))
    assert (code, err) == (0, "")


# ---------------------------------------------------------------- counts, settings and signs

SETTINGS = """# Lesson

PROSE

```python {file=generated/a.py}
ROUNDS = 2000  # a setting the lesson chose
print("value 0.75 after 3 rounds, change -0.25")
```

```text {transcript}
value 0.75 after 3 rounds, change -0.25
```
"""

SETTING_CASES = {  # prose: the numbers that fail
    "a declared setting before a measure word": ("训练 2000 轮，准确率 0.75。", []),
    "a declared value without a measure word is a count, not printed": ("训练了 2000 次。", ["2000"]),
    "a setting the program does not declare": ("训练 3000 轮。", ["3000"]),
    "a printed count": ("3 轮以后 0.75。", []),
    "a count nothing prints": ("4 轮以后 0.75。", ["4"]),
    "a single digit nothing prints": ("有 5 个。", ["5"]),
    "a year and a section": ("2017 年的论文，见 6.5 节。", []),
    "a sign as printed": ("变化 −0.25。", []),
    "a sign the other way": ("变化 +0.25。", ["+0.25:"]),
    "a minus on a number printed without one": ("准确率 -0.75。", ["-0.75:"]),
    "a range is no sign": ("第 1-3 轮。", ["1"]),
}


def test_a_setting_that_only_its_declaration_proves_is_named_so_on_the_page(tmp_path, capsys):
    from literate.page import command as weave
    md = write(tmp_path, SETTINGS.replace("PROSE", "训练 2000 轮，3 轮以后准确率 0.75。"), "lesson.md")
    out = tmp_path / "page.html"
    assert weave.main([str(md), "-o", str(out)]) == 0
    page = out.read_text()
    assert re.search(r'<span class="num setting" title="generated/a.py 声明的设置[^"]*">2000</span>', page)
    # a count printed on one line only is known to quote it: linked there, like any quote
    assert re.search(r'<a class="num" href="#L11-3" title="出自 generated/a.py[^"]*">3</a>', page)
    assert "1 个是程序声明的设置" in page


MORE_SIGNS = {  # prose against a program printing "value 0.75 after 3 rounds, change -0.25": the numbers failing
    "a minus right after a Chinese character": ("变化−0.75。", ["-0.75:"]),
    "a hyphen right after a Chinese character": ("变化-0.75。", ["-0.75:"]),
    "a minus and a space": ("变化 − 0.75。", ["-0.75:"]),
    "an en dash as a minus": ("变化 –0.75。", ["-0.75:"]),
    "a small hyphen-minus": ("变化 ﹣0.75。", ["-0.75:"]),
    "a difference is no sign": ("1 − 0.75 是多少。", ["1"]),
    "a minus as printed, after a Chinese character": ("变化−0.25。", []),
    "a minus and a no-break space": ("变化 −\u00a00.75。", ["-0.75:"]),
    "a minus and a thin space": ("变化 −\u20090.75。", ["-0.75:"]),
    "a modifier minus": ("变化 \u02d70.75。", ["-0.75:"]),
    "a subscript minus": ("变化 \u208b0.75。", ["-0.75:"]),
    "a heavy minus sign": ("变化 \u27960.75。", ["-0.75:"]),
    "a Chinese dash is no sign": ("结果——0.75。", []),
    "a minus in bold": ("变化 **−**0.75。", ["-0.75:"]),
    "a minus in italics": ("变化 *−*0.75。", ["-0.75:"]),
    "a comment between": ("变化 −<!-- c -->0.75。", ["-0.75:"]),
    "a minus in a span": ("变化 <span>−</span>0.75。", ["-0.75:"]),
    "a minus at a line's end": ("变化 −\n0.75。", ["-0.75:"]),
    "a range over a line break is no sign": ("第 1–\n3 轮。", ["1"]),
}

SETTING_CASES.update(MORE_SIGNS)


@pytest.mark.parametrize("prose, failing", SETTING_CASES.values(), ids=SETTING_CASES.keys())
def test_counts_are_quotes_and_settings_pass_where_the_program_declares_them(tmp_path, capsys, prose, failing):
    code, _, err = check(tmp_path, capsys, SETTINGS.replace("PROSE", prose))
    found = [re.search(r": error: (\S+)", line)[1] for line in err.splitlines() if ": error: " in line]
    assert (code, found) == ((1, failing) if failing else (0, []))


BOOK_ENDS = {  # each sentence's 0.87 is ours (not printed: fails) though 0.87 is on the book's list
    "an ASCII full stop": "The book (原书) reports 0.93. Ours is 0.87 here.",
    "a full-width full stop": "原书报告 0.93．这次 0.87。",
    "a line break": "原书报告 0.93\n下一行是 0.87。",
    "a closing quotation mark": "原书说「0.93」讲义里是 0.87。",
    "a word for our runs": "原书报告 0.93 而本文跑出来 0.87。",
    "a parenthesis of ours": "原书（本讲义的实验是 0.87）。",
    "an ellipsis": "原书报告 0.93……0.87。",
    "我": "原书报告的是 0.93 而我跑出来的是 0.87。",
    "本课": "原书是 0.93 本课的程序得到 0.87。",
    "咱们": "原书是 0.93 咱们是 0.87。",
    "our run": "The book (原书) reports 0.93 and our run 0.87.",
}


@pytest.mark.parametrize("prose", BOOK_ENDS.values(), ids=BOOK_ENDS.keys())
def test_the_books_mark_ends_where_the_sentence_turns_to_our_runs(tmp_path, capsys, prose):
    md = write(tmp_path, SETTINGS.replace("PROSE", prose), "lesson.md")
    (tmp_path / "book_figures.txt").write_text("0.93\n0.87\n")
    errors, numbers = literate.proofs.stale_numbers(literate.markdown.load(md, "lesson.md"))
    assert [re.search(r"error: (\S+)", error)[1] for error in errors] == ["0.87"]
    assert [n.text for n in numbers if n.book] == ["0.93"] * ("0.93" in prose)


@pytest.mark.parametrize("header", ["原书设置下的实测", "原书/本课"])
def test_a_column_headed_by_the_book_and_our_runs_is_ours(tmp_path, header):
    md = write(tmp_path, SETTINGS.replace("PROSE", f"| 指标 | {header} |\n|---|---|\n| 甲 | 0.87 |"),
               "lesson.md")
    (tmp_path / "book_figures.txt").write_text("0.87\n")
    errors, _ = literate.proofs.stale_numbers(literate.markdown.load(md, "lesson.md"))
    assert [re.search(r"error: (\S+)", error)[1] for error in errors] == ["0.87"]


@pytest.mark.parametrize("listed, prose, passes", [("0.93", "原书报告 −0.93。", False), ("-0.93", "原书报告 −0.93。", True),
                                                   ("−0.93", "原书报告 -0.93。", True), ("-0.93", "原书报告 0.93。", True),
                                                   ("0.93", "原书报告 +0.93。", True)])
def test_the_books_figures_keep_their_sign(tmp_path, listed, prose, passes):
    md = write(tmp_path, SETTINGS.replace("PROSE", prose), "lesson.md")
    (tmp_path / "book_figures.txt").write_text(listed + "\n")
    errors, _ = literate.proofs.stale_numbers(literate.markdown.load(md, "lesson.md"))
    assert (errors == []) == passes


@pytest.mark.parametrize("declaration", ['LR = 0.003  # 训练 350 轮', 'HELP = """\nROUNDS = 350\n"""',
                                         'X = "350"', 'def f():\n    ROUNDS = 350'])
def test_only_a_top_level_value_declares_a_setting_not_a_comment_or_a_string(tmp_path, capsys, declaration):
    text = SETTINGS.replace("PROSE", "训练了 350 轮。").replace("ROUNDS = 2000  # a setting the lesson chose", declaration)
    code, _, err = check(tmp_path, capsys, text)
    assert code == 1 and "350 is not printed" in err


def test_a_number_written_without_a_sign_is_not_told_about_signs(tmp_path, capsys):
    code, _, err = check(tmp_path, capsys, SETTINGS.replace("PROSE", "变化<!-- 数字出自 generated/a.py -->是 0.2。"))
    assert code == 1 and "0.2 is not printed" in err and "sign" not in err


# ---------------------------------------------------------------- numbers of any length

BIG = "1234567890" * 500


def test_a_rounding_of_thousands_of_decimals_is_a_quote(tmp_path, capsys):
    code, out, err = check(tmp_path, capsys, lesson(f"Accuracy 0.{BIG}.", f"value 0.{BIG}1"))
    assert code == 0, err


def test_a_stale_number_of_thousands_of_digits_gets_a_short_line_that_tells_it_apart(tmp_path, capsys):
    code, _, err = check(tmp_path, capsys, lesson(f"Accuracy 0.{BIG}2.", f"value 0.{BIG}1"))
    assert code == 1
    line = next(line for line in err.split("\n") if "is not printed" in line)
    assert len(line) < 400 and "…" in line and "(5,003 characters)" in line, line
    assert "0123456789012…" not in line and "012345678902 (5,003" in line  # the last digits: where the two differ
