"""The lesson's language: read from its prose or declared, it chooses the prose rules that hang on words and the
words the page, the notebook and the figures write around the lesson's own."""

import dataclasses
import re

import pytest

import literate.markdown
import literate.notebook.words
import literate.page.words
from conftest import run, small_lesson, write
from literate import captions, drawing, quoting
from literate.declarations import Heatmap
from literate.inline import NUMBER
from literate.language import RULES, read_language
from literate.notebook import cells
from literate.page import command as weave
from literate.tables import parse_matrices

CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("declared, prose, language", [
    (None, ["# 温度", "softmax 把分数变成概率"], "zh"),
    (None, ["# Temperature", "softmax turns scores into probabilities (概率)"], "zh"),  # any Chinese character
    (None, ["# Temperature", "softmax turns scores into probabilities"], "en"),
    (None, ["", "0.5"], "zh"),  # no words at all: the tools' first language
    (None, ["**〈训练 循环〉**", "The loop, as 原书 has it"], "en"),  # a chunk's name and the book's mark: any lesson's
    ("en", ["# 温度"], "en"),  # declared: as declared
])
def test_the_language_is_declared_or_read_from_the_prose(declared, prose, language):
    assert read_language(declared, prose) == language


def exempt(language: str, text: str) -> list[str]:
    """The numbers of text that the rules of language take for references to the world (not checked)."""
    return [match[0] for match in NUMBER.finditer(text)
            if RULES[language].is_reference(text, match.start(), match.end())]


def measured(language: str, text: str) -> list[str]:
    """The numbers of text that stand before a measure word."""
    return [match[0] for match in NUMBER.finditer(text) if RULES[language].is_measured(text, match.end())]


def test_each_language_exempts_its_own_references_to_the_world():
    assert exempt("zh", "2017 年，第 12 章，6.5 节，损失 0.41，年龄 30 岁，3 节点") == ["2017", "12", "6.5"]
    english = "In 2017 (and since 2019), see chapter 12, section 6.5 and § 7; in 3 rounds the loss was 2017.5 or 1999"
    assert exempt("en", english) == ["2017", "2019", "12", "6.5", "7"]
    assert exempt("en", "in 1000 steps, scaled by 1024, (1024), (2017 runs), in\n2017, Chapter\n3") == ["2017", "3"]
    assert exempt("en", "2. Walking downhill") == ["2"] and exempt("en", "2.5 is the rate. 3. Then") == []
    assert exempt("zh", english) == []  # the words of the other language are no reference


def test_each_language_has_its_own_measure_words():
    assert measured("zh", "跑了 3000 轮，16 维，10 位，损失 41 行不行") == ["3000", "16", "10"]
    assert measured("en", "after 3000 rounds, a 2-layer net of 16 dimensions; 3 roundabouts") == ["3000", "2", "16"]
    assert measured("en", "跑了 3000 轮") == [] and measured("zh", "3000 rounds") == []


def test_an_english_sentence_ends_at_its_full_stop():
    ends = [match.end() for match in RULES["en"].sentence_end.finditer("It is 0.5. Then 1.5! Done")]
    assert ends == [10, 20]
    text = 'Small, e.g. 0.4 vs. 0.3 in Fig. 3 ("as said.") Next'
    assert [text[: match.end()][-7:] for match in RULES["en"].sentence_end.finditer(text)] == ['said.")']
    assert [match.end() for match in RULES["zh"].sentence_end.finditer("It is 0.5. Then 1.5! 好。")] == [23]


ENGLISH_LESSON = small_lesson("After 3000 rounds the value was 0.75, as in 2017.", title="Values",
                              printed=("value 0.75",)).replace('print("value 0.75")',
                                                               'ROUNDS = 3000\nprint("value 0.75")')


