#!/usr/bin/env python3
"""Tangle the code fences of a literate Markdown lesson into programs, check its transcripts and prose
numbers, and stitch edits made in the generated files back into it. The command people run; the work is
done by the package literate/ beside it (its modules are listed in docs/tangle.md).

The manual: docs/tangle.md; the short version: python tangle.py --help.
"""

if __name__ == "__main__":
    from literate.startup import starting
    starting("tangle.py", "nothing was run or written")

from literate.cli import main  # noqa: E402  (the tests call tangle.main([...]) as the command line would)

if __name__ == "__main__":
    raise SystemExit(main(script=True))
