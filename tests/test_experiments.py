"""Tests of the 30-second experiments, generated/experiments.py (tangled from attention.md)."""
import importlib.util
import inspect
import multiprocessing
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

GENERATED = Path(__file__).resolve().parent.parent / "generated"


def load_experiments():
    """Import generated/experiments.py as `experiments`, importable by worker processes too."""
    if str(GENERATED) not in sys.path:
        sys.path.insert(0, str(GENERATED))      # experiments.py imports its names from attention
    spec = importlib.util.spec_from_file_location("experiments", GENERATED / "experiments.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["experiments"] = module
    spec.loader.exec_module(module)
    return module


E = load_experiments()
import attention as A                           # noqa: E402  the program experiments.py imports (sys.path above)


def test_unit_variance_samples_have_mean_zero_and_variance_one():
    x = E.unit_variance(np.random.RandomState(0), (200000,))
    assert abs(x.mean()) < 0.01 and abs(E.variance(x) - 1) < 0.01
    assert np.abs(x).max() <= np.sqrt(3.0)


@pytest.mark.parametrize("d", [3, 300])
def test_dot_product_variance_is_d_and_scaling_by_sqrt_d_brings_it_to_one(d):
    """Closed form: q·k of independent unit-variance entries has variance d."""
    rng = np.random.RandomState(1)
    q, K = E.unit_variance(rng, (1000, 1, d)), E.unit_variance(rng, (1000, 10, d))
    raw = E.attention_summary(q, K, 1.0)[0]
    scaled = E.attention_summary(q, K, np.sqrt(d))[0]
    by_d = E.attention_summary(q, K, float(d))[0]
    assert raw == pytest.approx(d, rel=0.05)
    assert scaled == pytest.approx(1.0, rel=0.05)
    assert by_d == pytest.approx(1.0 / d, rel=0.05)


def test_softmax_summary_of_uniform_and_one_hot_scores():
    """Uniform weights: entropy ln T, Jacobian norm from diag(p) - p pᵀ; one-hot: zero gradients."""
    K = np.random.RandomState(2).randn(3, 10, 4)
    q = np.zeros((3, 1, 4))
    _, top, entropy, grad_scores, median_scores, grad_q, median_q = E.attention_summary(q, K, 1.0)
    assert top == pytest.approx(0.1) and entropy == pytest.approx(np.log(10))
    assert grad_scores == pytest.approx(np.linalg.norm(np.diag(np.full(10, 0.1)) - 0.01)) == median_scores
    assert grad_q > 0 and median_q > 0
    one_hot_K = np.zeros((1, 10, 4))
    one_hot_K[0, 3, 0] = 1000.0
    _, top, entropy, grad_scores, median_scores, grad_q, median_q = E.attention_summary(np.ones((1, 1, 4)), one_hot_K, 1.0)
    assert top == 1.0 and entropy == pytest.approx(0.0, abs=1e-12) and grad_scores == 0.0 and grad_q == 0.0
    assert median_scores == 0.0 and median_q == 0.0


def test_the_median_of_a_heavy_tailed_gradient_is_printed_beside_its_mean():
    """Unscaled at d = 300 a few unsaturated queries carry the mean: the median is far below it."""
    rng = np.random.RandomState(4)
    q, K = E.unit_variance(rng, (500, 1, 300)), E.unit_variance(rng, (500, 10, 300))
    _, _, _, mean_scores, median_scores, mean_q, median_q = E.attention_summary(q, K, 1.0)
    assert median_scores < mean_scores / 10 and median_q < mean_q / 10


def test_log_agrees_with_the_c_library():
    x = np.concatenate([np.logspace(-300, 300, 20001), np.random.RandomState(3).rand(5000) + 0.5])
    assert np.all(np.abs(E.log(x) - np.log(x)) <= 4 * np.spacing(np.abs(np.log(x))) + 1e-300)
    assert E.log(np.array([1.0]))[0] == 0.0


def test_hard_attention_gradient_is_exactly_zero_and_softmax_is_not(capsys):
    E.hard_attention_experiment()
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if line.startswith("第 ") and "个键" in line]
    assert len(rows) == 4
    for row in rows:
        numbers = row.split()[3:]
        soft, hard = numbers[:3], numbers[3:]
        assert hard == ["+0.0000"] * 3
        assert all(value != "+0.0000" for value in soft)
    assert "硬选择的梯度全是 0：是" in lines[-1]


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def same_evaluation(a, b):
    """Two Evaluations, bit for bit (the weights may both be None)."""
    return (a.whole == b.whole and a.per_token == b.per_token and same_bits(a.by_position, b.by_position)
            and (a.alpha is None is b.alpha or same_bits(a.alpha, b.alpha)) and same_bits(a.tokens, b.tokens))


