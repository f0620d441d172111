"""Tests of the lesson's program, generated/attention.py (tangled from attention.md).

Each test compares against an independent reference: a plain Python loop, NumPy's own
functions, exact integer arithmetic, central finite differences, or the transcript.
"""
import literate.blocks  # noqa: E402
import literate.markdown  # noqa: E402
import columns  # noqa: E402  (tests/columns.py: when a table lines up in any font)
from columns import display_width  # noqa: E402
import contextlib
import dataclasses
import importlib.util
import multiprocessing
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from unittest import mock

from concurrent.futures import Future

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
    _, _, dots, scaled, alpha, context, average = A.hand_example()
    assert ["%.4f" % v for v in dots] == ["1.0000", "0.0000", "2.0000", "1.0000"]
    assert ["%.4f" % v for v in scaled] == ["0.5774", "0.0000", "1.1547", "0.5774"]
    assert ["%.4f" % v for v in alpha] == ["0.2303", "0.1293", "0.4102", "0.2303"]
    assert ["%+.4f" % v for v in context] == ["+0.8707", "+0.3595", "+0.4102"]
    assert ["%+.4f" % v for v in average] == ["+0.7500", "+0.5000", "+0.2500"]


def test_hand_example_matches_numpy_reference():
    q, K, _, _, alpha, context, average = A.hand_example()
    scores = K @ q / np.sqrt(3.0)
    ref = np.exp(scores - scores.max())
    ref /= ref.sum()
    np.testing.assert_allclose(alpha, ref, rtol=1e-15)
    np.testing.assert_allclose(context, ref @ K, rtol=1e-15)
    np.testing.assert_array_equal(average, K.mean(axis=0))


def test_attend_one_is_the_hand_example_and_the_batched_attend_gives_its_bits():
    """The main line's one-query attend_one, the hand example's three steps and the batched
    attend of the full implementation: the same bits."""
    example = A.hand_example()
    q, K, alpha, context, average = example.q, example.K, example.alpha, example.context, example.average
    assert all(map(np.array_equal, A.attend_one(q, K), (context, alpha)))
    for fixed, expected in ((None, (context, alpha)), (np.full(4, 0.25), (average, np.full(4, 0.25)))):
        batched = A.attend(q[None, None], K[None], fixed)         # a batch of one sequence, one query
        assert [a.shape for a in batched] == [(1, 1, 3), (1, 1, 4)]
        assert all(np.array_equal(a[0, 0], b) for a, b in zip(batched, expected))
    rng = np.random.RandomState(11)
    K = rng.uniform(-1, 1, size=(3, 7, 16))
    q = rng.uniform(-1, 1, size=(3, 16))
    context, alpha = A.attend(q[:, None], K)
    for b in range(3):
        one = A.attend_one(q[b], K[b])
        assert np.array_equal(one[0], context[b, 0]) and np.array_equal(one[1], alpha[b, 0])


def test_mm_takes_vectors_as_matmul_does():
    rng = np.random.RandomState(12)
    a, v = rng.uniform(-1, 1, size=(5, 4)), rng.uniform(-1, 1, size=4)
    w = rng.uniform(-1, 1, size=5)
    assert A.mm(a, v).shape == (5,) and np.array_equal(A.mm(a, v), A.mm(a, v[:, None])[:, 0])
    assert A.mm(w, a).shape == (4,) and np.array_equal(A.mm(w, a), A.mm(w[None, :], a)[0])
    np.testing.assert_allclose(A.mm(a, v), a @ v, rtol=1e-13)


def teacher_forced_logits(model, src):
    """The training path: every step reads the correct previous letter, all steps at once (decoder,
    decoder_output), with the query written out here from the model's setting. src (M, B, T), the model
    axis first; the logits (M, B, T, V)."""
    hs_enc = A.encoder(model, src)
    M, B, _ = src.shape
    dec_in = np.concatenate([np.full((M, B, 1), A.START), src[:, :, ::-1][:, :, :-1]], axis=2)
    hs_dec = A.decoder(model, dec_in, hs_enc[:, :, -1])
    query = model.setting.query
    queries = hs_dec if query == "after" else np.concatenate([hs_enc[:, :, -1:], hs_dec[:, :, :-1]], axis=2)
    return A.decoder_output(model, hs_dec, hs_enc, queries)[0]


@pytest.mark.parametrize("wrong, says", [
    (dict(query="aftr"), "query 只能是 'after' 或 'before'，不是 'aftr'"),
    (dict(query="After"), "不是 'After'"),
    (dict(attention=False, uniform=True), "要 attention=True"),
])
def test_a_setting_that_would_train_another_model_is_refused(wrong, says):
    """Misspelt, the query once trained the other model without a word; the average control needs attention."""
    with pytest.raises(ValueError, match=re.escape(says)):
        A.Setting(**wrong)
    assert [A.Setting(**right).describe() for right in (dict(query="before"), dict(attention=False))] == [
        "用注意力，更新前的查询", "不用注意力"]


@pytest.mark.parametrize("seeds", [(5,), (5, 6)], ids=["one model", "two models stacked"])
def test_decode_step_is_one_step_of_teacher_forced_training(seeds):
    """decode_step (the main line's decoder, one step at a time) and the training path (all
    steps at once through decoder and decoder_output) give the same logits, both queries; with
    models stacked, each model's batch and state go through its own parameters."""
    params = A.stack([A.init_params(np.random.RandomState(seed), True) for seed in seeds])
    M = len(seeds)
    src = A.make_test_set(5)[:6 * M].reshape(M, 6, 5)
    hs_enc = A.encoder(params, src)
    dec_in = np.concatenate([np.full((M, 6, 1), A.START), src[:, :, ::-1][:, :, :-1]], axis=2)
    for query in ("after", "before"):
        model = A.Model(params, A.Setting(query=query))
        logits_all = teacher_forced_logits(model, src)
        h = hs_enc[:, :, -1]
        for t in range(5):
            h, logits, alpha = A.decode_step(model, h, dec_in[:, :, t], hs_enc)
            assert logits.shape == (M, 6, A.VOCAB) and alpha.shape == (M, 6, 1, 5) and h.shape == (M, 6, A.HIDDEN)
            np.testing.assert_allclose(logits, logits_all[:, :, t], rtol=1e-12, atol=1e-15)


def test_queries_of_and_its_backward_move_each_step_to_where_it_came_from():
    """The before-update query of step t is the decoder's state t − 1 (step 1: the encoder's last state);
    queries_backward hands each step's gradient back to exactly that state."""
    rng = np.random.RandomState(13)
    hs_enc, hs_dec, dq = rng.randn(2, 3, 4, 3), rng.randn(2, 3, 4, 3), rng.randn(2, 3, 4, 3)   # (M, B, T, H)
    assert A.queries_of(hs_enc, hs_dec, "after") is hs_dec
    before = A.queries_of(hs_enc, hs_dec, "before")
    assert before.shape == hs_dec.shape
    assert np.array_equal(before[:, :, 0], hs_enc[:, :, -1]) and np.array_equal(before[:, :, 1:], hs_dec[:, :, :-1])
    d_dec, d_enc_last = A.queries_backward(dq, "after")
    assert d_dec is dq and d_enc_last is None
    d_dec, d_enc_last = A.queries_backward(dq, "before")
    assert d_dec.shape == dq.shape and d_enc_last.shape == (2, 3, 3)
    assert np.array_equal(d_enc_last, dq[:, :, 0]) and np.array_equal(d_dec[:, :, :-1], dq[:, :, 1:])
    assert not d_dec[:, :, -1].any()
    # the backward is the transpose of the forward: <queries_of(x), dq> = <x, queries_backward(dq)>
    forward_dot = (before * dq).sum()
    backward_dot = (hs_dec * d_dec).sum() + (hs_enc[:, :, -1] * d_enc_last).sum()
    assert forward_dot == pytest.approx(backward_dot, rel=1e-13)


def test_the_gradient_check_the_lesson_prints_can_fail(monkeypatch):
    """gradient_check compares against central differences; a wrong gradient shows up in it."""
    setting = A.Setting(query="before")
    assert A.gradient_check(setting) < 1e-6
    original = A.loss_and_grads

    def wrong(model, src, tgt):
        losses, grads = original(model, src, tgt)
        grads["dec_Wh"] = grads["dec_Wh"] * 1.01
        return losses, grads
    monkeypatch.setattr(A, "loss_and_grads", wrong)
    assert A.gradient_check(setting) > 1e-3


# ---------------------------------------------------------------- attention

def naive_attend(q, K):
    """One query, written as the three steps with Python loops; the values are the keys."""
    d = len(q)
    scores = [sum(q[i] * k[i] for i in range(d)) / d ** 0.5 for k in K]
    top = max(scores)
    e = [np.exp(s - top) for s in scores]
    alpha = [x / sum(e) for x in e]
    context = [sum(w * k[j] for w, k in zip(alpha, K)) for j in range(K.shape[1])]
    return np.array(context), np.array(alpha)


@pytest.mark.parametrize("seed", range(5))
def test_attend_single_query_equals_naive_loop(seed):
    rng = np.random.RandomState(seed)
    q, K = rng.randn(7), rng.randn(9, 7)
    context, alpha = A.attend(q[None, None], K[None])
    ref_context, ref_alpha = naive_attend(q, K)
    np.testing.assert_allclose(alpha[0, 0], ref_alpha, rtol=1e-12)
    np.testing.assert_allclose(context[0, 0], ref_context, rtol=1e-12, atol=1e-12)
    one_context, one_alpha = A.attend_one(q, K)
    np.testing.assert_allclose(one_alpha, ref_alpha, rtol=1e-12)
    np.testing.assert_allclose(one_context, ref_context, rtol=1e-12, atol=1e-12)


