"""The notebook's Markdown cells, read the way a stranger's viewer reads them: rendered by a CommonMark renderer
that keeps raw HTML and checks no link (as marked does), once as they are and once with the formulas taken out
first, the way JupyterLab does. Whatever the lesson holds, the HTML that comes out has no tag but the page's few,
no event handler, no link the page would not keep, nothing loaded; and what the lesson says comes out as it said it.

These tests need no kernel: only nbformat (requirements-notebook.txt), like notebook.py."""

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("nbformat", reason="notebook.py needs nbformat: make test installs requirements-notebook.txt")

from markdown_it import MarkdownIt  # noqa: E402

import literate.markdown  # noqa: E402
from conftest import small_lesson  # noqa: E402
from literate.inline import safe_url  # noqa: E402
from literate.notebook import command as notebook  # noqa: E402
from test_notebook_math import assert_math_inert, without_math  # noqa: E402  (JupyterLab's two passes over math)

BASE = small_lesson("PROSE")

# What the rendered cells may hold: the tags of plain Markdown, the captions' anchors, <details> and <summary>, and
# the bare <span> that holds a \ or $ of the text alone (where JupyterLab's MathJax cannot pair it).
TAGS = {"p", "a", "code", "pre", "em", "strong", "ul", "ol", "li", "blockquote", "hr", "br", "table", "thead", "tbody",
        "tr", "th", "td", "details", "summary", "h1", "h2", "h3", "h4", "h5", "h6", "span"}


def renderer() -> MarkdownIt:
    """A CommonMark renderer that keeps raw HTML and lets every link through (marked's defaults)."""
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    md.validateLink = lambda url: True
    return md


class Inert(HTMLParser):
    """Fails on a tag or attribute that could run, load or lead anywhere the page would not."""

    def __init__(self, source: str):
        super().__init__(convert_charrefs=True)
        self.source, self.links = source, []

    def handle_starttag(self, tag, attrs):
        assert tag in TAGS, (tag, self.source)
        for name, value in attrs:
            allowed = {"a": {"href", "id", "title"}, "ol": {"start"}, "code": {"class"}, "th": {"style"},
                       "td": {"style"}}.get(tag, set())
            assert name in allowed, (tag, name, value, self.source)
            if name == "href":
                assert safe_url(value or "") is not None, (value, self.source)
                self.links.append(value)
            if name == "style":
                assert re.fullmatch(r"text-align:(left|center|right)", value or ""), (value, self.source)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)


def assert_inert(markdown: str) -> list[str]:
    """The cell rendered as it is and with its formulas taken out (JupyterLab): inert both ways, math only where
    the lesson wrote a formula; the links in it."""
    links = []
    text, math = without_math(markdown)
    for source in (markdown, text):
        checker = Inert(markdown)
        checker.feed(renderer().render(source))
        checker.close()
        links += checker.links
    assert_math_inert(markdown)  # only the lesson's formulas are math, and they hold no command that links or loads
    return links


def markdown_cells(folder: Path, text: str) -> list[str]:
    md = folder / "lesson.md"
    md.write_text(text, encoding="utf-8")
    return [cell.source for cell in notebook.build(literate.markdown.load(md, str(md))).cells
            if cell.cell_type == "markdown"]


def lesson(prose: str, declared: str = "") -> str:
    return declared + BASE.replace("PROSE", prose)


# ---------------------------------------------------------------- the stranger's cases


def test_the_declared_words_are_written_as_the_lessons_prose(tmp_path):
    declared = ("<!-- literate\nnotebook-runs: <img src=x onerror=alert(12)> runs\nnotebook-names: <svg onload=alert(13)>\n"
                "notebook-try: 改 `BOOK` 和 **试验场** <script>alert(14)</script> [x](javascript:alert(15))\n-->\n\n")
    cells = markdown_cells(tmp_path, lesson("正文。", declared))
    note = next(cell for cell in cells if cell.startswith("**这是讲义的笔记本版**"))
    assert_inert(note)
    html = renderer().render(note)
    assert "&lt;img src=x onerror=alert(12)&gt; runs" in html and "&lt;svg onload=alert(13)&gt;" in html
    assert "&lt;script&gt;alert(14)&lt;/script&gt;" in html and "[x](javascript:alert(15))" in html
    assert "<code>BOOK</code>" in html and "<strong>试验场</strong>" in html  # the declared Markdown still reads


