"""File safety: reading a regular file within bounds, atomic writes, the document lock, interrupts deferred
while files are replaced."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import stat
import tempfile
import threading
from pathlib import Path

from .model import Conflict, UserError


try:
    import fcntl
except ImportError:  # Windows: no advisory locks, so nothing stops two updates of one file there
    fcntl = None


POSIX = os.name == "posix"
INTERRUPTS = [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)]


def describe(error: OSError) -> str:
    if error.errno == errno.ENOSPC:
        return "no space left on the disk (free some, then run it again)"
    return "a symlink loop" if error.errno == errno.ELOOP else (error.strerror or str(error)).lower()


def file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


def read_regular(path: Path, shown: str, limit: int) -> bytes | None:
    """The bytes of a regular file (through symlinks), None if there is none. Checks with stat
    before opening, so that a FIFO or a device never blocks or floods us; at most limit bytes."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"{shown}: error: is {file_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise UserError(f"{shown}: error: too large ({info.st_size:,} bytes; the limit is {limit >> 20} MiB)")
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        with os.fdopen(os.open(path, flags), "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):  # swapped since the stat
                raise UserError(f"{shown}: error: is no longer a regular file")
            data = file.read(limit + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise UserError(f"{shown}: error: cannot read it: {describe(error)}") from None
    if len(data) > limit:
        raise UserError(f"{shown}: error: too large (more than {limit >> 20} MiB)")
    return data


def write_atomically(path: Path, data: bytes, expected: bytes | None = ...) -> bool:
    """Write data to path (to the file at the end of its symlinks) through a temporary file in the same
    folder, fsync and a rename; keep its mode and, where allowed, its owner. Given expected (the bytes
    read earlier; None: no file), write only if the file still holds them, and return whether it did."""
    try:
        return replace_atomically(path, data, expected)
    except OSError as error:  # name the file being written, never the temporary file (nor none: a full disk)
        raise OSError(error.errno, error.strerror or str(error), str(path)) from None


def replace_atomically(path: Path, data: bytes, expected: bytes | None) -> bool:
    real = Path(os.path.realpath(path))
    real.parent.mkdir(parents=True, exist_ok=True)
    try:
        info = os.stat(real)
    except FileNotFoundError:
        info = None
    remove_stale_temporaries(real)
    handle, temporary = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.tangle-{os.getpid()}.",
                                         suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode) if info else 0o644)
        if info and hasattr(os, "chown") and (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
            with contextlib.suppress(OSError):
                os.chown(temporary, info.st_uid, info.st_gid)
        if expected is not ... and not holds(real, expected):
            os.unlink(temporary)
            return False
        os.replace(temporary, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return True


def holds(path: Path, expected: bytes | None) -> bool:
    """Whether the file at path still has exactly these bytes (None: there is no file)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return expected is None
    if expected is None or not stat.S_ISREG(info.st_mode) or info.st_size != len(expected):
        return False
    with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)),
                   "rb") as file:
        return file.read(len(expected) + 1) == expected


def remove_stale_temporaries(path: Path) -> None:
    """The temporary files that a tangle.py killed outright (SIGKILL, a power cut) left beside path."""
    if not POSIX:
        return
    pattern = re.compile(rf"\.{re.escape(path.name)}\.tangle-([0-9]{{1,9}})\.[^/]*\.tmp")
    with contextlib.suppress(OSError), os.scandir(path.parent) as entries:
        for entry in entries:
            match = pattern.fullmatch(entry.name)
            if match and not process_alive(int(match[1])):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def lesson_links(path: Path, shown: str, command: str, nothing: str) -> int:
    """Before a command rewrites the lesson in place: how many names it has (hard links: replacing the file
    leaves the others with the old text, so the caller warns). Conflict if it vanished since it was read,
    UserError if it is read-only; nothing says what the caller leaves unwritten then."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # write_atomically would make its folder again
        raise Conflict(f"{shown}: error: no longer exists (deleted while {command} ran, with its folder?); {nothing}: "
                       f"restore it (git checkout -- {shown}), then run make {command} again") from None
    except OSError as error:
        raise UserError(f"{shown}: error: cannot use it: {describe(error)}") from None
    if not info.st_mode & 0o222:
        raise UserError(f"{shown}: error: is read-only; {nothing} (chmod u+w it first, then run make {command} again)")
    return info.st_nlink


def rewrite_lesson(path: Path, shown: str, data: bytes, expected: bytes, command: str, nothing: str,
                   changed_meanwhile: str) -> str | None:
    """A command replaces the lesson in place: only if it is still writable and still holds the bytes the
    command read (else Conflict with changed_meanwhile); atomically, with interrupts held off. Returns the
    hard-link warning to print once the command has said what it did, or None."""
    links = lesson_links(path, shown, command, nothing)
    try:
        with signals_deferred():
            written = write_atomically(path, data, expected=expected)
    except OSError as error:
        raise UserError(f"{shown}: error: cannot write it: {describe(error)}; {nothing}") from None
    if not written:
        raise Conflict(f"{shown}: error: {changed_meanwhile}")
    return hard_link_warning(shown, links, command)


def hard_link_warning(shown: str, links: int, command: str) -> str | None:
    if links <= 1:
        return None
    return (f"{shown}: warning: it had {links - 1} other hard link{'s' if links > 2 else ''}, which keep the old text "
            f"({command} replaces the file; a symlink would have followed)")


@contextlib.contextmanager
def signals_deferred():
    """Hold Ctrl-C, SIGTERM and SIGHUP while files are replaced: they take effect once all are written."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def document_lock(path: Path, shown: str, command: str = "update"):
    """One update or stitch of a Markdown file at a time (command: the one asking, for its message): an exclusive
    flock on the file itself (so no lock file is left behind). A second one gives up at once instead of running
    the programs for nothing."""
    handle = None
    with contextlib.suppress(OSError):
        if fcntl is not None and stat.S_ISREG(os.stat(path).st_mode):  # else load() says what is wrong
            handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if handle is not None:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise Conflict(f"{shown}: error: another tangle.py update or stitch is running on it; "
                               f"wait for it to finish, then run make {command} again") from None
            except OSError:
                pass  # a file system without locks: the byte comparison before writing still guards it
        yield
    finally:
        if handle is not None:
            os.close(handle)