def same_swaps(a, b):
    """Two Interventions, bit for bit: every greedy Evaluation, every fed-the-right-letters array, the numbers."""
    return (list(a.greedy) == list(b.greedy) and all(same_evaluation(a.greedy[k], b.greedy[k]) for k in a.greedy)
            and list(a.forced) == list(b.forced) and all(same_bits(a.forced[k], b.forced[k]) for k in a.forced)
            and same_bits(a.follows, b.follows) and same_bits(a.other_change, b.other_change))


def same_run(a, b):
    """Two Runs, bit for bit: the model and its setting, every evaluation, the interventions, the refit, the
    checkpoints measured during training."""
    return (a.setting == b.setting and a.rounds == b.rounds and list(a.model) == list(b.model)
            and all(same_bits(a.model[name], b.model[name]) for name in a.model)
            and same_evaluation(a.own, b.own) and same_bits(a.sample, b.sample) and same_swaps(a.swaps, b.swaps)
            and a.refit == b.refit and sorted(a.course) == sorted(b.course)
            and all(a.course[n][:2] == b.course[n][:2] and same_bits(a.course[n].matrix, b.course[n].matrix)
                    for n in a.course))


def test_the_sweep_gives_each_cell_and_seed_the_result_of_a_single_run():
    """selection_sweep hands out and collects 2 × (2 controls + 2 queries) × 10 trainings through a pool;
    each entry must be what that one training gives on its own (short trainings)."""
    rates = (0.003, 0.02)
    picks = [E.Setting(query=query, lr=lr) for lr in rates for query in ("after", "before")]
    with ProcessPoolExecutor(max_workers=2) as pool:
        sweep = E.selection_sweep(pool, 5, 12, picks)
    assert list(sweep) == list(rates)
    for lr in rates:
        assert sorted(sweep[lr]) == ["after", "before", "none", "uniform"]
        assert all(len(runs) == len(E.EXPERIMENT_SEEDS) == 10 for runs in sweep[lr].values())
        for i in (0, 7):
            seeds = E.EXPERIMENT_SEEDS[i]
            for name, setting in (("none", E.Setting(attention=False, lr=lr)), ("uniform", E.Setting(uniform=True, lr=lr))):
                assert E.Setting(lr=lr, **E.CONTROLS[name]) == setting
                single = E.control_runs(setting, [seeds], 5, 12)[0]
                assert same_evaluation(sweep[lr][name][i], single)
            for query in ("after", "before"):
                single = A.attention_runs(E.Setting(query=query, lr=lr), [seeds], 5, 12, refit=False)[0]
                run = sweep[lr][query][i]
                assert run.setting == E.Setting(query=query, lr=lr) and run.refit is None
                assert run.own.whole == single.own.whole and run.own.per_token == single.own.per_token
                assert run.unpicked[:2] == single.unpicked[:2] and same_bits(run.matrix, single.matrix)
    assert not same_evaluation(sweep[0.003]["none"][0], sweep[0.02]["none"][0])      # the rate reaches the training


def reversal_matrix(height):
    """A 10×10 matrix with height on the anti-diagonal and the rest spread evenly over each row."""
    return np.eye(10)[::-1] * height + (1 - np.eye(10)[::-1]) * (1 - height) / 9


def fed(accuracy, B=100, T=10):
    """Fed-the-right-letters results (B, T): the first rows right at every position, so many that the share is accuracy."""
    return np.broadcast_to((np.arange(B) < round(B * accuracy))[:, None], (B, T))


