"""A transcript's fence on the page: each output line anchored by its own line of MD, each printed matrix beside
its heatmap."""

from __future__ import annotations

from .. import model
from .code import sequence_links
from .heatmaps import heatmap_svg, legend_svg, parse_matrices
from .markup import Markup, join, tag
from .numbers import transcript_line
from .state import Page
from .text import caption_html


def heatmap_note(declared) -> str:
    return (f"用这里印出来的数字画的热图：行是{declared.rows}第几位，列是{declared.columns}第几位。颜色是权重为均匀"
            "（1/T）的几倍：1 倍灰，高于均匀越红，低于均匀越蓝，全页的热图用同一把尺子；指着一格看它的数值。")


def matrix_groups(matrices: list) -> list[list]:
    """The printed matrices (parse_matrices), grouped: one that follows the one before after a single line (its
    label) joins its group, to be drawn side by side; any other stands alone."""
    groups: list[list] = []
    for found in matrices:
        if groups and found[0] - groups[-1][-1][1] == 1:
            groups[-1].append(found)
        else:
            groups.append([found])
    return groups


def transcript_html(page: Page, target: str, index: int) -> Markup:
    """One fence of a transcript (the whole output, or its part index + 1), where it stands in the document:
    each output line anchored by its own line of MD, each printed matrix beside its heatmap."""
    transcript = page.doc.transcripts[target]
    pieces = transcript.pieces()
    piece = pieces[index]
    lines = model.output_lines(piece.content)
    anchor = model.output_anchor(target, piece.part)
    page.ids.add(anchor)

    def pre(first: int, end: int) -> Markup:
        spans = [transcript_line(page, piece.first_line + k, lines[k]) for k in range(first, end)]
        return tag("pre", {"class": "output"}, *spans) if spans else Markup("")

    out, position = [], 0
    declared = page.doc.declared.heatmap

    def svg(start: int, columns, rows) -> Markup:
        caption = (f"{target} 的实跑输出里的矩阵（{page.doc.where(piece.first_line + start)} 起），"
                   f"{len(rows)}×{len(columns)}，颜色是权重为均匀的几倍")
        page.heatmaps += 1
        return heatmap_svg(columns, rows, caption, page.scale, declared)

    for group in matrix_groups(parse_matrices(lines, declared)):
        if len(group) == 1:
            [(start, end, columns, rows)] = group
            out.append(pre(position, start))
            out.append(tag("div", {"class": "matrix"}, pre(start, end), tag(
                "figure", {"class": "heatmap"}, svg(start, columns, rows),
                tag("figcaption", None, heatmap_note(declared), legend_svg(page.scale)))))
            position = end
            continue
        # matrices one after another, each under a line of its own (第 160 轮：): a model at several moments,
        # drawn side by side, each captioned by its line
        first, last = max(group[0][0] - 1, position), group[-1][1]
        out.append(pre(position, first))
        figures = [tag("figure", {"class": "heatmap"}, svg(start, columns, rows),
                       tag("figcaption", None, lines[start - 1].strip().rstrip("：:")) if start - 1 >= first else Markup(""))
                   for start, _, columns, rows in group]
        out.append(tag("div", {"class": "matrix"}, pre(first, last), tag("div", {"class": "heatmap-row"}, *figures),
                       tag("p", {"class": "heatmap-note"}, heatmap_note(declared), legend_svg(page.scale))))
        position = last
    out.append(pre(position, len(lines)))
    written = caption_html(page, piece.fence_line, anchor)
    if written is None:
        caption = [Markup(tag("a", {"class": "name", "href": f"#{anchor}"}, "实跑输出") + "："), tag("code", None, target)]
    else:
        caption = [tag("span", {"class": "written"}, written)]
    around = sequence_links(len(pieces), index, lambda i: model.output_anchor(target, pieces[i].part))
    caption += around[1:] if written else around  # a written caption says 第 N 段 itself
    how = (f"{page.doc.path.name}:{piece.fence_line}：程序的标准输出，tangle.py check 重新运行程序，"
           + ("和各段连起来" if len(pieces) > 1 else "和这一段") + "逐字节比对")  # the tooltip: the tool's words
    return Markup(tag("figure", {"class": "transcript", "id": anchor}, tag("figcaption", {"title": how},
                                                                           join(caption, " ")),
                      tag("div", {"class": "printed"}, *out)) + "\n")
