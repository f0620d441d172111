"""The transcripts as plain text (GitHub's code blocks, an editor, JupyterLab's output area: no page CSS), drawn by
headless Chromium in a monospace font whose CJK characters are not two columns wide: DejaVu Sans Mono has no CJK,
so Chinese falls back to Noto Sans CJK, one em against two Latin characters' 1.2 em.

Every place two lines of a table are meant to line up (tests/columns.py finds them, as the terminal counts columns)
is measured where the browser draws it; a screenshot of the first tables goes to build/ (not committed). A table laid
out the old way (a Chinese header over numbers) is measured beside them: it must come out of line, or the font did
not do what this test needs. Skipped without chromium (failed instead under CI)."""

import html
import json
import re
import subprocess
from pathlib import Path

import pytest

import columns
from conftest import chromium
from test_attention import transcript_lines

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = chromium()
PROGRAMS = ["generated/attention.py", "generated/experiments.py"]
CONTROL = ["第几个键    点积     除以根号 d 后", "1           1.0000   0.5774"]   # how part 1 was laid out before

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body {{ margin: 8px; }} pre {{ font: 13px "DejaVu Sans Mono", "Noto Sans CJK SC", monospace; margin: 0 0 12px; }}
</style></head><body>{blocks}<pre id="result"></pre><script>
const checks = {checks};
function x(pre, line, index, end) {{
  const text = pre.firstChild, starts = [0];
  for (const l of pre.textContent.split("\\n")) starts.push(starts[starts.length - 1] + l.length + 1);
  const range = document.createRange(), at = starts[line] + index;
  range.setStart(text, at); range.setEnd(text, at + 1);
  const box = range.getBoundingClientRect();
  return end ? box.right : box.left;
}}
const pres = document.querySelectorAll("pre.t"), out = {{han: 0, latin: 0, off: []}};
const probe = document.createElement("span");
document.body.appendChild(document.createElement("pre")).appendChild(probe);
probe.textContent = "汉"; out.han = probe.getBoundingClientRect().width;
probe.textContent = "aa"; out.latin = probe.getBoundingClientRect().width;
for (const [block, a, ia, b, ib, end] of checks) {{
  const gap = Math.abs(x(pres[block], a, ia, end) - x(pres[block], b, ib, end));
  if (gap > 0.5) out.off.push([block, a, b, end, Math.round(gap * 10) / 10]);
}}
document.getElementById("result").textContent = JSON.stringify(out);
</script></body></html>"""


def measured(tmp_path, blocks, name):
    """Chromium's answer for these blocks: the width of one CJK character and of two Latin ones, and every place
    meant to line up that is off by more than half a pixel."""
    checks = [(n, a, ia, b, ib, edge < 0) for n, block in enumerate(blocks)
              for a, ia, b, ib, edge in columns.shared_edges(block)]
    page = tmp_path / f"{name}.html"
    page.write_text(PAGE.format(blocks="".join('<pre class="t">%s</pre>' % html.escape("\n".join(block))
                                               for block in blocks), checks=json.dumps(checks)), encoding="utf-8")
    run = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--mute-audio",
                          "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                          page.as_uri()], capture_output=True, text=True, timeout=300)
    found = re.search(r'<pre id="result">(.*?)</pre>', run.stdout, re.S)
    assert found and found[1], run.stderr[-2000:]
    return json.loads(html.unescape(found[1])), len(checks), page


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_table_lines_up_where_a_cjk_character_is_not_two_columns_wide(tmp_path, program):
    blocks = [block for block in columns.blocks(transcript_lines(program)) if columns.shared_edges(block)]
    result, checked, page = measured(tmp_path, blocks, "transcripts")
    assert abs(result["han"] - result["latin"]) > 1, "the font draws CJK two columns wide: this test shows nothing"
    assert checked > 100
    assert result["off"] == [], "%d of %d places out of line; first: %s" % (len(result["off"]), checked,
                                                                           result["off"][:5])
    shot = ROOT / "build" / f"transcript-tables-{Path(program).stem}.png"
    shot.parent.mkdir(exist_ok=True)
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                    f"--user-data-dir={tmp_path / 'shot'}", f"--screenshot={shot}", "--window-size=900,1400",
                    page.as_uri()], capture_output=True, timeout=300)
    assert shot.stat().st_size > 10000


def test_a_chinese_header_over_numbers_comes_out_of_line_in_that_font(tmp_path):
    result, checked, _ = measured(tmp_path, [CONTROL], "control")
    assert checked >= 2 and columns.misaligned(CONTROL)
    assert len(result["off"]) >= 2 and min(gap for *_, gap in result["off"]) > 3
