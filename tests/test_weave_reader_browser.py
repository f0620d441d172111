"""The page a reader bookmarks, measured in headless Chromium at a phone's width (390 px) and a laptop's
(1280 px), each twice: with the CJK monospace fonts installed, and with them hidden through fontconfig (then
Chinese falls back to a proportional font, as with Liberation Mono + Noto Sans CJK, Menlo + PingFang).

A copy of the page with a measuring script added (the page itself has none) writes its results into the page,
which --dump-dom prints. Screenshots of the top of the page at both widths go to build/ (not committed).
Skipped without chromium, as test_weave_browser.py is (and failed instead under CI)."""

import functools
import http.server
import json
import os
import re
import subprocess
import threading
from pathlib import Path

import pytest

pytest.importorskip("latex2mathml", reason="weave.py needs latex2mathml: make test installs requirements-html.txt")

from conftest import chromium  # noqa: E402
from literate.page import command as weave  # noqa: E402  (weave.py's main)

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = chromium()

MONO_CJK = ["Noto Sans Mono CJK SC", "Noto Sans Mono CJK TC", "Noto Sans Mono CJK JP", "Noto Sans Mono CJK KR",
            "Noto Sans Mono CJK HK", "Sarasa Mono SC", "Sarasa Mono TC", "Sarasa Mono J", "Sarasa Mono K"]
