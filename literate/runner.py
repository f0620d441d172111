"""Running a generated program: the one environment every run gets (run_env, with RUN_ENV and RUN_FLAGS),
process groups, bounded output, leftovers stopped, tracebacks mapped back to MD:LINE."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .characters import escaped
from .expansion import render
from .files import POSIX, describe
from .model import Document, UserError


MAX_OUTPUT_BYTES = 16 << 20  # per stream of one run
PR_SET_CHILD_SUBREAPER = 36  # prctl(2), Linux
HELD_GRACE = 2.0  # seconds a program's leftovers may hold its output after it exits
# all a terminal acts on but tab and line feed; none of them stands in a transcript, which holds plain lines
TERMINAL_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def inert(text: str) -> str:
    """A program's output or traceback as tangle.py shows it on a terminal: its control characters (ESC, which
    starts colour, cursor and window-title sequences; CR; C1's CSI) written as escapes, \\x1b, so that what the
    program printed is seen, never obeyed; and the characters that show nothing (a bidi override, a soft hyphen,
    U+2028) as \\u202e, so that a line that differs only in one of them is seen to differ."""
    return escaped(TERMINAL_CONTROL.sub(lambda match: match[0].encode("unicode_escape").decode(), text))
RUN_ENV = {
    "PYTHONIOENCODING": "utf-8",
    "PYTHONUTF8": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",  # never a __pycache__ left in the project (see run_env for reading)
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}  # no MALLOC_*: the lesson's program sets glibc's allocator thresholds itself (its appendix)
RUN_FLAGS = ("-B", "-s")  # the interpreter's options for every run: see run_env
FRAME = re.compile(r'^(\s*)File "([^"]+)", line (\d+)(.*)$')
CAUSE = "The above exception was the direct cause of the following exception:"
CONTEXT = "During handling of the above exception, another exception occurred:"


@dataclass(frozen=True)
class Run:
    returncode: int | None  # None: stopped by tangle.py, for the reason in why
    stdout: bytes
    stderr: bytes
    why: str = ""  # "timeout", "held" (it exited, something it started kept the output open) or "output"


def run_env(pycache_prefix: str | None) -> dict[str, str]:
    """The environment every run of a program gets, with RUN_FLAGS on its command line: tangle.py check and
    update, tools/portability.py and bench/bench.py all build it here. The caller's environment less every
    PYTHON* variable, plus RUN_ENV; bytecode looked up only under pycache_prefix, a fresh, empty folder that
    the caller removes afterwards (None: where Python keeps it, for a run that is timed)."""
    # -s and no PYTHON* variable of the caller's (PYTHONSAFEPATH, PYTHONOPTIMIZE, PYTHONPATH, ...): what -I
    # does, except that -I would also ignore the PYTHON* variables the run needs (RUN_ENV) and drop the
    # program's folder from sys.path, from which generated/experiments.py imports generated/attention.py.
    # Bytecode: -B writes none, and the cache is looked up only under a fresh, empty folder (the pycache
    # prefix), so nothing is read from a __pycache__ either: a .pyc that a run left next to a generated file
    # would be taken as current if the file kept its size and its mtime's second (experiments.py imports
    # attention.py), and the transcript would be checked against the program as it was.
    env = {name: value for name, value in os.environ.items() if not name.upper().startswith("PYTHON")}
    env.update(RUN_ENV)
    if pycache_prefix is not None:
        env["PYTHONPYCACHEPREFIX"] = pycache_prefix
    return env


def run_program(doc: Document, target: str, timeout: float, copies: int = 1, progress: bool = False) -> list[Run]:
    """Run a generated program (several copies side by side) in a controlled environment, each copy in
    its own process group, so that the timeout, Ctrl-C or any error ends it and all it started.
    progress: also copy the first copy's stderr lines to ours as they come (up to a traceback)."""
    command = [sys.executable, *RUN_FLAGS, os.path.realpath(doc.folder / target)]
    processes: list[subprocess.Popen] = []
    ours = children() if become_subreaper() else None  # our children before the run: not the run's to stop
    cache = tempfile.TemporaryDirectory(prefix="tangle-no-bytecode-")
    env = run_env(cache.name)
    try:
        for _ in range(copies):
            processes.append(subprocess.Popen(command, cwd=doc.folder, env=env, stdin=subprocess.DEVNULL,
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                              start_new_session=POSIX))
        echo = Echo(f"{doc.target_shown(target)}: ") if progress else None
        return collect(processes, timeout, echo) if POSIX else collect_plainly(processes, timeout)
    except OSError as error:
        raise UserError(f"{doc.target_shown(target)}: error: cannot run it: {describe(error)}") from None
    finally:
        for process in processes:
            end_group(process)
            for stream in (process.stdout, process.stderr):
                stream.close()
        if ours is not None:
            stop_leftovers(ours | {process.pid for process in processes}, {process.pid for process in processes})
        cache.cleanup()


