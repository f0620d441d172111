"""The lesson's language, Chinese ("zh") or English ("en"). It chooses the words the tools write around the lesson's
own (the page's and the notebook's notes, captions and tooltips, the figures' legends, the captions the check asks
for) and the prose rules that hang on words: which word after a whole number makes it a count or a setting (3000 轮,
3000 rounds), which numbers refer to the world and are not checked (2017 年, 6.5 节; in 2017, section 6.5), and where
a sentence ends. The lesson declares it (`language: en` in its <!-- literate block), or else its prose says it:
Chinese where the prose has any Chinese character, English where it has none."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

LANGUAGES = ("zh", "en")
CHINESE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # the CJK ideographs: a Chinese character
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


NAME = re.compile(r"〈[^〈〉]*〉")  # a chunk's name, in any language (a caption, a link to a chunk)
BOOK_MARK = "原书"  # the mark of the book's figures, which an English lesson may use too


def read_language(declared: str | None, prose: Iterable[str]) -> str:
    """The declared language, or the prose's: Chinese if any of its texts has a Chinese character (but in a chunk's
    name or the book's mark, which any lesson may write); English if it has words in Latin letters and none; Chinese
    (the tools' first language) for a lesson with no words at all."""
    if declared:
        return declared
    texts = [NAME.sub("", text).replace(BOOK_MARK, "") for text in prose]
    if any(CHINESE.search(text) for text in texts):
        return "zh"
    return "en" if any(LATIN_WORD.search(text) for text in texts) else "zh"


# A measure word after a whole number makes it a count or a setting (3000 轮, 16 维; 3000 rounds, a 2-layer net).
# Chinese has no spaces between words, so the words that begin with a measure word's character but are no measure
# are listed (损失 41 行不行, 准确率 93 位居第一): the number before them is a claim.
CHINESE_MEASURES = "年章节位维轮步列行层种套头秒"
NOT_MEASURES = ("位居", "位于", "位列", "行不行", "行为", "行业", "列表", "层面", "层次", "种子", "套用", "头部", "步骤",
                "秒杀", "维持", "维护", "节点", "节约", "节省", "章程", "年龄")
ENGLISH_MEASURES = ("rounds?|steps?|epochs?|iterations?|letters?|characters?|digits?|positions?|dimensions?|layers?|"
                    "columns?|rows?|lines?|seconds?|minutes?|hours?|days?|years?|heads?|samples?|examples?|tokens?|"
                    "words?|seeds?|times")


YEAR = re.compile(r"1[5-9][0-9]{2}|20[0-9]{2}")  # 1500 to 2099: a year, where the words say so
# An English sentence ends at . ! ? or ; before a blank (after a closing quote or bracket too), but not at the point
# of an abbreviation that runs on (e.g. 0.5, Fig. 3, vs. 0.4)
NOT_ENDS = "".join(rf"(?<!\b{re.escape(word)})" for word in ("e.g", "i.e", "Fig", "fig", "Eq", "eq", "vs", "al", "cf"))


@dataclass(frozen=True)
class ProseRules:
    """The prose rules of one language (see the module's docstring)."""

    measure_after: re.Pattern  # matched just after a whole number: a measure word follows it
    sentence_end: re.Pattern  # where a sentence ends (the match's end is the sentence's)
    reference_after: re.Pattern | None = None  # matched just after a number: it names a chapter, a section
    year_after: re.Pattern | None = None  # ... after a number of 1500 to 2099: it names a year (2017 年, not 10 年)
    reference_before: re.Pattern | None = None  # matched at the end of the text before a number: so does it
    year_before: re.Pattern | None = None  # ... before a four-digit number not followed by a measure word: a year
    numbered_heading: bool = False  # a whole number opening a text, then . or ) (2. Walking downhill): a section's
    book_mark: re.Pattern = re.compile(BOOK_MARK)  # the book's span starts here (原书报告 0.93; the book reports 0.93)
    citation_word: str = "数字出自"  # <!-- 数字出自 PATH -->, as messages write it (either language's is read)

    def is_reference(self, text: str, start: int, end: int) -> bool:
        """Whether the number at [start, end) of text refers to the world (a year, a chapter, a section)."""
        if self.reference_after and self.reference_after.match(text, end):
            return True
        if self.year_after and YEAR.fullmatch(text, start, end) and self.year_after.match(text, end):
            return True
        before = text[max(0, start - 12) : start]
        if self.reference_before and self.reference_before.search(before):
            return True
        if self.numbered_heading and not text[:start].strip() and text[end : end + 1] in (".", ")"):
            return "." not in text[start:end]
        return bool(self.year_before and YEAR.fullmatch(text, start, end) and not self.is_measured(text, end)
                    and self.year_before.search(before) and (not before.endswith("(") or text[end : end + 1] == ")"))

    def is_measured(self, text: str, end: int) -> bool:
        """Whether a measure word follows the whole number ending at end (3000 轮, 3000 rounds)."""
        return self.measure_after.match(text, end) is not None


RULES = {
    "zh": ProseRules(
        measure_after=re.compile(rf" ?(?!{'|'.join(NOT_MEASURES)})[{CHINESE_MEASURES}]"),
        sentence_end=re.compile(r"[。；！？]"),
        reference_after=re.compile(rf" ?(?!{'|'.join(NOT_MEASURES)})[章节]"),  # 第 12 章, 6.5 节
        year_after=re.compile(r" ?年(?!龄)")),  # 2017 年 (10 年 is a span of time: a count, checked)
    "en": ProseRules(
        measure_after=re.compile(rf"(?:\s+|-)(?:{ENGLISH_MEASURES})\b"),
        sentence_end=re.compile(rf"[。；！？]|{NOT_ENDS}[.;!?][\"')\]’”]*(?=\s|\Z)"),
        reference_before=re.compile(r"(?:(?i:\b(?:chapter|section|sec\.))\s*|§\s*)\Z"),  # chapter 12, section 6.5, § 6.5
        year_before=re.compile(r"(?:(?i:\b(?:in|since|until))\s+|\()\Z"),  # in 2017, since 2017, (2017)
        numbered_heading=True,
        book_mark=re.compile(rf"{BOOK_MARK}|\b[Tt]he book\b"),
        citation_word="numbers from"),
}
