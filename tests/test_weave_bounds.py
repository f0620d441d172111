"""What a lesson cannot make the page do, read with html.parser (the browser's view: test_weave_bounds_browser.py):
grow as the square of a transcript line (each number's tooltip quotes a bounded part of it), give a heading an
anchor the page gives something else, be made wider than a screen by a formula's spacing, or say after an
interrupt that the page was not changed when it was."""

import os
import re
import signal
import threading
from pathlib import Path

import pytest

pytest.importorskip("latex2mathml", reason="weave.py needs latex2mathml: make test installs requirements-html.txt")

from test_weave import Tree, build, lesson  # noqa: E402
from literate.page import command as weave  # noqa: E402  (weave.py's main)
from literate.page import maths  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def long_line_lesson(folder: Path, count: int) -> Path:
    """One transcript line of count numbers, and a paragraph citing each of them."""
    printed = " ".join(f"{i}.25" for i in range(count))
    md = folder / "lesson.md"
    md.write_text(f"# 课\n\n```python {{file=generated/a.py}}\nprint({printed!r})\n```\n\n```text {{transcript}}\n"
                  f"{printed}\n```\n\n" + "".join(f"数字 {i}.25 在这里。\n\n" for i in range(count)))
    return md


def test_a_numbers_tooltip_quotes_a_bounded_part_of_its_line_around_the_number(tmp_path, capsys):
    sizes = []
    for count in (500, 1000):
        folder = tmp_path / str(count)
        folder.mkdir()
        code, _, stderr, out = build(capsys, long_line_lesson(folder, count))
        assert code == 0, stderr
        page = out.read_text()
        links = Tree(page).all("a", "num")
        assert len(links) == count
        for link in links:
            quoted = link.attrs["title"].split("：", 1)[1]
            assert len(quoted) <= 120 + 2 and link.text() in quoted, link.attrs  # 120 characters, and … at the ends
            assert quoted.startswith("…") or quoted.startswith("0.25 ")
        sizes.append(len(page))
    assert sizes[1] < 2.2 * sizes[0], sizes  # twice the lesson, about twice the page: not four times


def test_a_short_line_is_quoted_whole(small_page):
    _, tree = small_page
    titles = [link.attrs["title"] for link in tree.all("a", "num")]
    assert titles and all(title.endswith("：acc 0.9300 x 1.2345") or title.endswith("：more 0.6180") for title in titles)


@pytest.fixture
def small_page(tmp_path, capsys):
    md = lesson(tmp_path)
    code, _, stderr, out = build(capsys, md)
    assert code == 0, stderr
    return md, Tree(out.read_text())


# ---------------------------------------------------------------- anchors


def number_target(md: Path) -> str:
    """The anchor of the number 0.9300 on the first transcript line (where the prose's 0.9300 links)."""
    line = next(i for i, text in enumerate(md.read_text().split("\n"), 1) if text == "acc 0.9300 x 1.2345")
    return f"L{line}-0.9300", f"L{line}"


def test_no_heading_takes_an_anchor_the_page_gives_to_something_else(tmp_path, capsys):
    """Headings written as every kind of the page's own anchors (a transcript line, a number on it, a line of
    code, a caption, the contents, the summary) and as what the page makes of equal headings: every id once,
    and each link of the page leads where it should."""
    md = lesson(tmp_path)
    number, line = number_target(md)
    code_line = next(i for i, text in enumerate(md.read_text().split("\n"), 1) if text == "import sys")
    headings = [number, line, f"L{code_line}", "chunk-打印_结果", "file-generated/p.py", "output-generated/p.py-2",
                "contents", "verified", "section-contents", "重复", "重复", "重复-2"]
    md.write_text(md.read_text() + "\n" + "\n\n".join(f"## {text}" for text in headings) + "\n")  # lines stay
    code, _, stderr, out = build(capsys, md)
    assert code == 0, stderr
    tree = Tree(out.read_text())
    ids = tree.by_id()  # fails on an id given twice
    assert ids[number].tag == "span" and "n" in ids[number].classes()
    assert ids[line].tag == ids[f"L{code_line}"].tag == "span"
    assert ids["chunk-打印_结果"].tag == ids["output-generated/p.py-2"].tag == "figure"
    assert ids["contents"].tag == "nav" and ids["verified"].tag == "p"
    contents = [a.attrs["href"][1:] for a in ids["contents"].iter() if a.tag == "a"]
    assert [ids[anchor].text() for anchor in contents[-len(headings) :]] == headings
    assert all(ids[anchor].tag == "h2" for anchor in contents[-len(headings) :])
    for link in tree.all("a", "num"):
        assert ids[link.attrs["href"][1:]].tag == "span", link.attrs