def test_attend_batch_of_queries_equals_naive_loop():
    rng = np.random.RandomState(7)
    q, K = rng.randn(6, 16), rng.randn(6, 10, 16)
    context, alpha = A.attend(q[:, None], K)        # one query per sequence
    assert context.shape == (6, 1, 16) and alpha.shape == (6, 1, 10)
    for b in range(6):
        ref_context, ref_alpha = naive_attend(q[b], K[b])
        np.testing.assert_allclose(alpha[b, 0], ref_alpha, rtol=1e-12)
        np.testing.assert_allclose(context[b, 0], ref_context, rtol=1e-12, atol=1e-12)


def test_attend_many_queries_per_batch_equals_one_at_a_time():
    rng = np.random.RandomState(8)
    Q, K = rng.randn(4, 5, 16), rng.randn(4, 10, 16)
    context, alpha = A.attend(Q, K)
    assert alpha.shape == (4, 5, 10) and context.shape == (4, 5, 16)
    for t in range(5):
        c, w = A.attend(Q[:, t:t + 1], K)
        np.testing.assert_allclose(alpha[:, t], w[:, 0], rtol=1e-12)
        np.testing.assert_allclose(context[:, t], c[:, 0], rtol=1e-12, atol=1e-12)
        for b in range(4):                              # and one query at a time, as the main line computes it
            c_one, w_one = A.attend_one(Q[b, t], K[b])
            np.testing.assert_allclose(w_one, alpha[b, t], rtol=1e-12)
            np.testing.assert_allclose(c_one, context[b, t], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_weights_are_positive_sum_to_one_and_context_is_convex(seed):
    rng = np.random.RandomState(100 + seed)
    scale = 10.0 ** rng.uniform(-2, 1)
    q, K = scale * rng.randn(16), scale * rng.randn(12, 16)
    context, alpha = A.attend(q[None, None], K[None])
    context, alpha = context[0, 0], alpha[0, 0]
    assert (alpha > 0).all()
    assert abs(alpha.sum() - 1) < 1e-14
    assert (context >= K.min(axis=0) - 1e-12).all() and (context <= K.max(axis=0) + 1e-12).all()


def test_fixed_weights_take_the_mean_of_the_values_whatever_the_query():
    """uniform_weights(T) given to attend: every query gets the mean of the values, and no gradient
    reaches the queries (the weights do not depend on them)."""
    uniform = A.uniform_weights(10)
    assert uniform.shape == (10, 10) and (uniform == 0.1).all()
    rng = np.random.RandomState(9)
    K = rng.randn(3, 10, 16)
    for Q in (rng.randn(3, 10, 16), 100 * rng.randn(3, 10, 16)):
        context, alpha = A.attend(Q, K, uniform)
        assert (alpha == 0.1).all() and alpha.shape == (3, 10, 10)
        np.testing.assert_allclose(context, np.repeat(K.mean(axis=1, keepdims=True), 10, axis=1), rtol=1e-13, atol=1e-15)
    dctx, Q = rng.randn(3, 4, 16), rng.randn(3, 4, 16)
    dQ, dK = A.attend_backward(dctx, Q, K, np.full((3, 4, 10), 0.1), fixed=True)
    assert dQ.shape == Q.shape and not dQ.any()          # the weights do not depend on the query
    np.testing.assert_allclose(dK, np.repeat(0.1 * dctx.sum(axis=1, keepdims=True), 10, axis=1), rtol=1e-12)
    _, dK_scored = A.attend_backward(dctx, Q, K, np.full((3, 4, 10), 0.1))
    assert not np.allclose(dK_scored, dK)                # scored weights send a gradient through the keys too


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
    ((1, 320, 16), (1, 16, 16)), ((3, 160, 32), (3, 32, 6)), ((2, 16, 320), (2, 320, 16)), ((2, 2, 3), (2, 3, 4)),
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
                   ((32, 10, 10), (32, 10, 16)), ((32, 10, 32), (32, 6)), ((100, 1, 16), (100, 16, 10)),
                   ((1, 320, 16), (1, 16, 16)), ((3, 160, 32), (3, 32, 6)), ((2, 16, 320), (2, 320, 16))]:
        a, b = rng.randn(*sa), rng.randn(*sb)
        np.testing.assert_allclose(A.mm(a, b), a @ b, rtol=1e-12, atol=1e-12)


def test_right_multiplier_gives_mms_bits_in_the_transposed_layout():
    rng = np.random.RandomState(5)
    W, x = rng.randn(1, 16, 16), rng.randn(32, 16)              # one model: W (1, K, N)
    times_W = A.right_multiplier(W, 32)
    assert np.array_equal(times_W(np.ascontiguousarray(x.T)), A.mm(x, W[0]).T)
    assert np.array_equal(times_W(x.T), A.mm(x, W[0]).T)       # a transposed view works too
    assert np.array_equal(A.right_multiplier(np.swapaxes(W, 1, 2), 32)(x.T), A.mm(x, W[0].T).T)


def test_right_multiplier_multiplies_each_models_columns_by_its_own_matrix():
    """W (M, K, N) and x_cols (K, M·batch), the first model's batch of columns first: each model's columns
    come out as mm of its rows by its own W, bit for bit; a model's columns never see another's W."""
    rng = np.random.RandomState(6)
    W, x = rng.randn(3, 16, 6), rng.randn(3, 32, 16)
    x_cols = np.concatenate([x[m].T for m in range(3)], axis=1)      # (K, M·batch)
    out = A.right_multiplier(W, 32)(x_cols)
    assert out.shape == (6, 3 * 32)
    for m in range(3):
        assert same_bits(out[:, m * 32:(m + 1) * 32], A.mm(x[m], W[m]).T)
    swapped = A.right_multiplier(W[::-1].copy(), 32)(x_cols)        # the same columns, the models' W in another order
    assert not np.array_equal(swapped[:, :32], out[:, :32]) and same_bits(swapped[:, 32:64], out[:, 32:64])


# The lesson's rnn, rnn_backward and input_grads come two ways: with FAST off, the loops written as the
# formula (one (B, H) state per step, Wx's gradient as the one-hot matrix's transpose times dz); with FAST on
# (what the program runs), transposed loops and np.bincount. The two must give the same bits; the plain
# loops are in turn checked against the recurrence written out with NumPy.

def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@contextlib.contextmanager
def plain_loops():
    """The program with FAST off: rnn, rnn_backward and input_grads run the loops written as the formula."""
    with mock.patch.object(A, "FAST", False):
        yield


def both_ways(compute):
    """compute() with the fast loops (the program as it runs) and with the plain ones: (fast, plain)."""
    assert A.FAST is True
    fast = compute()
    with plain_loops():
        plain = compute()
    return fast, plain


def recurrence(x_rows, Wh, h0, dhs, tokens, Wx):
    """rnn, rnn_backward, input_grads and the bias's gradient in turn: (hs, dz, dWh, dh0, dWx, db)."""
    hs = A.rnn(x_rows, Wh, h0)
    dz, dWh, dh0 = A.rnn_backward(dhs, hs, h0, Wh)
    return hs, dz, dWh, dh0, A.input_grads(dz, tokens, Wx), A.bias_grad(dz)


def laid_out(x, layout):
    """x in the memory layout backward hands rnn_backward: rows (C order), or hidden units outermost, as mm
    returns a product (the model without attention passes the readout's gradient straight on)."""
    if layout == "rows":
        return np.ascontiguousarray(x)
    return np.moveaxis(np.ascontiguousarray(np.moveaxis(x, -1, 0)), 0, -1)


def test_the_flag_chooses_which_loops_run(monkeypatch):
    """FAST on sends rnn, rnn_backward and input_grads to the fast versions, FAST off keeps them in the
    plain loops: the comparisons below compare two different computations."""
    for name in ("rnn_fast", "rnn_backward_fast", "input_grads_fast"):
        monkeypatch.setattr(A, name, lambda *args, name=name: name)
    rng = np.random.RandomState(4)
    x_rows, Wh, h0, dhs = rng.randn(1, 3, 4, 16), rng.randn(1, 16, 16) / 4, rng.randn(1, 3, 16), rng.randn(1, 3, 4, 16)
    tokens, Wx = rng.randint(0, A.VOCAB, size=(1, 3, 4)), np.zeros((1, A.VOCAB, 16))
    assert A.FAST is True                                   # the lesson runs the fast loops
    assert A.rnn(x_rows, Wh, h0) == "rnn_fast" and A.rnn_backward(dhs, x_rows, h0, Wh) == "rnn_backward_fast"
    assert A.input_grads(dhs, tokens, Wx) == "input_grads_fast"
    monkeypatch.setattr(A, "FAST", False)
    hs, dz, dWh, dh0, dWx, db = recurrence(x_rows, Wh, h0, dhs, tokens, Wx)
    assert hs.shape == dz.shape == (1, 3, 4, 16) and dWh.shape == (1, 16, 16) and dh0.shape == (1, 3, 16)
    assert dWx.shape == (1, A.VOCAB, 16) and db.shape == (1, 16)


@pytest.mark.parametrize("layout", ["rows", "units outermost"])
@pytest.mark.parametrize("B, T", [(32, 5), (32, 10), (100, 5), (100, 10), (3, 4)])
def test_the_fast_loops_give_the_plain_loops_bits(B, T, layout):
    """The transposed loops (right_multiplier) and np.bincount against the formula's loops: same bits on
    every shape the lesson uses (batch 32 in training, 100 in evaluation), whatever the layout of the
    gradient coming in, down to the bias's gradient summed from dz."""
    rng = np.random.RandomState(B + T)
    x_rows, Wh, h0 = rng.randn(1, B, T, 16), rng.randn(1, 16, 16) / 4, rng.randn(1, B, 16)   # one model: M = 1
    dhs = laid_out(rng.randn(1, B, T, 16), layout)
    tokens = rng.randint(0, A.VOCAB, size=(1, B, T))
    fast, plain = both_ways(lambda: recurrence(x_rows, Wh, h0, dhs, tokens, np.zeros((1, A.VOCAB, 16))))
    assert fast[0].shape == (1, B, T, 16) and fast[4].shape == (1, A.VOCAB, 16)
    assert [same_bits(a, b) for a, b in zip(fast, plain)] == [True] * 6


