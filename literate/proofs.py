"""Which place each prose number proves it quotes: the entry the lesson's list of quotes gives it (quoting), or,
for a number the list does not name, what the prose rules find (prose.Quotes); and the list written again."""

from __future__ import annotations

from collections import deque
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
    errors, checked = [], []
    for number in proofs.numbers:
        problem, found = proofs.problem(number)
        checked.append(replace(number, **{"book": False, **found}))
        if problem:
            errors.append(f"{doc.where(number.line)}: error: {problem}")
    shown = quoting.list_shown(doc)
    errors += [f"{shown}:{entry.line}: error: no number of {doc.shown} stands in this sentence any more: "
               f"{quoted(entry.said, 80)}; {lesson_command(doc, 'quotes')} drops it (and lists the reworded "
               "sentence's numbers again)" for entry in proofs.unused]
    return errors, checked


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
            return (f"{shown} is listed as the setting {place.name} = {entry.shown} ({where}), but {place.program} "
                    f"does not give {place.name} that value" + (f" (it gives {', '.join(sorted(values[place.name]))})"
                                                    if values.get(place.name) else "")), {}
        return None, {"declared": True, "setting_name": place.name}
    line = quoting.place_line(doc, place)
    printed = line and quoting.printed_at(line[1], place.column)
    if not printed:
        return (f"{shown} is listed as quoting {place} ({where}), but that place of {place.program}'s output holds "
                f"no number now; {relisting(doc, number, entry, quotes, False)}"), {}
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
                f"({place}, {doc.shown} line {line[0]}: {quoted(line[1].strip(), 70)}; listed in {where}); if the "
                f"sentence now quotes another line, {relisting(doc, number, entry, quotes, False)}"), {}
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
    found = quote is None and keeps_list and candidates(quotes.doc, number, quotes)
    if found:  # the list may name a place the rules alone do not take (a rounding, a decimal setting)
        return unlisted(number, quotes.doc, [quoting.place_line(quotes.doc, place)[0] for place in found
                                             if not place.name]), {}
    if quote is None:
        return unprinted(number, quotes, keeps_list), {}
    lines = quotes.lines(quotes.scope(number)).get(quote, [])
    if keeps_list:
        return unlisted(number, quotes.doc, lines), {}
    if quotes.only_declared(number):
        return None, {"declared": True, "setting_name": quotes.setting_name(number)}
    found = {"printed": quote if quote != number.text else ""}
    if len(lines) == 1:
        found["quotes"] = lines[0]
    return None, found


def unlisted(number: ProseNumber, doc: Document, lines: list[int]) -> str:
    """What to do with a number the lesson's list of quotes does not name (lines: those that print it)."""
    shown = ", ".join(f"line {line}" for line in lines[:3]) + (f" and {len(lines) - 3} more" if len(lines) > 3 else "")
    where = (f"{len(lines)} lines of {number.program} print it ({shown}) and the sentence does not say which it quotes"
             if len(lines) > 1 else f"the lesson keeps {quoting.list_shown(doc)}, which names it nowhere")
    return (f"{brief(number.text)}: {where}; {lesson_command(doc, 'quotes')} lists the number with the place it "
            "guesses, marked ?: read the line it names, and remove the ? if it is the one the sentence means")


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




def written_list(doc: Document) -> tuple[str, list[str]]:
    """The lesson's list of quotes written again (quoting): each prose number, in the lesson's order under its
    heading, with its place: the one listed, if the number still quotes it (its line shown as it now reads), or
    the same line found again where a new transcript moved it; else the book, for a book's figure its mark makes
    it; else a guess, marked ? for the author to read: the likeliest place that prints it, with the others below
    it. And what to tell the author: the entries dropped (no number stands in their sentence any more) and the
    numbers guessed among several places or listed elsewhere before."""
    proofs = Proofs(doc)
    shown = quoting.list_shown(doc)
    notes = [f"{shown}:{entry.line}: dropped, no number stands in its sentence any more: {entry.said}\t"
             f"{quoting.written_place(entry.place, doc.language)}" for entry in proofs.unused]
    # the reasons the author gave for numbers of reworded sentences: offered again for the same number
    reasons = {quoting.marked(entry.said): entry.shown for entry in proofs.unused
               if entry.place.program == quoting.NOT_A_QUOTE and entry.shown.strip() not in quoting.WHY_WORDS}
    lister = Lister(proofs, notes, reasons)
    out, heading = [quoting.LIST_WORDS[doc.language]["header"]], None
    for number in proofs.numbers:
        under = proofs.quotes.headings[proofs.quotes.heading(number.line)]
        if under != heading:
            heading = under
            out.append(f"\n# {doc.lines[under - 1].strip()}\n" if under > 1 else "\n")  # the heading, as written
        out += lister.lines(number)
    return "".join(out), notes


