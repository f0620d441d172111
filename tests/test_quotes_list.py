"""The lesson's list of quotes: each prose number proven against the one place it names (a number on one transcript
line, a setting, the book, or no quote at all), so that a quote changed to a value another line prints fails, and
the page links the line the sentence quotes. Small lessons in tmp_path."""

import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

import literate.commands
import literate.inline
import literate.markdown
import literate.proofs
import literate.quoting
import tangle
from conftest import small_lesson, write

PRINTED = ("before 0.75 after 0.25", "rounds 3", "best 0.25 worst 0.75")  # each value on two lines
ROOT = Path(__file__).resolve().parent.parent
SETTINGS = "```python {#settings}\nROUNDS = 3000\n```\n\n"


def lesson(tmp_path: Path, prose: str, entries: list[str] | None) -> Path:
    """A lesson printing PRINTED, with its list of quotes (None: it keeps none)."""
    text = small_lesson(prose, printed=PRINTED).replace("<<body>>", "<<settings>>\n<<body>>") + "\n" + SETTINGS
    md = write(tmp_path, text, "lesson.md")
    (tmp_path / "lesson.quotes.txt").unlink(missing_ok=True)
    if entries is not None:
        (tmp_path / "lesson.quotes.txt").write_text("# the list\n" + "".join(line + "\n" for line in entries))
    (tmp_path / "book_figures.txt").write_text("0.93\n")
    return md


