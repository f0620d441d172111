"""Tests of weave.py: the structure of the page, read with html.parser (no browser; see test_weave_browser.py)."""

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("latex2mathml", reason="weave.py needs latex2mathml: make test installs requirements-html.txt")

import literate.inline  # noqa: E402
import literate.blocks  # noqa: E402
import literate.figures  # noqa: E402
import literate.markdown  # noqa: E402
import literate.model  # noqa: E402
import literate.proofs  # noqa: E402
import literate.prose  # noqa: E402
import tangle  # noqa: E402
from literate import model  # noqa: E402
from literate.page import code  # noqa: E402
from literate.declarations import Heatmap  # noqa: E402
from literate import drawing, tables  # noqa: E402

HEATMAP = Heatmap("输出", "输入", "图例")  # as attention.md declares it
from literate.page import command as weave  # noqa: E402  (weave.py's main)
from literate.page.numbers import is_count  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr", "mspace", "none", "mprescripts"}


class Element:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self) -> str:
        return "".join(child if isinstance(child, str) else child.text() for child in self.children)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def iter(self):
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter()

    def ancestors(self):
        node = self.parent
        while node is not None:
            yield node
            node = node.parent


class Tree(HTMLParser):
    """Just enough of a DOM: elements with attributes, children and text."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.root = self.node = Element("#document", {}, None)
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        element = Element(tag, attrs, self.node)
        self.node.children.append(element)
        if tag not in VOID:
            self.node = element

    def handle_startendtag(self, tag, attrs):
        self.node.children.append(Element(tag, attrs, self.node))

    def handle_endtag(self, tag):
        node = self.node
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.node = node.parent

    def handle_data(self, data):
        self.node.children.append(data)

    def all(self, tag=None, cls=None):
        return [e for e in self.root.iter() if (tag is None or e.tag == tag) and (cls is None or cls in e.classes())]

    def by_id(self) -> dict[str, Element]:
        found = {}
        for element in self.root.iter():
            if "id" in element.attrs:
                assert element.attrs["id"] not in found, f"duplicate id {element.attrs['id']}"
                found[element.attrs["id"]] = element
        return found


def matrix(rows: int, columns: int, peak: bool = True) -> str:
    header = "          " + "".join(f"{j + 1:>6}" for j in range(columns))
    lines = [header]
    for i in range(rows):
        values = [0.75 if peak and j == columns - 1 - i else 0.02 for j in range(columns)]
        lines.append(f"输出 {i + 1:<3}  " + "".join(f"{v:6.2f}" for v in values))
    return "\n".join(lines)


def glyphs(size: int) -> str:
    """The same matrix drawn in characters, as the lesson's programs print it: a frame of | around each row."""
    lines = ["         " + " ".join(str(j + 1) for j in range(size))]
    for i in range(size):
        cells = ["██" if j == size - 1 - i else "  " for j in range(size)]
        lines.append(f"输出 {i + 1:<2} |{''.join(cells)}|")
    return "\n".join(lines)


# As attention.md is written: a caption above each fence, the transcript in parts under the code that prints them.
LESSON = """\
<!-- literate
heatmap: 输出 输入 图例
-->

# 小讲义

## 一、数字

正文说准确率是 0.9300，另一个数 1.2345；原书是 0.25。年份 2017 年和 6.5 节不用核对。

| 做法 | 原书 | 本仓库实测 |
|---|---|---|
| 甲 | 0.25 | 0.9300 |

打错的数字 0.9301 不会被链接。

## 二、公式

行内公式 $x_1 + y$ 和 GitHub 写法 $`\\frac{{a}}{{b}}`$，还有带反斜杠的 $h_t\\, W$。

$$\\alpha = \\mathrm{{softmax}}\\!\\left(\\frac{{K q}}{{\\sqrt{{d}}}}\\right)$$

```math
\\sum_i \\alpha_i V_i
```

## 三、程序

<a name="file-generated/p.py"></a>**〈generated/p.py〉**，由这些代码块依次拼成：[〈打印 结果〉](#chunk-打印_结果)
```python {{file=generated/p.py}}
import sys
<<打印 结果>>
```

<a name="chunk-打印_结果"></a>**〈打印 结果〉**，由这些代码块依次拼成：[〈打印 矩阵〉](#chunk-打印_矩阵)
```python {{#打印 结果}}
print("acc 0.9300 x 1.2345")
<<打印 矩阵>>
```

<a name="output-generated/p.py-1"></a>**〈generated/p.py〉的实跑输出（第 1 段）**
```text {{transcript=generated/p.py part=1}}
acc 0.9300 x 1.2345
```

<a name="chunk-打印_矩阵"></a>**〈打印 矩阵〉**

```python {{#打印 矩阵}}
print(MATRIX)
```

<a name="chunk-打印_结果-2"></a>**〈打印 结果〉（续）**
```python {{#打印 结果}}
print("more 0.6180")
```

矩阵在[第二段](#output-generated/p.py-2)里，它的最后一行印的是 0.6180。

<a name="output-generated/p.py-2"></a>**〈generated/p.py〉的实跑输出（第 2 段）**
```text {{transcript=generated/p.py part=2}}
权重：
{big}
{glyphs}
图例：深的大

{small}
more 0.6180
```
"""