def become_subreaper() -> bool:
    """Linux: make the processes that the programs leave behind (a daemon that double-forks into a session
    of its own, keeping or closing our pipes) our children when their parents die, instead of init's, so
    that stop_leftovers can find them. Whether it worked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def processes_where(field: int, values: set[int], zombies: bool = True) -> set[int]:
    """The ids of the processes whose /proc/PID/stat field (4: parent, 6: session, as proc(5) counts) is
    one of values; zombies too unless told not to (a killed process that someone else will reap)."""
    found = set()
    with contextlib.suppress(OSError), os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                fields = Path(entry.path, "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue  # gone meanwhile
            if int(fields[field - 3]) in values and (zombies or fields[0] != "Z"):
                found.add(int(entry.name))
    return found


def children() -> set[int]:
    return processes_where(4, {os.getpid()})


def stop_leftovers(ours: set[int], sessions: set[int]) -> None:
    """Kill and reap what the programs left running: every process of the sessions they created (each
    program leads one), and every process that became our child when its parent died (we are its
    subreaper), round after round, since each death can orphan more."""
    for _ in range(1000):
        found = (processes_where(6, sessions, zombies=False) | children()) - ours - {os.getpid()}
        if not found:
            return
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for pid in found & children():
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)


class Echo:
    """Copies a program's stderr to ours a line at a time, each line prefixed, until a traceback begins
    (report_failed_run prints that, pointed at the Markdown). (A class only to keep the partial line.)"""

    def __init__(self, prefix: str):
        self.prefix, self.pending, self.done = prefix, b"", False

    def feed(self, data: bytes) -> None:
        *lines, self.pending = (self.pending + data).split(b"\n")
        for line in lines:
            self.write(line)

    def close(self) -> None:
        if self.pending:
            self.write(self.pending)
        self.pending = b""

    def write(self, line: bytes) -> None:
        self.done = self.done or line.startswith(b"Traceback (most recent call last)")
        if not self.done:
            print(self.prefix + inert(line.decode("utf-8", "replace").rstrip("\r")), file=sys.stderr, flush=True)


def collect(processes: list[subprocess.Popen], timeout: float, echo: Echo | None = None) -> list[Run]:
    """Read every process's stdout and stderr until they close, at most timeout seconds in all and
    MAX_OUTPUT_BYTES a stream. A process still holding a pipe at the end (itself, or something it
    started: a pipe stays open while anyone holds it) is killed with its group. echo: where the first
    process's stderr is copied as it arrives."""
    deadline = time.monotonic() + timeout
    output = {stream: bytearray() for process in processes for stream in (process.stdout, process.stderr)}
    why: dict[subprocess.Popen, str] = {}
    with selectors.DefaultSelector() as selector:
        for process in processes:
            for stream in (process.stdout, process.stderr):
                selector.register(stream, selectors.EVENT_READ, process)
        while selector.get_map() and (remaining := deadline - time.monotonic()) > 0:
            if all(exited(key.data) for key in selector.get_map().values()):
                # only what the programs started holds the pipes now: wait for those writers a little
                deadline = min(deadline, time.monotonic() + HELD_GRACE)
            for key, _ in selector.select(min(remaining, 0.2)):
                data = os.read(key.fd, 1 << 16)
                output[key.fileobj] += data
                if echo is not None and key.fileobj is processes[0].stderr:
                    if data:
                        echo.feed(data)
                    else:
                        echo.close()
                if not data:
                    selector.unregister(key.fileobj)
                elif len(output[key.fileobj]) > MAX_OUTPUT_BYTES:
                    why[key.data] = "output"
                    end_group(key.data)
                    for stream in (key.data.stdout, key.data.stderr):
                        with contextlib.suppress(KeyError):
                            selector.unregister(stream)
        for key in list(selector.get_map().values()):
            if key.data not in why:
                why[key.data] = "held" if exited(key.data) else "timeout"
            end_group(key.data)
    runs = []
    for process in processes:
        if process not in why:  # its output closed; it may still be running
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                why[process] = "timeout"
                end_group(process)
        runs.append(Run(None if process in why else process.returncode, bytes(output[process.stdout]),
                        bytes(output[process.stderr]), why.get(process, "")))
    return runs


