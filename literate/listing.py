"""The lesson's list of quotes written again (the quotes command), and followed where a new transcript moved its
lines (update): each prose number with the place it proves it quotes, kept where it still holds, followed where the
tool can tell it moved, else guessed for the author to read (proofs.candidates)."""

from __future__ import annotations

from dataclasses import replace

from . import quoting
from .book import book_prints
from .makefile import lesson_command
from .model import Document, ProseNumber, quoted
from .printed import brief
from .proofs import Proofs, candidates, entry_problem, moved_place


def written_list(doc: Document) -> tuple[str, list[str]]:
    """The lesson's list of quotes written again (quoting): each prose number, in the lesson's order under its
    heading, with its place: the one listed, if the number still quotes it (its line shown as it now reads), or
    the same line found again where a new transcript moved it; else the book, for a book's figure its mark makes
    it; else a guess, marked ? for the author to read: the likeliest place that prints it, with the others below
    it. And what to tell the author: the entries dropped (their sentence is in the lesson no more) and the
    numbers guessed among several places or listed elsewhere before."""
    proofs = Proofs(doc)
    shown = quoting.list_shown(doc)
    notes = [f"{shown}:{entry.line}: dropped, its sentence is in the lesson no more: {entry.said}\t"
             f"{quoting.written_place(entry.place, doc.language)}" for entry in proofs.unused]
    # what the author read for the numbers of reworded sentences (a reason, a place): offered first for the same
    # number, as a guess to read again
    before = {quoting.marked(entry.said): entry for entry in proofs.unused
              if not entry.guessed and entry.shown.strip() not in quoting.WHY_WORDS}
    return listing(Lister(proofs, notes, before)), notes


def listing(lister: Lister) -> str:
    """The list as the lister lists each number: its header, then each number's lines under its heading."""
    proofs, doc = lister.proofs, lister.doc
    out, heading = [quoting.LIST_WORDS[doc.language]["header"]], None
    for number in proofs.numbers:
        under = proofs.quotes.headings[proofs.quotes.heading(number.line)]
        if under != heading:
            heading = under
            out.append(f"\n# {doc.lines[under - 1].strip()}\n" if under > 1 else "\n")  # the heading, as written
        out += lister.lines(number)
    return "".join(out)


def followed_list(proofs: Proofs) -> tuple[str, list[str]] | None:
    """The lesson's list of quotes with what a new transcript moved followed, as written_list follows it unasked
    (a line moved, the same number at the same place of a changed line), every other entry as it stands, and the
    notes saying so. None where there is nothing to follow, or the lesson keeps no list, or it would take a guess
    (a number unlisted, a sentence reworded): that is written_list's, for the author to read."""
    if proofs.entries is None or proofs.unused:
        return None
    notes: list[str] = []
    lister = Lister(proofs, notes, {}, follow_only=True)
    text = listing(lister)
    return (text, notes) if notes and not lister.unfollowed else None


