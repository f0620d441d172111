"""The typed document: what the reading stage hands the back ends (blocks and spans with their lines), and that
the back ends walk it without a token of the parser's."""

import re
from urllib.parse import unquote

import pytest

import conftest
import literate.blocks as b
import literate.markdown
import literate.proofs
import literate.prose
import literate.reading
from conftest import write

LESSON = """\
# 标题 `x`

<!-- 数字出自 generated/p.py -->
准确率 0.9300，公式 $a_i$ 和 $`q K`$，见 [链接](#chunk-打印) 和 *强调* 与 **加粗**。

- 第一项
- 第二项 `code`

> 引文 <b>粗</b>

| 原书 | 本仓库 |
|:---|---:|
| 0.25 | 0.9300 |

$$x^2$$

<a name="chunk-打印"></a>**〈打印〉**

```python {#打印}
print('acc 0.9300')
```

<a name="file-generated/p.py"></a>**〈generated/p.py〉**，由这些代码块依次拼成：[〈打印〉](#chunk-打印)

```python {file=generated/p.py}
<<打印>>
```

<a name="output-generated/p.py"></a>**〈generated/p.py〉的实跑输出**

```text {transcript}
acc 0.9300
```

```text
an illustration
```
"""


def lesson(tmp_path):
    md = write(tmp_path, LESSON)
    (tmp_path / "book_figures.txt").write_text("0.25\n")
    return literate.markdown.load(md, str(md))


def test_the_lesson_is_read_into_typed_blocks_with_their_lines(tmp_path):
    doc = lesson(tmp_path)
    kinds = [(type(block).__name__, block.line) for block in doc.blocks]
    assert kinds == [("Heading", 1), ("HtmlBlock", 3), ("Paragraph", 4), ("ListBlock", 6), ("Quote", 9),
                     ("Table", 11), ("Paragraph", 15), ("Paragraph", 17), ("Fence", 19), ("Paragraph", 23),
                     ("Fence", 25), ("Paragraph", 29), ("Fence", 31), ("Fence", 35)]
    heading, _, paragraph, items, quote, table, display, caption = doc.blocks[:8]
    assert heading.level == 1 and heading.inline.plain == "标题 x"
    assert [type(span).__name__ for span in paragraph.inline.spans] == [
        "Text", "Number", "Text", "Formula", "Text", "Formula", "Text", "Link", "Text", "Styled", "Text", "Styled",
        "Text"]
    number, dollar, github = paragraph.inline.spans[1], paragraph.inline.spans[3], paragraph.inline.spans[5]
    assert (number.text, paragraph.inline.flat[number.offset : number.offset + 6]) == ("0.9300", "0.9300")
    assert (dollar.latex, dollar.kind, dollar.source) == ("a_i", "dollar", "$a_i$")
    assert (github.latex, github.kind) == ("q K", "github")
    assert unquote(paragraph.inline.spans[7].href) == "#chunk-打印" and paragraph.inline.spans[11].tag == "strong"
    assert not items.ordered and [item.children[0].tight for item in items.items] == [True, True]
    assert isinstance(quote.children[0].inline.spans[1], b.Html)
    assert [cell.align for cell in table.head[0].cells] == ["left", "right"]
    assert table.body[0].cells[1].inline.context == "0.25 | 0.9300"
    assert display.display == "x^2" and caption.caption_of == 19 and caption.inline.caption
    chunk, root, transcript, illustration = doc.blocks[8], doc.blocks[10], doc.blocks[12], doc.blocks[13]
    assert (chunk.role.name, chunk.label, chunk.language, chunk.piece) == ("CHUNK", "打印", "python", doc.chunks["打印"][0])
    assert (root.role.name, root.label) == ("ROOT", "generated/p.py")
    assert (transcript.role.name, transcript.piece.content) == ("TRANSCRIPT", "acc 0.9300\n")
    assert (illustration.role.name, illustration.caption) == ("ILLUSTRATION", None)
    shown = [type(span).__name__ for span in chunk.caption.spans]  # without its <a name> and </a>
    assert shown == ["Styled"] and chunk.caption.spans[0].spans == [b.Text("〈打印〉")]


