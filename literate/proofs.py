"""Which place each prose number proves it quotes: the entry the lesson's list of quotes gives it (quoting), or,
for a number the list does not name, what the prose rules find (prose.Quotes); and the places a number may quote,
which the list written again (listing) guesses among."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import replace

from . import quoting
from .book import BOOK_FIGURES, book_prints, read_book_figures
from .makefile import lesson_command
from .model import Document, ProseNumber, output_lines, quoted
from .printed import brief, places
from .prose import Quotes, prose_numbers, unprinted
from .validation import lookalike


def stale_numbers(doc: Document) -> tuple[list[str], list[ProseNumber]]:
    """Error lines for the prose numbers that do not quote what they cite, and all prose numbers, with book true
    only for the book's figures, printed set for a rounding, and quotes set to the transcript line quoted where one
    is known (Proofs.problem). Also an error for each entry of the list that no number has."""
    return proven(Proofs(doc))


def proven(proofs: Proofs) -> tuple[list[str], list[ProseNumber]]:
    """stale_numbers of the lesson these proofs read."""
    doc = proofs.doc
    errors, checked, seen = [], [], Counter()
    for number in proofs.numbers:
        problem, found = proofs.problem(number)
        checked.append(replace(number, **{"book": False, **found}))
        seen[number.line, number.text] += 1
        if problem:
            errors.append(f"{doc.where(number.line)}: error: {which(proofs, number, seen)}{problem}")
    shown = quoting.list_shown(doc)
    errors += [f"{shown}:{entry.line}: error: this sentence is in {doc.shown} no more (reworded?): "
               f"{quoted(entry.said, 80)}; {lesson_command(doc, 'quotes')} drops it and lists the numbers of the "
               "sentence that took its place" for entry in proofs.unused]
    return errors, checked


def which(proofs: Proofs, number: ProseNumber, seen: Counter) -> str:
    """Which of the numbers written alike on its line a number is, where there are several (seen: how many of them
    came so far): "the 2nd 1 on the line: "."""
    alike = sum(other.line == number.line and other.text == number.text for other in proofs.numbers)
    if alike < 2:
        return ""
    count = seen[number.line, number.text]
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(count % 10 if count > 20 else count, "th")
    return f"the {count}{suffix} {brief(number.text)} on the line: "


class Proofs:
    """The lesson's prose numbers, each with its entry in the list of quotes, and what proving one needs, read once.
    (A class so that a number can be proven again as another value would be, as the tests of the list do.)"""

    def __init__(self, doc: Document):
        self.doc = doc
        self.numbers = prose_numbers(doc)
        self.quotes = Quotes(doc)
        self.entries = quoting.read_list(doc)
        books = any(number.book for number in self.numbers) or any(
            entry.place.program == quoting.THE_BOOK for entry in self.entries or [])
        self.figures = read_book_figures(doc) if books else {}
        self.listed, self.unused = match_entries(self.numbers, self.entries or [])

    def problem(self, number: ProseNumber, entry: quoting.Entry | None = None) -> tuple[str | None, dict]:
        """Why number fails (None: it passes), and what the check learnt of it: against its entry (by default,
        the one the list gives it), else as the book's figure its mark makes it, else as printed where it looks."""
        entry = entry or self.listed.get(id(number))
        if entry:
            return entry_problem(self.doc, number, entry, self.quotes, self.figures)
        if number.book and book_prints(self.figures, number):
            return None, {"book": True}
        return unlisted_problem(number, self.quotes, self.entries is not None)


def match_entries(numbers: list[ProseNumber], entries: list[quoting.Entry]):
    """Each number's entry in the list (by id(number)), and the entries no number has: the n-th number with a given
    sentence (numbers masked) and place in it takes the n-th entry with them."""
    waiting: dict[tuple, deque[quoting.Entry]] = {}
    for entry in entries:
        waiting.setdefault(quoting.key(entry.said), deque()).append(entry)
    listed = {}
    for number in numbers:
        queue = waiting.get(quoting.key(number.said))
        if queue:
            listed[id(number)] = queue.popleft()
    unused = sorted((entry for queue in waiting.values() for entry in queue), key=lambda entry: entry.line)
    return listed, unused