def lesson(folder: Path, captions: bool = True) -> Path:
    md = folder / "lesson.md"
    text = LESSON.format(big=matrix(10, 10), glyphs=glyphs(10), small=matrix(3, 3))
    if not captions:  # a lesson may have none: the page names the fences itself
        text = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("<a name="))
    md.write_text(text)
    (folder / "book_figures.txt").write_text("0.25\n")
    return md


def md_line(md: Path, text: str) -> int:
    """The line of the Markdown that is exactly text (the one line)."""
    [line] = [i for i, line in enumerate(md.read_text().split("\n"), 1) if line == text]
    return line


def build(capsys, md: Path, *extra) -> tuple[int, str, str, Path]:
    out = md.parent / "build" / "page.html"
    code = weave.main([str(md), "-o", str(out), *extra])
    stdout, stderr = capsys.readouterr()
    return code, stdout, stderr, out


@pytest.fixture
def small(tmp_path, capsys):
    md = lesson(tmp_path)
    code, stdout, stderr, out = build(capsys, md)
    assert code == 0, stderr
    return md, Tree(out.read_text()), out.read_text(), stdout, stderr


@pytest.fixture
def plain(tmp_path, capsys):
    md = lesson(tmp_path, captions=False)
    code, stdout, stderr, out = build(capsys, md)
    assert code == 0, stderr
    return md, Tree(out.read_text()), out.read_text(), stdout, stderr


def caption_of(figure: Element) -> Element:
    return next(e for e in figure.iter() if e.tag == "figcaption")


def in_order(tree: Tree) -> list[str]:
    """The ids of the page's figures (code and transcripts), in the order they stand."""
    return [e.attrs["id"] for e in tree.root.iter() if e.tag == "figure" and e.classes() & {"chunk", "transcript"}]


# ---------------------------------------------------------------- chunks and their captions


def test_the_captions_written_above_the_fences_name_them_once(small):
    md, tree, page, _, _ = small
    ids = tree.by_id()
    titles = {"file-generated/p.py": "〈generated/p.py〉", "chunk-打印_结果": "〈打印 结果〉",
              "chunk-打印_矩阵": "〈打印 矩阵〉", "chunk-打印_结果-2": "〈打印 结果〉（续）",
              "output-generated/p.py-1": "〈generated/p.py〉的实跑输出（第 1 段）",
              "output-generated/p.py-2": "〈generated/p.py〉的实跑输出（第 2 段）"}
    for anchor, title in titles.items():
        figure = ids[anchor]
        assert figure.tag == "figure", anchor
        name = next(e for e in caption_of(figure).iter() if "name" in e.classes())
        assert name.attrs["href"] == f"#{anchor}" and name.text() == title
    # the caption's paragraph is not drawn a second time, nor its <a name>
    body = tree.all("main")[0]
    assert not [p for p in body.iter() if p.tag == "p" and p.text().startswith("〈")]
    assert "<a name=" not in page and "**" not in body.text()
    assert body.text().count("〈打印 结果〉（续）") == 1
    assert "≡" not in body.text()  # the page's own names are for lessons without captions
    # the caption's link list is the root's list of parts; the page adds none of its own
    links = [e for e in caption_of(ids["file-generated/p.py"]).iter() if e.tag == "a" and "name" not in e.classes()]
    assert [(e.attrs["href"], e.text()) for e in links] == [("#chunk-打印_结果", "〈打印 结果〉")]
    assert not tree.all("div", "parts")
    # which of the chunk's two fences, where it stands, and a way to the other
    second = caption_of(ids["chunk-打印_结果-2"])
    fences = [i for i, line in enumerate(md.read_text().split("\n"), 1) if line == "```python {#打印 结果}"]
    assert "第 2 段，共 2 段" in second.text() and "lesson.md" not in second.text()  # the reader's view is the lesson's
    assert second.attrs["title"].startswith(f"lesson.md:{fences[1]}")  # where it stands: in the tooltip
    assert any(e.tag == "a" and e.attrs["href"] == "#chunk-打印_结果" for e in second.iter())


