"""The lesson's figures (literate/figures.py, drawing.py, tables.py): drawn from the transcript part that the image's
paragraph links to, committed beside the lesson, checked like a quoted number, redrawn by update, never over a file
tangle.py did not draw or one edited by hand; the same drawing on the page and in the notebook."""

import hashlib
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import ROOT, run, write
from literate import drawing, figures, markdown, tables
from literate.declarations import Curves, Heatmap

PRINTS = '''\
print("三个矩阵，每格是权重的百分之几：")
print("        甲                    乙")
print("输入      1  2  3    1  2  3")
print("输出 1   80 10 10   34 33 33")
print("输出 2   10 80 10   33 34 33")
print("输出 3   10 10 80   33 33 34")
print()
print("横轴：第几轮")
print("纵轴：逐位正确、降多少（规则：至少 0.10）")
print("曲线：甲、乙")
for n, a, b in ((0, 0.20, 0.20), (10, 0.50, 0.30), (20, 0.90, 0.35), (100, 1.00, 0.40)):
    print("%-4d %.4f %.4f   %.4f %.4f" % (n, a, a - 0.2, b, 0.01))
'''

LESSON = f"""\
<!-- literate
heatmap: 输出 输入 图例 percent anti-diagonal
curves: 横轴 纵轴 曲线
figures: figures
-->

# 课

两个模型的矩阵：

![甲的对角线清楚，乙几乎均匀](figures/weights.svg)
数字：[第 1 段](#output-generated/p.py-1)

```python {{file=generated/p.py}}
{PRINTS}```

```text {{transcript=generated/p.py part=1}}
三个矩阵，每格是权重的百分之几：
```

![两个模型训练途中的两条曲线](figures/growth.svg)
数字：[第 2 段](#output-generated/p.py-2)

```text {{transcript=generated/p.py part=2}}
横轴：第几轮
```
"""


@pytest.fixture
def drawn(tmp_path, capsys):
    """A lesson with two figures, recorded and drawn by update."""
    md = write(tmp_path, LESSON, "lesson.md")
    (tmp_path / "book_figures.txt").write_text("")
    assert run(capsys, "tangle", md)[0] == 0
    code, out, err = run(capsys, "update", md)
    assert code == 0, err
    drew = [line.split()[-1] for line in out.splitlines() if line.startswith("drew ")]
    assert [Path(path).relative_to(tmp_path).as_posix() for path in drew] == ["figures/weights.svg", "figures/growth.svg"]
    return md


def check(capsys, md: Path) -> tuple[int, str, str]:
    """check, after tangle: an edit that moves the lesson's lines moves the generated file's line comments too."""
    run(capsys, "tangle", md)
    return run(capsys, "check", md)


def test_update_draws_each_figure_and_check_passes(drawn, capsys):
    code, out, err = check(capsys, drawn)
    assert code == 0, err
    assert "and 2 figures" in out
    text = (drawn.parent / "figures" / "weights.svg").read_text(encoding="utf-8")
    banner, hash_line, body = text.split("\n", 2)
    assert banner.startswith("<!-- Drawn by tangle.py from lesson.md: the transcript of generated/p.py, part 1.")
    assert hash_line == f"<!-- sha256:{hashlib.sha256(body.encode()).hexdigest()} -->"
    svg = ET.fromstring(body)  # a well-formed SVG file, as GitHub and editors read it
    assert svg.tag == "{http://www.w3.org/2000/svg}svg" and svg.get("role") == "img"
    assert svg.find("{http://www.w3.org/2000/svg}title").text == "甲的对角线清楚，乙几乎均匀"


def test_a_changed_transcript_number_fails_the_check_on_its_figure(drawn, capsys):
    text = drawn.read_text(encoding="utf-8")
    drawn.write_text(text.replace("\n输出 1   80 10 10", "\n输出 1   70 20 10"), encoding="utf-8")
    code, out, err = check(capsys, drawn)
    assert code == 1
    assert ("figures/weights.svg: error: not what the transcript of generated/p.py, part 1 prints now (drawn from an "
            "older transcript); redraw it: python tangle.py update") in err
    assert "figures/growth.svg" not in err and "1 figure not what the transcript draws" in out


def test_a_deleted_figure_fails_the_check_and_update_draws_it_again(drawn, capsys):
    figure = drawn.parent / "figures" / "growth.svg"
    before = figure.read_bytes()
    figure.unlink()
    code, _, err = check(capsys, drawn)
    assert code == 1 and "figures/growth.svg: error: missing; draw it: python tangle.py update" in err
    assert run(capsys, "update", drawn)[0] == 0
    assert figure.read_bytes() == before


def test_the_update_command_the_lesson_declares_is_the_one_named(drawn, capsys, monkeypatch):
    monkeypatch.chdir(drawn.parent)  # the declared command is named where it runs: in the lesson's folder
    drawn.write_text(drawn.read_text(encoding="utf-8").replace("figures: figures\n",
                                                               "figures: figures\nupdate: generated/p.py make redraw\n"),
                     encoding="utf-8")
    (drawn.parent / "figures" / "weights.svg").unlink()
    code, _, err = check(capsys, drawn)
    assert "missing; draw it: make redraw" in err


