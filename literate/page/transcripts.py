"""A transcript's fence on the page: each output line anchored by its own line of MD, each printed matrix beside
its heatmap (drawing.py; not in a part that a figure is drawn from: the figure is its picture)."""

from __future__ import annotations

from .. import blocks, model
from ..drawing import heatmaps_svg
from ..makefile import check_command
from ..tables import parse_matrices
from ..markup import Markup, join, tag
from .code import sequence_links
from .numbers import transcript_line
from .state import Page
from .text import caption_html
from .words import plain, say


def matrix_groups(matrices: list) -> list[list]:
    """The printed matrices (drawing.parse_matrices), grouped: one that follows the one before after a single line
    (its title) joins its group, to be drawn in one picture; any other stands alone."""
    groups: list[list] = []
    for found in matrices:
        if groups and found.start - groups[-1][-1].end == 1 and found.panels[0].title:
            groups[-1].append(found)
        else:
            groups.append([found])
    return groups


def transcript_html(page: Page, fence: blocks.Fence) -> Markup:
    """A transcript fence (the whole output of its program, or one part), where it stands in the document: each
    output line anchored by its own line of MD, each printed matrix beside its heatmap."""
    target, index, piece = fence.label, fence.index, fence.piece
    pieces = page.doc.transcripts[target].pieces()
    lines = model.output_lines(piece.content)
    anchor = model.output_anchor(target, piece.part)
    page.ids.add(anchor)

    def pre(first: int, end: int) -> Markup:
        spans = [transcript_line(page, piece.first_line + k, lines[k]) for k in range(first, end)]
        return tag("pre", {"class": "output"}, *spans) if spans else Markup("")

    out, position = [], 0
    declared = page.doc.declared.heatmap
    # a part a figure is drawn from has its picture where the figure stands; the others, each matrix beside its own
    matrices = [] if (target, index) in page.figure_sources else parse_matrices(lines, declared)
    for group in matrix_groups(matrices):
        titled = group[0].start - 1 >= position and group[0].panels[0].title  # its title line goes in its box
        first, last = group[0].start - (1 if titled else 0), group[-1].end
        where = page.doc.where(piece.first_line + group[0].start)
        description = plain(page, "heatmap", target=target, where=where)
        page.heatmaps += sum(len(found.panels) for found in group)
        out.append(pre(position, first))
        drawn = heatmaps_svg([panel for found in group for panel in found.panels], description, declared,
                             page.doc.language, tooltips=True)
        out.append(tag("div", {"class": "matrix"}, pre(first, last), tag("figure", {"class": "heatmap"}, drawn)))
        position = last
    out.append(pre(position, len(lines)))
    written = caption_html(page, fence.caption, anchor)
    if written is None:
        name = tag("a", {"class": "name", "href": f"#{anchor}"}, say(page, "output"))
        caption = [Markup(name + say(page, "output-colon")), tag("code", None, target)]
    else:
        caption = [tag("span", {"class": "written"}, written)]
    around = sequence_links(page, len(pieces), index, lambda i: model.output_anchor(target, pieces[i].part))
    caption += around[1:] if written else around  # a written caption says 第 N 段 itself
    how = plain(page, "compared-parts" if len(pieces) > 1 else "compared-part",  # the tooltip: the tool's words
                where=f"{page.doc.path.name}:{piece.fence_line}",
                command=check_command(page.doc, target, page.doc.folder))  # the lesson's own, seen from its folder
    return Markup(tag("figure", {"class": "transcript", "id": anchor}, tag("figcaption", {"title": how},
                                                                           join(caption, " ")),
                      tag("div", {"class": "printed"}, *out)) + "\n")
