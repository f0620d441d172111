"""The page: the document's blocks in order, the contents list, the summary of the numbers verified, the
stylesheet (style.css beside this module, read when the page is built), all in one self-contained file."""

from __future__ import annotations

import re
from importlib import resources

from .. import blocks, model, proofs, prose, quoting
from ..blocks import Role, children as inside  # inside: the blocks inside a list item or a quote
from ..book import quotes_a_book
from ..figures import drawing, lesson_figures
from ..makefile import lesson_command
from .code import chunk_html, highlighted_lines, playground_html, pygments_css
from .columns import column_rules
from ..markup import PROSE_HTML, Markup, join, sanitized, start_tag, tag
from ..rendering import draw
from .maths import mathml
from .numbers import is_count, link_targets, numbers_by_inline
from .state import GENERATOR, OWN_ID, Page, uses
from .text import block_close, block_open, render_inline, table_html
from .transcripts import transcript_html
from .words import plain, say


def heading_id(page: Page, text: str) -> str:
    """The heading's text, spaces as -, unless that has the form of an id the page gives something else (OWN_ID:
    section- goes before it); a second heading of the same text gets -2, and so on (counted, so that a thousand
    equal headings stay linear)."""
    base = re.sub(r"\s+", "-", text.strip()) or "section"
    if OWN_ID.fullmatch(base):
        base = "section-" + base
    anchor = base
    while anchor in page.ids:
        page.heading_counts[base] = page.heading_counts.get(base, 1) + 1
        anchor = f"{base}-{page.heading_counts[base]}"
    page.ids.add(anchor)
    return anchor


def body_html(page: Page) -> Markup:
    """The lesson's blocks as HTML, each ## section in a <section> (the contents mark the ones in view)."""
    body = PageBlocks(page)
    out = [draw(block, body) for block in page.doc.blocks]
    if body.in_section:
        out.append(Markup("</section>\n"))
    return join(out)


class PageBlocks:
    """The page's drawing of each kind of block (rendering.Blocks), as HTML; in_section: whether a <section> is open."""

    def __init__(self, page: Page):
        self.page, self.in_section = page, False

    def heading(self, block: blocks.Heading) -> Markup:
        page, name, text = self.page, f"h{block.level}", block.inline.plain
        anchor = heading_id(page, text)
        page.headings.append((block.level, anchor, text))
        out = []
        if block.level == 2:  # each ## section in a <section>: the contents mark the ones in view
            out.append(Markup(("</section>\n" if self.in_section else "") + "<section>\n"))
            self.in_section = True
        out += [start_tag(name, {"id": anchor}), render_inline(page, block.inline), block_close(name)]
        if block.level == 2:
            out.append(Markup(tag("a", {"class": "back", "href": "#contents"}, say(page, "back")) + "\n"))
        return join(out)

    def paragraph(self, block: blocks.Paragraph) -> Markup:
        page = self.page
        if block.caption_of is not None:  # drawn as its fence's caption, there
            return Markup("")
        if block.display is not None:
            page.in_formulas += len(page.numbers.get(block.inline.key, {}))
            return join([tag("div", {"class": "math"}, mathml(page, block.display, True, block.line)), "\n"])
        if block.tight:  # a tight list's paragraphs are not drawn
            return render_inline(page, block.inline)
        return join([start_tag("p"), render_inline(page, block.inline), block_close("p")])

    def fence(self, block: blocks.Fence) -> Markup:
        return fence_html(self.page, block)

    def code_block(self, block: blocks.CodeBlock) -> Markup:
        return Markup(tag("pre", None, tag("code", None, block.content)) + "\n")

    def html_block(self, block: blocks.HtmlBlock) -> Markup:
        return sanitized(block.html, PROSE_HTML, block.unmatched)

    def rule(self, block: blocks.Rule) -> Markup:
        return Markup(start_tag("hr") + "\n")

    def table(self, block: blocks.Table) -> Markup:
        return table_html(self.page, block)

    def list_block(self, block: blocks.ListBlock) -> Markup:
        name = "ol" if block.ordered else "ul"
        items = [join([start_tag("li"), *(draw(child, self) for child in inside(item)), block_close("li")])
                 for item in block.items]
        return join([block_open(name, {"start": block.start} if block.ordered else None), *items, block_close(name)])

    def quote(self, block: blocks.Quote) -> Markup:
        return join([block_open("blockquote"), *(draw(child, self) for child in inside(block)),
                     block_close("blockquote")])

    def details(self, block: blocks.Details) -> Markup:
        return join([draw(child, self) for child in inside(block)])  # its <details> and </details> are HTML blocks


