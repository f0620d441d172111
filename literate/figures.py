"""The lesson's figures. Every image in the folder the lesson declares (figures: FOLDER) is a picture the tools draw
(drawing.py) from the transcript part that the image's paragraph links to (`[第 4 段](#output-generated/a.py-4)`):
the heatmaps of the matrices it prints, or the curves of its table of checkpoints. GitHub and an editor show the
file; the page and the notebook draw the same picture. A figure is a quoted number too: check fails when the file is
not what the part prints now, or is missing; update redraws it.

A drawn file starts with two comment lines, what drew it from where and the sha256 of the rest (as a generated
program does): a file without them, or edited since it was drawn, is never overwritten."""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from . import blocks, model
from .drawing import curves_svg, heatmaps_svg
from .tables import parse_curves, parse_matrices
from .files import describe, read_regular, write_atomically
from .model import Document, UserError

MAX_FIGURE_BYTES = 4 << 20
HASH_LINE = re.compile(r"<!-- sha256:([0-9a-f]{64}) -->")


@dataclass(frozen=True)
class Figure:
    path: str  # relative to the lesson's folder, normalised (figures/growth.svg)
    alt: str  # the image's description: what the drawing says it shows
    line: int  # the image's line of MD
    target: str  # the program whose transcript it draws
    index: int  # which fence of that transcript (0, 1, ...)

    def source(self, doc: Document) -> model.Transcript:
        return doc.transcripts[self.target].pieces()[self.index]

    def named(self, doc: Document) -> str:
        """The part it draws, as messages name it."""
        part = self.source(doc).part
        return f"the transcript of {self.target}" + (f", part {part}" if part else "")


def inline_spans(spans: list):
    """Every span, links' and emphasis' insides too."""
    for span in spans:
        yield span
        if isinstance(span, (blocks.Link, blocks.Styled)):
            yield from inline_spans(span.spans)


def output_parts(doc: Document) -> dict[str, tuple[str, int]]:
    """The anchor of each transcript fence -> (program, index of the fence)."""
    return {model.output_anchor(target, piece.part): (target, index)
            for target, transcript in doc.transcripts.items() for index, piece in enumerate(transcript.pieces())}


def figure_path(src: str, folder: str) -> str | None:
    """The image's path, if it is in the figures' folder (relative, normalised); None for any other image."""
    path = unquote(src).split("#")[0].split("?")[0]
    if not path or "://" in path or path.startswith("/"):
        return None
    path = posixpath.normpath(path)
    return path if path.startswith(folder.rstrip("/") + "/") else None


def lesson_figures(doc: Document, drawable: bool = True) -> list[Figure]:
    """The lesson's figures in document order; UserError for one the tools cannot draw (each reason given).
    drawable=False: not yet whether its part prints something to draw (update asks before the new output is in)."""
    folder = doc.declared.figures
    if folder is None:
        return []
    parts, found, problems, seen = output_parts(doc), [], [], {}
    for inline in blocks.texts(doc.blocks):
        spans = list(inline_spans(inline.spans))
        images = [(span, figure_path(span.src, folder)) for span in spans if isinstance(span, blocks.Image)]
        images = [(span, path) for span, path in images if path is not None]
        if not images:
            continue
        sources = sorted({parts[anchor] for anchor in (link_anchor(span) for span in spans
                                                        if isinstance(span, blocks.Link)) if anchor in parts})
        where = doc.where(inline.line)
        for span, path in images:
            problem = figure_problem(doc, path, sources, seen, span.alt, drawable)
            if problem:
                problems.append(f"{where}: error: figure {path}: {problem}")
                continue
            seen[path] = inline.line
            found.append(Figure(path, span.alt, inline.line, *sources[0]))
    if problems:
        raise UserError(*problems)
    return found


def link_anchor(link: blocks.Link) -> str | None:
    own = model.OWN_LINK.fullmatch(unquote(link.href))
    return own[1] if own else None


def figure_problem(doc: Document, path: str, sources: list, seen: dict, alt: str, drawable: bool) -> str | None:
    """Why an image in the figures' folder cannot be drawn, or None."""
    if not path.endswith(".svg"):
        return "a figure the tools draw is an .svg file"
    if path in seen:
        return f"shown already at line {seen[path]}: a figure stands once (draw a second file for a second place)"
    if not alt.strip():
        return "its description is empty: write in the image's [brackets] what the figure shows, in one sentence"
    if len(sources) != 1:
        return ("its paragraph links to the transcript part it is drawn from, once, e.g. [第 4 段]"
                "(#output-generated/attention.py-4)" if not sources else
                "its paragraph links to more than one transcript part: link only the one it is drawn from")
    target, index = sources[0]
    lines = model.output_lines(doc.transcripts[target].pieces()[index].content)
    if drawable and not parse_curves(lines, doc.declared.curves) and not parse_matrices(lines, doc.declared.heatmap):
        return (f"the transcript part it links to prints nothing it can draw: neither matrices (heatmap: "
                f"{'declared' if doc.declared.heatmap else 'not declared'}) nor a table of checkpoints (curves: "
                f"{'declared' if doc.declared.curves else 'not declared'}); see drawing.py for how they are printed")
    return None


