"""The cells: the lesson's prose as Markdown cells, each chunk as a code cell, each part of the first program's
transcript as a cell that prints it (its part as the stored output), the program itself first, folded."""

from __future__ import annotations

import base64
import re
import sys

from .. import blocks, expansion, markdown, model
from ..blocks import Role, children as inside  # inside: the blocks inside a fold, a list item or a quote
from ..figures import drawing, figure_path, inline_spans, lesson_figures
from ..ipython import misread
from ..makefile import TOOLS, check_command
from ..startup import missing
from .escaping import code_span, jupyter_id
from .lesson import code_chunks, first_program, main_block, part_blocks, without_main_block
from .text import inline_markdown, lesson_lines
from .words import WORDS, About, Words, note

try:
    import nbformat
    from nbformat import v4
except ImportError:  # run outside the project's .venv
    missing("notebook.py", "nbformat", "use make notebook (it installs requirements-notebook.txt into .venv), or "
            "pip install -r requirements-notebook.txt")

# A fold's tags as lesson_lines writes them (bare: text.html_block), after what a list item or quote puts before
# each line (its marker, its indentation, its >): (that prefix, the rest of the line)
LINE_PREFIX = r"((?:[ \t>]|[-*+][ \t]|[0-9]{1,9}[.)][ \t])*)"
FOLD_OPENING = re.compile(LINE_PREFIX + r"<details>(.*)$")
FOLD_SUMMARY = re.compile(r"[ \t>]*<summary>(.*)</summary>[ \t]*$")
FOLD_CLOSING = re.compile(LINE_PREFIX + r"</details>[ \t]*$")
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


def split_fold(lines: list[str | None], fold: blocks.Details, prints: bool, words: Words) -> None:
    """A fold (<details>) that a cell starts inside: the cells cannot fold what is in several of them, so in lines
    (the lesson's, as lesson_lines writes them) its <details> and <summary> become the summary in bold, and its
    </details> is dropped; the cells inside it fold their outputs instead (prints: one of them prints some, which
    the note after the summary says in words)."""
    note = words.folded_prints if prints else words.folded_quiet
    written = drawn_lines(lines, fold.opening)
    for index, line in enumerate(written):
        opening = FOLD_OPENING.match(line)
        if opening:
            prefix, rest, taken = opening[1], opening[2], 1
            summary = FOLD_SUMMARY.match(rest)
            if not summary and not rest.strip() and index + 1 < len(written):
                summary = FOLD_SUMMARY.match(written[index + 1])
                taken = 2 if summary else 1
            kept = f"**{summary[1]}**{note}" if summary else rest.strip()
            written[index : index + taken] = [prefix + kept] if kept or marked(prefix) else []
            break
    put_lines(lines, fold.opening, written)
    written = drawn_lines(lines, fold.closing)
    for index, line in enumerate(written):
        closing = FOLD_CLOSING.match(line)
        if closing:
            written[index : index + 1] = [closing[1].rstrip()] if marked(closing[1]) else []
            break
    put_lines(lines, fold.closing, written)


def marked(prefix: str) -> bool:
    """Whether what stands before a line holds a list item's marker, which must stay."""
    return bool(prefix.strip(" \t>"))


def unfolded(lesson: list):
    """The blocks side by side at the lesson's top, those in its folds (<details>) in their place, but a fold's
    closing </details> (which shows nothing)."""
    stack = [iter(lesson)]
    while stack:
        block = next(stack[-1], None)
        if block is None:
            stack.pop()
        elif isinstance(block, blocks.Details):
            stack.append(iter(inside(block)[:-1]))
        else:
            yield block


def drawn_lines(lines: list[str | None], block) -> list[str]:
    """What lesson_lines wrote for a block, line by line."""
    return [part for line in lines[block.line - 1 : block.end] if line is not None for part in line.split("\n")]


def put_lines(lines: list[str | None], block, written: list[str]) -> None:
    """Write a block's lines anew (all of them at its first line)."""
    lines[block.line - 1 : block.end] = ["\n".join(written) if written else None] + [None] * (block.end - block.line)


