"""The page is safe and the tools are linear: tangle.py and weave.py attacked as a hostile or careless
author would. Every test is named after the verdict it rules out:

  test_injection_*   nothing the author writes runs in the page, or makes it fetch anything;
  test_data_loss_*   nothing is overwritten that the tool did not write;
  test_hang_*        no input blocks the tools or makes them quadratic (counted, never timed);
  test_traceback_*   every edge ends with one clear line, never a Python traceback;
  test_wrong_*       the run is controlled and names are compared as the reader sees them;
  test_message_*     a message names the path and the next step.

Times on 1 MiB inputs are measured by bench/pathological.py, a benchmark, not a test."""

import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("latex2mathml", reason="weave.py needs latex2mathml: make test installs requirements-html.txt")

import conftest  # noqa: E402
import literate.blocks  # noqa: E402
import literate.diffing  # noqa: E402
import literate.inline  # noqa: E402
import literate.markdown  # noqa: E402
import literate.proofs  # noqa: E402
import literate.prose  # noqa: E402
import tangle  # noqa: E402
from literate import formulas, model  # noqa: E402
from literate import markup  # noqa: E402
from literate.page import code as page_code  # noqa: E402
from literate.page import page as weaving  # noqa: E402
from literate.page import command as weave  # noqa: E402  (weave.py's main)

ROOT = Path(__file__).resolve().parent.parent
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, uses FIFOs and signals")
# a generous bound on a subprocess that must end by itself: it is there so that a regression hangs no test run
GUARD = 120


def lesson(body: str = "", code: str = "print('acc 0.9300')\n", transcript: str = "acc 0.9300\n",
           name: str = "打印", target: str = "generated/p.py") -> str:
    """A small lesson without captions: a root including one chunk, its transcript, then body."""
    return (f"# 课\n\n```python {{file={target}}}\n<<{name}>>\n```\n\n```python {{#{name}}}\n{code}```\n\n"
            f"```text {{transcript}}\n{transcript}```\n\n{body}")


def write(folder: Path, text: str, name: str = "lesson.md") -> Path:
    path = folder / name
    path.write_bytes(text.encode())
    (folder / "book_figures.txt").write_text("0.25\n")
    return path


def woven(tmp_path: Path, text: str) -> str:
    """The page weave.py writes for a lesson (which must be valid input)."""
    md = write(tmp_path, text)
    out = tmp_path / "page.html"
    assert weave.main([str(md), "-o", str(out)]) == 0
    return out.read_text()


