"""Tests of literate/console.py and of the run environment's one home (literate/runner.py)."""

import argparse
import importlib.util
import sys
from pathlib import Path

from literate import console, runner


def test_parsed_gives_the_arguments_or_the_exit_status():
    parser = argparse.ArgumentParser(prog="t")
    parser.add_argument("n", type=int)
    assert console.parsed(parser, ["3"]).n == 3
    assert console.parsed(parser, ["x"]) == 2
    assert console.parsed(parser, ["--help"]) == 0


def test_guarded_ends_an_interrupt_with_one_line(capsys):
    def stopped():
        raise KeyboardInterrupt
    assert console.guarded("t.py", stopped, "nothing written") == 130
    assert capsys.readouterr().err == "t.py: interrupted (SIGINT); nothing written\n"


def test_the_portability_harness_runs_programs_in_the_environment_check_runs_them_in():
    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("portability_env", root / "tools" / "portability.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["portability_env"] = module
    spec.loader.exec_module(module)               # puts tools/ on the path: the harness is importable
    from harness import runs
    assert {k: v for k, v in runs.controlled_env({}).items() if k in runner.RUN_ENV} == runner.RUN_ENV