class Lister:
    """Lists each number again (written_list): what the author should know goes to notes; reasons: those given
    for the numbers of reworded sentences, by number; taken: the places each sentence's numbers have been given,
    so that a guess for another number of it tries another place first."""

    def __init__(self, proofs: Proofs, notes: list[str], reasons: dict[str, str]):
        self.proofs, self.doc, self.notes, self.reasons = proofs, proofs.doc, notes, reasons
        self.taken: dict[str | None, set[quoting.Place]] = {}

    def lines(self, number: ProseNumber) -> list[str]:
        """The lines of the list for one number."""
        lines, place = self.listed(number)
        if place is not None:
            self.taken.setdefault(sentence_key(number), set()).add(place)
        return lines

    def note(self, number: ProseNumber, text: str) -> None:
        self.notes.append(f"{self.doc.where(number.line)}: {brief(number.text)}: {text}")

    def listed(self, number: ProseNumber) -> tuple[list[str], quoting.Place | None]:
        """The lines for one number, and the place they give it."""
        proofs, doc, entry = self.proofs, self.doc, self.proofs.listed.get(id(number))
        if entry and entry_problem(doc, number, replace(entry, guessed=False), proofs.quotes, proofs.figures,
                                   same_line=False)[0] is None:
            return self.kept(number, entry), entry.place
        if entry and entry.guessed:
            entry = None  # the tool's own guess no longer fits: it guesses afresh
        if number.book and book_prints(proofs.figures, number):  # marked as the book's, and on its list
            return [f"{number.said}\t{quoting.LIST_WORDS[doc.language]['book']}\t{number.text}\n"], None
        places = candidates(doc, number, proofs.quotes)
        followed = entry and self.followed(number, entry, places)
        if followed:
            return followed
        if not places:
            return self.unprinted(number, entry), None
        return self.guessed(number, entry, places)

    def kept(self, number: ProseNumber, entry: quoting.Entry) -> list[str]:
        """The lines of an entry that still fits: itself (a guess not yet read stays one, with its others), its
        line as it reads now."""
        doc = self.doc
        if entry.place.line and quoting.unmarked(entry.shown) != place_text(doc, entry.place, marked=False):
            self.note(number, f"its line {entry.place} now reads {quoted(place_text(doc, entry.place), 70)}; the "
                              "same number stands there: kept")
        kept = [entry_text(doc, number.said, entry)]
        if entry.guessed and entry.place.program != quoting.NOT_A_QUOTE:
            kept += self.others(number, [place for place in candidates(doc, number, self.proofs.quotes)
                                         if place != entry.place])
        return kept

    def followed(self, number: ProseNumber, entry: quoting.Entry, places: list[quoting.Place]):
        """The lines and place of an entry the tool follows unasked, saying so: its line moved in a new transcript
        (the same line, found again), or its setting's value changed as the sentence did. None for any other."""
        moved = moved_place(self.doc, number, entry)
        if moved:
            self.note(number, f"its line moved from {entry.place} to {moved}: followed")
            return [entry_text(self.doc, number.said, replace(entry, place=moved, guessed=False))], moved
        if places and places[0] == entry.place:  # the same place: only what it reads changed
            if entry.place.name:
                self.note(number, f"the setting {entry.place.name} is {number.text} now, as the sentence says: kept")
            shown = number.text if entry.place.name else entry.shown
            return [entry_text(self.doc, number.said, replace(entry, shown=shown, guessed=False))], entry.place
        return None

    def guessed(self, number: ProseNumber, entry: quoting.Entry | None, places: list[quoting.Place]):
        """The lines and place of a guess among the places that print a number, the others below it. Listed for
        the first time, a number is a guess however many places print it: a tool can find where the digits stand,
        but only a person can read whether that line is the one the sentence means."""
        taken = self.taken.get(sentence_key(number), set())
        places = sorted(places, key=lambda place: place in taken)  # another number of the sentence has that one
        if len(places) > 1:
            self.note(number, f"guessed {places[0]} of {len(places)} places")
        elif entry:  # the place it was listed at no longer prints it: the one place left is a guess all the same
            self.note(number, f"its listed place {entry.place} no longer fits; guessed {places[0]}, the only place it "
                              "may quote (the sentence may be stale instead)")
        guess = quoting.Entry(number.said, places[0], number.text if places[0].name else "", True, 0)
        return [entry_text(self.doc, number.said, guess), *self.others(number, places[1:])], places[0]

    def others(self, number: ProseNumber, places: list[quoting.Place]) -> list[str]:
        """The # or lines below a guess: the other places it may quote, and no quote (an example's digits may
        stand in the output by chance)."""
        words = quoting.LIST_WORDS[self.doc.language]
        return [*(f"{words['or']}\t{place}\t{number.text if place.name else place_text(self.doc, place)}\n"
                  for place in places[: quoting.MAX_OTHERS]),
                f"{words['or']}\t{words['no quote']}\t{words['why']}\n"]

    def unprinted(self, number: ProseNumber, entry: quoting.Entry | None) -> list[str]:
        """The line for a number printed nowhere it may quote: its entry kept as the author listed it (check says
        what no longer fits; a guess where the author's reason was given for another number), else no quote, a
        guess, with a reason given for it before, or a place for one."""
        doc, words = self.doc, quoting.LIST_WORDS[self.doc.language]
        if entry:
            changed = entry.place.program == quoting.NOT_A_QUOTE and quoting.marked(entry.said) != number.text
            return [f"{quoting.GUESSED if changed else ''}{number.said}\t"
                    f"{quoting.written_place(entry.place, doc.language)}\t{entry.shown}\n"]
        reason = self.reasons.get(number.text)
        self.note(number, "printed nowhere it may quote: listed as no quote, marked ?"
                  + (f", with the reason given before its sentence was reworded: {reason}" if reason else
                     f" ({lesson_command(doc, 'check')} names the nearest numbers printed)"))
        return [f"{quoting.GUESSED}{number.said}\t{words['no quote']}\t{reason or words['why']}\n"]


