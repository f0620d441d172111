"""HTML and SVG, escaped by construction: every byte of the page, and of the figures the tools draw (drawing.py),
comes from the functions of this module. A Markup is HTML already; any other value is text and is escaped where it
joins the page, so a forgotten escape shows as text and never runs. Tags and attributes come from a fixed
vocabulary (no script, no style attribute, no src: nothing runs, nothing is fetched); a link goes only to
#fragments, http(s) and mailto; the author's raw HTML and latex2mathml's output are parsed and rebuilt through an
allow-list (Sanitizer)."""

from __future__ import annotations

import html
import string

from .htmlsource import SourceParser
from .inline import safe_url


# Every byte of the page comes from the functions of this section. A Markup is HTML already; any other
# value is text and is escaped where it joins the page, so a forgotten escape shows as text and never runs.
# Tags and attributes come from a fixed vocabulary (no script, no style attribute, no src: nothing runs,
# nothing is fetched); a link goes only to #fragments, http(s) and mailto; the author's raw HTML and
# latex2mathml's output are parsed and rebuilt through an allow-list (Sanitizer).

HTML_TAGS = {"html", "head", "meta", "title", "style", "body", "main", "nav", "section", "h1", "h2", "h3", "h4", "h5", "h6",
             "p", "a", "strong", "em", "s", "code", "pre", "span", "div", "figure", "figcaption", "ol", "ul",
             "li", "table", "thead", "tbody", "tr", "th", "td", "blockquote", "details", "summary", "hr", "br"}
SVG_TAGS = {"svg", "title", "text", "rect", "g", "line", "polyline"}
MATH_TAGS = {"math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msqrt", "mroot", "mfrac", "msub", "msup",
             "msubsup", "munder", "mover", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom",
             "merror", "semantics", "annotation", "mmultiscripts", "mprescripts", "none", "menclose"}
TAGS = HTML_TAGS | SVG_TAGS | MATH_TAGS
VOID_TAGS = {"meta", "hr", "br"}
# MathML Core's presentation attributes; not href, style, class, id, mathcolor or mathbackground
MATH_ATTRIBUTES = {"display", "mathvariant", "stretchy", "fence", "form", "separator", "lspace", "rspace",
                   "largeop", "movablelimits", "symmetric", "minsize", "maxsize", "accent", "accentunder",
                   "linethickness", "scriptlevel", "displaystyle", "columnalign", "rowalign", "columnspacing",
                   "rowspacing", "columnlines", "rowlines", "frame", "width", "height", "depth", "voffset",
                   "notation", "mathsize", "dir", "columnspan", "rowspan", "align"}
ATTRIBUTES = {"id", "class", "href", "title", "name", "lang", "charset", "content", "start", "open", "role",
              "viewBox", "width", "height", "x", "y", "text-anchor", "fill", "xmlns", "data-rows",
              "data-columns", "data-multiple", "aria-label", "stroke", "stroke-width", "stroke-dasharray", "points",
              "x1", "y1", "x2", "y2", "font-size", "font-family", "font-weight"} | MATH_ATTRIBUTES
# The author's raw HTML that the page keeps (the lesson's own anchors and folds); comments are dropped,
# everything else is shown as the text it is written as.
PROSE_HTML = {"a": {"name", "href", "title"}, "details": {"open"}, "summary": set(), "br": set()}
MATH_HTML = {name: MATH_ATTRIBUTES for name in MATH_TAGS}


class Markup(str):
    """A piece of the page that is HTML already (see above: only this section makes one)."""

    __slots__ = ()


def escape(value) -> Markup:
    """Text as HTML: unchanged if it is Markup already."""
    return value if isinstance(value, Markup) else Markup(html.escape(str(value), quote=False))


def join(parts, separator="") -> Markup:
    return Markup(escape(separator).join(escape(part) for part in parts))


def fill(template: str, **parts) -> Markup:
    """A template's text with its {fields} filled in: the text escaped, each part escaped unless it is Markup. A field
    is a name alone (no {} nor {n:,}): anything else is a mistake of the tools' own (ValueError)."""
    out = []
    for text, field, spec, conversion in string.Formatter().parse(template):
        out.append(escape(text))
        if field is not None:
            if not field.isidentifier() or spec or conversion:
                raise ValueError(f"a template's field is a name alone, not {{{field}{'!' + conversion if conversion else ''}"
                                 f"{':' + spec if spec else ''}}}")
            out.append(escape(parts[field]))
    return Markup("".join(out))


