# Literate lesson: attention.md is the source; generated/ is tangled from it.
PYTHON ?= python3
TOOL := tangle.py $(wildcard literate/*.py)
PAGE := weave.py $(wildcard literate/page/*.py) literate/page/style.css
NOTEBOOK := notebook.py $(wildcard literate/notebook/*.py)
VENV_PY := .venv/bin/python

.PHONY: help tangle stitch check html notebook lab test update experiments update-experiments portability bench new clean
.DEFAULT_GOAL := help

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# Built from scratch, and removed again if any step fails: a half-built .venv is never reused.
.venv/stamp: requirements.txt
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: no $(PYTHON) on PATH; install Python 3.10 or newer, or name one: make PYTHON=/path/to/python3" >&2; exit 127; }
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "error: $(PYTHON) is Python %d.%d; this project needs 3.10 or newer: make PYTHON=python3.12 (any 3.10 or newer)" % sys.version_info[:2])'
	rm -rf .venv
	$(PYTHON) -m venv .venv && .venv/bin/pip install -r requirements.txt && touch $@ || \
	    { rm -rf .venv; echo "error: could not build .venv (see above); nothing was left behind" >&2; exit 1; }

# latex2mathml and pygments: only the page and the tests need them.
.venv/html-stamp: requirements-html.txt | .venv/stamp
	.venv/bin/pip install -r requirements-html.txt && touch $@

# nbformat writes the notebook; nbclient and ipykernel run it in the tests.
.venv/notebook-stamp: requirements-notebook.txt | .venv/stamp
	.venv/bin/pip install -r requirements-notebook.txt && touch $@

# JupyterLab, in .venv beside the lesson's numpy: make lab runs it, so that its kernel is .venv's Python. With it the
# lesson's settings for it, lab/overrides.json, as the defaults of that JupyterLab alone (its overrides.json): every
# cell drawn, so that a link to a cell not yet read lands (JupyterLab's default windowing guesses the height of those);
# no pop-up asking about Jupyter news over the first note; no autosave, so that Run All leaves the notebook as make
# notebook wrote it until you save. Your own JupyterLab settings still apply over these, and none of them is changed.
LAB_SETTINGS := .venv/share/jupyter/lab/settings/overrides.json

.venv/lab-stamp: requirements-lab.txt lab/overrides.json | .venv/notebook-stamp
	.venv/bin/pip install -r requirements-lab.txt && mkdir -p $(dir $(LAB_SETTINGS)) && \
	    cp lab/overrides.json $(LAB_SETTINGS) && touch $@

tangle: | .venv/stamp ## write generated/ from attention.md (refuses to overwrite hand edits)
	$(VENV_PY) tangle.py tangle

generated/attention.py: attention.md $(TOOL) | .venv/stamp
	$(VENV_PY) tangle.py tangle

stitch: | .venv/stamp ## move edits made in generated/ back into their chunks in attention.md, then re-tangle
	$(VENV_PY) tangle.py stitch

check: | .venv/stamp ## verify generated/ is in sync, the lesson's transcript and every prose number (never re-tangles)
	$(VENV_PY) tangle.py check --only generated/attention.py

html: build/attention.html ## write build/attention.html: the lesson as one page, each number linked to its transcript line

build/attention.html: attention.md $(TOOL) $(PAGE) book_figures.txt $(wildcard attention.quotes.txt) | .venv/html-stamp
	$(VENV_PY) weave.py attention.md -o $@

notebook: build/attention.ipynb ## write build/attention.ipynb: the lesson as a Jupyter notebook that prints its transcript

build/attention.ipynb: attention.md $(TOOL) $(NOTEBOOK) | .venv/notebook-stamp
	$(VENV_PY) notebook.py attention.md -o $@

# The kernel: .venv's own python3 kernel spec (ipykernel's, run by .venv's Python), before any of the same name
# in your Jupyter folders (JUPYTER_PREFER_ENV_PATH=1). The settings: .venv's JupyterLab's own, even where
# JUPYTERLAB_DIR names another. The server's root is the lesson's folder, not build/: the file browser shows the
# lesson beside the notebook, and Save As can keep your copy out of build/, which make clean deletes.
# --allow-root only where make runs as root. LAB_ARGS: JupyterLab's own options, e.g. "--no-browser --port 8899".
LAB_ARGS ?=

lab: build/attention.ipynb | .venv/lab-stamp ## open the notebook in JupyterLab set up for the lesson, .venv as its kernel (installs JupyterLab into .venv); options: LAB_ARGS="--no-browser --port 8899"
	JUPYTER_PREFER_ENV_PATH=1 JUPYTERLAB_DIR= .venv/bin/jupyter lab --ServerApp.root_dir=. \
	    $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS) build/attention.ipynb

test: | .venv/stamp .venv/html-stamp .venv/notebook-stamp .venv/lab-stamp ## run all tests (tangle.py, weave.py and the page in chromium, the notebook in a kernel and in JupyterLab, the program, the portability harness)
	$(VENV_PY) -m pytest -q tests/

# The programs write their progress to stderr when ATTENTION_PROGRESS=1; --progress shows it as it comes.
update: generated/attention.py | .venv/stamp ## tangle, rerun the program, rewrite the transcript in attention.md and redraw the figures in figures/
	ATTENTION_PROGRESS=1 $(VENV_PY) tangle.py update --only generated/attention.py --progress

experiments: | .venv/stamp ## run the 30-second experiments (minutes) and verify their transcript
	ATTENTION_PROGRESS=1 $(VENV_PY) tangle.py check --only generated/experiments.py --timeout 3600 --progress

update-experiments: generated/attention.py | .venv/stamp ## rerun the experiments and rewrite their transcript
	ATTENTION_PROGRESS=1 $(VENV_PY) tangle.py update --only generated/experiments.py --timeout 3600 --progress

portability: | .venv/stamp ## compare the program's output across numpy builds and CPU kernels
	$(VENV_PY) tools/portability.py

bench: | .venv/stamp ## time the program
	$(VENV_PY) bench/bench.py

new: | .venv/stamp ## start a new lesson: make new FOLDER=~/my-lesson (LESSON_LANG=en: in English); docs/new-lesson.md
	@test -n "$(FOLDER)" || { echo "error: name the new lesson's folder: make new FOLDER=~/my-lesson" >&2; exit 2; }
	$(VENV_PY) tangle.py new $(FOLDER) --lang $(or $(LESSON_LANG),zh)

clean: ## remove .venv, build/ and caches (generated/ is kept: it is committed)
	rm -rf .venv build .pytest_cache .hypothesis .cache .ruff_cache __pycache__ tests/__pycache__ literate/__pycache__