def fake_run(formed, per_token=1.0, greedy=None, forced=None, follows=0.0, refit=None, course=None,
             setting=A.Setting(lr=0.02), seed=0, refit_forced=None):
    """A Run as the sweep holds it. formed: a sharp reversal that taking the picking away costs 0.6 (accuracy
    0.4 with 1/T weights); otherwise flat, and 1/T weights give 1.0. greedy and forced: per-token accuracies of
    the interventions (greedy["uniform"] overrides the accuracy with 1/T weights). setting and seed: the model's,
    as train gives them."""
    m = reversal_matrix(0.6) if formed else np.full((10, 10), 0.1)
    model = A.Model({}, setting)
    model.seeds = (seed, 100 + seed)
    model.course = course or {}
    greedy = {"uniform": 0.4 if formed else 1.0, **(greedy or {})}
    swaps = A.Interventions({name: A.Evaluation(0.0, v, None, None, None) for name, v in greedy.items()}, follows,
                            {name: fed(v) for name, v in (forced or {}).items()}, 0.1)
    return A.Run(model, 3000, A.Evaluation(1.0, per_token, None, m[None], None), None, swaps, refit, refit_forced)


def test_a_fake_run_reads_as_a_run_does():
    run = fake_run(True, per_token=0.9, greedy={"reversal": 0.95}, forced={"own": 0.8})
    assert run.own.per_token == 0.9 and run.unpicked.per_token == 0.4 and run.swaps.greedy["reversal"].per_token == 0.95
    assert same_bits(run.matrix, reversal_matrix(0.6)) and run.swaps.forced_accuracy("own") == 0.8
    assert list(run.swaps.forced_by_position("own")) == [0.8] * 10 and E.selection(run).formed
    assert not E.selection(fake_run(False)).formed


def test_the_picture_rule_takes_the_first_of_each_kind_in_print_order():
    def cell(lr, after, before):
        return {query: [fake_run(f, setting=A.Setting(query=query, lr=lr), seed=seed) for seed, f in enumerate(flags)]
                for query, flags in (("after", after), ("before", before))}

    n = len(E.EXPERIMENT_SEEDS)
    sweep = {0.003: cell(0.003, [False] * n, [False] * n),
             0.01: cell(0.01, [False] * n, [False, False, True] + [True] * (n - 3)),
             0.02: cell(0.02, [True] * n, [True] * n)}
    formed, not_formed = E.first_of_each_kind(sweep)
    assert formed is sweep[0.01]["before"][2] and formed.setting == A.Setting(query="before", lr=0.01)
    assert formed.model.seeds == (2, 102)
    assert not_formed is sweep[0.003]["after"][0]
    assert E.first_of_each_kind({0.02: cell(0.02, [True] * n, [True] * n)})[1] is None


def test_diagonal_weight_and_peak_offsets():
    m = np.full((10, 10), 0.05)
    m[np.arange(10), 9 - np.arange(10)] = 0.5          # exact reversal: row r → column 11 − r
    assert E.diagonal_multiple(m, 0) == 5.0 and E.diagonal_multiple(m, -1) == 0.5   # 0.5 and 0.05 against 1/10
    assert list(E.peak_offsets(m)) == [0] * 10
    shifted = np.roll(m, -1, axis=1)                    # one column to the left
    assert list(E.peak_offsets(shifted))[:9] == [-1] * 9


def test_the_gap_between_formed_and_not_formed_and_whether_the_thresholds_fall_in_it(capsys):
    n = len(E.EXPERIMENT_SEEDS)
    cell = lambda formed: {"after": [fake_run(formed)] * n, "before": [fake_run(formed)] * n}
    E.print_gap({0.003: cell(False), 0.02: cell(True)})
    out = capsys.readouterr().out.splitlines()
    assert out == ["没形成的 20 个模型：拿掉挑选最多降 0.000，反对角线最高 1.00 倍。",
                   "形成了的 20 个模型：拿掉挑选最少降 0.600，反对角线最低 6.00 倍。",
                   "规则的两个门槛（降 0.10、2 倍）都落在这段空当里：是。"]
    barely = fake_run(True, greedy={"uniform": 0.95})                       # drops only 0.05
    E.print_gap({0.02: {"after": [barely] * n, "before": [fake_run(True)] * n}})   # not formed, yet 6×
    assert capsys.readouterr().out.splitlines()[-1].endswith("：否。")


def test_the_cell_summary_counts_seed_by_seed_wins_of_the_uniform_control(capsys):
    n = len(E.EXPERIMENT_SEEDS)
    runs = [fake_run(False, per_token=0.501 + 0.04 * i) for i in range(n)]  # 0.501 … 0.861
    control = [A.Evaluation(0.0, 0.7, None, None, None)] * n
    E.print_cell_summary(0.003, {"none": control, "uniform": control, "after": runs})
    out = capsys.readouterr().out
    assert "平均对照高的 5 个，学出权重的高的 5 个，一样的 0 个" in out


