"""Tests of tangle.py: small Markdown files in tmp_path, tangle.main([...]) called directly."""

import contextlib
import io
import os
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import literate.commands  # noqa: E402
import literate.markdown  # noqa: E402
import literate.proofs
import literate.prose  # noqa: E402
import literate.transcripts  # noqa: E402
import conftest
import tangle
from conftest import run

PROGRAM = """\
# 注意力

```python {file=generated/attention.py}
<<打印 结果>>
```

```python {#打印 结果}
print("acc 0.9300")
```

```text {transcript}
acc 0.9300
```
"""


def write(folder: Path, text: str, name: str = "attention.md") -> Path:
    """The lesson, dedented (the tests here write it indented), as a file in folder."""
    return conftest.write(folder, textwrap.dedent(text), name)


def book(folder: Path, *figures: str) -> None:
    """A book_figures.txt beside the lesson, listing these figures."""
    (folder / "book_figures.txt").write_text("# the book's figures\n" + "".join(f"{f}\n" for f in figures))


def generated(md: Path) -> str:
    return (md.parent / "generated" / "attention.py").read_text()


def body(md: Path) -> list[str]:
    """The generated lines after the banner and the location comments."""
    return [line for line in generated(md).split("\n")[2:] if not line.lstrip().startswith("# attention.md:")]


# ---------------------------------------------------------------- tangling


def test_tangle_writes_banner_hash_and_location_comments(tmp_path, capsys):
    md = write(tmp_path, PROGRAM)
    assert run(capsys, "tangle", md)[0] == 0
    lines = generated(md).split("\n")
    assert lines[0] == ("# Generated from attention.md by tangle.py — edit attention.md and run make tangle, "
                        "or edit here and run make stitch.")
    assert lines[1].startswith("# sha256 of the lines below: ")
    assert lines[2:6] == ["# attention.md:4 (generated/attention.py)", "# attention.md:8 (打印 结果)",
                          'print("acc 0.9300")', ""]


def test_included_chunk_is_reindented_and_blank_lines_stay_empty(tmp_path, capsys):
    md = write(tmp_path, """\
        ```python {file=generated/attention.py}
        def main():
            for step in range(2):
                <<训练 循环>>
        ```

        ```python {#训练 循环}
        x = step

        <<  打印  >>
        ```

        ```python {#打印}
        print(x)
        ```
        """)
    assert run(capsys, "tangle", md)[0] == 0
    assert generated(md).split("\n")[2:] == [
        "# attention.md:2 (generated/attention.py)", "def main():", "    for step in range(2):",
        "        # attention.md:8 (训练 循环)", "        x = step", "",
        "        # attention.md:14 (打印)", "        print(x)", ""]


def test_repeated_names_and_roots_append_in_document_order(tmp_path, capsys):
    md = write(tmp_path, """\
        ```python {file=generated/attention.py}
        <<步骤>>
        ```

        ```python {#步骤}
        a = 1
        ```

        ```python {file=generated/attention.py}
        c = 3
        ```

        ```python {#步骤}
        b = 2
        ```
        """)
    assert run(capsys, "tangle", md)[0] == 0
    assert [line for line in body(md) if line] == ["a = 1", "b = 2", "c = 3"]
    assert "# attention.md:14 (步骤)" in generated(md)


def test_tangle_leaves_an_unchanged_file_alone(tmp_path, capsys):
    md = write(tmp_path, PROGRAM)
    run(capsys, "tangle", md)
    target = tmp_path / "generated" / "attention.py"
    os.utime(target, (1_000_000, 1_000_000))
    code, out, _ = run(capsys, "tangle", md)
    assert (code, out) == (0, "")
    assert target.stat().st_mtime == 1_000_000


def test_tangle_refuses_to_overwrite_a_hand_edit_and_force_overwrites(tmp_path, capsys):
    md = write(tmp_path, PROGRAM)
    run(capsys, "tangle", md)
    target = tmp_path / "generated" / "attention.py"
    target.write_text(target.read_text() + "print('my fix')\n")
    md.write_text(PROGRAM.replace("0.9300", "0.9400"))
    code, _, err = run(capsys, "tangle", md)
    assert code == 2
    assert err == (f"{tmp_path}/generated/attention.py: error: edited by hand since it was last tangled; "
                   "attention.md changed too since then, so stitch cannot place it: move your change into "
                   "attention.md by hand, or rerun with --force to overwrite it\n")
    assert "my fix" in target.read_text()
    assert run(capsys, "tangle", md, "--force")[0] == 0
    assert "my fix" not in target.read_text() and "0.9400" in target.read_text()


def test_tangle_refuses_a_file_it_did_not_write(tmp_path, capsys):
    md = write(tmp_path, PROGRAM)
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "attention.py").write_text("print('mine')\n")
    assert run(capsys, "tangle", md)[0] == 2
    assert (tmp_path / "generated" / "attention.py").read_text() == "print('mine')\n"


@pytest.mark.parametrize("encode", [
    lambda text: text.encode(),
    lambda text: text.replace("\n", "\r\n").encode(),
    lambda text: b"\xef\xbb\xbf" + text.encode(),
    lambda text: b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode(),
], ids=["LF", "CRLF", "BOM", "BOM+CRLF"])
def test_crlf_and_bom_give_the_same_output_as_lf(tmp_path, capsys, encode):
    (tmp_path / "lf").mkdir()
    (tmp_path / "other").mkdir()
    reference = write(tmp_path / "lf", PROGRAM)
    other = tmp_path / "other" / "attention.md"
    other.write_bytes(encode(PROGRAM))
    assert run(capsys, "tangle", reference)[0] == 0
    assert run(capsys, "tangle", other)[0] == 0
    assert (other.parent / "generated/attention.py").read_bytes() == generated(reference).encode()


@pytest.mark.parametrize("fence", ["~~~", "````", "~~~~~"])
def test_tilde_and_longer_fences_may_hold_backtick_fences(tmp_path, capsys, fence):
    md = write(tmp_path, f"""\
        {fence}python {{file=generated/attention.py}}
        DOC = '''
        ```
        '''
        {fence}
        """)
    assert run(capsys, "tangle", md)[0] == 0
    assert body(md) == ["DOC = '''", "```", "'''", ""]


def test_fences_in_html_comments_are_not_code_but_fences_in_lists_and_quotes_are(tmp_path, capsys):
    md = write(tmp_path, """\
        <!--
        ```python
        print("hidden, and no error although it has no name")
        ```
        -->

        - 第一步：

          ```python {file=generated/attention.py}
          <<引用>>
          ```

        > ```python {#引用}
        > print("quoted")
        > ```
        """)
    assert run(capsys, "tangle", md)[0] == 0
    assert [line for line in body(md) if line] == ['print("quoted")']


def test_plain_fences_of_other_languages_are_illustrations(tmp_path, capsys):
    md = write(tmp_path, PROGRAM + "\n```text\n0.1234 illustration\n```\n\n```\nanything\n```\n")
    assert run(capsys, "tangle", md)[0] == 0


# ---------------------------------------------------------------- errors