def test_without_captions_the_page_names_each_fence(plain):
    _, tree, _, _, _ = plain
    ids = tree.by_id()
    for anchor in ("chunk-打印_结果", "chunk-打印_结果-2", "chunk-打印_矩阵", "file-generated/p.py",
                   "output-generated/p.py-1", "output-generated/p.py-2"):
        assert ids[anchor].tag == "figure", anchor
        name = next(e for e in caption_of(ids[anchor]).iter() if "name" in e.classes())
        assert name.attrs["href"] == f"#{anchor}"
    assert "<<打印 结果>> ≡" in caption_of(ids["chunk-打印_结果"]).text()
    assert "第 2 段，共 2 段" in ids["chunk-打印_结果-2"].text()
    assert "第 2 段，共 2 段" in caption_of(ids["output-generated/p.py-2"]).text()
    parts = tree.all("div", "parts")[0]  # the root lists its parts in order, nested
    names = [e.text() for e in parts.iter() if e.tag == "a" and e.attrs["href"].startswith("#chunk-")]
    assert names == ["<<打印 结果>>", "<<打印 矩阵>>"]


@pytest.mark.parametrize("variant", ["small", "plain"])
def test_references_link_to_their_chunk_and_chunks_say_where_they_are_used(variant, request):
    _, tree, _, _, _ = request.getfixturevalue(variant)
    ids = tree.by_id()
    refs = tree.all("a", "ref")
    assert {ref.attrs["href"] for ref in refs} == {"#chunk-打印_结果", "#chunk-打印_矩阵"}
    for ref in refs:
        assert ref.attrs["href"][1:] in ids
        line = ref.parent  # the code line holding <<name>>, anchored by its line in the Markdown
        assert "l" in line.classes() and re.fullmatch(r"L\d+", line.attrs["id"])
        assert ref.attrs["title"].startswith("定义在 lesson.md:")  # where it is defined: in the tooltip
        assert "lesson.md" not in line.text()
    used = [e for e in tree.all("p", "used")]
    assert len(used) == 2  # one for each chunk, under its last piece
    for paragraph in used:
        assert paragraph.text().startswith("用在 →")
        for link in (e for e in paragraph.iter() if e.tag == "a"):
            target = ids[link.attrs["href"][1:]]
            assert "<<" in target.text()  # the line that includes the chunk


def test_code_is_highlighted_and_plain_without_pygments(tmp_path, capsys, monkeypatch):
    md = lesson(tmp_path)
    _, _, _, out = build(capsys, md)
    assert '<span class="nb">print</span>' in out.read_text()
    monkeypatch.setattr(code, "get_lexer_by_name", None)
    _, _, _, out = build(capsys, md)
    page = out.read_text()
    assert '<span class="nb">' not in page and 'print(&quot;acc' not in page and 'print("acc 0.9300' in page


# ---------------------------------------------------------------- transcripts in parts


@pytest.mark.parametrize("variant", ["small", "plain"])
def test_each_part_of_a_transcript_stands_under_its_code_each_line_anchored_by_its_own_line(variant, request):
    md, tree, _, _, _ = request.getfixturevalue(variant)
    ids = tree.by_id()  # also: no id twice
    assert in_order(tree) == ["file-generated/p.py", "chunk-打印_结果", "output-generated/p.py-1", "chunk-打印_矩阵",
                              "chunk-打印_结果-2", "output-generated/p.py-2"]
    doc = literate.markdown.load(md, str(md))
    transcript = doc.transcripts["generated/p.py"]
    assert len(transcript.pieces()) == 2
    source = md.read_text().split("\n")
    for piece in transcript.pieces():
        figure = ids[f"output-generated/p.py-{piece.part}"]
        spans = [e for e in figure.iter() if e.tag == "span" and "l" in e.classes()]
        assert [e.attrs["id"] for e in spans] == [f"L{piece.first_line + k}" for k in range(len(spans))]
        assert [e.text().rstrip("\n") for e in spans] == literate.model.output_lines(piece.content)
        assert all(source[int(e.attrs["id"][1:]) - 1] == e.text().rstrip("\n") for e in spans)
    # the whole output, once
    lines = [e for e in tree.all("span", "l") if any("transcript" in a.classes() for a in e.ancestors())]
    assert len(lines) == len(literate.model.output_lines(transcript.content))


