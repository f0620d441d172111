"""Which transcript line each prose number quotes. A number's value alone cannot say it: a long transcript prints the
same digits on many lines, so a mistyped quote passes whenever its new value stands somewhere else, and a link
would land on any line printing the digits. So a lesson may keep a list of its quotes beside it (LESSON.quotes.txt):
for each number, its sentence with the number marked ⟦0.2303⟧, and the place it quotes, a number on one transcript
line (program part:line:column) or a setting the program declares (program NAME). `tangle.py quotes` writes the
list, guessing where several lines print a number (marked ?, for the author to read and confirm); `check` proves
each number against its place, and the page links that place. The list is also what a reviewer reads: every
sentence beside the line it quotes.

An entry is found again by its sentence with every number masked, and which number of the sentence it is: editing
a number keeps the entry (and fails against its place), rewording the sentence leaves the number without one."""

from __future__ import annotations

import ast
import bisect
import os
import re
from dataclasses import dataclass

from .files import read_regular
from .inline import NUMBER, SEPARATOR, words as inline_words
from .language import ProseRules
from .model import Document, UserError, output_lines
from .printed import places, rounded, sign_before

QUOTES_SUFFIX = ".quotes.txt"  # attention.md -> attention.quotes.txt beside it
OPEN, CLOSE = "⟦", "⟧"  # around the quoted number in its sentence
GUESSED = "? "  # an entry the tool guessed (each new one): check refuses it until the author has read it
MAX_SAID = 400  # characters of a sentence kept around its number (a table row or a long sentence is cut, marked …)
SETTING_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
SIGNED = re.compile(r"[-+−－]#")  # a masked number with the sign written before it


@dataclass(frozen=True)
class Place:
    """What a prose number quotes: the column-th number on line `line` of part `part` of program's transcript (all
    1-based), or, with name set, a setting the program declares (ROUNDS)."""

    program: str
    part: int = 0
    line: int = 0
    column: int = 0
    name: str = ""

    def __str__(self) -> str:
        if self.program in (NOT_A_QUOTE, THE_BOOK):
            return self.program
        return f"{self.program} {self.name}" if self.name else f"{self.program} {self.part}:{self.line}:{self.column}"


NOT_A_QUOTE = "不是引用"  # the place of a number the text states itself (a definition, an example, a count it chose)
THE_BOOK = "原书"  # the place of a number the book printed (listed in book_figures.txt)


def clean(text: str) -> str:
    """A piece of a sentence as the list shows it: one line, what is no text (code, HTML) as …, no ⟦ ⟧ of its own."""
    text = text.replace(SEPARATOR, "…").replace(OPEN, "［").replace(CLOSE, "］")
    return " ".join(text.split())


def said(context: str, start: int, end: int, ends: list[int] | None) -> str:
    """The sentence of context holding the number at [start, end), the number marked ⟦ ⟧, at most about MAX_SAID
    characters of it. ends: where context's sentences end (after each 。；！？), sorted; None: the whole context is
    its sentence (a table row)."""
    first, last = 0, len(context)
    if ends is not None:
        at = bisect.bisect_right(ends, start)
        first, last = (ends[at - 1] if at else 0), (ends[at] if at < len(ends) else len(context))
    room = MAX_SAID // 2
    head = ("…" if start - first > room else "") + clean(context[max(first, start - room) : start])
    tail = clean(context[end : min(last, end + room)]) + ("…" if last - end > room else "")
    space = " " if context[start - 1 : start].isspace() and head else ""
    after_space = " " if context[end : end + 1].isspace() and tail else ""
    return f"{head}{space}{OPEN}{context[start:end]}{CLOSE}{after_space}{tail}"


def sentence_ends(text: str, rules: ProseRules) -> list[int]:
    """Where the sentences of a text end: just after each 。；！？ (and, in English, each . ; ! ? before a blank)."""
    return [match.end() for match in rules.sentence_end.finditer(text)]