class Notebook:
    """The cells so far, and the id the next Markdown cell takes (a caption's: links lead to it)."""

    def __init__(self):
        self.cells = []
        self.caption_id: str | None = None

    def add(self, cell, role: str, **facts):
        cell["id"] = f"{len(self.cells):03d}-{role}"  # the same every build
        cell.metadata["attention"] = {"role": role, **facts}
        self.cells.append(cell)
        return cell

    def markdown(self, lines: list[str | None]) -> None:
        """Prose up to the next cell."""
        kept = [part for line in lines if line is not None for part in line.split("\n")]
        text = "\n".join(kept).strip("\n")
        if text.strip():
            caption = self.caption_id is not None and not any(cell.id == self.caption_id for cell in self.cells)
            cell = self.add(v4.new_markdown_cell(text), "caption" if caption else "prose")
            if caption:
                cell["id"] = self.caption_id
        self.caption_id = None

    def code(self, source: str, role: str, outputs=(), folded: bool = False, **facts):
        """A code cell; folded: its outputs are folded (it stands in a <details> of the lesson)."""
        cell = self.add(v4.new_code_cell(source), role, **facts)
        if outputs:
            cell.outputs = [v4.new_output("stream", name="stdout", text=text) for text in outputs]
            if folded:  # collapsed too, beside it: JupyterLab adds it on opening the notebook else
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
    words = WORDS[doc.language]
    lines = lesson_lines(doc, words, shown)
    python_chunks = code_chunks(doc)

    def holds_figure(paragraph: blocks.Paragraph) -> bool:
        return any(isinstance(span, blocks.Image) and span.src in shown for span in inline_spans(paragraph.inline.spans))

    def is_cell(fence: blocks.Fence) -> bool:  # not an illustration, a formula or another program's transcript
        return fence.role in (Role.CHUNK, Role.ROOT, Role.PLAYGROUND) or (fence.role is Role.TRANSCRIPT
                                                                          and fence.label == program)

    cell_fences = {fence.line for fence in blocks.fences(doc.blocks) if is_cell(fence)}
    # the lesson's top-level blocks that follow a figure: they start a cell, so that the figure's stands alone
    top = list(unfolded(doc.blocks))
    after_figure = {following.line for block, following in zip(top, top[1:])
                    if isinstance(block, blocks.Paragraph) and holds_figure(block)}
    folds: list[blocks.Details] = []  # the folds around the block, outermost first
    split: set[int] = set()  # the folds a cell has started in (by line)

    def prints(fold: blocks.Details) -> bool:
        """Whether a cell in the fold prints the program's output."""
        return how != "unprinted" and any(fence.role is Role.TRANSCRIPT and is_cell(fence)
                                          for fence in blocks.fences(inside(fold)))

    def folds_prose() -> bool:
        """Whether the block stands in a fold that no cell has started in: a cell of its own would tear it open."""
        return any(fold.line not in split for fold in folds)

    def starts_cell(block, level: int) -> bool:
        """A heading, a caption (links lead to its cell, at its top: see escaping.fragment) or a figure, unless it
        stands in a fold that folds prose; what follows a figure; a fence that is a cell. level: how deep in lists
        and quotes (folds not counted)."""
        if isinstance(block, blocks.Heading):
            return level == 0 and not folds_prose()
        if level == 0 and block.line in after_figure and not isinstance(block, blocks.Fence):
            return True
        if isinstance(block, blocks.Paragraph) and holds_figure(block):  # its drawing in a cell of its own
            return level == 0 and not folds_prose()
        if isinstance(block, blocks.Paragraph):
            return level == 0 and block.caption_of in doc.captions and (
                block.caption_of in cell_fences or not folds_prose())
        return isinstance(block, blocks.Fence) and block.line in cell_fences

    notebook, cursor, prelude_done = Notebook(), 0, False
    for event, block, depth in blocks.walk(doc.blocks):
        if isinstance(block, blocks.Details) and event == "open":
            folds.append(block)
        elif isinstance(block, blocks.Details):
            folds.pop()
        if event != "open" or not starts_cell(block, depth - len(folds)):
            continue  # what is not a cell of its own stays in the prose
        for fold in folds:
            if fold.line not in split and block is not fold.opening:  # a cell that starts at a fold holds it
                split_fold(lines, fold, prints(fold), words)
                split.add(fold.line)
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
        if block.role is Role.CHUNK:
            if any(model.reference(code) for code in piece.lines):  # includes other chunks: not Python
                notebook.markdown([words.root_note["whole" if how == "whole" else "program"], *lines[start:end]])
            elif block.label not in python_chunks:  # not a top-level statement of a program: run alone, it means else
                notebook.markdown([words.root_note["text"], "", *lines[start:end]])
            else:
                runs_as_python(doc, piece.lines, line, f"〈{block.label}〉")
                notebook.code("\n".join(piece.lines), "chunk", chunk=block.label, line=line)
        elif block.role is Role.ROOT:
            notebook.markdown([root_note(doc, words, block.label, program, how), "", *lines[start:end]])
        elif block.role is Role.PLAYGROUND:  # the reader's, to change and run: not compared with anything (one that
            # IPython would not run as the Python it is never gets here: the lesson's parse refuses it)
            cell = notebook.code("\n".join(piece.lines), "playground", program=piece.program, line=line)
            cell.metadata["tags"] = ["playground"]
        elif how == "parts":
            number = block.index + 1
            header = words.part_header.format(printing=printing, function=doc.declared.parts.function)
            notebook.code(header + "\n".join(printing_lines[number]), "transcript", outputs=[piece.content],
                          folded=bool(folds), program=program, part=number, line=line)
        elif how == "main":
            notebook.code(words.main_header.format(program=program) + main, "transcript", outputs=[piece.content],
                          folded=bool(folds), program=program, line=line)
        elif how == "whole":
            cell = notebook.code(words.whole_header.format(md=doc.path.name, program=program) + body.rstrip("\n"),
                                 "transcript", outputs=[piece.content], folded=bool(folds), program=program,
                                 line=line)
            cell.metadata["jupyter"] = {"source_hidden": True, **cell.metadata.get("jupyter", {})}
        else:
            notebook.markdown([words.unprinted_note, "", *lines[start:end]])
    notebook.markdown(lines[cursor:])
    return v4.new_notebook(cells=notebook.cells, metadata={"kernelspec": KERNEL, "language_info": language_info(),
                                                           "generator": GENERATOR})


