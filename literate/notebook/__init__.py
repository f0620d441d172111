"""Make a literate Markdown lesson a Jupyter notebook that runs top to bottom and prints, where the
lesson shows each part of its program's transcript, exactly that part.

usage: python notebook.py [MD] [-o OUT] [--force]   (MD: ./attention.md; OUT: build/<MD's name>.ipynb beside MD)

examples:
  python notebook.py                       # build/attention.ipynb from ./attention.md
  python notebook.py docs/lesson.md -o /tmp/lesson.ipynb
  make notebook                            # the first, inside .venv (installs requirements-notebook.txt)

The notebook (nbformat 4, written with the nbformat library) reads like the lesson, in its order. Like
weave.py, it takes the document as tangle.py parses it (chunks, roots, transcripts, the typed blocks):
  - prose as Markdown cells, a new cell at each heading and each caption, written again from the typed blocks
    and spans (never copied from the lesson's lines), so that what a viewer renders is what the lesson says and
    no more: text escaped, a link kept only where the page keeps it, an image a link to it, HTML comments
    dropped, and of the author's HTML only <details>, <summary> and each caption's <a name>, as <a id="cell-id=
    ID"> at the top of the cell the caption starts (its id ID, ASCII), each link to it #cell-id=ID: JupyterLab
    keeps neither <a name> nor ids that are not ASCII, and resolves such a link even while it is still adding
    the cell to the page (escaping.fragment). A caption or heading in a <details> that folds prose stays in its
    cell. GitHub's $`...`$ and ```math fences become $...$ and $$...$$, which Jupyter renders, with no $ inside that
    could close them early and no < a viewer without formulas would read as a tag. A fold (blocks.Details) that a code
    cell stands in becomes its summary in bold, and the output of a cell in it that prints is folded;
  - each fence of a named chunk as a code cell holding exactly its lines; a root chunk (its
    <<references>> are not Python) as Markdown, to read. A chunk or playground that IPython would not run as the
    Python it is (code that does not parse, such as text for a string of the program, with a line that IPython reads
    as its own: %%bash, %%html, !cmd, %magic, name?) is refused, MD:LINE naming the line: in a cell it would run;
  - after the lesson's opening, a note and one collapsed cell: the program whose transcript comes first
    (generated/attention.py), as tangle.py renders it, minus its banner (which speaks to whoever edits that
    file) and its `if __name__ == "__main__":` block.
    It defines every name, so the main line runs although it calls code the lesson shows later; the
    cells below run each chunk again where the lesson shows it, so an edited cell counts from then on;
  - where a part of that transcript stands, a code cell that prints exactly that part: the lines the
    lesson declares for it (parts: main # 第 N 段: those of main() from the comment `# 第 N 段` to the
    next), as they are, with the part as the stored output (tests/test_notebook.py runs the notebook in
    a fresh kernel and compares). A lesson that declares no parts, and shows that transcript whole, gets
    there a cell that runs the program: its `if __name__ == "__main__":` block, or, for a program without
    one, the whole program (then not first: it would print there); a transcript in parts it cannot print is
    shown as text, under a line that says why. Other programs' transcripts (the experiments, minutes long)
    stay as text and are not rerun;
  - each of the lesson's {playground=...} fences as a code cell where it stands, tagged as the reader's;
  - the metadata JupyterLab writes when its kernel starts, so that opening the notebook leaves it unmodified:
    ipykernel's python3 kernel spec, the language_info that kernel reports (its version the Python's that runs
    notebook.py: make notebook's is .venv's, the kernel make lab starts), collapsed beside each folded output;
  - the note's words about this lesson (what running it takes, which cells to change) are the lesson's
    own: its notebook-runs, notebook-names and notebook-try declarations (see literate/declarations.py),
    read as its prose is and written as its prose is.

Writes OUT only when its content changes, atomically, and only over a notebook it wrote itself: the lesson, a
file the lesson tangles, any other file, a symbolic link, a directory or a pipe is refused, saying why (weave.py's rule, the
same code: literate/outputs.py); -o - writes it to stdout. A notebook it wrote is replaced only while it is still as
written (the fingerprint in its metadata, sha256_as_written, says so; opening and saving it in JupyterLab keeps it):
one a reader changed (a cell edited, added, deleted or run, then saved) is left as it is, the line saying how to
keep the changes and how to let them go; --force replaces it all the same. Errors in the input are reported as
`MD:LINE: error: ...` on stderr. Exit status: 0 ok, 2 bad input or usage.
"""