# ---------------------------------------------------------------- formulas' spacing


SPACING = [r"a\hspace{100cm}b", r"a" + r"\quad" * 300 + "b", r"a\kern 50em b", r"a\kern-50em b", r"\mkern900mu x",
           r"a\mspace{-1000mu}b", r"\phantom{" + "x" * 300 + "}", r"a" + r"\!" * 200 + "b", r"\text{" + " " * 300 + "}",
           "a" + "~" * 300 + "b", r"{\Huge{\Huge{\Huge{\Huge x}}}}", r"\mathrlap{\hspace{10cm}}", r"\rule{10cm}{50cm}",
           r"\hphantom{\hspace{20cm}}", r"\qquad" * 40]


# The page's bounds (docs/page.md): a space at most 2em wide and 1em back; a formula's spaces, blanks (half an em
# each) and phantom characters (an em each) at most 12em together, its spaces back at most 1em; text at most 3 times
# as large as around it.
MAX_SPACE, MIN_SPACE, SPACE_BUDGET, MAX_SCALE = 2.0, -1.0, 12.0, 3.0
EMS = {"em": 1, "ex": 0.5, "mu": 1 / 18, "pt": 1 / 12, "pc": 1, "px": 1 / 16, "in": 6, "cm": 6 / 2.54, "mm": 0.6 / 2.54}


def ems(value: str) -> float:
    """A length as MathML Core reads it, in ems (a mu, which it does not read, as TeX's); nan: no length."""
    match = re.fullmatch(r"(-?[0-9]*\.?[0-9]+)([a-z]*)", value.strip())
    if not match or match[2] not in [*EMS, ""] or (not match[2] and float(match[1])):
        return float("nan")
    return float(match[1]) * EMS.get(match[2], 1)


@pytest.mark.parametrize("latex", SPACING, ids=range(len(SPACING)))
def test_a_formulas_spacing_is_bounded(tmp_path, capsys, latex):
    """However the spacing is asked for, a formula's spaces, blanks and phantoms together stay within the budget,
    no space goes back more than an em, and no text is enlarged more than MAX_SCALE times."""
    md = lesson(tmp_path)
    md.write_text(md.read_text().replace("行内公式", f"间距 $`{latex}`$ 行内公式")
                  .replace("```math\n", f"```math\n{latex}\n"))
    code, _, stderr, out = build(capsys, md)
    assert code == 0, stderr
    tree = Tree(out.read_text())
    for formula in tree.all("math"):
        across = back = 0.0
        for element in formula.iter():
            for key in ("width", "lspace", "rspace"):
                if key in element.attrs and element.tag != "svg":
                    size = ems(element.attrs[key])
                    assert MIN_SPACE <= size <= MAX_SPACE, element.attrs
                    across, back = across + max(size, 0), back + min(size, 0)
            for key in ("height", "depth"):
                if key in element.attrs:
                    assert ems(element.attrs[key]) <= MAX_SPACE, element.attrs
            scale = 1.0
            for outer in [element, *element.ancestors()]:
                if "mathsize" in outer.attrs:
                    scale *= ems(outer.attrs["mathsize"])
            assert scale <= MAX_SCALE + 1e-6
        blanks = sum(text.count(" ") + text.count("\u00a0") for text in [formula.text()])
        phantoms = sum(len(e.text()) for e in formula.iter() if e.tag == "mphantom")
        assert across + 0.5 * blanks + phantoms <= SPACE_BUDGET + 1e-6 and back >= MIN_SPACE - 1e-6


def test_spacing_as_the_lesson_writes_it_is_kept():
    """Ordinary spacing passes as it is (mu in ems: CSS has no mu, and would draw no space)."""
    class Page:
        formulas, problems = {}, []
    shown = str(maths.mathml(Page, r"a\,b\;c\quad d\qquad e\!f\mkern18mu g", False, 1))
    assert re.findall(r'width="([^"]*)"', shown) == ["0.167em", "0.278em", "1em", "2em", "-0.1667em", "1.0000em"]


