"""Tests of the lesson's program, generated/attention.py (tangled from attention.md).

Each test compares against an independent reference: a plain Python loop, NumPy's own
functions, exact integer arithmetic, central finite differences, or the transcript.
"""
import literate.blocks  # noqa: E402
import literate.markdown  # noqa: E402
import columns  # noqa: E402  (tests/columns.py: when a table lines up in any font)
from columns import display_width  # noqa: E402
import importlib.util
import multiprocessing
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def load_program():
    spec = importlib.util.spec_from_file_location("attention", ROOT / "generated" / "attention.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


A = load_program()


def lesson():
    """attention.md as tangle.py reads it (transcripts joined from their parts)."""
    import tangle
    text = (ROOT / "attention.md").read_text(encoding="utf-8")
    return literate.markdown.parse_document(ROOT / "attention.md", "attention.md", text)


def transcript_lines(program="generated/attention.py"):
    """The documented stdout of a program: its transcript's parts in attention.md, joined."""
    transcript = lesson().transcripts.get(program)
    assert transcript, "attention.md has no transcript of " + program
    return transcript.content.splitlines()


# ---------------------------------------------------------------- the hand example

def test_hand_example_numbers_are_the_books():
    _, _, dots, scaled, weights, context, average = A.hand_example()
    assert ["%.4f" % v for v in dots] == ["1.0000", "0.0000", "2.0000", "1.0000"]
    assert ["%.4f" % v for v in scaled] == ["0.5774", "0.0000", "1.1547", "0.5774"]
    assert ["%.4f" % v for v in weights] == ["0.2303", "0.1293", "0.4102", "0.2303"]
    assert ["%+.4f" % v for v in context] == ["+0.8707", "+0.3595", "+0.4102"]
    assert ["%+.4f" % v for v in average] == ["+0.7500", "+0.5000", "+0.2500"]


def test_hand_example_matches_numpy_reference():
    q, K, _, _, weights, context, average = A.hand_example()
    scores = K @ q / np.sqrt(3.0)
    ref = np.exp(scores - scores.max())
    ref /= ref.sum()
    np.testing.assert_allclose(weights, ref, rtol=1e-15)
    np.testing.assert_allclose(context, ref @ K, rtol=1e-15)
    np.testing.assert_array_equal(average, K.mean(axis=0))


def test_attend_one_is_the_hand_example_and_the_batched_attend_gives_its_bits():
    """The main line's one-query attend_one, the hand example's three steps and the batched
    attend of the full implementation: the same bits."""
    q, K, _, _, weights, context, average = A.hand_example()
    assert all(map(np.array_equal, A.attend_one(q, K), (context, weights)))
    for uniform, expected in ((False, (context, weights)), (True, (average, np.full(4, 0.25)))):
        batched = A.attend(q, K, uniform=uniform)
        assert all(map(np.array_equal, batched, expected))
    rng = np.random.RandomState(11)
    K = rng.uniform(-1, 1, size=(3, 7, 16))
    q = rng.uniform(-1, 1, size=(3, 16))
    context, weights = A.attend(q, K)
    for b in range(3):
        one = A.attend_one(q[b], K[b])
        assert np.array_equal(one[0], context[b]) and np.array_equal(one[1], weights[b])


def test_mm_takes_vectors_as_matmul_does():
    rng = np.random.RandomState(12)
    a, v = rng.uniform(-1, 1, size=(5, 4)), rng.uniform(-1, 1, size=4)
    w = rng.uniform(-1, 1, size=5)
    assert A.mm(a, v).shape == (5,) and np.array_equal(A.mm(a, v), A.mm(a, v[:, None])[:, 0])
    assert A.mm(w, a).shape == (4,) and np.array_equal(A.mm(w, a), A.mm(w[None, :], a)[0])
    np.testing.assert_allclose(A.mm(a, v), a @ v, rtol=1e-13)


def teacher_forced_logits(params, src, query):
    """The training path: every step reads the correct previous letter, all steps at once (decoder, decoder_output)."""
    hs_enc = A.encoder(params, src)
    dec_in = np.concatenate([np.full((len(src), 1), A.START), src[:, ::-1][:, :-1]], axis=1)
    hs_dec = A.decoder(params, dec_in, hs_enc[:, -1])
    queries = hs_dec if query == "after" else np.concatenate([hs_enc[:, -1:], hs_dec[:, :-1]], axis=1)
    return A.decoder_output(params, hs_dec, hs_enc, queries)[0]


def test_decode_step_is_one_step_of_teacher_forced_training():
    """decode_step (the main line's decoder, one step at a time) and the training path (all
    steps at once through decoder and decoder_output) give the same logits, both queries."""
    params = A.init_params(np.random.RandomState(5), True)
    src = A.make_test_set(5)[:6]
    hs_enc = A.encoder(params, src)
    dec_in = np.concatenate([np.full((6, 1), A.START), src[:, ::-1][:, :-1]], axis=1)
    for query in ("after", "before"):
        logits_all = teacher_forced_logits(params, src, query)
        h = hs_enc[:, -1]
        for t in range(5):
            h, logits, _ = A.decode_step(params, h, dec_in[:, t], hs_enc, query)
            np.testing.assert_allclose(logits, logits_all[:, t], rtol=1e-12, atol=1e-15)


def test_the_gradient_check_the_lesson_prints_can_fail():
    """gradient_check compares against central differences; a wrong gradient shows up in it."""
    assert A.gradient_check(True, "before") < 1e-6
    original = A.loss_and_grads

    def wrong(*args):
        loss, grads = original(*args)
        grads["dec_Wh"] = grads["dec_Wh"] * 1.01
        return loss, grads
    A.loss_and_grads = wrong
    try:
        assert A.gradient_check(True, "before") > 1e-3
    finally:
        A.loss_and_grads = original


# ---------------------------------------------------------------- attention

def naive_attend(q, K, V):
    """One query, written as the three steps with Python loops."""
    d = len(q)
    scores = [sum(q[i] * k[i] for i in range(d)) / d ** 0.5 for k in K]
    top = max(scores)
    e = [np.exp(s - top) for s in scores]
    weights = [x / sum(e) for x in e]
    context = [sum(w * v[j] for w, v in zip(weights, V)) for j in range(V.shape[1])]
    return np.array(context), np.array(weights)


@pytest.mark.parametrize("seed", range(5))
def test_attend_single_query_equals_naive_loop(seed):
    rng = np.random.RandomState(seed)
    q, K, V = rng.randn(7), rng.randn(9, 7), rng.randn(9, 4)
    context, weights = A.attend(q, K, V)
    ref_context, ref_weights = naive_attend(q, K, V)
    np.testing.assert_allclose(weights, ref_weights, rtol=1e-12)
    np.testing.assert_allclose(context, ref_context, rtol=1e-12, atol=1e-12)


def test_attend_batch_of_queries_equals_naive_loop():
    rng = np.random.RandomState(7)
    q, K = rng.randn(6, 16), rng.randn(6, 10, 16)
    context, weights = A.attend(q, K)              # V defaults to K
    assert context.shape == (6, 16) and weights.shape == (6, 10)
    for b in range(6):
        ref_context, ref_weights = naive_attend(q[b], K[b], K[b])
        np.testing.assert_allclose(weights[b], ref_weights, rtol=1e-12)
        np.testing.assert_allclose(context[b], ref_context, rtol=1e-12, atol=1e-12)


def test_attend_many_queries_per_batch_equals_one_at_a_time():
    rng = np.random.RandomState(8)
    Q, K = rng.randn(4, 5, 16), rng.randn(4, 10, 16)
    context, weights = A.attend(Q, K)
    assert weights.shape == (4, 5, 10)
    for t in range(5):
        c, w = A.attend(Q[:, t], K)
        np.testing.assert_allclose(weights[:, t], w, rtol=1e-12)
        np.testing.assert_allclose(context[:, t], c, rtol=1e-12, atol=1e-12)
        for b in range(4):                              # and one query at a time, as the main line computes it
            c_one, w_one = A.attend_one(Q[b, t], K[b])
            np.testing.assert_allclose(w_one, weights[b, t], rtol=1e-12)
            np.testing.assert_allclose(c_one, context[b, t], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_weights_are_positive_sum_to_one_and_context_is_convex(seed):
    rng = np.random.RandomState(100 + seed)
    scale = 10.0 ** rng.uniform(-2, 1)
    q, K = scale * rng.randn(16), scale * rng.randn(12, 16)
    context, weights = A.attend(q, K)
    assert (weights > 0).all()
    assert abs(weights.sum() - 1) < 1e-14
    assert (context >= K.min(axis=0) - 1e-12).all() and (context <= K.max(axis=0) + 1e-12).all()


def test_uniform_attend_takes_the_mean_of_the_values_whatever_the_query():
    rng = np.random.RandomState(9)
    K = rng.randn(3, 10, 16)
    for q in (rng.randn(3, 16), 100 * rng.randn(3, 16)):
        context, weights = A.attend(q, K, uniform=True)
        assert (weights == 0.1).all() and weights.shape == (3, 10)
        np.testing.assert_allclose(context, K.mean(axis=1), rtol=1e-13, atol=1e-15)
    dctx, Q = rng.randn(3, 4, 16), rng.randn(3, 4, 16)
    dQ, dK = A.attend_backward(dctx, Q, K, np.full((3, 4, 10), 0.1), uniform=True)
    assert not dQ.any()                                  # the weights do not depend on the query
    np.testing.assert_allclose(dK, np.repeat(0.1 * dctx.sum(axis=1, keepdims=True), 10, axis=1), rtol=1e-12)


def test_softmax_axis_and_extremes():
    x = np.array([[1000.0, 0.0, -1000.0], [0.0, 0.0, 0.0]])
    p = A.softmax(x)
    np.testing.assert_allclose(p[1], [1 / 3] * 3, rtol=1e-15)
    assert p[0, 0] == 1.0 and p[0, 2] == 0.0
    np.testing.assert_allclose(A.softmax(x.T, axis=0), p.T, rtol=1e-15)


# ---------------------------------------------------------------- exact primitives

def test_mm_2d_adds_in_k_order_exactly():
    rng = np.random.RandomState(1)
    a, b = rng.randn(5, 16), rng.randn(16, 7)
    out = A.mm(a, b)
    for m in range(5):
        for n in range(7):
            acc = a[m, 0] * b[0, n]
            for k in range(1, 16):
                acc = acc + a[m, k] * b[k, n]      # left to right, one rounding per step
            assert out[m, n] == acc
    assert np.array_equal(A.mm(b.T, a.T), out.T)   # orientation never changes the bits


@pytest.mark.parametrize("shape_a, shape_b", [
    ((32, 16), (16, 16)), ((16, 32), (32, 6)), ((16, 320), (320, 16)), ((4, 3), (3, 1)),
    ((32, 10, 10), (32, 10, 16)), ((32, 10, 16), (32, 16, 10)), ((32, 10, 32), (32, 6)),
    ((100, 1, 16), (100, 16, 10)), ((2, 3, 4, 5), (5, 6)), ((4, 5), (3, 5, 2)),
])
def test_mm_equals_the_k_ordered_sum_for_every_layout(shape_a, shape_b):
    rng = np.random.RandomState(2)
    a, b = rng.randn(*shape_a), rng.randn(*shape_b)
    ordered = a[..., :, 0, None] * b[..., 0, None, :]
    for k in range(1, a.shape[-1]):
        ordered = ordered + a[..., :, k, None] * b[..., k, None, :]
    out = A.mm(a, b)
    assert out.shape == (a @ b).shape
    assert np.array_equal(out, ordered)


def test_mm_matches_numpy_for_every_shape_the_model_uses():
    rng = np.random.RandomState(3)
    for sa, sb in [((32, 16), (16, 16)), ((100, 16), (16, 16)), ((4, 3), (3, 1)), ((1, 3), (3, 4)),
                   ((32, 10, 10), (32, 10, 16)), ((32, 10, 32), (32, 6)), ((100, 1, 16), (100, 16, 10))]:
        a, b = rng.randn(*sa), rng.randn(*sb)
        np.testing.assert_allclose(A.mm(a, b), a @ b, rtol=1e-12, atol=1e-12)


def test_right_multiplier_gives_mms_bits_in_the_transposed_layout():
    rng = np.random.RandomState(5)
    W, x = rng.randn(16, 16), rng.randn(32, 16)
    times_W = A.right_multiplier(W, 32)
    assert np.array_equal(times_W(np.ascontiguousarray(x.T)), A.mm(x, W).T)
    assert np.array_equal(times_W(x.T), A.mm(x, W).T)          # a transposed view works too
    assert np.array_equal(A.right_multiplier(W.T, 32)(x.T), A.mm(x, W.T).T)


# The formula versions of the lesson's rnn, rnn_backward and input_grads: one (B, H) state per step,
# Wx's gradient as the one-hot matrix's transpose times dz. The lesson runs transposed loops and
# np.bincount instead; these are the oracles they must match bit for bit.

def formula_rnn(x_rows, Wh, h):
    hs = np.empty_like(x_rows)
    for t in range(x_rows.shape[1]):
        h = A.tanh(x_rows[:, t] + A.mm(h, Wh))
        hs[:, t] = h
    return hs


def formula_rnn_backward(dhs, hs, h0, Wh):
    dz = np.empty_like(hs)
    dh = np.zeros_like(h0)
    for t in reversed(range(hs.shape[1])):
        dz[:, t] = (dhs[:, t] + dh) * (1 - hs[:, t] * hs[:, t])
        dh = A.mm(dz[:, t], Wh.T)
    h_prev = np.concatenate([h0[:, None], hs[:, :-1]], axis=1)
    return dz, A.mm(A.rows(h_prev).T, A.rows(dz)), dh


def formula_input_grads(dz, tokens):
    dz = A.rows(dz)
    return A.mm(A.one_hot(tokens.reshape(-1)).T, dz), dz.sum(axis=0)


@pytest.mark.parametrize("B, T", [(32, 5), (32, 10), (100, 5), (100, 10), (3, 4)])
def test_the_lessons_rnn_and_its_backward_give_the_formula_loops_bits(B, T):
    """The transposed loops (right_multiplier) against the formula written out: same bits on every
    shape the lesson uses (batch 32 in training, 100 in evaluation)."""
    rng = np.random.RandomState(B + T)
    x_rows, Wh, h0, dhs = rng.randn(B, T, 16), rng.randn(16, 16) / 4, rng.randn(B, 16), rng.randn(B, T, 16)
    hs = A.rnn(x_rows, Wh, h0)
    assert hs.shape == (B, T, 16) and np.array_equal(hs, formula_rnn(x_rows, Wh, h0))
    lesson, formula = A.rnn_backward(dhs, hs, h0, Wh), formula_rnn_backward(dhs, hs, h0, Wh)
    assert all(np.array_equal(a, b) for a, b in zip(lesson, formula))


@pytest.mark.parametrize("S, B, T", [(1, 32, 5), (1, 32, 10), (5, 32, 5), (5, 32, 10), (2, 3, 4)])
def test_stacked_models_each_get_the_bits_of_their_own_formula_loop(S, B, T):
    """S models stacked (Wh (S, H, H), rows grouped by model; a single model trains as a stack of one):
    each model's rows and gradients are exactly what the formula loop gives that model alone."""
    rng = np.random.RandomState(S * B + T)
    x_rows, Wh, h0, dhs = rng.randn(S * B, T, 16), rng.randn(S, 16, 16) / 4, rng.randn(S * B, 16), rng.randn(S * B, T, 16)
    tokens = rng.randint(0, A.VOCAB, size=(S * B, T))
    hs = A.rnn(x_rows, Wh, h0)
    dz, dWh, dh0 = A.rnn_backward(dhs, hs, h0, Wh)
    dWx = A.input_grads(dz, tokens, np.zeros((S, A.VOCAB, 16)))
    assert dWh.shape == (S, 16, 16) and dWx.shape == (S, A.VOCAB, 16)
    for i in range(S):
        mine = slice(i * B, (i + 1) * B)
        assert np.array_equal(hs[mine], formula_rnn(x_rows[mine], Wh[i], h0[mine]))
        f_dz, f_dWh, f_dh0 = formula_rnn_backward(dhs[mine], hs[mine], h0[mine], Wh[i])
        assert np.array_equal(dz[mine], f_dz) and np.array_equal(dWh[i], f_dWh) and np.array_equal(dh0[mine], f_dh0)
        assert np.array_equal(dWx[i], formula_input_grads(f_dz, tokens[mine])[0])


def test_the_formula_rnn_is_the_recurrence_written_out():
    """The oracle itself against the formula, one step at a time with NumPy (to rounding)."""
    rng = np.random.RandomState(3)
    x_rows, Wh, h0 = rng.randn(4, 6, 16), rng.randn(16, 16) / 4, rng.randn(4, 16)
    h, hs = h0, formula_rnn(x_rows, Wh, h0)
    for t in range(6):
        h = np.tanh(x_rows[:, t] + h @ Wh)
        np.testing.assert_allclose(hs[:, t], h, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("B, T", [(32, 5), (32, 10), (3, 4)])
def test_input_grads_give_the_one_hot_products_bits(B, T):
    rng = np.random.RandomState(7 + T)
    tokens, dz = rng.randint(0, A.VOCAB, size=(B, T)), rng.randn(B, T, 16)
    dWx, db = A.input_grads(dz, tokens, np.zeros((A.VOCAB, 16))), A.bias_grad(dz, np.zeros(16))
    formula = formula_input_grads(dz, tokens)
    assert np.array_equal(dWx, formula[0]) and np.array_equal(db, formula[1])
    np.testing.assert_allclose(formula[0], A.one_hot(tokens).reshape(-1, A.VOCAB).T @ dz.reshape(-1, 16), rtol=1e-12)


def test_exp_and_tanh_agree_with_the_c_library_to_a_few_ulp():
    x = np.concatenate([np.linspace(-30, 30, 20001), np.random.RandomState(4).randn(5000) * 5,
                        [0.0, -0.0, 1e-300, -1e-300, 1e-8, 19.9, 20.0, 25.0]])
    t = A.tanh(x)
    assert np.all(np.abs(t - np.tanh(x)) <= np.maximum(2 * np.spacing(np.abs(np.tanh(x))), 2.0 ** -51))
    assert np.array_equal(A.tanh(-x), -t)                  # odd, exactly
    y = np.linspace(-700, 700, 20001)
    assert np.all(np.abs(A.exp(y) - np.exp(y)) <= 4 * np.spacing(np.exp(y)))
    assert A.exp(np.array([0.0]))[0] == 1.0 and A.exp(np.array([-800.0]))[0] == 0.0


def test_tables_come_from_decimal_and_are_correctly_rounded():
    assert A.TANH_TABLE[0] == 0.0 and A.TANH_TABLE[-1] == 1.0
    assert A.EXP_TABLE[0] == 1.0 and A.EXP_TABLE[32] == np.sqrt(2.0)   # 2^(1/2), correctly rounded
    assert abs(A.STEP_HI + A.STEP_LO - np.log(2.0) / 64) < 1e-18


# ---------------------------------------------------------------- the model

def test_parameter_counts_are_838_and_934():
    assert A.count_params(A.init_params(np.random.RandomState(0), attention=False)) == 838
    assert A.count_params(A.init_params(np.random.RandomState(0), attention=True)) == 934


def test_both_models_start_from_the_same_weights_except_the_output_layer():
    plain = A.init_params(np.random.RandomState(A.SEED_INIT), attention=False)
    attn = A.init_params(np.random.RandomState(A.SEED_INIT), attention=True)
    for name in plain:
        if name not in ("Wo", "bo"):
            assert np.array_equal(plain[name], attn[name]), name


def test_test_set_is_distinct_and_never_sampled_for_training():
    for length in (5, 10):
        test = A.make_test_set(length)
        codes = A.seq_codes(test)
        assert test.shape == (100, length) and len(set(codes)) == 100
        rng = np.random.RandomState(0)
        sorted_codes = np.sort(codes)
        drawn = np.concatenate([A.seq_codes(A.sample_batch(rng, length, sorted_codes)) for _ in range(300)])
        assert not np.isin(drawn, codes).any()


def test_in_sorted_matches_isin():
    rng = np.random.RandomState(5)
    table = np.sort(rng.choice(1000, 50, replace=False))
    codes = rng.randint(-5, 1005, 2000)
    assert np.array_equal(A.in_sorted(codes, table), np.isin(codes, table))


@pytest.mark.parametrize("attention, query, uniform", [(False, "after", False), (True, "after", False),
                                                       (True, "before", False), (True, "after", True)])
def test_every_gradient_matches_central_differences(attention, query, uniform):
    """uniform=True is the control of section 五: weights fixed at 1/T, gradient only through the values."""
    rng = np.random.RandomState(11)
    params = A.init_params(np.random.RandomState(12), attention)
    for p in params.values():
        p += rng.uniform(-0.5, 0.5, p.shape)           # non-zero biases, larger weights
    src = rng.randint(0, 5, size=(3, 4))
    tgt = src[:, ::-1]
    _, grads = A.loss_and_grads(params, src, tgt, query, uniform)
    worst = 0.0
    for name, p in params.items():
        assert grads[name].shape == p.shape
        for idx in np.ndindex(p.shape):
            old = p[idx]
            p[idx] = old + 1e-4
            up, _ = A.loss_and_grads(params, src, tgt, query, uniform)
            p[idx] = old - 1e-4
            down, _ = A.loss_and_grads(params, src, tgt, query, uniform)
            p[idx] = old
            numeric = (up - down) / 2e-4
            err = abs(numeric - grads[name][idx]) / max(abs(numeric), abs(grads[name][idx]), 1e-3)
            worst = max(worst, err)
    assert worst < 1e-6


@pytest.mark.parametrize("query, uniform", [("after", False), ("before", False), ("after", True)])
def test_stacked_gradients_are_each_models_own(query, uniform):
    """loss_and_grads on two models stacked (rows grouped by model) gives, for each model, exactly the
    gradients of that model on its own rows."""
    rng = np.random.RandomState(21)
    models = [A.init_params(np.random.RandomState(seed), True) for seed in (30, 31)]
    src = rng.randint(0, 5, size=(2 * 6, 5))
    _, stack = A.as_vector(models)
    _, grads = A.loss_and_grads(stack, src, src[:, ::-1], query, uniform)
    for i, params in enumerate(models):
        rows = src[i * 6:(i + 1) * 6]
        _, alone = A.loss_and_grads(params, rows, rows[:, ::-1], query, uniform)
        assert all(np.array_equal(grads[name][i], alone[name]) for name in params)


def test_query_before_update_uses_the_previous_state():
    """With query="before", step t of teacher-forced training and of greedy decoding both
    query with the state before step t's update: their weights agree on a correct prefix."""
    params = A.init_params(np.random.RandomState(3), True)
    src = A.make_test_set(5)[:4]
    tokens, weights = A.predict(params, src, "before")
    hs_enc = A.encoder(params, src)
    dec_in = np.concatenate([np.full((4, 1), A.START), tokens[:, :-1]], axis=1)
    hs_dec = A.decoder(params, dec_in, hs_enc[:, -1])
    queries = np.concatenate([hs_enc[:, -1:], hs_dec[:, :-1]], axis=1)
    _, expected = A.attend(queries, hs_enc)
    np.testing.assert_allclose(weights, expected, rtol=1e-12)


def test_predict_uses_attention_only_when_the_model_has_it():
    src = A.make_test_set(5)[:8]
    for attention in (False, True):
        tokens, weights = A.predict(A.init_params(np.random.RandomState(0), attention), src)
        assert tokens.shape == (8, 5)
        if attention:
            assert weights.shape == (8, 5, 5)
            np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-14)
        else:
            assert weights is None


def test_training_is_bit_for_bit_repeatable():
    test = A.make_test_set(5)
    first = A.train(5, True, 60, test)[0]
    second = A.train(5, True, 60, test)[0]
    for name in first:
        assert np.array_equal(first[name], second[name])
    assert not np.array_equal(first["Wo"], A.init_params(np.random.RandomState(A.SEED_INIT), True)["Wo"])


def five_letter_run(attention):
    test = A.make_test_set(5)
    params = A.train(5, attention, 2000, test)[0]
    return params, A.evaluate(params, test)


@pytest.fixture(scope="module")
def five_letter_results():
    """Section 四's two trainings, in two processes where fork exists (they are independent)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        five = A.reversal_comparison()
        return {False: (five.no_attn, five.no_attn_result), True: (five.attn, five.attn_result)}
    # the results (Evaluation) travel back by pickle, which finds their class as attention.Evaluation
    with mock.patch.dict(sys.modules, {"attention": A}), \
            ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        return dict(zip((False, True), pool.map(five_letter_run, (False, True))))


def test_the_two_process_fixture_is_what_reversal_comparison_gives(monkeypatch):
    """Short trainings: five_letter_run is reversal_comparison, one model at a time."""
    original = A.train
    monkeypatch.setattr(A, "train", lambda length, attention, rounds, test: original(length, attention, 30, test))
    five = A.reversal_comparison()
    expected = {False: (five.no_attn, five.no_attn_result), True: (five.attn, five.attn_result)}
    for attention in (False, True):
        (mine, mine_result), (theirs, theirs_result) = five_letter_run(attention), expected[attention]
        assert mine_result[:2] == theirs_result[:2] and np.array_equal(mine_result.by_position, theirs_result.by_position)
        assert all(np.array_equal(mine[name], theirs[name]) for name in theirs)


def test_reversal_table_in_the_transcript_is_what_predict_gives(five_letter_results):
    lines = transcript_lines()
    assert "左列不用注意力，右列用注意力：" in lines
    column = {False: 0, True: 1}                                             # the table's left and right columns
    rows = {line.split()[2]: line.split()[:2] for line in lines
            if line.endswith(("参数", "整串全对", "逐位正确")) and len(line.split()) == 3}
    for attention in (False, True):
        params, result = five_letter_results[attention]
        book = ["%.4f" % figure for figure in A.BOOK_FIVE[attention]]      # the book's two rows beside ours
        printed = [rows[label][column[attention]] for label in ("参数", "整串全对", "逐位正确", "原书：整串全对", "原书：逐位正确")]
        assert printed == [str(A.count_params(params)), "%.4f" % result.whole, "%.4f" % result.per_token] + book


def test_main_prints_the_transcript_even_when_loaded_by_path(capsys, monkeypatch):
    """Loaded by importlib under a name that is not in sys.modules, main() cannot hand work to
    another process; it must fall back to computing in-process and print the same bytes."""
    calls = []
    monkeypatch.setattr(A, "attention_runs", lambda *setting, **options: calls.append(setting) or fake_runs(*setting, **options))
    monkeypatch.setattr(A, "reversal_comparison", fake_comparison)
    A.main()
    out = capsys.readouterr().out
    assert calls == [A.BOOK_SETTING, A.PICKING_SETTING]
    assert "838      934      参数" in out and "1.0000   1.0000   整串全对" in out
    assert "每一行的峰值落在输入第几列：10 9 8 7 6 5 4 3 2 1" in out and "：第一个模型形成了，第二个模型形成了。" in out


def test_main_prints_what_print_transcript_prints_when_it_trains_in_order(capsys, monkeypatch):
    """main starts the two long trainings early in other processes; print_transcript() on its own
    trains them in order, where the lesson's parts are. Same bytes."""
    monkeypatch.setattr(A, "attention_runs", fake_runs)
    monkeypatch.setattr(A, "reversal_comparison", fake_comparison)
    monkeypatch.setitem(sys.modules, "attention", A)      # importable by name: the runs come back by pickle
    A.main()
    parallel = capsys.readouterr().out
    A.print_transcript(fake_runs)
    in_order = capsys.readouterr().out
    assert parallel == in_order and "：第一个模型形成了，第二个模型形成了。" in in_order
    assert in_order.count("热图的数字（") == 2            # both runs' numbers, each once


def untrained(attention):
    return A.init_params(np.random.RandomState(A.SEED_INIT), attention)


def fake_comparison():
    perfect = A.Evaluation(1.0, 1.0, np.ones(5), None)
    return A.Comparison(2000, untrained(False), perfect, untrained(True), perfect)


FORCED = {"own": 0.8, "reversal": 0.95, "shifted": 0.3, "other": 0.8, "uniform": 0.8}   # fed the right letters


def fake_runs(query, lr, checkpoints=()):
    matrix = np.eye(10)[::-1] * 0.91 + 0.01                # a perfect reversal
    uniform = A.Evaluation(0.1, 0.4, np.full(10, 0.4), np.full((100, 10, 10), 0.1))
    grows = {n: A.Checkpoint(0.75, 0.4 if n >= 200 else 0.75, matrix if n >= 200 else np.full((10, 10), 0.1))
             for n in checkpoints}                          # formed at round 200
    return [A.Run(query, lr, 3000, untrained(True), whole=0.5, per_token=0.75, by_position=np.linspace(1, 0.1, 10),
                  uniform=uniform, matrix=matrix, sample=np.arange(10) % 5, sample_weights=matrix,
                  replaced={"reversal": 0.9, "shifted": 0.2, "follows": 0.8, "other": 0.7, "uniform": 0.4,
                            "forced": dict(FORCED), "forced_by_position": {k: np.full(10, v) for k, v in FORCED.items()},
                            "other_change": 0.05},
                  refit={n: 0.5 for n in A.REFIT_CHECKPOINTS}, course=grows)]


# ---------------------------------------------------------------- giving a trained model other weights (section 五)

def test_reversal_weights_put_one_on_the_anti_diagonal_or_the_column_left_of_it():
    W = A.reversal_weights(10)
    assert (W.sum(axis=1) == 1).all() and [int(W[r].argmax()) + 1 for r in range(10)] == [10 - r for r in range(10)]
    left = A.reversal_weights(10, shift=-1)
    assert [int(left[r].argmax()) + 1 for r in range(10)] == [9, 8, 7, 6, 5, 4, 3, 2, 1, 10]   # the last row wraps
    assert A.diagonal_weight(W) == 1.0 and A.diagonal_weight(left, -1) == 1.0


def test_decoding_with_given_weights_uses_exactly_those_weights():
    test = A.make_test_set(5)[:20]
    params = A.train(5, True, 30, test)[0]
    given = np.broadcast_to(A.reversal_weights(5), (20, 5, 5))
    _, _, _, used = A.evaluate(params, test, "before", given=given)
    assert np.array_equal(used, given)
    ones = np.full((20, 5, 5), 1 / 5)                      # 1/T given as weights is the same as uniform=True
    tokens_given, _ = A.predict(params, test, "after", given=ones)
    tokens_uniform, _ = A.predict(params, test, "after", uniform=True)
    assert np.array_equal(tokens_given, tokens_uniform)
    # the context really comes from the given column: putting all weight on one encoder step changes the answer
    first = np.zeros((20, 5, 5))
    first[..., 0] = 1.0
    assert not np.array_equal(A.predict(params, test, "after", given=first)[0], A.predict(params, test, "after", given=given)[0])


def test_interventions_report_what_evaluate_gives_for_each_replacement():
    test = A.make_test_set(5)[:30]
    params = A.train(5, True, 30, test, query="before")[0]
    _, own_accuracy, _, own = A.evaluate(params, test, "before")
    result = A.interventions(params, test, "before", own)
    assert list(result) == ["reversal", "shifted", "follows", "other", "uniform", "forced", "forced_by_position",
                            "other_change"]
    shifted = np.broadcast_to(A.reversal_weights(5, shift=-1), own.shape)
    tokens, _ = A.predict(params, test, "before", given=shifted)
    pointed = test[:, [3, 2, 1, 0, 4]]                   # row r reads column 5 − r, the last row wraps to column 5
    assert result["follows"] == (tokens == pointed).mean() and result["shifted"] == (tokens == test[:, ::-1]).mean()
    assert result["uniform"] == A.with_uniform_weights(params, test, "before").per_token
    assert result["other"] == A.evaluate(params, test, "before", given=np.roll(own, 1, axis=0))[1]
    assert result["reversal"] == A.evaluate(params, test, "before", given=np.broadcast_to(A.reversal_weights(5), own.shape))[1]
    reversal = np.broadcast_to(A.reversal_weights(5), own.shape)
    fed = A.predict(params, test, "before", given=reversal, forced=True)[0] == test[:, ::-1]
    assert result["forced"]["reversal"] == fed.mean() and np.array_equal(result["forced_by_position"]["reversal"], fed.mean(axis=0))
    assert result["forced"]["own"] == (A.predict(params, test, "before", forced=True)[0] == test[:, ::-1]).mean()
    assert sorted(result["forced"]) == sorted(result["forced_by_position"]) == ["other", "own", "reversal", "shifted", "uniform"]
    half_l1 = np.abs(own - np.roll(own, 1, axis=0)).sum(axis=-1) / 2       # per row: 0 the same, 1 no overlap
    assert result["other_change"] == pytest.approx(half_l1.mean()) and 0 < result["other_change"] < 1


def test_decoding_fed_the_right_letters_is_the_argmax_of_teacher_forced_training():
    """forced=True reads in the correct previous letter at every step, as training does: its outputs are the
    argmax of the training path's logits, step by step, whatever the model outputs itself (both queries)."""
    params = A.train(5, True, 20, A.make_test_set(5))[0]
    src = A.make_test_set(5)[:40]
    for query in ("after", "before"):
        fed, _ = A.predict(params, src, query, forced=True)
        assert np.array_equal(fed, teacher_forced_logits(params, src, query).argmax(axis=-1))
        greedy, _ = A.predict(params, src, query)
        assert not np.array_equal(fed, greedy)        # an untrained model's own outputs differ: the feeding matters


@pytest.mark.parametrize("query", ["after", "before"])
def test_the_readout_gradients_from_frozen_features_are_loss_and_grads_own(query):
    rng = np.random.RandomState(5)
    params = A.init_params(rng, True)
    src = rng.randint(0, A.LETTERS, size=(6, 5))
    _, full = A.loss_and_grads(params, src, src[:, ::-1], query, uniform=True)
    grad_Wo, grad_bo = A.readout_grads(params, A.frozen_features(params, src), src[:, ::-1])
    assert np.array_equal(grad_Wo, full["Wo"]) and np.array_equal(grad_bo, full["bo"])


def test_refitting_the_readout_changes_only_wo_and_bo_and_leaves_the_model_untouched(monkeypatch):
    monkeypatch.setattr(A, "REFIT_ROUNDS", 25)
    test = A.make_test_set(5)
    params = A.train(5, True, 30, test)[0]
    before = {name: p.copy() for name, p in params.items()}
    refit = A.refit_readout(params, 5)
    assert all(np.array_equal(params[name], before[name]) for name in params)          # the trained model is kept
    assert all(refit[name] is params[name] for name in params if name not in ("Wo", "bo"))   # frozen
    assert not np.array_equal(refit["Wo"], params["Wo"]) and not np.array_equal(refit["bo"], params["bo"])
    # the refit minimises the loss with 1/T weights: it is lower after than before, on fresh batches
    rng = np.random.RandomState(99)
    src = rng.randint(0, A.LETTERS, size=(200, 5))
    loss = lambda p: A.loss_and_grads(p, src, src[:, ::-1], "after", uniform=True)[0]
    assert loss(refit) < loss(params)


def test_refit_accuracy_is_measured_at_each_checkpoint(monkeypatch):
    monkeypatch.setattr(A, "REFIT_ROUNDS", 12)
    monkeypatch.setattr(A, "REFIT_CHECKPOINTS", (4, 12))
    test = A.make_test_set(5)
    params = A.train(5, True, 20, test)[0]
    at = A.refit_accuracy(params, test, "after")
    assert sorted(at) == [4, 12]
    assert at[12] == A.evaluate(A.refit_readout(params, 5), test, "after", uniform=True)[1]


def test_the_encoder_reads_its_input_in_order_and_the_check_notices_when_it_does_not(monkeypatch):
    test = A.make_test_set(10)[:20]
    params = A.init_params(np.random.RandomState(A.SEED_INIT), True)
    assert A.encoder_reads_in_order(params, test)
    reading_backwards = A.encoder
    monkeypatch.setattr(A, "encoder", lambda p, src: reading_backwards(p, src[:, ::-1]))
    assert not A.encoder_reads_in_order(params, test)


def test_the_books_matrix_is_transcribed_as_the_book_reads_it():
    """The book's own reading of its matrix: row 1's largest 0.18 in column 9, row 2's 0.20 in column 8,
    row 3's 0.25 in column 7, row 4's 0.21 in column 6, row 5's 0.22 in column 5; maximum 0.25."""
    columns, peaks = A.peak_columns(A.BOOK_MATRIX)
    assert list(columns[:5]) == [9, 8, 7, 6, 5] and list(peaks[:5]) == [0.18, 0.20, 0.25, 0.21, 0.22]
    assert A.BOOK_MATRIX.max() == 0.25 and A.BOOK_MATRIX.shape == (10, 10)
    assert np.allclose(A.BOOK_MATRIX.sum(axis=1), 1, atol=0.03)          # rounded to two places, rows sum to about 1


# ---------------------------------------------------------------- does attention pick? (section 五)

def anti_diagonal(height):
    """A 10×10 attention matrix: `height` on the strict reversal, the rest shared equally."""
    return np.eye(10)[::-1] * height + (1 - np.eye(10)[::-1]) * (1 - height) / 9


@pytest.mark.parametrize("per_token, uniform, height, formed", [
    (1.0, 0.35, 0.6, True),         # picks, and on the reversal
    (1.0, 0.90, 0.6, False),        # sharp picture, but taking the picking away costs nothing
    (1.0, 0.35, 0.15, False),       # picking matters, but not on the reversal (1.5× uniform)
    (0.8, 0.70, 0.2, True),         # exactly at both thresholds: 0.10 and 2×
    (0.8, 0.7001, 0.2, False),
    (0.8, 0.70, 0.1999, False),
    (0.8, 0.85, 0.1, False),        # flat; uniform weights even help
])
def test_alignment_formed_rule_on_hand_made_matrices(per_token, uniform, height, formed):
    assert A.alignment_formed(per_token, uniform, anti_diagonal(height)) is formed


def test_diagonal_weight_of_a_hand_made_matrix():
    m = anti_diagonal(0.6)
    assert A.diagonal_weight(m) == pytest.approx(0.6) and A.diagonal_weight(m, -1) == pytest.approx(0.4 / 9)
    assert A.diagonal_multiple(np.full((10, 10), 0.1)) == pytest.approx(1.0)
    assert A.diagonal_multiple(m, -1) == A.diagonal_weight(m, -1) * 10           # the same number, bit for bit


def test_taking_the_picking_away_leaves_the_trained_parameters_untouched():
    test = A.make_test_set(5)
    params = A.train(5, True, 40, test)[0]
    before = {name: p.copy() for name, p in params.items()}
    uniform = A.with_uniform_weights(params, test, "after")
    for name in params:
        assert np.array_equal(params[name], before[name])
    expected = A.evaluate(params, test, "after", uniform=True)
    assert uniform[:2] == expected[:2]
    assert (uniform.weights == 0.2).all()                # the decoder really saw 1/T everywhere


def test_after_round_sees_every_round_and_training_does_not_depend_on_it():
    test = A.make_test_set(5)
    seen = []
    with_hook = A.train(5, True, 25, test, after_round=lambda n, params: seen.append(n))[0]
    plain = A.train(5, True, 25, test)[0]
    assert seen == list(range(1, 26))
    assert all(np.array_equal(with_hook[name], plain[name]) for name in plain)


def test_learning_rate_is_a_parameter_and_lr_default_is_the_lessons():
    test = A.make_test_set(5)
    default, same, other = (A.train(5, True, 20, test, lr=lr)[0] for lr in (A.LR, 0.003, 0.02))
    assert all(np.array_equal(default[name], same[name]) for name in default)
    assert not np.array_equal(default["Wo"], other["Wo"])


def at_column(line, column):
    """The character a terminal draws at this column (a CJK character covers two)."""
    for i in range(len(line)):
        if display_width(line[:i]) == column:
            return line[i]
    return ""


def wide_before(line, column):
    """How many wide characters stand before this column."""
    return next(sum(display_width(c) == 2 for c in line[:i]) for i in range(len(line) + 1)
                if display_width(line[:i]) >= column)


@pytest.mark.parametrize("program", ["generated/attention.py", "generated/experiments.py"])
def test_every_transcript_line_fits_in_100_columns(program):
    wide = [(display_width(line), line) for line in transcript_lines(program) if display_width(line) > 100]
    assert not wide, wide[:3]


@pytest.mark.parametrize("program", ["generated/attention.py", "generated/experiments.py"])
def test_every_transcript_table_lines_up_in_any_monospace_font(program):
    broken = [pair for block in columns.blocks(transcript_lines(program)) for pair in columns.misaligned(block)[:1]]
    assert not broken, "%d blocks; first: %r" % (len(broken), broken[:3])


def test_the_alignment_rule_sees_a_chinese_header_over_numbers_and_lets_labels_after_numbers_be():
    assert columns.misaligned(["第几个键    点积", "1           1.0000"])          # header two wide characters ahead
    assert columns.misaligned(["做法        1", "不用注意力  2"])                # labels of unequal width in front
    assert columns.misaligned(["输出 1  |    ██|", "        1 2 3"])                # a heatmap under plain column numbers
    assert not columns.misaligned(["1.0000   0.5774   逐位正确", "0.25     1.00     反对角线 d 后"])
    assert not columns.misaligned(["输入    1     2", "输出 1    0.10  0.20", "输出 10   0.30  0.40"])
    assert not columns.misaligned(["除以根号 d 后 1", "加 d 后"])                     # words one space apart are no columns
    assert not columns.misaligned(["0.73   不换：模型", "0.72   （戊）第 1 轮时"])    # a label's end is no column
    assert columns.misaligned(["模型  ab 1.00", "  0.73 b 1.00"])                 # a right-aligned last column is


# ---------------------------------------------------------------- what the reader sees

def test_the_heatmap_glyphs_are_five_distinct_levels_and_the_legend_shows_each(capsys):
    assert len(set(A.SHADES)) == len(A.SHADE_LEVELS) + 1 == 5
    assert "▒" not in A.SHADES                      # too close to ░ on a web page's grey background
    matrix = np.full((10, 10), 0.1)
    matrix[0] = [0.05, 0.102, 0.11, 0.15, 0.583, 0.001, 0.001, 0.001, 0.001, 0.001]
    A.heatmap(matrix)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "输入     1 2 3 4 5 6 7 8 9 10"
    assert lines[1] == "输出 1  |  ··░░▓▓██          |"
    assert all(line.endswith("|") and not line.endswith(" ") for line in lines[1:-1])
    assert all(glyph * 2 in lines[-1] for glyph in A.SHADES[1:]) and "空白" in lines[-1]


def test_side_by_side_heatmaps_put_each_column_number_over_its_cells_and_say_the_reversals_column(capsys):
    reversal = np.eye(10)[::-1] * 0.9 + 0.01
    A.heatmaps_side_by_side([np.full((10, 10), 0.1), reversal, reversal])
    legend, header, *rows = capsys.readouterr().out.splitlines()
    assert legend == A.HEATMAP_LEGEND and len(rows) == 10
    for r, row in enumerate(rows):
        assert row.startswith("输出 %-3d应看 %-3d|" % (r + 1, 10 - r))
        bars = [display_width(row[:i]) for i, c in enumerate(row) if c == "|"]
        assert len(bars) == 6                                         # three panels, each framed
        for panel in range(3):
            first_cell = bars[2 * panel] + 1
            assert at_column(header, first_cell) == "1"
            assert at_column(header, first_cell + 18) + at_column(header, first_cell + 19) == "10"   # over the tenth cell
            assert wide_before(header, first_cell) == wide_before(row, first_cell) == 4               # in any font
            cells = row[bars[2 * panel] + 1 - display_width(row[:bars[0]]) + len(row[:bars[0]]):][:20]
            dark = [j // 2 + 1 for j in range(0, 20, 2) if cells[j] == "█"]
            assert dark == ([] if panel == 0 else [10 - r])           # the reversal's column, in the right place


def test_progress_goes_to_stderr_only_when_asked(capsys, monkeypatch):
    test = A.make_test_set(5)
    monkeypatch.delenv("ATTENTION_PROGRESS", raising=False)
    A.train(5, True, 3, test)[0]
    assert capsys.readouterr() == ("", "")          # pytest's stderr is no terminal
    monkeypatch.setenv("ATTENTION_PROGRESS", "1")
    quiet = A.train(5, True, 3, test)[0]
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[0].startswith("开始训练：5 位，用注意力") and "3 轮" in err
    assert err.splitlines()[1].startswith("训练完：")
    monkeypatch.delenv("ATTENTION_PROGRESS")
    loud = A.train(5, True, 3, test)[0]
    assert all(np.array_equal(quiet[name], loud[name]) for name in quiet)


def test_sections_show_their_own_checked_output():
    """The main line (above 「完整实现」) holds the parts a learner reads: 三, 四 and 五; the full
    implementation the gradient check and the untouched parameters; each experiment its own."""
    doc = lesson()

    def heading_of(line, tag):
        return [block.inline.source for event, block, _ in literate.blocks.walk(doc.blocks)
                if event == "open" and isinstance(block, literate.blocks.Heading) and f"h{block.level}" == tag
                and block.line <= line][-1]

    main = doc.transcripts["generated/attention.py"].parts
    assert [heading_of(part.fence_line, "h2")[:2] for part in main] == ["三、", "四、"] + ["五、"] * 3 + ["完整"] * 4
    assert [heading_of(part.fence_line, "h3") for part in main[5:]] == [
        "梯度检查", "第四节的对比", "第五节的规则、两组设置和干预", "读矩阵和画热图"]
    assert main[0].content.splitlines()[-4].startswith("取平均")
    assert main[1].content.startswith("加到 6.5 节的反转任务上")
    experiments = doc.transcripts["generated/experiments.py"].parts
    assert [heading_of(part.fence_line, "h3")[:3] for part in experiments] == [
        "实验一", "实验二", "实验三", "实验四", "实验五", "实验六", "实验七"]


# What a learner fresh from 6.5 reads in a minute, measured on fresh learners: Chinese characters of prose,
# lines of code, lines of program output. What is folded into <details> counts half: about half of it is opened.
LEARNER_RATES = {"prose": 175, "code": 5, "output": 10}


def reading_minutes(lines):
    """Minutes a learner needs for these lines of the lesson, at LEARNER_RATES."""
    counts = {kind: 0.0 for kind in LEARNER_RATES}
    fence, folded = None, 0
    for line in lines:
        share = 0.5 if folded else 1.0
        opens = re.match(r"\s*(`{3,}|~{3,})(.*)$", line)
        if fence is None and opens:
            info = opens.group(2)
            fence = (opens.group(1), "transcript=" in info or info.strip().startswith("text"))
        elif fence is not None:
            if line.strip() == fence[0]:
                fence = None
            elif line.strip():
                counts["output" if fence[1] else "code"] += share
        else:
            folded += line.lstrip().startswith("<details") - line.lstrip().startswith("</details>")
            counts["prose"] += share * len(re.findall(r"[\u4e00-\u9fff]", re.sub(r"<[^>]*>", "", line)))
    return sum(counts[kind] / LEARNER_RATES[kind] for kind in counts)


def test_reading_minutes_counts_prose_code_and_output_at_a_learners_pace_and_folds_half():
    assert reading_minutes(["字" * 175]) == 1.0
    assert reading_minutes(["```python {#a}", "x = 1", "", "y = 2", "```"]) == 2 / 5
    assert reading_minutes(["```text {transcript=generated/a.py}"] + ["0.5"] * 10 + ["```"]) == 1.0
    assert reading_minutes(["<details>", "<summary>折</summary>", "字" * 350, "</details>"]) == (1 + 350) / 2 / 175


def test_the_main_line_ends_at_the_full_implementation_and_reads_in_half_an_hour():
    """One level-2 heading with 「完整实现」 ends the main line. Above it: the code a learner needs (one query's
    attention and one decoder step), the transcript of 三, 四 and 五, and about half an hour of reading at a
    learner's pace, the book's own section being about twenty minutes by the same count."""
    text = (ROOT / "attention.md").read_text(encoding="utf-8").split("\n")
    ends = [i + 1 for i, line in enumerate(text) if line.startswith("## ") and "完整实现" in line]
    assert len(ends) == 1
    end = ends[0]
    doc = lesson()
    main_chunks = sorted(name for name, pieces in doc.chunks.items() if pieces[0].fence_line < end)
    assert main_chunks == ["softmax 与一个查询的注意力", "解码一步"]
    parts = doc.transcripts["generated/attention.py"].parts
    assert [part.part for part in parts if part.fence_line < end] == [1, 2, 3, 4, 5]
    assert all(piece.fence_line > end for pieces in doc.roots.values() for piece in pieces)
    assert reading_minutes(text[:end - 1]) <= 30


def test_every_fence_of_the_lesson_has_its_caption():
    """attention.md uses captions, so tangle.py holds every chunk, root and transcript fence to one."""
    doc = lesson()
    fences = [piece.fence_line for table in (doc.chunks, doc.roots) for pieces in table.values() for piece in pieces]
    fences += [part.fence_line for transcript in doc.transcripts.values() for part in transcript.pieces()]
    assert sorted(doc.captions) == sorted(fences)


@pytest.mark.parametrize("program", ["generated/attention.py", "generated/experiments.py"])
def test_every_top_level_name_is_defined_once_and_imports_are_explicit(program):
    """The function a reader reads in the lesson is the one that runs: no name is defined twice (a
    later definition would silently replace the one explained earlier), nothing is kept under a
    second name to restore it, and nothing arrives by a star import."""
    import ast
    tree = ast.parse((ROOT / program).read_text(encoding="utf-8"))
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [leaf.id for target in node.targets for leaf in ast.walk(target) if isinstance(leaf, ast.Name)]
        elif isinstance(node, ast.ImportFrom):
            assert all(alias.name != "*" for alias in node.names), "star import in " + program
            names += [alias.asname or alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            names += [alias.asname or alias.name.split(".")[0] for alias in node.names]
    twice = sorted({name for name in names if names.count(name) > 1})
    assert not twice, twice
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    def names_only(value):                                                   # f, or (f, g)
        return [value] if isinstance(value, ast.Name) else getattr(value, "elts", None)
    aliases = [node for node in tree.body if isinstance(node, ast.Assign) and names_only(node.value)   # f_kept = f
               and all(isinstance(v, ast.Name) for v in names_only(node.value))
               and {v.id for v in names_only(node.value)} & functions]
    assert not aliases, [ast.unparse(node) for node in aliases]
