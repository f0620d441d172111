"""What the lesson declares for the tools, so that no tool knows this lesson: one HTML comment, invisible on
GitHub and dropped from the page and the notebook, that opens with `<!-- literate` on a line of its own and
holds one declaration a line, `key: value` (a line starting with # is a comment):

  <!-- literate
  parts: main # 第 N 段
  update: generated/attention.py make update
  heatmap: 输出 输入 图例 percent anti-diagonal
  curves: 横轴 纵轴 曲线
  figures: figures
  notebook-runs: 内核用 CPU 约 33 秒。
  -->

A key the tools do not know, a value that cannot be read, or a second block, is an input error (exit 2). A
lesson that declares nothing gets no part cells in its notebook, no heatmaps on its page, no figures drawn, and
messages that name
`python tangle.py update` to record a transcript. Each key, and who reads it:"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .language import LANGUAGES

KEYS = {
    "parts": "FUNCTION MARK: the notebook prints part N of the first program's transcript with the lines of "
             "FUNCTION() from the comment MARK (N standing for the part's number) to the next (notebook)",
    "update": "PROGRAM COMMAND: the command that records PROGRAM's transcript, which messages name (tangle.py); a "
              "plain command: words, no shell syntax",
    "heatmap": "ROWS COLUMNS LEGEND [percent] [anti-diagonal|diagonal]: a matrix printed as a header of column "
               "numbers and rows `ROWS 1  0.10 ...` (weights; with percent, `ROWS 1  10 ...`), side by side or alone, "
               "is drawn as a heatmap, with the same matrix drawn in characters below it up to the line starting "
               "with LEGEND; its axes are named ROWS and COLUMNS; anti-diagonal (diagonal) outlines the cells a "
               "reversal (a copy) needs (the page, the figures; drawing.py says how it is printed)",
    "curves": "X Y SERIES: a table of checkpoints printed under three lines `X：…`, `Y：a、b` and `SERIES：p、q` is "
              "drawn as curves, one panel per quantity (the figures; drawing.py says how it is printed)",
    "figures": "FOLDER: every image of the lesson in FOLDER is a figure the tools draw from the transcript part its "
               "paragraph links to (check says when one is not what that part draws; update redraws it; the page "
               "and the notebook show it)",
    "language": "zh|en: the language of the words the tools write around the lesson's own (the page's, the "
                "notebook's, the figures') and of the prose rules; without it, the prose's (language.py)",
    "notebook-runs": "TEXT: what running the whole notebook takes, said in its first cell (notebook)",
    "notebook-names": "TEXT: the names the main line uses before the lesson defines them, said there (notebook)",
    "notebook-try": "TEXT: which cells are most worth changing, said there (notebook)",
}
__doc__ += "".join(f"\n  {key}: {what}" for key, what in KEYS.items())
OPENING = "<!-- literate"
LINE = re.compile(r"([a-z-]+):[ \t]*(.*)")
# a command that a message may tell the reader to run: words, no shell syntax (; | & $ ` < > quotes, globs, ~)
PLAIN_WORD = r"[\w./=:+,@%-]+"
PLAIN_COMMAND = re.compile(rf"{PLAIN_WORD}(?: {PLAIN_WORD})*")


@dataclass(frozen=True)
class Parts:
    """Which lines print each part of the transcript: those of function() from each comment like mark."""

    function: str
    mark: re.Pattern  # its group 1: the part's number
    shown: str  # the mark as declared (# 第 N 段)

    def numbered(self, number: int) -> str:
        return " ".join(str(number) if word == "N" else word for word in self.shown.split())


@dataclass(frozen=True)
class Heatmap:
    rows: str  # the label of a matrix's rows, as the program prints it (输出 1 ...)
    columns: str
    legend: str  # the start of the line after the matrix drawn in characters
    percent: bool = False  # each weight printed in percent (10 for 0.10)
    mark: str | None = None  # the cells outlined: "anti-diagonal", "diagonal" or None


HEATMAP_OPTIONS = ("percent", "anti-diagonal", "diagonal")


@dataclass(frozen=True)
class Curves:
    x: str  # the word that opens the line naming the first column (横轴)
    y: str  # ... the line naming the quantities (纵轴)
    series: str  # ... the line naming the curves (曲线)


@dataclass
class Declarations:
    """What the lesson declares (see the module's docstring); text: the notebook-* texts by key."""

    parts: Parts | None = None
    update: dict[str, str] | None = None  # program -> the command that records its transcript
    heatmap: Heatmap | None = None
    curves: Curves | None = None
    figures: str | None = None  # the folder of the figures the tools draw, relative to the lesson's folder
    language: str | None = None  # zh or en, as declared
    text: dict[str, str] | None = None
    lines: dict[str, int] | None = None  # key -> the line it is declared on

    def texts(self):
        """(key, text, line) of each notebook-* text."""
        return [(key, text, (self.lines or {}).get(key, 0)) for key, text in (self.text or {}).items()]


def is_declaration(html: str) -> bool:
    """Whether an HTML block is the lesson's declarations."""
    return html.lstrip(" ").startswith(OPENING + "\n") or html.strip() == OPENING + " -->"


def read_declarations(blocks: list[tuple[int, str]]) -> tuple[Declarations, list[tuple[int, str]]]:
    """The declarations in these HTML blocks ((line of the block, its text) of those is_declaration found),
    and the problems (line, what) found in them."""
    found, problems = Declarations(update={}, text={}, lines={}), []
    if len(blocks) > 1:
        problems += [(line, f"a second {OPENING} block (the first is at line {blocks[0][0]}): declare "
                            "everything in one") for line, _ in blocks[1:]]
    for start, html in blocks[:1]:
        for offset, text in enumerate(html.split("\n")[1:], 1):
            text = text.strip()
            if not text or text.startswith("#") or text == "-->":
                continue
            match = LINE.fullmatch(text)
            line = start + offset
            if not match or match[1] not in KEYS:
                problems.append((line, f"cannot read the declaration {text[:60]!r}: write key: value, the key one "
                                       f"of {', '.join(KEYS)} (see docs/tangle.md)"))
                continue
            key, value = match[1], match[2].strip()
            found.lines.setdefault(key, line)
            words = value.split()
            if key == "parts" and len(words) >= 2 and "N" in words[1:] and found.parts is None:
                function, mark = words[0], " ".join(words[1:])
                pattern = r"\s*" + r"\s+".join(re.escape(word) if word != "N" else r"(\d+)" for word in mark.split())
                found.parts = Parts(function, re.compile(pattern), mark)
            elif key == "update" and len(words) >= 2 and not PLAIN_COMMAND.fullmatch(" ".join(words[1:])):
                shell = sorted(set(re.sub(PLAIN_WORD, "", " ".join(words[1:])).replace(" ", "")))
                problems.append((line, f"update: the command to record {words[0][:60]!r} holds "
                                       f"{' '.join(shell)[:40]}: messages tell readers to run it, so it must be a "
                                       "plain command (words of letters, digits and . / _ - = : + , @ %), such as "
                                       "make update"))
            elif key == "update" and len(words) >= 2 and words[0] not in found.update:
                found.update[words[0]] = " ".join(words[1:])
            elif (key == "heatmap" and 3 <= len(words) <= 5 and found.heatmap is None
                  and all(word in HEATMAP_OPTIONS for word in words[3:])
                  and sum(word in ("anti-diagonal", "diagonal") for word in words[3:]) <= 1):
                mark = next((word for word in words[3:] if word != "percent"), None)
                found.heatmap = Heatmap(*words[:3], percent="percent" in words[3:], mark=mark)
            elif key == "curves" and len(words) == 3 and found.curves is None:
                found.curves = Curves(*words)
            elif (key == "figures" and len(words) == 1 and found.figures is None
                  and re.fullmatch(r"[\w.-]+(?:/[\w.-]+)*", words[0]) and ".." not in words[0].split("/")
                  and not words[0].startswith(".")):
                found.figures = words[0]
            elif key == "language" and value in LANGUAGES and found.language is None:
                found.language = value
            elif key.startswith("notebook-") and value and key not in found.text:
                found.text[key] = value
            else:
                problems.append((line, f"cannot read {key}: {value[:60]!r} (once, as {KEYS[key].split(':')[0]})"))
    return found, problems
