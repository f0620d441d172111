"""What IPython would run differently from the Python it is given: a notebook cell goes through IPython's input
transformers before Python sees it. Every tool applies the rule to the reader's playgrounds (they are cells in the
notebook), and notebook.py to the chunks it makes cells of."""

from __future__ import annotations

import ast
import re
import textwrap

from .model import quoted

# A first line `%%bash` runs the rest of a cell in the shell, `%%html` shows it as raw HTML, `!cmd` and `x = !cmd`
# run a shell command, `%name` a magic, `name?` asks for help, `/f x`, `,f x` and `;f x` call f. None of these is
# Python syntax, so IPython runs code that Python parses unchanged; only code that does not parse (a chunk that ends a
# statement begun elsewhere, a cell that is not Python) can hold them. There a plain, conservative rule finds them,
# not IPython's own (it needs IPython and changes between its versions): tests/test_notebook_magics.py holds the rule
# to IPython's verdict.
IPYTHON_ESCAPES = ("%", "!", "?", "/", ",", ";")  # at a line's start: ESC_MAGIC, ESC_SHELL, ESC_HELP, ESC_PAREN, ...
IPYTHON_ASSIGNS = re.compile(r"=\s*[%!]")  # x = %magic, x = !command: IPython's MagicAssign and SystemAssign
# A cell of one line is read once more (IPython's prefilter): if it starts with the name of a line magic, or is
# exit or quit, IPython calls that (`ls` lists the folder, `cd x` changes it, `exit` stops the kernel), unless the
# rest assigns (=), unpacks (,) or reads an attribute (.) — for exit and quit, unless it calls or reads one. Python code that parses, so the rule below looks for it
# even then. The line magics of IPython 8 and 9 (tests/test_notebook_magics.py holds the list to IPython's own):
LINE_MAGICS = frozenset("""
    alias alias_magic autoawait autocall automagic bookmark cat cd code_wrap colors conda config cp debug dhist dirs
    doctest_mode ed edit env gui hist history killbgscripts ldir less lf lk ll load load_ext loadpy logoff logon
    logstart logstate logstop ls lsmagic lx macro magic mamba man matplotlib micromamba mkdir more mv notebook page
    pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint precision prun psearch psource pushd pwd pycat pylab
    qtconsole quickref recall rehashx reload_ext rep rerun reset reset_selective rm rmdir run save sc set_env store
    sx system tb time timeit unalias unload_ext uv who who_ls whos xdel xmode""".split())
AUTOCALLED = frozenset({"exit", "quit"})  # called with no parentheses: exit stops the kernel
ONE_LINE_CALL = re.compile(r"\s*([A-Za-z_]\w*)(.*)")


def parses(source: str) -> bool:
    """Whether Python reads source as a module (dedented first, as IPython dedents a cell)."""
    try:
        ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError, MemoryError, RecursionError):  # ValueError: a NUL; the last two: nested deep
        return False
    return True


def ipython_line(lines: list[str]) -> int | None:
    """The index of the first line that IPython would read as its own syntax rather than as Python (see
    IPYTHON_ESCAPES and LINE_MAGICS), or None when it would run the lines as they are."""
    first = next((index for index, line in enumerate(lines) if line.strip()), len(lines))
    if len(lines) - first == 1 and calls_a_magic(lines[first]):
        return first
    if parses("\n".join(lines)):
        return None
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(IPYTHON_ESCAPES) or stripped.endswith("?") or IPYTHON_ASSIGNS.search(stripped):
            return index
    return None


def calls_a_magic(line: str) -> bool:
    """Whether IPython runs this line, alone in a cell, as a line magic or an autocall (ls, cd /tmp, exit)."""
    match = ONE_LINE_CALL.fullmatch(line)
    if match is None:
        return False
    name, rest = match[1], match[2].lstrip()
    if match[2].startswith("."):  # an attribute: ls.x
        return False
    if name in AUTOCALLED:
        return not rest.startswith("(")
    return name in LINE_MAGICS and rest[:1] not in ("=", ",")


def misread(lines: list[str], what: str) -> tuple[int, str] | None:
    """(the index of the line, why) if IPython would not run these lines of a fence as the Python they are; None
    if it would. what: the fence as the message names it ("the playground of generated/a.py")."""
    index = ipython_line(lines)
    if index is None:
        return None
    how = "is not Python that parses, and" if not parses("\n".join(lines)) else "is a single line, and"
    return index, (f"{what} {how} in a notebook cell IPython would run its line {quoted(lines[index].strip())} as "
                   "a magic, a shell command or a help request")
