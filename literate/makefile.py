"""The lesson's own commands, read from the Makefile beside it (as lines, never run): which of its targets run
tangle.py on the lesson, and which of them check each program. What a message, the page or the notebook tells a reader
to run is the command that works for the lesson in hand: `make stitch` where a target of that Makefile runs
`tangle.py stitch` on it and nothing else of tangle.py's, `make -C FOLDER stitch` from another folder, else tangle.py's
own command line for the lesson."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from .files import read_regular
from .model import DEFAULT_LESSON, Document, UserError

MAKEFILES = ("GNUmakefile", "makefile", "Makefile")  # the order GNU make looks for them in
MAX_MAKEFILE_BYTES = 1 << 20
RULE = re.compile(r"([^\t:=#][^:=#]*)::?(?!=)")  # "check: | .venv/stamp": its targets; not "X := ..."
# MD := lesson.md (also with export or override before it); its value up to a comment
ASSIGNMENT = re.compile(r"(?:(?:export|override)\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(:=|::=|\?=|=)\s*([^#]*)")
VARIABLE = re.compile(r"(?<!\$)\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]")  # $(MD) or ${MD}; not $$(MD), the shell's
MAX_EXPANSIONS = 8  # a variable that names another, and so on: deep enough for a Makefile, never a loop
COMMAND_ENDS = re.compile(r"[;|&]+|[0-9]*[<>].*|#.*")  # a word that ends tangle.py's arguments: ; && | > 2>&1 #
TOOLS = Path(__file__).resolve().parent.parent  # the folder of tangle.py


@dataclass(frozen=True)
class Rule:
    targets: tuple[str, ...]  # the targets it names, but .PHONY, %.o and $(X)
    recipe: tuple[str, ...]  # its recipe's lines, a continued line joined, the Makefile's simple variables put in


def read_rules(folder: Path) -> list[Rule] | None:
    """The rules of the Makefile in folder; None where there is none that can be read."""
    for name in MAKEFILES:
        try:
            raw = read_regular(folder / name, name, MAX_MAKEFILE_BYTES)
        except UserError:  # a folder, a FIFO, too large: not a Makefile the tools can read
            return None
        if raw is not None:
            return parse_rules(re.sub(r"\\\r?\n", " ", raw.decode("utf-8", "replace")).splitlines())
    return None


def parse_rules(lines: list[str]) -> list[Rule]:
    """The rules of a Makefile's lines (continued lines joined). A variable it gives a value (MD := lesson.md)
    stands in the recipes as that value; any other stays as written."""
    values: dict[str, str] = {}
    rules: list[tuple[list[str], list[str]]] = []
    for line in lines:
        if line.startswith("\t") and rules:
            rules[-1][1].append(line)
        elif line.strip() and not line.lstrip().startswith("#"):
            assignment = ASSIGNMENT.fullmatch(line.strip())
            if assignment and (assignment[2] != "?=" or assignment[1] not in values):  # ?= sets only an unset one
                values[assignment[1]] = assignment[3].strip()
            match = None if assignment else RULE.match(line)  # any other line (X = ...) ends the recipe too
            targets = [make for make in (match[1].split() if match else [])
                       if not make.startswith(".") and "%" not in make and "$" not in make]
            recipe = line[match.end() :].partition(";")[2] if match and ";" in line[match.end() :] else None
            rules.append((targets, [recipe] if recipe else []))  # check: ; recipe
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


def lesson_command(doc: Document, action: str, start: Path | str = ".") -> str:
    """The command that runs tangle.py's action (tangle, stitch, check, quotes) on this lesson from the folder
    start (a message: where the tool runs; the page and the notebook: the lesson's folder, where their reader
    is): make TARGET where a target of the Makefile beside it runs that action on it and no other of tangle.py's
    (the one named action first), else tangle.py's own command line."""
    makes = [target for rule in read_rules(doc.folder) or [] if runs_only(doc, rule, action) for target in rule.targets]
    if makes:
        return make_command(doc, action if action in makes else makes[0], start)
    return tangle_py_command(doc, action, start)


def tangle_py_command(doc: Document, action: str, start: Path | str = ".") -> str:
    """python tangle.py ACTION LESSON, both paths as seen from the folder start."""
    return f"python {shlex.quote(seen_from(TOOLS / 'tangle.py', start))} {action} {shlex.quote(lesson_path(doc, start))}"


def runs_only(doc: Document, rule: Rule, action: str) -> bool:
    """Whether a rule's recipe runs tangle.py's action on this lesson, and nothing else of tangle.py's (an update
    target that tangles first is no answer to "run tangle")."""
    actions = {done for line in rule.recipe for done, _ in tangle_runs(doc, line)}
    return actions == {action}


def make_command(doc: Document, target: str, start: Path | str = ".") -> str:
    """make TARGET, run in the lesson's folder (make_in)."""
    return f"{make_in(doc, start)} {shlex.quote(target)}"


def make_in(doc: Document, start: Path | str = ".") -> str:
    """make, from the lesson's folder; make -C that folder, from another."""
    if os.path.realpath(doc.folder) == os.path.realpath(start):
        return "make"
    return f"make -C {shlex.quote(seen_from(doc.folder, start))}"


def lesson_path(doc: Document, start: Path | str) -> str:
    """The lesson as the reader names it: as typed, from where the tool runs; its file name, from its folder."""
    return doc.path.name if os.path.realpath(start) == os.path.realpath(doc.folder) else doc.shown


def seen_from(path: Path, start: Path | str) -> str:
    """A path as seen from start: relative, or whole where that is shorter (../../tmp/x is /tmp/x) or where no
    relative path leads there (another drive)."""
    try:
        relative = os.path.relpath(path, start)
    except ValueError:
        return str(path)
    whole = os.path.abspath(path)
    return whole if len(whole) < len(relative) else relative


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
            for action, only in tangle_runs(doc, line):
                for target in doc.transcripts if action == "check" else ():
                    if only is None or os.path.normpath(only) == target:
                        found[target].update(dict.fromkeys(rule.targets))
    return {target: list(makes) for target, makes in found.items()}


def tangle_runs(doc: Document, recipe: str) -> list[tuple[str, str | None]]:
    """(action, the PATH of --only or None) for each `tangle.py ACTION [MD] [--only PATH]` on this lesson in a recipe
    line (paths as the lesson writes them: make runs in the Makefile's folder, the lesson's)."""
    try:
        words = shlex.split(recipe, comments=True)
    except ValueError:  # an unclosed quote
        return []
    starts = [index for index, word in enumerate(words[:-1]) if os.path.basename(word) == "tangle.py"]
    runs: list[tuple[str, str | None]] = []
    for start in starts:
        lesson, only, rest = DEFAULT_LESSON, None, iter(words[start + 2 :])
        for word in rest:
            if COMMAND_ENDS.fullmatch(word):
                break
            if word in ("--only", "--timeout"):
                value = next(rest, "")
                only = value if word == "--only" else only
            elif word.startswith("--only="):
                only = word.partition("=")[2]
            elif not word.startswith("-"):
                lesson = word
        if os.path.abspath(doc.folder / lesson) == os.path.abspath(doc.path):
            runs.append((words[start + 1], only))
    return runs


def check_command(doc: Document, program: str, start: Path | str = ".") -> str:
    """The command that runs program and compares its output with its transcript, from the folder start: the first
    make target that does (make_targets), else tangle.py's check of the lesson."""
    makes = (make_targets(doc) or {}).get(program)
    return make_command(doc, makes[0], start) if makes else lesson_command(doc, "check", start)