class Audit(HTMLParser):
    """Everything in a page that could run or fetch: a tag or attribute outside weave.py's vocabulary, an
    event handler, a style attribute, a src, a link that is not #fragment, relative, http(s) or mailto."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, name, attributes):
        if name not in markup.TAGS:
            self.found.append(f"<{name}>")
        for key, value in attributes:
            if key not in markup.ATTRIBUTES or key.startswith("on") or key in ("style", "src", "srcset"):
                self.found.append(f"<{name} {key}=...>")
            if key == "href" and markup.safe_url(value or "") is None:
                self.found.append(f"<{name} href={value!r}>")

    handle_startendtag = handle_starttag


def assert_safe(page: str) -> None:
    assert Audit(page).found == []
    lowered = page.lower()
    assert "<script" not in lowered and "<img" not in lowered and "<iframe" not in lowered
    assert 'href="javascript' not in lowered and "url(http" not in lowered


# ---------------------------------------------------------------- injection

HOSTILE_PROSE = {
    "an img with onerror": "看 <img src=x onerror=alert(1)> 这里。",
    "a script block": "<script>alert(1)</script>",
    "an iframe": "<iframe src=\"https://example.com/\"></iframe>",
    "a javascript link in HTML": '<a href="javascript:alert(1)">点我</a>',
    "an anchor with a handler": '<a name="x" onclick="alert(1)">x</a>',
    "details that toggle": "<details open ontoggle=alert(1)><summary>s</summary>\n\n正文\n\n</details>",
    "a style block": "<style>body { display: none }</style>",
    "svg with a script": "<svg><script>alert(1)</script></svg>",
    "a comment that closes early": "<!--><script>alert(1)</script>-->",
    "math with a script": "<math><mtext><script>alert(1)</script></mtext></math>",
    "a remote image": "![图](https://example.com/x.png)",
    "a javascript image": "![x](javascript:alert(1))",
    "a javascript link": "[点我](javascript:alert(1))",
    "a javascript link with blanks": "[点我](<java\tscript:alert(1)>)",
    "a data link": "[点我](data:text/html,<script>alert(1)</script>)",
    "a protocol-relative link": "[点我](//example.com/x)",
    "an object": '<object data="https://example.com/x.swf"></object>',
    "a base tag": '<base href="https://example.com/">',
    "a meta refresh": '<meta http-equiv="refresh" content="0;url=https://example.com/">',
    "a form": '<form action="https://example.com/"><input name=x></form>',
    "a link tag": '<link rel="stylesheet" href="https://example.com/x.css">',
    "a heading with html": "## 标题 <img src=x onerror=alert(1)>",
    "html in a table": "| a | b |\n|---|---|\n| <img src=x onerror=alert(1)> | <script>x</script> |",
}


@pytest.mark.parametrize("body", HOSTILE_PROSE.values(), ids=HOSTILE_PROSE.keys())
def test_injection_raw_html_and_links_in_prose_are_shown_or_dropped(tmp_path, body):
    page = woven(tmp_path, lesson(body + "\n"))
    assert_safe(page)


def test_injection_the_allowed_html_is_kept(tmp_path):
    page = woven(tmp_path, lesson('<a name="here"></a>这里\n\n<details><summary>展开</summary>\n\n正文\n\n</details>\n\n'
                                  "<!-- 注释 -->\n\n[站外](https://example.com/) 和 [页内](#here)\n"))
    assert '<a name="here"></a>' in page and "<details><summary>展开</summary>" in page and "</details>" in page
    assert "注释" not in page and 'href="https://example.com/"' in page and 'href="#here"' in page
    assert_safe(page)


def test_injection_what_is_not_allowed_is_shown_as_text(tmp_path):
    page = woven(tmp_path, lesson("看 <img src=x onerror=alert(x)> 和 <script>alert(y)</script>\n"))
    assert "&lt;img src=x onerror=alert(x)&gt;" in page and "&lt;script&gt;alert(y)&lt;/script&gt;" in page


HOSTILE_NAMES = ['x"><svg/onload=alert(1)>', "x'><img src=x onerror=alert(1)>", "</pre><script>alert(1)</script>",
                 "a&b<c>d"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_injection_chunk_names_reach_no_attribute_unescaped(tmp_path, name):
    page = woven(tmp_path, lesson(name=name))
    assert_safe(page)
    ids = {element for element in IdParser(page).ids}
    assert model.chunk_anchor(name) in ids  # the anchor is still the name's, escaped, not cut short


class IdParser(HTMLParser):
    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.ids, self.hrefs = [], []
        self.feed(page)

    def handle_starttag(self, name, attributes):
        attributes = dict(attributes)
        if "id" in attributes:
            self.ids.append(attributes["id"])
        if "href" in attributes:
            self.hrefs.append(attributes["href"])


def test_injection_file_paths_reach_no_attribute_unescaped(tmp_path):
    page = woven(tmp_path, lesson(target='generated/x"><img src=x onerror=alert(1)>.py'.replace(" ", "\u00a0")))
    assert_safe(page)


HOSTILE_MATH = [r"\text{<script>alert(1)</script>}", r"\text{<img src=x onerror=alert(1)>}",
                r"\href{javascript:alert(1)}{x}", r"\style{background:url(https://example.com/x)}{x}",
                r"\color{white}{x}", r"\text{a < b & c > d}", r"\mathrm{<b>}", r"\operatorname{<img>}"]


@pytest.mark.parametrize("latex", HOSTILE_MATH)
@pytest.mark.parametrize("spelling", ["fence", "github", "dollars"])
def test_injection_formulas_pass_the_mathml_allow_list(tmp_path, latex, spelling):
    body = {"fence": f"```math\n{latex}\n```\n", "github": f"公式 $`{latex}`$ 在此。\n",
            "dollars": f"公式 ${latex}$ 在此。\n"}[spelling]
    md = write(tmp_path, lesson(body))
    out = tmp_path / "page.html"
    code = weave.main([str(md), "-o", str(out)])
    if code == 0:
        page = out.read_text()
        assert_safe(page)
        assert "mathcolor" not in page and "href=\"javascript" not in page


def test_injection_text_in_a_formula_is_shown_as_written(tmp_path):
    page = woven(tmp_path, lesson("```math\n\\text{<b>a < b</b>}\n```\n"))
    assert "<mtext>&lt;b&gt;a\u00a0&lt;\u00a0b&lt;/b&gt;</mtext>" in page  # latex2mathml keeps blanks as NBSP


def test_injection_transcripts_code_and_tooltips_are_escaped(tmp_path):
    hostile = '0.9300 "><img src=x onerror=alert(1)> </pre><script>alert(1)</script>'
    page = woven(tmp_path, lesson("准确率 0.9300。\n", code=f"print({hostile!r})\n", transcript=hostile + "\n"))
    assert_safe(page)
    assert 'title="出自 generated/p.py' in page  # the number links, its tooltip quoting the line, escaped


@pytest.mark.parametrize("body, shown", [
    ("<details>\n\n折叠了\n\n## 后面的一节\n\n后面的文字。\n", "&lt;details&gt;"),
    ("前 <a name=\"x\"> 没有关上。\n\n后面的文字。\n", "后面的文字"),
    ("前 </summary></a> 多余的。\n\n后面的文字。\n", "&lt;/summary&gt;&lt;/a&gt;"),
    ("<details>\n<summary>s</summary>\n\n折叠的\n\n</details>\n\n</details>\n\n后面的文字。\n", "&lt;/details&gt;"),
], ids=["unclosed details", "unclosed a", "closes without opening", "one close too many"])
def test_injection_an_unclosed_tag_never_swallows_what_follows(tmp_path, body, shown):
    """Parsed as a browser parses it: every <details>, <summary> and <a> of the author's closes where the
    author meant it to, and one that pairs with nothing is shown as text, not left to fold or link the rest."""
    page = woven(tmp_path, lesson(body))
    assert shown in page
    stack = []

    class Nesting(HTMLParser):
        def handle_starttag(self, name, attributes):
            if name in ("a", "details", "summary"):
                stack.append(name)

        def handle_endtag(self, name):
            if name in ("a", "details", "summary"):
                assert stack and stack.pop() == name, (name, stack)
    Nesting().feed(page[page.index("<main>") : page.index("后面的文字")])
    assert not stack, f"{stack} still open where the following text begins"


def test_injection_a_caption_and_the_title_are_escaped(tmp_path):
    text = lesson().replace("# 课", "# 课 </title><script>alert(1)</script>")
    text = text.replace("```python {#打印}", '<a name="chunk-打印"></a>**〈打印〉** <img src=x onerror=alert(1)>\n\n'
                        "```python {#打印}")
    text = text.replace("```python {file=", '<a name="file-generated/p.py"></a>**〈generated/p.py〉**，由这些代码块依次'
                        "拼成：[〈打印〉](#chunk-打印)\n\n```python {file=")
    text = text.replace("```text {transcript}", '<a name="output-generated/p.py"></a>**〈generated/p.py〉的实跑输出**'
                        "\n\n```text {transcript}")
    page = woven(tmp_path, text)
    assert_safe(page)
    assert re.search(r"<title>课 [^<]*</title>", page)


FRAGMENTS = ["<", ">", '"', "'", "&", "=", "/", "script", "img", "onerror", "javascript:", "\\text{", "}", "$", "`",
             "<!--", "-->", "<a ", "href=", "x", " ", "0.9300", "*", "[", "](", ")", "\n", "|", "#"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prose=st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join),
       name=st.lists(st.sampled_from([f for f in FRAGMENTS if f not in ("\n", "`", "}")]), min_size=1, max_size=8)
       .map("".join))
def test_injection_random_hostile_lessons_stay_safe(tmp_path, prose, name):
    """Any mix of the fragments in prose and in a chunk name: the page is written safe, or refused as bad input."""
    md = write(tmp_path, lesson(prose + "\n", name=name.strip() or "x"))
    out = tmp_path / "page.html"
    code = weave.main([str(md), "-o", str(out)])
    assert code in (0, 2)
    if code == 0:
        assert_safe(out.read_text())


@pytest.mark.parametrize("body", [*HOSTILE_PROSE.values(), "[x](\\\\host\\share) 和 [y](/\\evil.com/x)"],
                         ids=[*HOSTILE_PROSE, "backslash links"])
def test_injection_the_notebooks_cells_keep_the_pages_vocabulary(tmp_path, body):
    """The notebook's Markdown cells are built like the page: no tag outside <a>, <details>, <summary> (the
    rest shown as text), no HTML comment, no image loaded, links only to #, relative, http(s) and mailto."""
    notebook_main()
    from literate.notebook import command as notebook
    md = write(tmp_path, NOTEBOOK_LESSON + "\n" + body + "\n")
    built = notebook.build(literate.markdown.load(md, str(md)))
    for cell in built.cells:
        if cell.cell_type != "markdown":
            continue
        text = re.sub(r"`[^`]*`", "", cell.source)
        assert {tag.lower() for tag in re.findall(r"<(/?[A-Za-z][A-Za-z0-9]*)", text)} <= {"a", "/a", "details",
                                                                                            "/details", "summary",
                                                                                            "/summary"}, text
        assert "<!--" not in text and "![" not in text
        for target in re.findall(r"\]\(([^)]*)\)", text):
            assert markup.safe_url(target) is not None, target


def test_injection_the_notebook_leaves_code_as_written(tmp_path):
    """Code spans, fences and indented code keep their < and comments: they are shown, not parsed as HTML."""
    notebook_main()
    from literate.notebook import command as notebook
    body = "看 `<b>` 和 `<!-- x -->`。\n\n```text\n<script>x</script>\n```\n\n    <i>indented</i>\n"
    md = write(tmp_path, NOTEBOOK_LESSON + "\n" + body)
    text = "\n".join(cell.source for cell in notebook.build(literate.markdown.load(md, str(md))).cells)
    assert "`<b>`" in text and "`<!-- x -->`" in text and "<script>x</script>" in text and "    <i>indented</i>" in text


@pytest.mark.parametrize("url", ["\\\\evil.com\\x", "/\\evil.com/x", "\\/evil.com", "http:\\\\ok.com"])
def test_injection_a_backslash_link_is_not_a_way_to_another_host(url):
    assert markup.safe_url(url) is None if not url.startswith("http") else markup.safe_url(url) == url


# ---------------------------------------------------------------- data loss


def test_data_loss_weave_never_writes_over_the_lesson(tmp_path, capsys):
    md = write(tmp_path, lesson())
    before = md.read_bytes()
    (tmp_path / "link.html").symlink_to(md)
    for target in (md, tmp_path / "link.html", tmp_path / "." / "lesson.md"):
        assert weave.main([str(md), "-o", str(target)]) == 2
        assert "is the lesson" in capsys.readouterr().err
    assert md.read_bytes() == before


def test_data_loss_weave_never_writes_over_a_tangled_file_or_one_it_did_not_write(tmp_path, capsys):
    md = write(tmp_path, lesson())
    assert tangle.main(["tangle", str(md)]) == 0
    generated = tmp_path / "generated" / "p.py"
    mine = tmp_path / "tangle.py"
    mine.write_text("# someone's code\n")
    before = generated.read_bytes()
    capsys.readouterr()
    assert weave.main([str(md), "-o", str(generated)]) == 2
    assert "which" in capsys.readouterr().err and generated.read_bytes() == before
    assert weave.main([str(md), "-o", str(mine)]) == 2
    err = capsys.readouterr().err
    assert "is not a page weave.py wrote" in err and "give -o another path" in err
    assert mine.read_text() == "# someone's code\n"


