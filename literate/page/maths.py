"""Formulas as MathML, converted when the page is built (latex2mathml; no script), through the MathML allow-list."""

from __future__ import annotations

import re

from ..startup import missing
from .markup import MATH_HTML, Markup, escape, sanitized, tag
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
    shown = tag("span", {"class": "formula display" if display else "formula"},
                sanitized(NAMED_SPACE.sub(named_space, converted), MATH_HTML))
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
