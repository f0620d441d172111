"""tangle.py survives everything: a clear message, never a traceback, nothing lost.

One section per class of trouble: signals and pipes; never overwriting what changed; bounded, regular
inputs; silent drops made diagnostics; line endings; errors that lead somewhere; crashes mapped to the
Markdown. Then a property test drives random documents through random file-system situations."""

import contextlib
import io
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import literate.runner
import literate.expansion  # noqa: E402
import literate.files  # noqa: E402
import literate.markdown  # noqa: E402
import tangle
from conftest import run, tangle_command, write

fcntl = pytest.importorskip("fcntl")  # POSIX only, like most of what is tested here
ROOT = Path(__file__).resolve().parent.parent
TANGLE = ROOT / "tangle.py"
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, sends POSIX signals")
needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="no make")


def lesson(code: str, transcript: str = "old\n") -> str:
    """A one-program lesson: the code as the root, a transcript fence after it."""
    return f"# 课\n\n```python {{file=generated/attention.py}}\n{code}```\n\n```text {{transcript}}\n{transcript}```\n"




def gone(pid: int) -> bool:
    """Dead or a zombie, within two seconds (SIGKILL takes a moment to tear a process down)."""
    for _ in range(200):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.01)
    return False


def wait_for(path: Path, lines: int, seconds: float = 10) -> str:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and path.read_text().count("\n") >= lines:
            return path.read_text()
        time.sleep(0.01)
    raise AssertionError(f"{path} never appeared")


def leftovers(folder: Path) -> list[str]:
    return [path.name for path in folder.rglob("*.tmp")]


# ---------------------------------------------------------------- signals and pipes

GRANDCHILD = """\
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open("pids", "a").write(f"{child.pid}\\n")
print("x")
"""


@linux
@pytest.mark.parametrize("wait", [False, True], ids=["child holds the output", "program runs too long"])
def test_the_timeout_ends_the_program_and_everything_it_started(tmp_path, capsys, wait):
    md = write(tmp_path, lesson(GRANDCHILD + ("import time; time.sleep(60)\n" if wait else ""), "x\n"))
    run(capsys, "tangle", md)
    start = time.monotonic()
    code, _, err = run(capsys, "check", md, "--timeout", "0.5")
    assert time.monotonic() - start < 8
    assert code == 1
    assert ("did not finish within 0.5 s" if wait else "a process it started still held its output open") in err
    assert gone(int(wait_for(tmp_path / "pids", 1)))