ERRORS = {
    "unterminated fence at the end": (
        "```python {file=generated/attention.py}\nprint(1)\n```\n\n```text\nnever closed\n",
        "attention.md:5: error: unterminated code fence: no closing ``` before the end of the file"),
    "a fence line with info does not close a fence": (
        "```python {file=generated/attention.py}\nprint(1)\n\n```text\nx\n```python\n",
        "attention.md:1: error: unterminated code fence"),
    "unterminated fence in a list item": (
        "```python {file=generated/attention.py}\nprint(1)\n```\n\n- item\n  ```python {#x}\n  y\nafter\n",
        "attention.md:6: error: unterminated code fence: no closing ``` before the end of its list item or quote"),
    "undefined reference": (
        "```python {file=generated/attention.py}\nx = 1\n    <<打印 结果>>\n```\n\n```python {#打印结果}\n```\n",
        "attention.md:3: error: <<打印 结果>> is not defined: no fence has {#打印 结果}; did you mean <<打印结果>>?"),
    "self reference": (
        "```python {file=generated/attention.py}\n<<a>>\n```\n\n```python {#a}\n<<a>>\n```\n",
        "attention.md:6: error: <<a>> includes itself"),
    "cyclic reference": (
        "```python {file=generated/attention.py}\n<<a>>\n```\n\n```python {#a}\n<<b>>\n```\n\n"
        + "```python {#b}\n<<a>>\n```\n",
        "attention.md:10: error: <<a>> is cyclic: a → b → a"),
    "unused chunk": (
        "```python {file=generated/attention.py}\n```\n\n```python {#闲置 代码}\n```\n\n```python {#闲置 代码}\n```\n",
        "attention.md:4: error: chunk {#闲置 代码} is never used: no root includes <<闲置 代码>>"),
    "python fence without name or file": (
        "```python {file=generated/attention.py}\n```\n\n```python\nprint('orphan')\n```\n",
        "attention.md:4: error: python fence with neither {#name} nor {file=...}"),
    "two references on one line": (
        "```python {file=generated/attention.py}\n<<a>> <<b>>\n```\n\n```python {#a}\n```\n\n```python {#b}\n```\n",
        "attention.md:2: error: «<<a>> <<b>>» reads as a chunk reference but is not one"),
    "two references on one line without a blank": (
        "```python {file=generated/attention.py}\n    <<a>><<b>>\n```\n\n```python {#a}\n```\n\n```python {#b}\n```\n",
        "attention.md:2: error: «<<a>><<b>>» reads as a chunk reference but is not one"),
    "a reference with words after it": (
        "```python {file=generated/attention.py}\n<<a>>  # 打印\n```\n\n```python {#a}\n```\n",
        "attention.md:2: error: «<<a>>  # 打印» reads as a chunk reference but is not one"),
    "a chunk name holding >>": (
        "```python {file=generated/attention.py}\n```\n\n```python {#a>> <<b}\n```\n",
        "attention.md:4: error: a chunk name cannot hold << or >>"),
    **{f"a {language} fence without name or file": (
        f"```python {{file=generated/attention.py}}\n```\n\n```{language}\nprint('orphan')\n```\n",
        f"attention.md:4: error: {language} fence with neither {{#name}} nor {{file=...}}")
       for language in ("Python", "PYTHON", "Python3", "python3.11", "py3", "Py")},
    "absolute target": (
        "```python {file=/tmp/attention.py}\n```\n",
        "attention.md:1: error: file=/tmp/attention.py is absolute"),
    "a Windows path": (
        "```python {file=generated\\attention.py}\n```\n",
        "attention.md:1: error: file=generated\\attention.py has a backslash: write / between folders "
        "(generated/attention.py)"),
    "target outside the folder": (
        "```python {file=generated/../../attention.py}\n```\n",
        "attention.md:1: error: file=generated/../../attention.py is outside the folder"),
    "target that is not a # file": (
        "```json {file=generated/data.json}\n```\n",
        "attention.md:1: error: file=generated/data.json: tangle writes only files that take # comments"),
    "name and file in one fence": (
        "```python {#训练 循环 file=generated/attention.py}\n```\n",
        "attention.md:1: error: a fence is either a named chunk {#name} or a root {file=...}, not both"),
    "unknown attribute": (
        "```python {fiel=generated/attention.py}\n```\n",
        "attention.md:1: error: cannot read attribute 'fiel=generated/attention.py'"),
    "attributes without closing brace": (
        "```python {#x\n```\n",
        "attention.md:1: error: attributes '{#x' do not end with }"),
    "duplicate transcript": (
        "```python {file=generated/attention.py}\n```\n\n```text {transcript}\n```\n\n```text {transcript}\n```\n",
        "attention.md:7: error: second transcript of generated/attention.py (the first is at line 4)"),
    "bare transcript with several programs": (
        "```python {file=generated/a.py}\n```\n\n```python {file=generated/b.py}\n```\n\n```text {transcript}\n```\n",
        "attention.md:7: error: {transcript} of which program? there are several: generated/a.py, generated/b.py"),
    "transcript of an unknown program": (
        "```python {file=generated/a.py}\n```\n\n```text {transcript=generated/c.py}\n```\n",
        "attention.md:4: error: {transcript=generated/c.py} names no .py root"),
    "no root at all": (
        "# 只有文字\n\n```text\n插图\n```\n",
        "attention.md: error: no root chunk, nothing to tangle"),
    "not UTF-8": (
        "第一行\n\n第三行 ".encode() + b"\xff\n",
        "attention.md:3: error: not UTF-8 (byte 0xff)"),
}


@pytest.mark.parametrize("text, message", ERRORS.values(), ids=ERRORS.keys())
@pytest.mark.parametrize("command", ["tangle", "check", "update"])
def test_input_errors_are_reported_with_their_line_and_nothing_is_written(tmp_path, capsys, text, message, command):
    md = tmp_path / "attention.md"
    md.write_bytes(text if isinstance(text, bytes) else text.encode())
    before = md.read_bytes()
    code, out, err = run(capsys, command, md)
    assert code == 2
    assert f"{tmp_path}/{message}" in err
    assert "Traceback" not in err + out
    assert not (tmp_path / "generated").exists()
    assert md.read_bytes() == before


def test_a_missing_markdown_file_is_an_input_error(tmp_path, capsys):
    code, _, err = run(capsys, "tangle", tmp_path / "nowhere.md")
    assert (code, err) == (2, f"{tmp_path}/nowhere.md: error: no such file\n")


def test_a_target_that_is_a_directory_is_an_input_error(tmp_path, capsys):
    md = write(tmp_path, "```python {file=generated/attention.py}\n```\n")
    (tmp_path / "generated" / "attention.py").mkdir(parents=True)
    code, _, err = run(capsys, "tangle", md)
    assert (code, err) == (2, f"{md}:1: error: file=generated/attention.py is a directory\n")


def test_an_unwritable_target_is_an_input_error_and_nothing_is_written(tmp_path, capsys):
    md = write(tmp_path, "```python {file=out/a.py}\n```\n\n```python {file=generated/b.py}\n```\n")
    (tmp_path / "generated").write_text("a file where a folder should be")
    code, _, err = run(capsys, "tangle", md)
    assert code == 2
    assert f"{md}:4: error: cannot write file=generated/b.py: generated is not a directory" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["check", "update"])
def test_check_and_update_need_a_transcript(tmp_path, capsys, command):
    md = write(tmp_path, "```python {file=generated/attention.py}\nprint(1)\n```\n")
    run(capsys, "tangle", md)
    code, _, err = run(capsys, command, md)
    assert code == 2
    assert err.startswith(f"{md}: error: no transcript;")


def test_usage_errors_and_help(capsys):
    assert run(capsys, "frobnicate")[0] == 2
    assert run(capsys)[0] == 2
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "原书" in out and "python tangle.py update" in out


# ---------------------------------------------------------------- check


def test_check_passes_when_output_and_transcript_agree(tmp_path, capsys):
    md = write(tmp_path, PROGRAM + "\n实测准确率 0.9300，原书写的是 0.95。\n")
    book(tmp_path, "0.95")
    run(capsys, "tangle", md)
    code, out, err = run(capsys, "check", md)
    assert (code, err) == (0, "")
    assert out == "checked 2 prose numbers (1 marked as the book's); transcript matches\n"


def test_check_shows_a_diff_numbered_by_markdown_lines(tmp_path, capsys):
    md = write(tmp_path, PROGRAM.replace('print("acc 0.9300")', 'print("acc 0.9310")\nprint("done")'))
    run(capsys, "tangle", md)
    code, out, err = run(capsys, "check", md)
    assert code == 1
    assert f"{md}:13: error: the output of {tmp_path}/generated/attention.py differs from its transcript" in err
    assert out.splitlines()[:6] == [
        "text/layout changed",
        f"--- {md} (transcript, lines 13-13)",
        "+++ actual output",
        "@@ -13 +13,2 @@",
        "-acc 0.9300",
        "+acc 0.9310",
    ]
    assert out.endswith("transcript differs\n")


def test_check_explains_pure_number_drift(tmp_path, capsys):
    md = write(tmp_path, PROGRAM.replace('print("acc 0.9300")', 'print("acc 0.9304")'))
    run(capsys, "tangle", md)
    code, out, _ = run(capsys, "check", md)
    assert code == 1
    assert out.startswith("only numbers changed: 1 value, max |Δ| = 0.0004, layout identical")


def test_check_does_not_retangle_a_stale_generated_file(tmp_path, capsys):
    md = write(tmp_path, PROGRAM)
    run(capsys, "tangle", md)
    before = generated(md)
    md.write_text(PROGRAM.replace('print("acc 0.9300")', 'print("acc 0.9300")\nprint("new")'))
    code, _, err = run(capsys, "check", md)
    assert code == 1
    assert err == (f"{tmp_path}/generated/attention.py: error: out of date with attention.md; run "
                   f"{conftest.tangle_command('tangle', md)}\n")
    assert generated(md) == before


def test_check_reports_a_hand_edited_generated_file(tmp_path, capsys):
    md = write(tmp_path, PROGRAM)
    run(capsys, "tangle", md)
    target = tmp_path / "generated" / "attention.py"
    target.write_text(target.read_text().replace("0.9300", "0.9301"))
    code, _, err = run(capsys, "check", md)
    assert code == 1 and "edited by hand since it was last tangled" in err


def test_a_crash_is_reported_with_frames_mapped_to_the_markdown(tmp_path, capsys):
    md = write(tmp_path, """\
        ```python {file=generated/attention.py}
        def main():
            <<训练 循环>>

        main()
        ```

        ```python {#训练 循环}
        total = 0
        total = total / 0
        ```

        ```text {transcript}
        ```
        """)
    run(capsys, "tangle", md)
    code, _, err = run(capsys, "check", md)
    assert code == 1
    assert f"  {md}:5 (generated/attention.py), in <module>" in err
    assert f"  {md}:10 (训练 循环), in main" in err
    assert "ZeroDivisionError" in err
    assert f"{md}:10: error: {tmp_path}/generated/attention.py exited with status 1" in err
    assert 'File "' not in err