HIDE_MONO_CJK = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <selectfont><rejectfont>{patterns}</rejectfont></selectfont>
</fontconfig>
""".format(patterns="".join(f'<pattern><patelt name="family"><string>{name}</string></patelt></pattern>'
                            for name in MONO_CJK))

# Runs once the page has loaded; its results go into <pre id="reader-result"> for --dump-dom.
PROBE = r"""
<script>
window.addEventListener("load", () => {
  const r = {width: innerWidth, pageScroll: document.documentElement.scrollWidth - innerWidth, scrollers: [],
             sticking: [], lines: 0, starts: 0, worst: 0, worstAt: "", copied: 0, copyWrong: [], cells: [],
             delimiters: [], numbers: 0, numberWrong: [], contents: ""};
  // 0. unfold what the lesson folds (big matrices): every check below covers it too, as a reader who opens it sees it
  for (const d of document.querySelectorAll("details")) d.open = true;
  // 1. sideways: only a code or transcript box, a table or a formula may scroll; nothing else sticks out
  const boxes = "pre, table, .math";
  for (const el of document.querySelectorAll("main *, #contents *")) {
    if (el.closest("svg, math") || el.closest("details:not([open])")) continue;
    const style = getComputedStyle(el);
    if (el.scrollWidth > el.clientWidth + 1 && /auto|scroll/.test(style.overflowX) && !el.matches(boxes))
      r.scrollers.push(el.tagName + "." + el.className);
    const box = el.getBoundingClientRect();
    if (box.width && box.right > innerWidth + 1 && !el.closest(boxes) && style.position !== "fixed")
      r.sticking.push(el.tagName + "." + el.className + " " + Math.round(box.right));
  }
  // 2. columns: every token of every transcript line starts at (its column) x ch from the line's start
  const wide = /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/;
  for (const pre of document.querySelectorAll("pre.output")) {
    const probe = document.createElement("span");
    probe.textContent = "0".repeat(100);
    pre.appendChild(probe);
    const ch = probe.getBoundingClientRect().width / 100;
    probe.remove();
    for (const line of pre.querySelectorAll(".l")) {
      const start = line.getBoundingClientRect();
      if (!start.width) continue;
      r.lines++;
      const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
      let column = 0, previous = " ", node;
      const left = start.left + parseFloat(getComputedStyle(line).paddingLeft);
      while ((node = walker.nextNode())) {
        for (let i = 0; i < node.data.length; i++) {
          const c = node.data[i];
          if (c !== " " && c !== "\n" && previous === " ") {
            const range = document.createRange();
            range.setStart(node, i); range.setEnd(node, i + 1);
            const off = Math.abs(range.getBoundingClientRect().left - (left + column * ch));
            r.starts++;
            if (off > r.worst) { r.worst = off; r.worstAt = line.id + " column " + column + " " + c; }
          }
          previous = c;
          column += wide.test(c) ? 2 : 1;
        }
      }
      // 3. copying the line gives its bytes
      const selection = getSelection();
      selection.selectAllChildren(line);
      r.copied++;
      if (selection.toString().replace(/\n$/, "") !== line.textContent.replace(/\n$/, ""))
        r.copyWrong.push(line.id);
      selection.removeAllRanges();
    }
  }
  // 4. heatmaps: each cell's multiple of uniform and colour, in every picture and legend
  const seen = new Set();
  for (const cell of document.querySelectorAll("svg rect[data-multiple]")) {
    const key = cell.dataset.multiple + " " + cell.getAttribute("fill");
    if (!seen.has(key)) { seen.add(key); r.cells.push([+cell.dataset.multiple, cell.getAttribute("fill")]); }
  }
  // 5. the display formulas' stretchy brackets: taller than a line of their text
  for (const mo of document.querySelectorAll('math[display="block"] mo[stretchy="true"]')) {
    const size = parseFloat(getComputedStyle(mo).fontSize);
    r.delimiters.push([mo.textContent, mo.getBoundingClientRect().height, size]);
  }
  // 6. a number link lands on the number itself, highlighted
  for (const a of [...document.querySelectorAll("a.num")].slice(0, 60)) {
    r.numbers++;
    const target = document.getElementById(a.getAttribute("href").slice(1));
    location.hash = a.getAttribute("href");
    const colour = target && getComputedStyle(target).backgroundColor;
    // the number itself, or for a rounded quote (0.41) the printed number it rounds (0.4102)
    const decimals = (a.textContent.split(".")[1] || "").length;
    const same = target && (target.textContent === a.textContent || (target.textContent.startsWith(a.textContent.slice(0, -1))
        && Math.abs(parseFloat(target.textContent) - parseFloat(a.textContent)) <= 0.5 * 10 ** -decimals + 1e-9));
    if (!target || document.querySelector(":target") !== target || !same
        || !target.classList.contains("n") || colour === "rgba(0, 0, 0, 0)")
      r.numberWrong.push(a.textContent + " " + a.getAttribute("href") + " " + colour);
  }
  location.hash = "";
  // 7. a display formula never overflows its box up or down (which showed a scrollbar under one that fits);
  //    one wider than the text scrolls sideways, and only then
  r.mathScroll = [];
  r.mathWide = 0;
  for (const el of document.querySelectorAll(".math")) {
    if (el.scrollHeight > el.clientHeight)
      r.mathScroll.push(`${el.textContent.slice(0, 20)}: ${el.scrollWidth}x${el.scrollHeight} in ${el.clientWidth}x${el.clientHeight}`);
    r.mathWide += el.scrollWidth > el.clientWidth;
  }
  const contents = document.getElementById("contents");
  r.contents = getComputedStyle(contents).position;
  r.height = document.documentElement.scrollHeight;
  const top = window.parent.document;  // a phone's width is an iframe's (headless windows are 500 px at least)
  const out = top.createElement("pre");
  out.id = "reader-result";
  out.textContent = JSON.stringify(r);
  top.body.appendChild(out);
});
</script>
"""

SETTINGS = [(390, True), (390, False), (1280, True), (1280, False)]
NAMES = [f"{width}px, {'CJK monospace fonts' if present else 'CJK monospace fonts hidden'}"
         for width, present in SETTINGS]


def chromium(tmp: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               "--disable-dev-shm-usage", "--mute-audio", f"--user-data-dir={tmp / 'profile'}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


FRAME = """<!DOCTYPE html><html><head><style>body {{ margin: 0; }} iframe {{ border: 0; display: block; }}</style>
</head><body><iframe src="{page}" width="{width}" height="{height}"></iframe></body></html>"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The pages over http from one folder, so that the frame and its page share an origin."""
    folder = tmp_path_factory.mktemp("served")
    handler = functools.partial(Quiet, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield folder, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def woven(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("reader")
    page = tmp / "attention.html"
    assert weave.main([str(ROOT / "attention.md"), "-o", str(page)]) == 0
    (tmp / "hide-mono-cjk.conf").write_text(HIDE_MONO_CJK)
    return page


@pytest.fixture(scope="module", params=SETTINGS, ids=NAMES)
def reader(request, woven, server):
    width, present = request.param
    tmp = woven.parent / f"{width}-{'present' if present else 'hidden'}"
    tmp.mkdir()
    env = dict(os.environ)
    if not present:
        env["FONTCONFIG_FILE"] = str(woven.parent / "hide-mono-cjk.conf")
        listed = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True, env=env).stdout
        assert "Mono CJK" not in listed, "fontconfig did not hide the CJK monospace fonts"
    folder, base = server
    name = f"{width}-{'present' if present else 'hidden'}"
    (folder / f"{name}-probe.html").write_text(woven.read_text().replace("</body>", PROBE + "</body>"))
    (folder / f"{name}.html").write_text(woven.read_text())
    for page, height in ((f"{name}-probe", 900), (f"{name}-shot", 2400)):
        (folder / f"{page}-frame.html").write_text(FRAME.format(page=f"{name}-probe.html" if page.endswith("probe")
                                                                else f"{name}.html", width=width, height=height))
    run = chromium(tmp, env, "--dump-dom", "--virtual-time-budget=30000", f"--window-size={max(width, 500)},900",
                   f"{base}/{name}-probe-frame.html")
    match = re.search(r'<pre id="reader-result">(.*?)</pre>', run.stdout, re.S)
    assert match, run.stderr[-2000:]
    results = json.loads(match[1].replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    shot = ROOT / "build" / f"reader-{width}px{'' if present else '-no-mono-cjk'}.png"
    shot.parent.mkdir(exist_ok=True)
    chromium(tmp, env, f"--screenshot={shot}", "--virtual-time-budget=5000", f"--window-size={max(width, 500)},2400",
             f"{base}/{name}-shot-frame.html")
    return width, present, results


def test_only_code_transcript_table_and_formula_boxes_scroll_sideways(reader):
    width, _, r = reader
    assert r["width"] == width
    assert r["pageScroll"] <= 0, "the page itself scrolls sideways"
    assert r["scrollers"] == [] and r["sticking"] == []


def test_transcript_columns_line_up_whatever_the_fonts(reader):
    _, _, r = reader
    assert r["lines"] > 300 and r["starts"] > 2000
    assert r["worst"] <= 1, r["worstAt"]


def test_copying_a_transcript_line_gives_its_bytes(reader):
    _, _, r = reader
    assert r["copied"] == r["lines"] and r["copyWrong"] == []


def luminance(fill: str) -> float:
    red, green, blue = (int(fill[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def test_every_heatmap_uses_one_scale_by_multiple_of_uniform(reader):
    _, _, r = reader
    by_multiple: dict[float, set[str]] = {}
    for multiple, fill in r["cells"]:
        by_multiple.setdefault(round(multiple, 3), set()).add(fill)
    assert len(by_multiple) > 20
    assert all(len(fills) == 1 for fills in by_multiple.values()), "one multiple, two colours"
    colour = {multiple: fills.pop() for multiple, fills in by_multiple.items()}
    # darker the larger the multiple, from a quarter of uniform to eight times it: in greyscale the order holds
    inside = sorted(m for m in colour if 0.25 <= m <= 8)
    shades = [luminance(colour[m]) for m in inside]
    assert all(a >= b - 1e-9 for a, b in zip(shades, shades[1:])), inside
    # uniform a light grey (no hue), above it warm then purple
    red, green, blue = (int(colour[min(colour, key=lambda m: abs(m - 1))][i : i + 2], 16) for i in (1, 3, 5))
    assert max(red, green, blue) - min(red, green, blue) < 8
    # the book's setting (about 1.1x at most) is pale, the formed diagonal (about 6x) dark: on one scale
    assert luminance(colour[min(inside, key=lambda m: abs(m - 1.1))]) > 0.8
    assert luminance(colour[max(inside)]) < 0.3


def test_the_display_formulas_brackets_are_stretched(reader):
    _, _, r = reader
    assert r["delimiters"], "no stretchy bracket in a display formula"
    for text, height, size in r["delimiters"]:
        assert height > 1.5 * size, (text, height, size)


def test_a_number_link_highlights_the_number_itself(reader):
    _, _, r = reader
    assert r["numbers"] == 60 and r["numberWrong"] == []


def test_contents_beside_the_text_on_a_wide_screen_only(reader):
    width, _, r = reader
    assert r["contents"] == ("fixed" if width >= 1280 else "static")


def test_the_page_has_dark_and_print_styles_and_no_script(woven):
    page = woven.read_text()
    assert "@media (prefers-color-scheme: dark)" in page and "@media print" in page
    assert "<script" not in page and "view-timeline-name" in page
    assert 'math { font-family: "STIX Two Math"' in page


def test_a_display_formula_that_fits_shows_no_scrollbar(reader):
    width, _, r = reader
    assert r["mathScroll"] == []
    if width >= 1280:
        assert r["mathWide"] == 0  # (on a phone, a long one scrolls sideways)