def test_an_english_lesson_is_checked_by_the_english_rules(tmp_path, capsys):
    md = write(tmp_path, ENGLISH_LESSON, "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    assert run(capsys, "check", md)[0] == 0  # 3000 rounds: a declared setting; in 2017: a year
    chinese = ENGLISH_LESSON.replace("# Values", "# 数值")  # the same prose, read by the Chinese rules
    write(tmp_path, chinese, "lesson.md")
    code, _, err = run(capsys, "check", md)
    assert code == 1 and "3000" in err and "2017" in err  # rounds is no measure word here, nor in 2017 a year
    written = ENGLISH_LESSON.replace("# Values", "<!-- literate\nlanguage: zh\n-->\n\n# Values")  # declared: zh
    write(tmp_path, written, "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, _, err = run(capsys, "check", md)
    assert code == 1 and "2017" in err


def page_of(tmp_path, text: str) -> str:
    md = write(tmp_path, text, "lesson.md")
    out = tmp_path / "page.html"
    assert weave.main([str(md), "-o", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def test_the_page_speaks_the_lessons_language(tmp_path):
    english = ENGLISH_LESSON.replace("After", "## Part one\n\nAfter")
    page = page_of(tmp_path, english)
    assert '<html lang="en">' in page and "<h2>Contents</h2>" in page and "verified: 1" in page
    assert not CHINESE.search(page)
    page = page_of(tmp_path, english.replace("# Values", "# 数值"))
    assert '<html lang="zh-CN">' in page and "<h2>目录</h2>" in page and "1 个核对过" in page


def test_the_notebook_speaks_the_lessons_language(tmp_path):
    md = write(tmp_path, ENGLISH_LESSON.replace("as in 2017.", "as in 2017 ([link](ftp://example.com/x))."), "lesson.md")
    assert weave.main([str(md), "-o", str(tmp_path / "page.html")]) == 0
    doc = literate.markdown.load(md, str(md))
    notebook = cells.build(doc)
    text = "\n".join(cell.source for cell in notebook.cells)
    assert "This is the lesson as a notebook" in text and "(link removed:" in text and not CHINESE.search(text)


def fields(words) -> dict:
    """Each word's {fields}, by its key (or attribute, and key within it)."""
    if dataclasses.is_dataclass(words):
        words = dataclasses.asdict(words)
    found = {}
    for key, value in words.items():
        for inner, text in (value.items() if isinstance(value, dict) else [("", value)]):
            texts = text if isinstance(text, tuple) else (text,)  # a word said in parts (the .venv, then again)
            found[key, inner] = [sorted(re.findall(r"\{(\w+)\}", part)) for part in texts]
    return found


@pytest.mark.parametrize("table", [literate.page.words.WORDS, literate.notebook.words.WORDS, drawing.HEATMAP_WORDS,
                                   captions.CAPTION_WORDS, quoting.LIST_WORDS])
def test_both_languages_have_every_word_with_the_same_fields(table):
    assert set(table) == {"zh", "en"}
    assert fields(table["en"]) == fields(table["zh"])


def test_a_heatmap_speaks_the_lessons_language():
    matrix = ["     1     2", "输出 1  0.50  0.50", "输出 2  0.10  0.90", "图例"]
    [found] = parse_matrices(matrix, Heatmap("输出", "输入", "图例"))
    english = drawing.heatmaps_svg(found.panels, "weights", Heatmap("输出", "输入", "图例"), "en", tooltips=True)
    assert "rows: 输出 position" in english and "(0.2 × even)" in english
    assert "第几位" not in english and "均匀" not in english
    chinese = drawing.heatmaps_svg(found.panels, "权重", Heatmap("输出", "输入", "图例"), "zh", tooltips=True)
    assert "行：输出第几位" in chinese and "（均匀的 0.2 倍）" in chinese


def test_an_english_lesson_marks_the_books_figures_and_cites_in_english(tmp_path, capsys):
    text = ENGLISH_LESSON.replace("After 3000 rounds the value was 0.75, as in 2017.",
                                  "The book reports 0.93, and we measured 0.75.\n\n"
                                  "<!-- numbers from generated/a.py -->\nThe value was 0.75.")
    md = write(tmp_path, text, "lesson.md")
    (tmp_path / "book_figures.txt").write_text("0.93\n")
    assert run(capsys, "tangle", md)[0] == 0
    assert run(capsys, "check", md)[:2] == (0, "checked 3 prose numbers (1 marked as the book's); transcript matches\n")
    assert run(capsys, "quotes", md)[0] == 0
    listed = (tmp_path / "lesson.quotes.txt").read_text(encoding="utf-8")
    assert listed.startswith("# Which line of output") and "\tthe book\t0.93\n" in listed and not CHINESE.search(listed)
    write(tmp_path, text.replace("0.93, and", "0.94, and"), "lesson.md")
    code, _, err = run(capsys, "check", md)
    assert code == 1 and "0.94" in err  # the book does not print it


def test_a_list_of_quotes_in_either_language_reads_the_same(tmp_path, capsys):
    text = ENGLISH_LESSON.replace("After 3000 rounds the value was 0.75, as in 2017.", "A rate of 0.5 is chosen.")
    md = write(tmp_path, text, "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    for words in ("not a quote", "不是引用"):
        (tmp_path / "lesson.quotes.txt").write_text(f"A rate of ⟦0.5⟧ is chosen.\t{words}\tthe lesson chose it\n",
                                                    encoding="utf-8")
        assert run(capsys, "check", md)[0] == 0


def test_a_number_a_modules_function_computes_from_is_no_setting(tmp_path, capsys):
    """RATE = math.log(2) / 5730 declares no 2: "2 steps" must be printed; ROUNDS = 3000 declares 3000."""
    text = ENGLISH_LESSON.replace("ROUNDS = 3000", "import math\nRATE = math.log(2) / 5730\nROUNDS = 3000").replace(
        "as in 2017.", "as in 2017, after 2 steps.")
    md = write(tmp_path, text, "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, _, err = run(capsys, "check", md)
    assert code == 1 and "error: 2 is not printed" in err and "error: 3000" not in err


def test_a_span_of_years_is_checked_and_only_a_year_before_nian_is_not():
    rules = RULES["zh"]
    assert rules.is_reference("2017 年的论文", 0, 4)
    assert not rules.is_reference("存 10 年后", 2, 4) and rules.is_measured("存 10 年后", 4)  # a count: checked
    assert rules.is_reference("第 12 章", 2, 4) and rules.is_reference("6.5 节", 0, 3)