def sentence_key(number: ProseNumber) -> str | None:
    """What tells a sentence apart from the others of the list: its text with its numbers masked."""
    found = quoting.key(number.said)
    return found[0] if found else None


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


def entry_text(doc: Document, said: str, entry: quoting.Entry) -> str:
    """An entry's line: the sentence, the place, and the line it names as it reads now (a setting: its name); for
    the book and for no quote, the third field as the author wrote it."""
    place, line = entry.place, quoting.place_line(doc, entry.place)
    third = (entry.shown if place.program in (quoting.THE_BOOK, quoting.NOT_A_QUOTE) or place.name
             else quoting.shown_at(line[1], place.column))
    return f"{quoting.GUESSED if entry.guessed else ''}{said}\t{quoting.written_place(place, doc.language)}\t{third}\n"


def place_text(doc: Document, place: quoting.Place, marked: bool = True) -> str:
    """A transcript place's line as it reads now, its number marked (or not)."""
    line = quoting.place_line(doc, place)
    if line is None:
        return ""
    return quoting.shown_at(line[1], place.column) if marked else quoting.shown_line(line[1])


def candidates(doc: Document, number: ProseNumber, quotes: Quotes) -> list[quoting.Place]:
    """The places a number may quote, the likeliest first: a setting its program declares with that value, for a
    whole number before a measure word; then each number printed where it looks that it quotes (as written, or
    rounded), by how many words and other numbers its line shares with the sentence; then, for any other number
    written without a sign, a setting with that value as the code writes it (the guess 1.0 of START = 1.0)."""
    if number.program not in doc.transcripts:
        return []
    settings = []
    if not number.sign:  # the cited program's settings first, then those of the lesson's others
        programs = sorted(doc.roots, key=lambda program: program != number.program)
        settings = [quoting.Place(program, name=name) for program in programs
                    for name, held in quotes.values(program).items() if number.text in held]
    scope = quotes.scope(number)
    pieces = doc.transcripts[number.program].pieces()
    wanted = {id(piece) for piece in (quotes.parts[scope] if isinstance(scope, tuple) else pieces)}
    parts = {part for part, piece in enumerate(pieces, start=1) if id(piece) in wanted}
    printed = quotes.places(number.program)
    values = [number.text] + ([value for value in printed if places(value) > places(number.text)]
                              if "." in number.text else [])
    found = [(place, text, value == number.text) for value in values for place, sign, text in printed.get(value, ())
             if place.part in parts and quoting.quotes(number.text, number.sign, value, sign)]
    said = quoting.words(number.said)
    found.sort(key=lambda item: (not item[2], -quoting.shared(said, quoting.words(item[1]))))
    printed_places = [place for place, _, _ in found]
    return settings + printed_places if number.setting else printed_places + settings
