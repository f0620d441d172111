"""The one front end of the commands (tangle.py, weave.py, notebook.py): arguments parsed without argparse's
SystemExit, one error policy (`MD:LINE: error: ...` or `TOOL: error: ...` on stderr, exit 0 ok, 1 a check
found a difference, 2 bad input or usage, never a traceback), interrupts raised where the program is, and
output streams that tolerate a closed pipe."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from typing import Callable

from .files import INTERRUPTS, describe
from .model import BAD_INPUT, MAX_MESSAGE, Interrupted, UserError


def run_command(tool: str, parser: argparse.ArgumentParser, body: Callable[[argparse.Namespace], int],
                argv: list[str] | None, stopped: str, nested: str = "nested too deeply to read", script: bool = False) -> int:
    """Parse argv, run body(args) under guarded(), and report what goes wrong as one line each: a mistake in the
    input (UserError: its messages, its exit code), the environment (OSError: a full disk, a vanished folder),
    input nested too deeply (RecursionError: `MD: error: NESTED`), or no memory left; exit 2 for the last three."""

    def run() -> int:
        args = parsed(parser, argv)
        if isinstance(args, int):  # --help (0) or a usage error (2)
            return args
        try:
            return body(args)
        except UserError as error:
            print(*map(bounded, error.messages), sep="\n", file=sys.stderr)
            return error.code
        except OSError as error:  # the environment, not the tool
            name = f" {error.filename}" if error.filename else ""
            print(f"{tool}: error:{name} {describe(error)}", file=sys.stderr)
        except RecursionError:
            print(f"{args.md}: error: {nested}", file=sys.stderr)
        except MemoryError:
            print(f"{tool}: error: out of memory", file=sys.stderr)
        return BAD_INPUT
    return guarded(tool, run, stopped, script)


def bounded(message: str) -> str:
    """An error line as printed: however much of the input it quotes, at most MAX_MESSAGE characters (a message
    that names thousands of paths still fits a screen; each quote is bounded where it is made, this is the net)."""
    if len(message) <= MAX_MESSAGE:
        return message
    kept = MAX_MESSAGE - 40  # room for the note on what was left out: the whole line stays within MAX_MESSAGE
    return f"{message[:kept]}… ({len(message) - kept:,} more characters)"


def parsed(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace | int:
    """The arguments, or the exit status of --help (0) or of a usage error (2)."""
    try:
        return parser.parse_args(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else BAD_INPUT


def guarded(tool: str, command: Callable[[], int], stopped: str, script: bool = False) -> int:
    """Run command() so that Ctrl-C, a closed pipe and a console that cannot show Chinese end it with one
    line, never a traceback: `TOOL: interrupted (SIGNAL); STOPPED`, exit 128 + the signal's number."""
    streams = sys.stdout, sys.stderr
    for stream in streams:  # a cp1252 or ASCII console: a Chinese line is shown escaped, never lost
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")
    nowhere = open(os.devnull, "w", encoding="utf-8")  # for a stream that was closed before we started (>&-)
    sys.stdout, sys.stderr = (ClosedPipeTolerant(stream or nowhere) for stream in streams)
    try:
        with interrupts_raised(script):
            return command()
    except KeyboardInterrupt as stop:  # Ctrl-C, SIGTERM or SIGHUP; every finally on the way has run
        number = getattr(stop, "signum", signal.SIGINT)
        print(f"{tool}: interrupted ({signal.Signals(number).name}); {stopped}", file=sys.stderr)
        return 128 + number
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        sys.stdout, sys.stderr = streams
        nowhere.close()


@contextlib.contextmanager
def interrupts_raised(script: bool = False):
    """Ctrl-C, SIGTERM and SIGHUP raise Interrupted wherever the program is, so that every finally runs:
    the programs it runs are stopped and temporary files removed (see guarded). Run as a script (script=True),
    the process stays deaf to them after the first, until it exits."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {number: signal.getsignal(number) for number in INTERRUPTS}
        previous = {number: handler for number, handler in previous.items() if handler not in (signal.SIG_IGN, None)}
        for number in previous:
            signal.signal(number, raise_interrupted)
    stopped = False
    try:
        yield
    except KeyboardInterrupt:
        stopped = True
        raise
    finally:
        if not (stopped and script):
            for number, handler in previous.items():
                signal.signal(number, handler)


def raise_interrupted(signum: int, _frame) -> None:
    """The first interrupt raises; later ones (a second Ctrl-C, the SIGTERM of a second program copy)
    are ignored, so that they cannot cut short the cleanup the first one started."""
    for number in INTERRUPTS:
        signal.signal(number, signal.SIG_IGN)
    raise Interrupted(signum)


class ClosedPipeTolerant:
    """sys.stdout or sys.stderr while main() runs: when the reader goes away (check | head -1), the rest
    of the output is dropped instead of ending the command with BrokenPipeError; update still writes.
    (A class only because a stream is one.)"""

    def __init__(self, stream):
        self.stream, self.gone = stream, False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self.stream.write(text)
            except (OSError, ValueError):
                self.drop()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.stream.flush()
            except (OSError, ValueError):
                self.drop()

    def drop(self) -> None:
        self.gone = True
        with contextlib.suppress(OSError, ValueError, AttributeError):  # later flushes, at exit too, go nowhere
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)

    def __getattr__(self, name: str):
        return getattr(self.stream, name)