def test_the_program_runs_in_the_markdown_folder_with_a_controlled_environment(tmp_path, capsys):
    md = write(tmp_path, """\
        ```python {file=generated/attention.py}
        import os, sys
        print(os.path.exists("attention.md"))
        print(os.environ["PYTHONHASHSEED"], os.environ["OPENBLAS_NUM_THREADS"], sys.stdout.encoding)
        ```

        ```text {transcript}
        True
        0 1 utf-8
        ```
        """)
    run(capsys, "tangle", md)
    assert run(capsys, "check", md)[0] == 0


# ---------------------------------------------------------------- update


TWO_PROGRAMS = """\
```python {file=generated/fast.py}
print("fast 0.25")
```

```python {file=generated/slow.py}
raise SystemExit("slow.py must not run under --only generated/fast.py")
```

```text {transcript=generated/fast.py}
fast 0.25
```

```text {transcript=generated/slow.py}
slow 0.50
```

正文引用 0.25。

<!-- 数字出自 generated/slow.py -->
也引用 0.50：每一份实跑输出都算数，不论跑了哪个程序。
"""


def test_only_runs_the_named_program_but_reads_every_transcript(tmp_path, capsys):
    md = write(tmp_path, TWO_PROGRAMS)
    assert run(capsys, "tangle", md)[0] == 0
    code, out, err = run(capsys, "check", md, "--only", "generated/fast.py")
    assert (code, err) == (0, "")
    assert "checked 2 prose numbers" in out and "transcript matches" in out
    code, _, err = run(capsys, "check", md)
    assert code == 1 and "slow.py must not run" in err
    before = md.read_bytes()
    code, _, err = run(capsys, "update", md, "--only", "generated/nowhere.py")
    assert code == 2 and "--only generated/nowhere.py: no program with a transcript" in err
    assert md.read_bytes() == before


@pytest.mark.parametrize("only", ["generated/fast.py", "docs/generated/fast.py", "./docs/generated/fast.py",
                                  "docs//generated/./fast.py", "ABSOLUTE", "LINK"])
def test_only_takes_the_program_as_the_lesson_or_the_shell_names_it(tmp_path, capsys, monkeypatch, only):
    """The lesson in docs/, run from the folder above: --only takes the path of file= (relative to the lesson),
    the path the messages show (relative to here), an absolute path or a symlink to the program."""
    (tmp_path / "docs").mkdir()
    md = write(tmp_path / "docs", TWO_PROGRAMS)
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "tangle", "docs/attention.md")[0] == 0
    if only == "ABSOLUTE":
        only = str(tmp_path / "docs" / "generated" / "fast.py")
    elif only == "LINK":
        (tmp_path / "fast.py").symlink_to(tmp_path / "docs" / "generated" / "fast.py")
        only = "fast.py"
    code, out, err = run(capsys, "check", "docs/attention.md", "--only", only)
    assert (code, err) == (0, "") and "transcript matches" in out
    code, _, err = run(capsys, "check", md, "--only", "docs/generated/slow")
    assert code == 2 and "--only docs/generated/slow: no program with a transcript by that name" in err


def test_update_then_check_passes(tmp_path, capsys):
    md = write(tmp_path, PROGRAM.replace('print("acc 0.9300")', 'print("准确率 0.9900")\nprint("第二行")'))
    run(capsys, "tangle", md)
    code, out, _ = run(capsys, "update", md)
    assert code == 0
    assert "-acc 0.9300" in out and "+准确率 0.9900" in out
    assert md.read_text().endswith("```text {transcript}\n准确率 0.9900\n第二行\n```\n")
    assert run(capsys, "check", md)[0] == 0
    assert run(capsys, "update", md)[1] == "transcript unchanged\n"


def test_update_retangles_code_that_moved_below_a_grown_transcript(tmp_path, capsys):
    md = write(tmp_path, PROGRAM.replace("acc 0.9300\n", "") + "\n```python {#打印 结果}\nprint('more')\n```\n")
    run(capsys, "tangle", md)
    code, out, _ = run(capsys, "update", md)
    assert code == 0
    assert f"wrote {tmp_path}/generated/attention.py" in out
    assert "# attention.md:17 (打印 结果)" in generated(md)
    assert run(capsys, "check", md)[0] == 0


def test_update_keeps_every_other_byte_bom_and_crlf(tmp_path, capsys):
    text = "\ufeff" + PROGRAM.replace("acc 0.9300\n```", "old\n```").replace("\n", "\r\n") + "尾巴 \t\r\n"
    md = tmp_path / "attention.md"
    md.write_bytes(text.encode())
    run(capsys, "tangle", md)
    assert run(capsys, "update", md)[0] == 0
    assert md.read_bytes() == text.replace("old\r\n", "acc 0.9300\r\n").encode()


def test_update_lengthens_the_fence_when_the_output_holds_one(tmp_path, capsys):
    md = write(tmp_path, PROGRAM.replace('print("acc 0.9300")', 'print("```")\nprint("acc 0.9300")'))
    run(capsys, "tangle", md)
    assert run(capsys, "update", md)[0] == 0
    assert md.read_text().endswith("````text {transcript}\n```\nacc 0.9300\n````\n")
    assert run(capsys, "check", md)[0] == 0


@pytest.mark.parametrize("prefix, blank", [("> ", ">"), ("  ", "")], ids=["quote", "list item"])
def test_update_rewrites_a_transcript_inside_a_quote_or_list_item(tmp_path, capsys, prefix, blank):
    lead = "> 输出：\n>\n" if prefix == "> " else "- 输出：\n\n"
    md = write(tmp_path, "```python {file=generated/attention.py}\nprint('a')\nprint()\nprint('b')\n```\n\n"
               + lead + f"{prefix}```text {{transcript}}\n{prefix}old\n{prefix}```\n")
    run(capsys, "tangle", md)
    assert run(capsys, "update", md)[0] == 0
    assert md.read_text().endswith(f"{prefix}```text {{transcript}}\n{prefix}a\n{blank}\n{prefix}b\n{prefix}```\n")
    assert run(capsys, "check", md)[0] == 0


def test_update_refuses_a_program_that_is_not_deterministic(tmp_path, capsys):
    md = write(tmp_path, PROGRAM.replace('print("acc 0.9300")', 'print("same")\nimport os\nprint(os.urandom(8).hex())'))
    run(capsys, "tangle", md)
    before = md.read_bytes()
    code, _, err = run(capsys, "update", md)
    assert code == 1
    assert "error: not deterministic" in err and "output line 2" in err
    assert md.read_bytes() == before


def test_update_refuses_output_without_a_final_newline(tmp_path, capsys):
    md = write(tmp_path, PROGRAM.replace('print("acc 0.9300")', 'print("acc 0.9300", end="")'))
    run(capsys, "tangle", md)
    before = md.read_bytes()
    code, _, err = run(capsys, "update", md)
    assert code == 1 and "does not end with a newline" in err
    assert md.read_bytes() == before


def test_update_reports_the_prose_numbers_it_made_stale(tmp_path, capsys):
    md = write(tmp_path, PROGRAM.replace('print("acc 0.9300")', 'print("acc 0.9320")')
               + "\n准确率是 0.9300。\n")
    run(capsys, "tangle", md)
    code, _, err = run(capsys, "update", md)
    assert code == 1
    assert err.startswith(f"{md}:15: error: 0.9300 is not printed by generated/attention.py "
                          "(its section's transcript; nearest: 0.9320); if it is no output but an example or a "
                          "definition, write it as code, between backticks\n")
    assert "the transcript is recorded; 1 prose number not proven" in err
    assert "acc 0.9320\n```" in md.read_text()


# ---------------------------------------------------------------- prose numbers

PROSE = {
    "number in the transcript": ("准确率 0.9300。", []),
    "sign is ignored": ("输出是（0.9300, -0.5）。", []),
    "stale number": ("准确率 0.9310。", ["0.9310"]),
    "same digits, or rounded from a number printed under its heading": ("准确率 0.93，0.930，0.9。", []),
    "rounded the wrong way": ("准确率 0.94。", ["0.94"]),
    "more digits than printed": ("准确率 0.93001。", ["0.93001"]),
    "single digits are claims": ("有 3 个 key 和 0 个 value。", ["3", "0"]),
    "references exempt": ("2017 年的论文、第 12 章、6.5 节。", []),
    "counts and settings are claims": ("16 维、2000 轮、10 位、32 步。", ["16", "2000", "10", "32"]),
    "a sign written is compared": ("变化 +0.5，-0.9300。", ["+0.5:", "-0.9300:"]),
    "a sign written as the program prints it": ("变化 −0.5，+0.9300。", []),
    "book span ends at a comma": ("原书报告 0.99，这次跑出来 0.95。", ["0.95"]),
    "unit must follow": ("共 2000 个字母。", ["2000"]),
    "book span to the full stop": ("原书说是 0.9900 和 0.99。本章 0.9310。", ["0.9310"]),
    "book span ends at 本仓库": ("原书 0.9900，本仓库 0.9310。", ["0.9310"]),
    "book span goes on after an enumeration comma": ("原书的数字是 0.9900、0.95。", []),
    "ours inside a book span": ("原书是 0.9900，我们是 0.9300。", []),
    "marked as the book's, printed by nobody": ("原书是 0.9900 和 0.9310。", ["0.9310"]),
    "a book figure outside a book span is ours": ("书里的 0.9900。", ["0.9900"]),
    "identifiers are not numbers": ("W1、x2、h_10 和第 6.5.1 小节。", []),
    "exponents are not numbers": ("对 1e-16 量级、2.5E+12 的扰动敏感。", []),
    "code spans are not prose": ("代码 `lr = 0.0123` 不检查。", []),
    "link targets are not prose": ("[链接](https://example.com/0.1234)。", []),
    "autolinks and bare URLs are not prose": ("见 <https://x.org/2024/0.5> 和 https://x.org/12.5/a，", []),
    "link text is prose": ("[准确率 0.9310](https://x.org)。", ["0.9310"]),
    "chinese hugs numbers": ("准确率为0.9310左右。", ["0.9310"]),
}


