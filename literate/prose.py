"""Prose numbers: every number in the prose, the transcript it cites, and whether that transcript prints it."""

from __future__ import annotations

import ast
import bisect
import itertools
import posixpath
import re

from . import blocks, quoting
from .book import BOOK_FIGURES
from .expansion import trace
from .inline import BOOK_SPAN_END, NUMBER, OUR_COLUMN, SEPARATOR, Spans
from .language import RULES, ProseRules
from .makefile import lesson_command
from .model import Document, ProseNumber, UserError, output_lines, quoted
from .printed import Printed, brief, sign_before
from .validation import lookalike
from .writing import broken_numbers, reordered


# A setting the program declares: an UPPER_CASE name given a value in the program's top level (ROUNDS = 3000,
# GROWTH_CHECKPOINTS = tuple(range(0, 600, 10)) ...); the whole numbers of that value (not of its comments or
# strings) may stand in prose before a measure word.
SETTING_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
# Between a sign and its number, what a reader does not see as a character: emphasis marks (**−**0.75), a line break
# (a soft break is a space), the separator standing for an HTML comment or tag (−<!-- c -->0.75, <span>−</span>0.75).
SIGN_UNSEEN = "*_~\n" + SEPARATOR
# <!-- 数字出自 PATH --> or <!-- numbers from PATH -->: the numbers of the next block (or sentence) come from PATH
CITATION_WORDS = "|".join(rules.citation_word for rules in RULES.values())
CITING_BLOCKS = (blocks.Paragraph, blocks.ListBlock, blocks.Quote, blocks.Table)
CITATION = re.compile(rf"<!--\s*(?:{CITATION_WORDS})")


def prose_numbers(doc: Document) -> list[ProseNumber]:
    """Every number in the prose: whether it is marked as the book's, and the program it cites.
    Raises UserError for a <!-- 数字出自 --> comment that cannot be read or applies to nothing."""
    found: list[ProseNumber] = []
    problems: list[tuple[int, str]] = []
    sections = section_sources(doc)
    section_starts = [start for start, _ in sections]

    def read(inline: blocks.Inline, first_line: int, whole_book: bool, drawn: bool = True,
             in_row: int | None = None) -> None:
        default = sections[bisect.bisect_right(section_starts, first_line) - 1][1]
        cites = scope[:2] if scope else (default, None)
        found.extend(numbers_in_inline(doc, inline, first_line, whole_book, cites, problems, drawn, in_row))

    pending = scope = None  # a block comment waiting for its block; the block it applies to
    for event, block, depth in blocks.walk(doc.blocks):
        if pending and not (event == "close" and block is pending[3]):  # the comment's own end is no block
            program, line, level, _ = pending
            if event == "open" and depth == level and isinstance(block, CITING_BLOCKS):
                scope = (program, line, block)
            else:
                problems.append((line, cites_nothing(doc, program)))
            pending = None
        if event == "close":
            if scope and block is scope[2]:
                scope = None
            continue
        if isinstance(block, blocks.HtmlBlock) and CITATION.match(block.html.strip()):
            program = cited_program(doc, block.html, block.line, problems, alone=True)
            if program is not None:
                pending = (program, block.line, depth, block)
        elif isinstance(block, blocks.HtmlBlock) and block.text is not None:  # what the reader sees of it
            read(block.text, block.line, False, drawn=False)
        elif isinstance(block, blocks.Paragraph) and not block.inline.caption:  # a caption is a name, no claim
            read(block.inline, block.inline.line, False)
        elif isinstance(block, blocks.Heading):
            read(block.inline, block.line, False)
        elif isinstance(block, blocks.Table):
            book_columns: set[int] = set()
            for row in [*block.head, *(block.body or [])]:
                shift = 0  # where the cell stands in its row's text (blocks.Inline.context)
                for column, cell in enumerate(row.cells):
                    if (cell.header and RULES[doc.language].book_mark.search(cell.inline.source)
                            and not OUR_COLUMN.search(cell.inline.source)):
                        book_columns.add(column)
                    read(cell.inline, cell.inline.line or row.line, not cell.header and column in book_columns,
                         in_row=shift)
                    shift += len(cell.inline.flat) + len(" | ")
    if pending:
        problems.append((pending[1], cites_nothing(doc, pending[0])))
    if problems:
        raise UserError(*(f"{doc.where(line)}: error: {what}" for line, what in sorted(problems)))
    return found


