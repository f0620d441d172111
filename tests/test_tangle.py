"""Tests of tangle.py: small Markdown files in tmp_path, tangle.main([...]) called directly."""

import os
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tangle

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
    path = folder / name
    path.write_bytes(textwrap.dedent(text).encode())
    return path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = tangle.main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return code, out, err


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
    assert lines[0] == ("# Generated from attention.md by tangle.py — do not edit; "
                        "edit attention.md and run make tangle.")
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
                   "move your change into attention.md, or rerun with --force to overwrite\n")
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
    "absolute target": (
        "```python {file=/tmp/attention.py}\n```\n",
        "attention.md:1: error: file=/tmp/attention.py is absolute"),
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
    assert err == f"{tmp_path}/generated/attention.py: error: out of date with attention.md; run make tangle\n"
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

Prose quotes 0.25 and 0.50: both transcripts count, whichever programs run.
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
    assert f"{md}:15: error: 0.9300 is not in the transcript (nearest: 0.9320)" in err
    assert "acc 0.9320\n```" in md.read_text()


# ---------------------------------------------------------------- prose numbers

PROSE = {
    "number in the transcript": ("准确率 0.9300。", []),
    "sign is ignored": ("输出是（0.9300, -0.5）。", []),
    "stale number": ("准确率 0.9310。", ["0.9310"]),
    "same digits only": ("准确率 0.93。", ["0.93"]),
    "single digits exempt": ("有 3 个 key 和 0 个 value。", []),
    "units exempt": ("2017 年、第 12 章、16 维、2000 轮、10 位、32 步、12 层、64 头。", []),
    "unit must follow": ("共 2000 个字母。", ["2000"]),
    "book span to the full stop": ("原书说是 0.9900 和 0.99。本章 0.9310。", ["0.9310"]),
    "book span ends at 本仓库": ("原书 0.9900，本仓库 0.9310。", ["0.9310"]),
    "book span ends with the paragraph": ("原书的数字是 0.9900\n下一行 0.95", []),
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
    doc = tangle.load(md, "attention.md")
    errors, _ = tangle.stale_numbers(doc)
    assert [error.split(": error: ")[1].split(" ")[0] for error in errors] == stale
    assert all(error.startswith("attention.md:15: error:") for error in errors)


def test_numbers_outside_the_prose_are_not_checked(tmp_path, capsys):
    md = write(tmp_path, PROGRAM + textwrap.dedent("""
        ## 六、第 0.1234 节标题

        ```text
        0.5555
        ```

        <!-- 0.6666 -->

        <div>0.7777</div>

        1. 列表项 0.9300
        """))
    doc = tangle.load(md, "attention.md")
    assert [number.text for number in tangle.prose_numbers(doc)] == ["0.9300"]


def test_prose_line_numbers_survive_inline_html_and_code_spans(tmp_path):
    md = write(tmp_path, PROGRAM + "\n见 <span\ntitle='x'>注</span>，a`b`0.9310\n末行 0.9320\n")
    errors, _ = tangle.stale_numbers(tangle.load(md, "attention.md"))
    assert [error.split(" is ")[0] for error in errors] == [
        "attention.md:16: error: 0.9310", "attention.md:17: error: 0.9320"]


def test_table_columns_headed_by_the_book_are_exempt(tmp_path):
    md = write(tmp_path, PROGRAM + textwrap.dedent("""
        | 任务 | 原书准确率 | 本仓库实测 |
        |---|---|---|
        | 反转 | 0.9900 | 0.9300 |
        | 复制 | 0.8800 | 0.7700 |
        """))
    doc = tangle.load(md, "attention.md")
    errors, numbers = tangle.stale_numbers(doc)
    assert errors == ["attention.md:18: error: 0.7700 is not in the transcript (nearest: 0.9300)"]
    assert [(n.text, n.book) for n in numbers] == [("0.9900", True), ("0.9300", False),
                                                   ("0.8800", True), ("0.7700", False)]


def test_check_fails_on_a_stale_prose_number(tmp_path, capsys):
    md = write(tmp_path, PROGRAM + "\n第一段。\n\n这次准确率是 0.9310，原书是 0.9900。\n")
    run(capsys, "tangle", md)
    code, out, err = run(capsys, "check", md)
    assert code == 1
    assert err == f"{md}:17: error: 0.9310 is not in the transcript (nearest: 0.9300)\n"
    assert out == "checked 2 prose numbers (1 marked as the book's); 1 not in the transcript\n"


# ---------------------------------------------------------------- classifier


@pytest.mark.parametrize("old, new, verdict", [
    ("loss 0.1234\nacc [0.50 -0.25]\n", "loss 0.1236\nacc [0.50 0.25]\n",
     "only numbers changed: 2 values, max |Δ| = 0.5000, layout identical"),
    ("loss  0.0000\n", "loss -0.0001\n", "only numbers changed: 1 value, max |Δ| = 0.0001"),
    ("loss 0.1234\n", "cost 0.1234\n", "text/layout changed"),
    ("step 100 loss 0.1\n", "step 200 loss 0.1\n", "text/layout changed"),
    ("loss 0.1234\n", "loss 0.123\n", "text/layout changed"),
    ("a 0.1\n", "a 0.1\nb 0.2\n", "text/layout changed"),
])
def test_classify_change(old, new, verdict):
    assert tangle.classify_change(old, new).startswith(verdict)


# ---------------------------------------------------------------- robustness

INFOS = ["python {file=generated/attention.py}", "python {file=generated/b.py}", "python {#训练 循环}",
         "python {#a}", "text {transcript}", "text {transcript=generated/b.py}", "python", "text", "",
         "python {file=../x.py}", "python {#a file=x.py}", "{#a}", "python {", "python {}", "py {transcript}"]
CODE = ["print(1)", "print('0.93')", "<<训练 循环>>", "    <<a>>", "<<b>>", "", "  ", "x = 1", "```", "~~~~"]
PROSE_LINES = ["原书 0.93。", "准确率 0.9300", "| 原书 | 本仓库 |", "|---|---|", "| 0.5 | 0.25 |", "<!--", "-->",
               "## 六、结果", "`0.123`", "[0.1](http://x/0.2)"]

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
            assert tangle.sync_problems(tangle.load(md, "attention.md")) == []
            assert tangle.main(["check", str(md), "--timeout", "10"]) in (0, 1, 2)