@pytest.mark.parametrize("M, B, T", [(1, 32, 5), (1, 32, 10), (5, 32, 5), (5, 32, 10), (2, 3, 4)])
def test_stacked_models_each_get_the_bits_of_their_own_loop(M, B, T):
    """M models stacked (Wh (M, H, H), a batch (M, B, …) of which model m reads batch m; a single model is a
    stack of one): the fast and the plain loops agree on the stack, and each model's states and gradients are
    exactly what the plain loop gives that model alone."""
    rng = np.random.RandomState(M * B + T)
    x_rows, Wh, h0, dhs = rng.randn(M, B, T, 16), rng.randn(M, 16, 16) / 4, rng.randn(M, B, 16), rng.randn(M, B, T, 16)
    tokens = rng.randint(0, A.VOCAB, size=(M, B, T))
    fast, plain = both_ways(lambda: recurrence(x_rows, Wh, h0, dhs, tokens, np.zeros((M, A.VOCAB, 16))))
    assert [same_bits(a, b) for a, b in zip(fast, plain)] == [True] * 6
    hs, dz, dWh, dh0, dWx, db = fast
    assert hs.shape == dz.shape == (M, B, T, 16) and dh0.shape == (M, B, 16)
    assert dWh.shape == (M, 16, 16) and dWx.shape == (M, A.VOCAB, 16) and db.shape == (M, 16)
    for m in range(M):
        mine = slice(m, m + 1)                                         # model m alone: a stack of one
        with plain_loops():
            alone = recurrence(x_rows[mine], Wh[mine], h0[mine], dhs[mine], tokens[mine], np.zeros((1, A.VOCAB, 16)))
        mine_of_stack = [a[mine] for a in fast]
        assert [same_bits(a, b) for a, b in zip(mine_of_stack, alone)] == [True] * 6