def entry_problem(doc: Document, number: ProseNumber, entry: quoting.Entry, quotes: Quotes,
                  figures: dict[str, set[str]], same_line: bool = True) -> tuple[str | None, dict]:
    """Why number does not quote the place its entry names (None: it does), and what the check learnt of it.
    same_line: the line must also read as listed (False: the number on it is enough, as when listing again)."""
    place, where = entry.place, f"{quoting.list_shown(doc)}:{entry.line}"
    shown = brief(number.text)
    if place.program == quoting.NOT_A_QUOTE:
        return no_quote_problem(number, entry, where, quotes)
    if place.program == quoting.THE_BOOK and not entry.guessed:
        if number.text != entry.shown or not book_prints(figures, number):
            return (f"{number.sign}{shown} is listed as the book's ({where}: {entry.shown}), but the book does not "
                    f"print it there" + ("" if book_prints(figures, number) else f" (nor is it in {BOOK_FIGURES})")), {}
        return None, {"book": True}
    if entry.guessed:
        return (f"{shown}: the tool guessed the line it quotes ({place}: {quoted(entry.shown.strip(), 70)}), without "
                f"reading the sentence; read {where}, and remove its {quoting.GUESSED.strip()!r} if that is the line "
                "the sentence means, or name the right place"), {}
    if place.name and place.program not in doc.roots:
        return (f"{shown} is listed as the setting {place.name} of {place.program} ({where}), but {doc.shown} "
                f"writes no file {place.program}{lookalike(place.program, doc.roots)}"), {}
    if place.name:
        values = quotes.values(place.program)
        if number.text != entry.shown and entry.shown in values.get(place.name, ()) and not number.sign:
            return (f"{shown} is listed as the setting {place.name} ({where}), which {place.program} writes "
                    f"{entry.shown}: write it so in the sentence"), {}
        if number.text != entry.shown or number.text not in values.get(place.name, ()) or number.sign:
            gives = values.get(place.name)
            now = (f"; where the sentence says so, {lesson_command(doc, 'quotes')} lists it at the new value"
                   if gives and number.text in gives and not number.sign else "")
            return (f"{shown} is listed as the setting {place.name} = {entry.shown} ({where}), but {place.program} "
                    f"does not give {place.name} that value" + (f" (it gives {', '.join(sorted(gives))})" if gives
                                                                else "") + now), {}
        return None, {"declared": True, "setting_name": place.name}
    line = quoting.place_line(doc, place)
    printed = line and quoting.printed_at(line[1], place.column)
    if not printed:
        return (f"{shown} is listed as quoting {place} ({where}), but the output has no number there now (its lines "
                f"moved or changed); {relisting(doc, number, entry, quotes, False)}"), {}
    if same_line and quoting.unmarked(entry.shown) != quoting.shown_line(line[1]):
        still = quoting.quotes(number.text, number.sign, *printed)
        return (f"{shown}: the line it quotes ({place}) now reads {quoted(line[1].strip(), 70)}, not as listed in "
                f"{where}; {relisting(doc, number, entry, quotes, still)}"), {}
    marked = quoting.marked_column(entry.shown)
    if marked is not None and marked != place.column:
        return (f"{shown}: {where} marks number {marked} of the line, {quoted(entry.shown.strip(), 70)}, but names "
                f"number {place.column} in its place ({place}): make the two agree (check proves the place)"), {}
    if not quoting.quotes(number.text, number.sign, *printed):
        sign = "-" if printed[1] == "-" else ""
        return (f"{number.sign}{shown} is not what it quotes: {place.program} prints {sign}{brief(printed[0])} there "
                f"({place}, {doc.shown} line {line[0]}: {quoted(line[1].strip(), 70)}; listed in {where}): if the "
                f"sentence still means this line, correct its number" + (
                    f"; if it now quotes another line, {lesson_command(doc, 'quotes')} lists it again, as a guess "
                    "marked ? for you to read" if candidates(doc, number, quotes) else "; no other line prints it")), {}
    return None, {"quotes": line[0], "program": place.program, "printed": printed[0] if printed[0] != number.text else ""}


