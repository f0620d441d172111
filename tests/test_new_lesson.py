"""docs/new-lesson.md followed as a new author would: its commands copied out of the page (every ```sh fence, in
order) and run in one shell, with a home folder of their own. Then what they made is looked at: each lesson
(Chinese, English) checks, its page and notebook are there, and its notebook, run top to bottom in a fresh kernel,
prints the transcript the lesson shows, and runs its playground.

Needs the notebook's and the page's packages; skipped without them, like test_second_lesson.py."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

if any(importlib.util.find_spec(name) is None for name in ("nbformat", "nbclient", "ipykernel", "latex2mathml")):
    pytest.skip("the notebook's and the page's packages are not installed: make test installs them",
                allow_module_level=True)

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

import conftest  # noqa: E402
import literate.starter  # noqa: E402

GUIDE = conftest.ROOT / "docs" / "new-lesson.md"
ENGLISH_GUIDE = conftest.ROOT / "docs" / "new-lesson.en.md"


def guide_commands(guide: Path = GUIDE) -> list[str]:
    """The lines of every ```sh fence of the guide, in order."""
    return [line for fence in re.findall(r"^```sh\n(.*?)^```$", guide.read_text(encoding="utf-8"), re.M | re.S)
            for line in fence.splitlines() if line.strip()]


def follow(guide: Path, home: Path) -> None:
    """The guide's commands, run in one shell from the project's folder, as the guide says, with home as $HOME."""
    script = "set -e\n" + "\n".join(guide_commands(guide)) + "\n"
    environment = {**os.environ, "HOME": str(home), "MAKEFLAGS": ""}
    done = subprocess.run(["bash", "-c", script], cwd=conftest.ROOT, env=environment, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, f"a step of docs/{guide.name} failed:\n{done.stdout}\n{done.stderr}"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A home folder in which the guide's commands have run."""
    home = tmp_path_factory.mktemp("home")
    follow(GUIDE, home)
    return home


def test_the_english_guide_starts_an_english_lesson_and_makes_its_page_and_notebook(tmp_path):
    commands = guide_commands(ENGLISH_GUIDE)
    assert commands[0] == "make new FOLDER=~/softmax-en LESSON_LANG=en" and "cd ~/softmax-en" in commands
    follow(ENGLISH_GUIDE, tmp_path)
    page = (tmp_path / "softmax-en" / "build" / "lesson.html").read_text(encoding="utf-8")
    assert '<html lang="en">' in page and (tmp_path / "softmax-en" / "build" / "lesson.ipynb").is_file()


def test_the_guide_starts_a_lesson_then_checks_it_and_makes_its_page_and_notebook():
    commands = guide_commands()
    assert commands[0].startswith("make new FOLDER=~/") and "cd ~/softmax" in commands
    assert {"make check", "make html", "make notebook", "make update"} <= set(commands)


# each lesson, what it prints, and what its page and notebook say in their own words, in its language
LESSONS = [("softmax", "最大的概率 0.6590\n", '<html lang="zh-CN">', "标着 playground 的格子是留给你试的"),
           ("softmax-en", "largest probability 0.6590\n", '<html lang="en">',
            "The cells tagged playground are yours to try things in")]
CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("folder, printed, html_tag, playgrounds", LESSONS)
def test_each_new_lesson_passes_every_tool_and_its_notebook_prints_its_transcript(home, folder, printed, html_tag,
                                                                                   playgrounds):
    lesson = home / folder
    text = (lesson / "lesson.md").read_text(encoding="utf-8")
    assert f"```text {{transcript}}\n{printed}```" in text  # recorded from the run, not written
    listed = (lesson / "lesson.quotes.txt").read_text(encoding="utf-8")  # its one number, proven by the line it quotes
    quoted_line = printed.replace("0.6590", "⟦0.6590⟧")  # the number it quotes marked on its line
    assert re.search(rf"⟦0\.6590⟧[:：]\tgenerated/lesson\.py 1:1:1\t{quoted_line}", listed)
    assert not re.search(r"^\? ", listed, re.M)  # and read: the starter's sentence is written to quote that line
    assert "transcript unchanged" in make(lesson, "update")
    (lesson / "lesson.md").write_text(text.replace("\n\n", "\n\nA paragraph that moves the code down.\n\n", 1),
                                      encoding="utf-8")  # a prose-only edit: generated/ is out of date
    assert "transcript unchanged" in make(lesson, "update")  # make update tangles first
    generated = lesson / "generated" / "lesson.py"
    generated.write_text(generated.read_text(encoding="utf-8").replace("total = sum(exps)",
                                                                       "total = sum(exps)  # 1 when all are 0"))
    make(lesson, "stitch")
    assert "    total = sum(exps)  # 1 when all are 0\n" in (lesson / "lesson.md").read_text(encoding="utf-8")
    assert "transcript matches" in make(lesson, "check")
    make(lesson, "html")
    page = (lesson / "build" / "lesson.html").read_text(encoding="utf-8")
    assert "0.6590" in page and "book_figures.txt" not in page and "docs/numbers.md" not in page  # not its files
    assert re.search(r'<figcaption title="lesson\.md:\d+[:：] ?[^"]*make check ', page)  # the lesson's own check
    assert html_tag in page and (folder != "softmax-en" or not CHINESE.search(page))  # all in English: none
    broken = (lesson / "lesson.md").read_text(encoding="utf-8").replace("print(softmax(", "print(sofmax(")
    (lesson / "lesson.md").write_text(broken, encoding="utf-8")
    checked = subprocess.run(["make", "-s", "check"], cwd=lesson, capture_output=True, text=True, timeout=300)
    line = broken.split("\n").index("print(sofmax([2.0, 1.0, 0.1], temperature=5.0))") + 1
    assert f"lesson.md:{line}: error: the playground reads sofmax" in checked.stderr and checked.returncode != 0
    (lesson / "lesson.md").write_text(broken.replace("print(sofmax(", "print(softmax("), encoding="utf-8")
    make(lesson, "notebook")
    assert "build/lesson.ipynb" in make(lesson, "-n lab") and "jupyter lab" in make(lesson, "-n lab")
    built = nbformat.read(lesson / "build" / "lesson.ipynb", as_version=4)
    NotebookClient(built, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(lesson)}}).execute()
    [note] = [cell.source for cell in built.cells if cell.metadata["attention"]["role"] == "note"]
    assert "numpy" not in note and playgrounds in note  # its program uses none; it has one
    assert "`TOOLS`" in note  # the .venv make lab installs into is the tools', not one beside the lesson
    assert folder != "softmax-en" or not CHINESE.search(nbformat.writes(built))
    by_role = {cell.metadata["attention"]["role"]: cell for cell in built.cells if cell.cell_type == "code"}
    assert stdout(by_role["transcript"]) == printed
    assert stdout(by_role["playground"]).startswith("[0.")  # softmax at a higher temperature, run in the kernel


def make(folder: Path, target: str) -> str:
    """The lesson's own make target, run in its folder: what it printed (it must succeed)."""
    done = subprocess.run(["make", "-s", *target.split()], cwd=folder, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "MAKEFLAGS": ""})
    assert done.returncode == 0, f"make {target} in {folder.name}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def stdout(cell) -> str:
    return "".join(output.text for output in cell.get("outputs", [])
                   if output.output_type == "stream" and output.name == "stdout")


def test_the_tools_name_the_new_lessons_own_commands(tmp_path):
    """What a changed output asks for is the lesson's make update, which works in its folder."""
    lesson = tmp_path / "lesson"
    subprocess.run([sys.executable, "tangle.py", "new", str(lesson)], cwd=conftest.ROOT, check=True,
                   capture_output=True, timeout=120)
    text = (lesson / "lesson.md").read_text(encoding="utf-8")
    (lesson / "lesson.md").write_text(text.replace("最大的概率 {max", "最大的 {max"), encoding="utf-8")
    make(lesson, "tangle")
    checked = subprocess.run(["make", "-s", "check"], cwd=lesson, capture_output=True, text=True, timeout=300)
    assert checked.returncode != 0 and "if the new output is right, record it: make update" in checked.stderr
    updated = subprocess.run(["make", "-s", "update"], cwd=lesson, capture_output=True, text=True, timeout=300)
    # the same number at the same place of a changed line: the list follows it, saying so
    assert updated.returncode == 0 and "lesson.quotes.txt: followed the new transcript (1 entry)" in updated.stdout
    assert "its line generated/lesson.py 1:1:1 now reads '最大的 ⟦0.6590⟧'; it still quotes the number marked " \
           "there: kept" in updated.stderr
    make(lesson, "check")
    generated = lesson / "generated" / "lesson.py"
    generated.write_text(generated.read_text(encoding="utf-8") + "# mine\n", encoding="utf-8")
    checked = subprocess.run(["make", "-s", "check"], cwd=lesson, capture_output=True, text=True, timeout=300)
    assert "edited by hand since it was last tangled; run make stitch to move your change" in checked.stderr
    make(lesson, "clean")


def test_a_new_lesson_goes_only_into_a_new_or_empty_folder(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    done = subprocess.run([sys.executable, "tangle.py", "new", str(tmp_path / "taken")], cwd=conftest.ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "not empty" in done.stderr and "Traceback" not in done.stderr
    assert sorted(path.name for path in (tmp_path / "taken").iterdir()) == ["notes.txt"]


def test_the_makefile_names_the_tools_where_they_are():
    made = literate.starter.MAKEFILE.format(lesson="lesson.md", stem="lesson", tools=literate.starter.make_path(Path("/a b/c#d")))
    assert "TOOLS := /a\\ b/c\\#d\n" in made


def test_a_number_the_author_adds_is_listed_by_make_quotes_as_a_guess_to_read(tmp_path):
    """The guide's "make quotes" step: a new number fails until its guessed line has been read; so does an example,
    until its reason is written."""
    lesson = tmp_path / "lesson"
    subprocess.run([sys.executable, "tangle.py", "new", str(lesson), "--lang", "en"], cwd=conftest.ROOT, check=True,
                   capture_output=True, timeout=120)
    md = lesson / "lesson.md"
    added = "The largest score wins 0.6590 of the mass. Take 7.5, say. Of the three scores,"
    md.write_text(md.read_text(encoding="utf-8").replace("Of the three scores,", added), encoding="utf-8")
    checked = subprocess.run(["make", "-s", "check"], cwd=lesson, capture_output=True, text=True, timeout=300)
    assert checked.returncode != 0
    assert "lesson.quotes.txt names it nowhere; make quotes lists it with the place it guesses" in checked.stderr
    make(lesson, "quotes")
    listed = lesson / "lesson.quotes.txt"
    lines = listed.read_text(encoding="utf-8").split("\n")
    assert "? The largest score wins ⟦0.6590⟧ of the mass.\tgenerated/lesson.py 1:1:1\tlargest probability ⟦0.6590⟧" \
        in lines
    assert "? Take ⟦7.5⟧, say.\tnot a quote\twhy?" in lines
    checked = subprocess.run(["make", "-s", "check"], cwd=lesson, capture_output=True, text=True, timeout=300)
    assert checked.returncode != 0 and "the tool guessed the line it quotes" in checked.stderr
    listed.write_text(listed.read_text(encoding="utf-8").replace("? ", "").replace("why?", "an example"),
                      encoding="utf-8")  # read, and the reason written
    make(lesson, "check")