def collect_plainly(processes: list[subprocess.Popen], timeout: float) -> list[Run]:
    """collect() where pipes cannot be selected (Windows): communicate, then kill the process."""
    deadline = time.monotonic() + timeout
    runs = []
    for process in processes:
        try:
            stdout, stderr = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
            runs.append(Run(process.returncode, stdout, stderr))
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            runs.append(Run(None, stdout, stderr, "timeout"))
    return runs


def exited(process: subprocess.Popen) -> bool:
    """Whether the process has exited, without reaping it (its id must keep naming its group)."""
    try:
        return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except (AttributeError, OSError):
        return False


def end_group(process: subprocess.Popen) -> None:
    """Kill the process and its process group, unless it has already been reaped (then its id may name
    someone else's group), and reap it."""
    if process.returncode is not None:
        return
    with contextlib.suppress(OSError):
        if POSIX:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)


def map_traceback(doc: Document, target: str, stderr: str) -> tuple[str, int | None]:
    """Point the frames of a traceback in the generated file at the Markdown; also return the md line
    where the error happened: the innermost such frame of the first exception in the chain of causes
    (an error in a ProcessPoolExecutor worker arrives as the cause of the one that .result() raises)."""
    _, origin = render(doc, target)
    generated = os.path.realpath(doc.folder / target)
    innermost: list[int | None] = [None]  # per traceback in the chain
    causes: list[bool] = []  # whether traceback i is the direct cause of traceback i + 1
    lines = []
    for text in (inert(line.removesuffix("\r")) for line in stderr.removesuffix("\n").split("\n") if stderr):
        match = FRAME.match(text)
        if match and os.path.realpath(doc.folder / match[2]) == generated:
            number = int(match[3])
            if 1 <= number <= len(origin) and origin[number - 1]:
                md_line, label = origin[number - 1]
                innermost[-1] = md_line
                text = f"{match[1]}{doc.where(md_line)} ({label}){match[4]}"
        elif text in (CAUSE, CONTEXT):
            causes.append(text == CAUSE)
            innermost.append(None)
        lines.append(text)
    chosen = len(innermost) - 1
    while chosen > 0 and causes[chosen - 1] and innermost[chosen - 1] is not None:
        chosen -= 1
    line = innermost[chosen] or next((line for line in reversed(innermost) if line), None)
    return "\n".join(lines), line


def report_failed_run(doc: Document, target: str, run: Run, timeout: float, echoed: bool = False) -> None:
    """Say why a run failed: the traceback with its frames pointed at the Markdown, or the reason tangle.py
    stopped it. echoed: its stderr up to the traceback was shown already (--progress)."""
    shown = doc.target_shown(target)
    if run.why == "held":
        print(f"{shown}: error: exited, but a process it started still held its output open; stopped them all "
              "(wait for the processes a program starts before it exits)", file=sys.stderr)
        return
    if run.why == "output":
        print(f"{shown}: error: printed more than {MAX_OUTPUT_BYTES >> 20} MiB; stopped it", file=sys.stderr)
        return
    if run.returncode is None:
        print(f"{shown}: error: did not finish within {timeout:g} s; stopped it and all it started "
              "(more time: --timeout SECONDS)", file=sys.stderr)
        return
    stderr = run.stderr.decode("utf-8", "replace")
    if echoed:
        start = re.search(r"(?m)^Traceback \(most recent call last\)", stderr)
        stderr = stderr[start.start():] if start else ""
    traceback, line = map_traceback(doc, target, stderr)
    if traceback:
        print(traceback, file=sys.stderr)
    where = doc.where(line) if line else shown
    if run.returncode < 0 and POSIX:
        with contextlib.suppress(ValueError):
            print(f"{where}: error: {shown} was killed by {signal.Signals(-run.returncode).name}", file=sys.stderr)
            return
    above = " (traceback above)" if "Traceback (most recent call last)" in traceback else (
        " (what it wrote to stderr above)" if traceback.strip() else "")
    print(f"{where}: error: {shown} exited with status {run.returncode}{above}", file=sys.stderr)