def key(sentence: str) -> tuple[str, int] | None:
    """What finds an entry again whatever its numbers say: its sentence with each number masked #, and which of its
    numbers (0-based) is the marked one. None if the sentence does not mark exactly one number."""
    if sentence.count(OPEN) != 1 or sentence.count(CLOSE) != 1:
        return None
    at = sentence.index(OPEN)
    inner = sentence[at + 1 : sentence.index(CLOSE)]
    if not NUMBER.fullmatch(inner):
        return None
    plain = sentence[:at] + inner + sentence[sentence.index(CLOSE) + 1 :]
    starts = [match.start() for match in NUMBER.finditer(plain)]
    if at not in starts:
        return None
    return SIGNED.sub("#", NUMBER.sub("#", plain)), starts.index(at)  # a sign changed is a number changed


def marked(sentence: str) -> str:
    """The number a sentence of the list marks (between ⟦ ⟧); the sentence is one key() reads."""
    return sentence[sentence.index(OPEN) + 1 : sentence.index(CLOSE)]


def printed_at(line: str, column: int) -> tuple[str, str] | None:
    """The column-th number (1-based) printed on a transcript line and its sign ("-" or ""); None if there is none."""
    matches = list(NUMBER.finditer(line))
    if not 1 <= column <= len(matches):
        return None
    match = matches[column - 1]
    return match[0], sign_before(line, match.start())


def quotes(number: str, sign: str, printed: str, printed_sign: str) -> bool:
    """Whether a prose number (with the sign written before it) quotes a printed one: as written, or a decimal
    rounded from it; a minus only from a minus, a plus only from no minus, no sign from either."""
    if (sign == "-") != (printed_sign == "-") and sign:
        return False
    return number == printed or (0 < places(number) < places(printed) and number in rounded(printed, places(number)))


def declared_values(program_text: str) -> dict[str, set[str]]:
    """The numbers (as written in the code) of the value each UPPER_CASE name is given at the program's top level:
    ROUNDS = 3000 gives {"ROUNDS": {"3000"}}; SHORT, LONG = 2000, 3000 gives each its own. A program that does not
    parse as Python declares none."""
    try:
        tree = ast.parse(program_text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {}
    values: dict[str, set[str]] = {}
    for node in tree.body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            for name, value in named_values(target, node.value):
                written = {ast.get_source_segment(program_text, constant) for constant in setting_constants(value)}
                values.setdefault(name, set()).update(text.replace("_", "") for text in written if text)
    return values


def setting_constants(value: ast.expr):
    """The numbers a setting's value is written with: those of its tuples, ranges, arithmetic and the arguments of
    the program's own classes and functions (GROWTH = (0,) + tuple(range(10, 600, 10)), STEPS = 2 ** BITS,
    PICKING = Setting(lr=0.02)), not those a module's function computes the value from (RATE = math.log(2) /
    HALF_LIFE declares no 2: the prose's "2 steps" is no setting of it)."""
    waiting = [value]
    while waiting:
        node = waiting.pop()
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            yield node
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):  # math.log(2), np.sqrt(0.5)
            continue
        waiting.extend(ast.iter_child_nodes(node))


def named_values(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]]:
    """The UPPER_CASE names an assignment gives a value, each with its value: a name, or names unpacked from a
    tuple written out (A, B = 1, 2); nothing for any other target."""
    if isinstance(target, ast.Name):
        return [(target.id, value)] if SETTING_NAME.fullmatch(target.id) else []
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        return [pair for one, its in zip(target.elts, value.elts) for pair in named_values(one, its)]
    return []


# ---------------------------------------------------------------- the lesson's list of quotes