def cites_nothing(doc: Document, program: str) -> str:
    return (f"{RULES[doc.language].citation_word} {program}: the comment is followed by no paragraph, list, quote or table; "
            "put it on the line just before the one it is for")


def section_sources(doc: Document) -> list[tuple[int, str]]:
    """The default citation, as (first line, program) of each section of MD. A section starts at line 1
    and at every # or ## heading (### and deeper stay in their section). Its prose cites the program
    whose transcript it holds (the first, if it holds several); a section holding none cites the
    main program, the one whose transcript comes first in MD."""
    starts = [1] + [block.line for event, block, _ in blocks.walk(doc.blocks)
                    if event == "open" and isinstance(block, blocks.Heading) and block.level <= 2 and block.line > 1]
    by_line = sorted((piece.fence_line, target) for target, transcript in doc.transcripts.items()
                     for piece in transcript.pieces())
    main = by_line[0][1] if by_line else ""
    fence_lines = [line for line, _ in by_line]
    sections = []
    for start, end in itertools.pairwise([*starts, float("inf")]):
        first = bisect.bisect_left(fence_lines, start)  # the first transcript fence at or after start
        held = first < len(by_line) and by_line[first][0] < end
        sections.append((start, by_line[first][1] if held else main))
    return sections


def cited_program(doc: Document, html: str, line: int, problems: list[tuple[int, str]], alone: bool) -> str | None:
    """The program a <!-- 数字出自 PATH --> comment names; None if the HTML is no such comment (or a bad one,
    which goes into problems). alone: an HTML block, which must hold nothing but the comment."""
    text = html.strip()
    if not CITATION.match(text):
        return None
    match = re.fullmatch(rf"<!--\s*(?:{CITATION_WORDS})\s+(\S+)\s*-->", text)
    word = RULES[doc.language].citation_word
    if not match:
        where = "alone on its line before a paragraph, list, quote or table" if alone else "in a sentence"
        problems.append((line, f"cannot read {quoted(text.splitlines()[0])}: write <!-- {word} PATH --> "
                         f"{where}"))
        return None
    target = posixpath.normpath(match[1])
    if target not in doc.transcripts:
        known = ", ".join(doc.transcripts) or "none"
        problems.append((line, f"{word} {quoted(match[1])[1:-1]}: no program with a transcript by that name "
                         f"(there are: {known}){lookalike(target, doc.transcripts)}"))
        return None
    return target


def numbers_in_inline(doc: Document, inline: blocks.Inline, first_line: int, whole_book: bool,
                      cites: tuple[str, int | None], problems: list[tuple[int, str]],
                      drawn: bool = True, in_row: int | None = None) -> list[ProseNumber]:
    """The numbers of one paragraph, cell or HTML block's text, and of what a reader may see of its markup (titles,
    tags: inline.markup_text), which the page does not draw. cites: (program, line of its comment or None) for the
    whole text; a <!-- 数字出自 PATH --> inside it changes that up to the end of its sentence. drawn: whether the page
    draws the text's numbers (not those of an HTML block, nor of an image's description). Linear in the text: every
    lookup below is a bisection in positions found once. in_row: for a table cell, where it stands in its row's
    text (inline.context), the sentence each of its numbers is read in (quoting.said)."""
    text, layout, rules = inline.flat, inline.layout, RULES[doc.language]
    ends = quoting.sentence_ends(text, rules) if in_row is None else None
    newlines = [match.start() for match in re.finditer("\n", text)]

    def line_of(offset: int) -> int:
        return first_line + bisect.bisect_left(newlines, offset)

    problems += [(line_of(offset), why) for offset, why in broken_numbers(text, layout.comments, layout.marks, layout.codes)]
    problems += [(line_of(offset) + seen.count("\n", 0, inner), why) for offset, seen in layout.markup
                 for inner, why in broken_numbers(seen, [], [])]
    turned = reordered(inline.source)
    if turned:
        problems.append((first_line + inline.source.count("\n", 0, turned[0]), turned[1]))
    book = Spans(text, [match.start() for match in rules.book_mark.finditer(text)], BOOK_SPAN_END)
    cited = []
    for offset, html in layout.comments:
        program = cited_program(doc, html, line_of(offset), problems, alone=False)
        if program is not None:
            cited.append((offset, program, line_of(offset)))
    sentences = Spans(text, [offset for offset, _, _ in cited], rules.sentence_end)

    def number(offset: int, match: re.Match, line: int, shown: bool, sentence: str) -> ProseNumber:
        """The number match found in match.string (the text, or a piece of markup standing at offset)."""
        inside = sentences.covering(offset)
        program, cited_on = cited[inside][1:] if inside is not None else cites
        written, seen = match[0], match.string
        return ProseNumber(line, written, whole_book or book.covering(offset) is not None, program, cited_on,
                           inline.key, offset, shown, sign=sign_before(seen, match.start(), SIGN_UNSEEN),
                           setting="." not in written and rules.is_measured(seen, match.end()), said=sentence)

    def in_text(match: re.Match) -> str:
        if in_row is None:
            return quoting.said(text, match.start(), match.end(), ends)
        return quoting.said(inline.context, in_row + match.start(), in_row + match.end(), None)

    numbers = [number(match.start(), match, line_of(match.start()), drawn and not in_image(layout, len(text), match.start()),
                      in_text(match)) for match in claims(text, rules)]
    for offset, seen in layout.markup:
        seen_ends = quoting.sentence_ends(seen, rules)
        numbers += [number(offset, match, line_of(offset) + seen.count("\n", 0, match.start()), False,
                           quoting.said(seen, match.start(), match.end(), seen_ends)) for match in claims(seen, rules)]
    return numbers