def relisting(doc: Document, number: ProseNumber, entry: quoting.Entry, quotes: Quotes, still: bool) -> str:
    """What the quotes command does with an entry whose line no longer reads as listed (still: the place prints the
    number yet), as written_list does it: what the author is to do."""
    command = lesson_command(doc, "quotes")
    if still:
        return (f"it still prints {brief(number.text)} there: if the sentence still means this line, {command} lists "
                "it as it reads now")
    moved = moved_place(doc, number, entry)
    if moved:
        return f"the same line now stands at {moved}: {command} follows it"
    if candidates(doc, number, quotes):
        return f"{command} lists it again, as a guess marked ? for you to read"
    return "no line prints it now: correct the sentence"


def no_quote_problem(number: ProseNumber, entry: quoting.Entry, where: str, quotes: Quotes) -> tuple[str | None, dict]:
    """Why a number listed as no quote fails (None: it passes): the tool listed it so, finding it printed nowhere,
    and no person has said why yet."""
    if entry.guessed or entry.shown.strip() in quoting.WHY_WORDS:
        near = (quotes.printed(quotes.scope(number)).nearest(number.text)
                if number.program in quotes.doc.transcripts else [])
        count = (f"; if the program uses this count (how many it prints or runs), give it an UPPER_CASE name in "
                 f"the code (ROWS = {number.text}), and {lesson_command(quotes.doc, 'quotes')} lists it at that "
                 "setting, which check holds it to" if number.setting and not number.sign else "")
        return (f"{brief(number.text)} is listed as no quote ({where}), as the tool does for a number printed "
                f"nowhere: if it is an example or a definition, write why in place of {entry.shown.strip()!r} and "
                f"remove the {quoting.GUESSED.strip()!r}; if it should quote the output, correct the number"
                + (f" (the nearest printed: {', '.join(map(brief, near))})" if near else "") + count), {}
    if quoting.marked(entry.said) != number.text:
        return (f"{brief(number.text)} is listed as no quote ({where}: {entry.shown.strip()}) for the number "
                f"{brief(quoting.marked(entry.said))} this sentence had; if the new number is no quote either, "
                f"{lesson_command(quotes.doc, 'quotes')} lists it again, marked ? for you to read the reason "
                "again"), {}
    return None, {"stated": entry.shown.strip()}


def unlisted_problem(number: ProseNumber, quotes: Quotes, keeps_list: bool) -> tuple[str | None, dict]:
    """Why a number the list does not name fails (None: it passes), and what the check learnt of it: printed where
    it looks (Quotes), or a setting the program declares. Where the lesson keeps a list, every number it quotes must
    be named there: a number can be printed where it looks and still be stale (the right digits on the wrong line, a
    rounding of several lines, a 2 in a formula)."""
    quote = quotes.quote_of(number)
    listable = keeps_list and candidates(quotes.doc, number, quotes)  # what quotes would list it at, sign and all
    rounded = (number.program in quotes.doc.transcripts  # printed only as a number that rounds to it
               and number.text not in quotes.printed(number.program).numbers)
    if listable:  # every number the list does not name, and those the rules alone do not take (a rounding)
        return unlisted(number, quotes.doc, sorted({quoting.place_line(quotes.doc, place)[0] for place in listable
                                                    if not place.name}), rounded), {}
    if quote is None:
        return unprinted(number, quotes, keeps_list), {}
    lines = quotes.lines(quotes.scope(number)).get(quote, [])
    if keeps_list:  # printed where the rules look, though not where the list would (another part)
        return unlisted(number, quotes.doc, lines, rounded), {}
    if quotes.only_declared(number):
        return None, {"declared": True, "setting_name": quotes.setting_name(number)}
    found = {"printed": quote if quote != number.text else ""}
    if len(lines) == 1:
        found["quotes"] = lines[0]
    return None, found


def unlisted(number: ProseNumber, doc: Document, lines: list[int], rounded: bool = False) -> str:
    """What to do with a number the lesson's list of quotes does not name (lines: those that print it; rounded:
    they print a number that rounds to it)."""
    shown = ", ".join(f"line {line}" for line in lines[:3]) + (f" and {len(lines) - 3} more" if len(lines) > 3 else "")
    it = "a number that rounds to it" if rounded else "it"
    where = (f"{len(lines)} lines of {number.program} print {it} ({shown}), and {quoting.list_shown(doc)} does not "
             "say which it quotes" if len(lines) > 1 else f"{quoting.list_shown(doc)} names it nowhere")
    return (f"{brief(number.text)}: {where}; {lesson_command(doc, 'quotes')} lists it with the place it guesses, "
            "marked ? for you to read")