# The list's own words, in the lesson's language (language.py): its header, the places that are no line of output,
# and the mark of the other places a guess was made among. Either language's words are read in any lesson.
ZH_HEADER = f"""\
# 正文里每个数字引的是实跑输出的哪一行：一行一个数字，三段用制表符隔开——
#   它所在的句子（表格里是它那一行），数字本身用 {OPEN} {CLOSE} 括起来；
#   它引的地方：程序 段:行:第几个数（实跑输出的第几段、那一段的第几行、那一行的第几个数，都从 1 数起），
#   或 程序 大写名字（程序声明的设置，如 ROUNDS），或「原书」（原书印的数，列在 book_figures.txt 里），
#   或「不是引用」（正文自己说的数：定义、例子、课文选定的个数）；
#   那一行实跑输出（给人看的，引的那个数用 {OPEN} {CLOSE} 括起来，check 核对它还是这样）；设置，写代码里的那个数；「原书」的，写原书印的那个数；
#   「不是引用」的，写为什么。
# 行首的 "{GUESSED.strip()}" 是工具猜的（新列进来的数都标着它）：读一读，句子说的正是那一行的那个数就删掉它，不是就照下面 "# 或"
# 的几行改成对的那一处（改第二段；第三段括起来的数要和它说的是同一个）。
# python tangle.py quotes 重写这份清单；make check 逐个核对（规则见 docs/numbers.md）。
"""
EN_HEADER = f"""\
# Which line of output each number in the prose quotes: one number a line, in three fields separated by tabs:
#   the sentence it stands in (in a table, its row), the number itself marked {OPEN} {CLOSE};
#   the place it quotes: PROGRAM PART:LINE:COLUMN (the part of the transcript, the line of that part, the number on
#   that line, each counted from 1), or PROGRAM NAME (a setting the program declares, such as ROUNDS), or "the book"
#   (a number the book prints, listed in book_figures.txt), or "not a quote" (a number the prose states itself: a
#   definition, an example, a count the lesson chose);
#   that line of output, the number it quotes marked {OPEN} {CLOSE} (for people: check verifies it still reads so); for
#   a setting, the number in the code; for "the book", the number as the book prints it; for "not a quote", why.
# A "{GUESSED.strip()}" at the start of a line is the tool's guess (each newly listed number has one): read it; if the
# sentence means that number of that line, delete the "{GUESSED.strip()}", if not, make it the right place (the "# or"
# lines below it are the others it could be; change the second field, and mark the same number in the third).
# tangle.py quotes writes this list again; tangle.py check checks every entry (docs/tangle.md says how).
"""
LIST_WORDS = {
    "zh": {"header": ZH_HEADER, "no quote": NOT_A_QUOTE, "book": THE_BOOK, "or": "# 或", "why": "为什么？"},
    "en": {"header": EN_HEADER, "no quote": "not a quote", "book": "the book", "or": "# or", "why": "why?"},
}  # "why": what the tool writes in place of the reason a number it found printed nowhere is no quote
WHY_WORDS = {words["why"] for words in LIST_WORDS.values()}
NO_QUOTE_WORDS = {words["no quote"] for words in LIST_WORDS.values()}
BOOK_WORDS = {words["book"] for words in LIST_WORDS.values()}


def written_place(place: Place, language: str) -> str:
    """A place as the list writes it: the book and no quote in the lesson's words."""
    words = LIST_WORDS[language]
    return {NOT_A_QUOTE: words["no quote"], THE_BOOK: words["book"]}.get(place.program, str(place))


@dataclass(frozen=True)
class Entry:
    said: str  # the sentence, its number marked
    place: Place
    shown: str  # the transcript line (or the setting's name), as the list shows it
    guessed: bool
    line: int  # in the list


MAX_LIST_BYTES = 16 << 20  # a line for each of some thousands of numbers


def list_path(doc: Document):
    return doc.path.with_name(doc.path.stem + QUOTES_SUFFIX)


def list_shown(doc: Document) -> str:
    return os.path.join(os.path.dirname(doc.shown), doc.path.stem + QUOTES_SUFFIX)


