"""The first thing each command (tangle.py, weave.py, notebook.py) runs, before the package loads: Ctrl-C while
the modules load ends it with one line, not the traceback of an import, and a Python older than 3.10 is told
what to do. It imports only what the interpreter has loaded already and is written for any Python 3, so that
an old one reads it far enough to say so.

What it cannot guard is the interpreter's own start-up, before the command's first line: a Ctrl-C there (its
first few milliseconds: the standard streams, the site-packages and their .pth files) gets the interpreter's
traceback. Run as python -S, the site-packages load here instead, under the guard; and a launcher that blocks
SIGINT until it has started the interpreter has its Ctrl-C reported here, as the one line."""

import os
import signal
import sys


def starting(tool, unchanged):
    """Guard the start of TOOL (unchanged: what an interrupt there leaves as it was); exit 2 on an old Python."""

    def interrupted(_signum=None, _frame=None):
        print("{}: interrupted (SIGINT) while starting; {}".format(tool, unchanged), file=sys.stderr)
        os._exit(130)

    try:
        signal.signal(signal.SIGINT, interrupted)
        if hasattr(signal, "pthread_sigmask"):  # a Ctrl-C that a launcher held back through start-up comes now
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
        if sys.flags.no_site:  # python -S: the site-packages (and their .pth files) load here, under the guard
            import site
            site.main()
    except KeyboardInterrupt:  # before the handler was in place
        interrupted()
    if sys.version_info < (3, 10):
        print("{}: error: needs Python 3.10 or newer, this is {}; run make clean, then make PYTHON=python3.12 "
              "(any 3.10 or newer)".format(tool, sys.version.split()[0]), file=sys.stderr)
        raise SystemExit(2)


def command(tool, unchanged, module, **options):
    """Run TOOL: the start guarded (starting), then the main() of MODULE, whose status is the exit status."""
    starting(tool, unchanged)
    own_folder_last()
    import importlib
    raise SystemExit(importlib.import_module(module).main(**options))


def own_folder_last():
    """Search the command's own folder (sys.path[0], for a script) after the standard and installed modules: this
    package is loaded from it already, and a stray html.py or difflib.py left beside tangle.py cannot stand
    in for a module the tools import. (The lesson cannot write one there: places.py refuses such roots.)"""
    script = os.path.dirname(os.path.realpath(sys.argv[0])) if sys.argv and sys.argv[0] else None
    if script and sys.path and os.path.realpath(sys.path[0] or ".") == script:
        sys.path.append(sys.path.pop(0))


def missing(tool, package, fix):
    """A package the command needs is not installed: one line saying how to install it, exit 2."""
    print("{}: error: needs {}; {}".format(tool, package, fix), file=sys.stderr)
    raise SystemExit(2)