@linux
@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["Ctrl-C", "SIGTERM"])
def test_an_interrupted_update_stops_its_programs_and_leaves_nothing_behind(tmp_path, number):
    md = write(tmp_path, lesson(GRANDCHILD.replace('{child.pid}', '{child.pid} {os.getpid()}').replace(
        "import subprocess, sys", "import os, subprocess, sys") + "import time; time.sleep(60)\n"))
    subprocess.run([sys.executable, TANGLE, "tangle", md], check=True, capture_output=True)
    before = md.read_bytes()
    # Started as a terminal starts a command: Ctrl-C not ignored. (A shell that runs a job in the
    # background, as CI may, hands it SIGINT ignored, and tangle.py rightly keeps it ignored.)
    update = subprocess.Popen([sys.executable, TANGLE, "update", md], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    pids = [int(pid) for pid in wait_for(tmp_path / "pids", 2).split()]  # two runs: a program and a child each
    assert len(pids) == 4
    update.send_signal(number)
    out, err = update.communicate(timeout=10)
    assert update.returncode == 128 + number
    assert err.decode().splitlines() == [f"tangle.py: interrupted ({signal.Signals(number).name}); "
                                         "stopped the programs it ran, and wrote nothing more"]
    assert all(gone(pid) for pid in pids)
    assert md.read_bytes() == before and leftovers(tmp_path) == []


def test_a_reader_that_goes_away_does_not_stop_update_from_writing(tmp_path):
    md = write(tmp_path, lesson('print("new")\n'))
    subprocess.run([sys.executable, TANGLE, "tangle", md], check=True, capture_output=True)
    update = subprocess.Popen([sys.executable, TANGLE, "update", md], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    update.stdout.close()  # as `make update | head -1` does, before anything is printed
    err = update.stderr.read().decode()
    assert update.wait(timeout=20) == 0
    assert err == "" and md.read_text().endswith("```text {transcript}\nnew\n```\n")


# ---------------------------------------------------------------- never overwrite what changed

CONCURRENT_EDITOR = """\
import os
import re
try:
    os.close(os.open("edited", os.O_CREAT | os.O_EXCL))
except FileExistsError:
    pass
else:
    with open("attention.md", "a", encoding="utf-8") as md:
        md.write("编辑器里保存的一行\\n")
print("new")
"""


def test_update_never_loses_an_edit_saved_while_it_ran(tmp_path, capsys):
    md = write(tmp_path, lesson(CONCURRENT_EDITOR))
    run(capsys, "tangle", md)
    before = md.read_bytes()
    code, _, err = run(capsys, "update", md)
    assert code == 1
    assert err == (f"{md}: error: changed since update read it (saved from an editor?); nothing written, "
                   f"your change is kept: run {tangle_command('update', md)} again\n")
    assert md.read_bytes() == before + "编辑器里保存的一行\n".encode()
    assert leftovers(tmp_path) == []


def test_update_writes_through_a_symlink_and_keeps_the_mode(tmp_path, capsys):
    (tmp_path / "src").mkdir()
    real = write(tmp_path / "src", lesson('print("new")\n'), "lesson.md")
    real.chmod(0o640)
    md = tmp_path / "attention.md"
    md.symlink_to("src/lesson.md")
    run(capsys, "tangle", md)
    assert run(capsys, "update", md)[0] == 0
    assert md.is_symlink() and real.read_text().endswith("```text {transcript}\nnew\n```\n")
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


def test_a_second_update_of_the_same_file_gives_up_at_once(tmp_path, capsys):
    md = write(tmp_path, lesson('print("new")\n'))
    run(capsys, "tangle", md)
    before = md.read_bytes()
    with open(md, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        code, _, err = run(capsys, "update", md)
    assert code == 1 and "another tangle.py update or stitch is running on it" in err
    assert md.read_bytes() == before


def test_a_stitch_while_an_update_runs_names_make_stitch(tmp_path, capsys):
    md = write(tmp_path, lesson('print("new")\n'))
    run(capsys, "tangle", md)
    with open(md, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        code, _, err = run(capsys, "stitch", md)
    assert code == 1 and "then run make stitch again" in err and "make update" not in err


def test_update_leaves_a_read_only_markdown_alone(tmp_path, capsys):
    md = write(tmp_path, lesson('print("new")\n'))
    run(capsys, "tangle", md)
    before = md.read_bytes()
    md.chmod(0o444)
    code, _, err = run(capsys, "update", md)
    assert code == 2 and "is read-only; transcript not written" in err
    assert md.read_bytes() == before


def test_writing_refuses_a_file_that_changed_and_removes_what_killed_runs_left(tmp_path):
    target = tmp_path / "a.py"
    target.write_bytes(b"mine\n")
    stale = tmp_path / ".a.py.tangle-999999999.x1y2.tmp"  # no process has that id
    stale.write_bytes(b"half")
    assert literate.files.write_atomically(target, b"new\n", expected=b"old\n") is False
    assert target.read_bytes() == b"mine\n" and not stale.exists()
    assert literate.files.write_atomically(target, b"new\n", expected=b"mine\n") is True
    assert target.read_bytes() == b"new\n" and leftovers(tmp_path) == []
    ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", "generated/.a.py.tangle-12.x.tmp"], cwd=ROOT)
    assert ignored.returncode == 0


# ---------------------------------------------------------------- inputs bounded and regular


def deep_chain(depth: int, uses: int = 1) -> str:
    """A root including chunk 1, which includes chunk 2 `uses` times, ... down to chunk `depth`."""
    text = "```python {file=generated/attention.py}\n<<c1>>\n```\n"
    for number in range(1, depth):
        text += f"\n```python {{#c{number}}}\n" + f"<<c{number + 1}>>\n" * uses + "```\n"
    return text + f"\n```python {{#c{depth}}}\nx = 1\n```\n"


@linux
@pytest.mark.parametrize("make, message", [
    (lambda path: os.mkfifo(path), "is a FIFO (named pipe), not a regular file"),
    (lambda path: path.symlink_to(path.name), "cannot read it: a symlink loop"),
    (lambda path: path.symlink_to("/dev/zero"), "is a character device, not a regular file"),
    (lambda path: path.write_bytes(b"x" * (1 << 20) + b"\n"), "too large (1,048,577 bytes; the limit is 1 MiB)"),
    (lambda path: path.mkdir(), "is a directory, not a regular file"),
], ids=["FIFO", "symlink loop", "device", "too large", "directory"])
@pytest.mark.parametrize("command", ["tangle", "check", "update"])
def test_the_markdown_must_be_a_regular_file_of_sensible_size(tmp_path, capsys, make, message, command):
    md = tmp_path / "attention.md"
    make(md)
    code, _, err = run(capsys, command, md)
    assert (code, err) == (2, f"{md}: error: {message}\n")


@linux
@pytest.mark.parametrize("make, message", [
    (lambda path: os.mkfifo(path), "file=generated/attention.py is a FIFO (named pipe), not a regular file"),
    (lambda path: path.symlink_to(path.name), "file=generated/attention.py is a symlink loop"),
    (lambda path: path.parent.rmdir() or path.parent.symlink_to(path.parent.name),
     "file=generated/attention.py is a symlink loop"),
], ids=["FIFO", "symlink loop", "folder symlink loop"])
def test_a_target_must_be_a_regular_file_or_nothing(tmp_path, capsys, make, message):
    md = write(tmp_path, lesson("print(1)\n"))
    (tmp_path / "generated").mkdir()
    make(tmp_path / "generated" / "attention.py")
    for command in ("tangle", "check", "update"):
        assert run(capsys, command, md)[:3:2] == (2, f"{md}:3: error: {message}; remove it, then run "
                                                     f"{tangle_command('tangle', md)}\n")


def test_a_chain_of_a_thousand_chunks_is_an_error_naming_it_not_a_recursion_error(tmp_path, capsys):
    md = write(tmp_path, deep_chain(1000))
    code, _, err = run(capsys, "tangle", md)
    assert code == 2
    assert err == (f"{md}:1: error: file=generated/attention.py nests chunks 1000 deep (the limit is 100): "
                   "<<c1>> → <<c2>> → <<c3>> → <<c4>> → … 992 more … → "
                   "<<c997>> → <<c998>> → <<c999>> → <<c1000>>\n")
    assert run(capsys, "tangle", write(tmp_path, deep_chain(100)))[0] == 0


def test_an_exponential_expansion_is_measured_not_built(tmp_path, capsys):
    md = write(tmp_path, deep_chain(60, uses=2))
    code, _, err = run(capsys, "tangle", md)
    assert code == 2
    assert err.startswith(f"{md}:1: error: file=generated/attention.py would be about 10^19 bytes (the limit is "
                          "16 MiB): <<c1>> → <<c2>> ×2 → <<c3>> ×2 → <<c4>> ×2 → … 52 more …")
    assert not (tmp_path / "generated").exists()


def test_names_cannot_inject_code(tmp_path, capsys):
    md = write(tmp_path, lesson("print(1)\n"), "lesson\nimport os; os.system('x')\n#.md")
    code, _, err = run(capsys, "tangle", md)
    assert code == 2 and "the file's name holds a control character or line break" in err
    assert "\n" not in err.rstrip("\n")
    md = write(tmp_path, "```python {file=generated/a\u2028b.py}\nprint(1)\n```\n")
    assert run(capsys, "tangle", md)[:3:2] == (2, f"{md}:1: error: file='generated/a\\u2028b.py' is not a usable path\n")
    assert not (tmp_path / "generated").exists()
    doc = literate.markdown.parse_document(Path("x\u2028y.md"), "x", "```python {file=bin/a.py}\nprint(1)\n```\n")
    assert "# x\\u2028y.md:2 (bin/a.py)" in literate.expansion.render(doc, "bin/a.py")[0]


@pytest.mark.parametrize("value", ["nan", "-1", "0", "inf", "1e300", "soon"])
def test_a_timeout_must_be_a_positive_number_of_seconds(tmp_path, capsys, value):
    code, _, err = run(capsys, "check", tmp_path / "attention.md", "--timeout", value)
    assert code == 2 and f"argument --timeout: '{value}' is not a number of seconds above 0" in err


def test_a_program_that_prints_without_end_is_stopped(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(literate.runner, "MAX_OUTPUT_BYTES", 1 << 20)
    md = write(tmp_path, lesson("while True:\n    print('x' * 1000)\n"))
    run(capsys, "tangle", md)
    code, _, err = run(capsys, "check", md, "--timeout", "20")
    assert code == 1 and "printed more than 1 MiB; stopped it" in err


# ---------------------------------------------------------------- every silent drop is a diagnostic

DROPS = {
    "unclosed comment": (
        "<!-- 草稿\n\n```python {file=generated/attention.py}\nprint(1)\n```\n",
        "attention.md:1: error: unclosed HTML comment: no --> follows, so Markdown hides the rest of the file, "
        "2 code fence lines included; close it"),
    "unclosed pre": (
        "```python {file=generated/attention.py}\nprint(1)\n```\n\n<pre>\n```python {#a}\n```\n",
        "attention.md:5: error: unclosed <pre> block: no </pre> follows, so Markdown hides the rest of the file, "
        "2 code fence lines included; close it"),
    "NUL in code": (
        "```python {file=generated/attention.py}\nprint('a\0b')\n```\n",
        "attention.md:2: error: a NUL byte; delete it (in code, write it as an escape: \\x00)"),
    "escape in prose": (
        "红色\x1b[31m\n\n```python {file=generated/attention.py}\nprint(1)\n```\n",
        "attention.md:1: error: an invisible control character U+001B"),
}


@pytest.mark.parametrize("text, message", DROPS.values(), ids=DROPS.keys())
@pytest.mark.parametrize("command", ["tangle", "check"])
def test_markdown_that_would_silently_drop_code_is_an_error(tmp_path, capsys, text, message, command):
    md = write(tmp_path, text)
    code, _, err = run(capsys, command, md)
    assert code == 2 and f"{tmp_path}/{message}" in err
    assert not (tmp_path / "generated").exists()


HIDDEN = {
    "indented four spaces": (
        "    ```python {#a}\n    x = 1\n    ```\n",
        "attention.md:5: warning: looks like a code fence but is not one: it is indented 4 or more spaces, "
        "which makes an indented code block; its code is not tangled"),
    "no blank line after HTML": (
        "<div>\n```python {#a}\nx = 1\n```\n</div>\n",
        "attention.md:6: warning: looks like a code fence but is not one: it is inside the HTML block that "
        "starts at line 5 (no blank line between them); its code is not tangled"),
    "continues a paragraph": (
        "一段话\n    ```python {#a}\n",
        "attention.md:6: warning: looks like a code fence but is not one: Markdown reads it as text"),
}


@pytest.mark.parametrize("text, message", HIDDEN.values(), ids=HIDDEN.keys())
def test_a_fence_that_markdown_does_not_see_is_a_warning(tmp_path, capsys, text, message):
    md = write(tmp_path, "```python {file=generated/attention.py}\nprint(1)\n```\n\n" + text)
    code, _, err = run(capsys, "tangle", md)
    assert code == 0 and f"{tmp_path}/{message}" in err


def test_an_indented_closing_fence_that_does_not_close_is_a_warning(tmp_path, capsys):
    md = write(tmp_path, "```python {file=generated/attention.py}\nx = 1\n    ```\ny = 2\n```\n")
    code, _, err = run(capsys, "tangle", md)
    assert code == 0
    assert err == (f"{md}:3: warning: indented 4 or more spaces, so it does not close the fence opened at line 1: "
                   "it is code; unindent it to close\n")


def test_output_with_a_carriage_return_is_refused_with_the_reason(tmp_path, capsys):
    md = write(tmp_path, lesson('print("50%", end="\\r")\nprint("100%")\n'))
    run(capsys, "tangle", md)
    before = md.read_bytes()
    code, _, err = run(capsys, "update", md)
    assert code == 1
    assert err.startswith(f"{tmp_path}/generated/attention.py: error: output line 1 holds a carriage return (\\r); "
                          "a transcript holds plain lines")
    assert md.read_bytes() == before


# ---------------------------------------------------------------- line endings are not edits


def test_a_generated_file_with_crlf_line_ends_is_in_sync_and_left_alone(tmp_path, capsys):
    md = write(tmp_path, lesson('print("x")\n', "x\n"))
    run(capsys, "tangle", md)
    target = tmp_path / "generated" / "attention.py"
    target.write_bytes(target.read_bytes().replace(b"\n", b"\r\n"))  # a clone with core.autocrlf=true
    before = target.read_bytes()
    assert run(capsys, "check", md)[0] == 0
    assert run(capsys, "tangle", md)[:2] == (0, "")
    assert target.read_bytes() == before


@pytest.mark.parametrize("extra", ["", "\n# 多一行\n"], ids=["same lines", "lines moved"])
def test_a_hand_edit_copied_into_the_markdown_is_no_longer_refused(tmp_path, capsys, extra):
    md = write(tmp_path, lesson('print("x")\n', "y\n") + "\n```python {file=generated/attention.py}\ny = 1\n```\n")
    run(capsys, "tangle", md)
    target = tmp_path / "generated" / "attention.py"
    target.write_text(target.read_text().replace('print("x")', 'print("y")'))  # the hand edit ...
    md.write_text(md.read_text().replace('print("x")', 'print("y")').replace("# 课\n", "# 课\n" + extra))  # copied
    code, _, err = run(capsys, "check", md)  # the same code: in sync, or only the # MD:LINE comments are stale
    stale = (1, f"{target}: error: out of date with attention.md; run {tangle_command('tangle', md)}\n")
    assert (code, err) == (stale if extra else (0, ""))
    code, out, _ = run(capsys, "tangle", md)
    assert (code, out) == (0, f"wrote {target}\n")
    assert run(capsys, "check", md)[0] == 0


def test_gitattributes_keep_the_lesson_and_generated_files_lf():
    result = subprocess.run(["git", "check-attr", "eol", "attention.md", "generated/attention.py",
                             "generated/experiments.py"], cwd=ROOT, capture_output=True, text=True)
    assert result.stdout.count(": eol: lf") == 3


# ---------------------------------------------------------------- errors lead somewhere


def test_a_transcript_mismatch_says_how_to_record_the_new_output(tmp_path, capsys):
    md = write(tmp_path, lesson('print("new")\n'))
    run(capsys, "tangle", md)
    code, _, err = run(capsys, "check", md)
    assert code == 1
    assert ("differs from its transcript; if the new output is right, record it: "
            f"python tangle.py update {md} --only generated/attention.py") in err


def fake_python(folder: Path, version: str) -> Path:
    """A python3 that says it is another version (through sitecustomize)."""
    (folder / "site").mkdir()
    (folder / "site" / "sitecustomize.py").write_text(
        f"import sys\nsys.version_info = ({version.replace('.', ', ')}, 'final', 0)\n"
        f"sys.version = '{version}.0 (fake)'\n")
    script = folder / "python"
    script.write_text(f"#!/bin/sh\nPYTHONPATH={folder / 'site'} exec {sys.executable} \"$@\"\n")
    script.chmod(0o755)
    return script


@needs_make
def test_an_old_python_gets_a_message_from_make_and_from_tangle(tmp_path):
    python = fake_python(tmp_path, "3.9")
    (tmp_path / "Makefile").write_text((ROOT / "Makefile").read_text())
    (tmp_path / "requirements.txt").write_text("")
    result = subprocess.run(["make", "-s", "check", f"PYTHON={python}"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode != 0
    assert f"error: {python} is Python 3.9; this project needs 3.10 or newer" in result.stderr
    assert not (tmp_path / ".venv").exists()
    result = subprocess.run([python, TANGLE, "check"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr == ("tangle.py: error: needs Python 3.10 or newer, this is 3.9.0; "
                             "run make clean, then make PYTHON=python3.12 (any 3.10 or newer)\n")


@needs_make
def test_make_leaves_no_half_built_venv(tmp_path):
    (tmp_path / "Makefile").write_text((ROOT / "Makefile").read_text())
    (tmp_path / "requirements.txt").write_text("")
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\n[ "$1" = "-m" ] && {{ mkdir -p .venv/bin; exit 1; }}\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    result = subprocess.run(["make", "-s", ".venv/stamp", f"PYTHON={python}"], cwd=tmp_path, capture_output=True,
                            text=True)
    assert result.returncode != 0 and "nothing was left behind" in result.stderr
    assert not (tmp_path / ".venv").exists()


# ---------------------------------------------------------------- a crash anywhere maps to the Markdown


def test_a_crash_in_a_worker_process_is_reported_where_it_happened(tmp_path, capsys):
    md = write(tmp_path, textwrap.dedent("""\
        ```python {file=generated/attention.py}
        from concurrent.futures import ProcessPoolExecutor
        <<在另一个进程里>>

        if __name__ == "__main__":
            with ProcessPoolExecutor(max_workers=1) as pool:
                pool.submit(work).result()
        ```

        ```python {#在另一个进程里}
        def work():
            return 1 / 0
        ```

        ```text {transcript}
        ```
        """))
    run(capsys, "tangle", md)
    code, _, err = run(capsys, "check", md)
    assert code == 1
    assert f"{md}:12 (在另一个进程里), in work" in err and f"{md}:7 (generated/attention.py), in <module>" in err
    assert f"{md}:12: error: {tmp_path}/generated/attention.py exited with status 1" in err


# ---------------------------------------------------------------- property: random documents, random trouble

PRINTS = {'print("准确率 0.93")': "准确率 0.93", 'print("```")': "```", "print()": "", 'print("a\\tb")': "a\tb",
          "print(1 + 1)": "2"}  # code: what it prints
NOISE = ["", "正文 0.93。", "<!-- 注释 -->", "<!--\n```python\nprint('x')\n```\n-->", "    ```python {#x}",
         "```text\n插图\n```", "> 引用", "- 列表", "| a |\n|---|\n| 1 |", "<div>", "~~~"]
SITUATIONS = ["plain", "symlinked markdown", "read-only markdown", "concurrent editor", "locked",
              "hand-edited target", "crlf target", "symlinked target", "fifo target", "looping target"]


def hang(*_):
    raise AssertionError("tangle.py hangs")


@linux
@pytest.mark.parametrize("situation", SITUATIONS)  # each one surely, the rest at random
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prints=st.lists(st.sampled_from(list(PRINTS)), min_size=1, max_size=3),
       transcript=st.sampled_from(["", "old\n", "准确率 0.93\n"]),
       noise=st.lists(st.sampled_from(NOISE), max_size=3),
       command=st.sampled_from(["tangle", "check", "update"]))
def test_no_document_and_no_situation_makes_tangle_crash_hang_or_lose_a_byte(situation, prints, transcript, noise,
                                                                              command):
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        code = "\n".join(prints) + "\n"
        if situation == "concurrent editor":
            code = CONCURRENT_EDITOR.replace('print("new")\n', "") + code
        head = "# 课\n\n" + "\n\n".join(noise) + "\n\n"
        fence = "```python {file=generated/attention.py}\n" + code + "```\n\n"
        text = head + fence + "```text {transcript}\n" + transcript + "```\n\n尾巴\n"
        md = real = write(folder, text)
        if situation == "symlinked markdown":
            real = write(folder, text, "real.md")
            md.unlink()
            md.symlink_to("real.md")
        quiet = stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
        stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        first = tangle.main(["tangle", str(md)])
        target = folder / "generated" / "attention.py"
        if first == 0:
            if situation == "hand-edited target":
                target.write_text(target.read_text() + "print('mine')\n")
            elif situation == "crlf target":
                target.write_bytes(target.read_bytes().replace(b"\n", b"\r\n"))
            elif situation == "symlinked target":
                target.rename(folder / "generated" / "real.py")
                target.symlink_to("real.py")
            elif situation in ("fifo target", "looping target"):
                target.unlink()
                os.mkfifo(target) if situation == "fifo target" else target.symlink_to("attention.py")
        if situation == "read-only markdown":
            real.chmod(0o444)
        if situation == "locked":
            fcntl.flock(stack.enter_context(open(real, "rb")), fcntl.LOCK_EX)
        before = real.read_bytes()
        generated_before = target.read_bytes() if target.is_file() else None
        signal.signal(signal.SIGALRM, hang)
        signal.alarm(30)
        start = time.monotonic()
        try:
            result = tangle.main([command, str(md), *(["--timeout", "5"] if command != "tangle" else [])])
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
        assert time.monotonic() - start < 20
        assert result in (0, 1, 2)
        assert "Traceback" not in quiet.getvalue()
        after = real.read_bytes()
        edit = "编辑器里保存的一行\n".encode()
        output = "".join(PRINTS[line] + "\n" for line in prints)
        intended = before.replace(("```text {transcript}\n" + transcript + "```").encode(),
                                  ("````text {transcript}\n" + output + "````" if "```" in output
                                   else "```text {transcript}\n" + output + "```").encode())
        if situation == "concurrent editor" and command != "tangle" and first == 0:
            assert after == before + edit  # update refused, or had nothing to write
        elif command == "update":
            assert after in (before, intended)
            assert after == before or situation not in ("read-only markdown", "locked", "hand-edited target")
        else:
            assert after == before
        if situation == "symlinked markdown":
            assert md.is_symlink()
        if command == "check" or situation == "hand-edited target":
            assert (target.read_bytes() if target.is_file() else None) == generated_before
        assert leftovers(folder) == []


@pytest.mark.parametrize("where", ["output", "traceback", "progress"])
def test_a_programs_terminal_escapes_are_shown_never_obeyed(tmp_path, capsys, where):
    """ESC sequences (clear the screen, colours, the window's title), a carriage return and C1's CSI, printed by the
    program into the diff, the traceback or its progress, reach the terminal as escapes (\\x1b), never as they are."""
    hostile = "\\x1b[2J\\x1b[31mred\\x1b]0;PWNED\\x07\\rover\\x9b2J"
    code = {"output": f"print('v 0.75{hostile}')\n",
            "traceback": f"raise SystemExit('{hostile}')\n",
            "progress": f"import sys\nprint('{hostile}', file=sys.stderr)\nprint('v 0.75')\n"}[where]
    md = write(tmp_path, f"```python {{file=generated/a.py}}\n{code}```\n\n```text {{transcript}}\nv 0.75\n```\n")
    assert run(capsys, "tangle", md)[0] == 0
    status, out, err = run(capsys, "check", md, *(["--progress"] if where == "progress" else []))
    assert status == (0 if where == "progress" else 1)
    shown = out + err
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", shown), repr(shown)
    assert "\\x1b[2J\\x1b[31mred\\x1b]0;PWNED\\x07\\rover\\x9b2J" in shown