def test_links_to_captions_keep_their_anchor_as_written(small):
    _, tree, _, _, _ = small
    ids = tree.by_id()
    link = next(e for e in tree.all("a") if e.text() == "第二段")
    assert link.attrs["href"] == "#output-generated/p.py-2" and ids["output-generated/p.py-2"].tag == "figure"


# ---------------------------------------------------------------- numbers


@pytest.mark.parametrize("variant", ["small", "plain"])
def test_each_verified_number_links_to_the_transcript_line_that_prints_it_in_its_part(variant, request):
    md, tree, _, _, _ = request.getfixturevalue(variant)
    ids = tree.by_id()
    links = tree.all("a", "num")
    assert [link.text() for link in links] == ["0.9300", "1.2345", "0.9300", "0.6180"]
    first, last = md_line(md, "acc 0.9300 x 1.2345"), md_line(md, "more 0.6180")
    assert [link.attrs["href"] for link in links] == [f"#L{first}-0.9300", f"#L{first}-1.2345", f"#L{first}-0.9300",
                                                      f"#L{last}-0.6180"]
    for link, part in zip(links, [1, 1, 1, 2], strict=True):
        target = ids[link.attrs["href"][1:]]  # the number itself, in its line
        line = target.parent
        assert "n" in target.classes() and target.text() == link.text()
        assert "l" in line.classes() and ids[f"output-generated/p.py-{part}"] in line.ancestors()
        assert "出自 generated/p.py" in link.attrs["title"] and f"第 {line.attrs['id'][1:]} 行" in link.attrs["title"]


def test_the_books_figures_are_marked_and_unverified_numbers_are_not_links(small):
    _, tree, _, _, stderr = small
    book = [e for e in tree.all("span", "book") if "num" in e.classes() and e.text() == "0.25"]
    assert len(book) == 2 and all("原书" in e.attrs["title"] for e in book)  # in the sentence and in the column
    unverified = tree.all("span", "unverified")
    assert [e.text() for e in unverified if e.text() != "1 个没有对上"] == ["0.9301"]
    assert "1 prose number not proven" in stderr and "tangle.py check" in stderr  # no Makefile beside it


def test_the_top_of_the_page_counts_the_numbers(small):
    md, tree, _, _, _ = small
    summary = tree.by_id()["verified"].text()
    assert "要核对的数字有 7 个" in summary
    assert "4 个核对过" in summary and "4 个对上了 generated/p.py 的实跑输出" in summary
    assert "2 个标成原书的" in summary and "1 个没有对上" in summary
    # the same counts as the check itself
    _, sources = literate.proofs.prose_number_sources(literate.markdown.load(md, str(md)))
    assert len(sources) == 7 and sum(number.book for number, _ in sources) == 2
    link = next(e for e in tree.by_id()["verified"].iter() if e.tag == "a")
    assert link.attrs["href"] == "#output-generated/p.py-1"  # the transcript's first part


# ---------------------------------------------------------------- formulas, heatmaps, contents


def test_formulas_become_mathml_in_both_spellings(small):
    _, tree, page, _, _ = small
    maths = tree.all("math")
    assert len(maths) == 5
    assert [m.attrs["display"] for m in maths] == ["inline", "inline", "inline", "block", "block"]
    assert len(tree.all("mfrac")) == 2 and tree.all("msqrt") and tree.all("munder")
    body = tree.all("main")[0].text()
    assert "$" not in body and "\\frac" not in body and "\\sum" not in body
    # a backslash escape in the Markdown (\\,) reaches latex2mathml unchanged: a space, not a comma
    formula = maths[2]
    assert "," not in formula.text()
    assert any(e.tag == "mspace" for e in formula.iter())


