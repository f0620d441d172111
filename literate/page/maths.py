"""Formulas as MathML, converted when the page is built (latex2mathml; no script), through the MathML allow-list."""

from __future__ import annotations

import re

from ..startup import missing
from ..markup import MATH_HTML, Markup, Sanitizer, escape, join, start_tag, tag
from .state import Page

try:
    from latex2mathml.converter import convert as latex_to_mathml
except ImportError:  # run outside the project's .venv
    missing("weave.py", "latex2mathml", "use make html (it installs requirements-html.txt into .venv), or pip "
            "install -r requirements-html.txt")


def mathml(page: Page, latex: str, display: bool, line: int) -> Markup:
    """The formula as MathML, rebuilt through the MathML allow-list (latex2mathml copies \\text{...} raw and
    turns \\href into an href): no link, no style, its text escaped."""
    if (latex, display) in page.formulas:  # a formula written many times is converted once
        return page.formulas[latex, display]
    try:
        converted = latex_to_mathml(latex.strip(), display="block" if display else "inline")
    except Exception as error:  # latex2mathml raises many kinds (a RecursionError too) for what it cannot read
        page.problems.append(f"{page.doc.where(line)}: error: cannot convert the formula {shorten(latex.strip())} "
                             f"to MathML ({type(error).__name__}: {shorten(str(error))}); check its braces "
                             "and commands")
        return escape(latex)
    spaced = MathSpacing()
    spaced.feed(NAMED_SPACE.sub(named_space, converted))
    spaced.close()
    shown = tag("span", {"class": "formula display" if display else "formula"}, join(spaced.closed()))
    page.formulas[latex, display] = shown
    return shown


# MathML 3's named spaces (\\! is width="negativethinmathspace"), which MathML Core, and so Chromium, does not read
NAMED_SPACE = re.compile(r'"(negative)?(veryverythin|verythin|thin|medium|thick|verythick|veryverythick)mathspace"')
SPACE_EIGHTEENTHS = {"veryverythin": 1, "verythin": 2, "thin": 3, "medium": 4, "thick": 5, "verythick": 6,
                     "veryverythick": 7}


def named_space(match: re.Match) -> str:
    return f'"{"-" if match[1] else ""}{SPACE_EIGHTEENTHS[match[2]] / 18:.4f}em"'


def shorten(text: str, width: int = 60) -> str:
    """A piece of the input as a message quotes it: repr, at most about width characters."""
    return repr(text if len(text) <= width else text[: width - 1] + "…")


# A formula's spacing is bounded, so that no formula can make the page wider than a screen (\hspace{100cm}, \quad a
# thousand times, \phantom of a long text) nor pull itself over the text before it (\kern-50em): each space at most
# MAX_SPACE wide (\qquad) and MIN_SPACE back; all its spaces, blanks and invisible (phantom) characters together at
# most SPACE_BUDGET (ems), its spaces back at most -MIN_SPACE, and none before its first visible character or after
# its last (it would pull that character over the text beside the formula); a size (\Huge, a big bracket) at most
# MAX_SCALE times its surroundings' text, also nested; a fraction's rule at most MAX_RULE thick (\above 30em).
# Nothing visible is drawn away from its box: an mpadded that holds something visible loses the attributes that
# would move it out of its box (\raise, \lower, \smash, \mathllap, \mathrlap, \moveleft); one that holds only
# phantoms (\vphantom, \mathstrut) keeps them. The page's style clips what is left (style.css: math).
MAX_SPACE, MIN_SPACE, SPACE_BUDGET, MAX_SCALE, MAX_RULE = 2.0, -1.0, 12.0, 3.0, 0.25
LENGTH = re.compile(r"(-?[0-9]*\.?[0-9]+)(em|ex|mu|pt|pc|px|in|cm|mm)?")
EMS = {"em": 1, "ex": 0.5, "mu": 1 / 18, "pt": 1 / 12, "pc": 1, "px": 1 / 16, "in": 6, "cm": 6 / 2.54, "mm": 0.6 / 2.54}
SPACES = {"width", "lspace", "rspace"}  # across the line
EXTENTS = {"height", "depth", "voffset"}  # up and down
SIZES = {"minsize", "maxsize", "mathsize"}
PADDED = {"width", "height", "depth", "lspace", "voffset"}  # mpadded's, all of which can move what it holds
BLANKS = " \u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"


