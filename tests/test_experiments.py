"""Tests of the 30-second experiments, generated/experiments.py (tangled from attention.md)."""
import importlib.util
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

GENERATED = Path(__file__).resolve().parent.parent / "generated"


def load_experiments():
    """Import generated/experiments.py as `experiments`, importable by worker processes too."""
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))      # experiments.py does `from attention import *`
    spec = importlib.util.spec_from_file_location("experiments", GENERATED / "experiments.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["experiments"] = module
    spec.loader.exec_module(module)
    return module


E = load_experiments()


def test_unit_variance_samples_have_mean_zero_and_variance_one():
    x = E.unit_variance(np.random.RandomState(0), (200000,))
    assert abs(x.mean()) < 0.01 and abs(E.variance(x) - 1) < 0.01
    assert np.abs(x).max() <= np.sqrt(3.0)


@pytest.mark.parametrize("d", [3, 300])
def test_dot_product_variance_is_d_and_scaling_by_sqrt_d_brings_it_to_one(d):
    """Closed form: q·k of independent unit-variance entries has variance d."""
    rng = np.random.RandomState(1)
    q, K = E.unit_variance(rng, (1000, 1, d)), E.unit_variance(rng, (1000, 10, d))
    raw, _, _, _, _ = E.attention_summary(q, K, 1.0)
    scaled, _, _, _, _ = E.attention_summary(q, K, np.sqrt(d))
    by_d, _, _, _, _ = E.attention_summary(q, K, float(d))
    assert raw == pytest.approx(d, rel=0.05)
    assert scaled == pytest.approx(1.0, rel=0.05)
    assert by_d == pytest.approx(1.0 / d, rel=0.05)


def test_softmax_summary_of_uniform_and_one_hot_scores():
    """Uniform weights: entropy ln T, Jacobian norm from diag(p) - p pᵀ; one-hot: zero gradients."""
    K = np.random.RandomState(2).randn(3, 10, 4)
    q = np.zeros((3, 1, 4))
    _, top, entropy, grad_scores, grad_q = E.attention_summary(q, K, 1.0)
    assert top == pytest.approx(0.1) and entropy == pytest.approx(np.log(10))
    assert grad_scores == pytest.approx(np.linalg.norm(np.diag(np.full(10, 0.1)) - 0.01))
    one_hot_K = np.zeros((1, 10, 4))
    one_hot_K[0, 3, 0] = 1000.0
    _, top, entropy, grad_scores, grad_q = E.attention_summary(np.ones((1, 1, 4)), one_hot_K, 1.0)
    assert top == 1.0 and entropy == pytest.approx(0.0, abs=1e-12) and grad_scores == 0.0 and grad_q == 0.0


def test_log_agrees_with_the_c_library():
    x = np.concatenate([np.logspace(-300, 300, 20001), np.random.RandomState(3).rand(5000) + 0.5])
    assert np.all(np.abs(E.log(x) - np.log(x)) <= 4 * np.spacing(np.abs(np.log(x))) + 1e-300)
    assert E.log(np.array([1.0]))[0] == 0.0


def test_hard_attention_gradient_is_exactly_zero_and_softmax_is_not(capsys):
    E.hard_attention_experiment()
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if line.startswith("第 ") and "个 key" in line]
    assert len(rows) == 4
    for row in rows:
        numbers = row.split()[4:]
        soft, hard = numbers[:3], numbers[3:]
        assert hard == ["+0.0000"] * 3
        assert all(value != "+0.0000" for value in soft)
    assert "硬选择的梯度处处是 0：是" in lines[-1]


def test_the_seed_runner_gives_each_seed_the_result_of_a_single_run():
    variants = [("plain", False, "after"), ("luong", True, "after"), ("bahdanau", True, "before")]
    with ProcessPoolExecutor(max_workers=2) as pool:
        results = E.seed_experiment(pool, 5, 10, variants)
    for name, attention, query in variants:
        assert len(results[name]) == len(E.EXPERIMENT_SEEDS) == 10
        for seeds, result in list(zip(E.EXPERIMENT_SEEDS, results[name]))[:3]:
            single = E.train_and_evaluate(5, 10, attention, seeds, query)
            assert result[:2] == single[:2] and np.array_equal(result[2], single[2])
            if attention:
                assert np.array_equal(result[3], single[3])
            else:
                assert result[3] is None and single[3] is None


def test_diagonal_weight_and_peak_offsets():
    m = np.full((10, 10), 0.05)
    m[np.arange(10), 9 - np.arange(10)] = 0.5          # exact reversal: row r → column 11 − r
    assert E.diagonal_weight(m, 0) == 0.5 and E.diagonal_weight(m, -1) == 0.05
    assert list(E.peak_offsets(m)) == [0] * 10
    shifted = np.roll(m, -1, axis=1)                    # one column to the left
    assert list(E.peak_offsets(shifted))[:9] == [-1] * 9