def test_the_plain_loops_are_the_formula_written_out():
    """The plain loops (FAST off) against the recurrence, its backward and the one-hot product written out
    with NumPy's own tanh, @ and indexing (to rounding): the bits the fast loops match are the formula's."""
    rng = np.random.RandomState(3)
    x_rows, Wh, h0, dhs = rng.randn(2, 4, 6, 16), rng.randn(2, 16, 16) / 4, rng.randn(2, 4, 16), rng.randn(2, 4, 6, 16)
    tokens = rng.randint(0, A.VOCAB, size=(2, 4, 6))     # two models stacked, each with its own Wh
    with plain_loops():
        hs, dz, dWh, dh0, dWx, db = recurrence(x_rows, Wh, h0, dhs, tokens, np.zeros((2, A.VOCAB, 16)))
    ref_hs = [h0]
    for t in range(6):                                    # h_t = tanh(x_t + h_{t−1} Wh), each model its own Wh
        ref_hs.append(np.tanh(x_rows[:, :, t] + ref_hs[-1] @ Wh))
    np.testing.assert_allclose(hs, np.stack(ref_hs[1:], axis=2), rtol=1e-13, atol=1e-15)
    ref_dz, back = np.empty_like(dz), np.zeros_like(h0)
    for t in reversed(range(6)):                          # dz_t = (dhs_t + dz_{t+1} Whᵀ) (1 − h_t²)
        ref_dz[:, :, t] = (dhs[:, :, t] + back) * (1 - ref_hs[t + 1] ** 2)
        back = ref_dz[:, :, t] @ np.swapaxes(Wh, 1, 2)
    h_prev = np.stack(ref_hs[:-1], axis=2)                # the h_{t−1} each step multiplies by Wh
    np.testing.assert_allclose(dz, ref_dz, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dWh, np.einsum("mbti,mbtj->mij", h_prev, ref_dz), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dh0, back, rtol=1e-12, atol=1e-14)
    ref_dWx = np.zeros((2, A.VOCAB, 16))
    for m, b, t in np.ndindex(tokens.shape):              # each step's dz goes to its model's row of the token it read
        ref_dWx[m, tokens[m, b, t]] += ref_dz[m, b, t]
    np.testing.assert_allclose(dWx, ref_dWx, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(db, ref_dz.sum(axis=(1, 2)), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("M, B, T", [(1, 32, 5), (1, 32, 10), (1, 3, 4), (3, 32, 5)])
def test_input_grads_give_the_one_hot_products_bits(M, B, T):
    """Each model's Wx gradient is the one-hot matrix of its own tokens, transposed, times its own dz (all
    samples and steps as rows), added in k order; the bias's gradient the sum of its own rows."""
    rng = np.random.RandomState(7 + T + M)
    tokens, dz = rng.randint(0, A.VOCAB, size=(M, B, T)), rng.randn(M, B, T, 16)
    fast, plain = both_ways(lambda: A.input_grads(dz, tokens, np.zeros((M, A.VOCAB, 16))))
    assert same_bits(fast, plain) and fast.shape == (M, A.VOCAB, 16)
    db = A.bias_grad(dz)
    assert db.shape == (M, 16)
    for m in range(M):
        rows = dz[m].reshape(-1, 16)                                             # model m's rows (B·T, H)
        one_hot_product = A.mm(A.one_hot(tokens[m].reshape(-1)).T, rows)         # one_hot(tokens)ᵀ @ dz, in k order
        assert same_bits(plain[m], one_hot_product)
        assert same_bits(db[m], rows.sum(axis=0))
        np.testing.assert_allclose(one_hot_product, A.one_hot(tokens[m]).reshape(-1, A.VOCAB).T @ rows, rtol=1e-12)


def test_stack_puts_the_model_axis_first_and_each_model_reads_only_its_own_parameters():
    """stack makes every array (M, …) with model m's own at index m; model_numbers pairs batch m with model m;
    lookup, linear, affine, weight_grad and bias_grad give each model exactly what its own parameters give its
    own batch alone, bit for bit; and a change to one model's parameters reaches only that model's batch."""
    models = [A.init_params(np.random.RandomState(seed), True) for seed in (40, 41, 42)]
    stacked = A.stack(models)
    assert list(stacked) == list(models[0])
    for name in stacked:
        assert stacked[name].shape == (3,) + models[0][name].shape
        assert all(same_bits(stacked[name][m], models[m][name]) for m in range(3))
    assert all(A.stack(models[1:2])[name].shape == (1,) + models[1][name].shape for name in stacked)   # M = 1
    rng = np.random.RandomState(43)
    tokens = rng.randint(0, A.VOCAB, size=(3, 4, 5))
    numbers = A.model_numbers(tokens)
    assert numbers.shape == (3, 1, 1) and list(numbers.ravel()) == [0, 1, 2]
    assert A.model_numbers(tokens[:, :, 0]).shape == (3, 1) and A.model_numbers(tokens[:1]).shape == (1, 1, 1)
    Wx, b = stacked["enc_Wx"], rng.randn(3, 16)                         # a non-zero bias, so that it shows
    looked = A.lookup(Wx, b, tokens)
    assert looked.shape == (3, 4, 5, 16)
    for m in range(3):
        assert same_bits(looked[m], Wx[m][tokens[m]] + b[m])
        np.testing.assert_allclose(looked[m], A.one_hot(tokens[m]) @ Wx[m] + b[m], rtol=1e-13)
    x, d, W, bo = rng.randn(3, 4, 5, 32), rng.randn(3, 4, 5, A.VOCAB), stacked["Wo"], rng.randn(3, A.VOCAB)
    assert A.rows(x).shape == (3, 20, 32) and same_bits(A.rows(x)[1], x[1].reshape(20, 32))
    product, shifted = A.linear(x, W), A.affine(x, W, bo)
    assert product.shape == shifted.shape == (3, 4, 5, A.VOCAB)
    dW, db = A.weight_grad(x, d), A.bias_grad(d)
    assert dW.shape == W.shape and db.shape == bo.shape
    for m in range(3):
        alone = A.mm(x[m].reshape(20, 32), W[m]).reshape(4, 5, A.VOCAB)
        assert same_bits(product[m], alone) and same_bits(shifted[m], alone + bo[m])
        assert same_bits(dW[m], A.mm(x[m].reshape(20, 32).T, d[m].reshape(20, A.VOCAB)))
        assert same_bits(db[m], d[m].reshape(20, A.VOCAB).sum(axis=0))
    np.testing.assert_allclose(shifted, x @ W[:, None] + bo[:, None, None], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dW, np.einsum("mbtk,mbtn->mkn", x, d), rtol=1e-12, atol=1e-14)
    changed_Wx, changed_W, changed_b = Wx.copy(), W.copy(), bo.copy()
    changed_Wx[1] += 1.0
    changed_W[1] += 1.0
    changed_b[1] += 1.0
    for after, before in ((A.lookup(changed_Wx, b, tokens), looked), (A.linear(x, changed_W), product),
                          (A.affine(x, W, changed_b), shifted)):
        assert same_bits(after[0], before[0]) and same_bits(after[2], before[2]) and not (after[1] == before[1]).any()


@pytest.mark.parametrize("setting", [A.Setting(attention=False), A.Setting(), A.Setting(query="before", lr=0.02),
                                     A.Setting(uniform=True)], ids=["no-attention", "after", "before", "uniform"])
def test_training_with_the_plain_loops_gives_the_same_bits(setting):
    """A whole short training (two models stacked) with FAST on and off: every parameter and every logged
    loss, bit for bit."""
    test = A.make_test_set(5)
    seeds = ((A.SEED_INIT, A.SEED_BATCH), (5, 105))
    fast, plain = both_ways(lambda: A.train(setting, test, 20, seed_list=seeds))
    for a, b in zip(fast, plain, strict=True):
        assert list(a) == list(b) and all(same_bits(a[name], b[name]) for name in a)
        assert sorted(a.losses) == sorted(b.losses) == [20] and same_bits(a.losses[20], b.losses[20])
    assert fast[0]["Wo"].shape[0] == 1                    # each trained model: a stack of one
    assert not np.array_equal(fast[0]["Wo"][0], A.init_params(np.random.RandomState(A.SEED_INIT), setting.attention)["Wo"])


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


SETTINGS = [A.Setting(attention=False), A.Setting(), A.Setting(query="before"), A.Setting(uniform=True)]
SETTING_IDS = ["no-attention", "after", "before", "uniform"]


def test_a_setting_is_a_frozen_value_with_the_lessons_defaults_and_a_model_is_its_parameters():
    setting = A.Setting()
    assert (setting.attention, setting.query, setting.uniform, setting.lr) == (True, "after", False, A.LR)
    assert A.Setting(lr=0.003) == setting and hash(A.Setting(lr=0.003)) == hash(setting)   # usable as a key
    assert A.Setting(query="before") != setting
    with pytest.raises(dataclasses.FrozenInstanceError):
        setting.query = "before"
    assert [s.describe() for s in SETTINGS] == ["不用注意力", "用注意力，更新后的查询", "用注意力，更新前的查询", "平均对照"]
    params = A.stack([A.init_params(np.random.RandomState(0), True)])       # one model: every array (1, …)
    model = A.Model(params, A.Setting(query="before"))
    assert dict(model) == params and list(model) == list(params) and all(model[n] is params[n] for n in params)
    assert all(p.shape[0] == 1 for p in model.values())
    assert model.setting == A.Setting(query="before") and model.losses == {} and model.course == {}
    assert A.count_params(model) == 934


@pytest.mark.parametrize("setting", SETTINGS, ids=SETTING_IDS)
def test_every_gradient_matches_central_differences(setting):
    """Setting(uniform=True) is the control of section 五: weights fixed at 1/T, gradient only through the values."""
    rng = np.random.RandomState(11)
    model = A.Model(A.stack([A.init_params(np.random.RandomState(12), setting.attention)]), setting)
    for p in model.values():
        p += rng.uniform(-0.5, 0.5, p.shape)           # non-zero biases, larger weights
    src = rng.randint(0, 5, size=(1, 3, 4))            # one model: (M, B, T)
    tgt = src[:, :, ::-1]
    losses, grads = A.loss_and_grads(model, src, tgt)
    assert losses.shape == (1,) and same_bits(losses, A.forward(model, src, tgt)[0])
    assert list(grads) == list(model)
    loss = lambda: A.forward(model, src, tgt)[0][0]
    worst = 0.0
    for name, p in model.items():
        assert grads[name].shape == p.shape
        for idx in np.ndindex(p.shape):
            old = p[idx]
            p[idx] = old + 1e-4
            up = loss()
            p[idx] = old - 1e-4
            down = loss()
            p[idx] = old
            numeric = (up - down) / 2e-4
            err = abs(numeric - grads[name][idx]) / max(abs(numeric), abs(grads[name][idx]), 1e-3)
            worst = max(worst, err)
    assert worst < 1e-6


@pytest.mark.parametrize("setting", SETTINGS[1:], ids=SETTING_IDS[1:])
def test_stacked_gradients_are_each_models_own(setting):
    """loss_and_grads on two models stacked (batch m for model m) gives, for each model, exactly the
    loss and the gradients of that model on its own batch, bit for bit."""
    rng = np.random.RandomState(21)
    models = [A.init_params(np.random.RandomState(seed), True) for seed in (30, 31)]
    src = rng.randint(0, 5, size=(2, 6, 5))
    _, views = A.as_vector(A.stack(models))                              # as train stacks them
    losses, grads = A.loss_and_grads(A.Model(views, setting), src, src[:, :, ::-1])
    assert losses.shape == (2,) and all(grads[name].shape == views[name].shape for name in views)
    for i, params in enumerate(models):
        mine = src[i:i + 1]
        (loss,), alone = A.loss_and_grads(A.Model(A.stack([params]), setting), mine, mine[:, :, ::-1])
        assert same_bits(losses[i], loss)
        assert all(same_bits(grads[name][i:i + 1], alone[name]) for name in params)
    assert not np.array_equal(grads["Wo"][0], grads["Wo"][1])          # two models, two different gradients


def test_flatten_lays_the_gradients_out_as_as_vector_lays_the_parameters():
    """as_vector copies the stacked parameters into theta, one row per model, with views of the same names and
    shapes; flatten(grads, like=views) puts every gradient in the cell of theta that holds its parameter, whatever
    the order of the gradients' names."""
    models = [A.init_params(np.random.RandomState(seed), True) for seed in (30, 31, 32)]
    stacked = A.stack(models)
    theta, views = A.as_vector(stacked)
    assert theta.shape == (3, 934) and all(np.shares_memory(view, theta) for view in views.values())
    assert list(views) == list(stacked) and all(same_bits(views[name], stacked[name]) for name in stacked)
    assert not any(np.shares_memory(p, theta) for p in stacked.values())          # a copy
    for m, params in enumerate(models):
        assert same_bits(theta[m], np.concatenate([params[name].ravel() for name in params]))
    start = sum(stacked[name][0].size for name in list(stacked)[:list(stacked).index("Wo")])   # where Wo begins
    views["Wo"][2, 0, 0] = 7.0                                                     # a view: writes into theta
    assert theta[2, start] == 7.0 and (theta[:2, start] != 7.0).all()
    views["Wo"][2, 0, 0] = stacked["Wo"][2, 0, 0]
    shuffled = {name: views[name] for name in reversed(list(views))}
    assert same_bits(A.flatten(shuffled, like=views), theta)
    one = {name: p[1:2] for name, p in views.items()}                  # a stack of one model
    assert same_bits(A.flatten(one, like=one), theta[1:2])


def test_train_and_evaluate_is_evaluate_of_train():
    setting = A.Setting(query="before", lr=0.02)
    result = A.train_and_evaluate(setting, 5, 15, seeds=(5, 105))
    test = A.make_test_set(5)
    (model,) = A.train(setting, test, 15, seed_list=[(5, 105)])
    assert same_evaluation(result, A.evaluate(model, test))


def test_cross_entropy_averages_each_models_own_rows():
    """M models stacked: each model's loss is the mean cross-entropy over its own batch and steps, and the
    gradient is (p − y) divided by the number of tokens one model sees."""
    rng = np.random.RandomState(22)
    logits, tgt = rng.randn(2, 3, 4, A.VOCAB), rng.randint(0, A.VOCAB, size=(2, 3, 4))
    losses, dlogits = A.cross_entropy(logits, tgt)
    p = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    y = np.eye(A.VOCAB)[tgt]
    picked = -np.log((p * y).sum(axis=-1))                    # (2, 3, 4)
    assert losses.shape == (2,) and dlogits.shape == logits.shape
    np.testing.assert_allclose(losses, [picked[0].mean(), picked[1].mean()], rtol=1e-13)
    np.testing.assert_allclose(dlogits, (p - y) / 12, rtol=1e-12, atol=1e-16)
    one, d_one = A.cross_entropy(logits.reshape(1, 6, 4, A.VOCAB), tgt.reshape(1, 6, 4))   # the same rows, one model
    assert one.shape == (1,) and one[0] == pytest.approx(picked.mean(), rel=1e-13)
    np.testing.assert_allclose(d_one, (p - y).reshape(1, 6, 4, A.VOCAB) / 24, rtol=1e-12, atol=1e-16)


def test_query_before_update_uses_the_previous_state():
    """With the before-update query, step t of teacher-forced training and of greedy decoding both
    query with the state before step t's update: their weights agree on a correct prefix."""
    model = A.Model(A.stack([A.init_params(np.random.RandomState(3), True)]), A.Setting(query="before"))
    src = A.make_test_set(5)[:4][None]                    # one model: (1, B, T)
    tokens, alpha = A.predict(model, src)
    hs_enc = A.encoder(model, src)
    dec_in = np.concatenate([np.full((1, 4, 1), A.START), tokens[:, :, :-1]], axis=2)
    hs_dec = A.decoder(model, dec_in, hs_enc[:, :, -1])
    queries = np.concatenate([hs_enc[:, :, -1:], hs_dec[:, :, :-1]], axis=2)
    _, expected = A.attend(queries, hs_enc)
    assert alpha.shape == expected.shape == (1, 4, 5, 5)
    np.testing.assert_allclose(alpha, expected, rtol=1e-12)


def test_predict_uses_attention_only_when_the_model_has_it():
    src = A.make_test_set(5)[:8][None]                    # one model: (1, B, T)
    for attention in (False, True):
        tokens, alpha = A.predict(untrained(attention), src)
        assert tokens.shape == (1, 8, 5)
        if attention:
            assert alpha.shape == (1, 8, 5, 5)
            np.testing.assert_allclose(alpha.sum(axis=-1), 1.0, rtol=1e-14)
        else:
            assert alpha is None


def same_evaluation(a, b):
    """Two Evaluations, bit for bit (the weights may both be None)."""
    return (a.whole == b.whole and a.per_token == b.per_token and same_bits(a.by_position, b.by_position)
            and (a.alpha is None is b.alpha or same_bits(a.alpha, b.alpha)) and same_bits(a.tokens, b.tokens))


def test_a_model_decodes_with_its_own_setting_without_being_told():
    """evaluate reads the query from the model: a model trained with the before-update query decodes with it.
    The same parameters under the other query decode differently; under an equal setting, the same."""
    test = A.make_test_set(5)
    setting = A.Setting(query="before", lr=0.02)
    (trained,) = A.train(setting, test, 30)
    assert trained.setting == setting
    own = A.evaluate(trained, test)
    assert same_evaluation(own, A.evaluate(A.Model(trained, A.Setting(query="before", lr=0.02)), test))
    other = A.evaluate(A.Model(trained, A.Setting(query="after", lr=0.02)), test)
    assert not np.array_equal(own.alpha, other.alpha)
    hs_enc = A.encoder(trained, test[None])[0]            # step 1 asked with the encoder's last state
    assert same_bits(own.alpha[:, :1], A.attend(hs_enc[:, -1:], hs_enc)[1])
    uniform = A.evaluate(A.Model(trained, A.Setting(uniform=True)), test)   # the control decodes with 1/T
    assert (uniform.alpha == 0.2).all() and same_evaluation(uniform, A.with_uniform_weights(trained, test))


def test_unchanged_marks_exactly_the_elements_training_never_moved():
    """The encoder never reads the start symbol: after training, its row of enc_Wx is the only part
    still at its initial value, in both models; an untrained model is unchanged everywhere."""
    test = A.make_test_set(5)
    for attention in (False, True):
        (model,) = A.train(A.Setting(attention=attention), test, 20)
        same = A.unchanged(model)                          # the one model's masks, without the model axis
        assert list(same) == list(model) and all(same[n].shape == model[n].shape[1:] for n in model)
        assert same["enc_Wx"][A.START].all()
        assert sum(int(mask.sum()) for mask in same.values()) == same["enc_Wx"][A.START].size
        assert all(mask.all() for mask in A.unchanged(untrained(attention)).values())


def test_training_is_bit_for_bit_repeatable():
    test = A.make_test_set(5)
    first = A.train(A.Setting(), test, 60)[0]
    second = A.train(A.Setting(), test, 60)[0]
    for name in first:
        assert np.array_equal(first[name], second[name])
    assert not np.array_equal(first["Wo"], untrained(True)["Wo"])


def five_letter_run(attention):
    test = A.make_test_set(5)
    (model,) = A.train(A.Setting(attention=attention), test, 2000)
    return model, A.evaluate(model, test)


@pytest.fixture(scope="module")
def five_letter_results():
    """Section 四's two trainings, in two processes where fork exists (they are independent)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        five = A.reversal_comparison()
        return {False: (five.no_attn, five.no_attn_result), True: (five.attn, five.attn_result)}
    # the results (Model, Evaluation) travel back by pickle, which finds their classes as attention.Model, …
    with mock.patch.dict(sys.modules, {"attention": A}), \
            ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        return dict(zip((False, True), pool.map(five_letter_run, (False, True))))


def test_the_two_process_fixture_is_what_reversal_comparison_gives(monkeypatch):
    """Short trainings: five_letter_run is reversal_comparison, one model at a time."""
    original = A.train
    monkeypatch.setattr(A, "train", lambda setting, test, rounds: original(setting, test, 30))
    five = A.reversal_comparison()
    expected = {False: (five.no_attn, five.no_attn_result), True: (five.attn, five.attn_result)}
    for attention in (False, True):
        (mine, mine_result), (theirs, theirs_result) = five_letter_run(attention), expected[attention]
        assert mine.setting == theirs.setting == A.Setting(attention=attention)
        assert same_evaluation(mine_result, theirs_result)
        assert all(np.array_equal(mine[name], theirs[name]) for name in theirs)


def test_reversal_table_in_the_transcript_is_what_predict_gives(five_letter_results):
    lines = transcript_lines()
    assert "左列不用注意力，右列用注意力：" in lines
    column = {False: 0, True: 1}                                             # the table's left and right columns
    rows = {line.split()[2]: line.split()[:2] for line in lines
            if line.endswith(("参数", "整串全对", "逐位正确")) and len(line.split()) == 3}
    for attention in (False, True):
        model, result = five_letter_results[attention]
        book = ["%.4f" % figure for figure in A.BOOK_FIVE[attention]]      # the book's two rows beside ours
        printed = [rows[label][column[attention]] for label in ("参数", "整串全对", "逐位正确", "原书：整串全对", "原书：逐位正确")]
        assert printed == [str(A.count_params(model)), "%.4f" % result.whole, "%.4f" % result.per_token] + book


def test_main_prints_the_transcript_even_when_loaded_by_path(capsys, monkeypatch):
    """Loaded by importlib under a name that is not in sys.modules, main() cannot hand work to
    another process; it must fall back to computing in-process and print the same bytes."""
    calls = []
    monkeypatch.setattr(A, "attention_runs", lambda setting, **options: calls.append((setting, options))
                        or fake_runs(setting, options["checkpoints"]))
    monkeypatch.setattr(A, "reversal_comparison", fake_comparison)
    monkeypatch.setattr(A, "train_and_evaluate", fake_plain)
    A.main()
    out = capsys.readouterr().out
    section_five = {"length": 10, "rounds": 3000, "checkpoints": A.GROWTH_CHECKPOINTS}
    assert calls == [(A.BOOK_SETTING, section_five), (A.PICKING_SETTING, section_five)]
    assert "838      934      参数" in out and "1.0000   1.0000   整串全对" in out
    assert "每一行的峰值落在输入第几列：10 9 8 7 6 5 4 3 2 1" in out and "：第一个模型形成了，第二个模型形成了。" in out


def test_main_prints_what_print_transcript_prints_when_it_trains_in_order(capsys, monkeypatch):
    """main starts the two long trainings early in other processes; print_transcript() on its own
    trains them in order, where the lesson's parts are. Same bytes."""
    monkeypatch.setattr(A, "attention_runs", fake_runs)
    monkeypatch.setattr(A, "reversal_comparison", fake_comparison)
    monkeypatch.setattr(A, "train_and_evaluate", fake_plain)
    monkeypatch.setitem(sys.modules, "attention", A)      # importable by name: the runs come back by pickle
    A.main()
    parallel = capsys.readouterr().out
    A.print_transcript()
    in_order = capsys.readouterr().out
    assert parallel == in_order and "：第一个模型形成了，第二个模型形成了。" in in_order
    assert [line for line in in_order.splitlines() if line.startswith(("第一个模型（", "第二个模型（"))] == [
        "第一个模型（更新后的查询，学习率 0.003）：", "第二个模型（更新前的查询，学习率 0.02）："]   # both runs' numbers, each once
    assert "0.6030   0.7500   0.6200   0.7500   逐位正确" in in_order           # the models without attention beside them
    assert "更新后的查询，学习率 0.003" in in_order and "更新前的查询，学习率 0.02" in in_order   # each run's own setting


def test_print_transcript_takes_the_runs_main_started_once_and_trains_the_rest(capsys, monkeypatch):
    """A run main handed to another process (a Future in STARTED) is taken, once, instead of training it again;
    a setting with nothing started is trained where the part stands."""
    monkeypatch.setattr(A, "reversal_comparison", fake_comparison)
    monkeypatch.setattr(A, "train_and_evaluate", fake_plain)
    trained = []
    monkeypatch.setattr(A, "attention_runs", lambda setting, length, rounds, checkpoints: trained.append(setting)
                        or fake_runs(setting, checkpoints))
    started = Future()
    started.set_result(fake_runs(A.BOOK_SETTING, A.GROWTH_CHECKPOINTS)[0])   # as train_section_five returns it
    monkeypatch.setattr(A, "STARTED", {A.BOOK_SETTING: started})
    A.print_transcript()
    out = capsys.readouterr().out
    assert trained == [A.PICKING_SETTING] and A.STARTED == {}
    assert A.BOOK_SETTING == A.Setting() and A.PICKING_SETTING == A.Setting(query="before", lr=0.02)
    assert "：第一个模型形成了，第二个模型形成了。" in out


def untrained(attention, setting=None):
    """The lesson's initial parameters, as a model of this setting (by default the plain one of its kind):
    a stack of one, every array (1, …)."""
    return A.Model(A.stack([A.init_params(np.random.RandomState(A.SEED_INIT), attention)]),
                   setting or A.Setting(attention=attention))


def fake_plain(setting, length, rounds):
    """Stands in for train_and_evaluate: a model without attention, evaluated."""
    assert (setting.attention, length, rounds) == (False, 10, 3000)
    return A.Evaluation(0.1, 0.6 + setting.lr, np.full(10, 0.6), None, None)


def fake_comparison():
    perfect = A.Evaluation(1.0, 1.0, np.ones(5), None, None)
    return A.Comparison(2000, untrained(False), perfect, untrained(True), perfect)


FORCED = {"own": 0.8, "reversal": 0.95, "shifted": 0.3, "other": 0.8, "uniform": 0.8}   # fed the right letters


def fed(accuracy, B=100, T=10):
    """Fed-the-right-letters results (B, T): the first rows right at every position, so many that the share is accuracy."""
    return np.broadcast_to((np.arange(B) < round(B * accuracy))[:, None], (B, T))


def evaluated(per_token, alpha=None, whole=0.0):
    """An Evaluation with this accuracy at every position."""
    return A.Evaluation(whole, per_token, np.full(10, per_token), alpha, None)


def fake_runs(setting, checkpoints=(), *, length=10, rounds=3000):
    """Stands in for attention_runs: one run of section 五's length and rounds, its alignment formed."""
    assert (length, rounds) == (10, 3000)
    matrix = np.eye(10)[::-1] * 0.91 + 0.01                # a perfect reversal
    model = untrained(True, setting)
    model.course = {n: A.Checkpoint(0.75 if n >= 200 else 0.2 + n / 1000, 0.4 if n >= 200 else 0.2 + n / 1000,
                                    matrix if n >= 200 else np.full((10, 10), 0.1))
                    for n in checkpoints}                   # learning from round 0, formed at round 200
    own = A.Evaluation(0.5, 0.75, np.linspace(1, 0.1, 10), np.broadcast_to(matrix, (100, 10, 10)), None)
    greedy = {"reversal": evaluated(0.9), "shifted": evaluated(0.2), "other": evaluated(0.7),
              "uniform": evaluated(0.4, np.full((100, 10, 10), 0.1), whole=0.1)}
    swaps = A.Interventions(greedy, 0.8, {name: fed(v) for name, v in FORCED.items()}, 0.05)
    return [A.Run(model, 3000, own, np.arange(10) % 5, swaps, {n: 0.5 for n in A.REFIT_CHECKPOINTS})]


# ---------------------------------------------------------------- giving a trained model other weights (section 五)

def test_reversal_weights_put_one_on_the_anti_diagonal_or_the_column_left_of_it():
    W = A.reversal_weights(10)
    assert (W.sum(axis=1) == 1).all() and [int(W[r].argmax()) + 1 for r in range(10)] == [10 - r for r in range(10)]
    left = A.reversal_weights(10, shift=-1)
    assert [int(left[r].argmax()) + 1 for r in range(10)] == [9, 8, 7, 6, 5, 4, 3, 2, 1, 10]   # the last row wraps
    assert A.diagonal_weight(W) == 1.0 and A.diagonal_weight(left, -1) == 1.0


def test_decoding_with_fixed_weights_uses_exactly_those_weights():
    test = A.make_test_set(5)[:20]
    (model,) = A.train(A.Setting(), A.make_test_set(5), 30)
    given = np.broadcast_to(A.reversal_weights(5), (20, 5, 5))
    used = A.evaluate(A.Model(model, A.Setting(query="before")), test, given).alpha
    assert np.array_equal(used, given)
    # one (T, T) matrix is every sequence's: the same as the (B, T, T) stack of it
    assert same_evaluation(A.evaluate(model, test, A.reversal_weights(5)), A.evaluate(model, test, given))
    ones = np.full((20, 5, 5), 1 / 5)                      # 1/T given as weights is what a uniform model decodes with
    tokens_given, _ = A.predict(model, test[None], ones)
    tokens_uniform, alpha_uniform = A.predict(A.Model(model, A.Setting(uniform=True)), test[None])
    assert np.array_equal(tokens_given, tokens_uniform) and (alpha_uniform == 0.2).all()
    # the context really comes from the given column: putting all weight on one encoder step changes the answer
    first = np.zeros((20, 5, 5))
    first[..., 0] = 1.0
    assert not np.array_equal(A.predict(model, test[None], first)[0], A.predict(model, test[None], given)[0])


def test_fixed_weights_use_row_t_at_step_t():
    """predict gives step t row t of the fixed weights: the weights it reports, step by step, are those rows,
    and decoding with only the first rows swapped changes nothing before the first swapped step."""
    test = A.make_test_set(5)[:20]
    (model,) = A.train(A.Setting(), A.make_test_set(5), 30)
    rng = np.random.RandomState(6)
    fixed = A.softmax(rng.randn(20, 5, 5))
    tokens, alpha = A.predict(model, test[None], fixed)
    assert alpha.shape == (1, 20, 5, 5) and np.array_equal(alpha[0], fixed)
    later = fixed.copy()
    later[:, 3:] = A.reversal_weights(5)[3:]              # rows 4 and 5 differ
    early_tokens, _ = A.predict(model, test[None], later)
    assert np.array_equal(early_tokens[:, :, :3], tokens[:, :, :3])


def test_interventions_report_what_evaluate_gives_for_each_replacement():
    test = A.make_test_set(5)[:30]
    (model,) = A.train(A.Setting(query="before"), A.make_test_set(5), 30)
    own = A.evaluate(model, test)
    swaps = A.interventions(model, test, own.alpha)
    assert list(swaps.greedy) == ["reversal", "shifted", "other", "uniform"]
    assert sorted(swaps.forced) == ["other", "own", "reversal", "shifted", "uniform"]
    tokens = A.predict(model, test[None], A.reversal_weights(5, shift=-1))[0][0]
    pointed = test[:, [3, 2, 1, 0, 4]]                   # row r reads column 5 − r, the last row wraps to column 5
    assert swaps.follows == (tokens == pointed).mean() and same_bits(swaps.greedy["shifted"].tokens, tokens)
    assert swaps.greedy["shifted"].per_token == (tokens == test[:, ::-1]).mean()
    assert same_evaluation(swaps.greedy["uniform"], A.with_uniform_weights(model, test))
    assert same_evaluation(swaps.greedy["other"], A.evaluate(model, test, np.roll(own.alpha, 1, axis=0)))
    assert same_evaluation(swaps.greedy["reversal"], A.evaluate(model, test, A.reversal_weights(5)))
    fed_reversal = fed_step_by_step(model, test, A.reversal_weights(5)) == test[:, ::-1]
    assert same_bits(swaps.forced["reversal"], fed_reversal) and swaps.forced_accuracy("reversal") == fed_reversal.mean()
    assert same_bits(swaps.forced_by_position("reversal"), fed_reversal.mean(axis=0))
    assert same_bits(swaps.forced["own"], fed_step_by_step(model, test) == test[:, ::-1])
    half_l1 = np.abs(own.alpha - np.roll(own.alpha, 1, axis=0)).sum(axis=-1) / 2    # per row: 0 the same, 1 no overlap
    assert swaps.other_change == pytest.approx(half_l1.mean()) and 0 < swaps.other_change < 1


def fed_step_by_step(model, src, fixed_weights=None):
    """The right letters fed one step at a time through decode_step (each step reads the correct previous letter,
    not the model's own output): the oracle forced_tokens, which does all steps at once, must match.
    One model (M = 1), src (B, T); the tokens (B, T)."""
    B, T = src.shape
    hs_enc = A.encoder(model, src[None])
    h, token = hs_enc[:, :, -1], np.full((1, B), A.START)
    tokens = np.empty((B, T), dtype=np.int64)
    for t in range(T):
        fixed = None if fixed_weights is None else fixed_weights[..., t:t + 1, :]
        h, logits, _ = A.decode_step(model, h, token, hs_enc, fixed_weights=fixed)
        tokens[:, t] = logits[0].argmax(axis=-1)
        token = src[None, :, T - 1 - t]                # the reversal's letter at step t
    return tokens


def test_forced_tokens_are_the_right_letters_fed_step_by_step():
    """forced_tokens reads in the correct previous letter at every step, as training does, all steps at once: the
    same tokens as feeding them one step at a time, for both queries, with the model's own or fixed weights; and
    not the model's own greedy outputs (the feeding matters)."""
    (trained,) = A.train(A.Setting(), A.make_test_set(5), 20)
    src = A.make_test_set(5)[:40]
    for query in ("after", "before"):
        model = A.Model(trained, A.Setting(query=query))
        other = np.roll(A.evaluate(model, src).alpha, 1, axis=0)
        for fixed in (None, A.reversal_weights(5), A.uniform_weights(5), other):
            assert np.array_equal(A.forced_tokens(model, src, fixed), fed_step_by_step(model, src, fixed))
        fed_tokens = A.forced_tokens(model, src)
        assert fed_tokens.shape == src.shape
        assert np.array_equal(fed_tokens, teacher_forced_logits(model, src[None])[0].argmax(axis=-1))
        greedy, _ = A.predict(model, src[None])
        assert not np.array_equal(fed_tokens, greedy[0])  # an untrained model's own outputs differ: the feeding matters


@pytest.mark.parametrize("query", ["after", "before"])
def test_the_readout_gradients_from_frozen_features_are_loss_and_grads_own(query):
    rng = np.random.RandomState(5)
    params = A.stack([A.init_params(rng, True)])                                   # one model
    src = rng.randint(0, A.LETTERS, size=(6, 5))
    uniform = A.Model(params, A.Setting(query=query, uniform=True))
    _, full = A.loss_and_grads(uniform, src[None], src[None, :, ::-1])
    features = A.frozen_features(A.Model(params, A.Setting(query=query)), src)    # whatever the model's own setting
    assert features.shape == (1, 6, 5, 2 * A.HIDDEN)
    assert same_bits(features, A.frozen_features(uniform, src))
    _, dlogits = A.cross_entropy(A.affine(features, params["Wo"], params["bo"]), src[None, :, ::-1])
    grads = A.readout_grads(features, dlogits)
    assert sorted(grads) == ["Wo", "bo"]
    assert same_bits(grads["Wo"], full["Wo"]) and same_bits(grads["bo"], full["bo"])


@pytest.mark.parametrize("f", ["exp", "tanh"])
def test_exp_and_tanh_keep_the_memory_layout_of_their_input(f):
    # The attention's scores are stored batch last; softmax then sums them along a strided axis, in index
    # order. Were exp to hand back a C-ordered array, that sum would run along contiguous memory, in
    # numpy's pairwise order, and the last bits would change.
    x = np.random.RandomState(3).randn(10, 10, 32).transpose(2, 0, 1)
    y = getattr(A, f)(x)
    assert y.strides == x.strides
    np.testing.assert_allclose(y, getattr(np, f)(x), rtol=1e-15)


@pytest.mark.parametrize("f", ["exp", "tanh", "log"])
def test_exp_tanh_and_log_take_a_single_number_too(f):
    # They work in place on arrays; a number, or whole numbers, go through as a one-element float array.
    for x in (0.3, np.float64(0.3), np.array(0.3), 2):
        assert getattr(A, f)(x) == getattr(A, f)(np.array([float(x)]))[0]
    np.testing.assert_array_equal(getattr(A, f)(np.array([1, 2])), getattr(A, f)(np.array([1.0, 2.0])))


@pytest.mark.parametrize("chunk", [1, 3, 10])
def test_the_frozen_batches_are_those_of_one_round_at_a_time(monkeypatch, chunk):
    # Several rounds' batches through the frozen model at once: the same batches, in the same order,
    # with the same bits as drawing and computing one round at a time. Length 10: sums longer than 8
    # are where a change of memory layout would show.
    monkeypatch.setattr(A, "REFIT_CHUNK", chunk)
    test = A.make_test_set(10)
    (model,) = A.train(A.Setting(query="before"), test, 5)
    codes = np.sort(A.seq_codes(test))
    frozen = A.frozen_batches(model, np.random.RandomState(8), 10, codes)
    one_at_a_time = np.random.RandomState(8)
    for _ in range(7):
        src, features = next(frozen)
        expected = A.sample_batch(one_at_a_time, 10, codes)
        assert np.array_equal(src, expected)
        assert same_bits(features, A.frozen_features(model, expected))


@pytest.mark.parametrize("query", ["after", "before"])
def test_the_frozen_context_of_one_step_is_that_of_every_step(query):
    # With 1/T weights every step's context is the same sum: frozen_features computes one step and spreads it.
    # Checked against the whole (B, T, T) product at length 10, where a changed order of addition would show.
    rng = np.random.RandomState(6)
    model = A.Model(A.stack([A.init_params(rng, True)]), A.Setting(query=query))
    src = rng.randint(0, A.LETTERS, size=(7, 10))
    _, hs_enc, hs_dec = A.teacher_forced_states(model, src[None], src[None, :, ::-1])
    every_step, _ = A.attend(hs_dec, hs_enc, A.uniform_weights(10))
    assert same_bits(A.frozen_features(model, src), np.concatenate([hs_dec, every_step], axis=-1))


def test_refitting_the_readout_changes_only_wo_and_bo_and_leaves_the_model_untouched(monkeypatch):
    monkeypatch.setattr(A, "REFIT_ROUNDS", 25)
    test = A.make_test_set(5)
    (model,) = A.train(A.Setting(query="before"), test, 30)
    before = {name: p.copy() for name, p in model.items()}
    refit, _ = A.refit_readout(model, test)
    assert refit.setting == model.setting
    assert all(np.array_equal(model[name], before[name]) for name in model)          # the trained model is kept
    assert all(refit[name] is model[name] for name in model if name not in ("Wo", "bo"))   # frozen
    assert not np.array_equal(refit["Wo"], model["Wo"]) and not np.array_equal(refit["bo"], model["bo"])
    # the refit minimises the loss with 1/T weights: it is lower after than before, on fresh batches
    rng = np.random.RandomState(99)
    src = rng.randint(0, A.LETTERS, size=(1, 200, 5))
    loss = lambda m: A.forward(A.Model(m, A.Setting(uniform=True)), src, src[:, :, ::-1])[0][0]
    assert loss(refit) < loss(model)


def test_the_refit_is_measured_at_each_checkpoint(monkeypatch):
    monkeypatch.setattr(A, "REFIT_ROUNDS", 12)
    monkeypatch.setattr(A, "REFIT_CHECKPOINTS", (4, 12))
    test = A.make_test_set(5)
    (model,) = A.train(A.Setting(), test, 20)
    refit, at = A.refit_readout(model, test)
    assert sorted(at) == [4, 12]
    assert at[12] == A.with_uniform_weights(refit, test).per_token
    monkeypatch.setattr(A, "REFIT_ROUNDS", 4)                 # the same first four rounds, stopped there
    early, _ = A.refit_readout(model, test)
    assert at[4] == A.with_uniform_weights(early, test).per_token


def test_examine_gathers_what_is_measured_on_one_model(monkeypatch):
    monkeypatch.setattr(A, "REFIT_ROUNDS", 6)
    monkeypatch.setattr(A, "REFIT_CHECKPOINTS", (3, 6))
    test = A.make_test_set(5)
    (model,) = A.train(A.Setting(query="before", lr=0.02), test, 30, checkpoints=(10, 30))
    run = A.examine(model, test, 30)
    assert run.model is model and run.setting is model.setting and run.course is model.course and run.rounds == 30
    assert same_evaluation(run.own, A.evaluate(model, test))
    assert run.unpicked is run.swaps.greedy["uniform"]
    assert same_evaluation(run.unpicked, A.with_uniform_weights(model, test))
    assert same_bits(run.matrix, run.own.alpha.mean(axis=0)) and same_bits(run.sample_alpha, run.own.alpha[0])
    assert same_bits(run.sample, test[0])
    assert run.refit == A.refit_readout(model, test)[1] and sorted(run.refit) == [3, 6]
    assert A.examine(model, test, 30, refit=False).refit is None


def test_attention_runs_trains_and_examines_each_pair_of_seeds():
    seeds = ((A.SEED_INIT, A.SEED_BATCH), (5, 105))
    setting = A.Setting(query="before", lr=0.02)
    runs = A.attention_runs(setting, seeds, 5, 12, checkpoints=(6,), refit=False)
    test = A.make_test_set(5)
    for run, seed in zip(runs, seeds, strict=True):
        (model,) = A.train(setting, test, 12, seed_list=[seed], checkpoints=(6,))
        alone = A.examine(model, test, 12, refit=False)
        assert run.setting == setting and run.rounds == 12 and sorted(run.course) == [6]
        assert all(same_bits(run.model[name], model[name]) for name in model)
        assert same_evaluation(run.own, alone.own) and same_evaluation(run.unpicked, alone.unpicked)
        assert same_bits(run.course[6].matrix, alone.course[6].matrix)


def test_the_encoder_reads_its_input_in_order_and_the_check_notices_when_it_does_not(monkeypatch):
    test = A.make_test_set(10)[:20]
    params = A.stack([A.init_params(np.random.RandomState(A.SEED_INIT), True)])
    assert A.encoder_reads_in_order(params, test)
    reading_backwards = A.encoder
    monkeypatch.setattr(A, "encoder", lambda p, src: reading_backwards(p, src[..., ::-1]))   # src (M, B, T)
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
    assert A.Checkpoint(per_token, uniform, anti_diagonal(height)).formed is formed


def test_diagonal_weight_of_a_hand_made_matrix():
    m = anti_diagonal(0.6)
    assert A.diagonal_weight(m) == pytest.approx(0.6) and A.diagonal_weight(m, -1) == pytest.approx(0.4 / 9)
    assert A.diagonal_multiple(np.full((10, 10), 0.1)) == pytest.approx(1.0)
    assert A.diagonal_multiple(m, -1) == A.diagonal_weight(m, -1) * 10           # the same number, bit for bit


def test_taking_the_picking_away_leaves_the_trained_parameters_untouched():
    test = A.make_test_set(5)
    (model,) = A.train(A.Setting(), test, 40)
    before = {name: p.copy() for name, p in model.items()}
    uniform = A.with_uniform_weights(model, test)
    for name in model:
        assert np.array_equal(model[name], before[name])
    assert model.setting == A.Setting()
    assert same_evaluation(uniform, A.evaluate(A.Model(model, A.Setting(uniform=True)), test))
    assert (uniform.alpha == 0.2).all()                # the decoder really saw 1/T everywhere
    assert not same_evaluation(uniform, A.evaluate(model, test))


def test_optimise_logs_every_log_every_rounds_and_the_last_and_measures_at_the_rounds_asked(monkeypatch):
    """optimise on a quadratic: the loss each logged round is exactly what step() returned that round (before
    its update), logged at the multiples of LOG_EVERY and at the last round; measure() runs at the rounds in
    at, after that round's update; theta is updated in place and the loss goes down."""
    monkeypatch.setattr(A, "LOG_EVERY", 10)
    theta = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])         # two models
    returned = []

    def step():
        returned.append((theta * theta).sum(axis=1))
        return returned[-1], 2 * theta
    losses, measured = A.optimise(theta, step, 25, 0.05, measure=lambda: theta.copy(), at=(5, 25))
    assert sorted(losses) == [10, 20, 25] and all(losses[n] is returned[n - 1] for n in losses)
    assert losses[25].shape == (2,) and (losses[25] < losses[10]).all() and (losses[10] < returned[0]).all()
    assert sorted(measured) == [5, 25] and np.array_equal(measured[25], theta)
    assert not np.array_equal(measured[5], measured[25])
    monkeypatch.setattr(A, "LOG_EVERY", 500)
    assert sorted(A.optimise(theta, step, 7, 0.05)[0]) == [7]          # the last round is always logged