@pytest.mark.parametrize("sentence, stale", PROSE.values(), ids=PROSE.keys())
def test_prose_number_rules(tmp_path, sentence, stale):
    md = write(tmp_path, PROGRAM.replace("acc 0.9300\n```", "acc 0.9300 (-0.5)\n```") + "\n" + sentence + "\n")
    book(tmp_path, "0.9900", "0.99", "0.95")
    doc = literate.markdown.load(md, "attention.md")
    errors, _ = literate.proofs.stale_numbers(doc)
    assert [error.split(": error: ")[1].split(" ")[0] for error in errors] == stale
    assert all(error.startswith("attention.md:15: error:") for error in errors)


def test_numbers_the_reader_sees_are_checked_and_those_in_code_or_comments_are_not(tmp_path, capsys):
    """A heading's number and the text of an HTML block are seen (on GitHub and on the page): checked. A fence
    and a comment are not prose."""
    md = write(tmp_path, PROGRAM + textwrap.dedent("""
        ## 六、准确率 0.1234 的一节

        ```text
        0.5555
        ```

        <!-- 0.6666 -->

        <div>0.7777</div>

        1. 列表项 0.9300
        """))
    doc = literate.markdown.load(md, "attention.md")
    assert [number.text for number in literate.prose.prose_numbers(doc)] == ["0.1234", "0.7777", "0.9300"]


def test_prose_line_numbers_survive_inline_html_and_code_spans(tmp_path):
    md = write(tmp_path, PROGRAM + "\n见 <span\ntitle='x'>注</span>，a`b`0.9310\n末行 0.9320\n")
    errors, _ = literate.proofs.stale_numbers(literate.markdown.load(md, "attention.md"))
    assert [error.split(" is ")[0] for error in errors] == [
        "attention.md:16: error: 0.9310", "attention.md:17: error: 0.9320"]


def test_table_columns_headed_by_the_book_hold_the_books_figures(tmp_path):
    md = write(tmp_path, PROGRAM + textwrap.dedent("""
        | 任务 | 原书准确率 | 本仓库实测 |
        |---|---|---|
        | 反转 | 0.9900 | 0.9300 |
        | 复制 | 0.8800 | 0.7700 |
        | 排序 | 0.9300 | 0.9300 |
        | 计数 | 0.6600 | 0.9300 |
        """))
    book(tmp_path, "0.9900", "0.8800")
    doc = literate.markdown.load(md, "attention.md")
    errors, numbers = literate.proofs.stale_numbers(doc)
    assert errors == [
        "attention.md:18: error: 0.7700 is not printed by generated/attention.py "
        "(its section's transcript; nearest: 0.9300); if it is no output but an example or a definition, write it as "
        "code, between backticks",
        "attention.md:20: error: 0.6600 is marked as the book's (原书) but the book does not print it "
        "(not in book_figures.txt), nor does generated/attention.py (its section's transcript; nearest: 0.9300)"]
    assert [(n.text, n.book) for n in numbers] == [("0.9900", True), ("0.9300", False), ("0.8800", True),
                                                   ("0.7700", False), ("0.9300", False), ("0.9300", False),
                                                   ("0.6600", False), ("0.9300", False)]


def test_check_fails_on_a_stale_prose_number(tmp_path, capsys):
    md = write(tmp_path, PROGRAM + "\n第一段。\n\n这次准确率是 0.9310，原书是 0.9900。\n")
    book(tmp_path, "0.9900")
    run(capsys, "tangle", md)
    code, out, err = run(capsys, "check", md)
    assert code == 1
    assert err == (f"{md}:17: error: 0.9310 is not printed by generated/attention.py "
                   "(its section's transcript; nearest: 0.9300); if it is no output but an example or a definition, "
                   "write it as code, between backticks\n")
    assert out == "checked 2 prose numbers (1 marked as the book's); 1 not proven\n"


# ---------------------------------------------------------------- which transcript a prose number cites

LESSON = """\
# 课

```python {{file=generated/main.py}}
print("main 0.2303 0.129")
```

```text {{transcript=generated/main.py}}
main 0.2303 0.129
```

{intro}

## 实验

```python {{file=generated/exp.py}}
print("exp 0.2303 0.1293")
```

```text {{transcript=generated/exp.py}}
exp 0.2303 0.1293
```

{experiments}

### 实验的小节

{subsection}

## 误区

{after}
"""
EXP = "<!-- 数字出自 generated/exp.py -->"
MAIN = "<!-- 数字出自 generated/main.py -->"
# (where, prose, [(a word on the line of the error, its number, how the error names the transcript[, which of the
# numbers written alike on the line it is])])
CITATIONS = {
    "same digits in both: fine anywhere": ("intro", "两边都印了 0.2303。", []),
    "the intro cites the main program": ("intro", "权重是 0.1293。", [("权重", "0.1293", "its section's transcript")]),
    "the experiments' part cites them": ("experiments", "权重是 0.1293。", []),
    "a ### subsection stays in its part": ("subsection", "权重是 0.1293。", []),
    "the part after cites the main program": ("after", "权重是 0.1293。", [("权重", "0.1293", "its section's transcript")]),
    "a block comment cites for its paragraph": ("intro", f"{EXP}\n权重是 0.1293。", []),
    "a blank line may follow the comment": ("after", f"{EXP}\n\n权重是 0.1293。", []),
    "a block comment cites for a whole list": ("intro", f"{EXP}\n- 权重 0.1293\n- 还是 0.1293", []),
    "a block comment cites for a whole table": ("intro", f"{EXP}\n| a | b |\n|---|---|\n| 0.1293 | 0.1293 |", []),
    "a block comment cites for one block only": (
        "intro", f"{EXP}\n权重是 0.1293。\n\n又是 0.1293。", [("又是", "0.1293", "its section's transcript")]),
    "a block comment overrides its part": (
        "experiments", f"{MAIN}\n权重是 0.1293。", [("权重", "0.1293", "the transcript named on line {comment}")]),
    "a sentence comment cites to the end of its sentence": (
        "intro", f"前一句 0.2303；{EXP}后一句 0.1293。下一句 0.1293。",
        [("前一句", "0.1293", "its section's transcript", "2nd")]),
    "a sentence comment does not reach back": (
        "intro", f"先说 0.1293，{EXP}再说 0.1293。", [("先说", "0.1293", "its section's transcript", "1st")]),
    "a sentence comment inside a block comment's paragraph": (
        "experiments", f"{MAIN}\n是 0.129，{EXP}也是 0.1293；又是 0.1293。",
        [("是 0.129", "0.1293", "the transcript named on line {comment}", "2nd")]),
}


@pytest.mark.parametrize("where, prose, errors", CITATIONS.values(), ids=CITATIONS.keys())
def test_each_prose_number_is_checked_against_the_transcript_it_cites(tmp_path, where, prose, errors):
    parts = dict.fromkeys(["intro", "experiments", "subsection", "after"], "填充。")
    md = write(tmp_path, LESSON.format(**{**parts, where: prose}))
    lines = md.read_text().split("\n")
    comment = next((n for n, line in enumerate(lines, 1) if line.startswith("<!--")), None)
    expected = []
    for word, number, how, *nth in errors:
        line = next(n for n, text in enumerate(lines, 1) if word in text and not text.startswith("<!--"))
        which = f"the {nth[0]} {number} on the line: " if nth else ""
        other = "generated/exp.py" if "0.1293" in number else "generated/main.py"
        program = "generated/main.py" if other == "generated/exp.py" else "generated/exp.py"
        expected.append(f"attention.md:{line}: error: {which}{number} is not printed by {program} "
                        f"({how.format(comment=comment)}; nearest: 0.129, 0.2303); {other} prints it: "
                        f"if it comes from there, cite it with <!-- 数字出自 {other} --> on the line before "
                        "the paragraph or before the sentence")
    assert literate.proofs.stale_numbers(literate.markdown.load(md, "attention.md"))[0] == expected


def test_a_number_the_other_transcript_prints_fails_check_and_the_comment_makes_it_pass(tmp_path, capsys):
    md = write(tmp_path, LESSON.format(intro="手算的权重是 0.1293。", experiments="", subsection="", after=""))
    run(capsys, "tangle", md)
    code, out, err = run(capsys, "check", md)
    assert code == 1 and out.endswith("1 not proven\n")
    assert err.startswith(f"{md}:11: error: 0.1293 is not printed by generated/main.py (its section's transcript")
    assert "generated/exp.py prints it" in err
    md.write_text(md.read_text().replace("手算的权重", f"{EXP}\n手算的权重"))
    run(capsys, "tangle", md)
    assert run(capsys, "check", md)[0:3:2] == (0, "")


