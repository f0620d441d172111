"""The names a playground reads that neither it, nor its program, nor Python defines: the reader who runs it in the
notebook would get a NameError. Read from the code, never run. A program whose names the code does not show
(`from module import *` of a module that is no root of the lesson) is taken at its word: nothing is reported."""

from __future__ import annotations

import ast
import builtins
import difflib
import posixpath

from .expansion import render
from .model import Document
from .validation import lookalike

NOTEBOOK_NAMES = {"display", "get_ipython", "In", "Out", "exit", "quit"}  # what IPython defines in every cell


def undefined_name_problems(doc: Document) -> list[str]:
    """An error for the first place each playground reads each name that nothing defines."""
    problems, programs = [], {}
    for found in doc.playgrounds.values():
        if found.program not in programs:
            programs[found.program] = program_names(doc, found.program, set())
        program = programs[found.program]
        if program is None:
            continue
        try:
            tree = ast.parse("\n".join(found.lines))
        except (SyntaxError, ValueError):
            continue  # the notebook's own check says where (ipython.misread), and the kernel does
        written = program | own_names(tree)
        known = written | set(dir(builtins)) | NOTEBOOK_NAMES
        problems += [f"{doc.where(found.fence_line + line)}: error: the playground reads {name}, which neither it "
                     f"nor {found.program} defines: run in the notebook, it stops with a NameError; define it, or "
                     "use a name the program defines" + (lookalike(name, known) or closest(name, written))
                     for name, line in first_reads(tree, known)]
    return problems


def closest(name: str, written: set[str]) -> str:
    """"; did you mean X?" for the name of the code's own that is spelled most like it, if one is close."""
    close = difflib.get_close_matches(name, sorted(written), n=1)
    return f"; did you mean {close[0]}?" if close else ""


def first_reads(tree: ast.Module, known: set[str]) -> list[tuple[str, int]]:
    """(name, line in the fence, 1 for its first) of each name read and not known, where it is first read."""
    first: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in known:
            first[node.id] = min(first.get(node.id, node.lineno), node.lineno)
    return sorted(first.items(), key=lambda item: (item[1], item[0]))


def program_names(doc: Document, target: str, seen: set[str]) -> set[str] | None:
    """Every name a program binds anywhere in its code (an overestimate of what it defines: a playground is only
    told about names nothing binds), those of the lesson's modules it imports with * too; None: it cannot tell."""
    if target in seen:
        return set()
    if target not in doc.roots or not target.endswith(".py"):
        return None
    seen.add(target)
    try:
        tree = ast.parse(render(doc, target)[0])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names = own_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            # a script's own folder comes first on sys.path: `from attention import *` beside it is that file
            module = posixpath.join(posixpath.dirname(target), f"{node.module}.py") if node.module else ""
            more = program_names(doc, module, seen) if node.level <= 1 else None
            if more is None:
                return None
            names |= more
    return names


def own_names(tree: ast.AST) -> set[str]:
    """The names code binds: assigned, defined, imported, taken as a parameter, caught, matched."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*"}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names |= set(node.names)
    return names
