"""Weave a literate Markdown lesson into one self-contained HTML page: the prose, its
formulas as MathML, every code chunk with its name and links, the transcripts, and
every number of the prose linked to the transcript line that prints it.

usage: python weave.py [MD] [-o OUT] [--force]   (MD: ./attention.md; OUT: build/<MD's name>.html beside MD)

examples:
  python weave.py                          # build/attention.html from ./attention.md
  python weave.py docs/lesson.md -o /tmp/lesson.html
  make html                                # the same as the first, inside .venv

The page (like noweave beside notangle: weave.py reads the document as tangle.py
parses it, its typed blocks and spans, and knows no Markdown syntax of its own):
  - a contents list of the # and ## sections, ### nested under them; on a wide screen
    beside the text, the section being read marked (CSS view timelines, no script);
  - formulas converted to MathML when the page is built (latex2mathml; no script):
    $$...$$ or a ```math fence on its own (display), $...$ or $`...`$ (inline); their
    spacing bounded (\\hspace, \\kern, \\quad, \\mkern, blanks, \\phantom: each space at most
    2em wide and 1em back, 12em a formula; text at most 3 times larger), so that no formula
    makes the page wider than a screen or pulls itself over the text before it;
  - each code chunk, and each transcript (each of its parts, where it stands), under
    its caption: the one written above the fence in MD (<a name="chunk-NAME"></a>
    **〈NAME〉**..., which tangle.py checks), its bold name a link to the anchor it
    gives (#chunk-NAME[-N], #file-PATH[-N], #output-PATH[-N], as on GitHub), with
    its link list; a document without captions gets <<NAME>> ≡ and, for a root, the
    list of its parts in the order they are tangled. Beside it: which of several
    fences it is, links to the one before and after; its line of MD in the caption's
    tooltip (the reader's view is the lesson's). Under a chunk's last fence a "用在 →"
    link to each <<NAME>> that includes it; each <<NAME>> inside code a link to the
    chunk (where it is defined: in its tooltip);
    code is highlighted with Pygments when it is installed, plain otherwise;
  - each {playground=...} fence as the reader's 试一试: its code under a caption saying so;
  - every transcript line has the anchor #L<its line of MD> (a transcript in parts:
    each part's lines at their own lines); every prose number that make check
    verifies is a link to the number itself (#L<line>-<number>) on one transcript
    line that prints it, in whichever part (the one whose words best match the
    sentence), highlighted when you arrive, its tooltip quoting the line (of a long
    line, the 120 characters around the number: the page stays linear); the book's
    figures are marked as the book's; the top of the page says how many numbers were
    verified, against which program's transcript;
  - each figure of the lesson (an image in the folder it declares, figures: figures) drawn where
    the image stands: the same drawing as its file (literate/figures.py);
  - each attention matrix printed in a transcript (a header of column numbers, then rows
    labelled as the lesson declares, heatmap: 输出 输入 图例, like `输出 1    0.10  0.10 ...`;
    a lesson that declares none gets no heatmaps) also drawn as an SVG heatmap beside it, from
    the printed numbers (the programs are never run), grouped with the same matrix
    drawn in characters below it (`输出 1  |    ██|`) up to its legend; not in a part a figure
    is drawn from; one fixed colour scale for every picture, by a weight's multiple of uniform
    (log, light to dark from ¼x to 8x), with a legend in multiples (literate/drawing.py);
  - in code and transcripts each wide character stands in a box two columns wide,
    every other non-ASCII one in a box one column wide, so columns line up on any fonts;
  - a phone's width scrolls no page sideways (boxes scroll in place); dark mode; print;
  - links to a caption's anchor keep it as written (not percent-encoded); a heading never takes
    an id of the page's own forms (L12, L12-0.75, chunk-/file-/output-..., contents, verified):
    it gets section- before it, and each id stands once.
  The page needs nothing from the network: CSS is inline, there is no script.
  A number that the check does not verify is shown unlinked, marked, and counted
  in a warning (make check lists and fails on them); the page is still written.

Safe by construction: every tag and attribute of the page comes from one escaping path and a fixed
vocabulary (no script, no src, no style attribute, no event handler; links only to #fragments, relative
paths, http(s) and mailto); the author's raw HTML keeps only <a name>, <details> and <summary> (comments
are dropped, the rest is shown as text), formulas pass a MathML allow-list; images become links.

Writes OUT only when its content changes, atomically, and only over a page weave.py wrote: never over MD,
a file MD tangles, any other file, a folder, a FIFO or a device, nor through a symbolic link (-o - writes to
stdout). Nor over a page edited since weave.py wrote it (the fingerprint in its <meta name="sha256-as-written">
says so), or one from before that fingerprint: weave.py says how to keep the edits and how to let them go;
--force replaces it all the same. Errors in the input are reported as `MD:LINE: error: ...` on stderr. Exit status: 0 ok, 2 bad
input or usage, 130 after Ctrl-C (an interrupt while the page is replaced takes effect once it is whole, and
then says so).
"""