def test_each_printed_matrix_becomes_a_heatmap_with_one_cell_per_weight(small):
    _, tree, _, stdout, _ = small
    maps = tree.all("svg", "heatmaps")
    panels = [[e for e in m.iter() if e.tag == "g" and "panel" in e.classes()] for m in maps]
    assert [[(p.attrs["data-rows"], p.attrs["data-columns"]) for p in found] for found in panels] == [
        [("10", "10")], [("3", "3")]]
    cells = [[e for e in m.iter() if e.tag == "rect" and "cell" in e.classes()] for m in maps]
    assert [len(c) for c in cells] == [100, 9]
    titles = [next(e for e in cell.iter() if e.tag == "title").text() for cell in cells[0]]
    assert titles[9] == "权重：输出 1，输入 10：0.75（均匀的 7.5 倍）" and titles[0] == "权重：输出 1，输入 1：0.02（均匀的 0.2 倍）"
    assert cells[0][9].attrs["data-multiple"] == "7.5" and cells[1][0].attrs["data-multiple"] == "0.06"
    assert any("行：输出第几位" in e.text() and "列：输入第几位" in e.text() for e in maps[0].iter() if e.tag == "text")
    assert cells[0][9].attrs["fill"] != cells[0][0].attrs["fill"]
    # beside the transcript lines they were read from, which keep their anchors: the title, the numbers, and the
    # same matrix drawn in characters (rows framed by |) up to its legend
    group = maps[0].parent.parent
    assert "matrix" in group.classes() and "输出 10" in group.text()
    printed = [e.text().rstrip("\n") for e in group.iter() if e.tag == "span" and "l" in e.classes()]
    assert printed[0] == "权重：" and printed[1].split() == [str(j) for j in range(1, 11)]
    assert printed[-1] == "输出 10 |██                  |" and len(printed) == 1 + 1 + 10 + 1 + 10
    assert not any(line.startswith("图例") for line in printed)
    figure = next(e for e in group.ancestors() if e.tag == "figure")
    assert figure.attrs["id"] == "output-generated/p.py-2"
    assert "2 heatmaps" in stdout


def test_contents_list_the_sections(small):
    _, tree, _, _, _ = small
    ids = tree.by_id()
    links = [e for e in ids["contents"].iter() if e.tag == "a"]
    assert [link.text() for link in links] == ["一、数字", "二、公式", "三、程序"]
    assert all(ids[link.attrs["href"][1:]].tag == "h2" for link in links)


def test_the_page_is_self_contained(small):
    _, tree, page, _, _ = small
    assert "<script" not in page and "@import" not in page
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", page)
    assert not re.search(r"url\((?!data:)", page.replace('local("', ""))
    assert tree.all("style") and page.startswith("<!DOCTYPE html>")


# ---------------------------------------------------------------- the lesson itself


