"""A lesson whose formulas ask for all the space they can (\\hspace, \\kern, \\quad repeated, \\mkern, \\phantom,
blanks...) and whose headings are written as the page's own anchors, opened in headless Chromium at a phone's
width and a laptop's: the page never scrolls sideways, and every number link and every entry of the contents lands
on what it names. Skipped without chromium, like test_weave_browser.py (and, like it, failed instead under CI)."""

import functools
import http.server
import json
import re
import subprocess
import threading
from pathlib import Path

import pytest

pytest.importorskip("latex2mathml", reason="weave.py needs latex2mathml: make test installs requirements-html.txt")

from conftest import chromium  # noqa: E402
from literate.page import command as weave  # noqa: E402  (weave.py's main)

CHROMIUM = chromium()

SPACING = [r"a\hspace{100cm}b", r"a" + r"\quad" * 300 + "b", r"a\kern 50em b", r"\mkern900mu x",
           r"\phantom{" + "x" * 300 + "}", r"\text{" + " " * 300 + "}", "a" + "~" * 300 + "b",
           r"{\Huge{\Huge{\Huge{\Huge x}}}}", r"\mathrlap{\hspace{10cm}}", r"\hphantom{\hspace{20cm}}"]

PROBE = r"""
<script>
window.addEventListener("load", () => {
  const r = {width: innerWidth, pageScroll: document.documentElement.scrollWidth - innerWidth, maths: 0, wide: [],
             numbers: 0, landing: [], contents: 0, headings: []};
  for (const m of document.querySelectorAll("math")) {
    r.maths++;
    const box = m.getBoundingClientRect();
    if (box.width > innerWidth) r.wide.push(`${Math.round(box.width)}: ${m.textContent.slice(0, 20)}`);
  }
  for (const a of document.querySelectorAll("a.num")) {
    r.numbers++;
    location.hash = a.getAttribute("href");
    const arrived = document.querySelector(":target");
    if (!arrived || !arrived.matches("pre.output span.n") || arrived.textContent !== a.textContent)
      r.landing.push([a.getAttribute("href"), arrived && arrived.tagName]);
  }
  const headings = [...document.querySelectorAll("main h2, main h3")].filter(h => !h.closest("#contents"));
  [...document.querySelectorAll("#contents a")].forEach((a, k) => {  // the contents list the headings in order
    r.contents++;
    location.hash = "";
    location.hash = a.getAttribute("href");
    const arrived = document.querySelector(":target");
    if (arrived !== headings[k]) r.headings.push([a.getAttribute("href"), arrived && arrived.tagName]);
  });
  const top = window.parent.document;  // a phone's width is an iframe's (headless windows are 500 px at least)
  const out = top.createElement("pre"); out.id = "weave-result"; out.textContent = JSON.stringify(r);
  top.body.append(out);
});
</script>
"""


def lesson() -> str:
    printed = "acc 0.9300 x 1.2345"
    formulas = "\n\n".join(f"公式 $`{latex}`$ 之后的文字。" for latex in SPACING)
    display = "\n\n".join(f"```math\n{latex}\n```" for latex in SPACING)
    table = "| 甲 | 乙 |\n|---|---|\n" + "".join(f"| $`{latex}`$ | 文字 |\n" for latex in SPACING[:3])
    items = "".join(f"- $`{latex}`$\n" for latex in SPACING[:3])
    # line 8 is the transcript's line: the headings below are written as the page's anchors of it and its number
    return (f"# 课\n\n```python {{file=generated/p.py}}\nprint({printed!r})\n```\n\n```text {{transcript}}\n{printed}\n"
            f"```\n\n准确率 0.9300，另一个 1.2345。\n\n{formulas}\n\n{display}\n\n{table}\n{items}\n"
            f"## L8-0.9300\n\n## L8-1.2345 $`{SPACING[0]}`$\n\n## L8\n\n## L3\n\n## file-generated/p.py\n\n"
            "## output-generated/p.py\n\n## contents\n\n## verified\n\n## 重复\n\n## 重复\n\n## 重复-2\n")


@pytest.fixture(scope="module")
def woven(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("bounds")
    md = tmp / "lesson.md"
    md.write_text(lesson(), encoding="utf-8")
    out = tmp / "page.html"
    assert weave.main([str(md), "-o", str(out)]) == 0
    assert md.read_text().split("\n")[7] == "acc 0.9300 x 1.2345"
    return out


FRAME = """<!DOCTYPE html><html><head><style>body {{ margin: 0; }} iframe {{ border: 0; display: block; }}</style>
</head><body><iframe src="{page}" width="{width}" height="900"></iframe></body></html>"""


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(woven):
    """The page and its frame over http from one folder, so that they share an origin."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(woven.parent)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module", params=[390, 1280], ids=["phone", "laptop"])
def measured(request, woven, server) -> dict:
    width, folder = request.param, woven.parent
    (folder / "probe.html").write_text(woven.read_text().replace("</body>", PROBE + "</body>"))
    (folder / f"frame-{width}.html").write_text(FRAME.format(page="probe.html", width=width))
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               "--disable-dev-shm-usage", "--mute-audio", f"--user-data-dir={folder / f'profile-{width}'}",
               "--dump-dom", "--virtual-time-budget=10000", f"--window-size={max(width, 500)},900",
               f"{server}/frame-{width}.html"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    match = re.search(r'<pre id="weave-result">(.*?)</pre>', run.stdout, re.S)
    assert match, f"chromium printed no result; stderr:\n{run.stderr[-3000:]}"
    results = json.loads(match[1].replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&"))
    assert results["width"] == width
    return results


def test_no_formula_makes_the_page_wider_than_the_screen(measured):
    assert measured["maths"] == 2 * len(SPACING) + 3 + 3 + 1  # in text, on their own, in a table, a list, a heading
    assert measured["wide"] == [] and measured["pageScroll"] <= 0, measured


def test_every_number_and_every_entry_of_the_contents_lands_on_what_it_names(measured):
    assert measured["numbers"] == 4 and measured["landing"] == []   # two in the prose, two in headings (checked too)
    assert measured["contents"] == 11 and measured["headings"] == []
