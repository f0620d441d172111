"""What the notebook takes from the lesson's program: which program it runs first (the one whose transcript comes
first), that program without its `if __name__ == "__main__":` block, and the lines of main() that print each
part of the transcript; and which of the lesson's code IPython would not run as the Python it is, or the program
holds as text rather than code."""

from __future__ import annotations

import ast
import io
import textwrap
import tokenize

from .. import expansion, model

def first_program(doc: model.Document) -> str:
    """The program the notebook runs: the root whose transcript (or its first part) comes first."""
    programs = [target for target in doc.transcripts if target in doc.roots and target.endswith(".py")]
    if not programs:
        raise model.UserError(f"{doc.shown}: error: no program with a transcript; nothing to run in a notebook")
    return min(programs, key=lambda target: doc.transcripts[target].pieces()[0].fence_line)


def main_blocks(text: str, shown: str) -> list[ast.If]:
    """The program's `if __name__ == "__main__":` blocks (in a kernel, __name__ is "__main__" too)."""
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise model.UserError(f"{shown}: error: the program does not parse: {error.msg} "
                               f"(line {error.lineno} of the tangled file)") from None
    except (MemoryError, RecursionError):  # what Python's parser raises for code nested thousands deep
        raise model.UserError(f"{shown}: error: the program is nested too deeply for Python's parser to read "
                               "(brackets or operators thousands deep); the check says where") from None
    return [node for node in tree.body if isinstance(node, ast.If) and is_name_is_main(node.test)]


def is_name_is_main(test: ast.expr) -> bool:
    """`__name__ == "__main__"`, either way round. Read from the tree, not by unparsing it: a test of thousands of
    terms is no main block, and unparsing it would recurse as deep as it is."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    return (any(isinstance(side, ast.Name) and side.id == "__name__" for side in sides)
            and any(isinstance(side, ast.Constant) and side.value == "__main__" for side in sides))


def without_main_block(text: str, shown: str) -> str:
    """The program's text without its `if __name__ == "__main__":` block (main() would print the whole transcript
    in the first cell)."""
    lines = text.split("\n")
    for node in reversed(main_blocks(text, shown)):
        del lines[node.lineno - 1 : node.end_lineno]
    return "\n".join(lines).rstrip("\n")


def main_block(text: str, shown: str) -> str | None:
    """What the program's `if __name__ == "__main__":` blocks run, dedented (None: it has none): run after the
    rest of the program, it prints what running the program prints."""
    lines = text.split("\n")
    found = main_blocks(text, shown)
    if not found:
        return None
    # its body; the whole if where the body shares its line or an else follows (in a kernel it runs the body too)
    return "\n".join(textwrap.dedent("\n".join(lines[(node.lineno if node.orelse or node.body[0].lineno == node.lineno
                                                     else node.body[0].lineno) - 1 : node.end_lineno])).rstrip("\n")
                     for node in found)


def part_blocks(doc: model.Document, parts: int) -> tuple[str, dict[int, list[str]]]:
    """The chunk whose function marks the parts as the lesson declares (parts: main # 第 N 段), and N -> the
    lines that print part N (dedented, its comment first); ("", {}) when the lesson declares no parts."""
    declared = doc.declared.parts
    if declared is None:
        return "", {}
    function, shown = declared.function, declared.shown
    found, too_deep = [], []
    for name, pieces in doc.chunks.items():
        for piece in pieces:
            try:
                tree = ast.parse("\n".join(piece.lines))
            except SyntaxError:  # a fragment of code (an indented block): no main() there
                continue
            except (MemoryError, RecursionError):  # what Python's parser raises for code nested thousands deep
                too_deep.append(f"〈{name}〉 ({doc.where(piece.fence_line)})")
                continue
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and node.name == function:
                    body = piece.lines[node.lineno : node.end_lineno]  # below the def line
                    marks = [i for i, line in enumerate(body) if declared.mark.match(line)]
                    if marks:
                        found.append((name, piece, node, body, marks))
    if len(found) != 1:
        where = ", ".join(f"〈{name}〉 ({doc.where(piece.fence_line)})" for name, piece, *_ in found)
        raise model.UserError(f"{doc.shown}: error: the notebook needs one {function}() whose lines are marked "
                               f"`{shown}` before the lines that print part N; found {len(found)}"
                               + (f": {where}" if where else "")
                               + (f"; Python's parser cannot read {', '.join(too_deep)}: nested too deeply"
                                  if too_deep else ""))
    name, piece, node, body, marks = found[0]
    first_code = min(statement.lineno for statement in node.body if not is_docstring(statement)) - node.lineno - 1
    if first_code < marks[0]:
        raise model.UserError(f"{doc.where(piece.first_line + node.lineno + first_code)}: error: {function}() "
                               f"runs code before its first `{declared.numbered(1)}`; the notebook would leave it out")
    blocks = {}
    for number, (start, end) in enumerate(zip(marks, marks[1:] + [len(body)]), 1):
        line = piece.first_line + node.lineno + start
        part = int(declared.mark.match(body[start])[1])
        if part != number:
            raise model.UserError(f"{doc.where(line)}: error: expected `{declared.numbered(number)}` here (the "
                                   f"parts of {function}() in order), found part {part}")
        blocks[part] = textwrap.dedent("\n".join(body[start:end]).rstrip()).split("\n")
    if len(blocks) != parts:
        raise model.UserError(f"{doc.where(piece.fence_line)}: error: {function}() in 〈{name}〉 marks "
                               f"{len(blocks)} parts (`{shown}`), but its transcript has {parts}")
    return name, blocks


def is_docstring(statement) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def code_chunks(doc: model.Document) -> set[str]:
    """The chunks that a Python program of the lesson runs as top-level statements: some copy of them lands in a .py
    file outside every statement of its top level. The rest are part of a statement (the body of a function, which
    may never be called; a branch that may never be taken; a string: a template, a usage message) or go into a file
    that is no Python. Alone in a notebook cell, such a chunk would run where the program does not, and could do
    anything its text says. A program that Python cannot parse is read for its strings only (check reports it)."""
    found = set()
    for target in doc.roots:
        if not target.endswith(".py"):
            continue
        body, origins = expansion.trace(doc, target)
        spans = statement_spans("\n".join(body) + "\n")
        for row, origin in enumerate(origins, 1):
            if origin is not None and origin.opens and not any(first <= row <= last for first, last in spans):
                found.add(origin.piece.label)
    return found


def statement_spans(text: str) -> list[tuple[int, int]]:
    """The rows (1-based, first and last, decorators included) of each top-level statement of Python source; for
    source that does not parse, the rows inside each string that runs over several lines."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return [(first + 1, last) for first, last in string_spans(text)]
    return [(min([node.lineno] + [decorator.lineno for decorator in getattr(node, "decorator_list", [])]),
             node.end_lineno) for node in tree.body]


def string_spans(text: str) -> list[tuple[int, int]]:
    """The rows (1-based, first and last) of each string of Python source that runs over several lines (an f-string
    from its start to its end); none for source that Python cannot tokenize (check reports that program)."""
    spans, opened = [], []
    try:
        for kind, _, (first, _), (last, _), _ in tokenize.generate_tokens(io.StringIO(text).readline):
            name = tokenize.tok_name[kind]  # Python's tokens, not the Markdown parser's
            if name == "FSTRING_START":
                opened.append(first)
            elif name == "FSTRING_END" and opened:
                spans.append((opened.pop(), last))
            elif kind == tokenize.STRING and last > first:
                spans.append((first, last))
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return spans