def test_the_checks_cite_numbers_by_the_text_that_holds_them_and_leave_the_blocks_alone(tmp_path):
    doc = lesson(tmp_path)
    before = repr(doc.blocks)
    _, numbers = literate.proofs.stale_numbers(doc)
    texts = {inline.key: inline for inline in b.texts(doc.blocks)}
    found = [(number.text, number.book, number.cited_on, texts[number.inline].flat[number.offset:][:len(number.text)])
             for number in numbers]
    assert found == [("0.9300", False, 3, "0.9300"), ("0.25", True, None, "0.25"), ("0.9300", False, None, "0.9300"),
                     ("2", False, None, "2")]  # $$x^2$$ written in text, not as $`x^2`$: its 2 is read as text
    assert repr(doc.blocks) == before


def test_the_walk_opens_and_closes_every_block_in_document_order(tmp_path):
    doc = lesson(tmp_path)
    events = [(event, type(block).__name__, depth) for event, block, depth in b.walk(doc.blocks)][6:14]
    assert events == [("open", "ListBlock", 0), ("open", "ListItem", 1), ("open", "Paragraph", 2),
                      ("close", "Paragraph", 2), ("close", "ListItem", 1), ("open", "ListItem", 1),
                      ("open", "Paragraph", 2), ("close", "Paragraph", 2)]


def test_the_back_ends_walk_the_blocks_not_the_parsers_tokens():
    """The page, the notebook and the prose check never see a token: no .type, .children, .map or .nesting."""
    package = conftest.ROOT / "literate"
    for path in [*(package / "page").glob("*.py"), *(package / "notebook").glob("*.py"), package / "prose.py"]:
        assert not re.search(r"\.(?:type|children|map|nesting|tokens)\b", path.read_text(encoding="utf-8")), path
    assert not hasattr(literate.model.Document(path=conftest.ROOT, shown=""), "tokens")


def folds_of(tmp_path, text: str) -> list:
    """The lesson's top-level blocks, each as its kind; a fold as (Details, the kinds of what it holds)."""
    doc = literate.markdown.load(write(tmp_path, conftest.small_lesson(text)), "attention.md")

    def kind(block):
        return (type(block).__name__, [kind(child) for child in block.children]) if isinstance(block, b.Details) \
            else type(block).__name__
    return [kind(block) for block in doc.blocks]


def test_a_details_block_and_its_closing_block_fold_what_stands_between_them(tmp_path):
    folded = folds_of(tmp_path, "<details>\n<summary>折起来</summary>\n\n正文\n\n- 一项\n\n</details>\n\n后文")
    assert ("Details", ["HtmlBlock", "Paragraph", "ListBlock", "HtmlBlock"]) in folded
    nested = folds_of(tmp_path, "<details>\n\n<details>\n\n里面\n\n</details>\n\n</details>")
    assert ("Details", ["HtmlBlock", ("Details", ["HtmlBlock", "Paragraph", "HtmlBlock"]), "HtmlBlock"]) in nested


@pytest.mark.parametrize("text", [
    "- <details>\n\n  在一项里\n\n- 下一项\n\n</details>",  # opened in a list item, closed outside it
    "<details>\n\n一段话里就关上了 </details>\n\n</details>",  # its pair is the </details> in the paragraph
    "<details>\n\n从不关上",
    "</details>\n\n<details>\n\n倒过来\n\n",
])
def test_a_details_that_opens_and_closes_in_different_places_stays_html(tmp_path, text):
    assert not any(isinstance(kind, tuple) for kind in folds_of(tmp_path, text))


def test_folds_nest_only_so_deep_and_the_deeper_ones_stay_html(tmp_path):
    deep = literate.reading.MAX_FOLD_DEPTH + 5
    doc = literate.markdown.load(write(tmp_path, conftest.small_lesson(
        "<details>\n\n" * deep + "最里面\n\n" + "</details>\n\n" * deep)), "attention.md")
    depth, block = 0, next(block for block in doc.blocks if isinstance(block, b.Details))
    while isinstance(block, b.Details):
        depth, block = depth + 1, next((child for child in block.children if isinstance(child, b.Details)), None)
    assert depth == literate.reading.MAX_FOLD_DEPTH


def test_a_details_closed_in_a_paragraph_folds_nothing_and_keeps_no_fold_open(tmp_path):
    stale = "<details>\n\n甲。</details>\n\n" * (literate.reading.MAX_FOLD_DEPTH + 1)
    folded = folds_of(tmp_path, stale + "<details>\n\n乙\n\n</details>")
    assert folded.count(("Details", ["HtmlBlock", "Paragraph", "HtmlBlock"])) == 1


def test_a_fence_names_its_language_before_its_attributes_with_or_without_a_blank():
    assert [b.fence_language(info) for info in ["python {#x}", "math{illustration}", "", " text  {transcript}"]] == [
        "python", "math", "", "text"]