def root_note(doc: model.Document, words: Words, root: str, program: str, how: str) -> str:
    """What the notebook says above a root it shows but does not run: the program it runs (put together in one
    cell), another program (and what checks its transcript), a module, or a file that is no Python."""
    if root == program:
        return words.root_note["whole" if how == "whole" else "program"]
    if not root.endswith(".py"):
        return words.root_note["file"]
    why = "other" if root in doc.transcripts else "module"
    return words.root_note[why].format(program=code_span(root), first=code_span(program),
                                       command=code_span(check_command(doc, root, doc.folder)))


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
    declared, words = doc.declared.parts, WORDS[doc.language]
    texts = {key: inline_markdown(markdown.read_inline(value), words, line_start=False)  # Markdown, as prose is
             for key, value in (doc.declared.text or {}).items()}
    uses_numpy = re.search(r"^[ \t]*(?:import|from)[ \t]+numpy\b", body, re.M) is not None
    about = About(doc.path.name, program, f"{doc.path.stem}.ipynb", texts, printing,
                  declared.function if declared else "", declared.shown if declared else "", uses_numpy,
                  bool(doc.playgrounds), tested=(doc.folder / "tests" / "test_notebook.py").is_file(),
                  links=bool(doc.captions), tools_here=doc.folder.resolve() == TOOLS)
    notebook.add(v4.new_markdown_cell(note(words, how, about)), "note")
    if how == "whole":
        return
    header = words.prelude_header.format(md=doc.path.name, program=program)
    cell = notebook.code(header + without_main_block(body, program), "prelude", program=program)
    cell.metadata["jupyter"] = {"source_hidden": True}