def ems(value: str) -> float | None:
    """A MathML length in ems (mu, MathML's unit for TeX's \\mkern, which CSS does not know, too); None: not one
    (a percentage, a word, a number without unit that is not 0)."""
    match = LENGTH.fullmatch(value.strip())
    if not match or (match[2] is None and float(match[1]) != 0):
        return None
    return float(match[1]) * EMS[match[2] or "em"]


def written(size: float) -> str:
    return f"{size:.4f}em" if size else "0"


class MathSpacing(Sanitizer):
    """The MathML allow-list (Sanitizer, MATH_HTML) with the formula's spacing bounded as above; a length that is
    kept is written as it was. (A class because Sanitizer is one.)"""

    def __init__(self):
        super().__init__(MATH_HTML)
        self.room, self.back = SPACE_BUDGET, -MIN_SPACE
        self.scales: list[tuple[str, float]] = []  # the elements open, and how much each enlarges its text
        self.phantoms = 0
        self.visible = 0  # visible characters so far (outside phantoms, not blanks)
        self.padded: list[tuple[int, int, dict]] = []  # open mpadded: where its tag is, self.visible then, its geometry
        self.backs: list[tuple[int, int, dict]] = []  # spaces back: where, self.visible then, the tag without width

    def handle_starttag(self, name, attributes):
        kept, scale = [], 1.0
        for key, value in attributes:
            if name == "mspace" and key == "width" and not self.visible and (ems(value or "") or 0) < 0:
                continue  # a space back before the first visible character: nothing to pull back over
            if value is not None and key in SPACES | EXTENTS | SIZES | {"linethickness"}:
                value, scale = self.bounded(key, value, scale)
                if value is None:
                    continue
            kept.append((key, value))
        geometry = dict(kept) if name == "mpadded" else {}
        if name == "mspace" and (ems(dict(kept).get("width", "0")) or 0) < 0:  # a space back: see closed()
            self.backs.append((len(self.out), self.visible, {k: v for k, v in kept if k != "width"}))
        self.phantoms += name == "mphantom"
        self.scales.append((name, scale))
        super().handle_starttag(name, [(k, v) for k, v in kept if not (name == "mpadded" and k in PADDED)])
        if name == "mpadded":
            self.padded.append((len(self.out) - 1, self.visible, geometry))

    def handle_endtag(self, name):
        while self.scales:  # closes the element on top (and any left open inside it)
            opened, _ = self.scales.pop()
            self.phantoms -= opened == "mphantom"
            if opened == "mpadded" and self.padded:
                self.padded_closed(*self.padded.pop())
            if opened == name:
                break
        super().handle_endtag(name)

    def padded_closed(self, index: int, visible_then: int, geometry: dict) -> None:
        """An mpadded that held nothing visible gets its geometry back."""
        if self.visible == visible_then and set(geometry) & PADDED:
            self.out[index] = start_tag("mpadded", geometry)

    def closed(self) -> list:
        """The output, each space back after the last visible character without its width."""
        for index, visible_then, attributes in self.backs:
            if visible_then == self.visible:
                self.out[index] = start_tag("mspace", attributes)
        return super().closed()

    def handle_data(self, data):
        """Blanks, and all that a phantom holds, spend the formula's room (half an em, an em each)."""
        kept = []
        for character in data:
            cost = 1.0 if self.phantoms else 0.5 if character in BLANKS else 0.0
            if cost <= self.room:
                self.room -= cost
                kept.append(character)
                self.visible += not self.phantoms and character not in BLANKS
        super().handle_data("".join(kept))

    def bounded(self, key: str, value: str, scale: float) -> tuple[str | None, float]:
        """The attribute's value as kept (None: dropped), and the scale of the element's text."""
        size = ems(value)
        if size is None:
            return None, scale
        if value.strip().endswith("mu"):  # CSS has no mu: written in ems, or the browser draws no space at all
            value = written(size)
        if key in SIZES:
            enlarged = 1.0
            for _, factor in self.scales:
                enlarged *= factor
            bound = max(1.0, MAX_SCALE / enlarged)
            kept = min(size, bound) if key != "minsize" else min(size, MAX_SCALE)
            return (value if kept == size else written(kept)), (max(kept, 1.0) if key == "mathsize" else scale)
        if key == "linethickness":
            kept = min(max(size, 0.0), MAX_RULE)
            return (value if kept == size else written(kept)), scale
        kept = min(max(size, MIN_SPACE), MAX_SPACE)
        if key in SPACES:  # spent from the room across the line, or from the room back
            kept = min(kept, self.room) if kept >= 0 else max(kept, -self.back)
            self.room -= max(kept, 0.0)
            self.back += min(kept, 0.0)
        return (value if kept == size else written(kept)), scale
