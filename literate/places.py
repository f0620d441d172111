"""Where a generated file may go: never where a tool would run or read it unasked, and never where Python would
import it in place of another module. A root is code the lesson shows; written into the folder a tool runs in, or
under the name of a module the tools, their tests or the lesson's programs import, it would run as that module."""

from __future__ import annotations

import importlib.machinery
import os
import sys
import sysconfig
from pathlib import Path


# Files that a tool runs or reads by itself when it finds them, unasked: Python's start-up hooks (and pyvenv.cfg,
# which makes a folder a virtual environment), pytest's conftest.py and its configuration (pytest.ini,
# pytest.toml, tox.ini, setup.cfg, pyproject.toml: addopts can silence every test), the files that make a folder a
# Python project (setup.py, and nox's noxfile.py), uv's uv.toml.
READ_UNASKED = {"sitecustomize.py", "usercustomize.py", "pyvenv.cfg", "conftest.py", "pytest.ini", "pytest.toml",
                "tox.ini", "setup.cfg", "pyproject.toml", "setup.py", "noxfile.py", "uv.toml"}
TOOLS_FOLDER = Path(__file__).resolve().parent.parent  # tangle.py, weave.py, notebook.py and this package


def confinement_problem(relative: str, folder: Path) -> str | None:
    """Why a path inside the lesson's folder (folder) is no place for a generated file, or None: a hidden folder
    (.git, .venv, caches) or file (.pre-commit-config.yaml), the tests, a file that a tool runs or reads by itself
    when it finds it (READ_UNASKED), or a Python module that would be imported in place of another
    (shadowing_problem)."""
    parts = relative.split("/")
    if any(part.startswith(".") or part == "__pycache__" for part in parts[:-1]):
        return "is inside a hidden or cache folder (.git, .venv, __pycache__ ...); write generated files elsewhere"
    if parts[-1].startswith("."):
        return "is a hidden file, the kind that tools (git hooks, CI, editors) read by themselves; give the root " \
               "another path"
    if parts[0] == "tests" or parts[-1].lower() in READ_UNASKED:
        return (f"would be run or read by itself ({parts[-1]} or a file in tests/ is what Python, a virtual "
                "environment, pip or pytest picks up unasked): give the root another path")
    return shadowing_problem(parts, folder)


def shadowing_problem(parts: list[str], folder: Path) -> str | None:
    """A .py root that Python would import in place of another module: any module directly in the lesson's folder
    (NAME.py, or a package NAME/__init__.py), which Python searches first when a tool, make or python -m pytest runs
    there; and, in any folder, a module named as one Python finds elsewhere (standard, installed, or the tools'
    own: tangle, literate, ...), since the folder of a program is searched first when it runs, and tests put it on
    their path. A name found by the running Python: a lesson refused here may pass where fewer packages are
    installed, never the other way round for the standard modules and the tools'."""
    if not parts[-1].endswith(".py"):  # only .py roots are imported; .pyc, .so, .pth are no roots (suffixes)
        return None
    package = parts[-1] == "__init__.py" and len(parts) > 1
    name = parts[-2] if package else parts[-1].removesuffix(".py")
    if len(parts) == 1 + package:
        return (f"would be the module {name} in the folder of the lesson, which Python searches first when a tool "
                f"runs there (tangle.py, make, python -m pytest): import {name} would run it in place of any other "
                f"module {name}; put it into a folder, such as generated/, under a name no module has")
    own = os.path.realpath(os.path.join(folder, *parts))
    where = known_module(name, own, os.path.realpath(folder))
    if where:
        return (f"takes the name of {where}: run from its folder (as the lesson's programs are, and as tests import "
                f"them), import {name} would run it instead; give the root another name")
    return None


def known_module(name: str, own: str, lesson_folder: str) -> str | None:
    """Which module Python would otherwise import as name (a phrase for a message), or None: a standard module, one
    of the tools' (beside tangle.py), or one installed (installed_folders), as another file than the root itself
    (own: its real path). Namespace packages (a folder without __init__.py) are not counted: any module of that
    name wins over them."""
    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return f"the standard module {name}"
    if found(name, str(TOOLS_FOLDER), own):
        return f"the tools' module {name} (beside tangle.py)"
    if any(found(name, entry, own) for entry in installed_folders(lesson_folder)):
        return f"the installed module {name}"
    return None


def installed_folders(lesson_folder: str) -> list[str]:
    """The folders of sys.path that hold installed modules: the site-packages, and any folder outside the lesson's
    and the tools' (a folder inside them that a test or a program put on sys.path, generated/ say, holds the
    lesson's own modules, which are no installed ones; a .venv inside them holds its site-packages)."""
    site = {os.path.realpath(sysconfig.get_paths()[kind]) for kind in ("purelib", "platlib")}
    mine = (lesson_folder, str(TOOLS_FOLDER))
    folders = []
    for entry in filter(None, sys.path):
        real = os.path.realpath(entry)
        if real in site or not any(real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)
                                   for folder in mine):
            folders.append(entry)
    return folders


def found(name: str, entry: str, own: str) -> bool:
    """Whether a module name is found in this folder of sys.path (a module, or a package with __init__.py) as
    another file than own."""
    try:
        spec = importlib.machinery.PathFinder.find_spec(name, [entry])
    except (ImportError, ValueError, OSError):
        return False
    return spec is not None and spec.origin not in (None, "namespace") and os.path.realpath(spec.origin) != own
