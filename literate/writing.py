"""How a number the reader sees must be written for the check to read it as that number: the refusals. Each finds a
way the prose check (inline.NUMBER over the flattened text) and the reader would read a number differently, so
that a number shown is always the number checked (or is no number to either)."""

from __future__ import annotations

import bisect
import re
import unicodedata

from .characters import code_point, reorders, shows_nothing, unseen
from .inline import SEPARATOR, WHOLE

DIGIT_RUN = re.compile(r"\d+(?:\.\d+)*")  # \d: 0-9, full-width ０-９ and the digits of other scripts
SCRIPT_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉"  # not \d: superscript and subscript digits are no decimal digits
SCRIPT_RUN = re.compile(rf"[0-9.]*[{SCRIPT_DIGITS}][0-9.{SCRIPT_DIGITS}]*")
# between two digits (a decimal point or thousands comma on either side allowed): a run that is none of those
BETWEEN_DIGITS = re.compile(r"(?<=[0-9])[.,]?([^0-9., \t]+)(?=[.,]?[0-9])")
MARKS = {"Mn", "Me"}  # combining marks: over a digit, they change how it looks
NUMBER_LIKE = re.compile(rf"{WHOLE}(?:\.[0-9]+)?")
BARE_DECIMAL = re.compile(r"(?<![A-Za-z0-9_.])\.[0-9]+(?![A-Za-z0-9_]|\.[0-9])")  # .93: NUMBER needs a digit first
MAX_SHOWN = 40  # characters of a number quoted in a message


def broken_numbers(text: str, html: list[tuple[int, str]], marks: list[int],
                   codes: list[tuple[int, str]] = ()) -> list[tuple[int, str]]:
    """(offset, why) for each number the reader sees whole but the prose check would read otherwise, in a text
    flattened as inline.inline_parts flattens it (html, marks, codes: what it says of the text's inline HTML,
    emphasis and links, and code spans)."""
    found = other_digits(text) + bare_decimals(text) + hidden_between_digits(text, dict(html)) + unseen_touching(text)
    return sorted(found + split_by_marks(text, marks) + split_by_code(text, codes))


def other_digits(text: str) -> list[tuple[int, str]]:
    """Digits other than 0-9 (full-width, Devanagari, ...), and superscript or subscript digits that read as a number
    (0.⁷⁷, ₀.₇₇, ¹⁰⁰⁰, 10²): only a run of them right after a letter or a closing bracket is an exponent or an index
    (x², T₁₀, (a+b)²), which no reader takes for a number."""
    found = []
    for match in DIGIT_RUN.finditer(text):
        if not match[0].isascii():
            ascii_digits = "".join(str(unicodedata.digit(c)) if c != "." else c for c in match[0])
            names = sorted({unicodedata.name(c, "a digit") for c in match[0] if c != "." and not c.isascii()})
            found.append((match.start(), f"{match[0]} is written with other digits than 0-9 ({', '.join(names[:2])}"
                          f"{', ...' if len(names) > 2 else ''}), which the check does not read; write {ascii_digits}"))
    for match in SCRIPT_RUN.finditer(text):
        before = text[match.start() - 1] if match.start() else ""
        if match[0][0] in SCRIPT_DIGITS and "." not in match[0] and match[0].strip(SCRIPT_DIGITS) == "" \
                and before and (before.isalpha() or before in ")]}"):
            continue
        found.append((match.start(), f"{match[0][:MAX_SHOWN]} is written with superscript or subscript digits, which "
                      "the check does not read as the number the reader sees; write the number with the digits 0-9 "
                      "(an exponent or index stands right after a letter: x², T₁)"))
    return found


def bare_decimals(text: str) -> list[tuple[int, str]]:
    return [(match.start(), f"{match[0]} has no digit before its decimal point, so the check would not read it as a "
             f"number; write 0{match[0]}") for match in BARE_DECIMAL.finditer(text)]


