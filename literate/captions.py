"""Captions above fences (<a name> + bold title + links to included chunks) and the $...$ maths check."""

from __future__ import annotations

import difflib
import html
import re
from urllib.parse import unquote

from . import blocks
from .blocks import Role
from .inline import caption_of
from .model import (Caption, Document, MAX_SUGGESTIONS, OWN_LINK, Source, chunk_anchor, chunk_name, output_anchor,
                    references, root_anchor)


def find_captions(tokens: list) -> list[Caption]:
    """Every caption paragraph of the parser's tokens, with the fence just below it (at the same level, a blank
    line between is fine)."""
    captions = []
    for index, token in enumerate(tokens):
        if token.type != "inline" or not index or tokens[index - 1].type != "paragraph_open":
            continue
        found = caption_of(token)
        if found is None:
            continue
        opening = tokens[index - 1]
        after = tokens[index + 2] if index + 2 < len(tokens) else None
        below = (after.map[0] + 1 if after is not None and after.type == "fence" and after.map
                 and after.level == opening.level else None)
        captions.append(Caption(opening.map[0] + 1, *found, below))
    return captions


def own_links(tokens: list) -> list[tuple[int, str]]:
    """(md line, anchor) of every link to a caption's anchor (#chunk-..., #file-..., #output-...)."""
    found = []
    for token in tokens:
        if token.type != "inline" or not token.map:
            continue
        line = token.map[0] + 1
        for child in token.children or []:
            if child.type in ("softbreak", "hardbreak"):
                line += 1
            elif child.type == "link_open":
                target = OWN_LINK.fullmatch(unquote(child.attrs.get("href", "")))
                if target:
                    found.append((line, target[1]))
            else:
                line += child.content.count("\n") if child.type != "text" else 0
    return found


# What Markdown would read as markup in a caption's text (emphasis, code, links, HTML, character references, the
# page's formulas) and in a link's target (its end, HTML, references); a backslash makes each a character.
TEXT_MARKUP = re.compile(r"([\\`*_\[\]<&$~])")
TARGET_MARKUP = re.compile(r"([\\()<>&])")


# The words of a caption, in the lesson's language (language.py)
CAPTION_WORDS = {
    "zh": {"output": "〈{name}〉的实跑输出", "part": "（第 {part} 段）", "continued": "（续）",
           "includes": "，由这些代码块依次拼成：", "and": "、"},
    "en": {"output": "output of 〈{name}〉", "part": " (part {part})", "continued": " (continued)",
           "includes": ", made of these chunks in order: ", "and": ", "},
}


def caption_markdown(anchor: str, title: str, includes: list[str] | None, language: str) -> str:
    """The caption a fence should have, as Markdown (what the messages tell the writer to put there): names written
    so that they read back as themselves ({#a*b*c} is **〈a\\*b\\*c〉**, not emphasis)."""
    words = CAPTION_WORDS[language]
    text = f'<a name="{html.escape(anchor)}"></a>**{as_text(title)}**'
    if includes:
        text += words["includes"] + words["and"].join(f"[〈{as_text(name)}〉](#{as_target(chunk_anchor(name))})"
                                                      for name in includes)
    return text


def as_text(text: str) -> str:
    return TEXT_MARKUP.sub(r"\\\1", text)


def as_target(anchor: str) -> str:
    """An anchor as a link's target: its markup escaped, and a % as %25 (a link is read percent-decoded)."""
    return TARGET_MARKUP.sub(r"\\\1", anchor.replace("%", "%25"))


def expected_captions(doc: Document) -> dict[int, tuple[str, str, str, list[str] | None]]:
    """fence line -> (the fence as written, anchor, title, the chunks it includes in order or None) for every
    fence that tangle reads: pieces of chunks and roots, and transcripts (or their parts)."""
    expected, words = {}, CAPTION_WORDS[doc.language]
    for fence in blocks.fences(doc.blocks):
        name, index, piece = fence.label, fence.index, fence.piece
        if fence.role is Role.TRANSCRIPT:
            label = f"{{transcript={name}" + (f" part={piece.part}" if piece.part else "") + "}"
            title = words["output"].format(name=name) + (words["part"].format(part=piece.part) if piece.part else "")
            expected[fence.line] = (label, output_anchor(name, piece.part), title, None)
        elif fence.role in (Role.CHUNK, Role.ROOT):
            label, anchor = (f"{{#{name}}}", chunk_anchor) if fence.role is Role.CHUNK else (f"{{file={name}}}",
                                                                                              root_anchor)
            includes = [included for _, included in references([piece])]
            expected[fence.line] = (label, anchor(name, index + 1), f"〈{name}〉" + (words["continued"] if index else ""),
                                    includes)
    return expected


