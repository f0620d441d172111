"""The typed document: what the reading stage hands the back ends (blocks and spans with their lines), and that
the back ends walk it without a token of the parser's."""

import re
from urllib.parse import unquote

import conftest
import literate.blocks as b
import literate.markdown
import literate.proofs
import literate.prose
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
    assert (chunk.kind, chunk.label, chunk.language, chunk.piece) == ("chunk", "打印", "python", doc.chunks["打印"][0])
    assert (root.kind, root.label) == ("root", "generated/p.py")
    assert (transcript.kind, transcript.piece.content) == ("transcript", "acc 0.9300\n")
    assert (illustration.kind, illustration.caption) == ("illustration", None)
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
