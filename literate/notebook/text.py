"""The lesson's Markdown as the notebook's cells hold it: its lines as the reader read them, formulas written the
way Jupyter wants ($`...`$ as $...$, a ```math fence as $$...$$), the prose held to the page's vocabulary, and
each caption's anchor as an id JupyterLab keeps."""

from __future__ import annotations

import hashlib
import html
import re
from urllib.parse import unquote

from .. import blocks, model
from ..formulas import GITHUB_MATH, code_spans
from ..inline import safe_url, without_comments

ALLOWED_TAG = re.compile(r'<a\s+name="(?:chunk|file|output)-[^"<>]*"\s*>|</a>|</?details>|</?summary>', re.I)
TAG_LIKE = re.compile(r"<(?=[A-Za-z/!?])")  # where a tag, comment or declaration would start
LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(\s*(<[^>\n]*>|(?:[^()\s]|\([^()\s]*\))*)(?:\s+\"[^\"\n]*\")?\s*\)")  # [t](url)
CAPTION_LINK = re.compile(r"\]\(#((?:chunk|file|output)-[^)\s]*)\)")  # [text](#chunk-...) in prose


def lesson_lines(doc: model.Document) -> list[str]:
    """The Markdown's lines as tangle.py read them, with the formulas written the way Jupyter wants, and the
    prose held to the page's vocabulary (vocabulary): HTML comments dropped, other raw HTML shown as text."""
    lines = list(doc.lines)
    in_fence = set()
    for event, block, _ in blocks.walk(doc.blocks):
        start, end = block.line - 1, block.end
        if event != "open":
            continue
        if isinstance(block, blocks.CodeBlock):  # indented code: shown as written, like a fence
            in_fence.update(range(start, end))
        elif isinstance(block, blocks.Fence):
            in_fence.update(range(start, end))
            if block.info.strip() == "math":  # ```math ... ``` -> $$ ... $$
                lines[start], lines[end - 1] = "$$", "$$"
        elif isinstance(block, blocks.HtmlBlock) and block.html.lstrip().startswith("<!--"):
            lines[start:end] = [""] * (end - start)  # invisible on GitHub and on the page: not in the notebook
    return [line if number in in_fence else GITHUB_MATH.sub(r"$\1$", vocabulary(line))
            for number, line in enumerate(lines)]


def vocabulary(line: str) -> str:
    """A line of prose built like the page's: outside code spans, HTML comments are dropped, a tag other than
    the captions' <a name>, <details> and <summary> is shown as text (its < escaped), a link goes only to
    #fragments, relative paths, http(s) and mailto, and an image becomes a link to it (never loaded)."""
    pieces, position = [], 0
    for start, end in [*code_spans(line), (len(line), len(line))]:
        outside = LINK.sub(safe_link, without_comments(line[position:start]))
        escaped, cursor = [], 0
        for match in TAG_LIKE.finditer(outside):
            escaped.append(outside[cursor : match.start()] + ("<" if ALLOWED_TAG.match(outside, match.start()) else "&lt;"))
            cursor = match.start() + 1
        pieces += ["".join(escaped), outside[cursor:], line[start:end]]
        position = end
    return "".join(pieces)




def safe_link(match: re.Match) -> str:
    """A Markdown link kept if the page would keep it (inline.safe_url), else its text and why; an image a link."""
    image, label, url = match[1], match[2], match[3]
    url = url[1:-1] if url.startswith("<") else url
    safe = safe_url(url) is not None
    if image:
        return f"[图片：{label}]({url})" if safe and url else f"图片：{label}"
    return match[0] if safe else f"{label}（链接去掉了：只链到页内、相对路径、http(s) 和 mailto）"


def jupyter_id(anchor: str) -> str:
    """The id a caption's anchor gets in the notebook: JupyterLab's sanitizer drops <a name> and every id that
    is not ASCII (chunk-训练_循环 would lead nowhere), so the kind, then a short hash of the anchor."""
    kind = anchor.partition("-")[0]
    return f"{kind}-{hashlib.sha256(anchor.encode()).hexdigest()[:12]}"


def jupyter_anchors(text: str) -> str:
    """Markdown with each caption's <a name="..."> as <a id="..."> and each link to one rewritten to match
    (jupyter_id), so that every link to a caption lands, in JupyterLab as on GitHub."""
    text = model.CAPTION_ANCHOR.sub(lambda match: f'<a id="{jupyter_id(html.unescape(match[1]))}">', text)
    return CAPTION_LINK.sub(lambda match: f"](#{jupyter_id(unquote(match[1]))})", text)
