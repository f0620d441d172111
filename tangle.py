#!/usr/bin/env python3
"""Tangle the code fences of a literate Markdown lesson into programs, check its transcripts and prose
numbers, and stitch edits made in the generated files back into it. The command people run; the work is
done by the package literate/ beside it (its modules are listed in docs/tangle.md). The names below are
the API that weave.py, notebook.py and the tests have always imported from here.

The manual: docs/tangle.md; the short version: python tangle.py --help.
"""

import os  # os and sys are loaded with the interpreter: nothing to interrupt here
import sys


def interrupted_while_starting(_signum=None, _frame=None):
    print("tangle.py: interrupted (SIGINT) while starting; nothing was run or written", file=sys.stderr)
    os._exit(130)


try:  # Ctrl-C while the modules load: one line, not the traceback of an import
    import signal
    if __name__ == "__main__":
        signal.signal(signal.SIGINT, interrupted_while_starting)
except KeyboardInterrupt:  # before the handler was in place
    interrupted_while_starting()

if sys.version_info < (3, 10):
    print(f"tangle.py: error: needs Python 3.10 or newer, this is {sys.version.split()[0]}; "
          "run make clean, then make PYTHON=python3.12 (any 3.10 or newer)", file=sys.stderr)
    raise SystemExit(2)

from literate.cli import main  # noqa: E402
from literate.commands import sync_problems  # noqa: E402
from literate.expansion import render  # noqa: E402
from literate.console import ClosedPipeTolerant, interrupts_raised  # noqa: E402
from literate.files import describe, file_kind, read_regular, signals_deferred, write_atomically  # noqa: E402
from literate.inline import BARE_URL, NUMBER, SENTENCE_END, flatten_inline, inline_parts  # noqa: E402
from literate.markdown import decode_markdown, load, normalize_newlines, parse_document  # noqa: E402
from literate.model import (MAX_DEPTH, OWN_LINK, REFERENCE, Conflict, Document, Piece, ProseNumber,  # noqa: E402
                            UserError, chunk_anchor, output_anchor, output_lines, references, root_anchor)
from literate.prose import (BOOK_FIGURES, prose_number_sources, prose_numbers, stale_numbers,  # noqa: E402
                            transcript_lines_printing)
from literate.stitch import stitch  # noqa: E402
from literate.transcripts import classify_change  # noqa: E402

__all__ = ["BARE_URL", "BOOK_FIGURES", "MAX_DEPTH", "NUMBER", "OWN_LINK", "REFERENCE", "SENTENCE_END",
           "ClosedPipeTolerant", "Conflict", "Document", "Piece", "ProseNumber", "UserError", "chunk_anchor",
           "classify_change", "decode_markdown", "describe", "file_kind", "flatten_inline", "inline_parts",
           "interrupts_raised", "load", "main", "normalize_newlines", "output_anchor", "output_lines",
           "parse_document", "prose_number_sources", "prose_numbers", "read_regular", "references", "render",
           "root_anchor", "signals_deferred", "stale_numbers", "stitch", "sync_problems", "transcript_lines_printing",
           "write_atomically"]

if __name__ == "__main__":
    raise SystemExit(main(script=True))