def start_tag(name: str, attributes: dict | None = None) -> Markup:
    """<name attributes>: the name and attributes from the vocabulary (else ValueError: a mistake of weave.py's
    own), each value escaped; True is an attribute without value, None and False leave it out."""
    if name not in TAGS:
        raise ValueError(f"the tools write no <{name}>")
    written = []
    for key, value in (attributes or {}).items():
        if key not in ATTRIBUTES:
            raise ValueError(f"the tools write no {key}= attribute")
        if key == "href" and value is not None:
            value = safe_url(str(value))
        if value is True:
            written.append(f" {key}")
        elif value is not None and value is not False:
            written.append(f' {key}="{html.escape(str(value), quote=True)}"')
    return Markup(f"<{name}{''.join(written)}>")


def end_tag(name: str) -> Markup:
    if name not in TAGS:
        raise ValueError(f"the tools write no <{name}>")
    return Markup(f"</{name}>")


def tag(name: str, attributes: dict | None = None, *children) -> Markup:
    """An element: its children are Markup or text (escaped)."""
    if name in VOID_TAGS:
        return start_tag(name, attributes)
    return Markup(start_tag(name, attributes) + join(children) + end_tag(name))


class Sanitizer(SourceParser):
    """HTML written by someone else, rebuilt: a tag of the allow-list (name -> its allowed attributes) by
    start_tag, with only those attributes; any other tag, declaration or processing instruction shown as
    the text it is written as (SourceParser); comments dropped; text escaped. Parsed as a browser would
    (html.parser): the content of a <script> or <style> is text too. (A class because HTMLParser is one.)"""

    def __init__(self, allowed: dict[str, set[str]], unmatched: frozenset[int] = frozenset()):
        super().__init__()
        self.allowed = allowed
        self.unmatched, self.details = unmatched, 0  # which <details> and </details> of the text lead nowhere
        self.open: list[str] = []  # the tags opened here and not yet closed, other than <details>

    def handle_starttag(self, name, attributes):
        if name == "details" and self.allowed is PROSE_HTML:
            self.details += 1
            if self.details - 1 in self.unmatched:  # never closed: folding all that follows would swallow it
                self.out.append(escape(self.get_starttag_text()))
                return
        if name in self.allowed:
            kept = {key: True if value is None else value for key, value in attributes if key in self.allowed[name]}
            self.out.append(start_tag(name, kept))
            if self.allowed is PROSE_HTML and name in ("a", "summary"):
                self.open.append(name)
        else:
            self.out.append(escape(self.get_starttag_text()))

    def handle_startendtag(self, name, attributes):
        self.handle_starttag(name, attributes)
        if name in self.allowed and name not in VOID_TAGS:
            self.handle_endtag(name)

    def handle_endtag(self, name):
        if self.allowed is PROSE_HTML and name in ("a", "summary", "details"):
            if name == "details":
                self.details += 1
                if self.details - 1 in self.unmatched:
                    self.show_source(f"</{name}>")
                    return
            elif name not in self.open:  # closes nothing opened here: as text
                self.show_source(f"</{name}>")
                return
            else:
                while self.open and self.open.pop() != name:
                    pass
        if name in self.allowed:
            self.out.append(end_tag(name))
        else:
            self.show_source(f"</{name}>")

    def closed(self) -> list:
        """The output, with the <a> and <summary> it left open closed (else they would hold what follows)."""
        return self.out + [end_tag(name) for name in reversed(self.open)]

    def shown(self, text: str) -> Markup:
        return escape(text)

    def handle_data(self, data):
        self.out.append(escape(data))

    def handle_comment(self, data):
        pass


def sanitized(text: str, allowed: dict[str, set[str]], unmatched: frozenset[int] = frozenset()) -> Markup:
    parser = Sanitizer(allowed, unmatched)
    parser.feed(text)
    parser.close()
    return join(parser.closed())
