"""The notebook as a reader meets it in JupyterLab: a real JupyterLab server from .venv (make test installs
requirements-lab.txt), set up as make lab sets it up (the lesson's settings, lab/overrides.json, installed as that
JupyterLab's defaults), with settings, workspaces and kernels of its own otherwise (none of the machine's), the
notebook opened in headless Chromium, driven over the DevTools protocol (tests/devtools.py) as a reader would: clicks
are mouse clicks.

- the lab reads the lesson's settings: every cell drawn (windowing mode none), no autosave, no news pop-up;
- opened, and its kernel started, the notebook is not modified, and saving it writes the same bytes (else JupyterLab
  autosaves a file newer than the lesson, and make notebook may skip a rebuild);
- the first cell's way back to the lesson's version works in an open tab: make notebook, then Reload from Disk;
- a reader who reads from the top and clicks each link on meeting it (then returns), the first within 3 s of opening
  the notebook, lands on the caption of every link, ahead and back;
- each figure is drawn where its image stands (its cell's attachment);
- Run All runs every cell without an error, the cells that print the transcript print exactly its parts, and the file
  is still the one make notebook wrote.

Skipped (failed under CI) without JupyterLab or chromium."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import chromium, modules_or_skip  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
modules_or_skip(("nbformat", "jupyterlab", "ipykernel"), "open the notebook in JupyterLab",
                "requirements-notebook.txt and requirements-lab.txt (JupyterLab)")

from devtools import Browser  # noqa: E402
from literate.notebook import command as notebook  # noqa: E402

CHROMIUM = chromium()
NOTEBOOK = "attention.ipynb"
# The lesson's settings for JupyterLab, and where make installs them: the defaults of the JupyterLab in this Python's
# environment (.venv's), the one make lab runs and the server below is
SETTINGS = ROOT / "lab" / "overrides.json"
INSTALLED = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"

# Read in the page: the notebook tab, its cells, its links (the k-th link of a cell as its source has it) and where
# an element stands in the notebook's scrolling area (top and bottom from its top edge, and that area's height).
HELPERS = r"""
window.T = {
  panel: () => jupyterapp.shell.currentWidget,
  nb: () => T.panel().content,
  outer: () => T.nb().outerNode,
  links: () => T.nb().widgets.flatMap((cell, index) => cell.model.type !== 'markdown' ? [] :
    [...cell.model.sharedModel.getSource().matchAll(/\]\(#(cell-id=[^) ]+)\)/g)].map((m, k) => [index, k, m[1]])),
  link: (index, k) => {
    const cell = T.nb().widgets[index];
    return cell.node.isConnected ? cell.node.querySelectorAll('.jp-RenderedMarkdown a[href^="#cell-id="]')[k] : null;
  },
  target: (fragment) => document.querySelector(`[data-jupyter-id="${CSS.escape(fragment)}"]`),
  place: (element) => {
    if (!element) return null;  // not drawn (yet)
    const area = T.outer().getBoundingClientRect(), box = element.getBoundingClientRect();
    return [box.top - area.top, box.bottom - area.top, area.height];
  },
  drawn: () => T.nb().cellsArray.every(cell => !cell.isPlaceholder()),
};
true
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Lab:
    """A JupyterLab server on folder, its Jupyter and JupyterLab folders in home (nothing of the machine's user),
    and one headless Chromium."""

    def __init__(self, folder: Path, home: Path):
        self.folder = folder
        environment = {name: value for name, value in os.environ.items() if not name.startswith("JUPYTER")}
        environment.update(HOME=str(home), JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
                           JUPYTER_RUNTIME_DIR=str(home / "runtime"), JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
                           JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"), JUPYTER_PREFER_ENV_PATH="1")
        self.port = free_port()
        self.log = open(home / "jupyterlab.log", "wb")
        # as make lab starts it (this environment's JupyterLab: the lesson's settings are its defaults), but for the
        # token (none: the page is opened without one), the app object the test reads the page through
        # (window.jupyterapp), --allow-root (CI runs as root), and folder as its root
        self.server = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={self.port}",
             "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--LabApp.expose_app_in_browser=True",
             f"--ServerApp.root_dir={folder}"],
            env=environment, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.browser = None
        try:
            end = time.monotonic() + 120
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/status", timeout=5).close()
                    break
                except OSError:
                    if self.server.poll() is not None or time.monotonic() > end:
                        raise RuntimeError("JupyterLab did not start: " + (home / "jupyterlab.log").read_text()[-2000:])
                    time.sleep(0.3)
            self.browser = Browser(CHROMIUM, str(home / "chromium"))
        except BaseException:
            self.close()
            raise

    def open(self, name: str = NOTEBOOK):
        """A fresh page with the notebook open in it (the workspace of an earlier page not restored)."""
        page = self.browser.page(f"http://127.0.0.1:{self.port}/lab/tree/{name}?reset")
        page.send("Page.bringToFront")
        page.wait("!!(window.jupyterapp && jupyterapp.shell.currentWidget && jupyterapp.shell.currentWidget.context"
                  " && jupyterapp.shell.currentWidget.context.isReady"
                  " && document.querySelector('.jp-Notebook .jp-MarkdownCell .jp-RenderedMarkdown'))", 180,
                  "showing the notebook")
        page.opened = time.monotonic()  # when the notebook's first words showed: a reader may click from then on
        page.js(HELPERS)
        return page

    def close(self) -> None:
        if self.browser is not None:
            self.browser.close()
        if self.server.poll() is None:
            os.killpg(self.server.pid, signal.SIGTERM)  # the server and the kernels it started
            try:
                self.server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.server.pid, signal.SIGKILL)
                self.server.wait()
        self.log.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The notebook as make notebook writes it, in a folder JupyterLab serves."""
    folder = tmp_path_factory.mktemp("lab")
    assert notebook.main([str(ROOT / "attention.md"), "-o", str(folder / NOTEBOOK)]) == 0
    served = Lab(folder, tmp_path_factory.mktemp("home"))
    yield served
    served.close()


def kernel_started(page) -> None:
    """Wait until the kernel is idle and JupyterLab has what it writes into the notebook from it (its info, its
    spec); then a moment for JupyterLab to write it."""
    page.wait("(() => { const session = T.panel().sessionContext.session;"
              " return !!(session && session.kernel && session.kernel.status === 'idle'); })()", 180, "an idle kernel")
    page.js("(async () => { const kernel = T.panel().sessionContext.session.kernel;"
            " await kernel.info; await kernel.spec; return true; })()")
    time.sleep(1)


# Whether the page's document manager autosaves (JupyterLab exposes its plugins' services only by token, which a
# page's script cannot name: hence the registry's own map), and the pop-ups on the page
AUTOSAVE = "jupyterapp.pluginRegistry._plugins.get('@jupyterlab/docmanager-extension:manager').service.autosave"
NEWS = "[...document.querySelectorAll('.Toastify__toast')].map(toast => toast.innerText)"


def test_the_lab_is_set_up_for_the_lesson(lab):
    """make installs lab/overrides.json where this JupyterLab reads its defaults, and the page has them: every cell
    drawn (so a link lands on a cell not yet read), no autosave, and no pop-up asking about Jupyter news over the
    first note once the kernel is ready (without the setting it shows as the page opens)."""
    assert INSTALLED.read_bytes() == SETTINGS.read_bytes(), "make .venv/lab-stamp installs lab/overrides.json"
    page = lab.open()
    try:
        assert page.js("T.nb().notebookConfig.windowingMode") == "none"
        assert page.js(AUTOSAVE) is False
        kernel_started(page)
        assert page.js(NEWS) == []
    finally:
        page.close()


def test_opening_the_notebook_and_saving_it_change_nothing(lab):
    path = lab.folder / NOTEBOOK
    written = path.read_bytes()
    page = lab.open()
    kernel_started(page)
    assert page.js("T.panel().sessionContext.session.kernel.name") == "python3"
    assert page.js("T.panel().context.model.dirty") is False, "JupyterLab changed the notebook on opening it"
    page.js("jupyterapp.commands.execute('docmanager:save')")
    assert page.js("T.panel().context.model.dirty") is False
    assert path.read_bytes() == written
    page.close()


def test_the_check_sees_a_notebook_jupyterlab_would_change(lab):
    """The same notebook with another Python's version in it: opening it modifies it, so the test above can fail
    (and a kernel of another Python than the one that wrote the notebook modifies it, as JupyterLab does)."""
    found = json.loads((lab.folder / NOTEBOOK).read_text(encoding="utf-8"))
    found["metadata"]["language_info"]["version"] = "3.0.0"
    (lab.folder / "other.ipynb").write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    page = lab.open("other.ipynb")
    kernel_started(page)
    assert page.js("T.panel().context.model.dirty") is True
    page.close()


def test_the_way_back_to_the_lessons_version_works_in_an_open_tab(lab):
    """The note: delete the file, make notebook, then File → Reload Notebook from Disk. An edit made and saved in
    JupyterLab stays in the tab after the file is written anew; reloading brings the lesson's version in."""
    path = lab.folder / NOTEBOOK
    lesson = path.read_bytes()
    page = lab.open()
    first = "T.nb().widgets.find(cell => cell.model.type === 'code').model.sharedModel"
    page.js(f"{first}.setSource('# 我改过的\\n' + {first}.getSource()); true")
    page.js("jupyterapp.commands.execute('docmanager:save')")
    assert page.js("T.panel().context.model.dirty") is False and "# 我改过的" in path.read_text(encoding="utf-8")
    path.unlink()
    assert notebook.main([str(ROOT / "attention.md"), "-o", str(path)]) == 0 and path.read_bytes() == lesson
    assert page.js(f"{first}.getSource()").startswith("# 我改过的")
    page.js("jupyterapp.commands.execute('docmanager:reload')")
    page.wait(f"!{first}.getSource().startsWith('# 我改过的')", 30, "reloaded")
    assert page.js("T.panel().context.model.dirty") is False and path.read_bytes() == lesson
    page.close()


def click_every_link(page) -> list[dict]:
    """A reader reading from the top as soon as the notebook shows: at each link they scroll it into view (the cells
    above it drawn as reading draws them), click it, see where its caption stands, and come back. Each link found
    says when it was clicked, in seconds from the notebook's opening."""
    found = []
    for index, k, fragment in page.js("T.links()"):
        reach(page, index, k)
        x, y = page.js(f"(() => {{ const box = T.link({index}, {k}).getClientRects()[0];"
                       " return [box.left + box.width / 2, box.top + box.height / 2]; })()")
        assert page.js(f"T.link({index}, {k}).contains(document.elementFromPoint({x}, {y}))"), \
            f"something covers link {k} of cell {index}"
        source = page.js("T.outer().scrollTop")
        clicked_at = time.monotonic() - page.opened
        page.click(x, y)
        place = settled(page, f"T.place(T.target('{fragment}'))", timeout=20)
        target = page.js(f"T.nb().widgets.findIndex(cell => 'cell-id=' + cell.model.id === '{fragment}')")
        found.append({"cell": index, "k": k, "to": fragment, "ahead": target > index, "at": clicked_at,
                      "top": place and place[0], "landed": place is not None and -2 <= place[0] <= place[2] - 30})
        page.js(f"T.outer().scrollTop = {source}; true")
    return found


def reach(page, index: int, k: int) -> None:
    """Scroll down (a screen at a time: the cells are drawn as a reader passes them) until link k of cell index
    stands still on screen, away from the edges; its <details> opened if it is inside one."""
    for _ in range(400):
        where = page.js(f"""(() => {{ const link = T.link({index}, {k});
            if (!link) {{ T.outer().scrollTop += T.outer().clientHeight; return null; }}
            const fold = link.closest('details:not([open])'); if (fold) fold.open = true;
            const [top, bottom, height] = T.place(link);
            if (top > height) {{ T.outer().scrollTop += Math.min(top - height / 2, height); return null; }}
            if (top < 60 || bottom > height - 60) {{ link.scrollIntoView({{block: 'center'}}); return null; }}
            return top; }})()""")
        if where is not None:
            place = settled(page, f"T.place(T.link({index}, {k}))", timeout=3)
            if place is not None and 60 <= place[0] and place[1] <= place[2] - 60:
                return
        time.sleep(0.05)
    raise AssertionError(f"could not scroll link {k} of cell {index} into view")


def settled(page, expression: str, timeout: float = 6):
    """The value of expression (a place) once it has not moved for 0.4 s; None if it never stands still (or is
    never there)."""
    end, last, since = time.monotonic() + timeout, None, time.monotonic()
    while time.monotonic() < end:
        place = page.js(expression)
        rounded = place and [round(value) for value in place]
        if rounded is None or rounded != last:
            last, since = rounded, time.monotonic()
        elif time.monotonic() - since >= 0.4:
            return place
        time.sleep(0.1)
    return None


def test_every_link_lands_on_its_caption_at_the_first_click(lab):
    """On a freshly opened notebook, the first click within 3 s of its showing: every link lands, the ones ahead (to
    cells not yet read, the main line's links to the full implementation and the experiments) as the ones back.
    JupyterLab's default windowing draws only the cells read so far and guesses the height of the rest from their
    lines, so a link ahead lands where the guess puts it, often off the screen; windowing mode none draws them all."""
    page = lab.open()
    try:
        clicked = click_every_link(page)
    finally:
        page.close()
    ahead = [link for link in clicked if link["ahead"]]
    assert len(clicked) >= 50 and len(ahead) >= 30
    assert clicked[0]["at"] <= 3, f"the first link was clicked {clicked[0]['at']:.1f} s after opening"
    missed = [link for link in clicked if not link["landed"]]
    print(f"\nfirst clicks: {len(clicked) - len(missed)} of {len(clicked)} land, {len(ahead)} of them ahead; the first "
          f"{clicked[0]['at']:.1f} s after opening, the last {clicked[-1]['at']:.0f} s")
    assert not missed, f"{len(missed)} of {len(clicked)} links ({len(ahead)} ahead) missed: {missed}"


def test_every_figure_is_drawn(lab):
    """Each figure is carried in its Markdown cell as data (the notebook lies apart from figures/): scrolled to, as a
    reader reaches it, JupyterLab draws it as an image, as wide as its drawing, and shows it."""
    stored = json.loads((lab.folder / NOTEBOOK).read_text(encoding="utf-8"))["cells"]
    expected = {index: "".join(cell["source"]).count("](data:image/svg+xml;base64,") for index, cell in enumerate(stored)
                if cell["cell_type"] == "markdown" and "](data:image/svg+xml" in "".join(cell["source"])}
    assert len(expected) >= 3
    page = lab.open()
    try:
        page.wait("T.drawn()", 240, "done drawing the notebook's cells")
        for index, count in expected.items():
            page.js(f"T.nb().widgets[{index}].node.scrollIntoView({{block: 'start'}}); true")
            page.wait(f"""(() => {{ const images = [...T.nb().widgets[{index}].node.querySelectorAll(
                '.jp-RenderedMarkdown img')]; return images.length === {count} && images.every(image =>
                image.complete && image.naturalWidth >= 300 && image.getBoundingClientRect().width >= 300
                && image.src.startsWith('data:image/svg+xml')); }})()""", 30, f"the figures of cell {index} drawn")
    finally:
        page.close()


def test_run_all_runs_every_cell_and_prints_the_transcript(lab):
    """Run All in JupyterLab, as the note says to: no cell raises, and each cell that prints a part of the transcript
    prints what is stored under it (tests/test_notebook.py checks the same in a kernel alone, byte for byte). The runs
    stay in the tab: with autosave off nothing writes them into the file until the reader saves (autosave, every two
    minutes, would have the file differ from what make notebook wrote)."""
    path = lab.folder / NOTEBOOK
    written = path.read_bytes()
    stored = json.loads(written.decode("utf-8"))["cells"]
    page = lab.open()
    try:
        kernel_started(page)
        page.js("jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait("T.nb().widgets.every(cell => cell.model.type !== 'code' || cell.model.executionCount !== null)"
                  " && T.panel().sessionContext.session.kernel.status === 'idle'", 900, "done running every cell")
        ran = page.js("T.nb().widgets.map(cell => [cell.model.id, cell.model.type, cell.model.type === 'code'"
                      " ? cell.model.outputs.toJSON() : []])")
        assert page.js("T.panel().context.model.dirty") is True and page.js(AUTOSAVE) is False
    finally:
        page.close()
    assert path.read_bytes() == written
    errors = [(cell_id, output) for cell_id, _, outputs in ran for output in outputs if output["output_type"] == "error"]
    assert not errors
    printed = {cell_id: stdout(outputs) for cell_id, kind, outputs in ran if kind == "code"}
    parts = [cell for cell in stored if cell["metadata"]["attention"]["role"] == "transcript"]
    assert len(parts) >= 5 and all(stdout(cell["outputs"]) for cell in parts)
    for cell in parts:
        assert printed[cell["id"]] == stdout(cell["outputs"]), cell["id"]


def stdout(outputs: list) -> str:
    """What a cell's outputs printed (nbformat keeps a text as one string or as its lines)."""
    return "".join("".join(output["text"]) for output in outputs if output.get("name") == "stdout")
