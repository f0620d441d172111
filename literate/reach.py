"""Which roots run: the programs with a transcript, and the Python roots they import, by module name, transitively.
A Python root that none of them reaches is code the reader sees but that the check never runs."""

from __future__ import annotations

import ast
import posixpath

from .expansion import render
from .model import Document


def unrun_problems(doc: Document) -> list[tuple[int, str]]:
    """(line, why) for each .py root that no program with a transcript runs or imports, transitively."""
    python = [target for target in doc.roots if target.endswith(".py")]
    reached = set(doc.transcripts)
    for program in doc.transcripts:  # each program searches its own folder first: its modules are named from there
        folder = posixpath.dirname(program)
        below = {module_name(target, folder): target for target in python
                 if not folder or target.startswith(folder + "/")}
        waiting, seen = [program], {program}
        while waiting:
            importer = waiting.pop()
            for name in imported_names(doc, importer, module_name(importer, folder)):
                target = below.get(name)
                if target is not None and target not in seen:
                    seen.add(target)
                    waiting.append(target)
        reached |= seen
    return [(doc.roots[target][0].fence_line,
             f"file={target} is Python that never runs: no program with a transcript runs it or imports it, so the "
             "check would pass whatever it holds; give it a transcript (```text {transcript=" + target + "}```, "
             "which may start empty: update fills it), import it from a program that has one, or show it as "
             "an illustration (```text)")
            for target in python if target not in reached]


def module_name(target: str, folder: str) -> str:
    """The name a root is imported by from a program in folder (whose folder Python searches first): its path
    below that folder, dotted, without .py (a package's __init__.py: the package's name)."""
    relative = posixpath.relpath(target, folder or ".").removesuffix(".py").removesuffix("/__init__")
    return relative.replace("/", ".")


def imported_names(doc: Document, importer: str, name: str) -> set[str]:
    """Every module name the generated file imports (import a.b, from a.b import c: a, a.b, a.b.c; a relative
    import resolved against its package, name being its own module name), read from its code; nothing if it does
    not parse (check reports the program's own error when it runs)."""
    try:
        tree = ast.parse(render(doc, importer)[0])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    package = name.split(".") if importer.endswith("/__init__.py") else name.split(".")[:-1]
    names: set[str] = set()
    for node in live_nodes(tree):
        if isinstance(node, ast.Import):
            dotted = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (package[: len(package) - node.level + 1] if node.level else []) + \
                (node.module.split(".") if node.module else [])
            dotted = [".".join(base)] + [".".join([*base, alias.name]) for alias in node.names]
        else:
            continue
        for dotted_name in filter(None, dotted):
            parts = dotted_name.split(".")
            names |= {".".join(parts[:end]) for end in range(1, len(parts) + 1)}
    return names


def live_nodes(tree: ast.Module):
    """The nodes of a module that may run: all but a branch under a test that is always false (if False:, while 0:)
    and the body of a function that nothing in the module names (never called: its imports never happen). A
    function named anywhere (called, passed, decorated: a decorator may register it) counts as live."""
    named = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    named |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    waiting = [tree]
    while waiting:
        node = waiting.pop()
        yield node
        if isinstance(node, (ast.If, ast.While)) and is_always_false(node.test):
            children = node.orelse
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name not in named \
                and not node.decorator_list:
            children = []
        else:
            children = list(ast.iter_child_nodes(node))
        waiting.extend(reversed(children))


def is_always_false(test: ast.expr) -> bool:
    """A test Python reads as false before it runs anything: a constant like False, 0, None or ""."""
    return isinstance(test, ast.Constant) and not test.value