@linux
def test_data_loss_weave_never_replaces_what_is_not_a_regular_file(tmp_path, capsys):
    md = write(tmp_path, lesson())
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    try:
        for target, kind in ((fifo, "FIFO"), (folder, "directory"), (tmp_path / "sock", "socket")):
            assert weave.main([str(md), "-o", str(target)]) == 2
            assert kind in capsys.readouterr().err
        assert stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISSOCK(os.stat(tmp_path / "sock").st_mode)
    finally:
        server.close()


def test_data_loss_weave_replaces_its_own_page_while_it_is_as_written(tmp_path, capsys):
    md = write(tmp_path, lesson())
    out = tmp_path / "page.html"
    assert weave.main([str(md), "-o", str(out)]) == 0
    assert weave.state(out.read_bytes()) == "as written"
    md.write_bytes(md.read_bytes() + "新的一段。\n".encode())
    assert weave.main([str(md), "-o", str(out)]) == 0 and "新的一段" in out.read_text()


@pytest.mark.parametrize("edit", [
    lambda page: page.replace("新的一段", "我的笔记", 1),  # a line edited
    lambda page: page + "<p>我加的</p>\n",  # a line added at the end
    lambda page: page.replace("\n", "\r\n"),  # saved by an editor with other line ends
], ids=["edited", "added", "line-ends"])
def test_data_loss_weave_keeps_a_page_a_reader_edited_unless_forced(tmp_path, capsys, edit):
    md = write(tmp_path, lesson() + "新的一段。\n")
    out = tmp_path / "page.html"
    assert weave.main([str(md), "-o", str(out)]) == 0
    out.write_text(edit(out.read_text()), newline="")
    edited = out.read_bytes()
    md.write_bytes(md.read_bytes() + "又一段。\n".encode())
    capsys.readouterr()
    assert weave.main([str(md), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{out}: error: holds changes made after weave.py wrote it") and "--force" in err, err
    assert "rm " in err and err.count("\n") == 1 and out.read_bytes() == edited
    assert weave.main([str(md), "-o", str(out), "--force"]) == 0
    assert weave.state(out.read_bytes()) == "as written" and "又一段" in out.read_text()


def test_data_loss_weave_keeps_a_page_from_before_the_fingerprint_unless_forced(tmp_path, capsys):
    md = write(tmp_path, lesson())
    out = tmp_path / "page.html"
    for old in ("<!DOCTYPE html>\n<html><p>本页由 <code>weave.py</code> 从 lesson.md 生成。</p></html>\n",
                '<!DOCTYPE html>\n<html><head><meta name="generator" content="weave.py">\n</head></html>\n'):
        out.write_text(old)
        assert weave.main([str(md), "-o", str(out)]) == 2
        assert "was written by an older weave.py" in capsys.readouterr().err and out.read_text() == old
        assert weave.main([str(md), "-o", str(out), "--force"]) == 0 and weave.state(out.read_bytes()) == "as written"


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["plain", "--force"])
def test_data_loss_tangle_never_overwrites_a_file_it_never_wrote(tmp_path, capsys, force):
    md = write(tmp_path, lesson(target="generated/tool.py"))
    tool = tmp_path / "generated" / "tool.py"
    tool.parent.mkdir()
    tool.write_text("print('my own tool')\n")
    assert tangle.main(["tangle", str(md), *force]) == 2
    err = capsys.readouterr().err
    assert "was not written by tangle.py" in err and "not even with --force" in err and "lesson.md:3" in err
    assert tool.read_text() == "print('my own tool')\n"
    assert tangle.main(["check", str(md)]) == 1
    assert "was not written by tangle.py" in capsys.readouterr().err


def test_data_loss_tangle_still_refreshes_its_own_files(tmp_path, capsys):
    md = write(tmp_path, lesson())
    assert tangle.main(["tangle", str(md)]) == 0
    md.write_bytes(md.read_bytes().replace(b"0.9300')", b"0.9400')"))
    assert tangle.main(["tangle", str(md)]) == 0 and "0.9400" in (tmp_path / "generated" / "p.py").read_text()


NOTEBOOK_LESSON = ("# 课\n\n## 一\n\n```python {file=generated/p.py}\n<<主程序>>\n```\n\n```python {#主程序}\n"
                   "def main():\n    # 第 1 段\n    print('acc 0.9300')\n\n\nif __name__ == \"__main__\":\n    main()\n"
                   "```\n\n```text {transcript}\nacc 0.9300\n```\n")


def notebook_main():
    pytest.importorskip("nbformat", reason="notebook.py needs nbformat: make test installs requirements-notebook.txt")
    from literate.notebook import command as notebook
    return notebook.main


@linux
def test_data_loss_notebook_never_writes_over_the_lesson_a_tangled_file_or_a_foreign_one(tmp_path, capsys):
    """notebook.py -o keeps weave.py's rule, by the same code: the lesson (also through a symlink), a file it
    tangles, a file it did not write, a FIFO and a directory are refused, and every byte stays."""
    make_notebook = notebook_main()
    md = write(tmp_path, NOTEBOOK_LESSON)
    assert tangle.main(["tangle", str(md)]) == 0
    (tmp_path / "link.ipynb").symlink_to(md)
    (tmp_path / "mine.ipynb").write_text("{}\n")
    os.mkfifo(tmp_path / "fifo")
    before = {path: path.read_bytes() for path in (md, tmp_path / "generated" / "p.py", tmp_path / "mine.ipynb")}
    capsys.readouterr()
    for target, says in ((md, "is the lesson"), (tmp_path / "link.ipynb", "is the lesson"),
                         (tmp_path / "generated" / "p.py", "which"), (tmp_path / "mine.ipynb", "is not a notebook"),
                         (tmp_path / "fifo", "FIFO"), (tmp_path / "generated", "directory")):
        assert make_notebook([str(md), "-o", str(target)]) == 2, target
        assert says in capsys.readouterr().err
    assert {path: path.read_bytes() for path in before} == before
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo").st_mode)


def test_data_loss_notebook_replaces_its_own_notebook(tmp_path, capsys):
    make_notebook = notebook_main()
    md = write(tmp_path, NOTEBOOK_LESSON)
    out = tmp_path / "lesson.ipynb"
    assert make_notebook([str(md), "-o", str(out)]) == 0
    md.write_bytes(md.read_bytes() + "新的一段。\n".encode())
    assert make_notebook([str(md), "-o", str(out)]) == 0 and "新的一段" in out.read_text()
    assert "wrote" in capsys.readouterr().out


def test_data_loss_an_edit_to_a_comment_shaped_like_a_location_comment_is_stitched(tmp_path, capsys):
    """Only tangle's own `# MD:LINE (chunk)` lines, at the places it writes them, are location comments; a
    comment of the lesson's code that looks like one is code, and an edit to it is found, stitched and kept."""
    code = "# 见 README:12 (速度)\n# lesson.md:40 (打印)\nprint('acc 0.9300')\n"
    md = write(tmp_path, lesson(code=code))
    assert tangle.main(["tangle", str(md)]) == 0
    generated = tmp_path / "generated" / "p.py"
    for old, new in (("README:12", "README:13"), ("lesson.md:40", "lesson.md:41")):
        generated.write_text(generated.read_text().replace(old, new))
        capsys.readouterr()
        assert tangle.main(["check", str(md)]) == 1
        assert (f"edited by hand since it was last tangled; run {conftest.tangle_command('stitch', md)}"
                in capsys.readouterr().err)
        assert tangle.main(["stitch", str(md)]) == 0, capsys.readouterr().err
        assert new in md.read_text() and old not in md.read_text()
        assert tangle.main(["tangle", str(md)]) == 0 and new in generated.read_text()


def test_data_loss_a_file_that_only_starts_like_tangles_banner_is_never_replaced(tmp_path, capsys):
    md = write(tmp_path, lesson(target="generated/parser.py"))
    antlr = "# Generated from Expr.g4 by ANTLR 4.13.1\nfrom antlr4 import *\n"
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "parser.py").write_text(antlr)
    for force in ([], ["--force"]):
        assert tangle.main(["tangle", str(md), *force]) == 2
        err = capsys.readouterr().err
        assert "was not written by tangle.py" in err and "not even with --force" in err
    assert (tmp_path / "generated" / "parser.py").read_text() == antlr