def claims(text: str, rules: ProseRules):
    """The numbers of a text that claim something, so that the check looks for them: all but references to the
    world, a year, a chapter or a section (2017 年, 第 12 章, 6.5 节; in 2017, chapter 12, section 6.5: the lesson's
    language's rules). Single digits and counts are claims like any other: 「高的 7 个」 and 「跳了 160 轮」 quote
    what the program printed; a whole number before a measure word (3000 轮, 3000 rounds) may also be a setting,
    which passes where the program declares it (declared_numbers), printed or not."""
    for match in NUMBER.finditer(text):
        if not rules.is_reference(text, match.start(), match.end()):
            yield match


def declared_numbers(doc: Document, target: str) -> set[str]:
    """The whole numbers in the values the program's top level gives its UPPER_CASE names (ROUNDS = 3000): its
    settings, read as Python reads them. A program that is not Python that parses declares none."""
    body, _ = trace(doc, target)
    try:
        tree = ast.parse("\n".join(body))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return set()
    values = [node.value for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value
              and all(isinstance(name, ast.Name) and SETTING_NAME.fullmatch(name.id)
                      for name in (node.targets if isinstance(node, ast.Assign) else [node.target]))]
    return {str(node.value) for value in values for node in quoting.setting_constants(value)
            if type(node.value) is int and node.value >= 0}


def in_image(layout: blocks.Layout, length: int, offset: int) -> bool:
    """Whether the offset (in a text of that length) is in an image's description (which the page shows, but does
    not draw as text)."""
    described = bisect.bisect_right(layout.described, (offset, length)) - 1
    return described >= 0 and offset < layout.described[described][1]