LINKS = {  # the stranger's links, and what is left of each: a link to a relative path, as on the page, or none
    "over two lines": ("A [multi\nline](javascript:alert(2)) link.", []),
    "nested brackets": ("Nested [a [b] c](javascript:alert(3)) brackets.", []),
    "parentheses in parentheses": ("Parens [x](javascript:alert((4))) deep.", []),
    "a title in single quotes": ("Title [x](javascript:alert(5) 'single') quoted.", []),
    "an escaped colon": ("Escaped [x](javascript\\:alert(6)) colon.", []),
    "a colon as a character reference": ("Entity [x](javascript&#58;alert(7)) colon.", []),
    "a reference": ("Ref [x][r] link.\n\n[r]: javascript:alert(8)", []),
    "an image with a character reference": ("Image ![pic](javascript&#58;alert(11)) here.", []),
    "a reference made of an escaped ampersand": ("Amp [x](javascript&amp;#58;alert(20)) here.",
                                                 ["javascript&#58;alert(20)"]),  # a file of that name: no scheme
    "an autolink": ("Auto <javascript:alert(21)> here.", []),
    "a data link": ("[点我](data:text/html,<script>alert(1)</script>)", []),
    "spaces in the scheme": ("[点我](<java\tscript:alert(1)>)", ["java%09script:alert(1)"]),  # %09: no scheme
    "a backslash host": ("[x](\\\\host\\share) 和 [y](/\\evil.com/x)", ["%5Chost%5Cshare", "/%5Cevil.com/x"]),
}


@pytest.mark.parametrize("prose, left", LINKS.values(), ids=LINKS.keys())
def test_a_link_is_kept_only_where_the_page_would_keep_it(tmp_path, prose, left):
    [first, *_] = markdown_cells(tmp_path, lesson(prose))
    assert assert_inert(first) == left * 2  # rendered as it is, and with its formulas taken out


def test_links_the_page_keeps_are_kept_and_lead_where_they_led(tmp_path):
    prose = ("站外 [书](https://zh.d2l.ai/a_(b).html \"它的 \\\"标题\\\"\")，页内 [下面](#完整实现)，相对 [文档](docs/页面.md#第-2-节)，"
             "邮件 <mailto:a@b.c>，图 ![一张图](figures/a.png)。")
    [first, *_] = markdown_cells(tmp_path, lesson(prose))
    html = renderer().render(first)
    assert assert_inert(first) == [
        "https://zh.d2l.ai/a_(b).html", "#%E5%AE%8C%E6%95%B4%E5%AE%9E%E7%8E%B0",
        "docs/%E9%A1%B5%E9%9D%A2.md#%E7%AC%AC-2-%E8%8A%82", "mailto:a@b.c", "figures/a.png"] * 2
    assert 'title="它的 &quot;标题&quot;"' in html and "图片：一张图" in html and "<img" not in html


def test_an_escaped_backtick_is_text_and_what_follows_it_too(tmp_path):
    [first, *_] = markdown_cells(tmp_path, lesson("A \\`<img src=x onerror=alert(1)>` escaped backtick."))
    assert_inert(first)
    assert "<p>A `&lt;img src=x onerror=alert(1)&gt;` escaped backtick.</p>" in renderer().render(first)


FORMULAS = {
    "a dollar inside $`...`$": "Math $`a$ <img src=x onerror=alert(9)> $b`$ dollars.",
    "$$ inside a math fence": "```math\nx $$ <img src=x onerror=alert(10)> $$ y\n```",
    "a tag in \\text": "Inside $`\\text{<img src=x onerror=alert(18)>}`$ text.",
    "\\unicode": "Uni $`\\unicode{<script>}`$ code.",
    "a link in a formula": "Link $`[x](javascript:alert(19))`$ here.",
    "\\href": "Href $`\\href{javascript:alert(22)}{x}`$ and $$\\href{javascript:alert(23)}{y}$$ here.",
    "a closing backslash": "Back $`a\\`$ <img src=x onerror=alert(24)> $`b`$ here.",
    "a table cell": "| a | b |\n|---|---|\n| $`x\\|<img src=x onerror=alert(25)>`$ | y |",
}


@pytest.mark.parametrize("prose", FORMULAS.values(), ids=FORMULAS.keys())
def test_a_formula_cannot_close_early_nor_hold_a_tag(tmp_path, prose):
    cells = markdown_cells(tmp_path, lesson(prose))
    for cell in cells:
        assert_inert(cell)
    first = cells[0]
    _, math = without_math(first)
    assert math and not any("alert" in formula and "<" in formula for formula in math)


