"""The author's HTML as the page and the notebook read it, for the tags they do not keep, which both show as
text: exactly as written. html.parser hands some constructs back rebuilt (a CDATA section as its data, so that
<![ + data + ]> lost a ]; an end tag lower-cased, without its blanks), and the html.parser of some Pythons raises
AssertionError on a marked section it does not know (<![x]>) while others drop a CDATA section as a comment."""

from __future__ import annotations

from html.parser import HTMLParser


class SourceParser(HTMLParser):
    """html.parser for HTML whose tags not kept are shown as text: show_source puts what is being parsed into out
    as exactly the source it was parsed from; <![...> is read as a browser reads it in HTML, up to the next >.
    The page's Sanitizer and the notebook's HTML blocks are built on it; shown() is how each writes text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list = []
        self.pending: int | None = None  # where in out a construct shown as text waits for its source

    def shown(self, text: str):
        raise NotImplementedError

    def show_source(self, rebuilt: str) -> None:
        """What is being parsed, as text: rebuilt for now, its source once html.parser says where it ends."""
        self.out.append(self.shown(rebuilt))
        self.pending = len(self.out) - 1

    def updatepos(self, i: int, j: int) -> int:
        """html.parser's step past what it just parsed, rawdata[i:j]: the source of a construct shown as text."""
        if self.pending is not None and i < j:
            self.out[self.pending] = self.shown(self.rawdata[i:j])
        self.pending = None
        return super().updatepos(i, j)

    def parse_html_declaration(self, i: int) -> int:
        if self.rawdata.startswith("<![", i):
            end = self.rawdata.find(">", i)
            if end < 0:
                return -1  # not whole yet; at the end html.parser shows the rest as text
            self.show_source(self.rawdata[i : end + 1])
            return end + 1
        return super().parse_html_declaration(i)

    def handle_decl(self, decl):
        self.show_source(f"<!{decl}>")

    def unknown_decl(self, data):
        self.show_source(f"<![{data}]]>")

    def handle_pi(self, data):
        self.show_source(f"<?{data}>")