def test_a_figure_edited_by_hand_is_never_overwritten(drawn, capsys):
    figure = drawn.parent / "figures" / "weights.svg"
    edited = figure.read_text(encoding="utf-8").replace("#ffffff", "#fefefe", 1)
    figure.write_text(edited, encoding="utf-8")
    code, _, err = check(capsys, drawn)
    assert code == 1 and "figures/weights.svg: error: edited by hand since it was drawn" in err
    code, _, err = run(capsys, "update", drawn)
    assert code == 2 and "figures/weights.svg: error: edited by hand" in err, err
    assert figure.read_text(encoding="utf-8") == edited


def test_a_file_tangle_did_not_draw_is_never_overwritten(drawn, capsys):
    figure = drawn.parent / "figures" / "growth.svg"
    figure.write_text("<svg xmlns='http://www.w3.org/2000/svg'>mine</svg>\n", encoding="utf-8")
    code, _, err = check(capsys, drawn)
    assert code == 1 and "figures/growth.svg: error: exists and was not drawn by tangle.py" in err
    assert run(capsys, "update", drawn)[0] == 2
    assert "mine" in figure.read_text(encoding="utf-8")


def test_a_figure_through_a_symlink_out_of_the_folder_is_refused(drawn, capsys, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    figure = drawn.parent / "figures" / "growth.svg"
    figure.unlink()
    figure.symlink_to(outside / "growth.svg")
    code, _, err = run(capsys, "update", drawn)
    assert code == 2 and "figures/growth.svg: error: leads outside the folder of the lesson" in err
    assert not (outside / "growth.svg").exists()


@pytest.mark.parametrize("change,message", [
    ("数字：[第 1 段](#output-generated/p.py-1)", "its paragraph links to the transcript part it is drawn from"),
    ("数字：[第 1 段](#output-generated/p.py-1) 和 [第 2 段](#output-generated/p.py-2)",
     "its paragraph links to more than one transcript part"),
])
def test_a_figure_needs_exactly_one_link_to_its_part(drawn, capsys, change, message):
    text = drawn.read_text(encoding="utf-8")
    replacement = "数字在下面。" if "和" not in change else change
    drawn.write_text(text.replace("数字：[第 1 段](#output-generated/p.py-1)", replacement), encoding="utf-8")
    code, _, err = check(capsys, drawn)
    assert code == 2 and "lesson.md:11: error: figure figures/weights.svg: " + message in err


@pytest.mark.parametrize("image,message", [
    ("![](figures/weights.svg)", "its description is empty"),
    ("![甲](figures/weights.png)", "a figure the tools draw is an .svg file"),
])
def test_a_figure_without_description_or_not_svg_is_refused(drawn, capsys, image, message):
    text = drawn.read_text(encoding="utf-8").replace("![甲的对角线清楚，乙几乎均匀](figures/weights.svg)", image)
    drawn.write_text(text, encoding="utf-8")
    code, _, err = check(capsys, drawn)
    assert code == 2 and message in err


def test_a_figure_whose_part_prints_nothing_to_draw_is_refused(drawn, capsys):
    text = drawn.read_text(encoding="utf-8").replace("(#output-generated/p.py-2)", "(#output-generated/p.py-1)")
    text = text.replace("数字：[第 1 段](#output-generated/p.py-1)\n", "").replace("![甲的对角线清楚，乙几乎均匀](figures/weights.svg)\n", "")
    drawn.write_text(text.replace("heatmap: 输出 输入 图例 percent anti-diagonal\n", ""), encoding="utf-8")
    code, _, err = check(capsys, drawn)
    assert code == 2 and "prints nothing it can draw: neither matrices (heatmap: not declared)" in err


def test_an_image_outside_the_figures_folder_is_only_an_image(drawn, capsys):
    text = drawn.read_text(encoding="utf-8").replace("![两个模型训练途中的两条曲线](figures/growth.svg)",
                                                     "![一张照片](photos/cat.png)")
    drawn.write_text(text, encoding="utf-8")
    code, out, err = check(capsys, drawn)
    assert code == 0, err
    assert "and 1 figure;" in out


def test_the_same_figure_is_drawn_the_same_every_time(drawn):
    doc = markdown.load(drawn, str(drawn))
    for figure in figures.lesson_figures(doc):
        assert figures.drawing(doc, figure) == figures.drawing(markdown.load(drawn, str(drawn)), figure)


# ---------------------------------------------------------------- reading what a transcript prints


def test_a_table_of_checkpoints_is_read_with_its_rules():
    lines = ["标题", "横轴：第几轮", "纵轴：准确率、降多少（规则：至少 0.10）", "曲线：甲（学习率 0.02）、乙",
             "0  0.2 0.0  0.2 0.0", "10 0.5 0.3  0.3 0.01", "不是数字的一行"]
    [table] = tables.parse_curves(lines, Curves("横轴", "纵轴", "曲线"))
    assert (table.start, table.end, table.counts) == (1, 6, "第几轮")
    assert table.quantities == [("准确率", None), ("降多少（规则：至少 0.10）", 0.10)]
    assert table.series == ["甲（学习率 0.02）", "乙"]
    assert table.values(1, 0) == [0.2, 0.3] and table.values(0, 1) == [0.0, 0.3]
    assert tables.parse_curves(lines, None) == []
    assert tables.parse_curves(lines[:5], Curves("横轴", "纵轴", "曲线")) == []  # one row is no curve


def test_curves_give_each_checkpoint_the_same_width_and_mark_where_the_spacing_changes():
    lines = ["横轴：第几轮", "纵轴：甲", "曲线：一"] + [f"{n} {n / 1000:.3f}" for n in (*range(0, 101, 10), 200, 300)]
    [table] = tables.parse_curves(lines, Curves("横轴", "纵轴", "曲线"))
    svg = drawing.curves_svg(table, "曲线")
    [line] = [e for e in ET.fromstring(svg).iter() if e.tag.endswith("polyline")]
    xs = [float(point.split(",")[0]) for point in line.get("points").split()]
    steps = [b - a for a, b in zip(xs, xs[1:])]
    assert max(steps) - min(steps) < 0.15  # 10 rounds and 100 rounds apart take the same width (to the 0.1 written)
    marks = [e for e in ET.fromstring(svg).iter() if e.tag.endswith("line") and e.get("stroke-width") == "1"]
    assert len(marks) == 2  # the two strokes of one mark, where 10 rounds become 100


# ---------------------------------------------------------------- the colours


def test_the_log_is_written_out_and_agrees_with_the_c_librarys():
    for x in (0.25, 0.5, 0.9, 1.0, 1.05, 1.34, 2.0, 7.5, 8.0, 1e-6, 123.456):
        assert abs(drawing.log2(x) - math.log2(x)) < 1e-12


def luminance(colour: str) -> float:
    red, green, blue = (int(colour[k:k + 2], 16) for k in (1, 3, 5))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def test_a_larger_multiple_is_darker_so_greyscale_keeps_the_order():
    multiples = [0.1, 0.25, 0.5, 0.8, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 20.0]
    shades = [luminance(drawing.colour(m)) for m in multiples]
    assert all(a > b for a, b in zip(shades[1:-1], shades[2:-1]))  # strictly darker from ¼ to 8
    assert shades[0] == shades[1] and shades[-1] == shades[-2]  # beyond the scale's ends: its ends
    # the steps a reader must tell apart differ by a visible amount in grey alone
    assert luminance(drawing.colour(1.0)) - luminance(drawing.colour(2.0)) > 50
    assert luminance(drawing.colour(2.0)) - luminance(drawing.colour(6.0)) > 50


def test_a_heatmap_outlines_the_cells_a_reversal_needs():
    panel = tables.Panel("甲", ["1", "2", "3"], [(f"输出 {i + 1}", [0.1, 0.2, 0.7], ["10", "20", "70"]) for i in range(3)])
    svg = ET.fromstring(drawing.heatmaps_svg([panel], "甲", Heatmap("输出", "输入", "图例", True, "anti-diagonal"), "zh"))
    outlined = [(e.get("x"), e.get("y")) for e in svg.iter() if e.tag.endswith("rect") and e.get("class") == "expected"]
    cells = {(e.get("x"), e.get("y")): e for e in svg.iter() if e.tag.endswith("rect") and e.get("class") == "cell"}
    assert len(outlined) == 3
    # each outline sits on row r's column T + 1 - r
    starts = sorted({float(x) for x, _ in cells})
    rows = sorted({float(y) for _, y in cells})
    assert [(starts.index(float(x) - 0.5), rows.index(float(y) - 0.5)) for x, y in outlined] == [(2, 0), (1, 1), (0, 2)]


# ---------------------------------------------------------------- the lesson's own figures


def lesson_figures():
    doc = markdown.load(ROOT / "attention.md", "attention.md")
    return doc, figures.lesson_figures(doc)


def test_each_figure_of_the_lesson_is_a_relative_image_github_resolves_from_the_lessons_folder():
    doc, found = lesson_figures()
    assert len(found) >= 3
    for figure in found:
        path = ROOT / figure.path  # GitHub reads ![..](figures/x.svg) relative to attention.md's folder
        assert path.is_file() and not path.is_symlink(), figure.path
        svg = ET.fromstring(path.read_text(encoding="utf-8").split("\n", 2)[2])
        width, height = float(svg.get("width")), float(svg.get("height"))
        left, top, view_width, view_height = map(float, svg.get("viewBox").split())
        # legible at a phone's 390 pixels: shown about one unit a pixel there, no text under 9 units
        assert view_width <= 390 and width <= 600 and math.isclose(width / view_width, height / view_height)
        sizes = [float(e.get("font-size")) for e in svg.iter() if e.tag.endswith("text")]
        assert sizes and min(sizes) >= 9, figure.path
        assert svg.find("{http://www.w3.org/2000/svg}title").text == figure.alt and figure.alt.strip()


def test_the_lessons_figures_are_what_its_transcript_draws():
    doc, found = lesson_figures()
    assert figures.stale_figures(doc, lambda target: "make update") == []