def caption_problems(doc: Document, source: Source) -> list[tuple[int, str]]:
    """Captions (find_captions, in source.captions; those above a fence are in doc.captions too) that do not name the
    fence below them. A document that has no caption needs none; one that has any needs one above every chunk, root
    and transcript fence, and its links must lead somewhere."""
    captions = source.captions
    if not captions:
        return []
    problems = []
    expected = expected_captions(doc)
    for caption in captions:
        if caption.fence_line is None:
            problems.append((caption.line, f'caption <a name="{caption.anchor}"> stands above no code fence; a '
                             "caption goes on the line just above the fence it names (its fence gone? delete it)"))
        elif caption.fence_line not in expected:
            problems.append((caption.line, f'caption <a name="{caption.anchor}"> stands above a fence that is no '
                             "chunk, root or transcript (only those take captions); delete it"))
    for line, (label, anchor, title, includes) in sorted(expected.items()):
        caption = doc.captions.get(line)
        wanted = caption_markdown(anchor, title, includes, doc.language)
        if caption is None:
            problems.append((line, f"{label} has no caption (the other fences of {doc.path.name} have one); put "
                             f"this line just above the fence: {wanted}"))
        elif (caption.anchor, caption.title) != (anchor, chunk_name(title)):
            said = (f'<a name="{caption.anchor}"> and **{caption.title}**' if caption.title else
                    f'<a name="{caption.anchor}"> and no **bold** name (a ** right after 〉 ends the bold only '
                    "before a blank or punctuation: write **〈…〉** alone, or follow it with ，)")
            problems.append((caption.line, f"the caption says {said}, but the fence below it is {label} (renamed "
                             f"it? rename the caption too); write: {wanted}"))
        elif includes is not None:
            linked = [link for link in caption.links if link.startswith("chunk-")]
            if linked != [chunk_anchor(name) for name in includes]:
                now = "、".join(f"#{link}" for link in linked) or "nothing"
                should = "、".join(f"〈{name}〉" for name in includes) or "nothing"
                problems.append((caption.line, f"the caption of {label} links {now}, but the fence includes "
                                 f"{should}, in this order; write: {wanted}"))
    anchors = {caption.anchor for caption in captions}
    for line, anchor in own_links(source.tokens):
        if anchor not in anchors:
            near = difflib.get_close_matches(anchor, sorted(anchors), n=1) if len(problems) < MAX_SUGGESTIONS else []
            problems.append((line, f"the link to #{anchor} leads nowhere: no caption has <a name=\"{anchor}\">"
                             + (f"; did you mean #{near[0]}?" if near else "")))
    return problems


def math_warnings(doc: Document) -> list[str]:
    """Formulas that GitHub would mangle: $$...$$ and $...$ in text go through Markdown, which eats \\, and \\!
    and reads _ as emphasis. A ```math fence and $`...`$ reach the formula renderer untouched. What counts as a
    formula is the page's rule (formulas.py): every formula the page typesets from dollars is warned about."""
    warnings: dict[str, None] = {}  # one a line and kind
    for inline in blocks.texts(doc.blocks):
        if not inline.line:  # a table cell the parser gives no line
            continue
        for offset, _, display in inline.formulas:
            line = inline.line + inline.source.count("\n", 0, offset)
            what, fix = (("$$...$$", "a ```math fence") if display
                         else ("$...$", "$`...`$ (a code span between the dollars)"))
            warnings[f"{doc.where(line)}: warning: a formula in {what}: Markdown escapes mangle it on GitHub; "
                     f"write it as {fix}"] = None
    return list(warnings)