def stitched_lesson(tmp_path, capsys, extra_root: bool = False):
    """A tangled lesson (with a second root, if asked) whose program was then edited by hand."""
    text = lesson()
    if extra_root:
        text = text.replace("```text {transcript}", "```python {file=generated/q.py}\nprint(2)\n```\n\n"
                            "```text {transcript=generated/p.py}")
    md = write(tmp_path, text)
    assert tangle.main(["tangle", str(md)]) == 0
    generated = tmp_path / "generated" / "p.py"
    generated.write_text(generated.read_text().replace("0.9300')", "0.9400')"))
    capsys.readouterr()
    return md, generated


def test_data_loss_stitch_leaves_a_read_only_lesson_alone(tmp_path, capsys):
    md, generated = stitched_lesson(tmp_path, capsys)
    before = md.read_bytes(), generated.read_bytes()
    md.chmod(0o444)
    assert tangle.main(["stitch", str(md)]) == 2
    err = capsys.readouterr().err
    assert "is read-only; nothing written" in err and "chmod u+w" in err
    assert (md.read_bytes(), generated.read_bytes()) == before and md.stat().st_mode & 0o777 == 0o444


def test_data_loss_stitch_says_when_it_leaves_a_hard_link_behind(tmp_path, capsys):
    md, _ = stitched_lesson(tmp_path, capsys)
    other = tmp_path / "other-name.md"
    os.link(md, other)
    assert tangle.main(["stitch", str(md)]) == 0
    err = capsys.readouterr().err
    assert "it had 1 other hard link, which keep the old text" in err
    assert "0.9400" in md.read_text() and "0.9300" in other.read_text()


def test_data_loss_stitch_checks_every_generated_file_before_it_writes_the_lesson(tmp_path, capsys):
    """A second root that cannot be written (here: replaced by a file tangle.py did not write) stops stitch
    before the lesson is touched, not after."""
    md, generated = stitched_lesson(tmp_path, capsys, extra_root=True)
    (tmp_path / "generated" / "q.py").write_text("# my own file\n")
    before = md.read_bytes(), generated.read_bytes()
    assert tangle.main(["stitch", str(md)]) == 2
    assert "was not written by tangle.py" in capsys.readouterr().err
    assert (md.read_bytes(), generated.read_bytes()) == before


# ---------------------------------------------------------------- hangs and blow-ups


def run_tool(tool: str, *argv, env=None, input_bytes=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / tool), *map(str, argv)], capture_output=True, timeout=GUARD,
                          env=env, input=input_bytes)


@linux
@pytest.mark.parametrize("kind", ["FIFO", "/dev/zero", "3 GB sparse file"])
@pytest.mark.parametrize("tool", ["tangle.py", "weave.py"])
def test_hang_book_figures_that_is_no_small_file_is_refused_at_once(tmp_path, kind, tool):
    md = write(tmp_path, lesson("原书是 0.25。\n"))
    figures = tmp_path / "book_figures.txt"
    figures.unlink()
    if kind == "FIFO":
        os.mkfifo(figures)
    elif kind == "/dev/zero":
        figures.symlink_to("/dev/zero")
    else:
        with open(figures, "wb") as file:
            file.truncate(3 << 30)
    assert run_tool("tangle.py", "tangle", md).returncode == 0
    done = run_tool(tool, *(["check", md] if tool == "tangle.py" else [md, "-o", tmp_path / "p.html"]))
    assert done.returncode == 2
    assert b"book_figures.txt: error: " in done.stderr
    assert (b"too large" if kind.endswith("file") else b"not a regular file") in done.stderr


def counting(monkeypatch, module, name: str) -> list:
    calls = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)
    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.mark.parametrize("lines", [50, 400])
def test_hang_a_paragraph_is_read_once_however_many_children(tmp_path, monkeypatch, lines):
    """The paragraph of `w *e*` lines (once 184 s at 48 KB): each inline text is flattened a fixed number of
    times, when it is read and when it is drawn, not once per child."""
    md = write(tmp_path, lesson("w *e*\n" * lines + "\n准确率 0.9300。\n"))
    calls = counting(monkeypatch, literate.inline, "inline_parts")
    doc = literate.markdown.load(md, str(md))
    weaving.weave(doc)
    assert 0 < len(calls) <= 4 * inline_texts(doc)


def inline_texts(doc) -> int:
    """How many inline texts (paragraphs, headings, table cells) the lesson has."""
    return sum(1 for _ in literate.blocks.texts(doc.blocks))


@pytest.mark.parametrize("count", [20, 400])
def test_hang_each_sentence_and_transcript_line_is_scored_once(tmp_path, monkeypatch, count):
    """A line of numbers, and many paragraphs citing one number against a long transcript (once 221 s and
    72 s): the words of each text are read once, however many numbers stand in it."""
    printed = "".join(f"line {i} 0.9300\n" for i in range(count))
    body = " ".join(["0.9300"] * count) + "\n\n" + "段落说 0.9300。\n\n" * count
    md = write(tmp_path, lesson(body, code=f"for i in range({count}):\n    print(f'line {{i}} 0.9300')\n",
                                transcript=printed))
    doc = literate.markdown.load(md, str(md))
    calls = counting(monkeypatch, literate.inline, "words")  # as the page reads them
    _, page, errors = weaving.weave(doc)
    assert not errors and len(page.linked) == 2 * count
    assert len(calls) <= count + 4  # each transcript line once, and the few distinct contexts


class Counted:
    """A compiled pattern that counts how often it is used to search."""

    def __init__(self, pattern):
        self.pattern, self.calls = pattern, []

    def finditer(self, *args):
        self.calls.append("finditer")
        return self.pattern.finditer(*args)

    def search(self, *args):
        self.calls.append("search")
        return self.pattern.search(*args)


@pytest.mark.parametrize("count", [20, 2000])
def test_hang_book_spans_are_found_in_one_pass(tmp_path, monkeypatch, count):
    """1 MiB of 原书 0.25 (once 245 s): the ends of all 原书 spans of a paragraph come from one scan of it,
    not a search from each 原书 to the end of the sentence."""
    md = write(tmp_path, lesson("原书 0.25 " * count + "\n"))
    doc = literate.markdown.load(md, str(md))
    counted = Counted(literate.prose.BOOK_SPAN_END)
    monkeypatch.setattr(literate.prose, "BOOK_SPAN_END", counted)
    errors, numbers = literate.proofs.stale_numbers(doc)
    assert not errors and len(numbers) == count and all(number.book for number in numbers)
    assert "search" not in counted.calls and len(counted.calls) <= inline_texts(doc)


def test_hang_dollars_before_many_braces_are_looked_at_once(tmp_path, monkeypatch):
    """$ and then 5,000 { (once quadratic in every command: a lazy search for the formula's sign between two
    dollars): each $ looks ahead to the next $ of its line, and no further, so the text is read about once."""
    text = "$" + "{" * 5000 + " 价格 $5 和 $x^2$ $$"
    md = write(tmp_path, lesson(text + "\n"))
    looked = []
    pattern = formulas.INLINE_MATH

    class Looking:
        def finditer(self, text):
            looked.append(len(text))
            return pattern.finditer(text)
    monkeypatch.setattr(formulas, "INLINE_MATH", Looking())
    doc = literate.markdown.load(md, str(md))
    assert looked and sum(looked) <= 2 * len(text) + 1000  # each paragraph's source read once, at load
    assert len(doc.warnings) == 1 and "$...$" in doc.warnings[0]  # the $x^2$; a lone $$ is text on the page too


def test_hang_code_spans_are_paired_in_one_pass_over_their_backticks(tmp_path, monkeypatch):
    """$`a repeated (once quadratic in weave.py: a lazy regex searched for the closing `$ from every opener):
    the runs of backticks are found once per paragraph and each is paired in one step."""
    calls = counting(monkeypatch, formulas, "code_spans")
    page = woven(tmp_path, lesson("$`a" * 3000 + "\n\n$`x^2`$ 和 `code` 和 $`y`$\n"))
    assert len(calls) <= 4 and page.count("<math") == 2
    assert formulas.code_spans("$`a" * 5 + "`b`") == [(1, 5), (7, 11), (13, 16)]  # the last ` opens nothing
    assert formulas.code_spans("``a`b``") == [(0, 7)] and formulas.code_spans("`a") == []


