"""The notebook's Markdown cells read the way JupyterLab reads math in them, in two passes, both ported here:
first removeMath (@jupyterlab/rendermime, latex.ts) takes out of the Markdown what it reads as formulas ($, $$,
\\\\( \\\\), \\\\[ \\\\], \\begin{..}...\\end{..}) and puts them back into the rendered HTML; then MathJax typesets the
whole rendered cell, finding in its text (outside code and pre) $, $$, \\( \\), \\[ \\], \\begin{..} and \\ref{..}
(MathJax's FindTeX over the strings of HTMLDomStrings, with JupyterLab's options). That second pass is why a
single \\$ is no escape in JupyterLab: Markdown turns it into a $ that MathJax then reads.

So whatever the lesson writes as text, as code or as a link's title must open or close math in neither pass: the
only math in a cell is the formulas the lesson wrote, and those hold none of MathJax's commands that link, style
or load (escaping.formula)."""

import html
import re
from html.parser import HTMLParser

import pytest

pytest.importorskip("nbformat", reason="notebook.py needs nbformat: make test installs requirements-notebook.txt")

from markdown_it import MarkdownIt  # noqa: E402

import literate.markdown  # noqa: E402
from literate.notebook import command as notebook  # noqa: E402
from literate.notebook import escaping  # noqa: E402

MATH_SPLIT = re.compile(r"(\$\$?|\\(?:begin|end)\{[a-z]*\*?\}|\\[{}$]|[{}]|(?:\n\s*)+|@@\d+@@|\\\\(?:\(|\)|\[|\]))",
                        re.I)
ACTIVE = re.compile(r"\\(href|url|class|cssId|style|unicode|require|bbox|mmlToken|html|data|attr)\b")
OPEN, CLOSE = "\ue000", "\ue001"  # where with_math put a formula back (characters no lesson here uses)


def without_math(text: str) -> tuple[str, list[str]]:
    """JupyterLab's removeMath, ported: the formulas it takes out before the Markdown is rendered (as it escapes
    them: & < > as entities), and the text left, each formula as @@N@@."""
    math: list[str] = []
    if "`" in text or "~~~" in text:  # $ inside code is no formula: hidden as ~D, ~ as ~T
        text = text.replace("~", "~T")
        text = re.sub(r"^(?P<fence>`{3,}|(~T){3,})[^`\n]*\n([\s\S]*?)^(?P=fence)`*$",
                      lambda m: m[0].replace("$", "~D"), text, flags=re.M)
        text = re.sub(r"(^|[^\\])(`+)([^\n]*?[^`\n])\2(?!`)", lambda m: m[0].replace("$", "~D"), text, flags=re.M)
    blocks = MATH_SPLIT.split(text)
    start = end = last = None
    braces = 0

    def take(first: int, final: int) -> None:
        block = "".join(blocks[first : final + 1]).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        for index in range(first + 1, final + 1):
            blocks[index] = ""
        blocks[first] = f"@@{len(math)}@@"
        math.append(block.replace("~D", "$").replace("~T", "~"))

    i = 1
    while i < len(blocks):
        block = blocks[i]
        if block.startswith("@"):
            blocks[i] = f"@@{len(math)}@@"
            math.append(block)
        elif start is not None:
            if block == end:
                if braces:
                    last = i
                else:
                    take(start, i)
                    start = end = last = None
            elif re.search(r"\n.*\n", block):
                if last is not None:
                    i = last
                    take(start, i)
                start = end = last = None
                braces = 0
            elif block == "{":
                braces += 1
            elif block == "}" and braces:
                braces -= 1
        elif block in ("$", "$$"):
            start, end, braces = i, block, 0
        elif block in ("\\\\(", "\\\\["):
            start, end, braces = i, "\\\\)" if block[-1] == "(" else "\\\\]", 0
        elif block[1:6] == "begin":
            start, end, braces = i, "\\end" + block[6:], 0
        i += 2
    if start is not None and last is not None:
        take(start, last)
    return "".join(blocks).replace("~D", "$").replace("~T", "~"), math


def with_math(rendered: str, math: list[str]) -> str:
    """JupyterLab's replaceMath, ported: each @@N@@ of the rendered HTML replaced by what removeMath took (\\\\( and
    \\\\[ of a whole formula as \\( and \\[), marked here with OPEN and CLOSE to tell it from the lesson's text."""
    def put_back(match: re.Match) -> str:
        group = math[int(match[1])]
        for opening, closing in (("\\\\(", "\\\\)"), ("\\\\[", "\\\\]")):
            if group.startswith(opening) and group.endswith(closing):
                group = opening[1:] + group[3:-3] + closing[1:]
        return OPEN + group + CLOSE
    return re.sub(r"@@(\d+)@@", put_back, rendered)


