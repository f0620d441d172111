r"""The pieces of the notebook's Markdown, each written so that a Markdown renderer reads back exactly what the
lesson's reading stage read: text (never markup), code spans, formulas, link targets and titles, the ids of the
captions' anchors. Whatever a renderer does with raw HTML, none comes from here: a < of the lesson is written
&lt;, and a link target is one the page would keep.

Two escapes for text. In prose (markdown_text) a backslash before each character that could start markup, so that
the cell's source stays readable. In the text of an HTML block (html_text), whose lines a renderer may read as raw
HTML (where a backslash is shown, not read) or, once a tag of the block has been shown as text, as Markdown:
character references, which both read as the character.

JupyterLab reads math in a cell twice: before the Markdown is rendered (removeMath takes out $...$, \\(...\\),
\begin{..}...\end{..}, even inside code) and after (MathJax reads $...$, \(...\), \begin, \ref in the rendered text
outside <code> and <pre>, which is why \$ is no escape there). So no \ and no $ of the lesson's text, code or
titles reaches the cell as itself: in text each is a character reference alone in a <span> (MathJax's strings end
at every element, so it pairs with nothing), in code and titles a character reference. Only the formulas the
lesson wrote are math, and each of them has its braces balanced as removeMath counts them, so that it takes each
whole and nothing after it."""

from __future__ import annotations

import hashlib
import re
from urllib.parse import unquote

from ..inline import safe_url

ALWAYS = "`*_~"  # could open or close markup anywhere: code, emphasis, strikethrough
MATH = "\\$"  # what opens or closes math in JupyterLab: $, \\( \\[ \\begin of its pre-pass, \( \[ \begin \ref of MathJax
SPANNED = {c: f"<span>&#{ord(c)};</span>" for c in MATH}  # text: MathJax finds math within one element's text
ENTITY_LIKE = re.compile(r"&(?=#?[A-Za-z0-9]+;)")  # an & that a renderer would read as a character reference
# what opens a block at the start of a line: a heading, a quote, a list item, an underline, a link's definition
LINE_START = re.compile(r"(?:#{1,6}|[-+]|[0-9]{1,9}[.)])(?=[ \t]|$)|>|[=-]+[ \t]*$|\[")
REFERENCES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", **{c: f"&#{ord(c)};" for c in "\\`*_[]$~|#"}}
HTML_TEXT = str.maketrans({**REFERENCES, **SPANNED})
CODE_TEXT = str.maketrans(REFERENCES)  # inside <code>, which MathJax skips
PRE_TEXT = str.maketrans({c: REFERENCES[c] for c in "&<>" + MATH})  # an HTML block's text is not Markdown
TITLE_TEXT = str.maketrans({"\\": "&#92;", "$": "&#36;", '"': "&quot;"})  # an attribute: no MathJax there
# MathJax's commands that make a link, a style or an id, or load an extension (Jupyter renders formulas with it)
MATHJAX_ACTIVE = {"href", "url", "class", "cssId", "style", "attr", "data", "unicode", "require", "bbox", "mmlToken",
                  "toggle", "mathtip", "texttip", "action", "tooltip", "html", "htmlData"}
LATEX_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|.", re.S)
BLANK_LINES = re.compile(r"\n\s*\n")  # in a formula: a blank line would end the paragraph that holds it


def markdown_text(text: str, line_start: bool = False, table: bool = False, label: bool = False) -> str:
    """Text as Markdown that reads back as the same text: each character that could open markup escaped with a
    backslash, a < (a tag, a comment, an autolink) as &lt;, an & that would read as a character reference as
    &amp;, a ] that a ( or [ could make a link of (or that ends the text: what follows is not known here) and that
    (, the [ of ![; at the
    start of a line (line_start: this text begins one) what would open a block there too; in a table cell the |
    that would end it; in a link's text (label) every bracket."""
    out = []
    for number, line in enumerate(text.split("\n")):
        escaped = []
        line = ENTITY_LIKE.sub("&amp;", line)  # before any & of our own is written
        for index, c in enumerate(line):
            after, before = line[index + 1 : index + 2], line[index - 1 : index] if index else ""
            if c in SPANNED:
                escaped.append(SPANNED[c])
            elif c in ALWAYS or (table and c == "|") or (label and c in "[]") or (c == "]" and after in ("(", "[", "")) \
                    or (c == "(" and before == "]") or (c == "[" and before == "!"):  # ](: a link, ![: an image
                escaped.append("\\" + c)
            else:
                escaped.append("&lt;" if c == "<" else c)
        escaped = "".join(escaped)
        if line_start or number:
            stripped = escaped.lstrip(" \t")
            blanks = len(escaped) - len(stripped)
            match = LINE_START.match(stripped)
            if match:  # 1. or 1) is a list item, # a heading, > a quote, - + = a list or an underline...
                stripped = stripped[: match.end() - 1] + "\\" + stripped[match.end() - 1 :]
            escaped = "&#32;" * blanks + stripped  # leading blanks would indent the line into code
        out.append(escaped)
    return "\n".join(out)


def html_text(text: str) -> str:
    """Text that reads the same as raw HTML and as Markdown: <, > and & as HTML escapes them, each character
    Markdown would read as markup as a character reference (\\ and $ in a <span> of their own)."""
    return text.translate(HTML_TEXT)