def test_a_formula_is_written_the_way_jupyter_reads_it():
    from literate.notebook import escaping
    assert escaping.formula("a < b", False) == "$a \\lt  b$"
    assert escaping.formula("x $$ y", True) == "$$x \\$\\$ y$$"
    assert escaping.formula("\\$5", False) == "$\\$5$"  # an escaped dollar stays one
    assert escaping.formula("[0, 1](x)", False) == "$[0, 1]{}(x)$"
    assert escaping.formula("\\href{u}{x}", False) == "$\\backslash\\mathrm{href}{u}{x}$"
    assert escaping.formula("a|b", False, table=True) == "$a\\vert b$"


HTML = {
    "a comment before a fold": "<!-- c --><details>\n<summary>s</summary>\n`<img src=x onerror=alert(30)>`\n\n</details>",
    "a fold with a handler": "<details open ontoggle=alert(31)><summary>s *t* [u](javascript:alert(32))</summary>\n\n正文\n\n</details>",
    "a fold never closed": "<details>\n\n`<img src=x onerror=alert(33)>`",
    "an anchor alone on its line": '<a name="x">\n`<img src=x onerror=alert(34)>`',
    "a div": "<div>\n[x](javascript:alert(35)) *y*\n</div>",
    "a tag in a heading": "## 标题 <img src=x onerror=alert(36)>",
    "a tag in a table": "| a | b |\n|---|---|\n| <img src=x onerror=alert(37)> | `|<script>` |",
    "a tag in a list and a quote": "- <img src=x onerror=alert(38)>\n\n> <script>alert(39)</script>\n> `<b>`",
    "a script block": "<script>\nalert(40)\n\n`<img src=x onerror=alert(41)>`\n</script>",
}


@pytest.mark.parametrize("prose", HTML.values(), ids=HTML.keys())
def test_the_authors_html_keeps_only_folds_and_anchors(tmp_path, prose):
    for cell in markdown_cells(tmp_path, lesson(prose)):
        assert_inert(cell)


def test_a_caption_anchor_becomes_an_id_that_nothing_can_follow(tmp_path):
    """<a name="chunk-..."> of a caption is <a id> closed at once: alone on a line, an open <a id> would start an
    HTML block, in which a code span is no code and its < a live tag."""
    prose = '<a name="chunk-body"></a>**〈body〉**'
    text = lesson("").replace('```python {#body}', prose + "\n```python {#body}")
    text = text.replace("```python {file=", '<a name="file-generated/a.py"></a>**〈generated/a.py〉**，由这些代码块依次拼成：'
                        "[〈body〉](#chunk-body)\n```python {file=").replace("```text {transcript}",
                        '<a name="output-generated/a.py"></a>**〈generated/a.py〉的实跑输出**\n```text {transcript}')
    cells = markdown_cells(tmp_path, text)
    anchors = [cell for cell in cells if '<a id="cell-id=' in cell]
    assert len(anchors) == 3 and all(re.match(r'<a id="cell-id=(chunk|file|output)-[0-9a-f]{12}"></a>', cell)
                                     for cell in anchors)
    for cell in cells:
        assert_inert(cell)


FRAGMENTS = ["<", ">", '"', "&", "&#58;", "=", "/", "\\", "script", "img", "onerror", "javascript:", "\\text{", "}", "$",
             "$$", "`", "``", "<!--", "-->", "<a ", '<a name="chunk-x">', "</a>", "<details>", "href=", "x", " ", "0.75",
             "*", "_", "[", "]", "](", "![", ")", "(", "\n", "\n\n", "|", "#", "1.", "- ", "> ", "~~~", "```", "    ",
             "{", "\\(", "\\\\[", "\\)", "\\begin{a}", "\\end{a}", "\\ref{x}", "\\href{https://e.x/}{y}", ' "t"']


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prose=st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
def test_any_mix_of_hostile_fragments_makes_inert_cells(tmp_path, prose):
    md = tmp_path / "lesson.md"
    md.write_text(lesson(prose), encoding="utf-8")
    try:
        doc = literate.markdown.load(md, str(md))
    except literate.model.UserError:  # refused as bad input (an unclosed fence, ...): nothing to render
        return
    for cell in notebook.build(doc).cells:
        if cell.cell_type == "markdown":
            assert_inert(cell.source)