class Lister:
    """Lists each number again (written_list): what the author should know goes to notes; before: the entries the
    author read for the numbers of reworded sentences, by number; taken: the places each sentence's numbers have
    been given, so that a guess for another number of it tries another place first. follow_only: an entry that
    would take a guess stays as it stands (unfollowed counts those, and the numbers no entry names)."""

    def __init__(self, proofs: Proofs, notes: list[str], before: dict[str, quoting.Entry], follow_only: bool = False):
        self.proofs, self.doc, self.notes, self.before = proofs, proofs.doc, notes, before
        self.taken: dict[str | None, set[quoting.Place]] = {}
        self.follow_only, self.unfollowed = follow_only, 0

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
        if self.follow_only:  # what takes a guess is the quotes command's
            self.unfollowed += 1
            return [], None
        prior = None if entry else self.before.get(number.text)  # what the author read for it before rewording
        if not places or (prior and prior.place.program == quoting.NOT_A_QUOTE) or not (
                prior or entry or "." in number.text or self.telling(number, places[0])):
            return self.unprinted(number, entry, places), None  # a whole number no line or name bears out: no quote
        if prior and prior.place in places:
            places = [prior.place] + [place for place in places if place != prior.place]
        return self.guessed(number, entry, places)

    def telling(self, number: ProseNumber, place: quoting.Place) -> bool:
        """Whether anything but its digits ties a number to a place: a measure word after it (3000 rounds), or
        words (or other numbers) the sentence shares with its line, or with its name for a setting."""
        if number.setting:
            return True
        said = quoting.words(number.said.replace(f"{quoting.OPEN}{number.text}{quoting.CLOSE}", " "))
        if place.name:
            return bool(quoting.shared(said, quoting.name_words(place.name)))
        line = quoting.place_line(self.doc, place)
        return bool(line and quoting.shared(said, quoting.words(quoting.shown_line(line[1]))))

    def kept(self, number: ProseNumber, entry: quoting.Entry) -> list[str]:
        """The lines of an entry that still fits: itself (a guess not yet read stays one, with its others), its
        line as it reads now."""
        doc = self.doc
        if entry.place.line and quoting.unmarked(entry.shown) != place_text(doc, entry.place, marked=False):
            self.note(number, f"its line {entry.place} now reads {quoted(place_text(doc, entry.place), 70)}; it "
                              "still quotes the number marked there: kept")
        kept = [entry_text(doc, number.said, entry)]
        if entry.guessed and entry.place.program != quoting.NOT_A_QUOTE:
            kept += self.others(number, [place for place in candidates(doc, number, self.proofs.quotes)
                                         if place != entry.place])
        return kept

    def followed(self, number: ProseNumber, entry: quoting.Entry, places: list[quoting.Place]):
        """The lines and place of an entry the tool follows unasked, saying so: its line moved in a new transcript
        (the same line, found again), or its setting's value changed as the sentence did (though a line may print
        the new value too). None for any other."""
        moved = moved_place(self.doc, number, entry)
        if moved:
            self.note(number, f"its line moved from {entry.place} to {moved}: followed")
            return [entry_text(self.doc, number.said, replace(entry, place=moved, guessed=False))], moved
        if entry.place.name and entry.place in places:  # the same setting: only its value changed, as the sentence did
            self.note(number, f"the setting {entry.place.name} is {number.text} now, as the sentence says: kept")
            return [entry_text(self.doc, number.said, replace(entry, shown=number.text, guessed=False))], entry.place
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
        return [*self.or_lines(number, places), f"{words['or']}\t{words['no quote']}\t{words['why']}\n"]

    def or_lines(self, number: ProseNumber, places: list[quoting.Place]) -> list[str]:
        """A # or line for each of the first few places: the place, and its line (a setting: the value)."""
        words = quoting.LIST_WORDS[self.doc.language]
        return [f"{words['or']}\t{place}\t{number.text if place.name else place_text(self.doc, place)}\n"
                for place in places[: quoting.MAX_OTHERS]]

    def unprinted(self, number: ProseNumber, entry: quoting.Entry | None, places: list[quoting.Place]) -> list[str]:
        """The line for a number printed nowhere it may quote, or listed as no quote before its sentence was
        reworded: its entry kept as the author listed it (check says what no longer fits; a guess where the
        author's reason was given for another number), else no quote, a guess, with the reason given for it before
        (the places that print it below) or a place for one."""
        doc, words = self.doc, quoting.LIST_WORDS[self.doc.language]
        if entry:
            if entry.place.program != quoting.NOT_A_QUOTE:
                self.note(number, f"printed nowhere it may quote: kept at {entry.place}, as listed "
                                  f"({lesson_command(doc, 'check')} says what fails)")
            changed = entry.place.program == quoting.NOT_A_QUOTE and quoting.marked(entry.said) != number.text
            return [f"{quoting.GUESSED if changed else ''}{number.said}\t"
                    f"{quoting.written_place(entry.place, doc.language)}\t{entry.shown}\n"]
        prior = self.before.get(number.text)
        reason = prior.shown if prior and prior.place.program == quoting.NOT_A_QUOTE else ""
        why = ("printed nowhere it may quote: " if not places else
               "" if reason else "nothing but its digits ties it to a line: ")
        self.note(number, why + "listed as no quote, marked ?"
                  + (f", with the reason given before its sentence was reworded: {reason}" if reason else
                     "" if places else f" ({lesson_command(doc, 'check')} names the nearest numbers printed)"))
        return [f"{quoting.GUESSED}{number.said}\t{words['no quote']}\t{reason or words['why']}\n",
                *self.or_lines(number, places)]


def sentence_key(number: ProseNumber) -> str | None:
    """What tells a sentence apart from the others of the list: its text with its numbers masked."""
    found = quoting.key(number.said)
    return found[0] if found else None


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
