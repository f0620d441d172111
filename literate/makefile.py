"""The lesson's own commands, read from the Makefile beside it (as lines, never run): the make targets it has, and
which of them run tangle.py check on each program. What a message, the page or the notebook tells a reader to run is
the command that works for the lesson in hand: `make stitch` where that Makefile has a stitch target, else tangle.py's
own command line for the lesson."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from .files import read_regular
from .model import Document, UserError

MAKEFILES = ("GNUmakefile", "makefile", "Makefile")  # the order GNU make looks for them in
MAX_MAKEFILE_BYTES = 1 << 20
RULE = re.compile(r"([^\t:=#][^:=#]*)::?(?!=)")  # "check: | .venv/stamp": its targets; not "X := ..."
SHELL_BREAKS = {";", "&&", "||", "|", "&"}
TOOLS = Path(__file__).resolve().parent.parent  # the folder of tangle.py


ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(:=|::=|\?=|=)\s*(.*)")  # MD := lesson.md
VARIABLE = re.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]")  # $(MD) or ${MD}
MAX_EXPANSIONS = 8  # a variable that names another, and so on: deep enough for a Makefile, never a loop


@dataclass(frozen=True)
class Rule:
    targets: tuple[str, ...]  # the targets it names, but .PHONY, %.o and $(X)
    recipe: tuple[str, ...]  # its recipe's lines, a continued line joined, the Makefile's simple variables put in


def read_rules(folder: Path) -> list[Rule] | None:
    """The rules of the Makefile in folder; None where there is none that can be read. A variable the Makefile
    gives a value (MD := lesson.md) stands in the recipes as that value; any other stays as written."""
    for name in MAKEFILES:
        try:
            raw = read_regular(folder / name, name, MAX_MAKEFILE_BYTES)
        except UserError:  # a folder, a FIFO, too large: not a Makefile the tools can read
            return None
        if raw is not None:
            break
    else:
        return None
    values: dict[str, str] = {}
    rules: list[tuple[list[str], list[str]]] = []
    for line in raw.decode("utf-8", "replace").replace("\\\n", " ").splitlines():
        if line.startswith("\t") and rules:
            rules[-1][1].append(line)
        elif line.strip() and not line.lstrip().startswith("#"):
            assignment = ASSIGNMENT.fullmatch(line.strip())
            if assignment and (assignment[2] != "?=" or assignment[1] not in values):  # ?= sets only an unset one
                values[assignment[1]] = assignment[3].strip()
            match = None if assignment else RULE.match(line)  # any other line (X = ...) ends the recipe too
            targets = [make for make in (match[1].split() if match else [])
                       if not make.startswith(".") and "%" not in make and "$" not in make]
            rules.append((targets, []))
    return [Rule(tuple(targets), tuple(expanded(line, values) for line in recipe)) for targets, recipe in rules]


def expanded(line: str, values: dict[str, str]) -> str:
    """The line with each variable the Makefile gives a value replaced by that value, and so on in what that puts in
    (up to MAX_EXPANSIONS deep)."""
    for _ in range(MAX_EXPANSIONS):
        new = VARIABLE.sub(lambda match: values.get(match[1], match[0]), line)
        if new == line:
            break
        line = new
    return line


def lesson_command(doc: Document, action: str) -> str:
    """The command that runs tangle.py's action (tangle, stitch, check) on this lesson: make TARGET where a target
    of the Makefile beside it runs it (the one named action, if that one does), else tangle.py's own command line,
    tangle.py as seen from here."""
    makes = [target for rule in read_rules(doc.folder) or [] for line in rule.recipe
             if tangle_runs(doc, line, action) for target in rule.targets]
    if makes:
        return make_command(doc, action if action in makes else makes[0])
    return f"python {shlex.quote(os.path.relpath(TOOLS / 'tangle.py'))} {action} {shlex.quote(doc.shown)}"


def make_command(doc: Document, target: str) -> str:
    """make TARGET, run in the lesson's folder: from another folder, make -C that folder."""
    if os.path.realpath(doc.folder) == os.path.realpath("."):
        return f"make {target}"
    return f"make -C {shlex.quote(os.path.relpath(doc.folder))} {target}"


def make_targets(doc: Document) -> dict[str, list[str]] | None:
    """For each program with a transcript, the targets of the Makefile beside the lesson whose recipe runs
    tangle.py check on this lesson with --only naming it, or without --only; None where there is no Makefile
    that can be read."""
    rules = read_rules(doc.folder)
    if rules is None:
        return None
    found: dict[str, dict[str, None]] = {target: {} for target in doc.transcripts}  # a dict as an ordered set
    for rule in rules:
        for line in rule.recipe:
            for only in tangle_runs(doc, line, "check"):
                for target in doc.transcripts:
                    if only is None or os.path.normpath(only) == target:
                        found[target].update(dict.fromkeys(rule.targets))
    return {target: list(makes) for target, makes in found.items()}


def tangle_runs(doc: Document, recipe: str, action: str) -> list[str | None]:
    """For each `tangle.py ACTION [MD] [--only PATH]` on this lesson in a recipe line, the PATH it names, or None
    (paths as the lesson writes them: make runs in the Makefile's folder, the lesson's)."""
    try:
        words = shlex.split(recipe)
    except ValueError:  # an unclosed quote
        return []
    starts = [index for index, word in enumerate(words[:-1])
              if os.path.basename(word) == "tangle.py" and words[index + 1] == action]
    runs: list[str | None] = []
    for start in starts:
        lesson, only, rest = "attention.md", None, iter(words[start + 2 :])
        for word in rest:
            if word in SHELL_BREAKS:
                break
            if word in ("--only", "--timeout"):
                value = next(rest, "")
                only = value if word == "--only" else only
            elif word.startswith("--only="):
                only = word.partition("=")[2]
            elif not word.startswith("-"):
                lesson = word
        if os.path.abspath(doc.folder / lesson) == os.path.abspath(doc.path):
            runs.append(only)
    return runs


def check_command(doc: Document, program: str) -> str:
    """The command that runs program and compares its output with its transcript: the first make target that does
    (make_targets), else tangle.py's check of the lesson."""
    makes = (make_targets(doc) or {}).get(program)
    return make_command(doc, makes[0]) if makes else lesson_command(doc, "check")