def test_update_lists_every_line_its_new_output_made_stale(tmp_path, capsys):
    """The same digits stay in another transcript, the lines still go stale."""
    md = write(tmp_path, LESSON.format(
        intro="手算：权重 0.2303、0.129。\n\n| key | 权重 |\n|---|---|\n| 甲 | 0.2303 |\n| 乙 | 0.129 |",
        experiments="实验里也是 0.2303。", subsection="", after="误区：0.2303。"))
    run(capsys, "tangle", md)
    assert run(capsys, "check", md)[0] == 0
    md.write_text(md.read_text().replace('print("main 0.2303 0.129")', 'print("main 0.230 0.129")'))
    run(capsys, "tangle", md)
    code, _, err = run(capsys, "update", md, "--only", "generated/main.py")
    assert code == 1
    assert "main 0.230 0.129\n```" in md.read_text()
    stale = [line.split(": error: ")[0].rsplit(":", 1)[1] + " " + line.split(": error: ")[1].split(" ")[0]
             for line in err.splitlines() if ": error: " in line]
    assert stale == ["11 0.2303", "15 0.2303", "36 0.2303"]
    assert "(its section's transcript; nearest: 0.230)" in err
    assert err.endswith("the transcript is recorded; 3 prose numbers not proven (listed above: correct "
                        "attention.md or its list of quotes as each says)\n")


BAD_CITATIONS = {
    "unknown program": (f"<!-- 数字出自 generated/nope.py -->\n正文 0.2303。",
                        "数字出自 generated/nope.py: no program with a transcript by that name "
                        "(there are: generated/main.py, generated/exp.py)"),
    "no path": ("<!-- 数字出自 -->\n正文 0.2303。", "cannot read '<!-- 数字出自 -->': write <!-- 数字出自 PATH --> "
                "alone on its line before a paragraph, list, quote or table"),
    "text beside the comment": (f"{EXP} 正文\n\n正文 0.2303。", "cannot read"),
    "unknown program in a sentence": ("正文<!-- 数字出自 exp.py -->0.2303。",
                                      "数字出自 exp.py: no program with a transcript by that name"),
    "followed by a heading": (f"{EXP}\n## 小标题", "数字出自 generated/exp.py: the comment is followed by no "
                              "paragraph, list, quote or table; put it on the line just before the one it is for"),
    "followed by a fence": (f"{EXP}\n```text\n0.5\n```", "the comment is followed by no paragraph"),
    "at the end of a list item": (f"- 列表\n\n  {EXP}\n- 下一项", "the comment is followed by no paragraph"),
    "at the end of the file": (f"正文。\n\n{EXP}", "the comment is followed by no paragraph"),
}


@pytest.mark.parametrize("prose, message", BAD_CITATIONS.values(), ids=BAD_CITATIONS.keys())
@pytest.mark.parametrize("command", ["check", "update"])
def test_a_bad_citation_comment_is_an_input_error_before_anything_runs(tmp_path, capsys, prose, message, command):
    md = write(tmp_path, LESSON.format(intro="填充。", experiments="", subsection="", after=prose))
    run(capsys, "tangle", md)
    md.write_text(md.read_text().replace('print("main 0.2303 0.129")', 'raise SystemExit("must not run")'))
    run(capsys, "tangle", md)
    before = md.read_bytes()
    code, _, err = run(capsys, command, md)
    line = next(n for n, text in enumerate(md.read_text().split("\n"), 1) if "数字出自" in text)
    assert code == 2
    assert err.startswith(f"{md}:{line}: error: ") and message in err
    assert "must not run" not in err and md.read_bytes() == before


# ---------------------------------------------------------------- the book's figures


def test_a_number_marked_as_the_books_must_be_on_the_book_list(tmp_path, capsys):
    md = write(tmp_path, LESSON.format(
        intro="原书是 0.6820，本仓库 0.2303。", subsection="",
        experiments="原书的权重是 0.1293、也是 0.6820。",  # ours, though marked: exp prints 0.1293
        after="原书写 0.1293 和 0.7777。"))                   # neither the book's nor main's
    (tmp_path / "book_figures.txt").write_text("\ufeff# 原书印出的数字\r\n\r\n0.6820  # 第五节\r\n")
    run(capsys, "tangle", md)
    code, out, err = run(capsys, "check", md)
    assert code == 1
    assert err.splitlines() == [
        f"{md}:31: error: 0.1293 is marked as the book's (原书) but the book does not print it (not in "
        "book_figures.txt), nor does generated/main.py (its section's transcript; nearest: 0.129, 0.2303); "
        "generated/exp.py prints it: if it comes from there, cite it with <!-- 数字出自 generated/exp.py --> "
        "on the line before the paragraph or before the sentence",
        f"{md}:31: error: 0.7777 is marked as the book's (原书) but the book does not print it (not in "
        "book_figures.txt), nor does generated/main.py (its section's transcript; nearest: 0.2303)"]
    assert out == "checked 6 prose numbers (2 marked as the book's); 2 not proven\n"


def test_the_book_list_is_needed_only_when_something_is_marked_as_the_books(tmp_path, capsys):
    md = write(tmp_path, PROGRAM + "\n准确率 0.9300，原书没有给数字。\n")
    run(capsys, "tangle", md)
    assert run(capsys, "check", md)[0:3:2] == (0, "")


BAD_BOOK_LISTS = {
    "missing": (None, "book_figures.txt: error: no such file; {md} marks numbers as the book's (原书), so "
                "book_figures.txt beside it must list the figures the book prints, one a line"),
    "a word": (b"0.95\nabc\n", "book_figures.txt:2: error: 'abc' is not one number written as the book prints it"),
    "two numbers on a line": (b"0.95 0.10\n", "book_figures.txt:1: error: '0.95 0.10' is not one number"),
    "a number with a unit": (b"16 \xe7\xbb\xb4\n", "book_figures.txt:1: error: '16 维' is not one number"),
    "listed twice": (b"0.95\n# x\n+0.95\n", "book_figures.txt:3: error: +0.95 is listed twice (first on line 1)"),
    "not UTF-8": (b"0.95\n\xff\n", "book_figures.txt: error: not UTF-8"),
    "a folder": ("folder", "book_figures.txt: error: is a directory, not a regular file"),
}


@pytest.mark.parametrize("content, message", BAD_BOOK_LISTS.values(), ids=BAD_BOOK_LISTS.keys())
@pytest.mark.parametrize("command", ["check", "update"])
def test_a_missing_or_malformed_book_list_is_an_input_error(tmp_path, capsys, content, message, command):
    md = write(tmp_path, PROGRAM.replace("acc 0.9300\n", "") + "\n原书是 0.95。\n")
    if content == "folder":
        (tmp_path / "book_figures.txt").mkdir()
    elif content is not None:
        (tmp_path / "book_figures.txt").write_bytes(content)
    run(capsys, "tangle", md)
    before = md.read_bytes()
    code, _, err = run(capsys, command, md)
    assert code == 2
    assert err.startswith(f"{tmp_path}/" + message.format(md=md))
    assert md.read_bytes() == before  # update stops before it runs anything or rewrites the transcript


# ---------------------------------------------------------------- classifier


@pytest.mark.parametrize("old, new, verdict", [
    ("loss 0.1234\nacc [0.50 -0.25]\n", "loss 0.1236\nacc [0.50 0.25]\n",
     "only numbers changed: 2 values, max |Δ| = 0.5000, layout identical"),
    ("loss  0.0000\n", "loss -0.0001\n", "only numbers changed: 1 value, max |Δ| = 0.0001"),
    ("loss 0.1234\n", "cost 0.1234\n", "text/layout changed"),
    ("step 100 loss 0.1\n", "step 200 loss 0.1\n", "text/layout changed"),
    ("loss 0.1234\n", "loss 0.123\n", "text/layout changed"),
    ("a 0.1\n", "a 0.1\nb 0.2\n", "text/layout changed"),
    ("acc 0.9300\n", "acc 0.9302\n", "only numbers changed: 1 value, max |Δ| = 0.0002, layout identical — looks "
     "like floating-point drift"),
    ("acc 0.93\n", "acc 0.10\n", "only numbers changed: 1 value, max |Δ| = 0.83, layout identical — a number "
     "moved by 83 units in its last printed digit, more than rounding differences between platforms give: the "
     "results changed (not floating-point drift)"),
])
def test_classify_change(old, new, verdict):
    assert literate.transcripts.classify_change(old, new).startswith(verdict)


# ---------------------------------------------------------------- robustness

INFOS = ["python {file=generated/attention.py}", "python {file=generated/b.py}", "python {#训练 循环}",
         "python {#a}", "text {transcript}", "text {transcript=generated/b.py}", "python", "text", "",
         "python {file=../x.py}", "python {#a file=x.py}", "{#a}", "python {", "python {}", "py {transcript}"]