# ---------------------------------------------------------------- nothing lost


FAITHFUL = """\
# 课：`code` 和 *强调*

6.5 节；2 * 3 * 4；a_b_c；\\*不是强调\\*；[方括号] 和 [x]；价格 $5 和 $6；&amp;lt; 和 &copy;；C:\\path\\to；a\\\\b；
``有 ` 的代码``；a < b 和 a<b；*em*、**strong** 和 ***both***；反斜杠换行\\
下一行 [站外](https://example.com/a_(b) "标题 \\\\ 和 $")、<https://example.com/>，`C:\\路径 $PATH`，\\\\(x\\\\)。

1\\. 不是列表，\\# 不是标题，\\> 不是引用，\\- 也不是，\\+ 也不是；
\\=== 也不是下划线

3. 从 3 开始
4. 紧的列表
   - 套着的
   - 列表

- 松的列表

- 第二项

  第二段

0. 从 0 开始的
1. 另一个列表

> 引用里的 *字*
>
> - 和列表

| 甲 | 乙 \\| 丙 | 丁 |
|:---|:---:|---:|
| `a \\| b` | 1.5 | **粗** |

---

    缩进的代码 <b>
    第二行

````text
``` 里面有三个反引号
````

~~~ text `带反引号的信息`
内容
~~~

设置的标题
---

<details>
<summary>折起来的 1. 一段</summary>

里面

</details>
"""


def test_escaping_loses_nothing_the_lesson_says(tmp_path):
    """The opening of a lesson full of characters Markdown reads as markup, and of every kind of block: its
    notebook cell renders to the same HTML as the lesson does, but for a bare <span> around each \\ and $ of text."""
    text = FAITHFUL + "\n" + BASE.replace("# 课\n\nPROSE\n\n", "")
    first, note, second, *_ = markdown_cells(tmp_path, text)  # a cell at each heading, the note before the first ##
    assert note.startswith("**这是讲义的笔记本版**") and second.startswith("## 设置的标题\n")
    written = renderer().render(first + "\n\n" + second + "\n")
    assert "<span>\\</span>" in written and "<span>$</span>" in written  # where JupyterLab's MathJax reads no math
    assert written.replace("<span>", "").replace("</span>", "") == renderer().render(FAITHFUL)


def test_markup_shown_as_text_is_shown_as_written(tmp_path):
    """What is not kept of the author's HTML reads as its source, every ] of a CDATA section, the case and blanks
    of an end tag; a marked section html.parser does not know (which made it raise) too."""
    prose = "A <![CDATA[ 0.77 ]]> B <?php 1 ?> </B >\n\n<div>\n<![bogus 0.77]> <![CDATA[ 0.88 ] ]> </Span >\n</div>"
    [first, *_] = markdown_cells(tmp_path, lesson(prose))
    assert_inert(first)
    shown = html.unescape(re.sub(r"<[^>]*>", "", renderer().render(first)))
    assert "A <![CDATA[ 0.77 ]]> B <?php 1 ?> </B >" in shown
    assert "<div>\n<![bogus 0.77]> <![CDATA[ 0.88 ] ]> </Span >\n</div>" in shown


def test_the_cells_are_written_from_the_blocks_not_from_the_lessons_lines(tmp_path):
    """No pattern over the lesson's lines decides what a cell holds (one did: links over two lines, escaped
    backticks and a line of [ got past it, the last in time quadratic in the line): with every line of the
    lesson made hostile after it was read, the cells are the same."""
    md = tmp_path / "lesson.md"
    md.write_text(FAITHFUL + "\n" + BASE.replace("# 课\n\nPROSE\n\n", ""), encoding="utf-8")
    doc = literate.markdown.load(md, str(md))
    before = [cell.source for cell in notebook.build(doc).cells]
    doc.lines = ["<img src=x onerror=alert(1)> [x](javascript:alert(2))"] * len(doc.lines)
    assert [cell.source for cell in notebook.build(doc).cells] == before


def test_a_long_line_of_brackets_is_text(tmp_path):
    """A line of 50,000 [ (which a pattern tried at every [ took time quadratic in): one text, written once."""
    [first, *_] = markdown_cells(tmp_path, lesson("x " + "[" * 50_000))
    assert first == "# 课\n\nx " + "[" * 50_000