def check(md: Path, capsys) -> tuple[int, str]:
    """tangle, then check, run from the lesson's folder (messages name lesson.md)."""
    os.chdir(md.parent)
    md = Path(md.name)
    assert tangle.main(["tangle", str(md)]) == 0
    capsys.readouterr()
    code = tangle.main(["check", str(md)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, err


@pytest.fixture(autouse=True)
def back_where_we_were():
    here = os.getcwd()
    yield
    os.chdir(here)


BEST = "最好的是 ⟦0.25⟧。\tgenerated/a.py 1:3:1\tbest 0.25 worst 0.75"


def test_a_listed_quote_passes_and_the_same_quote_changed_to_a_value_another_line_prints_fails(tmp_path, capsys):
    assert check(lesson(tmp_path, "最好的是 0.25。", [BEST]), capsys)[0] == 0
    # 0.75 is printed, on this very line too, but not where the list says the sentence quotes
    code, err = check(lesson(tmp_path, "最好的是 0.75。", [BEST]), capsys)
    assert code == 1
    assert re.search(r"lesson\.md:3: error: 0\.75 is not what it quotes: generated/a\.py prints 0\.25 there "
                     r"\(generated/a\.py 1:3:1, lesson\.md line \d+: 'best 0\.25 worst 0\.75'; listed in "
                     r"lesson\.quotes\.txt:2\)", err), err
    # without a list, the value alone decides: the changed quote passes (why a lesson keeps one)
    assert check(lesson(tmp_path, "最好的是 0.75。", None), capsys)[0] == 0


def test_a_number_the_list_does_not_name_fails_though_printed(tmp_path, capsys):
    """A lesson that keeps a list names the place of every number: right digits can stand on the wrong line."""
    code, err = check(lesson(tmp_path, "最好的是 0.25。", []), capsys)
    assert code == 1
    assert "0.25: 2 lines of generated/a.py print it (line " in err
    assert "tangle.py quotes lesson.md lists it with the place it guesses" in err  # no Makefile beside it
    code, err = check(lesson(tmp_path, "跑了 3 轮。", []), capsys)
    assert code == 1 and "3: lesson.quotes.txt names it nowhere" in err  # printed once
    assert check(lesson(tmp_path, "跑了 3 轮。", None), capsys)[0] == 0  # without a list: printed once, that line


def test_a_guess_is_refused_until_the_author_confirms_it(tmp_path, capsys):
    code, err = check(lesson(tmp_path, "最好的是 0.25。", ["? " + BEST]), capsys)
    assert code == 1 and "the tool guessed the line it quotes" in err and "lesson.quotes.txt:2" in err


def test_an_entry_whose_sentence_is_gone_fails_at_its_line_of_the_list(tmp_path, capsys):
    code, err = check(lesson(tmp_path, "跑了 3 轮。", [BEST]), capsys)
    assert code == 1
    assert "lesson.quotes.txt:2: error: this sentence is in lesson.md no more (reworded?)" in err
    assert "quotes lesson.md drops it and lists the numbers of the sentence that took its place" in err


def test_a_listed_line_that_reads_otherwise_now_fails(tmp_path, capsys):
    code, err = check(lesson(tmp_path, "最好的是 0.25。", [BEST.replace("worst 0.75", "worst 0.7")]), capsys)
    assert code == 1 and "now reads 'best 0.25 worst 0.75', not as listed" in err


def test_a_setting_the_book_and_no_quote_each_proven_as_listed(tmp_path, capsys):
    prose = "训练 3000 轮；原书是 0.93；权重加起来是 1。"
    entries = ["训练 ⟦3000⟧ 轮；\tgenerated/a.py ROUNDS\t3000", "原书是 ⟦0.93⟧；\t原书\t0.93",
               "权重加起来是 ⟦1⟧。\t不是引用\t定义"]
    assert check(lesson(tmp_path, prose, entries), capsys)[0] == 0
    wrong = prose.replace("3000", "3001").replace("0.93", "0.94")
    code, err = check(lesson(tmp_path, wrong, entries), capsys)
    assert code == 1
    assert "3001 is listed as the setting ROUNDS (lesson.quotes.txt:2), which generated/a.py writes 3000: write it so " \
           "in the sentence" in err
    assert "0.94 is listed as the book's (lesson.quotes.txt:3: 0.93), but the book does not print it there (nor is " \
           "it in book_figures.txt)" in err


def test_a_list_that_cannot_be_read_is_an_input_error_at_its_line(tmp_path, capsys):
    for bad, why in (("最好的是 0.25。\tgenerated/a.py 1:3:1", "expected three fields"),
                     ("最好的是 0.25。\tgenerated/a.py 1:3:1\tbest", "must mark exactly one number"),
                     ("最好的是 ⟦0.25⟧。\tgenerated/a.py line 3\tbest", "cannot read the place"),
                     ("最好的是 ⟦0.25⟧。\t不是引用\t", "say in the third field why")):
        code, err = check(lesson(tmp_path, "最好的是 0.25。", [bad]), capsys)
        assert code == 2 and "lesson.quotes.txt:2: error: " in err and why in err, err


def test_the_quotes_command_lists_each_number_guessing_among_several_places_and_keeps_what_holds(tmp_path, capsys):
    md = lesson(tmp_path, "最好的是 0.25，跑了 3 轮。", None)
    assert tangle.main(["quotes", str(md)]) == 0
    err = capsys.readouterr().err
    listed = (tmp_path / "lesson.quotes.txt").read_text()
    # nothing in the sentence tells the two lines apart: the first, marked, the other below it
    assert "? 最好的是 ⟦0.25⟧，跑了 3 轮。\tgenerated/a.py 1:1:2\tbefore 0.75 after ⟦0.25⟧\n" in listed
    assert "# 或\tgenerated/a.py 1:3:1\tbest ⟦0.25⟧ worst 0.75\n" in listed
    # printed once, and still a guess: only a person can read that the sentence means that line
    assert "? 最好的是 0.25，跑了 ⟦3⟧ 轮。\tgenerated/a.py 1:2:1\trounds ⟦3⟧" in listed.split("\n")
    assert "2 numbers guessed (marked ?" in err
    (tmp_path / "lesson.quotes.txt").write_text(listed.replace("? 最好", "最好"))  # the author confirms both
    assert check(md, capsys)[0] == 0
    assert tangle.main(["quotes", str(md)]) == 0 and "wrote" in capsys.readouterr().out  # the other places' notes go
    assert tangle.main(["quotes", str(md)]) == 0 and "unchanged" in capsys.readouterr().out
    # the sentence reworded: its old entries dropped, named on stderr, its numbers listed again
    md.write_text(md.read_text().replace("最好的是 0.25，跑了 3 轮。", "跑了 3 轮。"))
    assert tangle.main(["quotes", str(md)]) == 0
    err = capsys.readouterr().err
    assert "dropped, its sentence is in the lesson no more: 最好的是 ⟦0.25⟧，跑了 3 轮。" in err
    assert "? 跑了 ⟦3⟧ 轮。\tgenerated/a.py 1:2:1\trounds ⟦3⟧" in (tmp_path / "lesson.quotes.txt").read_text().split("\n")


def test_the_page_links_the_listed_line_and_shows_a_number_that_is_no_quote_unlinked(tmp_path, capsys):
    from literate.page import command as weave
    md = lesson(tmp_path, "最好的是 0.25。权重加起来是 1。", [BEST, "权重加起来是 ⟦1⟧。\t不是引用\t定义"])
    out = tmp_path / "page.html"
    assert weave.main([str(md), "-o", str(out)]) == 0
    page = out.read_text()
    line = next(number for number, text in enumerate(md.read_text().split("\n"), 1) if text == PRINTED[2])
    assert re.search(rf'<a class="num" href="#L{line}-0.25" title="出自 generated/a.py[^"]*">0.25</a>', page)
    assert re.search(r'<span class="num setting" title="正文自己说的数，不引实跑输出（定义）">1</span>', page)


def nearby(number, proofs) -> list[str]:
    """Values a typing slip makes of a quote: its last digit one up or down, and the other numbers its listed
    line prints."""
    text, last = number.text, int(number.text[-1])
    values = [text[:-1] + str(digit) for digit in (last - 1, last + 1) if 0 <= digit <= 9]
    entry = proofs.listed.get(id(number))
    line = entry and literate.quoting.place_line(proofs.doc, entry.place)
    if line:  # but not the number it rounds (0.4102 for 0.41): quoting that in full is no slip
        values += [match[0] for match in literate.inline.NUMBER.finditer(line[1])
                   if not literate.quoting.quotes(text, "", match[0], "")]
    return [value for value in dict.fromkeys(values) if value != text]


def test_every_number_of_the_lesson_changed_to_a_nearby_value_fails():
    """Each number of attention.md, as if the author had typed another value in its place (the list finds its
    entry by the sentence with its numbers masked, so the entry is the same): each fails, but those the list says
    are no quote (a definition, an example), which nothing proves."""
    proofs = literate.proofs.Proofs(literate.markdown.load(ROOT / "attention.md", "attention.md"))
    passed, tried = [], 0
    for number in proofs.numbers:
        entry = proofs.listed.get(id(number))
        assert entry and not entry.guessed, f"attention.md:{number.line}: {number.text} is not listed for sure"
        if entry.place.program == literate.quoting.NOT_A_QUOTE:
            continue
        for value in nearby(number, proofs):
            tried += 1
            if proofs.problem(replace(number, text=value), entry)[0] is None:
                passed.append(f"attention.md:{number.line}: {number.text} -> {value}")
    assert tried > 1000 and not passed, (len(passed), passed)


def test_a_number_whose_listed_line_changed_is_listed_again_as_a_guess_even_where_one_place_prints_it(tmp_path, capsys):
    """The program now prints 4 rounds, and 3 only as a seed: the sentence, not its place, is what is stale, so the
    one place left is no answer the tool may give alone."""
    md = write(tmp_path, small_lesson("跑了 3 轮。", printed=("rounds 3", "seed 7")), "lesson.md")
    assert tangle.main(["quotes", str(md)]) == 0
    listed = tmp_path / "lesson.quotes.txt"
    assert "? 跑了 ⟦3⟧ 轮。\tgenerated/a.py 1:1:1\trounds ⟦3⟧" in listed.read_text().split("\n")
    listed.write_text(listed.read_text().replace("? 跑了", "跑了"))  # the author confirms it
    md.write_text(md.read_text().replace("rounds 3", "rounds 4").replace("seed 7", "seed 3"))
    assert check(md, capsys)[0] == 1
    assert tangle.main(["quotes", str(md)]) == 0
    assert "its listed place generated/a.py 1:1:1 no longer fits; guessed generated/a.py 1:2:1, the only place it may quote" in capsys.readouterr().err
    assert "? 跑了 ⟦3⟧ 轮。\tgenerated/a.py 1:2:1\tseed ⟦3⟧\n" in (tmp_path / "lesson.quotes.txt").read_text()
    code, err = check(md, capsys)
    assert code == 1 and "the tool guessed the line it quotes" in err


def test_a_setting_whose_value_changed_is_listed_again_at_its_name_without_a_guess(tmp_path, capsys):
    md = lesson(tmp_path, "跑了 3000 轮。", ["跑了 ⟦3000⟧ 轮。\tgenerated/a.py ROUNDS\t3000"])
    assert check(md, capsys)[0] == 0
    md.write_text(md.read_text().replace("3000", "4000"))  # the setting and the sentence, both changed
    code, err = check(md, capsys)
    assert code == 1 and "listed as the setting ROUNDS = 3000" in err
    assert "(it gives 4000); where the sentence says so, python " in err and "lists it at the new value" in err
    assert tangle.main(["quotes", str(md)]) == 0
    assert "no longer fits" not in capsys.readouterr().err  # the same place: nothing to guess
    assert "跑了 ⟦4000⟧ 轮。\tgenerated/a.py ROUNDS\t4000\n" in (tmp_path / "lesson.quotes.txt").read_text()
    assert check(md, capsys)[0] == 0


def test_a_setting_written_otherwise_than_the_program_writes_it_says_how(tmp_path, capsys):
    md = lesson(tmp_path, "跑了 3000.0 轮。", ["跑了 ⟦3000.0⟧ 轮。\tgenerated/a.py ROUNDS\t3000"])
    code, err = check(md, capsys)
    assert code == 1 and "3000.0 is listed as the setting ROUNDS (lesson.quotes.txt:2), which generated/a.py writes " \
                         "3000: write it so in the sentence" in err


def test_a_number_printed_nowhere_is_listed_as_no_quote_for_the_author_to_say_why(tmp_path, capsys):
    md = lesson(tmp_path, "比如 7.5 这样的分数。", [])
    code, err = check(md, capsys)
    assert code == 1 and "7.5 is not printed by generated/a.py" in err
    assert "write it as code, between backticks, or run python" in err and "which lists it as '不是引用'" in err
    assert tangle.main(["quotes", str(md)]) == 0
    listed = tmp_path / "lesson.quotes.txt"
    assert "? 比如 ⟦7.5⟧ 这样的分数。\t不是引用\t为什么？" in listed.read_text().split("\n")
    code, err = check(md, capsys)
    assert code == 1 and "7.5 is listed as no quote (lesson.quotes.txt:" in err and "write why in place of '为什么？'" in err
    listed.write_text(listed.read_text().replace("? 比如", "比如"))  # the mark removed, but no reason given: refused
    assert check(md, capsys)[0] == 1
    listed.write_text(listed.read_text().replace("为什么？", "例子"))
    assert check(md, capsys)[0] == 0


def test_a_number_listed_as_no_quote_that_changed_fails_and_is_listed_again_as_a_guess(tmp_path, capsys):
    """The reason was the author's word for 7.5: for 7.6 it is to be read again."""
    md = lesson(tmp_path, "比如 7.6 这样的分数。", ["比如 ⟦7.5⟧ 这样的分数。\t不是引用\t例子"])
    code, err = check(md, capsys)
    assert code == 1 and "7.6 is listed as no quote (lesson.quotes.txt:2: 例子) for the number 7.5 this sentence had" in err
    assert tangle.main(["quotes", str(md)]) == 0
    assert "? 比如 ⟦7.6⟧ 这样的分数。\t不是引用\t例子" in (tmp_path / "lesson.quotes.txt").read_text().split("\n")


def test_a_guess_that_no_longer_fits_is_guessed_afresh(tmp_path, capsys):
    """A guess not yet read is the tool's, not the author's: where its line no longer prints the number, the tool
    guesses again rather than keep naming a line that prints something else."""
    md = lesson(tmp_path, "跑了 3 轮。", ["? 跑了 ⟦3⟧ 轮。\tgenerated/a.py 1:1:1\tbefore 0.75 after 0.25"])
    assert tangle.main(["quotes", str(md)]) == 0
    assert "? 跑了 ⟦3⟧ 轮。\tgenerated/a.py 1:2:1\trounds ⟦3⟧" in (tmp_path / "lesson.quotes.txt").read_text().split("\n")


def test_a_decimal_that_only_a_setting_holds_is_guessed_to_be_that_setting(tmp_path, capsys):
    """START = 1.0 and "the guess 1.0": no line prints it, the setting holds it as written."""
    text = (small_lesson("起点是 1.5。", printed=PRINTED).replace("<<body>>", "<<settings>>\n<<body>>")
            + "\n```python {#settings}\nSTART = 1.5\n```\n\n")
    md = write(tmp_path, text, "lesson.md")
    (tmp_path / "lesson.quotes.txt").write_text("# the list\n")
    code, err = check(md, capsys)
    assert code == 1 and "lesson.quotes.txt names it nowhere" in err and "not printed" not in err  # the list may name it
    assert tangle.main(["quotes", str(md)]) == 0
    listed = tmp_path / "lesson.quotes.txt"
    assert "? 起点是 ⟦1.5⟧。\tgenerated/a.py START\t1.5" in listed.read_text().split("\n")
    listed.write_text(listed.read_text().replace("? 起点", "起点"))
    assert check(md, capsys)[0] == 0


def test_the_list_marks_on_each_line_the_number_its_place_names():
    assert literate.quoting.shown_at("step 7\t0.50 0.75", 3) == "step 7 0.50 ⟦0.75⟧"
    assert literate.quoting.shown_at("a ⟦1⟧ 2", 1) == "a ⟦1⟧ 2"  # the line's own brackets: no mark could be read
    assert literate.quoting.marked_column("step 7 0.50 ⟦0.75⟧") == 3
    assert literate.quoting.marked_column("step 7 0.50 0.75") is None  # a list written before lines were marked
    assert literate.quoting.unmarked("step 7 0.50 ⟦0.75⟧") == "step 7 0.50 0.75"


def test_a_mark_on_another_number_than_the_place_names_fails_and_an_unmarked_line_still_reads(tmp_path, capsys):
    marked = "最好的是 ⟦0.25⟧。\tgenerated/a.py 1:3:1\tbest 0.25 worst ⟦0.75⟧"  # moved the mark, not the place
    code, err = check(lesson(tmp_path, "最好的是 0.25。", [marked]), capsys)
    assert code == 1 and "lesson.quotes.txt:2 marks number 2 of the line" in err and "names number 1" in err
    md = lesson(tmp_path, "最好的是 0.25。", [BEST])  # unmarked, as lists were written before
    assert check(md, capsys)[0] == 0
    assert tangle.main(["quotes", str(md)]) == 0
    assert "最好的是 ⟦0.25⟧。\tgenerated/a.py 1:3:1\tbest ⟦0.25⟧ worst 0.75" in \
        (tmp_path / "lesson.quotes.txt").read_text().split("\n")


def test_a_line_that_changed_says_what_quotes_will_do_with_it(tmp_path, capsys):
    """Moved (the same line found elsewhere), or printed nowhere now: each message says what follows."""
    moved = "最好的是 ⟦0.25⟧。\tgenerated/a.py 1:1:1\tbest 0.25 worst 0.75"  # the line stands at 1:3 now
    code, err = check(lesson(tmp_path, "最好的是 0.25。", [moved]), capsys)
    assert code == 1 and "the same line now stands at generated/a.py 1:3:1: python" in err and "follows it" in err
    gone = "最好的是 ⟦0.35⟧。\tgenerated/a.py 1:3:1\tbest 0.35 worst 0.75"
    code, err = check(lesson(tmp_path, "最好的是 0.35。", [gone]), capsys)
    assert code == 1 and "no line prints it now: correct the sentence" in err


def test_check_counts_the_entries_of_sentences_gone_apart_from_the_numbers(tmp_path, capsys):
    md = lesson(tmp_path, "最好的是 0.25。", [BEST, "已经删掉的一句 ⟦3⟧。\tgenerated/a.py 1:2:1\trounds 3"])
    os.chdir(md.parent)
    assert tangle.main(["tangle", md.name]) == 0 and tangle.main(["check", md.name]) == 1
    summary = capsys.readouterr().out.split("\n")[-2]
    assert summary.startswith("checked 1 prose number (") and summary.endswith("; 1 entry of lesson.quotes.txt for a "
                                                                             "sentence now gone")


def test_a_rounding_the_rules_alone_do_not_take_is_one_the_list_may_name(tmp_path, capsys):
    """0.3 rounds 0.253, printed under another heading: in a whole transcript a rounding needs the list (several
    lines may round to it); without one, the message says so rather than call the number printed nowhere."""
    text = small_lesson("一段。", printed=("before 0.75 after 0.253", "rounds 3")) + "\n## 结果\n\n最好的是 0.3。\n"
    md = write(tmp_path, text, "lesson.md")  # the sentence under a heading of its own: the whole transcript cited
    code, err = check(md, capsys)
    assert code == 1 and "it rounds 0.253, which generated/a.py prints: a rounding is proven where" in err
    assert "write it as code" not in err
    (tmp_path / "lesson.quotes.txt").write_text("# the list\n")
    code, err = check(md, capsys)
    assert code == 1 and "lesson.quotes.txt names it nowhere; python" in err and "not printed" not in err


def test_a_guess_offers_no_quote_last_and_a_second_number_of_a_sentence_another_place_first(tmp_path, capsys):
    md = lesson(tmp_path, "先是 0.25，又是 0.25。", [])
    assert tangle.main(["quotes", str(md)]) == 0
    lines = (tmp_path / "lesson.quotes.txt").read_text().split("\n")
    first = lines.index("? 先是 ⟦0.25⟧，又是 0.25。\tgenerated/a.py 1:1:2\tbefore 0.75 after ⟦0.25⟧")
    assert lines[first + 1 : first + 3] == ["# 或\tgenerated/a.py 1:3:1\tbest ⟦0.25⟧ worst 0.75", "# 或\t不是引用\t为什么？"]
    assert "? 先是 0.25，又是 ⟦0.25⟧。\tgenerated/a.py 1:3:1\tbest ⟦0.25⟧ worst 0.75" in lines  # not the first's


def test_a_reworded_sentence_keeps_the_reason_given_for_its_number_and_the_notes_speak_the_lessons_words(
        tmp_path, capsys):
    md = write(tmp_path, small_lesson("Take 7.5, say.", title="Lesson", printed=PRINTED), "lesson.md")  # in English
    (tmp_path / "lesson.quotes.txt").write_text("Take ⟦7.5⟧ for example.\tnot a quote\tan example\n")
    assert tangle.main(["quotes", str(md)]) == 0
    err = capsys.readouterr().err
    assert "? Take ⟦7.5⟧, say.\tnot a quote\tan example" in (tmp_path / "lesson.quotes.txt").read_text().split("\n")
    assert "dropped, its sentence is in the lesson no more: Take ⟦7.5⟧ for example.\tnot a quote" in err
    assert "with the reason given before its sentence was reworded: an example" in err


def test_quotes_says_what_it_follows_without_asking(tmp_path, capsys):
    """A line moved, and a setting changed with its sentence: followed, and said on stderr."""
    md = lesson(tmp_path, "最好的是 0.25，跑了 4000 轮。", ["最好的是 ⟦0.25⟧，跑了 3000 轮。\tgenerated/a.py 1:1:1\tbest 0.25 worst 0.75",
                                                   "最好的是 0.25，跑了 ⟦3000⟧ 轮。\tgenerated/a.py ROUNDS\t3000"])
    md.write_text(md.read_text().replace("ROUNDS = 3000", "ROUNDS = 4000"))
    assert tangle.main(["quotes", str(md)]) == 0
    err = capsys.readouterr().err
    assert "0.25: its line moved from generated/a.py 1:1:1 to generated/a.py 1:3:1: followed" in err
    assert "4000: the setting ROUNDS is 4000 now, as the sentence says: kept" in err


def test_a_count_printed_nowhere_is_advised_to_be_a_setting(tmp_path, capsys):
    md = lesson(tmp_path, "印了 16 行。", [])
    assert tangle.main(["quotes", str(md)]) == 0
    code, err = check(md, capsys)
    assert code == 1 and "if the program uses this count (how many it prints or runs), give it an UPPER_CASE name " \
                         "in the code (ROWS = 16)" in err


def test_the_pages_tooltip_names_the_setting_a_number_is(tmp_path, capsys):
    from literate.page import command as weave
    md = lesson(tmp_path, "跑了 3000 轮。", ["跑了 ⟦3000⟧ 轮。\tgenerated/a.py ROUNDS\t3000"])
    out = tmp_path / "page.html"
    assert weave.main([str(md), "-o", str(out)]) == 0
    assert '<span class="num setting" title="generated/a.py 声明的设置 ROUNDS 的值，不链到实跑输出">3000</span>' in \
        out.read_text()


def test_update_follows_a_moved_line_in_the_list_but_leaves_a_guess_to_quotes(tmp_path, capsys):
    md = lesson(tmp_path, "最好的是 0.25。", ["最好的是 ⟦0.25⟧。\tgenerated/a.py 1:3:1\tbest ⟦0.25⟧ worst 0.75"])
    assert check(md, capsys)[0] == 0
    first = 'print("before 0.75 after 0.25")'
    md.write_text(md.read_text().replace(first, 'print("new")\n' + first))  # every line one further down
    assert tangle.main(["tangle", md.name]) == 0 and tangle.main(["update", md.name]) == 0
    out, err = capsys.readouterr()
    assert "lesson.quotes.txt: followed the new transcript (1 entry)" in out
    assert "its line moved from generated/a.py 1:3:1 to generated/a.py 1:4:1: followed" in err
    listed = (tmp_path / "lesson.quotes.txt").read_text()
    md.write_text(md.read_text().replace('print("best 0.25 worst 0.75")', 'print("best 0.35 worst 0.75")'))
    assert tangle.main(["tangle", md.name]) == 0 and tangle.main(["update", md.name]) == 1  # the number changed
    assert "followed" not in capsys.readouterr().out and (tmp_path / "lesson.quotes.txt").read_text() == listed


def test_a_setting_changed_with_its_sentence_is_followed_though_a_line_prints_the_new_value(tmp_path, capsys):
    text = (small_lesson("跑了 4000 轮。", printed=(*PRINTED, "total 4000")).replace("<<body>>", "<<settings>>\n<<body>>")
            + "\n```python {#settings}\nROUNDS = 4000\n```\n\n")
    md = write(tmp_path, text, "lesson.md")
    (tmp_path / "lesson.quotes.txt").write_text("跑了 ⟦3000⟧ 轮。\tgenerated/a.py ROUNDS\t3000\n")
    assert tangle.main(["quotes", str(md)]) == 0
    assert "跑了 ⟦4000⟧ 轮。\tgenerated/a.py ROUNDS\t4000" in (tmp_path / "lesson.quotes.txt").read_text().split("\n")


def test_a_reason_given_before_comes_first_though_the_number_is_printed_and_a_rounding_is_called_one(
        tmp_path, capsys):
    md = lesson(tmp_path, "例如 0.25，又如 0.3。", ["比如 ⟦0.25⟧。\t不是引用\t例子"])
    assert tangle.main(["quotes", str(md)]) == 0
    lines = (tmp_path / "lesson.quotes.txt").read_text().split("\n")
    first = lines.index("? 例如 ⟦0.25⟧，又如 0.3。\t不是引用\t例子")  # the author's word, the printed places below
    assert lines[first + 1].startswith("# 或\tgenerated/a.py 1:")
    (tmp_path / "lesson.quotes.txt").write_text("# the list\n")
    code, err = check(md, capsys)
    assert code == 1 and "0.3: 2 lines of generated/a.py print a number that rounds to it (line " in err


def test_an_error_says_which_of_the_numbers_written_alike_on_its_line_it_is(tmp_path, capsys):
    md = lesson(tmp_path, "先是 0.25，再是 0.35。然后又是 0.35。", None)
    code, err = check(md, capsys)
    assert code == 1 and "lesson.md:3: error: the 1st 0.35 on the line: 0.35 is not printed" in err
    assert "lesson.md:3: error: the 2nd 0.35 on the line: 0.35 is not printed" in err


def test_a_whole_number_nothing_but_its_digits_ties_to_a_line_is_offered_as_no_quote_first(tmp_path, capsys):
    md = lesson(tmp_path, "例如 3。跑了 3 轮。", [])
    assert tangle.main(["quotes", str(md)]) == 0
    lines = (tmp_path / "lesson.quotes.txt").read_text().split("\n")
    first = lines.index("? 例如 ⟦3⟧。\t不是引用\t为什么？")
    assert lines[first + 1] == "# 或\tgenerated/a.py 1:2:1\trounds ⟦3⟧"
    assert "? 跑了 ⟦3⟧ 轮。\tgenerated/a.py 1:2:1\trounds ⟦3⟧" in lines  # a measure word after it ties it


def test_a_reworded_sentence_offers_first_the_place_the_author_chose_before(tmp_path, capsys):
    chosen = "最好的是 ⟦0.25⟧。\tgenerated/a.py 1:3:1\tbest ⟦0.25⟧ worst 0.75"  # not the first line printing it
    md = lesson(tmp_path, "最好的一个是 0.25。", [chosen])
    assert tangle.main(["quotes", str(md)]) == 0
    lines = (tmp_path / "lesson.quotes.txt").read_text().split("\n")
    assert "? 最好的一个是 ⟦0.25⟧。\tgenerated/a.py 1:3:1\tbest ⟦0.25⟧ worst 0.75" in lines


def test_a_sign_changed_is_a_number_changed_not_a_sentence_reworded(tmp_path, capsys):
    text = small_lesson("差是 -0.25，又是 0.75。", printed=("a -0.25 b 0.25", "c 0.25"))
    md = write(tmp_path, text, "lesson.md")
    (tmp_path / "lesson.quotes.txt").write_text("差是 -⟦0.25⟧，又是 0.75。\tgenerated/a.py 1:1:1\ta -⟦0.25⟧ b 0.25\n")
    code, err = check(md, capsys)
    assert "in lesson.md no more" not in err  # found again, the sign as it stands
    md.write_text(text.replace("差是 -0.25", "差是 +0.25"))
    code, err = check(md, capsys)
    assert code == 1 and "in lesson.md no more" not in err and "0.25 is not what it quotes" in err


def test_update_says_what_it_followed_a_few_at_a_time(tmp_path, capsys):
    sentences = "".join(f"{name}是 {value}。" for name, value in zip("甲乙丙丁戊己庚辛壬癸子丑", ("0.75", "0.25") * 6))
    md = lesson(tmp_path, sentences, [])
    assert tangle.main(["quotes", str(md)]) == 0
    listed = tmp_path / "lesson.quotes.txt"
    listed.write_text(listed.read_text().replace("? ", ""))  # all read
    first = 'print("before 0.75 after 0.25")'
    md.write_text(md.read_text().replace(first, 'print("new")\n' + first))
    os.chdir(md.parent)
    capsys.readouterr()
    assert tangle.main(["tangle", md.name]) == 0 and tangle.main(["update", md.name]) == 0
    err = capsys.readouterr().err
    assert err.count(": followed") == literate.commands.MAX_NOTES - 1 and "more like them" in err