CODE = ["print(1)", "print('0.93')", "<<训练 循环>>", "    <<a>>", "<<b>>", "", "  ", "x = 1", "```", "~~~~"]
PROSE_LINES = ["原书 0.93。", "准确率 0.9300", "| 原书 | 本仓库 |", "|---|---|", "| 0.5 | 0.25 |", "<!--", "-->",
               "## 六、结果", "`0.123`", "[0.1](http://x/0.2)", "<!-- 数字出自 generated/attention.py -->",
               "句子<!-- 数字出自 x.py -->0.5。", "<!-- 数字出自 -->"]

fence = st.builds(
    lambda marker, info, lines, closed, prefix: "\n".join(
        prefix + line for line in [marker + info, *lines, *([marker] if closed else [])]),
    st.sampled_from(["```", "~~~", "````"]), st.sampled_from(INFOS) | st.text(max_size=12),
    st.lists(st.sampled_from(CODE) | st.text(max_size=8), max_size=4),
    st.integers(0, 9).map(lambda n: n > 0), st.sampled_from(["", "", "", "- ", "> ", "  "]))
prose = st.sampled_from(PROSE_LINES) | st.text(max_size=12)
ROOT = "```python {file=generated/attention.py}\nprint(1)\n```"
markdownish = st.builds(
    lambda bom, root, blocks, newline: ("\ufeff" if bom else "") + newline.join(root + blocks).replace("\n", newline),
    st.booleans(), st.sampled_from([[], [ROOT]]), st.lists(fence | prose, max_size=8),
    st.sampled_from(["\n", "\r\n", "\r"]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdownish)
def test_no_markdown_makes_tangle_raise_and_a_clean_tangle_is_idempotent(text):
    with tempfile.TemporaryDirectory() as folder:
        md = Path(folder) / "attention.md"
        md.write_bytes(text.encode("utf-8", "surrogatepass"))
        code = tangle.main(["tangle", str(md)])
        assert code in (0, 2)
        if code == 0:
            assert tangle.main(["tangle", str(md)]) == 0
            assert literate.commands.sync_problems(literate.markdown.load(md, "attention.md")) == []
            said = io.StringIO()
            with contextlib.redirect_stderr(said):  # check may find the transcript wrong, not the files stale
                assert tangle.main(["check", str(md), "--timeout", "10"]) in (0, 1, 2)
            assert "out of date" not in said.getvalue() and "Traceback" not in said.getvalue()


# ---------------------------------------------------------------- captions

CAPTIONED = """\
# 注意力

<a name="file-generated/attention.py"></a>**〈generated/attention.py〉**，由这些代码块依次拼成：[〈打印 结果〉](#chunk-打印_结果)、[〈收尾〉](#chunk-收尾)
```python {file=generated/attention.py}
<<打印 结果>>
<<收尾>>
```

<a name="chunk-打印_结果"></a>**〈打印 结果〉**
```python {#打印 结果}
print("acc 0.9300")
```

<a name="chunk-收尾"></a>**〈收尾〉**

```python {#收尾}
print("done")
```

<a name="output-generated/attention.py"></a>**〈generated/attention.py〉的实跑输出**
```text {transcript}
acc 0.9300
done
```

见 [〈打印 结果〉](#chunk-打印_结果) 和 [实跑输出](#output-generated/attention.py)。
"""


def test_a_captioned_lesson_tangles_checks_and_records_its_captions(tmp_path, capsys):
    md = write(tmp_path, CAPTIONED)
    assert run(capsys, "tangle", md)[0] == 0
    code, out, err = run(capsys, "check", md)
    assert (code, err) == (0, "")
    assert out.startswith("checked 0 prose numbers")          # a caption is a name, not a claim
    doc = literate.markdown.load(md, str(md))
    assert {line: caption.anchor for line, caption in doc.captions.items()} == {
        4: "file-generated/attention.py", 10: "chunk-打印_结果", 16: "chunk-收尾", 21: "output-generated/attention.py"}
    assert doc.captions[4].links == ("chunk-打印_结果", "chunk-收尾") and doc.captions[10].title == "〈打印 结果〉"


CAPTION_ERRORS = {
    "missing caption": (
        ("<a name=\"chunk-收尾\"></a>**〈收尾〉**\n\n```python {#收尾}", "```python {#收尾}"),
        "attention.md:14: error: {#收尾} has no caption (the other fences of attention.md have one); put this "
        "line just above the fence: <a name=\"chunk-收尾\"></a>**〈收尾〉**"),
    "renamed chunk, stale caption": (
        (("{#收尾}", "{#结束}"), ("<<收尾>>", "<<结束>>")), None),
    "link list out of order": (
        ("[〈打印 结果〉](#chunk-打印_结果)、[〈收尾〉](#chunk-收尾)", "[〈收尾〉](#chunk-收尾)、[〈打印 结果〉](#chunk-打印_结果)"),
        "attention.md:3: error: the caption of {file=generated/attention.py} links #chunk-收尾、#chunk-打印_结果, but "
        "the fence includes 〈打印 结果〉、〈收尾〉, in this order; write: <a name=\"file-generated/attention.py\"></a>"
        "**〈generated/attention.py〉**，由这些代码块依次拼成：[〈打印 结果〉](#chunk-打印_结果)、[〈收尾〉](#chunk-收尾)"),
    "link list missing a chunk": (
        ("、[〈收尾〉](#chunk-收尾)", ""),
        "attention.md:3: error: the caption of {file=generated/attention.py} links #chunk-打印_结果, but the fence "
        "includes 〈打印 结果〉、〈收尾〉, in this order"),
    "caption above no fence": (
        ("\n```python {#收尾}", "\n一段话。\n\n```python {#收尾}"),
        "attention.md:14: error: caption <a name=\"chunk-收尾\"> stands above no code fence"),
    "caption name not bold": (
        ("**〈收尾〉**", "〈收尾〉"),
        "attention.md:14: error: the caption says <a name=\"chunk-收尾\"> and no **bold** name (a ** right after 〉 "
        "ends the bold only before a blank or punctuation: write **〈…〉** alone, or follow it with ，), but the fence "
        "below it is {#收尾}"),
    "bold that Markdown does not close": (
        ("**〈收尾〉**", "**〈收尾〉**之后"),
        "attention.md:14: error: the caption says <a name=\"chunk-收尾\"> and no **bold** name"),
    "transcript caption without its part": (
        ("```text {transcript}", "```text {transcript part=1}"),
        "attention.md:20: error: the caption says <a name=\"output-generated/attention.py\"> and "
        "**〈generated/attention.py〉的实跑输出**, but the fence below it is {transcript=generated/attention.py part=1}"),
    "a link that leads nowhere": (
        ("](#chunk-打印_结果) 和", "](#chunk-打印结果) 和"),
        "attention.md:26: error: the link to #chunk-打印结果 leads nowhere: no caption has <a name=\"chunk-打印结果\">; "
        "did you mean #chunk-打印_结果?"),
}


@pytest.mark.parametrize("edits, message", CAPTION_ERRORS.values(), ids=CAPTION_ERRORS.keys())
def test_captions_that_do_not_name_their_fence_are_input_errors(tmp_path, capsys, edits, message):
    text = CAPTIONED
    for old, new in [edits] if isinstance(edits[0], str) else edits:
        assert old in text
        text = text.replace(old, new)
    md = write(tmp_path, text)
    code, out, err = run(capsys, "tangle", md)
    assert code == 2 and not (tmp_path / "generated").exists()
    if message:
        assert message in err
    else:  # the renamed chunk: the caption still names the old one
        assert ("attention.md:14: error: the caption says <a name=\"chunk-收尾\"> and **〈收尾〉**, but the fence "
                "below it is {#结束} (renamed it? rename the caption too); write: <a name=\"chunk-结束\"></a>**〈结束〉**"
                in err)
        assert "attention.md:3: error: the caption of {file=generated/attention.py} links" in err


def test_a_lesson_without_captions_needs_none_and_links_to_chunks_are_not_checked(tmp_path, capsys):
    md = write(tmp_path, PROGRAM + "\n见 [训练](#chunk-别处)。\n")
    assert run(capsys, "tangle", md)[0] == 0
    assert literate.markdown.load(md, str(md)).captions == {}


def test_a_repeated_chunk_takes_a_continued_caption_with_its_own_anchor(tmp_path, capsys):
    text = CAPTIONED.replace("<a name=\"output-", "<a name=\"chunk-收尾-2\"></a>**〈收尾〉（续）**\n"
                             "```python {#收尾}\nprint(\"more\")\n```\n\n<a name=\"output-")
    text = text.replace("acc 0.9300\ndone\n```", "acc 0.9300\ndone\nmore\n```")
    md = write(tmp_path, text)
    assert run(capsys, "tangle", md)[0] == 0
    assert run(capsys, "check", md)[0] == 0


# ---------------------------------------------------------------- math


def test_math_fences_and_backtick_math_are_neither_code_nor_prose_numbers(tmp_path, capsys):
    md = write(tmp_path, PROGRAM + """
```math
\\alpha = \\mathrm{softmax}\\!\\left(\\frac{K q}{\\sqrt{d}}\\right) \\cdot 0.1234
```

行内公式 $`\\sqrt{512} \\approx 22.627`$ 里的数字不用核对，正文 0.9300 仍然核对。
""")
    doc = literate.markdown.load(md, str(md))
    assert [number.text for number in literate.prose.prose_numbers(doc)] == ["0.9300"]
    assert run(capsys, "tangle", md)[:3:2] == (0, "")
    code, out, err = run(capsys, "check", md)
    assert (code, err) == (0, "") and out.startswith("checked 1 prose number")


def test_dollar_math_that_github_would_mangle_is_warned_about(tmp_path, capsys):
    md = write(tmp_path, PROGRAM + "\n$$\\alpha = \\frac{1}{2}$$\n\n编码器 $h_t = \\tanh(x)$，价格 $5 和 $6 不是公式。\n\n"
               "求和 $a_i + b_i$ 也是公式：页面排它，这里就警告它。\n")
    code, _, err = run(capsys, "tangle", md)
    assert code == 0
    dollars = ("a formula in $...$: Markdown escapes mangle it on GitHub; write it as $`...`$ (a code span "
               "between the dollars)")
    assert err.splitlines() == [
        f"{md}:15: warning: a formula in $$...$$: Markdown escapes mangle it on GitHub; write it as a "
        "```math fence",
        f"{md}:17: warning: {dollars}", f"{md}:19: warning: {dollars}"]


def test_the_check_warns_about_exactly_the_formulas_the_page_typesets(tmp_path):
    """One rule (literate/formulas.py): what the page turns into MathML from dollars is what the check warns about."""
    pytest.importorskip("latex2mathml")
    from literate.page.page import weave
    lines = ["$a_i + b_i$", "价格 $5 和 $6", "$x^2$ 和 `$y$`", "$`z`$ 是 GitHub 的写法", "$$\\sum x$$ 在行里", "$ a$ 和 $b $"]
    md = write(tmp_path, PROGRAM + "\n" + "\n\n".join(lines) + "\n")
    doc = literate.markdown.load(md, str(md))
    page, _, _ = weave(doc)
    warned = [int(warning.split(": warning")[0].rsplit(":", 1)[1]) for warning in doc.warnings]
    assert warned == [15, 19, 23]  # lines[0], [2] and [4]: the dollars the page typesets, and no others
    assert page.count("<math") == 4  # the three above and GitHub's $`z`$, which reaches GitHub's renderer untouched


# ---------------------------------------------------------------- transcripts in parts

PARTS = """\
# 注意力

```python {file=generated/attention.py}
print("一、开始")
print("acc 0.9300")
print()
print("二、对比")
print("loss 0.25")
print()
print("三、收尾")
print("done")
```

第一段在这里，准确率 0.9300。

```text {transcript part=1}
一、开始
acc 0.9300

```

## 第二节

损失 0.25。

```text {transcript part=2}
二、对比
loss 0.25

```

```text {transcript part=3}
三、收尾
done
```
"""


def test_a_transcript_in_parts_is_checked_as_their_concatenation(tmp_path, capsys):
    md = write(tmp_path, PARTS)
    run(capsys, "tangle", md)
    code, out, err = run(capsys, "check", md)
    assert (code, err) == (0, "")
    assert out == "checked 2 prose numbers; transcript matches\n"  # it quotes no book: says nothing of one
    transcript = literate.markdown.load(md, str(md)).transcripts["generated/attention.py"]
    assert transcript.content == "一、开始\nacc 0.9300\n\n二、对比\nloss 0.25\n\n三、收尾\ndone\n"
    assert [(part.part, part.fence_line) for part in transcript.parts] == [(1, 16), (2, 26), (3, 32)]
    assert [transcript.md_line(i) for i in (0, 2, 3, 7, 8)] == [17, 19, 27, 34, 35]


def test_a_change_in_one_part_is_reported_at_that_parts_lines(tmp_path, capsys):
    md = write(tmp_path, PARTS.replace('print("loss 0.25")', 'print("loss 0.26")'))
    run(capsys, "tangle", md)
    code, out, err = run(capsys, "check", md)
    assert code == 1
    assert err.splitlines()[0] == (f"{md}:27: error: the output of {tmp_path}/generated/attention.py differs from "
                                   "part 2 of its transcript; if the new output is right, record it: python "
                                   f"tangle.py update {md} --only generated/attention.py")
    assert "part 1" not in err and "part 3" not in err
    assert out.splitlines()[:7] == [
        "only numbers changed: 1 value, max |Δ| = 0.01, layout identical — a number printed with 2 digits changed, "
        "too few (under 4) for a rounding difference between platforms to show in it: the results changed (not "
        "floating-point drift)",
        f"--- {md} (transcript, lines 27-29)",
        "+++ actual output, part 2",
        "@@ -27,3 +27,3 @@",
        " 二、对比",
        "-loss 0.25",
        "+loss 0.26",
    ]


def test_output_that_cannot_be_cut_into_the_parts_is_diffed_whole_from_the_part_it_differs_in(tmp_path, capsys):
    md = write(tmp_path, PARTS.replace('print("三、收尾")', 'print("三、结束")'))
    run(capsys, "tangle", md)
    code, out, err = run(capsys, "check", md)
    assert code == 1
    assert err.startswith(f"{md}:33: error: the output of {tmp_path}/generated/attention.py differs from its "
                          "transcript, and cannot be cut into its 3 parts (part 3 began with «三、收尾»; the output "
                          "no longer prints it)")
    assert f"--- {md} (transcript, 3 parts: lines 17-19, lines 27-29, lines 33-34)" in out
    assert "\n-三、收尾\n+三、结束\n" in out


def test_update_rewrites_each_part_in_place(tmp_path, capsys):
    md = write(tmp_path, PARTS)
    run(capsys, "tangle", md)
    program = PARTS.replace('print("acc 0.9300")', 'print("acc 0.9300")\nprint("more")').replace(
        'print("done")', 'print("done!")')
    md.write_text(program)
    run(capsys, "tangle", md)
    code, out, err = run(capsys, "update", md)
    assert (code, err) == (0, "")
    assert md.read_text() == program.replace("acc 0.9300\n\n```", "acc 0.9300\nmore\n\n```").replace(
        "done\n```", "done!\n```")
    assert "+++ new output, part 1" in out and "+++ new output, part 3" in out and "part 2" not in out
    assert run(capsys, "check", md)[0] == 0


@pytest.mark.parametrize("change, why", [
    (('print("二、对比")', 'print("二、比较")'), "part 2 began with «二、对比»; the output no longer prints it"),
    (('print("done")', 'print("done")\nprint("二、对比")'),
     "part 2 began with «二、对比»; the output prints it 2 times (output lines 4, 9)"),
    (('print("一、开始")', 'print("三、收尾")\nprint("一、开始")'),
     "part 3 began with «三、收尾»; the output prints it 2 times (output lines 1, 8)"),
])
def test_update_refuses_output_it_cannot_cut_into_the_parts(tmp_path, capsys, change, why):
    md = write(tmp_path, PARTS)
    run(capsys, "tangle", md)
    md.write_text(PARTS.replace(*change))
    run(capsys, "tangle", md)
    before = md.read_bytes()
    code, _, err = run(capsys, "update", md)
    assert code == 1 and md.read_bytes() == before
    assert f"error: cannot cut the new output of {tmp_path}/generated/attention.py into the 3 parts of its " \
           f"transcript: {why}; nothing written" in err


def test_update_refuses_parts_whose_first_lines_swapped_order(tmp_path, capsys):
    md = write(tmp_path, PARTS)
    run(capsys, "tangle", md)
    swapped = PARTS.replace('print("二、对比")\nprint("loss 0.25")\nprint()\n', "").replace(
        'print("done")', 'print("done")\nprint("二、对比")\nprint("loss 0.25")')
    md.write_text(swapped)
    run(capsys, "tangle", md)
    code, _, err = run(capsys, "update", md)
    assert code == 1
    assert "part 3 begins with «三、收尾», which the output now prints before the first line of part 2" in err


PART_ERRORS = {
    "two transcripts without parts": (
        (("part=1}", "}"), ("part=2}", "}"), ("part=3}", "}")),
        "attention.md:26: error: second transcript of generated/attention.py (the first is at line 16); to show "
        "its output in several places, number the fences {transcript=generated/attention.py part=1}, part=2, ... "
        "in document order"),
    "parts out of order": (
        (("part=2}", "part=9}"), ("part=3}", "part=2}"), ("part=9}", "part=3}")),
        "attention.md:26: error: transcript of generated/attention.py numbered part=3; it is part 2 of "
        "generated/attention.py in document order: write part=2"),
    "one fence without a number": (
        (("part=3}", "}"),),
        "attention.md:32: error: transcript of generated/attention.py numbered without part=; it is part 3"),
    "part zero": (
        (("part=1}", "part=0}"),),
        "attention.md:16: error: cannot read 'part=0': a part is numbered 1, 2, 3, ... (part=1 on the first)"),
    "part on a code fence": (
        (("{file=generated/attention.py}", "{file=generated/attention.py part=1}"),),
        "attention.md:3: error: part=N numbers the fences of one {transcript}; this fence is no transcript"),
    "a part that begins with a line printed twice": (
        (('print("三、收尾")', 'print("一、开始")'), ("三、收尾\ndone", "一、开始\ndone")),
        "attention.md:32: error: part=3 of generated/attention.py begins with «一、开始», which the output prints 2 "
        "times: update finds where a part begins by its first line"),
    "an empty part": (
        (("三、收尾\ndone\n```", "```"), ("\n\n```\n\n```text {transcript part=3}", "\n三、收尾\ndone\n\n```\n\n```text {transcript part=3}")),
        "attention.md:34: error: part=3 of generated/attention.py is empty"),
}


@pytest.mark.parametrize("edits, message", PART_ERRORS.values(), ids=PART_ERRORS.keys())
def test_badly_numbered_or_unsplittable_parts_are_input_errors(tmp_path, capsys, edits, message):
    text = PARTS
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    md = write(tmp_path, text)
    for command in ("tangle", "check"):
        code, _, err = run(capsys, command, md)
        assert code == 2 and message in err, err


def test_a_section_cites_the_program_whose_part_it_holds(tmp_path, capsys):
    text = PARTS.replace("# 注意力\n", "# 注意力\n\n```python {file=generated/b.py}\nprint('b 0.77')\n```\n\n"
                         "```text {transcript=generated/b.py}\nb 0.77\n```\n")
    text = text.replace("{transcript part=", "{transcript=generated/attention.py part=")
    text = text.replace("损失 0.25。", "损失 0.25；b 是 0.77。")
    md = write(tmp_path, text)
    errors, numbers = literate.proofs.stale_numbers(literate.markdown.load(md, str(md)))
    assert [(number.text, number.program) for number in numbers] == [
        ("0.9300", "generated/b.py"), ("0.25", "generated/attention.py"), ("0.77", "generated/attention.py")]
    assert len(errors) == 2 and "0.9300 is not printed by generated/b.py" in errors[0]


# ---------------------------------------------------------------- progress


def test_progress_shows_the_programs_stderr_as_it_comes_and_keeps_the_transcript_clean(tmp_path, capsys):
    md = write(tmp_path, """\
        ```python {file=generated/attention.py}
        import sys
        print("开始训练", file=sys.stderr, flush=True)
        print("acc 0.9300")
        sys.stderr.write("训练完\\n没有换行")
        ```

        ```text {transcript}
        acc 0.9300
        ```
        """)
    run(capsys, "tangle", md)
    code, out, err = run(capsys, "check", md, "--progress")
    assert code == 0 and out.endswith("transcript matches\n")
    shown = f"{tmp_path}/generated/attention.py: "
    assert err.splitlines() == [shown + "开始训练", shown + "训练完", shown + "没有换行"]
    assert run(capsys, "check", md) == (0, out, "")  # without --progress, stderr stays quiet
    code, out, err = run(capsys, "update", md, "--progress")
    assert code == 0 and err.splitlines() == [shown + "开始训练", shown + "训练完", shown + "没有换行"]


def test_progress_stops_where_a_traceback_begins(tmp_path, capsys):
    md = write(tmp_path, """\
        ```python {file=generated/attention.py}
        import sys
        print("开始训练", file=sys.stderr, flush=True)
        raise SystemExit(1 / 0)
        ```

        ```text {transcript}
        ```
        """)
    run(capsys, "tangle", md)
    code, _, err = run(capsys, "check", md, "--progress")
    assert code == 1
    assert err.count("Traceback (most recent call last)") == 1
    assert err.startswith(f"{tmp_path}/generated/attention.py: 开始训练\nTraceback")


# ---------------------------------------------------------------- what the lesson declares for the tools

MARKED_MAIN = 'def main():\n    # 第 1 段\n    print("acc 0.9300")\n\n\nmain()'


def declared(declarations: str) -> str:
    """The small lesson with a block of declarations for the tools."""
    return PROGRAM + f"\n<!-- literate\n{declarations}\n-->\n"


@pytest.mark.parametrize("declarations, message", [
    ("colour: red", "cannot read the declaration 'colour: red': write key: value, the key one of parts, update"),
    ("parts: main", "cannot read parts: 'main' (once, as FUNCTION MARK)"),
    ("heatmap: 输出 输入", "cannot read heatmap: '输出 输入' (once, as ROWS COLUMNS LEGEND [percent] [anti-diagonal|diagonal])"),
    ("heatmap: 输出 输入 图例 sideways", "cannot read heatmap: '输出 输入 图例 sideways'"),
    ("heatmap: 输出 输入 图例 diagonal anti-diagonal", "cannot read heatmap"),
    ("curves: 横轴 纵轴", "cannot read curves: '横轴 纵轴' (once, as X Y SERIES)"),
    ("figures: ../elsewhere", "cannot read figures: '../elsewhere' (once, as FOLDER)"),
    ("notebook-try: 改〈没有这块〉", "〈没有这块〉 in the notebook's notebook-try names no chunk"),
])
def test_a_declaration_the_tools_cannot_read_is_an_input_error(tmp_path, capsys, declarations, message):
    md = write(tmp_path, declared(declarations))
    code, _, err = run(capsys, "tangle", md)
    assert code == 2 and message in err and err.startswith(f"{md}:"), err


def test_the_declarations_are_read_once_and_for_every_tool(tmp_path, capsys):
    md = write(tmp_path, declared("parts: main # 第 N 段\nupdate: generated/attention.py make it\n# a comment\n"
                                    "heatmap: 行 列 图例").replace('print("acc 0.9300")', MARKED_MAIN))
    found = literate.markdown.load(md, str(md)).declared
    assert (found.parts.function, found.parts.numbered(3)) == ("main", "# 第 3 段")
    assert found.parts.mark.match("    # 第 12 段：说明")[1] == "12"
    assert found.update == {"generated/attention.py": "make it"}
    assert (found.heatmap.rows, found.heatmap.columns, found.heatmap.legend) == ("行", "列", "图例")
    write(tmp_path, declared("heatmap: 行 列 图例") + "\n<!-- literate\n-->\n")
    code, _, err = run(capsys, "tangle", md)
    assert code == 2 and "a second <!-- literate block" in err


def test_a_playground_is_shown_not_tangled_and_names_its_program(tmp_path, capsys):
    md = write(tmp_path, PROGRAM + "\n```python {playground=generated/attention.py}\nprint(2)\n```\n")
    assert run(capsys, "tangle", md)[0] == 0
    assert "print(2)" not in (tmp_path / "generated" / "attention.py").read_text()
    [found] = literate.markdown.load(md, str(md)).playgrounds.values()
    assert (found.program, found.lines, found.language) == ("generated/attention.py", ["print(2)"], "python")
    write(tmp_path, PROGRAM + "\n```python {playground=generated/other.py}\nprint(2)\n```\n")
    code, _, err = run(capsys, "tangle", md)
    assert code == 2 and "{playground=generated/other.py} names no program" in err


# ---------------------------------------------------------------- files no root writes any more

TWO_FILES = """\
# L

The helper prints 0.75.

```python {file=generated/main.py}
import helper
helper.show()
```

```python {file=generated/helper.py}
def show():
    print("v 0.75")
```

```text {transcript=generated/main.py}
v 0.75
```
"""


@pytest.mark.parametrize("edit", ["deleted", "renamed"])
def test_a_generated_file_that_no_root_writes_any_more_fails_the_check_with_the_command_that_removes_it(
        tmp_path, capsys, monkeypatch, edit):
    """The program still imports generated/helper.py, which the lesson no longer holds: check and update fail
    (exit 1), tangle warns, and the message says how to remove it; nothing is deleted for the author."""
    md = write(tmp_path, TWO_FILES, "lesson.md")
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "tangle", "lesson.md")[0] == 0
    assert run(capsys, "check", "lesson.md")[0] == 0
    if edit == "deleted":
        md.write_text(TWO_FILES.replace('```python {file=generated/helper.py}\ndef show():\n    print("v 0.75")\n```\n\n', ""))
    else:
        md.write_text(TWO_FILES.replace("import helper\nhelper.show()", "import helper2\nhelper2.show()")
                      .replace("generated/helper.py", "generated/helper2.py"))
    code, _, err = run(capsys, "tangle", "lesson.md")
    message = ("generated/helper.py: {}: tangle.py wrote it from lesson.md, but no root of lesson.md writes it any "
               "more (a fence deleted, or its file= renamed?), and a program may still import it; delete it: "
               "rm generated/helper.py")
    assert code == 0 and err == message.format("warning") + "\n"
    for command in ("check", "update"):
        code, _, err = run(capsys, command, "lesson.md")
        assert code == 1 and message.format("error") in err
    assert (tmp_path / "generated" / "helper.py").exists()
    (tmp_path / "generated" / "helper.py").unlink()
    code, _, err = run(capsys, "check", "lesson.md")  # what the lesson now says, run: the import fails
    assert (code, "No module named 'helper'" in err) == ((1, True) if edit == "deleted" else (0, False))


def test_a_file_beside_the_generated_ones_that_tangle_did_not_write_is_left_alone(tmp_path, capsys):
    md = write(tmp_path, TWO_FILES, "lesson.md")
    assert run(capsys, "tangle", md)[0] == 0
    (tmp_path / "generated" / "notes.py").write_text("# my own\n")
    (tmp_path / "generated" / "other.py").write_text(
        "# Generated from other.md by tangle.py — edit other.md and run make tangle, or edit here and run make stitch.\n")
    assert run(capsys, "check", md)[0:3:2] == (0, "")