def fence_html(page: Page, fence: blocks.Fence) -> Markup:
    if fence.role is Role.TRANSCRIPT:
        return transcript_html(page, fence)
    if fence.role in (Role.CHUNK, Role.ROOT):
        return chunk_html(page, fence)
    if fence.role is Role.PLAYGROUND:
        return playground_html(page, fence.piece)
    if fence.language == "math":
        return Markup(tag("div", {"class": "math"}, mathml(page, fence.content, True, fence.line)) + "\n")
    shown = highlighted_lines(fence.content.split("\n")[:-1], fence.language, page.widths)
    return Markup(tag("pre", {"class": "code illustration"}, tag("code", None, *(join([s, "\n"]) for s in shown)))
                  + "\n")


def contents_html(page: Page) -> Markup:
    items, open_sub = [], False
    for level, anchor, text in page.headings:
        if level == 1:
            continue
        link = tag("a", {"href": f"#{anchor}"}, text)
        if level == 2:
            items.append(Markup(("</ol></li>" if open_sub else "</li>" if items else "") + start_tag("li") + link))
            open_sub = False
        else:
            items.append(Markup(("" if open_sub else "<ol>") + tag("li", None, link)))
            open_sub = True
    if items:
        items.append(Markup("</ol></li>" if open_sub else "</li>"))
    return tag("nav", {"id": "contents"}, tag("h2", None, say(page, "contents")), tag("ol", None, *items))


def summary_html(page: Page, sources) -> Markup:
    doc = page.doc
    counted = [number for number, _ in sources]
    book = sum(number.book for number in counted)
    declared = sum(number.declared for number in counted)
    stated = sum(bool(number.stated) for number in counted)
    failed = sum(1 for number, lines in sources
                 if not number.book and not number.declared and not number.stated and not lines)
    by_program = {}
    for number, _ in page.linked:
        by_program[number.program] = by_program.get(number.program, 0) + 1
    verified = len(counted) - book - declared - stated - failed
    first = {target: model.output_anchor(target, transcript.pieces()[0].part)  # its first part
             for target, transcript in doc.transcripts.items()}
    links = [say(page, "matched", count=count, link=tag("a", {"href": f"#{first[program]}"}, tag("code", None, program),
                                                          say(page, "output-of")))
             for program, count in by_program.items()]
    text = [say(page, "summary", count=len(counted), verified=tag("strong", None, say(page, "verified", count=verified)),
                parts=join(links, say(page, "separator")))]
    if quotes_a_book(doc, book):
        text.append(say(page, "book", count=book, marked=tag("span", {"class": "num book"}, say(page, "marked-book")),
                        file=tag("code", None, prose.BOOK_FIGURES)))
    counts = sum(1 for number, lines in sources if lines and not number.book and not number.declared
                 and is_count(number) and not number.quotes)
    if counts:
        text.append(say(page, "counts", count=counts))
    if declared:
        text.append(say(page, "declared", count=declared))
    if stated:
        text.append(say(page, "stated", count=stated, file=f"{doc.path.stem}{quoting.QUOTES_SUFFIX}"))
    if page.in_formulas:
        text.append(say(page, "in-formulas", count=page.in_formulas))
    if failed:
        not_matched = tag("span", {"class": "num unverified"}, say(page, "not-matched", count=failed))
        text.append(say(page, "failed", failed=not_matched, command=tag("code", None, lesson_command(doc, "check", doc.folder))))
    rules = say(page, "rules") if (doc.folder / "docs" / "numbers.md").is_file() else ""
    text.append(say(page, "how-to-read", setting=tag("code", None, "ROUNDS = 3000"), rules=rules,
                    weave=tag("code", None, "weave.py"), lesson=tag("code", None, doc.path.name)))
    return tag("p", {"id": "verified"}, *text)


