"""What the page says in its own words, in the lesson's language (language.py): the contents, the summary of the
numbers, the captions, links and tooltips around the lesson's code, output and numbers. Each is a template whose
{fields} the page fills in: say() as HTML (the template's text escaped, a part escaped unless it is HTML already),
plain() as the text of an attribute (escaped where the tag is written)."""

from __future__ import annotations

from ..markup import Markup, fill
from .state import Page

WORDS = {
    "zh": {
        "html-lang": "zh-CN",
        "contents": "目录",
        "back": "↑ 目录",
        "separator": "，",
        "output-of": " 的实跑输出",  # after the program's name, in its link
        "matched": "{count} 个对上了 {link}",
        "summary": "正文里要核对的数字有 {count} 个：{verified}（{parts}）",
        "verified": "{count} 个核对过",
        "book": "，{count} 个{marked}（列在 {file} 里）",
        "marked-book": "标成原书的",
        "counts": "；核对过的数字里有 {count} 个是一位数或跟着量词的计数，不链到某一行",
        "declared": "；{count} 个是程序声明的设置（不链到实跑输出）",
        "stated": "；{count} 个是正文自己说的数（定义、例子、选定的个数），在 {file} 里逐个写明，不链到实跑输出",
        "in-formulas": "；其中 {count} 个写在公式里，没有链接",
        "failed": "；{failed}（{command} 会报错）",
        "not-matched": "{count} 个没有对上",
        "how-to-read": "。点正文里带下划线的数字，跳到印出它的那一行实跑输出。只有年份和章节号（「2017 年」「6.5 节」）不用核对；"
                       "跟着量词的整数（「3000 轮」）若没有印出来，可以是程序声明的设置（{setting} 这样的大写名字）。{rules}"
                       "本页由 {weave} 从 {lesson} 生成。",
        "rules": "规则见 docs/numbers.md。",
        "defined-at": "定义在 {where}",
        "part-of": "第 {number} 段，共 {count} 段",
        "previous": "← 上一段",
        "next": "下一段 →",
        "in-source": "{where}（在源文件里的位置）",
        "used-in": "用在 → {links}",
        "made-of": "依次拼成 {label}：",
        "at-line": "（第 {line} 行）",
        "try": "试一试",
        "playground": "读者的试验场：用的是 {program} 定义的名字，改了再运行（笔记本里这一格可以直接运行）；它的输出不核对",
        "output": "实跑输出",
        "output-colon": "：",
        "heatmap": "{target} 的实跑输出里的矩阵（{where} 起）画成的热图，颜色是权重为均匀的几倍",
        "compared-parts": "{where}：程序的标准输出，{command} 重新运行程序，和各段连起来逐字节比对",
        "compared-part": "{where}：程序的标准输出，{command} 重新运行程序，和这一段逐字节比对",
        "image": "［图：{alt}］",
        "number-book": "原书的数字（列在 {file} 里），不是本仓库的程序打印的",
        "number-declared": "{program} 声明的设置（一个大写名字的值），不链到实跑输出",
        "number-setting": "{program} 声明的设置 {name} 的值，不链到实跑输出",
        "number-stated": "正文自己说的数，不引实跑输出（{stated}）",
        "number-count": "核对过：{program} 的实跑输出在这里引的那几段里印着它（一位数和跟着量词的计数，不链到某一行）",
        "number-missing": "没有核对上：{program} 的实跑输出里没有它",
        "number-no-output": "没有核对上：{lesson} 里没有实跑输出",
        "number-rounded": "；{number} 是它四舍五入的结果",
        "number-quoted": "出自 {program} 的实跑输出（{lesson} 第 {line} 行{rounded}）：{quoted}",
    },
    "en": {
        "html-lang": "en",
        "contents": "Contents",
        "back": "↑ Contents",
        "separator": ", ",
        "output-of": "’s output",
        "matched": "{count} against {link}",
        "summary": "Numbers in the prose: {count}; {verified} ({parts})",
        "verified": "verified: {count}",
        "book": "; {marked}: {count} (listed in {file})",
        "marked-book": "marked as the book’s",
        "counts": "; of the verified, single digits and counts before a measure word (linked to no one line): {count}",
        "declared": "; settings the program declares (not linked to the output): {count}",
        "stated": "; numbers the prose states itself (definitions, examples, chosen counts), each named in {file} and "
                  "not linked to the output: {count}",
        "in-formulas": "; of these, in formulas and without a link: {count}",
        "failed": "; {failed} ({command} reports them)",
        "not-matched": "not matched: {count}",
        "how-to-read": ". Click an underlined number in the prose to jump to the line of output that printed it. Only "
                       "years, chapters and sections (“in 2017”, “section 6.5”) are not checked; a whole number before "
                       "a measure word (“3000 rounds”) that is not printed may be a setting the program declares (an "
                       "upper-case name such as {setting}). {rules}This page was made by {weave} from {lesson}.",
        "rules": "The rules are in docs/numbers.md. ",
        "defined-at": "defined at {where}",
        "part-of": "part {number} of {count}",
        "previous": "← previous part",
        "next": "next part →",
        "in-source": "{where} (its place in the source)",
        "used-in": "used in → {links}",
        "made-of": "{label} is made of, in order:",
        "at-line": "(line {line})",
        "try": "Try it",
        "playground": "— a playground for the reader: it uses the names {program} defines; change it and run it "
                      "again (in the notebook, this cell can be run); its output is not checked",
        "output": "Output",
        "output-colon": ":",
        "heatmap": "the matrices in {target}’s output (from {where}) drawn as heatmaps; a cell’s colour says how many "
                   "times the even weight its weight is",
        "compared-parts": "{where}: the program’s standard output; {command} runs the program again and "
                          "compares what it prints, byte for byte, with the parts joined",
        "compared-part": "{where}: the program’s standard output; {command} runs the program again and "
                         "compares what it prints, byte for byte, with what stands here",
        "image": "[figure: {alt}]",
        "number-book": "the book’s number (listed in {file}), not printed by this lesson’s programs",
        "number-declared": "a setting {program} declares (the value of an upper-case name), not linked to the output",
        "number-setting": "the value of the setting {name} that {program} declares, not linked to the output",
        "number-stated": "a number the prose states itself, quoting no output ({stated})",
        "number-count": "verified: the parts of {program}’s output quoted here print it (a single digit or a count "
                        "before a measure word is linked to no one line)",
        "number-missing": "not verified: {program}’s output does not print it",
        "number-no-output": "not verified: {lesson} has no output",
        "number-rounded": "; rounded here to {number}",
        "number-quoted": "from {program}’s output ({lesson}, line {line}{rounded}): {quoted}",
    },
}


def say(page: Page, key: str, **parts) -> Markup:
    """The page's words for key, as HTML, its {fields} filled in with parts."""
    return fill(WORDS[page.doc.language][key], **parts)


def plain(page: Page, key: str, **parts) -> str:
    """The page's words for key, as text (for a tooltip, an attribute's value), its {fields} filled in with text:
    HTML in an attribute would be shown as its tags (a mistake of the tools' own: ValueError)."""
    if any(isinstance(part, Markup) for part in parts.values()):
        raise ValueError(f"{key}: an attribute's words are text; a part is HTML")
    return WORDS[page.doc.language][key].format(**parts)