def test_training_logs_its_loss_and_the_loss_goes_down(monkeypatch):
    monkeypatch.setattr(A, "LOG_EVERY", 20)
    test = A.make_test_set(5)
    (model,) = A.train(A.Setting(lr=0.02), test, 90)
    assert sorted(model.losses) == [20, 40, 60, 80, 90]
    assert model.losses[90] < model.losses[20] < np.log(A.VOCAB)   # ln 6: guessing among the six tokens


def test_checkpoints_are_measured_during_training_into_the_course_and_change_nothing():
    """train(checkpoints=…) puts a Checkpoint of each model into model.course at each round asked; measuring
    changes no bit of training, and the checkpoint at round n is that of the model trained n rounds."""
    test = A.make_test_set(5)
    seeds = ((A.SEED_INIT, A.SEED_BATCH), (5, 105))
    setting = A.Setting(query="before", lr=0.02)
    measured = A.train(setting, test, 25, seed_list=seeds, checkpoints=(5, 20, 25))
    plain = A.train(setting, test, 25, seed_list=seeds)
    short = A.train(setting, test, 5, seed_list=seeds)
    for m, p, s in zip(measured, plain, short, strict=True):
        assert sorted(m.course) == [5, 20, 25] and p.course == {}
        assert all(same_bits(m[name], p[name]) for name in p) and m.losses == p.losses
        for n, model in ((5, s), (25, p)):
            expected = A.checkpoint(model, test)
            assert m.course[n][:2] == expected[:2] and same_bits(m.course[n].matrix, expected.matrix)
    assert not same_bits(measured[0].course[5].matrix, measured[0].course[25].matrix)