def prose_number_sources(doc: Document) -> tuple[list[str], list[tuple[ProseNumber, list[int]]]]:
    """For weave.py: the error lines of the prose check (as stale_numbers gives them), and every prose number that
    the page draws in its text, with the MD lines of the transcript lines it may quote (under its heading, for a
    decimal that quotes the parts there): the lines that print it as written, or for a rounding the number it
    rounds (number.printed); the one line it quotes, where that is known (number.quotes). The list is empty for
    the book's figures, for numbers the lesson's list of quotes says are none, and for the numbers that fail. Left out:
    the numbers in HTML and image descriptions, which are checked but which the page does not draw as text."""
    proofs = Proofs(doc)
    errors, numbers = proven(proofs)
    quotes = proofs.quotes
    unlinked = [number.book or number.stated or number.declared or number.program not in doc.transcripts
                for number in numbers]
    return errors, [(number, [number.quotes] if number.quotes else [] if unlinked_one
                     else quotes.lines(quotes.scope(number)).get(number.printed or number.text, []))
                    for number, unlinked_one in zip(numbers, unlinked) if number.drawn]




def moved_place(doc: Document, number: ProseNumber, entry: quoting.Entry) -> quoting.Place | None:
    """Where the line an entry lists stands now, if a new transcript moved it: the nearest line of the same part
    (then of any) that reads exactly as listed and prints the number in the same column."""
    pieces = doc.transcripts[entry.place.program].pieces() if entry.place.program in doc.transcripts else []
    found = []
    for part, piece in enumerate(pieces, start=1):
        for index, text in enumerate(output_lines(piece.content), start=1):
            if quoting.shown_line(text) == quoting.unmarked(entry.shown):
                place = replace(entry.place, part=part, line=index)
                printed = quoting.printed_at(text, place.column)
                if printed and quoting.quotes(number.text, number.sign, *printed):
                    found.append(((part != entry.place.part, abs(index - entry.place.line)), place))
    return min(found, key=lambda item: item[0])[1] if found and not entry.place.name else None


def candidates(doc: Document, number: ProseNumber, quotes: Quotes) -> list[quoting.Place]:
    """The places a number may quote, the likeliest first: a setting with that value whose name the sentence says
    (ROUNDS, "3000 rounds"); then each number printed where it looks that it quotes: as written before rounded,
    fewer digits dropped before more, by how many words and other numbers its line shares with the sentence; the
    other settings with that value as the code writes it (the guess 1.0 of START = 1.0) come after them, or, for a
    whole number before a measure word, before all but the exact ones whose lines share words with the sentence."""
    if number.program not in doc.transcripts:
        return []
    said = quoting.words(number.said)
    settings = []
    if not number.sign:  # the cited program's settings first, then those of the lesson's others
        programs = sorted(doc.roots, key=lambda program: program != number.program)
        settings = [quoting.Place(program, name=name) for program in programs
                    for name, held in quotes.values(program).items() if number.text in held]
    named = [place for place in settings if quoting.shared(said, quoting.name_words(place.name))]
    scope = quotes.scope(number)
    pieces = doc.transcripts[number.program].pieces()
    wanted = {id(piece) for piece in (quotes.parts[scope] if isinstance(scope, tuple) else pieces)}
    parts = {part for part, piece in enumerate(pieces, start=1) if id(piece) in wanted}
    printed = quotes.places(number.program)
    values = [number.text] + ([value for value in printed if places(value) > places(number.text)]
                              if "." in number.text else [])
    found = [(place, places(value) - places(number.text), quoting.shared(said, quoting.words(text)))
             for value in values for place, sign, text in printed.get(value, ())
             if place.part in parts and quoting.quotes(number.text, number.sign, value, sign)]
    found.sort(key=lambda item: (item[1], -item[2]))  # as written first (0 digits dropped), then by shared words
    telling = [place for place, dropped, shared in found if not dropped and shared] if number.setting else []
    rest = [place for place, _, _ in found if place not in telling]
    others = [place for place in settings if place not in named]
    return named + telling + (others + rest if number.setting else rest + others)
