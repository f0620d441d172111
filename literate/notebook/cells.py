"""The cells: the lesson's prose as Markdown cells, each chunk as a code cell, each part of the first program's
transcript as a cell that prints it (its part as the stored output), the program itself first, folded."""

from __future__ import annotations

import base64
import re
import sys

from .. import blocks, expansion, markdown, model
from ..figures import drawing, figure_path, inline_spans, lesson_figures
from ..ipython import misread
from ..startup import missing
from .escaping import jupyter_id
from .lesson import code_chunks, first_program, main_block, part_blocks, without_main_block
from .text import inline_markdown, lesson_lines
from .words import MAIN_HEADER, PART_HEADER, PRELUDE_HEADER, ROOT_NOTE, UNPRINTED_NOTE, WHOLE_HEADER, note

try:
    import nbformat
    from nbformat import v4
except ImportError:  # run outside the project's .venv
    missing("notebook.py", "nbformat", "use make notebook (it installs requirements-notebook.txt into .venv), or "
            "pip install -r requirements-notebook.txt")

SUMMARY = re.compile(r"^\s*<summary>(.*)</summary>\s*$")
GENERATOR = "notebook.py"  # the notebook's metadata: marks the notebooks notebook.py wrote, the only files it overwrites
# What JupyterLab writes into a notebook when its kernel starts, written here first, so that opening the notebook
# changes nothing (else JupyterLab marks it modified and autosaves it): the kernel spec as ipykernel's own python3
# spec names it (the one in .venv that make lab runs), and the language as that kernel reports it, its version
# the Python's that runs notebook.py (make notebook's is the .venv's, the kernel's under make lab).
KERNEL = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def language_info() -> dict:
    """The language_info ipykernel reports (ipykernel/ipkernel.py), for the Python that runs this."""
    return {"name": "python", "version": sys.version.split()[0], "mimetype": "text/x-python",
            "codemirror_mode": {"name": "ipython", "version": sys.version_info[0]}, "pygments_lexer": "ipython3",
            "nbconvert_exporter": "python", "file_extension": ".py"}


def opens_details(lines: list[str | None]) -> list[int]:
    """Where in lines (split at their line ends) a <details> opens that they do not close."""
    opened = []
    for index, line in enumerate(part for line in lines if line is not None for part in line.split("\n")):
        stripped = line.strip()
        if stripped.startswith("<details"):
            opened.append(index)
        elif stripped == "</details>" and opened:
            opened.pop()
    return opened

class Notebook:
    """The cells so far, whether a <details> that a code cell split is open, and the id the next Markdown cell
    takes (a caption's: links lead to it)."""

    def __init__(self):
        self.cells = []
        self.folding = False
        self.caption_id: str | None = None

    def add(self, cell, role: str, **facts):
        cell["id"] = f"{len(self.cells):03d}-{role}"  # the same every build
        cell.metadata["attention"] = {"role": role, **facts}
        self.cells.append(cell)
        return cell

    def markdown(self, lines: list[str | None]) -> None:
        """Prose up to the next cell. A <details> opened here and closed in a later cell (it folds a
        transcript that is a cell's output now) is dropped, and its summary kept in bold."""
        kept, opened = [], []
        for line in [part for line in lines if line is not None for part in line.split("\n")]:
            stripped = line.strip()
            if stripped.startswith("<details"):
                opened.append(len(kept))
            elif stripped == "</details>":
                if opened:
                    opened.pop()
                else:  # closes a fold opened in an earlier cell
                    self.folding = False
                    continue
            kept.append(line)
        for index in reversed(opened):  # not closed here: the cells below fold their outputs
            summary = SUMMARY.match(kept[index + 1]) if index + 1 < len(kept) else None
            kept[index : index + (2 if summary else 1)] = \
                [f"**{summary[1]}**（讲义里折叠着；这里折叠的是下面格子的输出，点一下就展开）"] if summary else []
            self.folding = True
        text = "\n".join(kept).strip("\n")
        if text.strip():
            caption = self.caption_id is not None and not any(cell.id == self.caption_id for cell in self.cells)
            cell = self.add(v4.new_markdown_cell(text), "caption" if caption else "prose")
            if caption:
                cell["id"] = self.caption_id
        self.caption_id = None

    def code(self, source: str, role: str, outputs=(), **facts):
        cell = self.add(v4.new_code_cell(source), role, **facts)
        if outputs:
            cell.outputs = [v4.new_output("stream", name="stdout", text=text) for text in outputs]
            if self.folding:  # collapsed too, beside it: JupyterLab adds it on opening the notebook else
                cell.metadata["jupyter"] = {"outputs_hidden": True}
                cell.metadata["collapsed"] = True
        return cell