class DomStrings(HTMLParser):
    """MathJax's HTMLDomStrings, ported: the strings of text MathJax searches for math. Every element but <br> and
    <wbr> ends one string (math cannot span two); what is inside script, style, textarea, pre and code is skipped."""

    SKIP = {"script", "noscript", "style", "textarea", "pre", "code", "annotation", "annotation-xml"}
    INCLUDE = {"br": "\n", "wbr": ""}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.strings, self.string, self.skipping = [], "", 0

    def push(self) -> None:
        if self.string:
            self.strings.append(self.string)
        self.string = ""

    def handle_starttag(self, tag, attrs):
        if tag in self.INCLUDE:
            self.string += "" if self.skipping else self.INCLUDE[tag]
            return
        self.push()
        self.skipping += tag in self.SKIP

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self.skipping -= tag in self.SKIP

    def handle_endtag(self, tag):
        if tag not in self.INCLUDE:
            self.push()
            self.skipping -= tag in self.SKIP and self.skipping > 0

    def handle_data(self, data):
        if not self.skipping:
            self.string += data


# MathJax's FindTeX with JupyterLab's delimiters ($ $, \( \); $$ $$, \[ \]), environments, escapes and refs
DELIMITERS = {"$$": "$$", "\\(": "\\)", "\\[": "\\]", "$": "$"}
START = re.compile(r"\$\$|\\\(|\\\[|\$|\\begin\s*\{([^}]*)\}|(\\([\\$])|(\\(?:eq)?ref\s*\{[^}]*\}))")


def find_end(text: str, position: int, close: str) -> int | None:
    """Where math opened before position closes: at close outside braces, skipping control sequences."""
    pattern = re.compile(close + r"|\\(?:[a-zA-Z]|.)|[{}]", re.S)
    braces = 0
    for match in pattern.finditer(text, position):
        if re.fullmatch(close, match[0]) and braces == 0:
            return match.end()
        braces += (match[0] == "{") - (match[0] == "}" and braces > 0)
    return None


def tex_found(text: str) -> list[tuple[int, int]]:
    """(start, end) of each piece of math MathJax finds in one string (escaped \\$ and \\\\ are text)."""
    found, position = [], 0
    while match := START.search(text, position):
        end = None
        if match[1] is not None:  # \begin{env}...\end{env}
            end = find_end(text, match.end(), r"\\end\s*\{" + re.escape(match[1]) + r"\}")
        elif match[3] is not None:  # an escaped \ or $: text, not math
            position = match.end()
            continue
        elif match[2] is not None:  # \ref{...}: math by itself
            end = match.end()
        else:
            end = find_end(text, match.end(), re.escape(DELIMITERS[match[0]]))
        if end is not None:
            found.append((match.start(), end))
        position = end if end is not None else match.end()
    return found


def renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    md.validateLink = lambda url: True
    return md


def math_in(markdown: str) -> tuple[list[str], list[str]]:
    """What JupyterLab takes as math from a cell: (the pre-pass's formulas, the pieces MathJax then finds in the
    rendered cell outside them). A cell written safely has only its own formulas and nothing in the second list."""
    text, math = without_math(markdown)
    parser = DomStrings()
    parser.feed(with_math(renderer().render(text), math))
    parser.close()
    parser.push()
    outside = []
    for string in parser.strings:
        for start, end in tex_found(string):
            piece, before = string[start:end], string[:start]
            inside = before.count(OPEN) == before.count(CLOSE) + 1 and OPEN not in piece and CLOSE not in piece
            if not inside:
                outside.append(piece)
    return [formula for formula in math if not re.fullmatch(r"@@\d+@@", formula)], outside


def assert_math_inert(markdown: str) -> list[str]:
    """Only formulas the notebook wrote ($...$, $$...$$) are math, in both passes; none holds an active command.
    The formulas."""
    formulas, outside = math_in(markdown)
    assert not outside, (outside, markdown)
    for formula in formulas:
        assert formula.startswith("$") and formula.endswith("$"), (formula, markdown)
        assert not ACTIVE.search(html.unescape(formula)), (formula, markdown)
    return formulas


def markdown_cells(folder, text: str) -> list[str]:
    md = folder / "lesson.md"
    md.write_text(text, encoding="utf-8")
    return [cell.source for cell in notebook.build(literate.markdown.load(md, str(md))).cells
            if cell.cell_type == "markdown"]


def lesson(prose: str) -> str:
    return ("# 课\n\n" + prose + '\n\n```python {file=generated/a.py}\nprint("value 0.75")\n```\n\n'
            "```text {transcript}\nvalue 0.75\n```\n")


def visible(markdown: str) -> str:
    """The text a reader sees in a cell rendered without math (tags gone, references read)."""
    return html.unescape(re.sub(r"<[^>]*>", "", renderer().render(markdown)))


# ---------------------------------------------------------------- the port itself


def test_the_ports_find_what_jupyterlab_finds():
    """The ports read a plain cell as JupyterLab does: one formula taken; a single \\$ of Markdown, once
    rendered, a $ that MathJax pairs (why JupyterLab asks for \\\\$); nothing inside code."""
    assert math_in("a $x$ b") == (["$x$"], [])
    assert math_in("costs \\$5 and \\$6") == ([], ["$5 and $"])
    assert math_in("`$x$` and `\\(y\\)`") == ([], [])
    assert math_in("text \\\\(x\\\\) end") == (["\\\\(x\\\\)"], [])
    assert math_in("\\begin{matrix}a\\end{matrix}") == (["\\begin{matrix}a\\end{matrix}"], [])
    assert math_in("p \\ref{x} q") == ([], ["\\ref{x}"])