def weave(doc: model.Document) -> tuple[str, Page, list[str]]:
    """The page's HTML, what went into it, and the prose check's error lines (as warnings)."""
    errors, sources = proofs.prose_number_sources(doc)
    transcript_text = {}
    for transcript in doc.transcripts.values():
        for piece in transcript.pieces():
            for offset, text in enumerate(model.output_lines(piece.content)):
                transcript_text[piece.first_line + offset] = text
    figures = lesson_figures(doc)
    page = Page(doc=doc, numbers=numbers_by_inline(sources), transcript_text=transcript_text, used_in=uses(doc),
                targets=link_targets(sources),
                figures={figure.path: drawing(doc, figure) for figure in figures},
                figure_sources={(figure.target, figure.index) for figure in figures})
    body = body_html(page)
    if page.problems:
        raise model.UserError(*page.problems)
    title = next((text for level, _, text in page.headings if level == 1), doc.path.stem)
    first_h1_end = body.find("</h1>")
    top = Markup(summary_html(page, sources) + contents_html(page))
    if first_h1_end >= 0:  # cut between two Markups at a tag's end: both halves are Markup still
        body = join([Markup(body[: first_h1_end + 5]), "\n", top, Markup(body[first_h1_end + 5 :])])
    else:
        body = join([top, body])
    head = join([tag("meta", {"charset": "utf-8"}), "\n",
                 tag("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}), "\n",
                 tag("meta", {"name": "generator", "content": GENERATOR}), "\n",
                 tag("title", None, title), "\n", tag("style", None, Markup(stylesheet(page))), "\n"])
    page_body = tag("body", None, "\n", tag("main", None, "\n", body), "\n")
    page_html = join([Markup("<!DOCTYPE html>\n"), tag("html", {"lang": plain(page, "html-lang")}, "\n",
                                                       tag("head", None, "\n", head), "\n", page_body, "\n"), "\n"])
    return page_html, page, errors


STYLESHEET = "style.css"  # beside this module: fonts, colours, the layout; nothing from the lesson


def stylesheet(page: Page) -> str:
    """The page's CSS: style.css (read when the page is built) with this page's column boxes and the contents'
    section marks put in at their places, then Pygments' colours when Pygments is installed."""
    css = resources.files(__package__).joinpath(STYLESHEET).read_text(encoding="utf-8")
    css = css.replace("/* column boxes */\n", column_rules(page.widths), 1)
    css = css.replace("/* section marks */\n", scroll_marks(page), 1)
    return css + pygments_css()


def scroll_marks(page: Page) -> str:
    """CSS only, no script: each ## section is a view timeline, and its entry in the contents is marked while it
    is the one being read (style.css: under a line near the top of the window; Chromium 116 and later; elsewhere
    the contents simply stay unmarked)."""
    count = sum(level == 2 for level, _, _ in page.headings)
    if not count:
        return ""
    names = [f"--section-{k}" for k in range(1, count + 1)]
    rules = [f"body {{ timeline-scope: {', '.join(names)}; }}",
             "@keyframes in-view { from, to { background: var(--mark-line); font-weight: 600; } }"]
    for k, name in enumerate(names, 1):
        rules.append(f"main > section:nth-of-type({k}) {{ view-timeline-name: {name}; }} "
                     f"#contents > ol > li:nth-child({k}) > a {{ animation: in-view linear none; "
                     f"animation-timeline: {name}; }}")
    return "\n".join(rules) + "\n"