def build(doc: model.Document) -> nbformat.NotebookNode:
    """The notebook of the lesson (see the package's docstring)."""
    program = first_program(doc)
    transcript = doc.transcripts[program]
    printing, printing_lines = part_blocks(doc, len(transcript.pieces()))
    body = expansion.render(doc, program)[0].split("\n", 2)[2]  # without the banner and hash line: they speak to
    main = main_block(body, program)                             # whoever edits the file
    # How the cells print the transcript: the lines the lesson declares for each part; else, for a transcript in one
    # piece, the program's __main__ block after the program (folded, first), or the whole program where the
    # transcript stands; else not at all (the notebook says why)
    how = "parts" if printing_lines else "unprinted" if transcript.parts else "main" if main is not None else "whole"
    shown = figure_images(doc)
    lines = lesson_lines(doc, shown)
    python_chunks = code_chunks(doc)

    def holds_figure(paragraph: blocks.Paragraph) -> bool:
        return any(isinstance(span, blocks.Image) and span.src in shown for span in inline_spans(paragraph.inline.spans))

    def is_cell(fence: blocks.Fence) -> bool:  # not an illustration, a formula or another program's transcript
        return fence.kind in ("chunk", "root", "playground") or fence.kind == "transcript" and fence.label == program

    cell_fences = {block.line for _, block, _ in blocks.walk(doc.blocks) if isinstance(block, blocks.Fence)
                   and is_cell(block)}
    # the lesson's top-level blocks that follow a figure: they start a cell, so that the figure's stands alone
    after_figure = {following.line for block, following in zip(doc.blocks, doc.blocks[1:])
                    if isinstance(block, blocks.Paragraph) and holds_figure(block)}

    def starts_cell(block, depth: int, cursor: int) -> bool:
        """A heading; a caption (links lead to its cell, at its top: see escaping.fragment), unless it stands in a
        <details> opened in the prose since the last cell (from cursor) that folds prose, which a cell of its own
        would tear open; a figure, and what follows it; a fence that is a cell."""
        if isinstance(block, blocks.Heading):
            return depth == 0
        if depth == 0 and block.line in after_figure and not isinstance(block, blocks.Fence):
            return True
        if isinstance(block, blocks.Paragraph) and holds_figure(block):  # its drawing in a cell of its own
            return depth == 0 and not opens_details(lines[cursor : block.line - 1])
        if isinstance(block, blocks.Paragraph):
            return depth == 0 and block.caption_of in doc.captions and (
                block.caption_of in cell_fences or not opens_details(lines[cursor : block.line - 1]))
        return isinstance(block, blocks.Fence) and block.line in cell_fences

    notebook, cursor, prelude_done = Notebook(), 0, False
    for event, block, depth in blocks.walk(doc.blocks):
        if event != "open" or not starts_cell(block, depth, cursor):
            continue  # what is not a cell of its own stays in the prose
        heading = isinstance(block, blocks.Heading)
        start, end, line = block.line - 1, block.end, block.line
        notebook.markdown(lines[cursor:start])
        cursor = start
        if not prelude_done and (not heading or block.level == 2):  # after the lesson's opening, or before its
            prelude(notebook, doc, program, printing, how, body)      # first code: the program comes first
            prelude_done = True
        if isinstance(block, blocks.Paragraph) and block.caption_of is not None:  # a caption: the prose from here on
            notebook.caption_id = jupyter_id(doc.captions[block.caption_of].anchor)  # is the cell links lead to
            continue
        if heading or not isinstance(block, blocks.Fence):  # a figure, or what follows one: the prose from here on
            continue                                         # in a cell of its own
        cursor, piece = end, block.piece
        if block.kind == "chunk":
            if any(model.reference(code) for code in piece.lines):  # includes other chunks: not Python
                notebook.markdown([ROOT_NOTE["whole" if how == "whole" else "program"], *lines[start:end]])
            elif block.label not in python_chunks:  # not a top-level statement of a program: run alone, it means else
                notebook.markdown([ROOT_NOTE["text"], "", *lines[start:end]])
            else:
                runs_as_python(doc, piece.lines, line, f"〈{block.label}〉")
                notebook.code("\n".join(piece.lines), "chunk", chunk=block.label, line=line)
        elif block.kind == "root":
            note_ = ROOT_NOTE[("whole" if how == "whole" else "program") if block.label == program
                              else "other" if block.label.endswith(".py") else "file"]
            notebook.markdown([note_, "", *lines[start:end]])
        elif block.kind == "playground":  # the reader's, to change and run: not compared with anything (one that
            # IPython would not run as the Python it is never gets here: the lesson's parse refuses it)
            cell = notebook.code("\n".join(piece.lines), "playground", program=piece.program, line=line)
            cell.metadata["tags"] = ["playground"]
        elif how == "parts":
            number = block.index + 1
            header = PART_HEADER.format(printing=printing, function=doc.declared.parts.function)
            notebook.code(header + "\n".join(printing_lines[number]), "transcript", outputs=[piece.content],
                          program=program, part=number, line=line)
        elif how == "main":
            notebook.code(MAIN_HEADER.format(program=program) + main, "transcript", outputs=[piece.content],
                          program=program, line=line)
        elif how == "whole":
            cell = notebook.code(WHOLE_HEADER.format(md=doc.path.name, program=program) + body.rstrip("\n"),
                                 "transcript", outputs=[piece.content], program=program, line=line)
            cell.metadata["jupyter"] = {"source_hidden": True, **cell.metadata.get("jupyter", {})}
        else:
            notebook.markdown([UNPRINTED_NOTE, "", *lines[start:end]])
    notebook.markdown(lines[cursor:])
    return v4.new_notebook(cells=notebook.cells, metadata={"kernelspec": KERNEL, "language_info": language_info(),
                                                           "generator": GENERATOR})