def test_with_the_before_update_query_row_one_asks_with_the_encoders_last_state():
    """Step 1's before-update query is the encoder's last state itself: row 1 of the weights is
    attend(h_enc[T], H_enc), which experiment six measures before any training."""
    model = E.Model(E.stack([E.init_params(np.random.RandomState(0), True)]), E.Setting(query="before"))
    src = E.make_test_set(10)[:5][None]                 # one model: (1, B, T)
    _, alpha = A.predict(model, src)
    hs_enc = A.encoder(model, src)
    _, expected = A.attend(hs_enc[:, :, -1:], hs_enc)
    assert alpha.shape == (1, 5, 10, 10) and np.array_equal(alpha[:, :, 0], expected[:, :, 0])
    peaks, last = E.first_row_at_start("before")
    assert len(peaks) == len(last) == len(E.EXPERIMENT_SEEDS) and all(1 <= p <= 10 for p in peaks)
    first_row = E.evaluate(E.Model(E.stack([E.init_params(np.random.RandomState(0), True)]), E.Setting(query="before")),
                           E.make_test_set(10)).alpha.mean(axis=0)[0]
    assert peaks[0] == first_row.argmax() + 1 and last[0] == first_row[-1] * 10


@pytest.mark.parametrize("length, attention, query, uniform", [
    (5, False, "after", False), (5, True, "after", True), (10, True, "after", False), (10, True, "before", False)])
def test_stacked_training_gives_each_model_the_bits_of_its_own_training(length, attention, query, uniform):
    """train with three pairs of seeds (the models stacked) against train with one pair at a time:
    every trained parameter and every logged loss bit for bit. Learning rate 0.02 is chaotic (a difference
    of 1e-16 changes accuracies), so any difference would grow."""
    seeds, rounds, test = E.EXPERIMENT_SEEDS[:3], 150, E.make_test_set(length)
    setting = E.Setting(attention=attention, query=query, uniform=uniform, lr=0.02)
    stacked = E.train(setting, test, rounds, seed_list=seeds)
    assert len(stacked) == len(seeds)
    for seed, model in zip(seeds, stacked):
        (single,) = E.train(setting, test, rounds, seed_list=[seed])
        assert model.setting == single.setting == setting
        assert list(model) == list(single)
        assert all(same_bits(model[name], single[name]) for name in single), seed
        assert sorted(model.losses) == sorted(single.losses) == [rounds]
        assert same_bits(model.losses[rounds], single.losses[rounds])
    assert not same_bits(stacked[0]["Wo"], stacked[1]["Wo"])           # the seeds reach the models


