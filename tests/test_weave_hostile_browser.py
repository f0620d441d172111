"""A page woven from a hostile lesson, opened in a real browser: no script runs and nothing is fetched.

The page is served by a local HTTP server that records every request; each payload, if it ran, would mark the
document (data-pwned on <html>, which --dump-dom shows) or fetch a path of that server. A control page with the
same payloads written raw proves that the harness sees both. Skipped without chromium, as
test_weave_browser.py is (and, like it, failed instead under CI)."""

import http.server
import os
import re
import subprocess
import threading
from pathlib import Path

import pytest

pytest.importorskip("latex2mathml", reason="weave.py needs latex2mathml: make test installs requirements-html.txt")

from conftest import chromium  # noqa: E402
from literate.page import command as weave  # noqa: E402  (weave.py's main)

CHROMIUM = chromium()

MARK = "document.documentElement.setAttribute('data-pwned', 'yes')"


def payloads(base: str) -> list[str]:
    """What a hostile author writes, each a way to run MARK or fetch from base."""
    return [
        f"<script>{MARK}</script>",
        f'<img src="{base}/img" onerror="{MARK}">',
        f'<img src=x onerror="{MARK}">',
        f'<iframe src="{base}/iframe"></iframe>',
        f'<link rel="stylesheet" href="{base}/css">',
        f'<style>body {{ background: url({base}/style-url) }}</style>',
        f'<svg onload="{MARK}"><image href="{base}/svg-image"/></svg>',
        f'<details open ontoggle="{MARK}"><summary>s</summary>x</details>',
        f'<object data="{base}/object"></object>',
        f"![图]({base}/markdown-image)",
        f'<a href="javascript:{MARK}" id="click-me">点</a>',
        f'<math><mtext><script>{MARK}</script></mtext></math>',
    ]


def hostile_lesson(base: str) -> str:
    name = f'x"><img src="{base}/chunk-name" onerror="{MARK}">'
    prose = "\n\n".join(payloads(base))
    formulas = (f"```math\n\\text{{<img src=\"{base}/math-text\" onerror=\"{MARK}\">}}\n```\n\n"
                f"公式 $`\\href{{javascript:{MARK}}}{{x}}`$ 和 $`\\text{{<script>{MARK}</script>}}`$。\n")
    return (f"# 课 <script>{MARK}</script>\n\n```python {{file=generated/p.py}}\n<<{name}>>\n```\n\n"
            f"```python {{#{name}}}\nprint('acc 0.9300 \"><script>{MARK}</script>')\n```\n\n"
            f"```text {{transcript}}\nacc 0.9300 \"><script>{MARK}</script>\n```\n\n"
            f"准确率 0.9300。\n\n{prose}\n\n{formulas}")


class Recorder(http.server.SimpleHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self):
        type(self).requests.append(self.path)
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    handler = type("Handler", (Recorder,), {"requests": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: handler(*a, directory=str(tmp_path)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", handler.requests
    httpd.shutdown()
    httpd.server_close()


def dump(tmp_path: Path, url: str) -> str:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
               f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000", "--dump-dom", url]
    return subprocess.run(command, capture_output=True, text=True, timeout=180).stdout


def fetched(requests: list[str], page: str) -> list[str]:
    """What the page made the browser fetch: every request but the page itself (and the browser's own icon)."""
    return [path for path in requests if path not in (f"/{page}", "/favicon.ico")]


def test_the_harness_sees_scripts_run_and_fetches(tmp_path, server):
    base, requests = server
    (tmp_path / "raw.html").write_text("<!DOCTYPE html><html><body>" + "".join(payloads(base)) + "</body></html>")
    dom = dump(tmp_path, f"{base}/raw.html")
    assert 'data-pwned="yes"' in re.search(r"<html\b[^>]*>", dom)[0]
    assert {"/img", "/iframe", "/css"} <= set(fetched(requests, "raw.html"))


def test_a_page_woven_from_a_hostile_lesson_runs_nothing_and_fetches_nothing(tmp_path, server):
    base, requests = server
    md = tmp_path / "lesson.md"
    md.write_text(hostile_lesson(base))
    (tmp_path / "book_figures.txt").write_text("0.25\n")
    assert weave.main([str(md), "-o", str(tmp_path / "page.html")]) == 0
    dom = dump(tmp_path, f"{base}/page.html")
    assert "</html>" in dom and "准确率" in dom  # the page did load
    assert "data-pwned" not in re.search(r"<html\b[^>]*>", dom)[0] and 'data-pwned="yes"' not in dom
    assert fetched(requests, "page.html") == []
    assert requests.count("/page.html") == 1
