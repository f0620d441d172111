"""The package's import graph: which module of literate/ may import which (dependencies point one way, from
the command line down to the document model), and what the back-ends beside it may import."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "literate"

# Each module and the package modules it may import: a layer imports only from layers below it.
ALLOWED = {
    "language": set(),
    "declarations": {"language"},
    "model": {"declarations"},
    "blocks": set(),
    "rendering": {"blocks"},  # the protocol every back end draws the blocks through
    "files": {"model"},
    "makefile": {"model", "files"},
    "characters": set(),
    "places": set(),
    "diffing": set(),
    "ipython": {"model"},
    "inline": {"model"},
    "writing": {"characters", "inline"},
    "captions": {"model", "blocks", "inline"},
    "reading": {"blocks", "model", "inline", "formulas"},
    "validation": {"model", "captions", "characters"},
    "fences": {"model", "blocks", "places", "validation"},
    "markdown": {"model", "blocks", "language", "makefile", "files", "reading", "validation", "captions", "startup", "declarations", "fences",
                 "ipython"},
    "expansion": {"model", "files", "places"},
    "runner": {"model", "files", "expansion", "characters"},
    "printed": {"inline"},
    "book": {"model", "files", "markdown"},
    "quoting": {"model", "files", "inline", "language", "printed"},
    "prose": {"model", "blocks", "book", "expansion", "inline", "language", "makefile", "printed", "quoting", "validation",
              "writing"},
    "proofs": {"model", "book", "inline", "makefile", "printed", "prose", "quoting", "validation"},
    "listing": {"model", "book", "makefile", "printed", "proofs", "quoting"},
    "transcripts": {"model", "files", "makefile", "markdown", "validation", "runner", "characters", "diffing", "printed"},
    "reach": {"model", "expansion"},
    "playgrounds": {"model", "expansion", "validation"},
    "commands": {"model", "book", "files", "listing", "makefile", "markdown", "expansion", "runner", "transcripts", "proofs",
                 "quoting", "reach",
                 "playgrounds",
                 "validation", "figures"},
    "stitch": {"model", "files", "makefile", "markdown", "expansion", "commands", "diffing"},
    "console": {"model", "files"},
    "outputs": {"model", "files"},
    "backends": {"console", "markdown", "model", "outputs"},
    "starter": {"model", "files", "commands", "listing", "makefile", "markdown", "quoting"},
    "cli": {"model", "files", "console", "commands", "stitch", "starter"},
    "formulas": set(),
    "startup": set(),
    "htmlsource": set(),
    # the pictures drawn from printed numbers (the page's heatmaps, the lesson's figures), in the page's vocabulary
    "tables": {"declarations"},
    "drawing": {"declarations", "markup", "tables"},
    "figures": {"blocks", "model", "drawing", "files", "tables"},
    # the page (weave.py): the HTML vocabulary (markup, shared with the drawings) at the bottom, the command on top
    "markup": {"inline", "htmlsource"},
    "page.state": {"model", "blocks", "markup"},
    "page.columns": {"markup"},
    "page.maths": {"startup", "markup", "page.state"},
    "page.words": {"markup", "page.state"},
    "page.numbers": {"inline", "model", "prose", "page.columns", "markup", "page.state", "page.words"},
    "page.text": {"blocks", "language", "model", "markup", "figures", "rendering", "page.maths", "page.numbers",
                  "page.state", "page.words"},
    "page.code": {"blocks", "model", "page.columns", "markup", "page.state", "page.text", "page.words"},
    "page.transcripts": {"blocks", "model", "page.code", "drawing", "makefile", "tables", "markup", "page.numbers",
                         "page.state", "page.text", "page.words"},
    "page.page": {"blocks", "book", "makefile", "model", "proofs", "prose", "quoting", "figures", "rendering", "page.code",
                  "page.columns", "markup",
                  "page.maths", "page.numbers", "page.state", "page.text", "page.transcripts", "page.words"},
    "page.command": {"backends", "makefile", "model", "outputs", "markup", "page.page", "page.state"},
    # the notebook (notebook.py)
    "notebook.lesson": {"model", "expansion"},
    "notebook.escaping": {"inline"},
    "notebook.text": {"blocks", "htmlsource", "model", "rendering", "notebook.escaping", "notebook.words"},
    "notebook.words": {"notebook.escaping"},
    "notebook.cells": {"blocks", "expansion", "figures", "ipython", "makefile", "markdown", "model", "startup", "notebook.escaping",
                       "notebook.lesson",
                       "notebook.text", "notebook.words"},
    "notebook.command": {"backends", "model", "outputs", "notebook.cells"},
}
# The back-ends read the model and the prose rules; they never reach into the stages that build it.
BACK_ENDS = {
    "tools/portability.py": {"runner"},
    "tangle.py": {"startup", "cli"},
    "weave.py": {"startup"},
    "notebook.py": {"startup"},
}


def module_name(path: Path) -> str:
    """literate/page/code.py -> page.code; literate/model.py -> model; literate/page/__init__.py -> page."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The literate modules a file imports (from .x, from ..x, from literate import x, import literate.x ...),
    named as in ALLOWED (page.code for literate/page/code.py)."""
    inside = path.is_relative_to(PACKAGE)
    here = module_name(path).split(".")[:-1] if inside and path.stem != "__init__" else \
        (module_name(path).split(".") if inside else [])
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
            elif node.module == "literate" or (node.module or "").startswith("literate."):
                base, node = [], node
            else:
                continue
            module = (node.module or "") if node.level else (node.module or "").removeprefix("literate").lstrip(".")
            prefix = ".".join(base + ([module] if module else []))
            if module:
                found.add(prefix)
            for alias in node.names:
                name = f"{prefix}.{alias.name}" if prefix else alias.name
                if (PACKAGE / name.replace(".", "/")).with_suffix(".py").exists() or (PACKAGE / name.replace(".", "/")).is_dir():
                    found.add(name)
        elif isinstance(node, ast.Import):
            found |= {alias.name.removeprefix("literate.") for alias in node.names if alias.name.startswith("literate.")}
    return found


MODULES = sorted(module_name(path) for path in PACKAGE.rglob("*.py") if module_name(path) not in ("", "page", "notebook"))


def test_every_module_is_in_the_table():
    assert set(MODULES) == set(ALLOWED)


@pytest.mark.parametrize("module", MODULES)
def test_a_module_imports_only_the_layers_below_it(module):
    assert imports(PACKAGE / (module.replace(".", "/") + ".py")) <= ALLOWED[module]


def test_the_allowed_graph_has_no_cycle():
    done, visiting = set(), set()

    def visit(module, path):
        assert module not in visiting, " -> ".join(path + [module])
        if module in done:
            return
        visiting.add(module)
        for other in ALLOWED[module]:
            visit(other, path + [module])
        visiting.discard(module)
        done.add(module)
    for module in ALLOWED:
        visit(module, [])


@pytest.mark.parametrize("back_end", sorted(BACK_ENDS))
def test_back_ends_use_the_model_not_the_internals(back_end):
    source = (ROOT / back_end).read_text(encoding="utf-8")
    assert "import tangle" not in source
    assert imports(ROOT / back_end) <= BACK_ENDS[back_end]


def test_modules_stay_small():
    """No module of the tools over 400 lines: the package's, the page's and the commands beside them."""
    files = [*PACKAGE.rglob("*.py"), ROOT / "tangle.py", ROOT / "weave.py", ROOT / "notebook.py"]
    sizes = {str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines()) for path in files}
    assert max(sizes.values()) <= 400, sizes


def test_only_the_reading_stage_imports_markdown_it():
    """The back ends walk the document; only literate/markdown.py parses the Markdown."""
    readers = {str(path.relative_to(ROOT)) for path in [*PACKAGE.rglob("*.py"), *ROOT.glob("*.py")]
               if "markdown_it" in path.read_text(encoding="utf-8")}
    assert readers == {"literate/markdown.py"}


@pytest.mark.parametrize("command", ["tangle.py", "weave.py", "notebook.py"])
def test_a_command_is_its_package_main_behind_the_start_up_guard(command):
    """The three commands share one front end: the start-up guard first, then the package's main."""
    source = (ROOT / command).read_text(encoding="utf-8")
    assert "from literate.startup import command" in source and "signal" not in source