def test_learning_rate_is_part_of_the_setting_and_its_default_is_the_lessons():
    test = A.make_test_set(5)
    default, same, other = (A.train(setting, test, 20)[0] for setting in (A.Setting(), A.Setting(lr=0.003),
                                                                           A.Setting(lr=0.02)))
    assert A.Setting().lr == A.LR == 0.003
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
    hidden = A.train(A.Setting(), test, 3)[0]
    assert capsys.readouterr() == ("", "")          # pytest's stderr is no terminal
    monkeypatch.setenv("ATTENTION_PROGRESS", "1")
    shown = A.train(A.Setting(), test, 3)[0]
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 3
    assert lines[0].startswith("开始训练：5 位，用注意力，更新后的查询") and "3 轮" in lines[0]
    assert lines[1].endswith("第 3 轮，平均交叉熵 %.4f" % shown.losses[3])          # the last round's loss
    assert lines[2].startswith("训练完：")
    assert all(np.array_equal(hidden[name], shown[name]) for name in hidden)


def test_sections_show_their_own_checked_output():
    """The main line (above 「完整实现」) holds the parts a learner reads: 三, 四 and 五; the full
    implementation the gradient check and the untouched parameters; each experiment its own."""
    doc = lesson()

    def heading_of(line, tag):
        return [block.inline.source for event, block, _ in literate.blocks.walk(doc.blocks)
                if event == "open" and isinstance(block, literate.blocks.Heading) and f"h{block.level}" == tag
                and block.line <= line][-1]

    main = doc.transcripts["generated/attention.py"].parts
    assert [heading_of(part.fence_line, "h2")[:2] for part in main] == ["三、", "四、"] + ["五、"] * 3 + ["完整"] * 6
    assert [heading_of(part.fence_line, "h3") for part in main[5:]] == [
        "梯度检查", "第四节的对比", "第五节的规则、两组设置和干预", "对齐是怎么长出来的", "对齐是怎么长出来的",
        "读矩阵和画热图"]
    assert main[0].content.splitlines()[-4].startswith("取平均")
    assert main[1].content.startswith("加到 6.5 节的反转任务上")
    experiments = doc.transcripts["generated/experiments.py"].parts
    assert [heading_of(part.fence_line, "h3")[:3] for part in experiments] == [
        "实验一", "实验二", "实验三", "实验四", "实验五", "实验六", "实验七"]


