#!/usr/bin/env python3
"""Make a literate Markdown lesson a Jupyter notebook that runs top to bottom (the command; the notebook is made
by the package literate/notebook/, whose docstring says what it holds). python notebook.py --help says how."""

import os  # loaded with the interpreter: nothing to interrupt here

if __name__ == "__main__":
    try:  # the start-up guard (literate/startup.py); a Ctrl-C while it loads says the same one line
        from literate.startup import command
    except KeyboardInterrupt:
        os._exit(os.write(2, b"notebook.py: interrupted (SIGINT) while starting; the notebook was not changed\n") and 130)
    command("notebook.py", "the notebook was not changed", "literate.notebook.command")