# ---------------------------------------------------------------- what the lesson writes opens no math


ACTIVE_MATH = "\\href{https://evil.example/}{click}\\class{x}{y}\\require{unicode}"
PROSE = {  # each as the lesson's Markdown: \\ is one backslash of text
    "\\( in text around a code span": f"Text \\\\( `{ACTIVE_MATH}` \\\\) end.",
    "\\begin in text around a code span": "Other \\begin{matrix} `\\cssId{c}{\\href{https://evil.example/}{z}}"
                                          "\\end{matrix}` end.",
    "\\( and \\) in text": f"Text \\\\({ACTIVE_MATH}\\\\) end.",
    "\\[ and \\] in a code span": f"Code `\\\\[{ACTIVE_MATH}\\\\]` end.",
    "a $ that is no formula": f"价格 $ {ACTIVE_MATH}$ 元。",
    "dollars in text and a formula": f"价格 \\$5 {ACTIVE_MATH} 和 $x$ 元。",
    "a backslash before a formula": f"a \\\\$x$ {ACTIVE_MATH} $y$ b",
    "a link's title": f'[a](#x "\\\\( {ACTIVE_MATH}") 和 [b](#y "\\\\)")，[c](#z "$") 和 [d](#w "{ACTIVE_MATH} $")',
    "a $ in a link's target": f"[a](x$y) {ACTIVE_MATH} [b](z$w)",
    "a fence in a list": f"- 项\n\n  ```text\n  \\\\( {ACTIVE_MATH}\n  ```\n  $y\\\\)$ 后",
    "a fence's info": f"```text \\\\( $\n{ACTIVE_MATH}\n```\n$x\\\\)$",
    "indented code": f"- 项\n\n      $ {ACTIVE_MATH} $",
    "a brace a formula leaves open": f"$a{{$ `{ACTIVE_MATH}` $b$",
    "\\\\ before a brace": f"$\\substack{{a\\\\\\\\}}$ `{ACTIVE_MATH}` $b$",
    "an HTML block": f"<div>\n\\\\( {ACTIVE_MATH} \\\\) $ {ACTIVE_MATH} $\n</div>",
    "\\ref in text": "见 \\\\ref{x} 和 \\\\eqref{y}",
    "a backtick in a formula, then backticks": "$$$$`$$``",
    "a backtick in an inline formula": f"$a`b$ {ACTIVE_MATH} `c$d` e",
    "a backtick in a display formula": f"$$a`b$$ `{ACTIVE_MATH}` $$c$$",
    "a backtick in a math fence": f"```math\na`b\n```\n\n`{ACTIVE_MATH}` $x$",
}


@pytest.mark.parametrize("prose", PROSE.values(), ids=PROSE.keys())
def test_text_and_code_open_no_math(tmp_path, prose):
    for cell in markdown_cells(tmp_path, lesson(prose)):
        assert_math_inert(cell)


def test_the_formulas_are_the_only_math(tmp_path):
    """Every formula of the lesson is taken whole, as written, and nothing else is taken."""
    [first, *_] = markdown_cells(tmp_path, lesson("价格 \\$5，`$x$` 和 $a$、$`b\\\\{`$、$c{$ 和 $$d$$ 之后 \\\\(e\\\\)"))
    assert assert_math_inert(first) == ["$a$", "$b\\\\ {}$", "$c{}$", "$$d$$"]  # \\ { and {} as removeMath needs


def test_text_code_and_titles_show_what_the_lesson_says(tmp_path):
    """Written so that JupyterLab reads no math in them, text, code, titles and fences still show every \\ and $."""
    prose = ("Text \\\\( `\\\\[a\\\\]$` \\begin{x} $ 5$ [t](#u \"\\\\($\") `plain`\n\n"
             "```text \\\\(\nline \\\\( $\n\n  two & <b>\n```\n\n    indented \\\\) $")
    [first, *_] = markdown_cells(tmp_path, lesson(prose))
    shown = visible(first)
    assert "Text \\( \\\\[a\\\\]$ \\begin{x} $ 5$ t plain" in shown
    assert "line \\\\( $\n\n  two & <b>\n" in shown and "indented \\\\) $" in shown
    assert 'title="\\($"' in renderer().render(first)
    assert "`plain`" in first  # a code span with neither \ nor $ stays a code span


def test_a_formula_balances_its_braces_as_removemath_counts_them():
    assert escaping.formula("a{", False) == "$a{}$"
    assert escaping.formula("\\substack{a\\\\}", False) == "$\\substack{a\\\\ }$"
    assert escaping.formula("\\{x", False) == "$\\{x$"  # an escaped brace is no brace
