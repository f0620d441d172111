"""Code: each line highlighted (Pygments when it is installed, plain otherwise), <<references>> linked to their
chunk; a chunk's figure with its caption, its place among the name's fences, and where it is used."""

from __future__ import annotations

from .. import blocks, model
from .columns import columns
from ..markup import Markup, join, start_tag, tag
from .state import Page, piece_id
from .text import caption_html
from .words import plain, say

try:
    from pygments.lexers import get_lexer_by_name
    from pygments.token import STANDARD_TYPES
    from pygments.util import ClassNotFound
    from pygments.formatters import HtmlFormatter
except ImportError:  # optional: code is shown plain
    get_lexer_by_name = None


def highlighted_lines(code: list[str], language: str, widths: set[tuple[str, int]]) -> list[Markup]:
    """Each line of code as HTML: Pygments' token classes when it is installed, else escaped text; wide
    characters in their column boxes."""
    lexer = None
    if get_lexer_by_name is not None and language:
        try:
            lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
        except ClassNotFound:
            lexer = None
    if lexer is None:
        return [columns(line, widths) for line in code]
    # A run of blank lines goes to the lexer as one empty line (some lexers, Python's and C's among them,
    # take time quadratic in a long run of them); blank lines are shown as they are, without a class.
    kept = [number for number, line in enumerate(code) if line.strip() or not number or code[number - 1].strip()]
    lines = [[]]
    for kind, value in lexer.get_tokens("\n".join(code[number] if code[number].strip() else "" for number in kept)):
        while kind not in STANDARD_TYPES:
            kind = kind.parent
        css = STANDARD_TYPES[kind]
        for number, part in enumerate(value.split("\n")):
            if number:
                lines.append([])
            if part:
                lines[-1].append(tag("span", {"class": css}, columns(part, widths)) if css else columns(part, widths))
    lexed = dict(zip(kept, (join(parts) for parts in lines)))
    return [lexed.get(number, Markup("")) if line.strip() else columns(line, widths) for number, line in enumerate(code)]


def code_html(page: Page, piece: model.Piece, language: str) -> Markup:
    shown = highlighted_lines(piece.lines, language, page.widths)
    out = []
    for offset, (code, text) in enumerate(zip(piece.lines, shown, strict=True)):
        line = piece.first_line + offset
        match = model.REFERENCE.match(code)
        if match:
            name = model.chunk_name(match[2])
            where = page.doc.chunks[name][0].fence_line
            defined = plain(page, "defined-at", where=f"{page.doc.path.name}:{where}")
            text = join([match[1], tag("a", {"class": "ref", "href": f"#{model.chunk_anchor(name)}", "title": defined},
                                       f"<<{match[2]}>>")])
        out.append(tag("span", {"class": "l", "id": f"L{line}"}, text, "\n"))
    return tag("pre", {"class": "code"}, tag("code", None, *out))


def sequence_links(page: Page, count: int, index: int, anchor_of) -> list[Markup]:
    """For one of several fences: which it is, and links to the one before and after."""
    if count < 2:
        return []
    links = [tag("span", {"class": "part"}, say(page, "part-of", number=index + 1, count=count))]
    if index:
        links.append(tag("a", {"href": f"#{anchor_of(index - 1)}"}, say(page, "previous")))
    if index + 1 < count:
        links.append(tag("a", {"href": f"#{anchor_of(index + 1)}"}, say(page, "next")))
    return links


def chunk_html(page: Page, fence: blocks.Fence) -> Markup:
    """A fence of a chunk or a root, with its caption and the links to the others of its name."""
    doc, label, index, piece = page.doc, fence.label, fence.index, fence.piece
    kind = fence.role.value  # chunk or root: the figure's class
    pieces = (doc.chunks if fence.role is blocks.Role.CHUNK else doc.roots)[label]
    anchor = piece_id(fence.role, label, index)
    page.ids.add(anchor)
    written = caption_html(page, fence.caption, anchor)
    if written is None:
        name = f"<<{label}>>" if kind == "chunk" else label
        caption = [tag("a", {"class": "name", "href": f"#{anchor}"}, name), "+≡" if index else "≡"]
    else:
        caption = [tag("span", {"class": "written"}, written)]
    caption += sequence_links(page, len(pieces), index, lambda i: piece_id(fence.role, label, i))
    # for the writer: in the tooltip, not in the text
    where = plain(page, "in-source", where=f"{doc.path.name}:{piece.fence_line}")
    foot = ""
    if kind == "chunk" and index == len(pieces) - 1:
        links = [tag("a", {"href": f"#L{line}"}, user) for line, user in page.used_in.get(label, [])]
        foot = tag("p", {"class": "used"}, say(page, "used-in", links=join(links, say(page, "separator"))))
    elif kind == "root" and index == len(pieces) - 1 and not doc.captions:
        # a captioned document lists the chunks of each piece in its caption already
        foot = tag("div", {"class": "parts"}, say(page, "made-of", label=label), parts_list(page, pieces))
    return Markup(tag("figure", {"class": f"chunk {kind}", "id": anchor}, tag("figcaption", {"title": where},
                                                                            join(caption, " ")),
                      code_html(page, piece, piece.language), foot) + "\n")


def parts_list(page: Page, pieces: list[model.Piece]) -> Markup:
    """The chunks a root includes, in the order they are tangled, nested; each chunk listed once, depth first
    without recursion (chunks nest up to model.MAX_DEPTH deep)."""
    out = []
    for event, line, name, _ in model.walk(page.doc.chunks, pieces, set()):
        if event == "enter":
            out.append(Markup(start_tag("li") + tag("a", {"href": f"#{model.chunk_anchor(name)}"}, f"<<{name}>>")
                              + " " + tag("a", {"class": "def", "href": f"#L{line}"}, say(page, "at-line", line=line))
                              + start_tag("ol")))
        elif event == "leave":
            out.append(Markup("</ol></li>"))
    return tag("ol", None, join(out))


def pygments_css() -> str:
    """Pygments' colours for the code (light, and dark with prefers-color-scheme); none without Pygments."""
    if get_lexer_by_name is None:
        return ""
    css = HtmlFormatter(style="default").get_style_defs("pre.code") + "\n"
    dark_code = HtmlFormatter(style="monokai").get_style_defs("pre.code")
    css += f"@media (prefers-color-scheme: dark) {{\n{dark_code}\npre.code {{ background-color: var(--code-bg); }}\n}}\n"
    return css + "pre.code .sd, pre.code .c1, pre.code .ch, pre.code .cm, pre.code .cs { font-style: normal; }\n"


def playground_html(page: Page, playground: model.Playground) -> Markup:
    """A fence the lesson offers the reader to change and run: its code, under a caption that says so."""
    shown = highlighted_lines(playground.lines, playground.language, page.widths)
    caption = [tag("span", {"class": "name"}, say(page, "try")), say(page, "playground", program=playground.program)]
    code = tag("pre", {"class": "code"}, tag("code", None, *(join([line, "\n"]) for line in shown)))
    return Markup(tag("figure", {"class": "playground"}, tag("figcaption", None, join(caption, " ")), code)
                  + "\n")