@pytest.mark.parametrize("language", ["python", "c", "markdown"])
def test_hang_a_lexer_never_sees_a_run_of_blank_lines(tmp_path, monkeypatch, language):
    """Pygments' Python, C and Markdown lexers take time quadratic in a run of blank or blank-looking lines:
    each run reaches the lexer as one empty line; the page still shows every line as it is written."""
    pytest.importorskip("pygments")
    seen = []
    original = page_code.get_lexer_by_name

    def lexer_by_name(*args, **kwargs):
        lexer = original(*args, **kwargs)
        get_tokens = lexer.get_tokens
        lexer.get_tokens = lambda text: (seen.append(text), get_tokens(text))[1]
        return lexer
    monkeypatch.setattr(page_code, "get_lexer_by_name", lexer_by_name)
    code = "x = 1\n" + " \t\n" * 300 + "\n" * 300 + "y = 2\n"
    if language == "python":  # a python fence is a chunk
        page = woven(tmp_path, lesson(code=code + "print('acc 0.9300')\n"))
    else:
        page = woven(tmp_path, lesson(f"```{language}\n{code}```\n"))
    text = next(found for found in seen if "y = 2" in found)
    assert "\n\n\n" not in text and not re.search(r"\n[ \t]+\n", text)
    assert page.count("\t") >= 300  # the blank-looking lines, shown as written


def test_hang_stitch_diffs_a_chunk_of_identical_lines_in_linear_work(tmp_path, monkeypatch, capsys):
    """2,000 identical lines, every 100th changed (once quadratic, and worse, in difflib): the exact diff
    only ever sees stretches of up to EXACT_DIFF_LINES lines a side; past that, lines changed in place are
    paired by position. The edits land where they were made."""
    import difflib
    import literate.stitch
    md = write(tmp_path, "```python {file=generated/p.py}\n" + "x = 1\n" * 2000 + "```\n")
    assert tangle.main(["tangle", str(md)]) == 0
    generated = tmp_path / "generated" / "p.py"
    lines = generated.read_text().split("\n")
    for at in range(0, 2000, 100):
        lines[3 + at] = f"x = {at}"
    generated.write_text("\n".join(lines))
    exact, original = [], difflib.SequenceMatcher

    def matcher(junk, a, b, autojunk=True):
        if not autojunk:
            exact.append(len(a) * len(b))
        return original(junk, a, b, autojunk=autojunk)
    monkeypatch.setattr(literate.diffing.difflib, "SequenceMatcher", matcher)
    assert tangle.main(["stitch", str(md)]) == 0, capsys.readouterr().err
    assert max(exact, default=0) <= literate.diffing.EXACT_DIFF_LINES ** 2
    assert md.read_text().split("\n")[1:2001:100] == [f"x = {at}" for at in range(0, 2000, 100)]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="`~{} \t-1.x>", max_size=16))
def test_hang_the_fence_attribute_pattern_reads_as_it_did(line):
    """FENCE_WITH_ATTRIBUTES finds the first { without backtracking (a line of many { was quadratic; the
    4n/n ratio is in bench/pathological.py): it still matches exactly the lines it matched before."""
    import literate.markdown
    before = re.compile(r"^[ \t>]*(?:(?:[-+*]|[0-9]{1,9}[.)])[ \t]+)*(?:`{3,}[^`]*|~{3,}.*)\{.*\}[ \t]*$")
    assert bool(literate.markdown.FENCE_WITH_ATTRIBUTES.match(line)) == bool(before.match(line))


def parts_lesson(count: int) -> str:
    """A program printing `count` parts, and its transcript in as many fences, each part's output now changed."""
    code = f"for i in range({count}):\n    print('part', i)\n    print('y')\n"
    return (f"# L\n\n```python {{file=generated/a.py}}\n{code}```\n"
            + "".join(f"\n```text {{transcript=generated/a.py part={i + 1}}}\npart {i}\nx\n```\n" for i in range(count)))


def fastest(work, repeat: int = 3) -> float:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        timings.append(time.perf_counter() - start)
    return min(timings)


def test_hang_a_transcript_in_thousands_of_parts_is_cut_and_rewritten_in_linear_time(tmp_path):
    """Cutting the new output into its parts looked for each part's first line in the whole output (8,000 parts:
    3 s in check, 8 s in update): now every output line is looked at once, and the lesson rewritten in one pass.
    Sixteen times the parts may take at most 64 times as long (quadratic: 256 times)."""
    from literate import transcripts

    def cost(count: int) -> float:
        md = write(tmp_path, parts_lesson(count))
        doc = literate.markdown.load(md, str(md))
        output = "".join(f"part {i}\ny\n" for i in range(count))
        transcript = doc.transcripts["generated/a.py"]
        parts, why, _ = transcripts.split_output(transcript, output)
        assert why == "" and len(parts) == count and parts[-1] == f"part {count - 1}\ny\n"
        text = md.read_text()
        return fastest(lambda: (transcripts.split_output(transcript, output),
                                transcripts.rewrite_transcripts(doc, text, {"generated/a.py": output}),
                                [transcript.md_line(index) for index in range(0, 2 * count, 7)]))
    small, large = cost(500), cost(8000)
    assert large < 64 * small, (small, large)


def test_hang_equal_headings_get_distinct_anchors_in_one_step_each(tmp_path):
    page = woven(tmp_path, lesson("## 同名\n\n" * 300))
    ids = IdParser(page).ids
    assert len(ids) == len(set(ids)) and "同名-300" in ids


@linux
@pytest.mark.parametrize("keeps_output", [True, False], ids=["keeps stdout", "closes stdout"])
def test_hang_a_daemon_in_its_own_session_does_not_outlive_check(tmp_path, capsys, keeps_output):
    """A program that double-forks into a session of its own: check ends it (tangle.py is its subreaper),
    whether it keeps the pipe open or closes it first."""
    daemon = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        + ("" if keeps_output else "        os.close(1); os.close(2)\n")
        + "        open('daemon', 'w').write(str(os.getpid()))\n"
        "        time.sleep(300)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "while not os.path.exists('daemon') or not open('daemon').read():\n"
        "    time.sleep(0.01)\n"
        "print('acc 0.9300')\n")
    md = write(tmp_path, lesson(code=daemon))
    assert tangle.main(["tangle", str(md)]) == 0
    code = tangle.main(["check", str(md), "--timeout", "60"])
    err = capsys.readouterr().err
    pid = int((tmp_path / "daemon").read_text())
    assert code == (1 if keeps_output else 0), err
    if keeps_output:
        assert "still held its output open; stopped them all" in err
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] in "ZX"


# ---------------------------------------------------------------- tracebacks