def drawing(doc: Document, figure: Figure) -> str:
    """The figure's SVG, drawn from the transcript part as the lesson holds it now."""
    lines = model.output_lines(figure.source(doc).content)
    tables = parse_curves(lines, doc.declared.curves)
    if tables:
        return curves_svg(tables[0], figure.alt)
    panels = [panel for matrices in parse_matrices(lines, doc.declared.heatmap) for panel in matrices.panels]
    return heatmaps_svg(panels, figure.alt, doc.declared.heatmap, doc.language)


def comment_text(text: str) -> str:
    """Text as it may stand in an XML comment: never two hyphens together."""
    return re.sub(r"-(?=-)", "-\u200c", text)


def file_text(doc: Document, figure: Figure, command: str) -> str:
    """The file: what drew it and how to redraw it, the sha256 of the rest, the drawing."""
    body = drawing(doc, figure) + "\n"
    banner = comment_text(f"Drawn by tangle.py from {doc.path.name}: {figure.named(doc)}. Do not edit: change the "
                          f"program that prints it, then {command}.")
    return f"<!-- {banner} -->\n<!-- sha256:{hashlib.sha256(body.encode()).hexdigest()} -->\n{body}"


def file_state(current: bytes | None, text: str) -> str:
    """missing, same, stale (drawn by tangle.py, not edited since: safe to redraw), edited, or foreign."""
    if current is None:
        return "missing"
    if current == text.encode():
        return "same"
    lines = current.decode("utf-8", "replace").split("\n", 2)
    if len(lines) < 3 or not lines[0].startswith("<!-- Drawn by tangle.py from "):
        return "foreign"
    match = HASH_LINE.fullmatch(lines[1])
    if not match:
        return "edited"
    return "stale" if hashlib.sha256(lines[2].encode()).hexdigest() == match[1] else "edited"


def place_problem(doc: Document, figure: Figure) -> str | None:
    """Why the figure's file cannot be written where it stands: a symlink out of the lesson's folder, a folder in
    the way."""
    path = doc.folder / figure.path
    real, folder_real = Path(os.path.realpath(path)), Path(os.path.realpath(doc.folder))
    if not real.is_relative_to(folder_real):
        return "leads outside the folder of the lesson (through a symlink)"
    if os.path.islink(path):
        return "is a symlink: a figure is a file of its own"
    return None


def read_figure(doc: Document, figure: Figure) -> bytes | None:
    return read_regular(doc.folder / figure.path, doc.target_shown(figure.path), MAX_FIGURE_BYTES)


def state_message(doc: Document, figure: Figure, state: str, command: str) -> str | None:
    """What a figure's file being in this state means, and what to do; None: it is what its part draws."""
    return {"missing": f"missing; draw it: {command}",
            "stale": f"not what {figure.named(doc)} prints now (drawn from an older transcript); redraw it: {command}",
            "edited": f"edited by hand since it was drawn; a figure is drawn from {figure.named(doc)}: change the "
                      f"program that prints it, or delete the file, then {command}",
            "foreign": "exists and was not drawn by tangle.py (it does not start with its two comment lines); name "
                       "the figure otherwise, or move that file away"}.get(state)


def stale_figures(doc: Document, command_for) -> list[str]:
    """check: each figure whose file is not what its part draws now, and why, with the command that redraws it
    (command_for(program): the lesson's update command for that program)."""
    problems = []
    for figure in lesson_figures(doc):
        command = command_for(figure.target)
        state = file_state(read_figure(doc, figure), file_text(doc, figure, command))
        why = state_message(doc, figure, state, command)
        if why:
            problems.append(f"{doc.target_shown(figure.path)}: error: {why} (shown at {doc.where(figure.line)})")
    return problems


def draw_figures(doc: Document, command_for) -> list[str]:
    """update: redraw each figure whose file is missing or drawn from an older transcript; never one edited by hand
    or not drawn by tangle.py (UserError, nothing written). Returns the paths drawn."""
    planned, problems = [], []
    for figure in lesson_figures(doc):
        shown, command = doc.target_shown(figure.path), command_for(figure.target)
        text = file_text(doc, figure, command)
        problem = place_problem(doc, figure)
        current = None if problem else read_figure(doc, figure)
        state = file_state(current, text)
        if problem or state in ("edited", "foreign"):
            problems.append(f"{shown}: error: {problem or state_message(doc, figure, state, command)}")
        elif state != "same":
            planned.append((figure, shown, text, current))
    if problems:
        raise UserError(*problems)
    drawn = []
    for figure, shown, text, current in planned:
        try:
            if not write_atomically(doc.folder / figure.path, text.encode(), expected=current):
                raise model.Conflict(f"{shown}: error: changed while update was about to draw it; left as it is: "
                                     "run it again")
        except OSError as error:
            raise UserError(f"{shown}: error: cannot write it: {describe(error)}") from None
        drawn.append(shown)
    return drawn