def test_the_sweep_equals_one_model_at_a_time_including_checkpoints_and_refits(monkeypatch):
    """selection_sweep (one pool job per five seeds, trained stacked) against each seed trained alone:
    every number of every run, the diagonals measured during training and the readout refit of the
    cells asked for included."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the shortened refit reaches the pool's processes only when they are forked")
    monkeypatch.setattr(E, "CHECKPOINTS", (3, 6))
    monkeypatch.setattr(A, "REFIT_ROUNDS", 6)                    # read in the pool's processes: forked after this
    monkeypatch.setattr(A, "REFIT_CHECKPOINTS", (3, 6))
    picks = [E.Setting(query="after", lr=0.02), E.Setting(query="before", lr=0.02)]
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork")) as pool:
        sweep = E.selection_sweep(pool, 5, 8, picks, refit_settings=(picks[1],))
    assert list(sweep) == [0.02] and list(sweep[0.02]) == ["none", "uniform", "after", "before"]
    for name in ("none", "uniform"):
        alone = [E.control_runs(E.Setting(lr=0.02, **E.CONTROLS[name]), [seeds], 5, 8)[0] for seeds in E.EXPERIMENT_SEEDS]
        assert all(same_evaluation(a, b) for a, b in zip(sweep[0.02][name], alone, strict=True))
    for setting in picks:
        refit = setting is picks[1]
        alone = [A.attention_runs(setting, [seeds], 5, 8, checkpoints=(3, 6), refit=refit)[0] for seeds in E.EXPERIMENT_SEEDS]
        for a, b in zip(sweep[0.02][setting.query], alone, strict=True):
            assert sorted(a.course) == [3, 6] and (sorted(a.refit) == [3, 6] if refit else a.refit is None)
            assert same_run(a, b)


def test_the_swap_groups_split_by_the_rule_and_count_model_by_model(capsys):
    formed = fake_run(True, 1.0, greedy={"reversal": 1.0, "shifted": 0.2, "other": 0.99, "uniform": 0.4}, follows=1.0,
                      forced={"own": 1.0, "reversal": 1.0, "shifted": 0.1, "other": 1.0, "uniform": 0.5})
    flat = fake_run(False, 0.7, greedy={"reversal": 0.9, "shifted": 0.3, "other": 0.7, "uniform": 0.75}, follows=0.5,
                    forced={"own": 0.8, "reversal": 0.8, "shifted": 0.4, "other": 0.9, "uniform": 0.7})
    E.print_swap_groups({0.02: {"after": [formed, flat], "before": [flat, flat]}})
    lines = capsys.readouterr().out.splitlines()
    assert "全部 4 个" in lines[0]
    assert lines[1] == "形成了：1 个。五列依次是：自己、倒序、左移、别条、均匀"
    assert lines[2].split() == ["1.0000", "1.0000", "0.2000", "0.9900", "0.4000", "贪心，平均"]
    assert lines[5].split() == ["1.0000", "1.0000", "0.1000", "1.0000", "0.5000", "喂对，平均"]
    assert "输出正好是被指到的那一列的字母：平均 1.0000，最低 1.0000，最高 1.0000" in lines[8]
    assert lines[13].split() == ["0.7000", "0.9000", "0.3000", "0.7000", "0.7500", "贪心，平均"]
    assert lines[16].split() == ["0.8000", "0.8000", "0.4000", "0.9000", "0.7000", "喂对，平均"]
    assert lines[12] == "没形成：3 个。五列依次是：自己、倒序、左移、别条、均匀"
    assert "平均 0.5000" in lines[19]
    assert lines[20].endswith("倒序 3/0/0，左移 0/3/0，别条 0/0/3，均匀 3/0/0")            # greedy, against its own 0.7
    assert lines[21].endswith("倒序 0/0/3，左移 0/3/0，别条 3/0/0，均匀 0/3/0")            # fed, against its own 0.8
    by_position = lines[lines.index("喂对的字母时，按输出位置的逐位正确（组内平均）："):]
    assert by_position[4].split() == ["0.10"] * 10 + ["形成了，左移"]
    assert by_position[8].split() == ["0.80"] * 10 + ["没形成，倒序"]
    by_cell = lines[lines.index("没形成对齐的模型，换成倒序之后比自己（高/低/一样的个数），逐格。三列依次是：个数、贪心、喂对；"):]
    assert by_cell[2:] == ["1         1/0/0     0/0/1     0.02，更新后", "2         2/0/0     0/0/2     0.02，更新前"]


def test_the_refit_table_reads_each_checkpoint_and_the_same_cells_uniform_control(capsys, monkeypatch):
    monkeypatch.setattr(E, "REFIT_SETTINGS", (E.Setting(query="before", lr=0.02),))
    monkeypatch.setattr(E, "REFIT_CHECKPOINTS", (1, 2))
    n = len(E.EXPERIMENT_SEEDS)
    runs = [fake_run(True, 1.0, refit={1: 0.3 + 0.01 * i, 2: 0.5}, forced={"uniform": 0.42}, refit_forced=0.45)
            for i in range(n)]
    E.print_refits({0.02: {"before": runs, "uniform": [A.Evaluation(0.5, 0.9, None, None, None)] * n}})
    out = capsys.readouterr().out
    rows = {}
    for line in out.splitlines():
        words = line.split()
        numbers = next((k for k, word in enumerate(words) if not word.replace(".", "").isdigit()), len(words))
        if numbers:
            rows[" ".join(words[numbers:])] = words[:numbers]                   # the label after the numbers
    assert rows["种子"] == ["%d" % seed for seed, _ in E.EXPERIMENT_SEEDS]
    assert rows["自己"] == ["1.0000"] * (n + 2) and rows["均匀"] == ["0.4000"] * (n + 2)
    assert rows["重新训练 1 轮"] == ["%.4f" % (0.3 + 0.01 * i) for i in range(n)] + ["0.3450", "0.3450"]
    assert rows["重新训练 2 轮"] == ["0.5000"] * (n + 2)                             # the mean, then the median
    assert rows["喂对，均匀"] == ["0.4200"] * (n + 2) and rows["喂对，重新训练后"] == ["0.4500"] * (n + 2)
    assert "逐位正确 0.9000 ± 0.0000" in out


def test_the_average_control_by_position_is_the_mean_over_seeds(capsys):
    n = len(E.EXPERIMENT_SEEDS)
    cell = lambda a, b: {"none": [A.Evaluation(0.0, a, np.full(10, a), None, None)] * n,
                         "uniform": [A.Evaluation(0.0, b, np.linspace(b, 1, 10), None, None)] * n}
    E.print_average_by_position({E.LR: cell(0.5, 0.6), E.PICKING_SETTING.lr: cell(0.7, 0.8)})
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["%d" % r for r in range(1, 11)] + ["全部"]
    assert lines[2].split() == ["0.50"] * 10 + ["0.5000", "0.003，不用注意力"]
    assert lines[3].split()[-2] == "0.6000" and lines[3].split()[-3] == "1.00" and lines[3].endswith("平均对照")
    assert lines[4].endswith("0.02，不用注意力")


def growing_course(heights, drops, accuracies=None):
    """A course of checkpoints: round 0 untrained (uniform weights, accuracy 0.2), then rounds 10, 20, ...: the
    anti-diagonal at each height, accuracy as given (1.0 unless given), and that minus the drop with 1/T weights."""
    accuracies = accuracies or [1.0] * len(heights)
    course = {0: A.Checkpoint(0.2, 0.2, np.full((10, 10), 0.1))}
    course.update({10 * (k + 1): A.Checkpoint(a, a - drop, reversal_matrix(h))
                   for k, (h, drop, a) in enumerate(zip(heights, drops, accuracies))})
    return course


def test_the_jump_runs_from_a_fifth_to_four_fifths_of_the_final_excess_over_uniform():
    # multiples of uniform 1, 1.5, 2, 4, 5.5, 6: excess 0, .5, 1, 3, 4.5, 5 of the final 5
    course = growing_course([0.1, 0.15, 0.2, 0.4, 0.55, 0.6], [0, 0, 0.05, 0.3, 0.5, 0.5])
    assert A.share_of_end(course, 30) == pytest.approx(0.2)
    assert A.jump(course) == (30, 50)                        # first at 0.2 (round 30), first at 0.8 (0.9: round 50)
    assert A.growth_panels(course) == (20, 40, 50, 60)       # before the jump, half (0.6), its end, the end
    assert A.first_round(course, lambda n: course[n].formed) == 40   # drop 0.3 and 4 times uniform
    flat = growing_course([0.1, 0.1, 0.1], [0, 0, 0])
    assert A.jump(flat) == (None, None) and A.share_of_end(flat, 10) is None


def test_learning_measures_per_token_accuracy_as_the_jump_measures_the_diagonal():
    # accuracy 0.2 untrained, then 0.3, 0.5, 0.8, 1.0: its rise of 0.8 passes a fifth (0.36) at round 20 and four
    # fifths (0.84) at round 40
    course = growing_course([0.1, 0.2, 0.4, 0.6], [0, 0.1, 0.3, 0.5], accuracies=[0.3, 0.5, 0.8, 1.0])
    assert A.learning(course) == (20, 40) and A.jump(course) == (20, 40)


def test_the_growth_over_seeds_reads_each_formed_models_course_and_what_the_others_reached(capsys, monkeypatch):
    quick = growing_course([0.1, 0.3, 0.6], [0, 0.4, 0.6], accuracies=[0.5, 0.9, 1.0])   # jumps round 10 to 30
    slow = {**growing_course([0.1] * 30 + [0.6], [0] * 30 + [0.6])}   # jumps at the last checkpoint, round 310
    slow[20] = A.Checkpoint(1.0, 0.98, reversal_matrix(0.1))
    never = growing_course([0.12, 0.15, 0.1], [0.0, 0.2, 0.0])        # 1.5 times uniform at most
    monkeypatch.setattr(E, "EXPERIMENT_SEEDS", [(0, 100), (1, 101)])
    after, before = A.Setting(lr=0.02), A.Setting(query="before", lr=0.02)
    sweep = {0.02: {"after": [fake_run(True, course=quick, setting=after, seed=0),
                              fake_run(True, course=slow, setting=after, seed=1)],
                    "before": [fake_run(False, course=never, setting=before, seed=0),
                               fake_run(False, course=never, setting=before, seed=1)]}}
    E.print_growth_over_seeds(sweep)
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("七列依次是：种子、第一次满足规则、跳从第几轮、跳到第几轮、跳了几轮")
    # accuracy 0.2 at round 0: quick's rises 0.8, a fifth at round 10 (0.5), four fifths at 20 (0.9); slow's is 1.0
    # from round 10 on
    assert lines[3].split() == ["0", "20", "20", "30", "10", "10", "20", "0.02，更新后"]
    assert lines[4].split() == ["1", "310", "310", "310", "0", "10", "10", "0.02，更新后"]
    assert lines[5] == "跳了几轮：中位数 5，最短 0，最长 10；不超过 300 轮的 2 个。"
    assert lines[6] == "逐位正确同样涨两成到八成用了几轮：中位数 5，最短 0，最长 10；跳比它短的 0 个，一样长的 2 个。"
    assert "训练途中反对角线最高到过均匀的 1.50 倍" in lines[7] and lines[8] == "在哪个检查点满足过规则的有 0 个。"


class InlinePool:
    """Stands in for ProcessPoolExecutor: each submitted call runs at once, here, and comes back as a finished
    Future (its exception, if it raised), so that a callback added later runs at once too."""

    def __init__(self, *args, **options):
        self.submitted = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, function, *args, **options):
        self.submitted.append(function)
        future = Future()
        try:
            future.set_result(function(*args, **options))
        except Exception as error:                       # handed back in the Future, as the pool would
            future.set_exception(error)
        return future


def planted_matrix(T, formed, seed_init):
    """A (T, T) average weight matrix: formed, most of each row on the anti-diagonal; otherwise a low peak one
    column to its left (the last row wraps round), so the peak-offset table has more than one kind of row."""
    height = 0.5 + 0.02 * seed_init if formed else 0.2
    offset = 0 if formed else -1
    matrix = np.full((T, T), (1 - height) / (T - 1))
    matrix[np.arange(T), (T - 1 - np.arange(T) + offset) % T] = height
    return matrix


def planted_evaluation(per_token, T, B=3, alpha=None):
    """An Evaluation shaped as evaluate gives it, for B test sequences of length T."""
    by_position = np.clip(per_token + np.linspace(0.05, -0.05, T), 0.0, 1.0)
    return A.Evaluation(per_token ** T, per_token, by_position, alpha, np.arange(B * T).reshape(B, T) % A.LETTERS)


# Which seeds of a cell form the alignment (seed_init below the count); a cell not named here: the first five.
# Some cells none, some all, so that every "none of them" and "all of them" branch prints too.
FORMED_SEEDS = {(0.003, "after"): 0, (0.02, "after"): 10}


def planted_run(setting, seed_init, length, rounds, checkpoints, refit, B=3):
    """A Run built with the program's own classes, as attention_runs returns one: the weights of B test sequences,
    the swaps, the course at the checkpoints training would reach (rising to the final evaluation) and the refit."""
    formed = seed_init < FORMED_SEEDS.get((setting.lr, setting.query), 5)
    matrix, uniform = planted_matrix(length, formed, seed_init), np.full((length, length), 1 / length)
    own_accuracy, uniform_accuracy = (0.95 - 0.01 * seed_init, 0.6) if formed else (0.7 + 0.01 * seed_init, 0.68)
    model = A.Model({}, setting)
    model.seeds = (seed_init, 100 + seed_init)           # as train sets them
    start = 0.2 + 0.03 * seed_init                       # where the course starts to climb, as a share of training
    for n in checkpoints:
        if n <= rounds:
            s = float(np.clip((n / rounds - start) / 0.3, 0.0, 1.0)) if formed else n / rounds
            model.course[n] = A.Checkpoint(uniform_accuracy + s * (own_accuracy - uniform_accuracy), uniform_accuracy,
                                           (1 - s) * uniform + s * matrix)
    alpha = np.repeat(matrix[None], B, axis=0)
    greedy = {name: planted_evaluation(accuracy, length, B, alpha) for name, accuracy in
              zip(E.SWAPS, (0.9, 0.3, own_accuracy - 0.02, uniform_accuracy))}
    share = np.arange(B * length).reshape(B, length) / (B * length)        # fed the right letters: right where below
    forced = {name: share < accuracy for name, accuracy in
              zip(("own",) + E.SWAPS, (own_accuracy + 0.03, 0.97, 0.4, own_accuracy, uniform_accuracy + 0.1))}
    swaps = A.Interventions(greedy=greedy, follows=0.5 + 0.01 * seed_init, forced=forced,
                            other_change=0.1 + 0.01 * seed_init)
    return A.Run(model=model, rounds=rounds, own=planted_evaluation(own_accuracy, length, B, alpha),
                 sample=np.arange(length) % A.LETTERS, swaps=swaps,
                 refit={n: 0.5 + n / 10 ** 5 for n in A.REFIT_CHECKPOINTS} if refit else None,
                 refit_forced=0.55 if refit else None)


def test_the_experiments_main_prints_every_section_from_planted_runs(capsys, monkeypatch):
    """main() end to end in a few seconds: the pool runs each job in place and every training gives planted
    Runs and Evaluations of the right shapes (ten seeds a cell, some formed and some not), called with the
    real functions' signatures. Experiments one, two and six's untrained models are computed for real.
    Any name or attribute a printing path gets wrong fails here, not minutes into make experiments."""
    made = {"models": 0, "refits": 0}
    real = {name: inspect.signature(getattr(E, name)) for name in ("attention_runs", "control_runs")}

    def fake_attention_runs(*args, **options):
        call = real["attention_runs"].bind(*args, **options)      # a TypeError where the real one raises
        call.apply_defaults()
        a = call.arguments
        made["models"] += len(a["seed_list"])
        made["refits"] += len(a["seed_list"]) if a["refit"] else 0
        return [planted_run(a["setting"], seed_init, a["length"], a["rounds"], a["checkpoints"], a["refit"])
                for seed_init, _ in a["seed_list"]]

    def fake_control_runs(*args, **options):
        call = real["control_runs"].bind(*args, **options)
        setting, seed_list, length = (call.arguments[name] for name in ("setting", "seed_list", "length"))
        made["models"] += len(seed_list)
        alpha = np.full((3, length, length), 1 / length) if setting.uniform else None
        return [planted_evaluation((0.75 if setting.uniform else 0.55) + 0.01 * seed_init, length, alpha=alpha)
                for seed_init, _ in seed_list]

    pools = []
    monkeypatch.setattr(E, "ProcessPoolExecutor", lambda *a, **k: pools.append(InlinePool(*a, **k)) or pools[-1])
    monkeypatch.setattr(E, "attention_runs", fake_attention_runs)
    monkeypatch.setattr(E, "control_runs", fake_control_runs)
    E.main()
    out = capsys.readouterr().out
    lines = out.splitlines()

    headers = [next((k for k, line in enumerate(lines) if line.startswith(numeral + "、")), None) for numeral in "一二三四五六七"]
    assert None not in headers and headers == sorted(headers), headers
    n = len(E.EXPERIMENT_SEEDS)
    per_cell = len(E.CONTROLS)
    expected = n * (len(E.SHORT_SETTINGS) * (per_cell + 1) + len(E.SWEEP_RATES) * (per_cell + len(E.SWEEP_QUERIES)))
    assert made["models"] == expected + 1                                 # the sweeps and the long training
    assert made["refits"] == n * len(E.REFIT_SETTINGS)
    assert lines[-1] == ("这个程序一共从头训练了 %d 个模型（加上训练 %d 轮的那一个），另外只重新训练了 %d 个输出层。"
                         % (made["models"], E.LONG_ROUNDS, made["refits"]))
    assert len(pools) == 1 and set(pools[0].submitted) == {fake_attention_runs, fake_control_runs}   # all trained in the pool
    assert "扫描里没有这样的模型" not in out                                # a formed and a not formed picture
    assert "形成了对齐的种子：没有" in out                                   # a cell with none formed
    sharpening = lines[lines.index("每个学习率两列，先更新后的查询，再更新前的：", lines.index("五、训练充分之后会不会锐化？")) + 1:]
    assert sharpening[0].endswith("学习率") and sharpening[4].endswith("种子数") and "-" in sharpening[1].split()
    assert any(line.startswith("没形成的") and line.count("倍") == 3 for line in lines)
    long_line = next(line for line in lines if line.startswith("反对角线是均匀的几倍：第 %d 轮" % E.LONG_CHECKPOINTS[0]))
    assert "第 %d 轮" % E.LONG_CHECKPOINTS[-1] in long_line and "第 %d 轮" % E.LONG_ROUNDS in long_line
    assert "Traceback" not in out