class Quotes:
    """What each prose number may quote, indexed once (printed.Printed): the whole transcript of each program, and
    the parts of it that stand under each heading. A decimal (0.41) that its section cites, under a heading whose
    text holds parts of that program's output, quotes those parts: printed there as written, or rounded from a
    number printed there (0.4102). Any other number (an integer, a decimal cited by a <!-- 数字出自 --> comment, one
    under a heading without output of its program) quotes the whole transcript, as written. So a stale decimal does
    not pass because the same digits happen to stand somewhere else in a long output. (A class to keep the
    indexes with the lesson's headings.)"""

    def __init__(self, doc: Document):
        self.doc = doc
        self.headings = [1] + [block.line for event, block, _ in blocks.walk(doc.blocks)
                               if event == "open" and isinstance(block, blocks.Heading) and block.line > 1]
        self.parts: dict[tuple[int, str], list] = {}  # (heading's index, program) -> its parts under it
        for target, transcript in doc.transcripts.items():
            for piece in transcript.pieces():
                self.parts.setdefault((self.heading(piece.fence_line), target), []).append(piece)
        self.indexes: dict[tuple[int, str] | str, Printed] = {}
        self.printing: dict[tuple[int, str] | str, dict[str, list[int]]] = {}
        self.declared: dict[str, set[str]] = {}  # program -> the whole numbers of its settings
        self.named: dict[str, dict[str, set[str]]] = {}  # program -> its settings' numbers by name
        self.printed_at: dict[str, dict] = {}  # program -> Quotes.places

    def heading(self, line: int) -> int:
        return bisect.bisect_right(self.headings, line) - 1

    def scope(self, number: ProseNumber) -> tuple[int, str] | str:
        """The key of what number quotes: (heading, program) for the parts under its heading, else the program."""
        key = (self.heading(number.line), number.program)
        local = number.cited_on is None and key in self.parts
        return key if local else number.program

    def printed(self, scope: tuple[int, str] | str) -> Printed:
        if scope not in self.indexes:
            pieces = self.parts[scope] if isinstance(scope, tuple) else [self.doc.transcripts[scope]]
            self.indexes[scope] = Printed.of(piece.content for piece in pieces)
        return self.indexes[scope]

    def quote_of(self, number: ProseNumber) -> str | None:
        """What number quotes as printed (itself, or the number it rounds), or None: not printed where it looks."""
        if number.program not in self.doc.transcripts:
            return None
        scope = self.scope(number)
        printed = self.printed(scope)
        if number.text in printed.numbers and printed.with_sign(number.text, number.sign):
            return number.text
        if isinstance(scope, tuple) and printed.rounds_to(number.text, sign=number.sign):
            return printed.rounds_to(number.text, sign=number.sign)[0]
        if number.setting and not number.sign and number.text in self.settings(number.program):
            return number.text
        return None

    def setting_name(self, number: ProseNumber) -> str:
        """The name of a setting of number's program whose value, as the code writes it (3_000 for 3000 too), is
        number; "" if none is."""
        return next((name for name, held in sorted(self.values(number.program).items())
                     if any(text.replace("_", "") == number.text for text in held)), "")

    def only_declared(self, number: ProseNumber) -> bool:
        """Whether number passes as a declared setting only: where it looks, nothing prints it."""
        return number.setting and number.text not in self.printed(self.scope(number)).numbers

    def values(self, program: str) -> dict[str, set[str]]:
        """The numbers each UPPER_CASE name of the program's top level is given (quoting.declared_values)."""
        if program not in self.named:
            self.named[program] = quoting.declared_values("\n".join(trace(self.doc, program)[0]))
        return self.named[program]

    def places(self, program: str) -> dict[str, list[tuple[quoting.Place, str, str]]]:
        """Each number the program prints, as written: (place, sign, line) of each time, first to last."""
        if program not in self.printed_at:
            found = self.printed_at[program] = {}
            for part, piece in enumerate(self.doc.transcripts[program].pieces(), start=1):
                for index, text in enumerate(output_lines(piece.content), start=1):
                    for column, match in enumerate(NUMBER.finditer(text), start=1):
                        found.setdefault(match[0], []).append((quoting.Place(program, part, index, column),
                                                               sign_before(text, match.start()), text))
        return self.printed_at[program]

    def settings(self, program: str) -> set[str]:
        if program not in self.declared:
            self.declared[program] = declared_numbers(self.doc, program)
        return self.declared[program]

    def lines(self, scope: tuple[int, str] | str) -> dict[str, list[int]]:
        """Each number printed in scope, and the MD lines that print it, first to last (each part read once)."""
        if scope not in self.printing:
            pieces = self.parts[scope] if isinstance(scope, tuple) else self.doc.transcripts[scope].pieces()
            self.printing[scope] = lines_printing(pieces)
        return self.printing[scope]

    def where(self, scope: tuple[int, str]) -> str:
        """The parts under a heading, for a message: "part 2, lines 80-95"."""
        pieces = self.parts[scope]
        spans = ", ".join(f"lines {piece.first_line}-{piece.first_line + len(output_lines(piece.content)) - 1}"
                          for piece in pieces)
        if not pieces[0].part:  # a transcript in one fence
            return spans
        return f"part{'s' if len(pieces) > 1 else ''} {', '.join(str(piece.part) for piece in pieces)}, {spans}"