def runs_as_python(doc: model.Document, lines: list[str], fence_line: int, what: str) -> None:
    """UserError if IPython would not run these lines of a fence as the Python they are (ipython.misread): in the
    program they may be harmless, in a notebook cell they would run."""
    wrong = misread(lines, what)
    if wrong:
        raise model.UserError(f"{doc.where(fence_line + 1 + wrong[0])}: error: {wrong[1]}; write it as Python, or put "
                              "that text inside the chunk that uses it")


def figure_images(doc: model.Document) -> dict[str, str]:
    """Each figure image's src -> its drawing as a data: URL. The notebook lies in build/, where figures/ is out of
    reach; JupyterLab shows no SVG attachment (only bitmaps), but it shows an image whose source is the data itself."""
    figures = {figure.path: figure for figure in lesson_figures(doc)}
    shown = {}
    for inline in blocks.texts(doc.blocks) if figures else ():
        for span in inline_spans(inline.spans):
            path = figure_path(span.src, doc.declared.figures) if isinstance(span, blocks.Image) else None
            if path in figures:
                svg = drawing(doc, figures[path]).encode()
                shown[span.src] = "data:image/svg+xml;base64," + base64.b64encode(svg).decode()
    return shown


def prelude(notebook: Notebook, doc: model.Document, program: str, printing: str, how: str, body: str) -> None:
    """The note on how to read the notebook (with what the lesson declares for it), and the program, folded
    (unless it runs whole where its transcript stands)."""
    declared = doc.declared.parts
    texts = {key: inline_markdown(markdown.read_inline(value), line_start=False)  # Markdown, written as prose is
             for key, value in (doc.declared.text or {}).items()}
    notebook.add(v4.new_markdown_cell(note(how, doc.path.name, program, f"{doc.path.stem}.ipynb", texts, printing,
                                           declared.function if declared else "", declared.shown if declared else "")),
                 "note")
    if how == "whole":
        return
    cell = notebook.code(PRELUDE_HEADER.format(md=doc.path.name, program=program) + without_main_block(body, program),
                         "prelude", program=program)
    cell.metadata["jupyter"] = {"source_hidden": True}