@linux
def test_traceback_weave_interrupted_says_one_line(tmp_path):
    md = write(tmp_path, lesson("w *e*\n" * 40000))
    process = subprocess.Popen([sys.executable, str(ROOT / "weave.py"), str(md), "-o", str(tmp_path / "p.html")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(1.0)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=GUARD)
    if process.returncode == 0:
        pytest.skip("weave.py finished before the signal")
    assert process.returncode == 130, err
    lines = err.decode().splitlines()
    assert b"Traceback" not in err and len(lines) == 1 and lines[0].startswith("weave.py: interrupted (SIGINT)")
    assert lines[0].endswith("the page was not changed")
    assert not (tmp_path / "p.html").exists() and not list(tmp_path.glob("*.tmp"))


@linux
@pytest.mark.parametrize("tool", ["tangle.py", "notebook.py"])
@pytest.mark.parametrize("after", [0.03, 0.1, 0.3])
def test_traceback_interrupted_at_any_moment_says_one_line(tmp_path, tool, after):
    """Ctrl-C while the modules load or while the command runs: one line, exit 130, never a traceback. The
    signal is sent that long after the interpreter's own start (measured here: before it, no script runs)."""
    if tool == "notebook.py":
        notebook_main()  # skips without nbformat
    md = write(tmp_path, NOTEBOOK_LESSON)
    argv = ["tangle", md] if tool == "tangle.py" else [md, "-o", tmp_path / "n.ipynb"]
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True, timeout=GUARD)
    after += time.monotonic() - start
    process = subprocess.Popen([sys.executable, str(ROOT / tool), *map(str, argv)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(after)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=GUARD)
    if process.returncode == 0:
        pytest.skip(f"{tool} finished before the signal")
    assert b"Traceback" not in err, err
    if (process.returncode, err) in ((-signal.SIGINT, b""), (1, b"KeyboardInterrupt\n")):
        return  # the interpreter's own: while it shut down after the work was done, or before the script began
    lines = err.decode().splitlines()
    assert process.returncode == 130 and len(lines) == 1 and lines[0].startswith(f"{tool}: interrupted (SIGINT)"), err


@linux
@pytest.mark.parametrize("tool", ["tangle.py", "weave.py"])
def test_traceback_a_ctrl_c_held_through_the_interpreters_start_up_is_the_one_line(tmp_path, tool):
    """The interpreter's own start-up cannot be guarded from inside (a Ctrl-C there is its traceback). A launcher
    that blocks SIGINT until the interpreter runs gets it reported by the start-up guard: one line, exit 130,
    nothing written, however early it came (here: before the interpreter even began)."""
    md = write(tmp_path, lesson())
    argv = ["tangle", md] if tool == "tangle.py" else [md, "-o", tmp_path / "p.html"]

    def held():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
        os.kill(os.getpid(), signal.SIGINT)  # pending, before exec: the interpreter starts with it
    process = subprocess.run([sys.executable, str(ROOT / tool), *map(str, argv)], capture_output=True,
                             preexec_fn=held, timeout=GUARD)
    assert process.returncode == 130, process
    assert process.stderr.decode().splitlines() == [
        f"{tool}: interrupted (SIGINT) while starting; "
        + ("nothing was run or written" if tool == "tangle.py" else "the page was not changed")]
    assert not (tmp_path / "generated").exists() and not (tmp_path / "p.html").exists()


def test_traceback_python_dash_capital_s_loads_the_site_packages_under_the_guard(tmp_path):
    """python -S tangle.py: the site-packages (markdown-it) load inside the start-up guard, and the command works."""
    md = write(tmp_path, lesson())
    done = subprocess.run([sys.executable, "-S", str(ROOT / "tangle.py"), "tangle", str(md)], capture_output=True,
                          timeout=GUARD)
    assert done.returncode == 0 and done.stdout.decode().startswith("wrote "), done


def test_traceback_notebook_to_a_closed_pipe(tmp_path):
    notebook_main()
    md = write(tmp_path, NOTEBOOK_LESSON)
    done = subprocess.run(f"{sys.executable} {ROOT / 'notebook.py'} {md} -o {tmp_path / 'n.ipynb'} | true",
                          shell=True, capture_output=True, timeout=GUARD)
    assert b"Traceback" not in done.stderr and done.stderr == b"" and (tmp_path / "n.ipynb").exists()


def test_traceback_notebook_on_code_nested_too_deeply(tmp_path, capsys):
    make_notebook = notebook_main()
    deep = "    y = " + "-" * 100000 + "1\n"
    md = write(tmp_path, NOTEBOOK_LESSON.replace("    print('acc 0.9300')\n", "    print('acc 0.9300')\n" + deep))
    assert make_notebook([str(md), "-o", str(tmp_path / "n.ipynb")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) == 1 and "nested too deeply" in err
    assert "out of memory" not in err


def test_traceback_weave_on_a_weight_with_hundreds_of_digits(tmp_path, capsys):
    row = "输出 1  1" + "0" * 400 + ".0  0.10"
    md = write(tmp_path, lesson("<!-- literate\nheatmap: 输出 输入 图例\n-->\n", code=f"print('   1    2')\nprint('{row}')\n", transcript=f"   1    2\n{row}\n"))
    assert weave.main([str(md), "-o", str(tmp_path / "p.html")]) == 0
    assert "Traceback" not in capsys.readouterr().err and "<svg" in (tmp_path / "p.html").read_text()


def test_traceback_weave_to_a_closed_pipe(tmp_path):
    md = write(tmp_path, lesson())
    done = subprocess.run(f"{sys.executable} {ROOT / 'weave.py'} {md} -o - | head -c 20", shell=True,
                          capture_output=True, timeout=GUARD)
    assert done.stdout == b"<!DOCTYPE html>\n<htm" and b"Traceback" not in done.stderr


@pytest.mark.parametrize("encoding", ["ascii", "cp1252"])
def test_traceback_weave_and_check_on_a_console_that_cannot_show_chinese(tmp_path, encoding):
    md = write(tmp_path, lesson(transcript="准确率 0.9300\n", code="print('acc 0.9300')\n"), name="讲义.md")
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    assert run_tool("tangle.py", "tangle", md, env=env).returncode == 0
    check = run_tool("tangle.py", "check", md, env=env)
    assert check.returncode == 1 and b"Traceback" not in check.stderr
    assert b"text/layout changed" in check.stderr + check.stdout and b"transcript differs" in check.stdout
    assert b"-\\u51c6\\u786e\\u7387 0.9300" in check.stdout  # the diff's 准确率, escaped, not lost
    page = run_tool("weave.py", md, "-o", tmp_path / "页.html", env=env)
    assert page.returncode == 0 and b"Traceback" not in page.stderr and b"\\u9875.html" in page.stdout


def test_traceback_a_formula_nested_400_deep_is_one_short_error(tmp_path, capsys):
    md = write(tmp_path, lesson("```math\n" + "{" * 400 + "x" + "}" * 400 + "\n```\n"))
    code = weave.main([str(md), "-o", str(tmp_path / "p.html")])
    err = capsys.readouterr().err
    if code == 0:
        return  # latex2mathml read it: nothing to report
    assert code == 2 and "cannot convert the formula" in err and len(err) < 600 and "Traceback" not in err


def test_traceback_deeply_nested_quotes_and_lists(tmp_path, capsys):
    md = write(tmp_path, lesson("> " * 300 + "x\n\n" + "".join("  " * i + "- x\n" for i in range(300))))
    code = weave.main([str(md), "-o", str(tmp_path / "p.html")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "nested too deeply" in err   # refused, as check refuses it
    assert not (tmp_path / "p.html").exists()                                      # and no page that drops the rest


# ---------------------------------------------------------------- wrong results


@pytest.mark.parametrize("variable, value", [("PYTHONSAFEPATH", "1"), ("PYTHONOPTIMIZE", "2"), ("PYTHONPATH", "evil"),
                                             ("PYTHONWARNINGS", "error"), ("PYTHONHASHSEED", "1"),
                                             ("PYTHONIOENCODING", "ascii"), ("PYTHONDONTWRITEBYTECODE", "")])
def test_wrong_the_callers_python_variables_do_not_reach_the_program(tmp_path, capsys, monkeypatch, variable, value):
    """The program imports a module of its folder (as experiments.py does), prints its docstring, asserts,
    and prints Chinese and a set of strings: none of it may change with the caller's PYTHON* variables."""
    (tmp_path / "evil").mkdir()
    (tmp_path / "evil" / "helper.py").write_text("raise SystemExit('the caller PYTHONPATH was used')\n")
    code = ('"""文档字符串"""\nimport sys\nsys.path.insert(0, __file__.rsplit("/", 1)[0])\nimport helper\n'
            "assert True\nprint(__doc__, sorted({'b', 'a'}), helper.X, sys.flags.optimize, sys.flags.safe_path)\n")
    expected = "文档字符串 ['a', 'b'] 1 0 False\n"
    md = write(tmp_path, lesson(code=code, transcript=expected))
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "helper.py").write_text("X = 1\n")
    assert tangle.main(["tangle", str(md)]) == 0
    monkeypatch.setenv(variable, value)
    monkeypatch.chdir(tmp_path)
    assert tangle.main(["check", str(md)]) == 0, capsys.readouterr().err


def test_wrong_the_run_keeps_the_variables_the_lesson_needs(tmp_path, capsys, monkeypatch):
    """Hash seed and one BLAS thread are set; no allocator variable (the program sets its own thresholds)."""
    monkeypatch.delenv("MALLOC_TOP_PAD_", raising=False)
    code = "import os\nprint(*(os.environ.get(n, '-') for n in ('PYTHONHASHSEED', 'OPENBLAS_NUM_THREADS', 'MALLOC_TOP_PAD_')))\n"
    md = write(tmp_path, lesson(code=code, transcript="0 1 -\n"))
    assert tangle.main(["tangle", str(md)]) == 0
    assert tangle.main(["check", str(md)]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("target", [".venv/lib/python3.11/site-packages/sitecustomize.py", ".git/hooks/x.py",
                                    "sitecustomize.py", "tests/conftest.py", "tests/test_evil.py", "a/conftest.py",
                                    "generated/__pycache__/x.py", "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml",
                                    "generated/pyproject.toml", "docs/PyTest.ini", "setup.py", "noxfile.py",
                                    ".pre-commit-config.yaml", "generated/.hidden.py"])
def test_wrong_a_root_never_lands_where_python_or_pytest_would_run_it_unasked(tmp_path, capsys, target):
    """A root at pytest.ini (or any file pytest, pip or a git hook reads by itself) could silence the test suite:
    refused, as a root at conftest.py is, and nothing is written."""
    md = write(tmp_path, lesson(target=target))
    assert tangle.main(["tangle", str(md)]) == 2
    assert f"file={target} " in capsys.readouterr().err and not (tmp_path / target).exists()


@linux
def test_wrong_a_root_through_a_symlinked_folder_into_venv_is_refused(tmp_path, capsys):
    (tmp_path / ".venv" / "site").mkdir(parents=True)
    (tmp_path / "out").symlink_to(tmp_path / ".venv" / "site")
    md = write(tmp_path, lesson(target="out/sitecustom.py"))
    assert tangle.main(["tangle", str(md)]) == 2
    assert "leads to .venv/site/sitecustom.py (through a symlink)" in capsys.readouterr().err
    assert not list((tmp_path / ".venv").rglob("*.py"))


@pytest.mark.parametrize("space", ["\u00a0", "\u3000", "\u2003"])
def test_wrong_tangle_writes_code_exactly_even_a_line_of_unusual_spaces(tmp_path, capsys, space):
    """A line of no-break or ideographic spaces inside a string literal is code: it is written as it is (only
    lines of spaces and tabs are written empty), and the program prints it."""
    code = f"text = \"\"\"a\n{space * 3}\nb\"\"\"\nprint(repr(text))\n"
    printed = repr(f"a\n{space * 3}\nb") + "\n"
    md = write(tmp_path, lesson(code=code, transcript=printed))
    assert tangle.main(["tangle", str(md)]) == 0
    assert f"\n{space * 3}\n" in (tmp_path / "generated" / "p.py").read_text()
    assert tangle.main(["check", str(md)]) == 0, capsys.readouterr()


def stale_bytecode_lesson(tmp_path):
    """A lesson whose program imports another generated file, p.py, with a stale .pyc beside it: compiled from
    an older p.py of the same size, stamped with the current one's mtime (a change within one second)."""
    import importlib.util
    import py_compile
    text = ("# 课\n\n```python {file=generated/p.py}\nVALUE = 'new'\n```\n\n```python {file=generated/main.py}\n"
            "import p\nprint(p.VALUE)\n```\n\n```text {transcript=generated/main.py}\nnew\n```\n")
    md = write(tmp_path, text)
    assert tangle.main(["tangle", str(md)]) == 0
    source = tmp_path / "generated" / "p.py"
    current, info = source.read_bytes(), source.stat()
    source.write_bytes(current.replace(b"'new'", b"'old'"))
    os.utime(source, ns=(info.st_atime_ns, info.st_mtime_ns))
    cached = importlib.util.cache_from_source(str(source))
    py_compile.compile(str(source), cfile=cached, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    source.write_bytes(current)
    os.utime(source, ns=(info.st_atime_ns, info.st_mtime_ns))
    return md, Path(cached)


def test_wrong_check_never_runs_stale_bytecode_nor_writes_any(tmp_path, capsys):
    md, cached = stale_bytecode_lesson(tmp_path)
    stale = cached.read_bytes()
    done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'generated'); import p; "
                           "print(p.VALUE)"], cwd=tmp_path, capture_output=True, text=True, timeout=GUARD)
    assert done.stdout == "old\n"  # the trap is real: a plain import reads the stale bytecode
    cached.write_bytes(stale)
    assert tangle.main(["check", str(md)]) == 0, capsys.readouterr()
    cached.unlink()
    assert tangle.main(["check", str(md)]) == 0
    assert not list(tmp_path.rglob("*.pyc")), "the run wrote bytecode into the project"


BROKEN_NUMBERS = {
    "a zero-width space": ("准确率 0\u200b.9400。", "U+200B ZERO WIDTH SPACE"),
    "a soft hyphen": ("准确率 0.94\u00ad00。", "U+00AD SOFT HYPHEN"),
    "a word joiner": ("准确率 0.9\u20604。", "U+2060 WORD JOINER"),
    "an HTML comment": ("准确率 0<!-- -->.9400。", "inline HTML '<!-- -->'"),
    "an HTML tag": ("准确率 0.<span>94</span>00。", "inline HTML '<span>'"),
    "full-width digits": ("准确率 ０.９４００。", "write 0.9400"),
    "emphasis": ("准确率 0.*94*00。", "split by emphasis"),
    "a link": ("准确率 [0.94](#x)00。", "split by emphasis, strikethrough or a link"),
    "in a table": ("| a |\n|---|\n| 0\u200b.9400 |\n", "U+200B"),
    "a Hangul filler": ("准确率 0.94\u316400。", "U+3164 HANGUL FILLER"),
    "a tag character": ("准确率 0.94\U000e003000。", "U+E0030 TAG DIGIT ZERO"),
    "a line separator": ("准确率 0.9\u20284。", "U+2028 LINE SEPARATOR"),
    "no digit before the point": ("准确率 .9400。", "write 0.9400"),
    "no digit before the point, signed": ("准确率 -.94 和 .9400。", "write 0.94"),
}


@pytest.mark.parametrize("body, says", BROKEN_NUMBERS.values(), ids=BROKEN_NUMBERS.keys())
def test_wrong_a_number_broken_by_what_the_reader_does_not_see_is_refused_by_check_and_page(tmp_path, capsys,
                                                                                           body, says):
    """0.9400 is not printed: as the reader sees it, the check must fail; read with the invisible part, it
    escaped the check (or was shown as two numbers on the page). Refused alike by check and by weave.py."""
    md = write(tmp_path, lesson(body + "\n"))
    assert tangle.main(["tangle", str(md)]) == 0
    capsys.readouterr()
    assert tangle.main(["check", str(md)]) == 2
    check = capsys.readouterr().err
    assert weave.main([str(md), "-o", str(tmp_path / "p.html")]) == 2
    page = capsys.readouterr().err
    assert says in check and check == page and re.search(r"lesson\.md:1[57]: error: ", check), (check, page)
    assert not (tmp_path / "p.html").exists()


def test_wrong_numbers_next_to_visible_marks_and_whole_in_markup_still_pass(tmp_path, capsys):
    md = write(tmp_path, lesson("准确率 **0.9300**，[0.9300](#x)，`x`0.9300，10×10 不算，0.9300\n0.9300。\n",
                                transcript="acc 0.9300 10\n", code="print('acc 0.9300 10')\n"))
    assert tangle.main(["tangle", str(md)]) == 0
    assert tangle.main(["check", str(md)]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("first, second", [("a b", "a_b"), ("x-2", None)], ids=["a b and a_b", "x twice and x-2"])
def test_wrong_two_fences_with_one_anchor_are_refused(tmp_path, capsys, first, second):
    if second is None:  # {#x} twice gives chunk-x and chunk-x-2, which {#x-2} also gets
        text = lesson(name="x").replace("```text", "```python {#x}\nprint(2)\n```\n\n```python {#x-2}\nprint(3)\n```\n\n```text")
        text = text.replace("<<x>>", "<<x>>\n<<x-2>>")
    else:
        text = lesson(name=first).replace("```text", f"```python {{#{second}}}\nprint(2)\n```\n\n```text")
        text = text.replace(f"<<{first}>>", f"<<{first}>>\n<<{second}>>")
    md = write(tmp_path, text)
    assert tangle.main(["tangle", str(md)]) == 2
    err = capsys.readouterr().err
    assert "a link to one would lead to the other" in err and "rename one of them" in err


# bidi controls, zero-width characters, the BOM, fillers that look like a blank, tag characters, line and
# paragraph separators, a variation selector: every character that shows nothing (literate/characters.py)
SHOWING_NOTHING = ["\u202e", "\u2066", "\u200b", "\u200d", "\u2060", "\ufeff", "\u3164", "\u115f", "\uffa0",
                   "\U000e0041", "\U000e007f", "\u2028", "\u2029", "\u00ad", "\u180e", "\ufe0f", "\u034f"]


@pytest.mark.parametrize("where", ["code", "name", "reference", "playground"])
@pytest.mark.parametrize("character", SHOWING_NOTHING)
def test_wrong_characters_that_show_nothing_are_refused_in_code_and_names_with_their_line(tmp_path, capsys, where,
                                                                                          character):
    if where == "code":
        text = lesson(code=f"access = 'user{character}'  # admin\nprint('acc 0.9300')\n")
    elif where == "playground":
        text = lesson("```python {playground=generated/p.py}\nname = 'a'\nname = 'a" + character + "'\n```\n")
    elif where == "name":
        text = lesson(name=f"打{character}印")
    else:
        text = lesson().replace("<<打印>>", f"<<打印>>\n<<打{character}印>>").replace(
            "```text", f"```python {{#打{character}印}}\nx = 1\n```\n\n```text")
    md = write(tmp_path, text)
    assert tangle.main(["tangle", str(md)]) == 2
    err = capsys.readouterr().err
    line = next(number for number, text in enumerate(text.split("\n"), 1) if character in text)
    assert f"lesson.md:{line}: error: U+{ord(character):04X}" in err, err
    assert not (tmp_path / "generated").exists()


def test_wrong_names_that_differ_only_in_normalisation_are_named_so(tmp_path, capsys):
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    md = write(tmp_path, lesson(name=composed).replace(f"<<{composed}>>", f"<<{decomposed}>>"))
    assert tangle.main(["tangle", str(md)]) == 2
    err = capsys.readouterr().err
    assert "looks the same, but they differ only in invisible characters" in err and "NFD" in err
    assert "did you mean" not in err


def test_wrong_a_lesson_without_transcript_names_no_empty_program(tmp_path):
    text = "# 课\n\n```python {file=generated/p.py}\nprint(1)\n```\n\n准确率 0.9300。\n"
    page = woven(tmp_path, text)
    assert "没有核对上：lesson.md 里没有实跑输出" in page and "没有核对上： 的" not in page


# ---------------------------------------------------------------- messages


def test_message_an_output_inside_a_file_names_the_file(tmp_path, capsys):
    md = write(tmp_path, lesson())
    assert weave.main([str(md), "-o", str(md / "x.html")]) == 2
    err = capsys.readouterr().err
    assert f"{md} is a file, not a folder" in err and "File exists" not in err


def test_message_weave_to_stdout(tmp_path, capsys):
    md = write(tmp_path, lesson())
    assert weave.main([str(md), "-o", "-"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("<!DOCTYPE html>") and err.startswith("wrote -:")


def test_message_a_full_disk_names_the_file_never_a_temporary_one(tmp_path, capsys, monkeypatch):
    import errno

    def full(_fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    md = write(tmp_path, lesson(transcript="old\n"))
    for argv, tool, named in ((["tangle", md], tangle, "generated/p.py"), (["update", md], tangle, "lesson.md"),
                              ([md, "-o", tmp_path / "p.html"], weave, "p.html")):
        if argv[0] == "update":
            assert tangle.main(["tangle", str(md)]) == 0
        monkeypatch.setattr(os, "fsync", full)
        capsys.readouterr()
        assert tool.main([str(arg) for arg in argv]) == 2
        monkeypatch.undo()
        err = capsys.readouterr().err
        assert f"{tmp_path}/{named}: error: cannot write it: no space left on the disk (free some" in err, err
        assert ".tmp" not in err and "Traceback" not in err
    assert not list(tmp_path.rglob("*.tmp"))


@pytest.mark.skipif(not Path("/usr/bin/make").exists() and not Path("/bin/make").exists(), reason="no make")
def test_message_make_without_python_says_how_to_name_one(tmp_path):
    for name in ("Makefile", "requirements.txt", "requirements-html.txt"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    done = subprocess.run(["make", "-C", str(tmp_path), ".venv/stamp", "PYTHON=no-such-python3"], capture_output=True,
                          timeout=GUARD)
    assert done.returncode != 0 and b"make PYTHON=" in done.stderr and not (tmp_path / ".venv").exists()


def test_message_a_lesson_deleted_while_update_runs_is_named(tmp_path, capsys):
    code = ("import contextlib, os\nwith contextlib.suppress(OSError):\n"
            "    os.remove(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'lesson.md'))\n"
            "print('acc 0.9300')\n")
    md = write(tmp_path, lesson(code=code, transcript="old\n"))
    assert tangle.main(["tangle", str(md)]) == 0
    assert tangle.main(["update", str(md)]) == 1
    err = capsys.readouterr().err
    assert f"{md}: error: no longer exists" in err and "git checkout" in err and "make update again" in err
    assert not md.exists() and (tmp_path / "generated").is_dir()


QUOTING_LESSONS = {
    "a citation comment repeated 5,000 times": lesson("<!-- 数字出自 generated/p.py -->0.9300；" * 5000 + "\n"),
    "a path 2,000 folders deep": lesson(target="d/" * 2000 + "p.py"),
    "a path 40 short folders deep": lesson(target="d/" * 40 + "p.py"),
    "a chunk name of 5,000 characters": lesson(name="名" * 5000),
    "a reference of 5,000 characters": lesson().replace("<<打印>>", "<<打印>>\n<<" + "名" * 5000 + ">>"),
    "an attribute of 100,000 characters": lesson().replace("{#打印}", "{#打印}".replace("}", " x" * 50000 + "}")),
    "a transcript naming one of 3,000 roots that is not there": "".join(
        f"```python {{file=generated/p{i}.py}}\nprint(1)\n```\n\n" for i in range(3000))
        + "```text {transcript=generated/none.py}\n1\n```\n",
}


@pytest.mark.parametrize("text", QUOTING_LESSONS.values(), ids=QUOTING_LESSONS.keys())
def test_message_an_error_quotes_a_bounded_part_of_the_input_and_names_its_cause(tmp_path, capsys, text):
    """Each error is one line of at most MAX_MESSAGE characters (as the manual says), however long what it quotes,
    and it names what is wrong (never "nested too deeply to read" for a long path, the recursion of making its
    folders)."""
    md = write(tmp_path, text)
    if tangle.main(["tangle", str(md)]) == 0:  # the citations are read by check
        capsys.readouterr()
        assert tangle.main(["check", str(md)]) == 2
    else:
        assert not (tmp_path / "generated").exists() and not (tmp_path / "d").exists()
    err = capsys.readouterr().err
    assert err and all(len(line) <= model.MAX_MESSAGE for line in err.splitlines()), max(map(len, err.splitlines()))
    assert "nested too deeply" not in err and "lesson.md:" in err


def test_message_an_unclosed_declarations_block_is_named_as_unclosed(tmp_path, capsys):
    md = write(tmp_path, "<!-- literate\nupdate: generated/p.py make update\n\n" + lesson())
    assert tangle.main(["tangle", str(md)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{md}:1: error: unclosed HTML comment: no --> follows") and "declaration" not in err
