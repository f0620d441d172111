"""A new lesson in a folder of its own (tangle.py new FOLDER): the smallest lesson that every tool takes (a chunk, a
program, its transcript, a number its prose quotes, a formula, a playground), in Chinese or English, with a Makefile
whose targets run this project's tools on it (make tangle, check, update, stitch, quotes, html, notebook, lab:
the commands the tools' messages name). Its transcript is not written here: the program is run, as make update runs
it, and what it prints is recorded."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .commands import command_tangle, command_update
from .files import document_lock, write_atomically
from .makefile import TOOLS
from .markdown import load
from .model import OK, UserError
from .listing import written_list
from .quoting import GUESSED, list_path, list_shown

LESSON = "lesson.md"

# The lesson, its words in either language filled in (WORDS); the code is the same in both.
LESSON_TEXT = """\
# {title}

{intro}

```python {{#softmax}}
import math


def softmax(scores, temperature=1.0):
    exps = [math.exp(score / temperature) for score in scores]
    total = sum(exps)
    return [value / total for value in exps]
```

```python {{file=generated/lesson.py}}
<<softmax>>


def main():
    probabilities = softmax([2.0, 1.0, 0.1])
    print(f"{printed} {{max(probabilities):.4f}}")


if __name__ == "__main__":
    main()
```

{quoted}

```text {{transcript}}
```

{try_}

```python {{playground=generated/lesson.py}}
print(softmax([2.0, 1.0, 0.1], temperature=5.0))
```

<!-- literate
{declared}update: generated/lesson.py make update
-->
"""

WORDS = {
    "zh": {"title": "温度：把分数变成概率",
           "intro": "softmax 把一组分数变成概率：$`p_i = e^{s_i/T} / \\sum_j e^{s_j/T}`$，温度 $`T`$ 越高，概率越平均。",
           "printed": "最大的概率", "quoted": "三个分数里最大的那个，概率是 0.6590：",
           "try_": "自己试一试：把温度调高，再运行这一格。", "declared": ""},
    "en": {"title": "Temperature: from scores to probabilities",
           "intro": "softmax turns scores into probabilities: $`p_i = e^{s_i/T} / \\sum_j e^{s_j/T}`$; the higher the "
                    "temperature $`T`$, the\nmore even they are.",
           "printed": "largest probability", "quoted": "Of the three scores, the largest gets a probability of 0.6590:",
           "try_": "Try it: raise the temperature and run this cell again.",
           "declared": "language: en\n"},  # so that a Chinese word in its prose leaves its tools' words English
}

MAKEFILE = """\
# The commands of {lesson}, run by the tools at TOOLS with their .venv (which make builds there on first use).
TOOLS := {tools}
PY := $(TOOLS)/.venv/bin/python
MD := {lesson}

.PHONY: help tangle check update stitch quotes html notebook lab clean
.DEFAULT_GOAL := help

help: ## list the targets
\t@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{{printf "  make %-10s %s\\n", $$1, $$2}}'

tangle: ## write generated/ from the lesson
\t@$(MAKE) -s -C $(TOOLS) .venv/stamp
\t$(PY) $(TOOLS)/tangle.py tangle $(MD)

check: ## verify generated/, the transcript and every number in the prose
\t@$(MAKE) -s -C $(TOOLS) .venv/stamp
\t$(PY) $(TOOLS)/tangle.py check $(MD)

update: ## tangle, rerun the program and write what it prints into the lesson's transcript
\t@$(MAKE) -s -C $(TOOLS) .venv/stamp
\t$(PY) $(TOOLS)/tangle.py tangle $(MD)
\t$(PY) $(TOOLS)/tangle.py update $(MD)

stitch: ## move edits made in generated/ back into the lesson
\t@$(MAKE) -s -C $(TOOLS) .venv/stamp
\t$(PY) $(TOOLS)/tangle.py stitch $(MD)

quotes: ## list the transcript line each number in the prose quotes
\t@$(MAKE) -s -C $(TOOLS) .venv/stamp
\t$(PY) $(TOOLS)/tangle.py quotes $(MD)

html: ## write build/{stem}.html: the lesson as one page
\t@$(MAKE) -s -C $(TOOLS) .venv/html-stamp
\t$(PY) $(TOOLS)/weave.py $(MD)

notebook: ## write build/{stem}.ipynb: the lesson as a Jupyter notebook
\t@$(MAKE) -s -C $(TOOLS) .venv/notebook-stamp
\t$(PY) $(TOOLS)/notebook.py $(MD)

clean: ## remove build/ (the page and the notebook)
\trm -rf build

lab: notebook ## open the notebook in JupyterLab set up for the lesson, the tools' .venv as its kernel (LAB_ARGS=)
\t@$(MAKE) -s -C $(TOOLS) .venv/lab-stamp
\tJUPYTER_PREFER_ENV_PATH=1 JUPYTERLAB_DIR= $(TOOLS)/.venv/bin/jupyter lab --ServerApp.root_dir=. \\
\t    $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS) build/{stem}.ipynb
"""


def command_new(args: argparse.Namespace) -> int:
    """Write the new lesson and its Makefile into args.folder (new, or empty), then tangle it and run it."""
    folder: Path = args.folder
    try:
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise UserError(f"{folder}: error: {'not a folder' if not folder.is_dir() else 'not empty'}; a new "
                            "lesson goes into a new folder (or an empty one): name another")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / LESSON).write_text(LESSON_TEXT.format(**WORDS[args.lang]), encoding="utf-8")
        makefile = MAKEFILE.format(lesson=LESSON, stem=Path(LESSON).stem, tools=make_path(TOOLS))
        (folder / "Makefile").write_text(makefile, encoding="utf-8")
        (folder / ".gitignore").write_text("build/\n", encoding="utf-8")
    except OSError as error:
        raise UserError(f"{folder}: error: cannot write the new lesson there: {error.strerror or error}") from None
    md = folder / LESSON
    print(f"wrote {md}, {folder / 'Makefile'}, {folder / '.gitignore'}; tangling it and running its program:")
    done = command_tangle(argparse.Namespace(md=md, force=False))
    if done == OK:
        with document_lock(md, str(md), "update"):
            done = command_update(argparse.Namespace(md=md, timeout=600, only=None, progress=False))
    if done == OK:
        write_list(md)
        guide = "new-lesson.en.md" if args.lang == "en" else "new-lesson.md"
        print(f"next: cd {folder} and make check (make help lists the lesson's commands; docs/{guide} in "
              f"{TOOLS} walks on from here)")
    return done


def write_list(md: Path) -> None:
    """The new lesson's list of quotes (what make check proves each prose number against), its one number
    confirmed: the starter's sentence is written to quote the one line its program prints, which tests check. The
    numbers the author adds, make quotes lists as guesses for the author to read."""
    doc = load(md, str(md))
    text, _ = written_list(doc)
    confirmed = "".join(line.removeprefix(GUESSED) for line in text.splitlines(keepends=True))
    write_atomically(list_path(doc), confirmed.encode())
    print(f"wrote {list_shown(doc)}: the line of output each number in the prose quotes")


def make_path(path: Path) -> str:
    """A path as make reads it: spaces and # escaped (make splits words at a space, and # starts a comment)."""
    text = os.fspath(path)
    if any(character in text for character in "$\n"):
        print(f"warning: the tools' path {text!r} holds $ or a line break, which a Makefile cannot name; "
              "edit TOOLS in the new Makefile", file=sys.stderr)
    return text.replace("#", "\\#").replace(" ", "\\ ")
