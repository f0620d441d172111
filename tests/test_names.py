"""Messages about names say what to write, and what they suggest works: a caption for any chunk name, the name a
path or declaration was meant to be when it is written another way, and where the notebook's function is."""

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import literate.markdown
from conftest import run, write


def captioned(name: str, captions: dict[str, str] | None = None) -> str:
    """A lesson with captions whose root includes the chunk name; captions: the caption lines to use, by fence."""
    captions = captions or {}
    root = captions.get("root", '<a name="file-generated/a.py"></a>**〈generated/a.py〉**')
    chunk = captions.get("chunk", "")
    return (f"# L\n\n{root}\n```python {{file=generated/a.py}}\n<<{name}>>\n```\n\n{chunk}\n"
            f"```python {{#{name}}}\nprint('x')\n```\n\n"
            '<a name="output-generated/a.py"></a>**〈generated/a.py〉的实跑输出**\n```text {transcript}\nx\n```\n')


def suggested(err: str) -> dict[str, str]:
    """The caption lines the errors tell the writer to put in: for the root's fence and for the chunk's."""
    found = {}
    for line in err.splitlines():
        match = re.search(r"(?:put this line just above the fence|write): (.*)$", line)
        if match:
            found["root" if "由这些代码块依次拼成" in match[1] else "chunk"] = match[1]
    return found


def caption_round_trip(tmp_path, name: str) -> tuple[str, str]:
    """The errors of a lesson whose captions are missing, then those of the lesson with the captions they suggest."""
    md = write(tmp_path, captioned(name), "lesson.md")
    first = literate_errors(md)
    md.write_text(captioned(name, suggested(first)))
    return first, literate_errors(md)


def literate_errors(md) -> str:
    try:
        literate.markdown.load(md, "lesson.md")
    except literate.model.UserError as error:
        return "\n".join(error.messages)
    return ""


@pytest.mark.parametrize("name", ["a*b*c", "p[q](r)", "a\\\\b", "A&amp;B", "x<b>y</b>", "a)b", "a(b",
                                  "x &#49; y", "50%41", "$a$", "~~s~~", "_e_"])
def test_the_suggested_caption_of_a_name_with_markdown_syntax_reads_back_as_that_name(tmp_path, name):
    first, then = caption_round_trip(tmp_path, name)
    assert "has no caption" in first and "〈" in first
    assert then == ""


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7e), min_size=1, max_size=12))
def test_any_printable_name_gets_a_caption_that_works(tmp_path_factory, name):
    if literate.model.reference(f"<<{name}>>") != ("", literate.model.chunk_name(name)) or "}" in name:
        return  # not a chunk name: refused with its own message
    first, then = caption_round_trip(tmp_path_factory.mktemp("names"), name)
    if "has no caption" in first:
        assert then == ""


def test_a_path_written_decomposed_is_told_apart_from_the_root_it_looks_like(tmp_path, capsys):
    decomposed = unicodedata.normalize("NFD", "café")
    md = write(tmp_path, f"# L\n\n```python {{file=generated/café.py}}\nprint('x')\n```\n\n"
                         f"```text {{transcript=generated/{decomposed}.py}}\nx\n```\n", "lesson.md")
    code, _, err = run(capsys, "tangle", md)
    assert code == 2 and f"lesson.md:7: error: {{transcript=generated/{decomposed}.py}} names no .py root" in err
    assert "generated/café.py looks the same, but they differ only in invisible characters: one is written " \
           "decomposed (Unicode NFD" in err


def test_a_citation_written_decomposed_is_told_apart_from_the_program_it_looks_like(tmp_path, capsys):
    decomposed = unicodedata.normalize("NFD", "café")
    md = write(tmp_path, f"# L\n\n<!-- 数字出自 generated/{decomposed}.py -->\n准确率 0.75。\n\n"
                         "```python {file=generated/café.py}\nprint('0.75')\n```\n\n```text {transcript}\n0.75\n```\n",
               "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    code, _, err = run(capsys, "check", md)
    assert code == 2 and "lesson.md:3: error: 数字出自" in err and "looks the same, but" in err and "NFD" in err


PARTS = "<!-- literate\nparts: main # 第 N 段\n-->\n\n# L\n\n"


def test_the_notebooks_function_in_a_roots_own_fence_is_named_at_the_declaration(tmp_path, capsys):
    md = write(tmp_path, PARTS + "```python {file=generated/a.py}\ndef main():\n    # 第 1 段\n    print('x')\n\n\n"
                                 "main()\n```\n\n```text {transcript}\nx\n```\n", "lesson.md")
    code, _, err = run(capsys, "check", md)
    assert code == 2 and ("lesson.md:2: error: parts: main() is defined in the fence of the root "
                          "{file=generated/a.py} (line 7), but the notebook takes the lines that print each part from "
                          "a named chunk") in err


def test_the_notebooks_function_in_a_root_that_includes_chunks_is_named_too(tmp_path, capsys):
    """The root's <<references>> are no Python: main() is found around them all the same."""
    md = write(tmp_path, PARTS + "```python {file=generated/a.py}\n<<body>>\n\n\ndef main():\n    # 第 1 段\n"
                                 "    show()\n\n\nmain()\n```\n\n```python {#body}\ndef show():\n    print('x')\n```\n\n"
                                 "```text {transcript}\nx\n```\n", "lesson.md")
    code, _, err = run(capsys, "check", md)
    assert code == 2 and "parts: main() is defined in the fence of the root {file=generated/a.py}" in err


def test_a_declared_function_in_a_chunk_passes(tmp_path, capsys):
    md = write(tmp_path, PARTS + "```python {file=generated/a.py}\n<<主程序>>\n```\n\n```python {#主程序}\ndef main():\n"
                                 "    # 第 1 段\n    print('x')\n\n\nmain()\n```\n\n```text {transcript}\nx\n```\n",
               "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    assert run(capsys, "check", md)[:3:2] == (0, "")
