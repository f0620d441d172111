"""Number links: every prose number that the check verifies, linked to the number itself on the transcript line
that prints it (of several, the line whose words best match its sentence, then its paragraph)."""

from __future__ import annotations

from .. import inline, model, prose
from .columns import columns
from ..markup import Markup, tag
from .state import MAX_CANDIDATES, Page
from .words import plain

TOOLTIP_QUOTE = 120  # characters of a long transcript line that a number's tooltip quotes


def best_line(page: Page, number: model.ProseNumber, lines: list[int], contexts: list[tuple[tuple, str]]) -> int:
    """Of the transcript lines that print the number (the first MAX_CANDIDATES of them), the one whose words
    best match its sentence, then its paragraph (or table row): shared pairs of characters, and the other
    numbers there, count; the first line wins a tie. contexts: (cache key, text) of the sentence and the
    paragraph, each read once however many numbers it holds."""
    if len(lines) == 1:  # the line it quotes is known (or only one prints it)
        return lines[0]
    known = []  # each context as the index of its text among those read (equal paragraphs: one index)
    for key, text in contexts:
        if key not in page.links.context_index:
            value = text()
            if value not in page.links.text_index:
                page.links.text_index[value] = len(page.links.texts)
                page.links.texts.append(value)
            page.links.context_index[key] = page.links.text_index[value]
        known.append(page.links.context_index[key])
    memo = (number.text, number.program, *known)
    if memo not in page.links.best:
        page.links.best[memo] = max(lines[:MAX_CANDIDATES], key=line_scorer(page, number, known))
    return page.links.best[memo]


def line_scorer(page: Page, number: model.ProseNumber, contexts: list[int]):
    """The score of a transcript line for a number read in these contexts (indexes of their texts)."""
    scorers = []
    for index in contexts:
        if index not in page.links.context_words:
            page.links.context_words[index] = inline.words(page.links.texts[index])
        scorers.append(page.links.context_words[index])

    def score(line: int) -> tuple:
        """Each intersection walks the smaller set, the line's: a paragraph of thousands of numbers is never
        copied per number (the number itself, also printed there, is taken off the count instead)."""
        if line not in page.links.line_words:
            page.links.line_words[line] = inline.words(page.transcript_text[line])
        pairs, printed = page.links.line_words[line]
        itself = number.text in printed
        return (*(len(pairs & want) + 2 * (len(printed & others) - (itself and number.text in others))
                  for want, others in scorers), -line)
    return score


def numbers_by_inline(sources: list[tuple[model.ProseNumber, list[int]]]):
    """The prose numbers of each text (by its blocks.Inline key), by the offset of their first digit there."""
    found: dict[int, dict[int, tuple[model.ProseNumber, list[int]]]] = {}
    for number, lines in sources:
        found.setdefault(number.inline, {})[number.offset] = (number, lines)
    return found


def is_count(number: model.ProseNumber) -> bool:
    """A single digit or a whole number before a measure word (7 个, 160 轮): checked against the parts it quotes,
    but such small numbers stand on many lines there, so the page does not claim one line for it."""
    return "." not in number.text and (len(number.text) == 1 or number.setting)


def number_html(page: Page, number: model.ProseNumber, lines: list[int], contexts) -> Markup:
    if number.book:
        return tag("span", {"class": "num book", "title": plain(page, "number-book", file=prose.BOOK_FIGURES)},
                   number.text)
    if number.declared:
        title = (plain(page, "number-setting", program=number.program, name=number.setting_name)
                 if number.setting_name else plain(page, "number-declared", program=number.program))
        return tag("span", {"class": "num setting", "title": title}, number.text)
    if number.stated:
        return tag("span", {"class": "num setting", "title": plain(page, "number-stated", stated=number.stated)},
                   number.text)
    if lines and is_count(number) and not number.quotes:
        return tag("span", {"class": "num count", "title": plain(page, "number-count", program=number.program)},
                   number.text)
    if not lines:
        why = (plain(page, "number-missing", program=number.program) if number.program
               else plain(page, "number-no-output", lesson=page.doc.path.name))
        return tag("span", {"class": "num unverified", "title": why}, number.text)
    line = best_line(page, number, lines, contexts)
    page.linked.append((number, line))
    target = number.printed or number.text  # a rounding (0.41) links to the number it rounds (0.4102)
    rounded = plain(page, "number-rounded", number=number.text) if number.printed else ""
    title = plain(page, "number-quoted", program=number.program, lesson=page.doc.path.name, line=line, rounded=rounded,
                  quoted=quoted(page, line, target))
    return tag("a", {"class": "num", "href": f"#{number_anchor(line, target)}", "title": title}, number.text)


def quoted(page: Page, line: int, number: str) -> str:
    """What a number's tooltip quotes of its transcript line: the line, or of a long one (a tooltip per number,
    each quoting all of it, would make the page grow as the square of the line) the TOOLTIP_QUOTE characters
    around the number's first place there (where its link lands), marked … where cut."""
    text = page.transcript_text[line].strip()
    if len(text) <= TOOLTIP_QUOTE:
        return text
    if line not in page.links.number_places:  # each long line read once, however many numbers link to it
        places = page.links.number_places[line] = {}
        for match in inline.NUMBER.finditer(text):
            places.setdefault(match[0], match.start())
    at = page.links.number_places[line].get(number, 0)
    start = min(max(0, at - TOOLTIP_QUOTE // 2), len(text) - TOOLTIP_QUOTE)
    end = start + TOOLTIP_QUOTE
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def number_anchor(line: int, text: str) -> str:
    """The anchor of a number printed on a transcript line: L<line>-<number> (its first time on the line)."""
    return f"L{line}-{text}"


def link_targets(sources) -> dict[int, set[str]]:
    """MD line -> the numbers that a prose number may link to there: each line best_line may choose."""
    targets: dict[int, set[str]] = {}
    for number, lines in sources:
        for line in lines[:MAX_CANDIDATES]:
            targets.setdefault(line, set()).add(number.printed or number.text)
    return targets


def transcript_line(page: Page, line: int, text: str) -> Markup:
    """One output line, anchored L<line>; each number a prose link may land on in a box of its own, anchored
    too, so that the link highlights the number itself."""
    wanted, out, position = set(page.targets.get(line, ())), [], 0
    for match in inline.NUMBER.finditer(text) if wanted else ():
        if match[0] in wanted:
            wanted.discard(match[0])
            out += [columns(text[position : match.start()], page.widths),
                    tag("span", {"class": "n", "id": number_anchor(line, match[0])}, match[0])]
            position = match.end()
    out += [columns(text[position:], page.widths), "\n"]
    return tag("span", {"class": "l", "id": f"L{line}"}, *out)
