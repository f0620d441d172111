#!/usr/bin/env python3
"""Tangle the code fences of a literate Markdown lesson into programs, check its transcripts and prose
numbers, and stitch edits made in the generated files back into it. The command people run; the work is
done by the package literate/ beside it (its modules are listed in docs/tangle.md).

The manual: docs/tangle.md; the short version: python tangle.py --help.
"""

import os  # loaded with the interpreter: nothing to interrupt here

if __name__ == "__main__":
    try:  # the start-up guard (literate/startup.py); a Ctrl-C while it loads says the same one line
        from literate.startup import command
    except KeyboardInterrupt:
        os._exit(os.write(2, b"tangle.py: interrupted (SIGINT) while starting; nothing was run or written\n") and 130)
    command("tangle.py", "nothing was run or written", "literate.cli", script=True)

from literate.cli import main  # noqa: E402, F401  (the tests call tangle.main([...]) as the command line would)