def hidden_between_digits(text: str, tags: dict[int, str]) -> list[tuple[int, str]]:
    """A character that shows nothing (characters.py), a combining mark or inline HTML between the digits of a
    number: the reader sees one number, the check would read two."""
    found = []
    for match in BETWEEN_DIGITS.finditer(text):
        run = match[1]
        hidden = [(offset, character) for offset, character in enumerate(run, match.start(1))
                  if character != "\n" and (offset in tags or shows_nothing(character)
                                             or unicodedata.category(character) in MARKS)]
        if hidden and len(hidden) == len(run) - run.count("\n"):
            what = " and ".join(sorted({f"inline HTML {tags[offset].strip()[:30]!r}" if offset in tags
                                        else f"U+{ord(c):04X} {unicodedata.name(c, '')}".strip()
                                        for offset, c in hidden}))
            shown = around(text, match.start(), match.end(1), match[0][: match.start(1) - match.start()])
            found.append((match.start(), f"{shown} has {what} between its digits, which the reader does not see "
                          "and the check would read as two numbers; remove it"))
    return found


def unseen_touching(text: str) -> list[tuple[int, str]]:
    """A character that shows nothing right before or after a number's digits (through a run of such characters):
    a bidi control there turns the digits around on the screen (52.0 shows as 0.25), and the others hide where the
    number begins or ends. A run between two digits is hidden_between_digits's to report."""
    runs: list[list[int]] = []  # [start, end] of each run of such characters
    for offset, _ in unseen(text):
        if runs and runs[-1][1] == offset:
            runs[-1][1] = offset + 1
        else:
            runs.append([offset, offset + 1])
    found = []
    for start, end in runs:
        before = re.search(r"[0-9][.,]?$", text[max(0, start - 2) : start])
        after = re.match(r"[.,]?[0-9]", text[end : end + 2])
        if before and after:
            continue
        if (before and not before[0][1:]) or (after and not after[0][:-1]):  # a digit right beside the run
            found.append((start, f"{code_point(text[start])} stands next to the number "
                          f"{around(text, start, end, '')}: it shows nothing, but it can change what the reader sees "
                          "(a bidi control turns the digits around) while the check reads the digits as written; "
                          "remove it"))
    return found


def split_by_marks(text: str, marks: list[int]) -> list[tuple[int, str]]:
    found = []
    for match in NUMBER_LIKE.finditer(text):
        inside = bisect.bisect_right(marks, match.start())
        if inside < len(marks) and marks[inside] < match.end():
            found.append((match.start(), f"{match[0]} is split by emphasis, strikethrough or a link, which the "
                          "page would show as two numbers; put the markup around the whole number"))
    return found


def split_by_code(text: str, codes: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """A code span that continues the digits of the text beside it (0`.7`7, `0.7`7, 0.`77`): the reader sees one
    number, the check reads none of it (a code span is no prose)."""
    found = []
    for offset, code in codes:
        after = offset + 1 + code.count("\n")  # the code span's separator in the flat text (inline.inline_parts)
        left = re.search(r"[0-9](\.?)$", text[max(0, offset - 2) : offset])
        right = re.match(r"\.?[0-9]", text[after : after + 2])
        joins_left = left and (re.match(r"[0-9]", code) or (not left[1] and re.match(r"\.[0-9]", code)))
        joins_right = right and (re.search(r"[0-9]$", code) or (re.search(r"[0-9]\.$", code) and right[0][0] != "."))
        if joins_left or joins_right:
            shown = around(text, offset, after, code)
            found.append((offset, f"{shown} is split by the code span `{code[:MAX_SHOWN]}`, which the reader sees as "
                          "one number and the check does not read; put the whole number inside the code span or "
                          "outside it"))
    return found


def around(text: str, start: int, end: int, middle: str) -> str:
    """A number as the reader sees it, for a message: the digits and points before start, middle, those after end."""
    before = re.search(r"[0-9.,]{0,%d}$" % MAX_SHOWN, text[max(0, start - MAX_SHOWN) : start])[0]
    after = re.match(r"[0-9.,]{0,%d}" % MAX_SHOWN, text[end : end + MAX_SHOWN])[0]
    return (before + middle + after).replace(SEPARATOR, "")


def reordered(source: str) -> tuple[int, str] | None:
    """(offset, why) of the first bidi control (an embedding, override or isolate) in a text's source that numbers
    follow: it reorders everything after it up to the end of the paragraph, digits included, wherever it stands
    (in a code span or a tag too), so that the reader may see 0.25 where the check reads 52.0. None: there is
    none."""
    if source.isascii():
        return None
    last_digit = max(source.rfind(digit) for digit in "0123456789")
    for offset, character in enumerate(source[: max(last_digit, 0)]):
        if reorders(character):
            return offset, (f"{code_point(character)} reorders the text after it, numbers included: the reader may "
                            "see other numbers than the ones checked; remove it")
    return None
