"""The page in a real browser: Debian's headless chromium loads build output of weave.py and checks what a
reader gets. A copy of the page with a script added measures it and writes the results into the page,
which --dump-dom prints; --screenshot takes the whole page, decoded below with zlib (no imaging library).

Without chromium these tests are skipped (apt-get install chromium fonts-noto-cjk); under CI (CI set)
they fail instead, so that CI never passes without having run them.
"""

import json
import os
import re
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

pytest.importorskip("latex2mathml", reason="weave.py needs latex2mathml: make test installs requirements-html.txt")

from conftest import chromium  # noqa: E402
from literate.page import command as weave  # noqa: E402  (weave.py's main)

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = chromium()
WIDTH = 1280  # CSS pixels

# Runs once the page has loaded; its results go into <pre id="weave-result"> for --dump-dom.
PROBE = r"""
<script>
window.addEventListener("load", () => {
  const r = {links: 0, missing: [], hidden: [], numbers: 0, numberMismatch: [], landing: [],
             maths: 0, mathEmpty: [], mathNotLaidOut: [], fractions: 0, fractionsWrong: 0, heatmaps: [],
             columns: {}, height: 0};
  const visible = el => {
    if (!el || (el.checkVisibility && !el.checkVisibility())) return false;
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  };
  const target = a => document.getElementById(decodeURIComponent(a.getAttribute("href").slice(1)));
  const folded = [];
  for (const a of document.querySelectorAll('a[href^="#"]')) {
    r.links++;
    const t = target(a);
    if (!t) r.missing.push(a.getAttribute("href"));
    else if (t.closest("details:not([open])")) folded.push(a);   // the lesson folds big matrices
    else if (!visible(t)) r.hidden.push(a.getAttribute("href"));
  }
  // A link into folded numbers must unfold them: the browser opens a closed <details> when the
  // fragment it navigates to lies inside. Follow each such link as a click does, then fold again.
  r.unfolded = 0;
  for (const a of folded) {
    const t = target(a);
    location.hash = "";                       // the same fragment twice would not navigate again
    location.hash = a.getAttribute("href");
    if (visible(t)) r.unfolded++; else r.hidden.push(a.getAttribute("href"));
    for (const d of document.querySelectorAll("details[open]")) d.open = false;
  }
  location.hash = "";
  const highlight = getComputedStyle(document.body).getPropertyValue("--mark").trim();
  for (const a of document.querySelectorAll("a.num")) {
    r.numbers++;
    const t = target(a);
    // the number itself, or the printed number that a rounded quote (0.41 for 0.4102) stands for
    const decimals = (a.textContent.split(".")[1] || "").length;
    const printed = t && parseFloat(t.textContent.replace(/[^0-9.+-]/g, ""));
    const rounds = t && Math.abs(Math.abs(printed) - parseFloat(a.textContent)) <= 0.5 * 10 ** -decimals + 1e-9;
    if (!t || !(t.textContent.includes(a.textContent) || rounds)) { r.numberMismatch.push(a.textContent + " " + a.getAttribute("href")); continue; }
    // Chromium ignores more than 200 navigations in 10 s ("throttling navigation"): follow the first 150
    if (r.numbers > 150) continue;
    location.hash = a.getAttribute("href");  // what a click does
    const arrived = document.querySelector(":target"), box = t.getBoundingClientRect();
    const colour = getComputedStyle(t).backgroundColor;
    if (arrived !== t || box.top < 0 || box.bottom > innerHeight || colour === "rgba(0, 0, 0, 0)")
      r.landing.push([a.textContent, a.getAttribute("href"), arrived && arrived.id, Math.round(box.top), colour]);
  }
  r.highlight = highlight;
  for (const m of document.querySelectorAll("math")) {
    r.maths++;
    if (!visible(m) && !m.closest("details:not([open])")) r.mathEmpty.push(m.outerHTML.slice(0, 120));
    const display = getComputedStyle(m).display;
    if (!/math/.test(display)) r.mathNotLaidOut.push(display);
  }
  for (const f of document.querySelectorAll("mfrac")) {  // laid out as a fraction: numerator above denominator
    r.fractions++;
    const [top, bottom] = [...f.children].map(c => c.getBoundingClientRect());
    if (!(top.bottom <= bottom.top + 1 && top.height > 0 && bottom.height > 0)) r.fractionsWrong++;
  }
  for (const panel of document.querySelectorAll("svg g.panel")) {
    const cells = [...panel.querySelectorAll("rect.cell")], svg = panel.closest("svg");
    r.heatmaps.push({rows: +panel.dataset.rows, columns: +panel.dataset.columns, cells: cells.length,
                     drawn: cells.filter(c => { const b = c.getBoundingClientRect(); return b.width > 5 && b.height > 5; }).length,
                     titled: cells.filter(c => c.querySelector("title") &&
                                              /：[0-9.]+（均匀的 [0-9.e+-]+ 倍）$/.test(c.querySelector("title").textContent)).length,
                     width: Math.round(svg.getBoundingClientRect().width), visible: visible(svg),
                     figure: !!svg.closest("span.figure")});
  }
  // the lesson's figures, drawn where their images stand: each visible, inside the text's width
  r.drawnFigures = [...document.querySelectorAll("span.figure > svg")].map(svg => {
    const box = svg.getBoundingClientRect(), text = svg.closest("p").getBoundingClientRect();
    return {label: svg.getAttribute("aria-label"), visible: visible(svg), width: Math.round(box.width),
            inside: box.left >= text.left - 1 && box.right <= text.right + 1};
  });
  // (every column of every transcript, on any fonts: test_weave_reader_browser.py)
  // the matrices drawn in characters: every row's closing | in the same place
  r.frames = [];
  for (const pre of document.querySelectorAll("pre.output")) {
    const rows = [...pre.querySelectorAll("span.l")].filter(l => /^输出.*\|.*\|\n?$/.test(l.textContent));
    if (!rows.length) continue;
    const ends = rows.map(l => {  // the right edge of the line's last | (its text is split among column boxes)
      const walker = document.createTreeWalker(l, NodeFilter.SHOW_TEXT); let node, last = null;
      while ((node = walker.nextNode())) if (node.data.includes("|")) last = node;
      const range = document.createRange(); const at = last.data.lastIndexOf("|");
      range.setStart(last, at); range.setEnd(last, at + 1); return range.getBoundingClientRect().right; });
    r.frames.push({rows: rows.length, spread: Math.max(...ends) - Math.min(...ends), first: rows[0].id});
  }
  // each fence under its caption: the name written in the Markdown, visible, linking to the figure
  r.figures = [...document.querySelectorAll("figure.chunk, figure.transcript")].map(f => {
    const name = f.querySelector(":scope > figcaption a.name");
    return {id: f.id, name: name ? name.textContent : null, visible: visible(name) || !!f.closest("details:not([open])"),
            self: !!name && decodeURIComponent(name.getAttribute("href")) === "#" + f.id};
  });
  r.overflow = [...document.querySelectorAll("main > *")].filter(e => e.getBoundingClientRect().right > innerWidth + 1).map(e => e.tagName);
  r.height = document.documentElement.scrollHeight;
  // the contents mark the one section being read: each ## section is a view timeline seen through one line near
  // the top of the window, and the sections follow each other with no gap, so the line is in one section at a time
  const entries = [...document.querySelectorAll("#contents > ol > li > a")];
  const sections = [...document.querySelectorAll("main > section")];
  r.sections = {count: [sections.length, entries.length], gaps: [], timelines: [], insets: new Set()};
  sections.forEach((section, k) => {
    const style = getComputedStyle(section), mark = getComputedStyle(entries[k]);
    r.sections.insets.add(style.viewTimelineInset);
    if (style.viewTimelineName !== mark.animationTimeline || !/^--section-/.test(mark.animationTimeline))
      r.sections.timelines.push(`${k}: ${style.viewTimelineName} / ${mark.animationTimeline}`);
    const next = sections[k + 1];
    if (next && Math.abs(next.getBoundingClientRect().top - section.getBoundingClientRect().bottom) > 0.5)
      r.sections.gaps.push(`${k}: ${section.getBoundingClientRect().bottom} to ${next.getBoundingClientRect().top}`);
  });
  r.sections.insets = [...r.sections.insets];
  const out = document.createElement("pre"); out.id = "weave-result"; out.textContent = JSON.stringify(r);
  document.body.append(out);
});
</script>
"""


