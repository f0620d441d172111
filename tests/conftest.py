"""What the tests share: the repository root on sys.path (so that they import the package and the commands),
the smallest lesson, a lesson written into a folder, tangle.py's main run as the command line would, and the browser."""

import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

try:  # the generated tests draw the same examples on every run, so that a red run is one anybody can repeat;
    # HYPOTHESIS_PROFILE=explore draws new ones (and keeps what fails in .hypothesis/ to try again)
    from hypothesis import settings

    settings.register_profile("repeatable", derandomize=True, database=None)
    settings.register_profile("explore", derandomize=False)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
except ImportError:  # the tests that use it say so themselves
    pass


def tangle_command(action: str, md: Path) -> str:
    """What the tools tell a reader to run for a lesson with no Makefile beside it: tangle.py's own command line."""
    return f"python {shlex.quote(from_here(ROOT / 'tangle.py'))} {action} {shlex.quote(str(md))}"


def from_here(path: Path) -> str:
    """A path as the tools' messages write it: relative to the current folder, or whole where that is shorter."""
    relative, whole = os.path.relpath(path), os.path.abspath(path)
    return whole if len(whole) < len(relative) else relative


def write(folder: Path, text: str, name: str = "attention.md") -> Path:
    """The lesson's text as a file in folder, byte for byte (CRLF, BOM and all)."""
    path = folder / name
    path.write_bytes(text.encode())
    return path


def small_lesson(prose: str, title: str = "课", printed: tuple[str, ...] = ("value 0.75",)) -> str:
    """The smallest lesson every tool takes: a heading, the prose, a program (a root that includes one chunk) that
    prints the printed lines, and its transcript."""
    prints = "\n".join(f'print("{line}")' for line in printed)
    output = "\n".join(printed)
    return (f"# {title}\n\n{prose}\n\n```python {{file=generated/a.py}}\n<<body>>\n```\n\n```python {{#body}}\n"
            f"{prints}\n```\n\n```text {{transcript}}\n{output}\n```\n")


def run(capsys, *argv) -> tuple[int, str, str]:
    """tangle.py's main on these arguments: (exit status, stdout, stderr), never a traceback of tangle.py's own
    (a traceback of the program it runs may be shown)."""
    import tangle
    code = tangle.main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    assert 'tangle.py", line' not in out + err
    return code, out, err


def chromium() -> str:
    """The headless browser the page's tests use; without one, those tests are skipped (and fail under CI)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed, and CI must run the browser tests: .ci/run installs it "
                        "(apt-get install chromium fonts-noto-cjk)", pytrace=False)
        pytest.skip("chromium is not installed: apt-get install chromium fonts-noto-cjk to run the browser tests",
                    allow_module_level=True)
    return found


def modules_or_skip(names: tuple[str, ...], needed_for: str, installs: str) -> None:
    """Skip the test module when one of these packages is missing (make test installs them), and fail under CI,
    which must run it: a test that cannot run is never passed silently."""
    import importlib.util
    missing = [name for name in names if importlib.util.find_spec(name) is None]
    if not missing:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{', '.join(missing)} not installed, and CI must {needed_for}: make test installs {installs}",
                    pytrace=False)
    pytest.skip(f"{', '.join(missing)} not installed: make test installs {installs}", allow_module_level=True)