def shown(latex: str) -> str:
    class Page:
        formulas, problems = {}, []
    return str(maths.mathml(Page, latex, False, 1))


def test_nothing_visible_is_drawn_away_from_its_box():
    """What would draw a formula's text outside its box (and over the text around it: test_weave_formula_ink_browser)
    is left out; what moves only phantoms, and spaces back between two characters, stay."""
    for latex in (r"\raise{2em}{\raise{2em}{x}}", r"\lower{1em}{x}", r"\smash{\frac{a}{b}}", r"\mathllap{x}",
                  r"\mathrlap{x}", r"\moveleft{3em}{x}"):
        assert not re.search(r"<mpadded [^>]", shown(latex)), latex
    assert '<mpadded width="0">' in shown(r"\vphantom{\frac{a}{b}} x")  # adds height, not width
    assert 'linethickness="0.2500em"' in shown(r"{a \above 30em b}") and 'linethickness="0"' in shown(r"a \choose b")
    assert re.findall(r"<mspace[^>]*>", shown(r"\kern-1em x\kern-1em")) == ["<mspace>", "<mspace>"]  # at the ends
    assert re.findall(r"<mspace[^>]*>", shown(r"x\!y")) == ['<mspace width="-0.1667em">']  # between two: kept


# ---------------------------------------------------------------- where the page is written


def test_the_page_is_never_written_through_a_symlink(tmp_path, capsys):
    """-o naming a symlink is refused, whether it leads nowhere (weave.py wrote the page at the far end, in a folder
    it made) or to a page weave.py wrote; nothing is created or changed at either end."""
    md = lesson(tmp_path)
    assert build(capsys, md)[0] == 0
    page = md.parent / "build" / "page.html"
    before = page.read_bytes()
    (tmp_path / "dangling.html").symlink_to(tmp_path / "elsewhere" / "new.html")
    (tmp_path / "to-page.html").symlink_to(page)
    md.write_text(md.read_text() + "\n新的一段。\n")
    for link in ("dangling.html", "to-page.html"):
        assert weave.main([str(md), "-o", str(tmp_path / link)]) == 2
        err = capsys.readouterr().err
        assert f"{tmp_path / link}: error: is a symbolic link" in err and "Traceback" not in err, err
    assert not (tmp_path / "elsewhere").exists() and page.read_bytes() == before


# ---------------------------------------------------------------- interrupts


def interrupted_while_writing(monkeypatch):
    """SIGTERM while the page is being written (weave holds it back until the file is whole): sent from the fsync
    of the page's temporary file, a slow disk's moment."""
    real = os.fsync

    def fsync(descriptor):
        # to the main thread, as a terminal's or a shell's signal reaches a one-threaded command: an other
        # thread left by an earlier test (which does not hold signals back) must not take it instead
        signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
        return real(descriptor)
    monkeypatch.setattr(os, "fsync", fsync)


def test_an_interrupt_while_the_page_is_written_says_the_page_was_written(tmp_path, capsys, monkeypatch):
    md = lesson(tmp_path)
    code, _, _, out = build(capsys, md)
    assert code == 0
    md.write_text(md.read_text().replace("## 二、公式", "## 二、新的公式"))
    interrupted_while_writing(monkeypatch)
    code, _, stderr, _ = build(capsys, md)
    assert code == 128 + signal.SIGTERM and "新的公式" in out.read_text()
    assert stderr.strip().endswith(f"weave.py: interrupted (SIGTERM); {out} holds the new page already"), stderr
    assert "not changed" not in stderr


def test_an_interrupt_before_the_page_is_written_says_it_was_not_changed(tmp_path, capsys, monkeypatch):
    md = lesson(tmp_path)
    code, _, _, out = build(capsys, md)
    before = out.read_bytes()
    md.write_text(md.read_text().replace("## 二、公式", "## 二、新的公式"))

    def interrupt(doc):
        raise KeyboardInterrupt
    monkeypatch.setattr(weave, "weave", interrupt)
    code, _, stderr, _ = build(capsys, md)
    assert code == 128 + signal.SIGINT and out.read_bytes() == before
    assert stderr.strip().endswith("\nweave.py: interrupted (SIGINT); the page was not changed")
