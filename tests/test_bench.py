"""Fast tests of bench/bench.py and its measure/ package: the counters, the skip path of the
torch reference, the run environment and a smoke run of the report with a few rounds. Timings
are printed, never asserted."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench", ROOT / "bench" / "bench.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)  # puts bench/ on sys.path: its measure/ package is importable
from measure import clock, floor, phases, pytorch, report, subjects, whole  # noqa: E402


@pytest.fixture(scope="module")
def lesson():
    return phases.load_lesson()[0]


def tiny_module():
    module = types.ModuleType("tiny")
    exec(textwrap.dedent("""
        import numpy as np
        TABLE = np.arange(4.0)

        def mm(a, b):
            return a @ b

        def right_multiplier(W, batch):              # W (M, K, N); xT (K, M·batch), model by model
            return lambda xT: np.concatenate([(x.T @ Wm).T for x, Wm in zip(np.split(xT, len(W), axis=1), W)],
                                             axis=1)

        def f():
            x = np.linspace(0.0, 1.0, 5)                 # function
            y = np.exp(x) + x * 2                        # 3 ufuncs
            picked = TABLE[y.astype(np.intp) % 4]        # method, ufunc, method (indexing)
            return picked, y.T, y.sum(), np.concatenate([x, y]), np.float64(y.size)
    """), module.__dict__)
    return module


def test_counts_each_entry_into_numpy_once():
    module = tiny_module()
    floor.COUNTER.__init__()
    with floor.instrumented(module):
        picked, transposed, total, both, size = module.f()
    # .sum() runs add.reduce inside it: one call, not two. np.float64 is a type: not counted.
    assert floor.COUNTER.calls == {"ufunc": 4, "function": 2, "method": 4}
    expected_y = np.exp(np.linspace(0.0, 1.0, 5)) + np.linspace(0.0, 1.0, 5) * 2
    assert np.array_equal(transposed, expected_y) and total == expected_y.sum()
    assert size == 5.0 and len(both) == 10 and picked.shape == (5,)
    assert module.np is np and type(module.TABLE) is np.ndarray   # all put back


def test_product_elements_are_batch_times_m_k_n():
    assert floor.product_elements(np.ones((2, 3, 4)), np.ones((4, 5))) == 2 * 3 * 4 * 5
    assert floor.product_elements(np.ones((2, 1, 3, 4)), np.ones((5, 4, 6))) == 10 * 3 * 4 * 6


def test_both_product_functions_count_their_elements():
    module = tiny_module()
    floor.COUNTER.__init__()
    with floor.instrumented(module):
        module.mm(np.ones((3, 4)), np.ones((4, 5)))
        times_W = module.right_multiplier(np.ones((2, 4, 5)), 7)    # two models, a batch of 7 each
        times_W(np.ones((4, 2 * 7)))
        times_W(np.ones((4, 2 * 7)))
    assert floor.COUNTER.product_elements == 3 * 4 * 5 + 2 * (2 * 4 * 5 * 7)


def test_instrumented_training_gives_the_same_bits(lesson):
    test = lesson.make_test_set(5)
    (plain,) = lesson.train(lesson.Setting(), test, 3)
    with floor.instrumented(lesson):
        (counted,) = lesson.train(lesson.Setting(), test, 3)
    assert all(np.array_equal(plain[name], counted[name]) for name in plain)
    assert lesson.np is np


def test_counts_per_round(lesson):
    one = floor.count_per_round(lesson, 5, True, rounds=1)
    two = floor.count_per_round(lesson, 5, True, rounds=2)
    assert one["elements"] == two["elements"] > 0      # the shapes do not depend on the data
    assert all(one[kind] > 0 for kind in floor.CALL_KINDS)


def test_a_cuda_build_is_refused(monkeypatch):
    report = {"install": [{"metadata": {"name": "torch"}},
                          {"metadata": {"name": "nvidia-cublas-cu12"}}]}
    monkeypatch.setattr(pytorch, "run_quietly", lambda command: json.dumps(report))
    with pytest.raises(pytorch.TorchUnavailable, match="CUDA build"):
        pytorch.refuse_cuda_build("python")


def test_torch_unavailable_prints_a_skip_line(monkeypatch, capsys):
    def unavailable():
        raise pytorch.TorchUnavailable("no wheel for this Python")
    monkeypatch.setattr(pytorch, "ensure_torch", unavailable)
    assert pytorch.torch_or_skip(bench.parse_args([])) is None
    assert "PyTorch reference: skipped — no wheel for this Python" in capsys.readouterr().out


def test_whole_program_runs_in_each_variant(tmp_path, monkeypatch, capsys):
    program, plain, torch = tmp_path / "program.py", tmp_path / "plain.py", tmp_path / "torch.py"
    trainings = tmp_path / "trainings.py"
    program.write_text("import os\nprint(sorted(k for k in os.environ if k.startswith('MALLOC_')))\n")
    trainings.write_text("import sys\nprint(sys.argv[1:], sys.executable == %r)\n" % sys.executable)
    plain.write_text("import os, sys\nprint(os.environ['OPENBLAS_NUM_THREADS'], os.environ['PYTHONHASHSEED'],"
                     " sys.flags.dont_write_bytecode, sys.flags.no_user_site, sys.flags.optimize,"
                     " 'PYTHONPYCACHEPREFIX' in os.environ)\n")
    torch.write_text("import sys\nprint(sys.argv[1:])\n")
    monkeypatch.setattr(subjects, "PROGRAM", str(program))
    monkeypatch.setattr(subjects, "PLAIN_SCRIPT", str(plain))
    monkeypatch.setattr(subjects, "TORCH_SCRIPT", str(torch))
    monkeypatch.setattr(subjects, "TRAININGS_SCRIPT", str(trainings))
    monkeypatch.setenv("MALLOC_TOP_PAD_", "1")                 # the program must not get help
    monkeypatch.setenv("PYTHONOPTIMIZE", "1")                  # nor any PYTHON* of the caller's
    variants = whole.whole_program_variants(sys.executable, threads=1)
    assert list(variants) == [whole.OURS, whole.PLAIN, whole.TRAININGS, whole.TORCH]
    results = whole.time_whole_program(2, variants)
    assert all(len(runs) == 2 and runs[0].timing.wall > 0 for runs in results.values())
    assert [runs[0].stdout for runs in results.values()] == \
        ["[]\n", "1 0 1 1 0 False\n", "[] True\n", "['--threads', '1']\n"]   # check's environment and options
    report.print_whole_program(results)
    out = capsys.readouterr().out
    assert "no MALLOC_* variable set" in out and "load at start" in out
    assert "ours / plain numpy:" in out and "target: cpu at most 2.0×" in out
    assert "PyTorch / ours, the same four trainings, whole processes" in out
    assert list(whole.whole_program_variants()) == [whole.OURS, whole.PLAIN]   # no torch


def test_plain_numpy_lesson_swaps_every_exact_function(monkeypatch):
    # load_plain_lesson registers the plain lesson as sys.modules["attention"]; afterwards the
    # real one (which the experiments' process pools pickle functions by) must be back.
    monkeypatch.delitem(sys.modules, "attention", raising=False)
    spec = importlib.util.spec_from_file_location("plain_numpy", ROOT / "bench" / "plain_numpy.py")
    plain_numpy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain_numpy)
    lesson = plain_numpy.load_plain_lesson()
    assert sys.modules["attention"] is lesson
    assert (lesson.mm, lesson.exp, lesson.tanh) == (np.matmul, np.exp, np.tanh)
    W, xT = np.random.RandomState(0).randn(1, 16, 6), np.random.RandomState(1).randn(16, 32)   # one model: (1, K, N)
    np.testing.assert_allclose(lesson.right_multiplier(W, 32)(xT), (xT.T @ W[0]).T, rtol=1e-14)
    (model,) = lesson.train(lesson.Setting(), lesson.make_test_set(5), 2)  # runs end to end
    assert lesson.count_params(model) == 934


def test_a_failing_program_is_an_error(tmp_path, monkeypatch):
    program = tmp_path / "program.py"
    program.write_text("raise SystemExit('broken')\n")
    monkeypatch.setattr(subjects, "PROGRAM", str(program))
    with pytest.raises(clock.MeasuredProgramFailed, match="broken"):
        whole.time_whole_program(1, whole.whole_program_variants())


def test_report_smoke(capsys):
    assert bench.main(["--runs", "0", "--fraction", "0.001", "--no-torch"]) == 0
    out = capsys.readouterr().out
    for line in ("2. phases", "train length 10, attention", "3. the floor", "measured/floor",
                 "PyTorch reference: skipped (--no-torch)", "at end: load average"):
        assert line in out


@pytest.mark.parametrize("argv", [["--runs", "-1"], ["--fraction", "0"], ["--fraction", "2"]])
def test_bad_usage_exits_2(argv):
    with pytest.raises(SystemExit) as exit_:
        bench.parse_args(argv)
    assert exit_.value.code == 2


@pytest.mark.skipif(not os.path.exists(pytorch.venv_python()),
                    reason="no .cache/bench-venv: make bench installs torch on first use")
def test_torch_reference_runs():
    done = subprocess.run([pytorch.venv_python(), subjects.TORCH_SCRIPT, "--fraction", "0.001"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [(m["length"], m["attention"], m["rounds"], m["query"], m["lr"]) for m in report["models"]] == \
        [(5, False, 2, "after", 0.003), (5, True, 2, "after", 0.003), (10, True, 3, "after", 0.003),
         (10, True, 3, "before", 0.02)]
    assert [m["params"] for m in report["models"]] == [838, 934, 934, 934]    # the lesson's counts
    assert all(m["train_cpu_s"] > 0 for m in report["models"])


def test_run_timed_counts_the_cpu_of_children():
    child = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'sum(range(10**7))'])"
    done, timing = clock.run_timed([sys.executable, "-c", child], subprocess.DEVNULL)
    assert done.returncode == 0 and timing.cpu > 0.1 and timing.wall > 0


def fake_run(train_cpu, train_wall):
    """A section-1 run of torch_reference.py or our_trainings.py: its JSON report, four models."""
    models = [{"train_s": train_wall / 4, "train_cpu_s": train_cpu / 4, "train_sys_s": 0.0, "train_faults": 0}] * 4
    return whole.Run(clock.Timing(1.0, 1.0, 0.0, 0), 0.5, json.dumps({"models": models}))


def test_the_torch_ratio_is_taken_pair_by_pair():
    # Turn by turn, PyTorch took 3, 4 and 10 CPU seconds against our 1, 4 and 5: ratios 3, 1 and 2, median 2.
    # The ratio of the medians would be 4 / 4 = 1; mismatched pairs would give other medians again.
    torch = [fake_run(3.0, 6.0), fake_run(4.0, 4.0), fake_run(10.0, 10.0)]
    ours = [fake_run(1.0, 2.0), fake_run(4.0, 4.0), fake_run(5.0, 5.0)]
    assert pytorch.paired_ratios(torch, ours) == pytest.approx((2.0, 2.0))
    assert pytorch.paired_ratios(torch, ours[::-1]) != pytest.approx((2.0, 2.0))
    summary = pytorch.trainings_summary(ours)
    assert [t.cpu for t in summary["train"]] == pytest.approx([1.0] * 4) and summary["load"] == 0.5   # median 4 s, a quarter each


def test_our_trainings_report_is_torchs_shape():
    done = subprocess.run([sys.executable, subjects.TRAININGS_SCRIPT, "--fraction", "0.001"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    models = json.loads(done.stdout)["models"]
    assert [(m["length"], m["attention"], m["rounds"], m["query"], m["lr"]) for m in models] == \
        [(5, False, 2, "after", 0.003), (5, True, 2, "after", 0.003), (10, True, 3, "after", 0.003),
         (10, True, 3, "before", 0.02)]
    assert [m["params"] for m in models] == [838, 934, 934, 934]
    assert all(m["train_cpu_s"] > 0 and 0 <= m["per_token"] <= 1 for m in models)
    assert [training.cpu for training in pytorch.training_timings({"models": models})] == \
        [m["train_cpu_s"] for m in models]


@pytest.mark.parametrize("fraction", ["0", "-1", "2"])
def test_our_trainings_refuse_a_fraction_outside_0_to_1(fraction):
    done = subprocess.run([sys.executable, subjects.TRAININGS_SCRIPT, "--fraction", fraction],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 2 and "--fraction must be in (0, 1]" in done.stderr and not done.stdout


def test_section_one_divides_turn_by_turn():
    timing = lambda cpu, wall: whole.Run(clock.Timing(wall, cpu, 0.0, 0), 0.5, "")
    ours = [timing(3.0, 6.0), timing(4.0, 4.0), timing(10.0, 10.0)]
    plain = [timing(1.0, 2.0), timing(4.0, 4.0), timing(5.0, 5.0)]
    assert report.turn_by_turn(ours, plain) == pytest.approx((2.0, 2.0))      # ratios 3, 1, 2; not 4 / 4