def code_span(content: str, table: bool = False) -> str:
    """A code span holding content exactly: fenced by a run of backticks longer than any inside it, padded with a
    blank where the content starts or ends with a backtick or a blank (a renderer takes one of each off). Content
    with a \\ or a $ as an HTML <code>, every character Markdown or JupyterLab's math would read a reference (in
    a code span removeMath would still read \\( and \\begin, and it misses some code spans' $)."""
    if not content:
        return ""
    if any(c in MATH for c in content):
        return f"<code>{content.translate(CODE_TEXT)}</code>"
    if table:
        content = content.replace("|", "\\|")  # GFM splits the row first, also inside code, and reads \| as |
    fence = "`" * (max(map(len, re.findall("`+", content)), default=0) + 1)
    pad = " " if content[0] == "`" or content[-1] == "`" or (content[0] == content[-1] == " " and content.strip()) \
        else ""
    return f"{fence}{pad}{content}{pad}{fence}"


def preformatted(content: str, info: str = "") -> list[str] | None:
    """Code whose content or fence's info string holds a \\ or a $ (which JupyterLab's math pre-pass reads inside
    a fence or an indented block too) as the lines of an HTML <pre> block, those and & < > as references; None:
    code without them, which a fence can hold as it is."""
    if not any(c in MATH for c in info + content):
        return None
    lines = content.translate(PRE_TEXT).split("\n")
    return [f"<pre><code>{lines[0]}", *lines[1:], "</code></pre>"]


def formula(latex: str, display: bool = False, table: bool = False) -> str:
    """A formula as $...$ ($$...$$) that cannot close early nor hold markup: each $ inside is \\$, < and > are
    \\lt and \\gt (a renderer without formulas would read them as tags), ] before ( or [ is ]{} (a link), and
    MathJax's commands that make links, styles or ids, or load code, are written out as text; in a table cell a |
    is \\vert. Its braces balance as JupyterLab's removeMath counts them (an open one closed at the end; \\\\ before
    a brace, which it would read as \\ and an escaped brace, spaced off): else it reads on past the closing $."""
    dollars = "$$" if display else "$"
    if "`" in latex:
        return formula_as_text(dollars + latex + dollars, table)
    out, depth = [], 0
    tokens = LATEX_TOKEN.findall(latex)
    for index, token in enumerate(tokens):
        if token[1:] in MATHJAX_ACTIVE and token.startswith("\\"):
            out.append(f"\\backslash\\mathrm{{{token[1:]}}}")
        elif token in ("<", "\\<"):
            out.append("\\lt ")
        elif token in (">", "\\>"):
            out.append("\\gt ")
        elif token == "$":
            out.append("\\$")
        elif token == "|" and table:  # a | would end the table's cell
            out.append("\\vert ")
        elif token == "\\":  # a backslash at the very end would escape the closing $
            out.append("\\backslash ")
        elif token == "\\\\" and tokens[index + 1 : index + 2] in (["{"], ["}"]):
            out.append("\\\\ ")  # a blank after \\ is nothing in a formula
        else:
            depth += (token == "{") - (token == "}" and depth > 0)
            out.append(token)
    written = "".join(out) + "}" * depth
    written = re.sub(r"\](?=[(\[])", "]{}", written)  # in LaTeX {} is nothing
    if display:
        written = BLANK_LINES.sub("\n", written)
    return f"{dollars}{written}{dollars}"


def formula_as_text(written: str, table: bool) -> str:
    """A formula that holds a backtick, shown as the text it is: JupyterLab's pre-pass takes a backtick for code even
    inside a formula, and would leave the formula's closing $ to MathJax, which pairs it with whatever follows."""
    lines = BLANK_LINES.sub("\n", written).split("\n")
    return "\n".join(markdown_text(line, line_start=True, table=table) for line in lines)


def destination(href: str) -> str | None:
    """A link's target (as the reading stage normalised it) written so that a renderer reads exactly a target the
    page would keep: as the lesson wrote it where that is plain, else percent-encoded; None: no such target."""
    plain = unquote(href)
    for candidate in ([plain] if "%" not in plain else []) + [href]:  # a % of the plain one would be read as a code
        if safe_url(candidate) is None or re.search(r"[\x00-\x20\x7f<>\\]", candidate):
            continue
        depth = 0
        for character in candidate:
            depth += (character == "(") - (character == ")")
            if depth < 0:
                break
        written = ENTITY_LIKE.sub("&amp;", candidate).replace("$", "&#36;")  # a $ would open math in JupyterLab
        return written if depth == 0 else written.replace("(", "\\(").replace(")", "\\)")
    return None


def title(text: str) -> str:
    """A link's title in double quotes, read back as written: \\, $ and " as character references (a \\ written
    as \\\\ would read as \\\\( to JupyterLab's math)."""
    escaped = ENTITY_LIKE.sub("&amp;", " ".join(text.split("\n"))).translate(TITLE_TEXT)
    return f'"{escaped}"'


def jupyter_id(anchor: str) -> str:
    """The id of the cell a caption starts: the kind, then a short hash of the anchor (a cell's id is ASCII
    letters, digits, - and _; JupyterLab also drops every other id, so chunk-训练_循环 would lead nowhere)."""
    kind = anchor.partition("-")[0]
    return f"{kind}-{hashlib.sha256(anchor.encode()).hexdigest()[:12]}"


def fragment(anchor: str) -> str:
    """What a link to a caption's anchor leads to, and the id of the <a> the caption starts with: cell-id=, then
    the id of the cell the caption starts. JupyterLab resolves a click on it either way. Once the cell is on the
    page, its rendered Markdown holds the <a> (as data-jupyter-id), which the click scrolls to the top; before
    that (JupyterLab adds a notebook's cells to the page a few at a time, while idle), the link changes the page's
    fragment, and the notebook finds the cell by its id, waits for it (up to 10 s) and scrolls to it. A link to a
    plain id does nothing then."""
    return f"cell-id={jupyter_id(anchor)}"
