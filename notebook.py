#!/usr/bin/env python3
"""Make a literate Markdown lesson a Jupyter notebook that runs top to bottom (the command; the notebook is made
by the package literate/notebook/, whose docstring says what it holds). python notebook.py --help says how."""

if __name__ == "__main__":
    from literate.startup import starting
    starting("notebook.py", "the notebook was not changed")
    from literate.notebook.command import main
    raise SystemExit(main())