def chromium(tmp: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--disable-dev-shm-usage",
               "--mute-audio", f"--user-data-dir={tmp / 'profile'}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    out = tmp / "attention.html"
    assert weave.main([str(ROOT / "attention.md"), "-o", str(out)]) == 0
    probe = tmp / "probe.html"
    probe.write_text(out.read_text().replace("</body>", PROBE + "</body>"))
    run = chromium(tmp, "--dump-dom", "--virtual-time-budget=10000", f"--window-size={WIDTH},900", probe.as_uri())
    match = re.search(r'<pre id="weave-result">(.*?)</pre>', run.stdout, re.S)
    assert match, f"chromium printed no result; stderr:\n{run.stderr[-3000:]}"
    results = json.loads(match[1].replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&"))
    return tmp, out, results


def test_the_contents_mark_the_one_section_being_read(page):
    """Brought to each ## heading (as a link in the contents brings it), the contents mark that section alone."""
    _, _, r = page
    sections = r["sections"]
    assert sections["count"][0] == sections["count"][1] > 5  # a <section> for each entry of the contents
    assert sections["timelines"] == [] and sections["gaps"] == []
    [inset] = sections["insets"]  # a line 5rem from the top, one pixel high: one section under it at a time
    assert inset.startswith("80px ") and "100%" in inset, inset


def test_every_in_page_link_reaches_a_visible_element(page):
    _, _, r = page
    assert r["links"] > 300
    assert r["missing"] == [] and r["hidden"] == []   # a link into a fold counts as hidden unless it opens it


UNFOLD_PROBE = """
<script>
window.addEventListener("load", () => {
  const r = {folded: 0, unfolded: 0};
  for (const a of document.querySelectorAll('a[href^="#"]')) {
    const t = document.getElementById(decodeURIComponent(a.getAttribute("href").slice(1)));
    if (!t || !t.closest("details:not([open])")) continue;
    r.folded++;
    location.hash = "";                       // the same fragment twice would not navigate again
    location.hash = a.getAttribute("href");   // what a click does
    const box = t.getBoundingClientRect();
    if (box.width > 0 && box.height > 0) r.unfolded++;
    for (const d of document.querySelectorAll("details[open]")) d.open = false;
  }
  const out = document.createElement("pre"); out.id = "weave-result"; out.textContent = JSON.stringify(r);
  document.body.append(out);
});
</script>
"""


def test_a_link_into_folded_output_opens_the_fold(tmp_path):
    """A number whose transcript line is folded into <details> (a proof one click away): following its link shows it."""
    md = tmp_path / "lesson.md"
    md.write_text("# 课\n\n准确率 0.9300，另一个 1.2345。\n\n<details>\n<summary>输出</summary>\n\n"
                  "```python {file=generated/p.py}\nprint('acc 0.9300 x 1.2345')\n```\n\n"
                  "```text {transcript}\nacc 0.9300 x 1.2345\n```\n\n</details>\n", encoding="utf-8")
    out = tmp_path / "page.html"
    assert weave.main([str(md), "-o", str(out)]) == 0
    probe = tmp_path / "probe.html"
    probe.write_text(out.read_text().replace("</body>", UNFOLD_PROBE + "</body>"))
    run = chromium(tmp_path, "--dump-dom", "--virtual-time-budget=5000", "--window-size=800,900", probe.as_uri())
    match = re.search(r'<pre id="weave-result">(.*?)</pre>', run.stdout, re.S)
    assert match, f"chromium printed no result; stderr:\n{run.stderr[-3000:]}"
    r = json.loads(match[1].replace("&quot;", '"'))
    assert r["folded"] >= 2 and r["unfolded"] == r["folded"], r


def test_each_number_lands_on_a_highlighted_transcript_line_that_prints_it(page):
    _, out, r = page
    assert r["numbers"] == len(re.findall(r'<a class="num"', out.read_text())) > 100
    assert r["numberMismatch"] == []
    assert r["landing"] == [], "links that did not scroll to a highlighted line: " + repr(r["landing"][:5])


def test_formulas_are_laid_out_as_mathml(page):
    _, out, r = page
    assert r["maths"] == out.read_text().count("<math ") > 0
    assert r["mathEmpty"] == [] and r["mathNotLaidOut"] == []
    assert r["fractions"] > 0 and r["fractionsWrong"] == 0


def test_each_heatmap_draws_one_titled_cell_per_weight(page):
    _, _, r = page
    assert len(r["heatmaps"]) >= 3
    for heatmap in r["heatmaps"]:
        n = heatmap["rows"] * heatmap["columns"]
        # a heatmap beside its printed numbers tells each cell's number under the pointer; a figure is the same
        # picture as its file, shown as an image elsewhere (GitHub), where no pointer shows anything: no titles
        titled = 0 if heatmap["figure"] else n
        assert heatmap["cells"] == heatmap["drawn"] == n and heatmap["titled"] == titled and heatmap["visible"], heatmap
        if heatmap["rows"] == heatmap["columns"] == 10:
            assert n == 100
        assert 150 < heatmap["width"] <= 580


def test_each_figure_of_the_lesson_is_drawn_where_its_image_stands(page):
    import literate.figures
    import literate.markdown
    _, _, r = page
    doc = literate.markdown.load(ROOT / "attention.md", "attention.md")
    assert [f["label"] for f in r["drawnFigures"]] == [f.alt for f in literate.figures.lesson_figures(doc)]
    for figure in r["drawnFigures"]:
        assert figure["visible"] and figure["inside"] and 300 < figure["width"] <= 580, figure
    assert sum(heatmap["figure"] for heatmap in r["heatmaps"]) >= 7  # the panels of the figures' heatmaps


def test_transcript_columns_line_up_and_nothing_overflows_the_page(page):
    _, _, r = page
    assert r["overflow"] == []
    # the heatmaps drawn in characters: each a column of rows framed by |, the frames straight;
    # as many on the page as the lesson's transcripts draw (runs of at least 10 framed rows)
    framed = [bool(re.match(r"^输出.*\|.*\|$", line)) for line in (ROOT / "attention.md").read_text(encoding="utf-8").split("\n")]
    runs = re.findall(r"1{10,}", "".join("1" if f else "0" for f in framed))
    assert len(runs) >= 5 and len(r["frames"]) == len(runs), (len(runs), r["frames"])
    assert all(frame["rows"] >= 10 for frame in r["frames"]), r["frames"]
    assert [frame for frame in r["frames"] if frame["spread"] > 1] == []


def test_each_code_chunk_and_transcript_part_stands_under_its_written_caption(page):
    _, out, r = page
    text = out.read_text()
    ids = [figure["id"] for figure in r["figures"]]
    assert len(ids) == len(set(ids)) > 30
    assert sum(1 for i in ids if i.startswith("output-")) >= 10  # the transcripts, in parts
    # visible, or inside a fold the reader opens (a link into it opens it: test_a_link_into_folded_output_opens_the_fold)
    assert [figure for figure in r["figures"] if not (figure["visible"] and figure["self"] and
                                                      figure["name"].startswith("〈"))] == []
    assert "<a name=" not in text


def png_rows(data: bytes) -> tuple[int, int, int, list[bytes]]:
    """A small PNG decoder (8-bit RGB or RGBA, not interlaced): width, height, bytes a pixel, rows."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, idat = 8, []
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind, body = data[position + 4 : position + 8], data[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour_type in (2, 6) and interlace == 0, (depth, colour_type, interlace)
        elif kind == b"IDAT":
            idat.append(body)
    bpp = 3 if colour_type == 2 else 4
    raw, stride = zlib.decompress(b"".join(idat)), width * bpp
    previous, rows = bytearray(stride), []
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, previous, strict=True))
        elif kind == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + previous[i]) // 2) & 255
        elif kind == 4:
            for i in range(stride):
                a, b, c = (line[i - bpp], previous[i], previous[i - bpp]) if i >= bpp else (0, previous[i], 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, bpp, rows


def test_a_full_page_screenshot_is_not_blank(page):
    tmp, out, r = page
    shot = tmp / "page.png"
    # the whole page at half scale (a 640-pixel-wide image), so that decoding it here takes seconds
    chromium(tmp, f"--screenshot={shot}", "--force-device-scale-factor=0.5", f"--window-size={WIDTH},{r['height']}",
             out.as_uri())
    width, height, bpp, rows = png_rows(shot.read_bytes())
    assert width == WIDTH // 2 and abs(height - r["height"] / 2) <= 1, (width, height, r["height"])
    colours = set()
    for row in rows[::7]:
        colours.update(row[i : i + 3] for i in range(0, len(row), bpp * 3))
    assert len(colours) > 200, f"only {len(colours)} colours: a blank page?"
    assert any(blue > red + 40 and blue > green + 20 for red, green, blue in colours), "no blue: no links or heatmaps"
    # every tenth of the page holds something: rows that are not one flat colour
    tenth = height // 10
    for part in range(10):
        band = rows[part * tenth : (part + 1) * tenth]
        varied = sum(1 for row in band[::3] if row.count(row[:bpp]) * bpp != len(row))
        assert varied > len(band[::3]) // 10, f"tenth {part + 1} of the page is nearly blank"


FIGURES_ONLY = """<style>
#contents, #verified, a.back { display: none !important; }
main > section:not(:has(span.figure)), main > h1, main > p { display: none !important; }
main > section > :not(h2):not(p:has(span.figure)) { display: none !important; }
</style>"""


@pytest.mark.parametrize("width", [390, 1280])
def test_the_figures_show_on_the_page_at_a_phones_width_and_a_desktops(page, width):
    """The page with everything but the figures hidden, as the reader's browser draws it: each figure in its
    colours (the scale's darkest purple and its orange: a heatmap, a curve), nothing cut off at the right edge. The
    screenshots are kept in build/ to look at."""
    tmp, out, _ = page
    only = tmp / f"figures-{width}.html"
    only.write_text(out.read_text().replace("</head>", FIGURES_ONLY + "</head>"))
    shot = ROOT / "build" / f"figures-{width}.png"
    shot.parent.mkdir(exist_ok=True)
    chromium(tmp, f"--screenshot={shot}", f"--window-size={width},2600", only.as_uri())
    shown_width, height, bpp, rows = png_rows(shot.read_bytes())
    assert shown_width == width
    pixels = [row[i : i + 3] for row in rows[::2] for i in range(0, len(row), bpp)]
    darkest = sum(1 for red, green, blue in pixels if red < 90 and green < 30 and 100 < blue < 150)
    orange = sum(1 for red, green, blue in pixels if red > 220 and 100 < green < 160 and blue < 110)
    assert darkest > 500 and orange > 300, (darkest, orange)
    # the right edge of the window is the page's background: no figure runs past it
    assert len({row[(width - 3) * bpp : (width - 2) * bpp] for row in rows}) <= 2