def test_the_lessons_page(tmp_path, capsys):
    out = tmp_path / "attention.html"
    code = weave.main([str(ROOT / "attention.md"), "-o", str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    page = out.read_text()
    tree = Tree(page)
    ids = tree.by_id()  # no id twice
    doc = literate.markdown.load(ROOT / "attention.md", "attention.md")
    source = (ROOT / "attention.md").read_text().split("\n")
    # every fence that tangle reads is a figure under the caption written above it, and that caption only
    assert doc.captions, "attention.md has captions"
    for fence, caption in doc.captions.items():
        figure = ids[caption.anchor]
        assert figure.tag == "figure", caption.anchor
        name = next(e for e in figure.iter() if e.tag == "a" and "name" in e.classes())
        assert name.text() == caption.title and name.attrs["href"] == f"#{caption.anchor}"
    for name, pieces in doc.chunks.items():
        assert model.chunk_anchor(name) in ids, name
        assert len([e for e in tree.all("figure", "chunk") if e.attrs["id"].startswith(model.chunk_anchor(name))]) >= len(pieces)
    for target in doc.roots:
        assert model.root_anchor(target) in ids
    assert "<a name=" not in page
    assert not [p for p in tree.all("p") if p.text().startswith("〈")]  # no caption drawn as a paragraph
    for link in tree.all("a"):
        href = link.attrs.get("href", "")
        assert href.startswith("#") and href[1:] in ids, href
    # every part of every transcript where it stands, each output line anchored by its own line of the Markdown
    heatmaps = 0
    for target, transcript in doc.transcripts.items():
        assert len(transcript.pieces()) > 1  # attention.md shows its output in parts
        for piece in transcript.pieces():
            figure = ids[model.output_anchor(target, piece.part)]
            lines = literate.model.output_lines(piece.content)
            for k, text in enumerate(lines):
                line = ids[f"L{piece.first_line + k}"]
                assert figure in line.ancestors() and line.text().rstrip("\n") == text == source[piece.first_line + k - 1]
            matrices = tables.parse_matrices(lines, doc.declared.heatmap)
            drawn = [m for m in figure.iter() if m.tag == "svg" and "heatmaps" in m.classes()]
            drawn_from_a_figure = piece in [f.source(doc) for f in literate.figures.lesson_figures(doc)]
            assert len(drawn) == (0 if drawn_from_a_figure else len(matrices)), (target, piece.part)
            for heatmap in drawn:
                panels = [e for e in heatmap.iter() if e.tag == "g" and "panel" in e.classes()]
                cells = [e for e in heatmap.iter() if e.tag == "rect" and "cell" in e.classes()]
                assert len(cells) == sum(int(p.attrs["data-rows"]) * int(p.attrs["data-columns"]) for p in panels)
                heatmaps += len(panels)
    assert heatmaps >= 4 and f"{heatmaps} heatmaps" in stdout
    # each figure of the lesson drawn where its image stands, the same drawing as its file beside the lesson
    for figure in literate.figures.lesson_figures(doc):
        drawn = (ROOT / figure.path).read_text(encoding="utf-8").split("\n", 2)[2].rstrip("\n")
        assert drawn in page, figure.path
    # each number links to a line of the transcript it cites that prints it
    _, sources = literate.proofs.prose_number_sources(doc)
    printing = literate.prose.transcript_lines_printing(doc)
    links = tree.all("a", "num")
    for link in links:
        target = ids[link.attrs["href"][1:]]
        program = link.attrs["title"].split()[1]  # 出自 PROGRAM 的实跑输出...
        line, number = link.attrs["href"][2:].split("-", 1)
        quoted, decimals = link.text(), len(link.text().partition(".")[2])
        rounded = quoted != number and abs(abs(float(number)) - float(quoted)) <= 0.5 * 10 ** -decimals + 1e-9
        assert number == target.text() and (quoted == number or rounded), link.attrs  # 0.41 for a printed 0.4102
        assert int(line) in printing[program][number] and ("四舍五入" in link.attrs["title"]) == rounded, link.attrs
        assert any(a.attrs.get("id", "").startswith(f"output-{program}") for a in target.ancestors()), link.attrs
    verified = sum(1 for number, lines in sources if lines)
    counts = tree.all("span", "count")  # checked against the parts they quote, linked to no one line
    # attention.md lists the line each number quotes (attention.quotes.txt): every count too has its line
    assert len(counts) == sum(1 for number, lines in sources if lines and is_count(number) and not number.quotes) == 0
    assert len(links) == verified - len(counts)
    listed = [f"#L{number.quotes}-{number.printed or number.text}" for number, _ in sources if number.quotes]
    assert not Counter(link.attrs["href"] for link in links) - Counter(listed)  # each lands on its listed line
    assert len(links) >= len(listed) - page.count('class="math')  # all listed but those in formulas are links
    assert f"{verified} 个核对过" in ids["verified"].text()
    assert f"{len(links)} numbers linked" in stdout
    assert tree.all("math") and len(tree.all("math")) == page.count("<math ")


# ---------------------------------------------------------------- command line


def test_help_and_bad_input(tmp_path, capsys):
    assert weave.main(["--help"]) == 0
    assert "usage: weave.py" in capsys.readouterr().out
    assert weave.main([str(tmp_path / "missing.md")]) == 2
    assert "missing.md: error: no such file" in capsys.readouterr().err
    assert weave.main(["--bogus"]) == 2


def test_a_formula_it_cannot_place_is_an_error_with_its_line(tmp_path, capsys):
    md = lesson(tmp_path)
    md.write_text(md.read_text().replace("行内公式 $x_1 + y$", "行内公式 $x *1* y$"))
    code, _, stderr, out = build(capsys, md)
    line = next(i for i, text in enumerate(md.read_text().split("\n"), 1) if "$x *1* y$" in text)
    assert code == 2 and f"lesson.md:{line}: error: cannot find the formulas" in stderr
    assert not out.exists()


def test_writes_only_when_the_page_changes(tmp_path, capsys):
    md = lesson(tmp_path)
    _, _, _, out = build(capsys, md)
    before = out.stat().st_mtime_ns
    out.touch()
    touched = out.stat().st_mtime_ns
    build(capsys, md)
    assert out.stat().st_mtime_ns == touched
    md.write_text(md.read_text().replace("## 二、公式", "## 二、公式们"))
    build(capsys, md)
    assert "二、公式们" in out.read_text() and before <= out.stat().st_mtime_ns


def test_default_output_is_beside_the_lesson(tmp_path, capsys):
    md = lesson(tmp_path)
    assert weave.main([str(md)]) == 0
    capsys.readouterr()
    assert (tmp_path / "build" / "lesson.html").is_file()


@pytest.mark.parametrize("line,label,values", [
    ("输出 1    0.10  0.20", "输出 1", [0.1, 0.2]),
    ("输出 10   0.45  0.08", "输出 10", [0.45, 0.08]),
])
def test_matrix_rows_are_read_as_printed(line, label, values):
    lines = ["             1     2", line]
    [found] = tables.parse_matrices(lines, HEATMAP)
    [panel] = found.panels
    assert (found.start, found.end, panel.columns) == (0, 2, ["1", "2"])
    assert panel.rows == [(label, values, [f"{v:.2f}" for v in values])]


@pytest.mark.parametrize("header", ["             1     2", "输入         1     2"])
def test_the_column_numbers_may_follow_the_columns_name(header):
    """A header that names the columns (输入, as wide as the rows' 输出) keeps its numbers over their columns in any
    font; the page reads the numbers alone."""
    [found] = tables.parse_matrices([header, "输出 1    0.10  0.20"], HEATMAP)
    assert found.panels[0].columns == ["1", "2"] and found.panels[0].rows[0][1] == [0.1, 0.2]
    assert tables.parse_matrices(["行号         1     2", "输出 1    0.10  0.20"], HEATMAP) == []   # another name


def test_matrices_side_by_side_in_percent_are_read_as_panels_titled_by_the_line_above():
    lines = ["        原书      第一个模型", "输入      1  2    1  2", "输出 1   75 25   50 50", "输出 2   10 90   50 50"]
    [found] = tables.parse_matrices(lines, Heatmap("输出", "输入", "图例", percent=True))
    assert [panel.title for panel in found.panels] == ["原书", "第一个模型"] and found.start == 1
    assert found.panels[0].rows[0][1] == [0.75, 0.25] and found.panels[1].rows[1][2] == ["50", "50"]
    # the same numbers, as weights: without percent they are read as printed
    [found] = tables.parse_matrices(lines, HEATMAP)
    assert found.panels[0].rows[0][1] == [75.0, 25.0]


def test_text_that_only_looks_like_a_matrix_is_left_alone():
    assert tables.parse_matrices(["种子    不用注意力", "0       1.0000 / 1.0000"], HEATMAP) == []
    assert tables.parse_matrices(["   1  2  3", "输出 1  0.1 0.2"], HEATMAP) == []  # one number short
    assert tables.parse_matrices(["   1  2", "行 1  0.1 0.2"], HEATMAP) == []  # rows not labelled as declared
    assert tables.parse_matrices(["   1  2  1", "输出 1  0.1 0.2 0.3"], HEATMAP) == []  # a second panel cut short


def test_a_lesson_that_declares_no_heatmap_gets_none(tmp_path, capsys):
    md = lesson(tmp_path)
    md.write_text(md.read_text().replace("heatmap: 输出 输入 图例\n", ""))
    assert weave.main([str(md), "-o", str(tmp_path / "page.html")]) == 0
    assert "0 heatmaps" in capsys.readouterr().out and "<svg" not in (tmp_path / "page.html").read_text()


def test_the_declared_labels_name_the_heatmaps_axes():
    lines = ["矩阵：", "      1     2", "行 1  0.90  0.10", "行 2  0.20  0.80"]
    declared = Heatmap("行", "列", "图例")
    [found] = tables.parse_matrices(lines, declared)
    svg = drawing.heatmaps_svg(found.panels, "矩阵", declared, "zh", tooltips=True)
    assert "行：行第几位" in svg and "列：列第几位" in svg and "矩阵：行 1，列 2：0.10" in svg


def test_headings_never_take_an_anchor_of_the_page(tmp_path, capsys):
    md = lesson(tmp_path)
    md.write_text(md.read_text().replace("## 二、公式", "## L12").replace("## 三、程序", "## 一、数字")
                  .replace("正文说", "### output-generated/p.py-2\n\n正文说"))
    _, _, _, out = build(capsys, md)
    ids = Tree(out.read_text()).by_id()  # asserts that no id is used twice
    assert ids["section-L12"].tag == "h2" and ids["一、数字-2"].tag == "h2"
    assert ids["section-output-generated/p.py-2"].tag == "h3" and ids["output-generated/p.py-2"].tag == "figure"


def test_tangle_tells_where_each_number_stands_and_which_lines_print_it(tmp_path):
    md = lesson(tmp_path)
    doc = literate.markdown.load(md, str(md))
    errors, sources = literate.proofs.prose_number_sources(doc)
    assert len(errors) == 1 and "0.9301 is not printed" in errors[0]
    first = doc.transcripts["generated/p.py"].first_line
    for number, lines in sources:
        text = next(inline.flat for inline in literate.blocks.texts(doc.blocks) if inline.key == number.inline)
        assert text[number.offset : number.offset + len(number.text)] == number.text
        if number.text in ("0.9300", "1.2345"):
            assert lines == [first] == [md_line(md, "acc 0.9300 x 1.2345")]  # the transcript's first line
        elif number.text == "0.6180":  # the last line of part 2, at its own line of the Markdown
            assert lines == [md_line(md, "more 0.6180")]
        else:
            assert lines == []  # the book's 0.25, and 0.9301 which no line prints


def test_two_github_formulas_with_unspaced_text_between_are_two_formulas(tmp_path, capsys):
    """$`a`$；$`b`$: the text between the two formulas starts and ends at a dollar, but is no $...$ formula."""
    md = lesson(tmp_path)
    text = md.read_text().replace("\n## ", "\n甲（$`h_{t-1}`$；$`W_x[y]`$ 是第 y 行）乙。\n\n## ", 1)
    md.write_text(text)
    code, _, stderr, out = build(capsys, md)
    assert code == 0, stderr
    tree = Tree(out.read_text())
    paragraph = next(p for p in tree.all("p") if "甲" in p.text())
    assert len([e for e in paragraph.iter() if e.tag == "math"]) == 2 and "；" in paragraph.text()


def test_a_rounded_quote_links_to_the_number_it_rounds(tmp_path, capsys):
    """0.41 in the prose under a heading whose output prints 0.4102 is checked as its rounding: its link lands on
    the 0.4102 it stands for, and its tooltip says it is rounded."""
    md = tmp_path / "lesson.md"
    md.write_text("# 课\n\n## 一\n\n```python {file=generated/p.py}\nprint('w 0.4102 0.1293')\n```\n\n"
                  "```text {transcript}\nw 0.4102 0.1293\n```\n\n拿到 0.41，另一个 0.13。\n", encoding="utf-8")
    (tmp_path / "book_figures.txt").write_text("")
    code, stdout, stderr, out = build(capsys, md)
    assert code == 0, stderr
    tree = Tree(out.read_text())
    ids = tree.by_id()
    line = md_line(md, "w 0.4102 0.1293")
    links = {a.text(): a.attrs for a in tree.all("a", "num")}
    assert {text: attrs["href"] for text, attrs in links.items()} == {"0.41": f"#L{line}-0.4102", "0.13": f"#L{line}-0.1293"}
    assert all(attrs["href"][1:] in ids and "四舍五入" in attrs["title"] for attrs in links.values())


def test_matrices_printed_one_after_another_are_drawn_side_by_side(tmp_path, capsys):
    """A model at several moments: matrices one after another, each under a line of its own, become one picture
    of panels titled by those lines; a matrix with other lines around it keeps a box of its own."""
    printed = "\n".join(["开头", "第 10 轮：", matrix(4, 4), "第 20 轮：", matrix(4, 4, peak=False), "其他的话", "",
                         "单独的：", matrix(4, 4), "完"])
    md = tmp_path / "lesson.md"
    md.write_text("<!-- literate\nheatmap: 输出 输入 图例\n-->\n\n# 课\n\n```python {file=generated/p.py}\npass\n```\n\n"
                  f"```text {{transcript}}\n{printed}\n```\n", encoding="utf-8")
    (tmp_path / "book_figures.txt").write_text("")
    code, stdout, stderr, out = build(capsys, md)
    assert code == 0, stderr
    tree = Tree(out.read_text())
    inside = lambda element, tag, cls: [e for e in element.iter() if e.tag == tag and cls in e.classes()]
    boxes = tree.all("div", "matrix")
    assert len(boxes) == 2
    titles = [[e.text() for e in panel.iter() if e.tag == "text"][0] for panel in inside(boxes[0], "g", "panel")]
    assert titles == ["第 10 轮", "第 20 轮"] and len(inside(boxes[0], "svg", "heatmaps")) == 1
    assert len(inside(boxes[1], "g", "panel")) == 1     # the single one, in its own box
    printed_lines = "".join(e.text() for e in tree.all("pre", "output"))
    assert all(line in printed_lines for line in printed.split("\n") if line)   # no printed line lost
