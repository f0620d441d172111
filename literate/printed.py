"""The numbers a transcript prints, indexed once, for the questions the prose check asks of each prose number: is it
printed as written, which printed number rounds to it, which printed numbers are nearest (for the message). Every
question is a bisection in lists sorted once, so checking n numbers against m printed ones takes about
(n + m) log m steps, however many of them fail."""

from __future__ import annotations

import bisect
import decimal
import itertools

from .inline import NUMBER

MAX_SUGGESTED = 3  # numbers named after "nearest:"
MAX_SHORTER_PLACES = 12  # for "nearest:", the same value rounded to at most this many decimals is looked for
# Characters a reader takes for a minus: hyphen-minus, minus sign, full-width and small hyphen-minus, the hyphens
# and dashes (U+2010-2013: a typeset minus is often one of them), the superscript and subscript minus, the modifier
# minus and the heavy minus sign; and for a plus. Not the em dashes (— ⸺): Chinese punctuation (——), no sign.
MINUS, PLUS = "-−－﹣‐‑‒–⁻₋˗➖", "+＋⁺₊➕"
SPACES = " \u00a0\u2009\u202f"  # the one space a sign may stand before its number: also no-break and thin ones
JOINING = ")]}_"  # after these (and an ASCII letter or digit) a hyphen joins a range or a name: 1-3, x-1, f(x)-1


def sign_before(text: str, start: int, unseen: str = "") -> str:
    """The sign written just before the number at start, or one space before it: "-", "+" or "" (none). A sign
    right after an ASCII letter, a digit or a closing bracket joins a range or a name (1-3, x-1), and one spaced
    like an operator after them is a difference (1 − 0.5): no sign. After a Chinese character it is one
    (变化−0.75), and so is one after a space that touches its number (0.08 -0.05, as programs print). ±: a spread.
    unseen: characters between the sign and its number that the reader does not see as such (in the prose:
    emphasis marks, a line break, what stands for a comment or a tag), passed over: **−**0.75 is −0.75."""
    at = start - 1
    while at >= 0 and text[at] in unseen:
        at -= 1
    spaced = at >= 1 and text[at] in SPACES and text[at - 1] in MINUS + PLUS  # − 0.75: one space between
    at -= spaced
    if at < 0 or text[at] not in MINUS + PLUS:
        return ""
    before = (text[:at].rstrip(SPACES) if spaced else text[:at])[-1:]  # the operand a spaced operator would follow
    if (before.isascii() and before.isalnum()) or (before and before in JOINING):
        return ""
    return "-" if text[at] in MINUS else "+"


def brief(number: str, width: int = 40) -> str:
    """A number as a message shows it: whole up to width characters; else its first and last digits and its length,
    so that a line stays readable (a 5,000-digit number in the prose gives a short line that still tells it apart)."""
    if len(number) <= width:
        return number
    return f"{number[:20]}…{number[-12:]} ({len(number):,} characters)"


def value(text: str) -> decimal.Decimal:
    """A number as written (inline.NUMBER: 0.4102, 1,000) as a value."""
    return decimal.Decimal(text.replace(",", ""))


def places(text: str) -> int:
    return len(text.partition(".")[2])


def rounded(text: str, to: int) -> set[str]:
    """text rounded to `to` decimals, as a person rounds (half up) and as printf does (half to even)."""
    exponent = decimal.Decimal(1).scaleb(-to)
    with decimal.localcontext() as context:
        context.prec = len(text) + 2
        return {str(value(text).quantize(exponent, rounding=mode))
                for mode in (decimal.ROUND_HALF_UP, decimal.ROUND_HALF_EVEN)}


class Printed:
    """The numbers one transcript (or some of its parts) prints, each as written (NUMBER: no sign; the signs they
    are printed with kept beside), sorted by value
    once; and by value within each count of decimals, for the nearest ones. (A class to keep the sorted lists
    with the set they come from.)"""

    def __init__(self, numbers: set[str], negative: set[str] = frozenset(), nonnegative: set[str] | None = None):
        self.numbers = numbers
        self.negative = negative  # those printed with a minus at least once
        self.nonnegative = numbers if nonnegative is None else nonnegative  # those printed without one at least once
        self.sorted = sorted((value(number), number) for number in numbers)
        self.values = [found for found, _ in self.sorted]
        self.by_places: dict[int, list[tuple[decimal.Decimal, str]]] = {}
        for found, number in self.sorted:
            self.by_places.setdefault(places(number), []).append((found, number))

    @classmethod
    def of(cls, texts) -> Printed:
        signed = [(match[0], sign_before(text, match.start())) for text in texts for match in NUMBER.finditer(text)]
        return cls({number for number, _ in signed}, {number for number, sign in signed if sign == "-"},
                   {number for number, sign in signed if sign != "-"})

    def with_sign(self, number: str, sign: str) -> bool:
        """Whether number (printed) is printed with this sign: any, for a number written without one."""
        return not sign or number in (self.negative if sign == "-" else self.nonnegative)

    def rounds_to(self, number: str, count: int = 1, sign: str = "") -> list[str]:
        """Up to count printed numbers with more decimals that round to number (0.4102 for 0.41). Those lie within
        half a unit of number's last digit: a bisection finds where, then each is rounded to be sure."""
        to = places(number)
        if not to:
            return []
        half = decimal.Decimal(5).scaleb(-to - 1)
        with decimal.localcontext() as context:
            context.prec = len(number) + 4
            low, high = value(number) - half, value(number) + half
        start, end = bisect.bisect_left(self.values, low), bisect.bisect_right(self.values, high)
        found = (self.sorted[index][1] for index in range(start, end)
                 if places(self.sorted[index][1]) > to and number in rounded(self.sorted[index][1], to)
                 and self.with_sign(self.sorted[index][1], sign))
        return list(itertools.islice(found, count))

    def nearest(self, number: str) -> list[str]:
        """Up to MAX_SUGGESTED printed numbers like number: first the same value with other decimals (one of the
        two rounded, to at least 2 decimals, is the other), then those with as many decimals, closest first; if
        there are none of those, the closest of any."""
        to = places(number)
        first = []
        if to >= 2:
            shorter = {text for keep in range(2, min(to, MAX_SHORTER_PLACES + 1)) for text in rounded(number, keep)}
            first = sorted({*(text for text in shorter if text in self.numbers),
                            *self.rounds_to(number, MAX_SUGGESTED)})
        near = self.closest(number, self.by_places.get(to, []), MAX_SUGGESTED)
        if not first and not near:  # none with as many decimals: the closest of any
            near = self.closest(number, self.sorted, MAX_SUGGESTED)
        return (first + [text for text in near if text not in first])[:MAX_SUGGESTED]

    @staticmethod
    def closest(number: str, candidates: list[tuple[decimal.Decimal, str]], count: int) -> list[str]:
        """The count candidates (sorted by value) closest to number, ties by their text: the window of count on
        each side of where number would stand holds them."""
        at = bisect.bisect_left(candidates, (value(number), ""))
        window = candidates[max(0, at - count) : at + count]
        with decimal.localcontext() as context:
            context.prec = max((len(text) for _, text in window), default=1) + len(number) + 2
            ordered = sorted(window, key=lambda pair: (abs(pair[0] - value(number)), pair[1]))
        return [text for _, text in ordered[:count]]

