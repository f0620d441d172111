"""The author's HTML that the page does not keep is shown as the text it is written as, exactly: in headless
Chromium, the text of each paragraph is the lesson's source, every character of a CDATA section, an end tag, a
declaration or a processing instruction in place (the digits in them are visible, as the reader sees them).
What a browser reads as a comment (<!-- -->, <!ELEMENT ...>, </ 1>) is dropped, as a browser drops it.
Skipped without chromium, like test_weave_browser.py (and, like it, failed instead under CI)."""

import json
import re
import subprocess

import pytest

pytest.importorskip("latex2mathml", reason="weave.py needs latex2mathml: make test installs requirements-html.txt")

from conftest import chromium  # noqa: E402
from literate.page import command as weave  # noqa: E402  (weave.py's main)

CHROMIUM = chromium()

SHOWN = [  # each a paragraph of the lesson, and what the page shows of it
    ("A <![CDATA[ 0.77 ]]> B", "A <![CDATA[ 0.77 ]]> B"),
    ("C <![CDATA[ x] ]> D", "C <![CDATA[ x] ]> D"),
    ("E <![CDATA[ <a name=\"n\"> ]]> F", "E <![CDATA[ <a name=\"n\"> ]]> F"),
    ("G <?php echo 0.77; ?> H", "G <?php echo 0.77; ?> H"),
    ("I <!DOCTYPE 0.77> J", "I <!DOCTYPE 0.77> J"),
    ("K <b>粗</B > L", "K <b>粗</B > L"),
    ("M <abbr title=\"0.77\">abbr</abbr> N", "M <abbr title=\"0.77\">abbr</abbr> N"),
    ("O <!-- 0.77 --> P", "O  P"),
]
BLOCK = "<div>\n<![bogus 0.77]> <![CDATA[ 0.88 ] ]> </Summary > <!ELEMENT 0.99>\n</div>"  # an HTML block
BLOCK_SHOWN = "<div>\n<![bogus 0.77]> <![CDATA[ 0.88 ] ]> </Summary > \n</div>"

PROBE = r"""
<script>
window.addEventListener("load", () => {
  const texts = {paragraphs: [...document.querySelectorAll("main p")].map(p => p.textContent),
                 main: document.querySelector("main").textContent};
  const out = document.createElement("pre"); out.id = "weave-result"; out.textContent = JSON.stringify(texts);
  document.body.append(out);
});
</script>
"""


@pytest.fixture(scope="module")
def texts(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("source")
    md, out = folder / "lesson.md", folder / "page.html"
    prose = "\n\n".join(source for source, _ in SHOWN)
    md.write_text(f"# 课\n\n{prose}\n\n{BLOCK}\n\n```python {{file=generated/p.py}}\nprint('acc 0.25')\n```\n\n"
                  "```text {transcript}\nacc 0.25\n```\n", encoding="utf-8")
    assert weave.main([str(md), "-o", str(out)]) == 0  # an unknown <![...]> too: no traceback
    (folder / "probe.html").write_text(out.read_text().replace("</body>", PROBE + "</body>"))
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
               f"--user-data-dir={folder / 'profile'}", "--dump-dom", (folder / "probe.html").as_uri()]
    dumped = subprocess.run(command, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL).stdout
    match = re.search(r'<pre id="weave-result">(.*?)</pre>', dumped, re.S)
    assert match, "chromium printed no result"
    return json.loads(match[1].replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&"))


@pytest.mark.parametrize("source, shown", SHOWN, ids=[source for source, _ in SHOWN])
def test_markup_the_page_does_not_keep_shows_as_written(texts, source, shown):
    assert shown in texts["paragraphs"]


def test_an_html_block_shows_as_written(texts):
    assert BLOCK_SHOWN in texts["main"]