def transcript_lines_printing(doc: Document) -> dict[str, dict[str, list[int]]]:
    """For each program, each number its transcript prints (read as the prose check reads it, sign
    ignored) and the MD lines of the transcript lines that print it, first to last."""
    return {target: lines_printing(transcript.pieces()) for target, transcript in doc.transcripts.items()}


def lines_printing(pieces) -> dict[str, list[int]]:
    """Each number these transcript fences print, and the MD lines that print it (each part at its own lines)."""
    lines: dict[str, list[int]] = {}
    for piece in pieces:
        for offset, text in enumerate(output_lines(piece.content)):
            for match in NUMBER.finditer(text):
                where = lines.setdefault(match[0], [])
                if not where or where[-1] != piece.first_line + offset:
                    where.append(piece.first_line + offset)
    return lines


def unprinted(number: ProseNumber, quotes: Quotes, keeps_list: bool) -> str:
    """Why a number fails: what it is, what it was looked for in, the nearest numbers there, where else its
    program or another one prints it, and how to write a number that is no output (keeps_list: the lesson keeps a
    list of quotes, where it may say so)."""
    scope = quotes.scope(number)
    known = number.program in quotes.doc.transcripts
    near = quotes.printed(scope).nearest(number.text) if known else []
    whole = isinstance(scope, tuple) and len(quotes.parts[scope]) == len(quotes.doc.transcripts[scope[1]].pieces())
    if isinstance(scope, tuple) and not whole:
        transcript = (f"the output under its heading ({quotes.where(scope)}), printed as written"
                      + (" or rounded from a number printed there" if "." in number.text else ""))
    else:
        transcript = (f"the transcript named on line {number.cited_on}" if number.cited_on
                      else "its section's transcript")
    transcript += f"; nearest: {', '.join(map(brief, near))}" if near else ""
    shown = brief(number.text)
    if number.book:
        mark = quoting.LIST_WORDS[quotes.doc.language]["book"]
        what = (f"{shown} is marked as the book's ({mark}) but the book does not print it (not in {BOOK_FIGURES}), "
                f"nor does {number.program} ({transcript})")
    elif known and number.sign and (number.text in quotes.printed(scope).numbers
                                    or quotes.printed(scope).rounds_to(number.text)):
        other = "with a minus" if number.sign == "+" else "without a minus"
        return (f"{number.sign}{shown}: {number.program} prints this number only {other} "
                f"({transcript.partition('; nearest')[0]}); the sign is part of the number")
    else:
        what = f"{shown} is not printed by {number.program} ({transcript})"
        if number.setting:
            what += (f"; if it is a setting, {number.program} must declare it (an UPPER_CASE name given it, "
                     "ROUNDS = 3000)")
    elsewhere = isinstance(scope, tuple) and number.text in quotes.printed(number.program).numbers
    if elsewhere:
        what += (f"; {number.program} prints it elsewhere, outside the output under this heading: if it quotes that, "
                 "cite the whole transcript with "
                 f"<!-- {RULES[quotes.doc.language].citation_word} {number.program} --> on the line before the paragraph or before the sentence")
    others = [target for target in quotes.doc.transcripts
              if target != number.program and number.text in quotes.printed(target).numbers]
    if others:
        what += (f"; {others[0]} prints it: if it comes from there, cite it with "
                 f"<!-- {RULES[quotes.doc.language].citation_word} {others[0]} --> on the line before the paragraph or before the sentence")
    rounds = quotes.printed(number.program).rounds_to(number.text, sign=number.sign) if known else []
    if rounds and not number.book:
        what += (f"; it rounds {brief(rounds[0])}, which {number.program} prints: a rounding is proven where the "
                 "output under the sentence's heading prints it, or where a list of quotes names its line "
                 f"({lesson_command(quotes.doc, 'quotes')} writes one)")
    elif not (elsewhere or others or number.book):  # printed by no program: perhaps no output at all
        what += no_output_hint(quotes.doc, keeps_list)
    return what


def no_output_hint(doc: Document, keeps_list: bool) -> str:
    """How the prose writes a number it states itself (an example, a definition), which no program prints."""
    listed = (f", or run {lesson_command(doc, 'quotes')}, which lists it as "
              f"{quoting.LIST_WORDS[doc.language]['no quote']!r} for you to say why" if keeps_list else "")
    return f"; if it is no output but an example or a definition, write it as code, between backticks{listed}"
