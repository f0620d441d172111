#!/usr/bin/env python3
"""Weave a literate Markdown lesson into one self-contained HTML page (the command; the page is made by the
package literate/page/, whose docstring says what the page holds). python weave.py --help says how to run it."""

import os  # loaded with the interpreter: nothing to interrupt here

if __name__ == "__main__":
    try:  # the start-up guard (literate/startup.py); a Ctrl-C while it loads says the same one line
        from literate.startup import command
    except KeyboardInterrupt:
        os._exit(os.write(2, b"weave.py: interrupted (SIGINT) while starting; the page was not changed\n") and 130)
    command("weave.py", "the page was not changed", "literate.page.command")
