"""The package's import graph: which module of literate/ may import which (dependencies point one way, from
the command line down to the document model), and what the back-ends beside it may import."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "literate"

# Each module and the package modules it may import: a layer imports only from layers below it.
ALLOWED = {
    "model": set(),
    "files": {"model"},
    "inline": {"model"},
    "captions": {"model", "inline"},
    "validation": {"model", "captions"},
    "markdown": {"model", "files", "validation", "captions"},
    "expansion": {"model", "files"},
    "runner": {"model", "files", "expansion"},
    "prose": {"model", "files", "inline", "markdown"},
    "transcripts": {"model", "files", "markdown", "validation", "runner"},
    "commands": {"model", "files", "markdown", "expansion", "runner", "transcripts", "prose"},
    "stitch": {"model", "files", "markdown", "expansion", "commands"},
    "console": {"model", "files"},
    "outputs": {"model", "files"},
    "cli": {"model", "files", "console", "commands", "stitch"},
}
# The back-ends read the model and the prose rules; they never reach into the stages that build it.
BACK_ENDS = {
    "weave.py": {"model", "inline", "prose", "markdown", "files", "console", "outputs"},
    "notebook.py": {"model", "markdown", "expansion", "files", "console", "outputs"},
    "tools/portability.py": {"runner"},
}


def imports(path: Path) -> set[str]:
    """The literate modules a file imports (from .x, from literate import x, import literate.x ...)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                found.add(node.module.split(".")[0])
            elif node.level == 1 or node.module == "literate":
                found |= {alias.name for alias in node.names}
            elif node.module and node.module.startswith("literate."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {alias.name.split(".")[1] for alias in node.names if alias.name.startswith("literate.")}
    return found


def test_every_module_is_in_the_table():
    assert {path.stem for path in PACKAGE.glob("*.py")} - {"__init__"} == set(ALLOWED)


@pytest.mark.parametrize("module", sorted(ALLOWED))
def test_a_module_imports_only_the_layers_below_it(module):
    assert imports(PACKAGE / f"{module}.py") <= ALLOWED[module]


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
    sizes = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in PACKAGE.glob("*.py")}
    assert max(sizes.values()) <= 500, sizes


def test_tangle_py_is_the_command_and_the_api():
    import tangle
    for name in tangle.__all__:
        assert hasattr(tangle, name), name
