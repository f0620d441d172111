#!/usr/bin/env python3
"""Weave a literate Markdown lesson into one self-contained HTML page (the command; the page is made by the
package literate/page/, whose docstring says what the page holds). python weave.py --help says how to run it."""

if __name__ == "__main__":
    from literate.startup import starting
    starting("weave.py", "the page was not changed")
    from literate.page.command import main
    raise SystemExit(main())