# What a learner fresh from 6.5 reads in a minute, measured on fresh learners: Chinese characters of prose,
# lines of code, lines of program output. What is folded into <details> counts half: about half of it is opened.
# A figure is looked at, not read: half a minute each (its description, the alt text, is not read). A matrix drawn
# in characters is read cell by cell, counting columns: each of its lines counts as three lines of output.
LEARNER_RATES = {"prose": 175, "code": 5, "output": 10}
FIGURE_MINUTES = 0.5
DRAWN_IN_CHARACTERS = re.compile(r"\|[ ·░▓█]{4,}\|")  # a row of a heatmap drawn in characters: |  ░░██ |


def reading_minutes(lines):
    """Minutes a learner needs for these lines of the lesson, at LEARNER_RATES and FIGURE_MINUTES."""
    counts = {kind: 0.0 for kind in LEARNER_RATES}
    figures, fence, folded = 0.0, None, 0
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
                weight = 3 if fence[1] and DRAWN_IN_CHARACTERS.search(line) else 1
                counts["output" if fence[1] else "code"] += share * weight
        else:
            folded += line.lstrip().startswith("<details") - line.lstrip().startswith("</details>")
            images = re.findall(r"!\[[^\]]*\]\([^)]*\)", line)
            figures += share * FIGURE_MINUTES * len(images)
            text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", re.sub(r"<[^>]*>", "", line))
            counts["prose"] += share * len(re.findall(r"[\u4e00-\u9fff]", text))
    return figures + sum(counts[kind] / LEARNER_RATES[kind] for kind in counts)