def parse_entry(text: str, number: int, shown: str) -> Entry | str:
    """One line of the list as an Entry, or why it cannot be read."""
    guessed = text.startswith(GUESSED)
    fields = text.removeprefix(GUESSED).split("\t")
    if len(fields) != 3:
        return (f"{shown}:{number}: error: expected three fields separated by tabs (the sentence, the place it "
                f"quotes, the line), found {len(fields)}")
    sentence, target, line = fields
    if key(sentence) is None:
        return f"{shown}:{number}: error: the sentence must mark exactly one number {OPEN}like this{CLOSE}"
    if target.strip() in NO_QUOTE_WORDS:
        if not line.strip():
            return (f"{shown}:{number}: error: say in the third field why the number is no quote (a definition, "
                    "an example, a count the lesson chose)")
        return Entry(sentence, Place(NOT_A_QUOTE), line, guessed, number)
    if target.strip() in BOOK_WORDS:
        return Entry(sentence, Place(THE_BOOK), line, guessed, number)
    program, _, where = target.strip().rpartition(" ")
    found = re.fullmatch(r"([1-9][0-9]{0,8}):([1-9][0-9]{0,8}):([1-9][0-9]{0,8})", where)
    if not program or not (found or SETTING_NAME.fullmatch(where)):
        return (f"{shown}:{number}: error: cannot read the place {target.strip()!r}: write PROGRAM PART:LINE:COLUMN "
                "(generated/attention.py 3:7:2) or PROGRAM NAME (generated/attention.py ROUNDS)")
    place = Place(program, *map(int, found.groups())) if found else Place(program, name=where)
    return Entry(sentence, place, line, guessed, number)


def read_list(doc: Document) -> list[Entry] | None:
    """The lesson's list of quotes, None if it keeps none. Raises UserError for a list that cannot be read."""
    shown = list_shown(doc)
    raw = read_regular(list_path(doc), shown, MAX_LIST_BYTES)
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{shown}: error: not UTF-8; save the file as UTF-8") from None
    entries, problems = [], []
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        entry = parse_entry(line, number, shown)
        (problems if isinstance(entry, str) else entries).append(entry)
    if problems:
        raise UserError(*problems)
    return entries


def place_line(doc: Document, place: Place) -> tuple[int, str] | None:
    """(MD line, text) of the transcript line a place names; None if the program prints no such line."""
    transcript = doc.transcripts.get(place.program)
    if transcript is None or place.name or not 1 <= place.part <= len(transcript.pieces()):
        return None
    piece = transcript.pieces()[place.part - 1]
    lines = output_lines(piece.content)
    if not 1 <= place.line <= len(lines):
        return None
    return piece.first_line + place.line - 1, lines[place.line - 1]


def shown_line(text: str) -> str:
    """A transcript line as the list shows it: one field, no tab."""
    return text.replace("\t", " ").rstrip()


def shown_at(text: str, column: int) -> str:
    """A transcript line as the list shows it (shown_line), its column-th number marked ⟦ ⟧: the one the entry
    names, so that a reader sees it without counting."""
    matches = list(NUMBER.finditer(text))
    if OPEN in text or CLOSE in text or not 1 <= column <= len(matches):  # its own marks would make the mark ambiguous
        return shown_line(text)
    match = matches[column - 1]
    return shown_line(f"{text[:match.start()]}{OPEN}{match[0]}{CLOSE}{text[match.end():]}")


def unmarked(shown: str) -> str:
    """A line of the list's third field without its mark: as the transcript prints it."""
    return shown.replace(OPEN, "").replace(CLOSE, "")


def marked_column(shown: str) -> int | None:
    """Which number of a line (1-based) the list's third field marks ⟦ ⟧; None where it marks none (a list written
    before lines were marked) or not exactly one number."""
    if shown.count(OPEN) != 1 or shown.count(CLOSE) != 1 or shown.index(OPEN) > shown.index(CLOSE):
        return None
    at, plain = shown.index(OPEN), unmarked(shown)
    starts = [match.start() for match in NUMBER.finditer(plain)]
    return starts.index(at) + 1 if at in starts else None


MAX_OTHERS = 5  # other places listed below a guess


def words(sentence: str) -> tuple[set[str], set[str]]:
    """inline.words of a sentence as the list shows it: its marks ⟦ ⟧ and the … standing for code or HTML no
    characters of its words."""
    return inline_words(sentence.translate({ord(OPEN): " ", ord(CLOSE): " ", ord("…"): " "}))


def name_words(name: str) -> tuple[set[str], set[str]]:
    """words() of a setting's name as a sentence might say it: ROUND_COUNT as "round count"."""
    return words(name.lower().replace("_", " "))


def shared(one: tuple[set[str], set[str]], other: tuple[set[str], set[str]]) -> int:
    """How much two texts' words (words()) have in common: shared pairs, and twice the shared numbers."""
    return len(one[0] & other[0]) + 2 * len(one[1] & other[1])
