"""The book's figures: the numbers the book prints, listed once in book_figures.txt beside the lesson, against
which a number the prose marks as the book's (原书) is checked."""

from __future__ import annotations

import os
import re

from .files import read_regular
from .markdown import normalize_newlines
from .model import Document, ProseNumber, UserError, quoted

MAX_BOOK_FIGURES_BYTES = 1 << 20  # a list of a few hundred numbers
BOOK_FIGURES = "book_figures.txt"  # beside MD: the figures the book prints, one a line


def quotes_a_book(doc: Document, marked: int) -> bool:
    """Whether the lesson quotes a book: it marks numbers as the book's, or keeps book_figures.txt. A summary of one
    that does not says nothing of a book."""
    return marked > 0 or (doc.folder / BOOK_FIGURES).is_file()


def read_book_figures(doc: Document) -> dict[str, set[str]]:
    """The figures the book prints, from book_figures.txt beside MD: one number a line, # comments; each as written
    without its sign, with the signs it is listed with ("-", or "" for none and +)."""
    path = doc.folder / BOOK_FIGURES
    shown = os.path.join(os.path.dirname(doc.shown), BOOK_FIGURES)
    raw = read_regular(path, shown, MAX_BOOK_FIGURES_BYTES)  # like MD: a FIFO or /dev/zero is refused, not read
    if raw is None:
        raise UserError(f"{shown}: error: no such file; {doc.shown} marks numbers as the book's (原书), so "
                        f"{BOOK_FIGURES} beside it must list the figures the book prints, one a line")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"{shown}: error: not UTF-8; save the file as UTF-8") from None
    figures: dict[str, set[str]] = {}
    first: dict[str, int] = {}  # each entry as written -> its line
    problems = []
    for number, line in enumerate(normalize_newlines(text).split("\n"), start=1):
        entry = line.partition("#")[0].strip().replace("−", "-")
        if not entry:
            continue
        if not re.fullmatch(r"[+-]?[0-9]+(?:\.[0-9]+)?", entry):
            problems.append(f"{shown}:{number}: error: {quoted(entry)} is not one number written as the book prints "
                            "it (one a line, like 0.6820, -0.25 or 838; # starts a comment)")
        elif entry.lstrip("+") in first:
            problems.append(f"{shown}:{number}: error: {entry} is listed twice (first on line {first[entry.lstrip('+')]})")
        else:
            first[entry.lstrip("+")] = number
            figures.setdefault(entry.lstrip("+-"), set()).add("-" if entry.startswith("-") else "")
    if problems:
        raise UserError(*problems)
    return figures


def book_prints(figures: dict[str, set[str]], number: ProseNumber) -> bool:
    """Whether the book's list holds number with the sign the prose writes (any, where it writes none)."""
    signs = figures.get(number.text, set())
    return bool(signs) and (not number.sign or ("-" if number.sign == "-" else "") in signs)