def test_reading_minutes_counts_prose_code_and_output_at_a_learners_pace_and_folds_half():
    assert reading_minutes(["字" * 175]) == 1.0
    assert reading_minutes(["```python {#a}", "x = 1", "", "y = 2", "```"]) == 2 / 5
    assert reading_minutes(["```text {transcript=generated/a.py}"] + ["0.5"] * 10 + ["```"]) == 1.0
    assert reading_minutes(["<details>", "<summary>折</summary>", "字" * 350, "</details>"]) == (1 + 350) / 2 / 175


def test_reading_minutes_count_a_figure_as_half_a_minute_and_a_heatmap_in_characters_three_times_its_lines():
    assert reading_minutes(["![一张图，说明文字不算](figures/a.svg)"]) == FIGURE_MINUTES
    assert reading_minutes(["看图：![说明](figures/a.svg)，再看 ![说明](figures/b.svg)"]) == 2 * FIGURE_MINUTES + 4 / 175
    rows = ["输出 1  |  ░░  ██|", "输出 2  |██  ░░  |"]
    assert reading_minutes(["```text {transcript=generated/a.py}", *rows, "0.5 0.5", "```"]) == (3 + 3 + 1) / 10


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


@pytest.mark.parametrize("program", ["generated/attention.py", "generated/experiments.py"])
def test_no_function_takes_more_than_four_positional_parameters(program):
    """A call names what it passes: every function and lambda takes at most four positional parameters (a
    method's self not counted); anything more is passed by keyword."""
    import ast
    tree = ast.parse((ROOT / program).read_text(encoding="utf-8"))
    methods = {id(node) for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef) for node in cls.body
               if isinstance(node, ast.FunctionDef)}
    crowded = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            positional = len(node.args.posonlyargs) + len(node.args.args) - (id(node) in methods)
            if positional > 4:
                crowded.append("%s (line %d): %d" % (getattr(node, "name", "lambda"), node.lineno, positional))
    assert not crowded, crowded


def test_each_trained_model_carries_the_seeds_it_was_trained_from():
    models = A.train(A.Setting(), A.make_test_set(5), 3, seed_list=[(4, 104), (6, 106)])
    assert [model.seeds for model in models] == [(4, 104), (6, 106)]
    assert A.Model({}, A.Setting()).seeds is None                   # not trained: no seeds
    alone = A.train(A.Setting(), A.make_test_set(5), 3, seed_list=[(6, 106)])[0]
    assert all(np.array_equal(alone[name], models[1][name]) for name in alone)   # the seeds are what made it


def test_section_five_at_eight_letters_is_one_line_of_its_settings(capsys, monkeypatch):
    """SECTION_FIVE_LENGTH names section 五's length once: set to 8 (the one line below), the trainings, every
    table, matrix and label the section prints are for 8 letters, and the book's 10-letter figures stand aside
    (its column empty, its matrix not beside ours). The trainings and the output layer's refit are cut short
    (the other lines): what is tested is that nothing of the section still assumes 10."""
    monkeypatch.setattr(A, "SECTION_FIVE_LENGTH", 8)                                  # the one line
    monkeypatch.setattr(A, "SECTION_FIVE_ROUNDS", 20)
    monkeypatch.setattr(A, "GROWTH_CHECKPOINTS", (0, 10, 20))
    monkeypatch.setattr(A, "REFIT_ROUNDS", 20)
    monkeypatch.setattr(A, "REFIT_CHECKPOINTS", (10, 20))
    runs = {name: A.section_five_result(setting) for name, setting in A.SECTION_FIVE.items()}
    plains = {name: A.section_five_result(A.without_attention(setting)) for name, setting in A.SECTION_FIVE.items()}
    assert all(run.matrix.shape == (8, 8) and run.sample.shape == (8,) for run in runs.values())
    assert all(plain.own.tokens.shape == (A.TEST_SIZE, 8) for plain in plains.values())
    A.print_section_five(runs, plains)
    A.print_section_five_matrices(runs)
    A.print_interventions(runs)
    for name, run in runs.items():
        A.print_long_run_numbers(run, name + "模型")
    out = capsys.readouterr().out
    assert out.startswith("8 位，同一个种子，各训练 20 轮；")
    book_cells = [line.split()[0] for line in out.split("\n")[2:7]]     # the table's first column: the book's
    assert book_cells == ["-"] * 5
    assert "拿掉挑选（解码时权重全换成 1/8）之后的逐位正确" in out
    assert "两个权重矩阵，每格是权重的百分之几（均匀是 12.5）；我们的是测试集" in out and "原书" not in out.split("\n\n")[1]
    assert "（甲）倒序要的那一列：第 r 行只有第 9 − r 列是 1" in out and "末行绕回第 8 列" in out
    assert "（丁）全是 1/8（拿掉挑选）" in out and "（戊）全是 1/8，只重新训练输出层 20 轮" in out
    assert "   1    2    3    4    5    6    7    8   模型，解码时的权重" in out
    assert "落在反对角线（输入 9 − r）上的有" in out
    assert not re.search(r"1/10|第 1[01] (?!轮)|10 位", out)                  # a round may be the 10th


def test_a_third_model_in_section_five_is_one_line_of_its_table(capsys):
    """SECTION_FIVE names section 五's models once: with a third entry (the one line below), every table, list and
    count the section prints has a third model. The trainings are short: what is tested is the printing."""
    settings = {**A.SECTION_FIVE, "第三个": A.Setting(query="before", lr=0.01)}   # the one line
    measured = {n: 0.5 for n in A.REFIT_CHECKPOINTS}                           # output layer refit: not run here
    runs = {name: dataclasses.replace(A.attention_runs(setting, rounds=20, checkpoints=(0, 10, 20), refit=False)[0],
                                      refit=measured, refit_forced=0.5) for name, setting in settings.items()}
    plains = {name: A.Plain(A.without_attention(setting), A.train_and_evaluate(A.without_attention(setting), 10, 20))
              for name, setting in settings.items()}
    A.print_section_five(runs, plains)
    A.print_section_five_matrices(runs)
    A.print_growth(runs)
    A.print_interventions(runs)
    out = capsys.readouterr().out
    assert "；第一个模型用更新后的查询，第二个用更新前的查询，第三个用更新前的查询。" in out
    assert "七列依次是：原书（照抄原书或用它的矩阵算）、不用注意力、第一个模型、不用注意力、第二个模型、不用注意力、第三个模型。" in out
    assert "四个权重矩阵" in out and "三个模型训练途中的每一个检查点" in out and out.count("第三个模型（") == 1
    assert "「一」「二」「三」是第一个、第二个、第三个模型" in out and "六列依次是：贪心一、贪心二、贪心三、喂对一" in out
    assert "   第三个模型，不换" in out and "学习率 0.01" in out
