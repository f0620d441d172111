# Generated from attention.md by tangle.py — edit attention.md and run make tangle, or edit here and run make stitch.
# sha256 of the lines below: b060894ab6497d0acde9032fbc810f34c939b78ccf87d056dfcda588fd65f97d
# attention.md:320 (generated/attention.py)
"""注意力：每次解码时自己回头挑重点。

由 attention.md 用 tangle.py 生成。请改 attention.md 再 make tangle；直接改了这个文件，make stitch 把改动搬回 attention.md。
运行：python generated/attention.py
"""
import ctypes
import os
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import NamedTuple

import numpy as np

# attention.md:29 (softmax 与一个查询的注意力)
def softmax(x, axis=-1):
    z = exp(x - x.max(axis=axis, keepdims=True))   # 先减去最大值：结果不变，exp 不会溢出
    return z / z.sum(axis=axis, keepdims=True)


def attend_one(q, K):
    """一个查询 q (d,) 对 T 个键 K (T, d)，值就是键。返回 (上下文, 权重)。"""
    scores = mm(K, q) / np.sqrt(K.shape[1])        # 第一步点积，第二步除以根号 d
    alpha = softmax(scores)                        # 第三步：非负、加起来是 1……
    return mm(alpha, K), alpha                     # ……再按权重对值加权求和

# attention.md:431 (批量的注意力)
def attend(Q, K, fixed_weights=None):
    """attend_one 的批量版：一串查询 Q (…, Tq, d) 对键 K (…, T, d)，值就是键（这一节里键和值都是编码器的
    隐状态）；前面的 … 是批量维，训练时是 (M, B)。返回 (上下文 (…, Tq, d), 注意力权重 alpha (…, Tq, T))。
    fixed_weights：不打分，直接用这些权重（能广播成 (…, Tq, T) 就行）：平均对照和第五节的干预用它。"""
    if fixed_weights is None:
        scores = mm(Q, np.swapaxes(K, -1, -2)) / np.sqrt(K.shape[-1])  # 第一步点积，第二步除以根号 d  (…, Tq, T)
        alpha = softmax(scores)                                  # 第三步：每一行非负、和为 1
    else:
        alpha = np.broadcast_to(fixed_weights, Q.shape[:-1] + K.shape[-2:-1])   # 查询不起作用
    return mm(alpha, K), alpha                                   # 按权重对值加权求和


def attend_backward(dctx, Q, K, alpha, *, fixed=False):
    """attend(Q, K) 的反向：dctx (…, Tq, d) 是损失对上下文的梯度。K 同时当键和值。返回 (dQ, dK)。
    softmax 的反向：∂α_i/∂s_j = α_i (δ_ij − α_j)，所以 ds = α ⊙ (dα − ⟨α, dα⟩)。"""
    dK = mm(np.swapaxes(alpha, -1, -2), dctx)                        # 值那一路          (…, T, d)
    if fixed:                                                         # 权重是定的：梯度只走值那一路
        return np.zeros_like(Q), dK
    dalpha = mm(dctx, np.swapaxes(K, -1, -2))                         # (…, Tq, T)
    dscores = alpha * (dalpha - (alpha * dalpha).sum(axis=-1, keepdims=True))
    dscores = dscores / np.sqrt(K.shape[-1])                          # softmax 和除根号 d 的反向
    dQ = mm(dscores, K)                                               # (…, Tq, d)
    dK = dK + mm(np.swapaxes(dscores, -1, -2), Q)                     # 键那一路
    return dQ, dK

# attention.md:400 (手算一遍)
class HandExample(NamedTuple):             # 第三节手算的每一步
    q: np.ndarray
    K: np.ndarray
    dots: np.ndarray                       # 第一步：点积
    scaled: np.ndarray                     # 第二步：除以根号 d
    alpha: np.ndarray                      # 第三步：softmax 成注意力权重
    context: np.ndarray                    # 加权求和
    average: np.ndarray                    # 对照：取平均


def hand_example():
    """三、手算一遍：一个查询对四个键，三步一步步算；再算一次取平均作对照。"""
    q = np.array([1.0, 0.0, 1.0])
    K = np.array([[1.0, 0.0, 0.0],
                  [0.0, 1.0, 0.0],
                  [1.0, 0.0, 1.0],
                  [1.0, 1.0, 0.0]])
    dots = mm(K, q)                                # 第一步：点积
    scaled = dots / np.sqrt(len(q))                # 第二步：除以根号 d
    alpha = softmax(scaled)                        # 第三步：softmax 成权重……
    context = mm(alpha, K)                         # ……再对值（就是键）加权求和
    average = mm(np.full(len(K), 1 / len(K)), K)   # 不挑：每个键都拿 1/4
    return HandExample(q, K, dots, scaled, alpha, context, average)

# attention.md:463 (反转任务的数据)
SEED_TEST, SEED_INIT, SEED_BATCH = 1, 2, 3   # 三路独立的随机流，事先定好，不挑
LETTERS = 5                                  # 字母 a–e 编号 0–4
START = 5                                    # 解码器的起始符
VOCAB = 6                                    # 字母和起始符共用一张 6 个记号的表
TEST_SIZE, BATCH = 100, 32                   # 测试集 100 条；训练每一轮抽一批 32 条


def seq_codes(seqs):
    """把每条序列看成一个 5 进制数，方便整条比较。"""
    return seqs @ (LETTERS ** np.arange(seqs.shape[1], dtype=np.int64))


def make_test_set(length, n=TEST_SIZE, seed=SEED_TEST):
    """n 条互不相同的随机序列，形状 (n, length)。"""
    rng = np.random.RandomState(seed)
    seqs = np.empty((0, length), dtype=np.int64)
    while len(seqs) < n:
        more = rng.randint(0, LETTERS, size=(n, length), dtype=np.int64)
        seqs = np.concatenate([seqs, more])
        _, first = np.unique(seq_codes(seqs), return_index=True)
        seqs = seqs[np.sort(first)][:n]           # 去掉重复，保持抽到的先后顺序
    return seqs


def in_sorted(codes, sorted_codes):
    """codes 里的每一个是否出现在 sorted_codes（已排序）里。"""
    pos = np.minimum(np.searchsorted(sorted_codes, codes), len(sorted_codes) - 1)
    return sorted_codes[pos] == codes


def sample_batch(rng, length, test_codes, size=BATCH):
    """一批训练序列；撞上测试集的行重抽，保证测试集从没在训练里出现过。test_codes 已排序。"""
    src = rng.randint(0, LETTERS, size=(size, length), dtype=np.int64)
    clash = in_sorted(seq_codes(src), test_codes)
    while clash.any():
        src[clash] = rng.randint(0, LETTERS, size=(int(clash.sum()), length), dtype=np.int64)
        clash = in_sorted(seq_codes(src), test_codes)
    return src

# attention.md:511 (模型参数)
HIDDEN = 16
LR = 0.003                                     # 学习率：我们定的（原书没有给）


QUERY_NAMES = {"after": "更新后的查询", "before": "更新前的查询"}   # 查询的两种选法：h_t，h_{t-1}


@dataclass(frozen=True)
class Setting:
    """定下一个模型的几个选择，跟着模型走：训练、评估、干预都从这里读，不必再传一遍。"""
    attention: bool = True       # 用注意力；False 是 6.5 节的模型
    query: str = "after"         # "after"：更新后的查询 h_t；"before"：更新前的 h_{t-1}
    uniform: bool = False        # 平均对照：从训练到评估，注意力权重一直是 1/T
    lr: float = LR               # 训练时的学习率

    def __post_init__(self):     # 写错的设置当场拒绝：否则 query="aftr" 会悄悄训练成「更新前」的模型
        if self.query not in QUERY_NAMES:
            raise ValueError("query 只能是 %s，不是 %r" % (" 或 ".join(map(repr, QUERY_NAMES)), self.query))
        if self.uniform and not self.attention:
            raise ValueError("平均对照（uniform=True）是一种注意力权重，要 attention=True")

    def describe(self):
        if not self.attention:
            return "不用注意力"
        return "平均对照" if self.uniform else "用注意力，" + QUERY_NAMES[self.query]


class Model(dict):
    """一个模型，或者几个设置相同、摞在一起训练的模型：参数（名字 → 数组，和字典一样用：model["Wo"]；
    数组最前面一维是模型，见〈几个模型摞在一起〉），带着它们的设置 model.setting。"""

    def __init__(self, params, setting):
        super().__init__(params)
        self.setting = setting
        self.seeds = None        # 训练它的一对种子 (初始参数, 训练批次)（train 填）
        self.losses = {}         # 训练时记下的损失：{轮数: 平均交叉熵}（train 填）
        self.course = {}         # 训练途中量的：{轮数: Checkpoint}（train 填）


def init_params(rng, attention, hidden=HIDDEN, vocab=VOCAB):
    """编码器、解码器、输出层。用注意力时输出层吃 2×hidden 维（隐状态拼上下文）。"""
    shapes = {
        "enc_Wx": (vocab, hidden), "enc_Wh": (hidden, hidden), "enc_b": (hidden,),
        "dec_Wx": (vocab, hidden), "dec_Wh": (hidden, hidden), "dec_b": (hidden,),
        "Wo": (2 * hidden if attention else hidden, vocab), "bo": (vocab,),
    }
    params = {}
    for name, shape in shapes.items():            # 按固定顺序抽：两种模型前六项完全相同
        if len(shape) == 1:
            params[name] = np.zeros(shape)
        else:
            limit = 1 / np.sqrt(shape[0])
            params[name] = rng.uniform(-limit, limit, size=shape)
    return params


def count_params(params):
    """所有数组的元素个数加起来：一个模型（M = 1）就是它的参数个数，M 个模型摞在一起时是它们合起来的。"""
    return sum(p.size for p in params.values())


def unchanged(model):
    """从 SEED_INIT 的初始参数出发训练的一个模型（正文的模型都是），训练完还和初始值一模一样的参数：
    {名字: 逐个元素是否没变}（model[name][0]：这一个模型自己的数组，去掉下面〈几个模型摞在一起〉说的模型那一维）。"""
    init = init_params(np.random.RandomState(SEED_INIT), model.setting.attention)
    return {name: model[name][0] == init[name] for name in model}

# attention.md:583 (几个模型摞在一起)
def stack(models):
    """几个模型的参数字典（名字 → 数组）摞成一个字典：每个数组前面多一维模型，(M, …)。"""
    return {name: np.stack([params[name] for params in models]) for name in models[0]}


def model_numbers(tokens):
    """每个模型的编号 0 … M−1，形状 (M, 1, …, 1)：和 tokens (M, B, …) 对齐广播，第 m 批配第 m 个模型。"""
    return np.arange(len(tokens)).reshape((-1,) + (1,) * (tokens.ndim - 1))


def lookup(Wx, b, tokens):
    """每个记号取出它那个模型的 Wx 里它那一行，加上偏置：one_hot(x_t) @ Wx + b。tokens (M, B, …) → (M, B, …, H)。"""
    m = model_numbers(tokens)
    return Wx[m, tokens] + b[m]


def rows(x):
    """(M, B, …, K) → (M, 行数, K)：每个模型的所有样本、所有步摞成行，模型那一维留着。"""
    return x.reshape(len(x), -1, x.shape[-1])


def linear(x, W):
    """每个模型乘自己的参数矩阵：x (M, B, …, K) @ W (M, K, N) → (M, B, …, N)。"""
    return mm(rows(x), W).reshape(x.shape[:-1] + W.shape[-1:])


def affine(x, W, b):
    """x @ W + b，每个模型用自己的 W (M, K, N) 和 b (M, N)：b[:, None] 加到它那个模型的每一行上。"""
    return (mm(rows(x), W) + b[:, None]).reshape(x.shape[:-1] + W.shape[-1:])


def weight_grad(x, d):
    """y = x @ W（每个模型乘自己的 W）时，损失对 W 的梯度 xᵀ @ d：d 是损失对 y 的梯度，每个模型只用自己的行。(M, K, N)。"""
    return mm(np.swapaxes(rows(x), 1, 2), rows(d))


def bias_grad(d):
    """损失对偏置的梯度：每个模型自己所有行的和，按行的顺序加。(M, N)。"""
    return rows(d).sum(axis=1)

# attention.md:630 (编码器与解码器)
FAST = True        # True：用附录〈转置着存的循环〉里快的写法；False：用下面照公式写的循环。两者算出的每一个比特都一样


def rnn(x_rows, Wh, h):
    """tanh RNN，每一步 h = tanh(x_t + h @ Wh)。x_rows (M, B, T, H) 是每一步查好的 Wx 行加偏置；
    h (M, B, H) 是初始状态，Wh (M, H, H)。返回每一步的隐状态 hs (M, B, T, H)：每一步都留着，注意力要用。"""
    if FAST:
        return rnn_fast(x_rows, Wh, h)
    hs = np.empty(x_rows.shape)
    for t in range(x_rows.shape[2]):
        h = tanh(x_rows[:, :, t] + mm(h, Wh))                     # (M, B, H)
        hs[:, :, t] = h
    return hs


def rnn_backward(dhs, hs, h0, Wh):
    """rnn 的反向。dhs (M, B, T, H) 是损失对每一步隐状态的梯度（来自上层）。返回 (dz, dWh, dh0)：
    dz (M, B, T, H) 是损失对每一步 tanh 之前那个量 z_t = x_t + h_{t-1} @ Wh 的梯度；dWh 和 Wh 同形；
    dh0 (M, B, H) 是对初始状态的梯度。"""
    if FAST:
        return rnn_backward_fast(dhs, hs, h0, Wh)
    dz = np.empty(dhs.shape)                                       # 按行连续存放（不随 dhs 的存法），bias_grad 求和的顺序才固定
    dh = np.zeros_like(h0)                                         # 从后一步流回来的梯度 (M, B, H)
    for t in reversed(range(hs.shape[2])):
        dz[:, :, t] = (dhs[:, :, t] + dh) * (1 - hs[:, :, t] * hs[:, :, t])   # tanh 的导数是 1 − h²
        dh = mm(dz[:, :, t], np.swapaxes(Wh, 1, 2))                # 流回上一步的隐状态：dh = dz_t @ Whᵀ
    h_prev = np.concatenate([h0[:, :, None], hs[:, :, :-1]], axis=2)   # 每一步乘 Wh 的那个 h_{t-1}  (M, B, T, H)
    return dz, weight_grad(h_prev, dz), dh


def input_grads(dz, tokens, Wx):
    """x_t 是 one_hot(x_t) @ Wx，所以 Wx 的梯度是 one_hot(tokens)ᵀ @ dz（每个模型只用自己那些行）。
    dz (M, B, T, H)，tokens (M, B, T)；形状和 Wx 一样。"""
    if FAST:
        return input_grads_fast(dz, tokens, Wx)
    return weight_grad(one_hot(tokens, Wx.shape[1]), dz)


def encoder(params, src):
    h0 = np.zeros(src.shape[:2] + params["enc_Wh"].shape[-1:])    # (M, B, H)
    return rnn(lookup(params["enc_Wx"], params["enc_b"], src), params["enc_Wh"], h0)


def decoder(params, dec_in, h0):
    return rnn(lookup(params["dec_Wx"], params["dec_b"], dec_in), params["dec_Wh"], h0)

# attention.md:80 (解码一步)
def decode_step(model, h, token, hs_enc, *, fixed_weights=None):
    """读进上一位 token，h 更新成 h_new，回头看编码器各步 hs_enc。数组的第一维是模型（正文里 M = 1，见〈几个模型摞在一起〉）。"""
    h_new = tanh(lookup(model["dec_Wx"], model["dec_b"], token) + mm(h, model["dec_Wh"]))   # lookup 查表：W_x[y] + b
    q = h_new if model.setting.query == "after" else h    # 二选一：更新后的查询，还是更新前的
    logits, _, alpha = decoder_output(model, h_new[:, :, None], hs_enc, q[:, :, None], fixed_weights=fixed_weights)
    return h_new, logits[:, :, 0], alpha

# attention.md:681 (解码器的输出层)
def decoder_output(model, hs, hs_enc, queries, *, fixed_weights=None):
    """状态 hs (M, B, Tq, H) 拼上注意力的上下文，交给输出层。返回 (分数, 输出层的输入 (M, B, Tq, 2H), 权重 (M, B, Tq, T))。"""
    if not model.setting.attention:                      # 6.5 节的模型：输出层只看状态
        return affine(hs, model["Wo"], model["bo"]), hs, None
    ctx, alpha = attend(queries, hs_enc, fixed_weights)  # attend_one 的批量版
    features = np.concatenate([hs, ctx], axis=-1)         # 状态拼上上下文：16 + 16 维
    return affine(features, model["Wo"], model["bo"]), features, alpha   # features @ Wo + bo

# attention.md:696 (反向传播)
def one_hot(tokens, n=VOCAB):
    return (tokens[..., None] == np.arange(n)).astype(float)


def uniform_weights(T):
    """谁都不挑：每一步对每个键都是 1/T，(T, T)。"""
    return np.full((T, T), 1 / T)


def teacher_forced_states(params, src, tgt):
    """编码器读 src (M, B, T)；解码器每一步读进正确答案 tgt 的上一位（teacher forcing），第 1 步读起始符。
    返回 (解码器的输入 (M, B, T), 编码器各步的状态 (M, B, T, H), 解码器各步的状态 (M, B, T, H))。"""
    dec_in = np.concatenate([np.full(src.shape[:2] + (1,), START), tgt[:, :, :-1]], axis=2)
    hs_enc = encoder(params, src)
    return dec_in, hs_enc, decoder(params, dec_in, hs_enc[:, :, -1])


def queries_of(hs_enc, hs_dec, query):
    """每一步的查询 (M, B, T, H)：更新后的是 h_t；更新前的是 h_{t-1}，第 1 步是编码器最后一步的状态。"""
    if query == "after":
        return hs_dec
    return np.concatenate([hs_enc[:, :, -1:], hs_dec[:, :, :-1]], axis=2)   # 往后错一步


def queries_backward(dq, query):
    """queries_of 的反向：每一步查询的梯度 dq (M, B, T, H) 还给它来自的状态。
    返回 (对解码器各步状态的梯度 (M, B, T, H), 对编码器最后一步的梯度 (M, B, H)；更新后的查询时是 None)。"""
    if query == "after":
        return dq, None
    return np.concatenate([dq[:, :, 1:], np.zeros_like(dq[:, :, :1])], axis=2), dq[:, :, 0]   # 往前错一步


def cross_entropy(logits, tgt):
    """分数 logits (M, B, T, V)，正确答案 tgt (M, B, T)。返回每个模型平均每个输出记号的交叉熵 (M,)，
    和损失对分数的梯度 (M, B, T, V)。"""
    p = softmax(logits)                                                 # 每一步每个记号的概率 (M, B, T, V)
    y = one_hot(tgt, p.shape[-1])                                       # 正确答案 (M, B, T, V)
    losses = -log((p * y).sum(axis=-1)).reshape(len(tgt), -1).mean(axis=1)   # 每个模型平均自己那一批 (M,)
    return losses, (p - y) / tgt[0].size                                # 交叉熵接 softmax 的梯度


def readout_grads(features, dlogits):
    """输出层 logits = features @ Wo + bo 的参数梯度。features (M, B, T, 2H)，dlogits (M, B, T, V)。"""
    return {"Wo": weight_grad(features, dlogits), "bo": bias_grad(dlogits)}


class Forward(NamedTuple):                 # 前向算出、反向要用的中间量
    src: np.ndarray                        # 输入 (M, B, T)
    dec_in: np.ndarray                     # 解码器每一步读进的记号 (M, B, T)
    hs_enc: np.ndarray                     # 编码器各步的状态 (M, B, T, H)
    hs_dec: np.ndarray                     # 解码器各步的状态 (M, B, T, H)
    queries: np.ndarray                    # 每一步的查询 (M, B, T, H)
    features: np.ndarray                   # 输出层的输入：状态拼上上下文 (M, B, T, 2H)；不用注意力时就是状态
    alpha: np.ndarray                      # 注意力权重 (M, B, T, T)；不用注意力时是 None
    dlogits: np.ndarray                    # 损失对输出层分数的梯度 (M, B, T, V)


def forward(model, src, tgt):
    """teacher forcing 下的前向。src、tgt (M, B, T)：第 m 批给第 m 个模型。
    返回 (每个模型平均每个输出记号的交叉熵 (M,), Forward)。"""
    T = src.shape[2]
    dec_in, hs_enc, hs_dec = teacher_forced_states(model, src, tgt)
    queries = queries_of(hs_enc, hs_dec, model.setting.query)
    fixed = uniform_weights(T) if model.setting.uniform else None       # 平均对照：权重一直是 1/T
    logits, features, alpha = decoder_output(model, hs_dec, hs_enc, queries, fixed_weights=fixed)   # logits (M, B, T, V)
    losses, dlogits = cross_entropy(logits, tgt)
    return losses, Forward(src, dec_in, hs_enc, hs_dec, queries, features, alpha, dlogits)


def backward(model, f):
    """forward 的反向：损失对每个参数的梯度，和 model 同名同形（第 m 个模型的只来自它自己那一批）。"""
    M, B, T, H = f.hs_dec.shape
    grads = readout_grads(f.features, f.dlogits)
    dfeatures = linear(f.dlogits, np.swapaxes(model["Wo"], 1, 2))              # (M, B, T, 2H) 或 (M, B, T, H)
    dhs_dec, dhs_enc = dfeatures[..., :H], np.zeros_like(f.hs_enc)              # (M, B, T, H)
    if f.alpha is not None:
        dq, dhs_enc = attend_backward(dfeatures[..., H:], f.queries, f.hs_enc, f.alpha, fixed=model.setting.uniform)
        dq_dec, dq_enc_last = queries_backward(dq, model.setting.query)
        dhs_dec = dhs_dec + dq_dec
        if dq_enc_last is not None:
            dhs_enc[:, :, -1] += dq_enc_last
    dz, grads["dec_Wh"], dh0 = rnn_backward(dhs_dec, f.hs_dec, f.hs_enc[:, :, -1], model["dec_Wh"])   # dz (M, B, T, H)
    grads["dec_Wx"], grads["dec_b"] = input_grads(dz, f.dec_in, model["dec_Wx"]), bias_grad(dz)
    dhs_enc[:, :, -1] += dh0                       # 解码器的初始状态就是编码器最后一步
    dz, grads["enc_Wh"], _ = rnn_backward(dhs_enc, f.hs_enc, np.zeros((M, B, H)), model["enc_Wh"])
    grads["enc_Wx"], grads["enc_b"] = input_grads(dz, f.src, model["enc_Wx"]), bias_grad(dz)
    return {name: grads[name] for name in model}


def loss_and_grads(model, src, tgt):
    """前向再反向：(每个模型的平均交叉熵 (M,), 梯度)。"""
    losses, f = forward(model, src, tgt)
    return losses, backward(model, f)

# attention.md:797 (梯度检查)
SEED_CHECK = 7                                     # 梯度检查用的随机流


def gradient_check(setting, eps=1e-5, per_array=3):
    """中心差分：每个参数数组随机抽 per_array 个元素，各挪 ±eps，(损失的变化) / 2eps
    应该等于手写的梯度。返回两者之间最大的相对误差 |差| / (|手写| + |差分|)。"""
    rng = np.random.RandomState(SEED_CHECK)
    model = Model(stack([init_params(rng, setting.attention)]), setting)   # 一个模型：M = 1
    src = rng.randint(0, LETTERS, size=(1, 4, 5))    # 4 条 5 个字母的序列
    loss = lambda: forward(model, src, src[:, :, ::-1])[0][0]   # 只要前向：这一个模型的平均交叉熵
    _, grads = loss_and_grads(model, src, src[:, :, ::-1])
    worst = 0.0
    for name, p in model.items():
        flat, grad = p.reshape(-1), grads[name].reshape(-1)     # flat 是 p 的视图：改它就是改参数
        for i in rng.permutation(p.size)[:per_array]:
            saved = flat[i]
            flat[i] = saved + eps
            up = loss()
            flat[i] = saved - eps
            down = loss()
            flat[i] = saved
            numeric = (up - down) / (2 * eps)
            if numeric != 0 or grad[i] != 0:
                worst = max(worst, abs(numeric - grad[i]) / (abs(numeric) + abs(grad[i])))
    return worst


def print_gradient_checks():
    print("梯度检查：中心差分，每个参数数组抽 3 个元素；手写的梯度和差分的最大相对误差")
    for label, setting in (("不用注意力", Setting(attention=False)), ("更新后的查询", Setting(query="after")),
                           ("更新前的查询", Setting(query="before")), ("平均对照", Setting(uniform=True))):
        print("  %.1e  %s" % (gradient_check(setting), label))

# attention.md:849 (训练：Adam 与梯度裁剪)
CLIP = 1.0                                       # 梯度裁剪：每个模型的梯度范数最多是 1
BETA1, BETA2, EPS = 0.9, 0.999, 1e-8


def flatten(arrays, like):
    """把参数或梯度（名字 → (M, …)）按 like 的名字顺序，每个模型摊成一行：(M, 参数个数)。"""
    return np.concatenate([arrays[name].reshape(len(arrays[name]), -1) for name in like], axis=1)


def as_vector(params):
    """把参数复制一份，摊成 theta (M, 参数个数)。返回 theta 和指向它内部的同名视图 (M, …)：改 theta 就是改参数。"""
    theta = flatten(params, like=params)
    views, start = {}, 0
    for name, p in params.items():
        size = p[0].size                                  # 一个模型的这个数组有几个数
        views[name] = theta[:, start:start + size].reshape(p.shape)
        start += size
    return theta, views


def clip_by_norm(g, limit):
    """g 的每一行是一个模型的梯度：范数超过 limit 的，按比例缩到 limit。"""
    norm = np.sqrt((g * g).sum(axis=-1, keepdims=True))
    return g * (limit / np.maximum(norm, limit))         # 不超过 limit 时乘的是 1.0：一个比特也不变


def adam_moments(theta):
    """Adam 的状态：一阶矩 m、二阶矩 v（和 theta 同形，从 0 开始），β1、β2 的 t 次方（从 1 开始）。"""
    return {"m": np.zeros_like(theta), "v": np.zeros_like(theta), "beta1_t": 1.0, "beta2_t": 1.0}


def adam_step(theta, g, moments, lr):
    """Adam 的一步：原地更新 theta 和 moments。β 的 t 次方用连乘：每一步都是精确舍入的乘法。
    一定要原地（theta -= …）：参数是 theta 的视图，写成 theta = theta - … 参数就不再跟着变了。"""
    moments["m"] = BETA1 * moments["m"] + (1 - BETA1) * g
    moments["v"] = BETA2 * moments["v"] + (1 - BETA2) * g * g
    moments["beta1_t"] *= BETA1
    moments["beta2_t"] *= BETA2
    m_hat, v_hat = moments["m"] / (1 - moments["beta1_t"]), moments["v"] / (1 - moments["beta2_t"])
    theta -= lr * m_hat / (np.sqrt(v_hat) + EPS)


def progress(message):
    """训练要好几秒：进度写到标准错误，只在终端上（或者设了 ATTENTION_PROGRESS=1）才写。
    标准输出就是实跑输出，多一个字节都不行。"""
    if os.environ.get("ATTENTION_PROGRESS") == "1" or (sys.stderr is not None and sys.stderr.isatty()):
        sys.stderr.write(message + "\n")      # 一次写完：几个进程同时写，行也不会交错
        sys.stderr.flush()


LOG_EVERY = 500                                  # 每多少轮记一次损失（写进进度，也留在 model.losses 里）


def optimise(theta, step, rounds, lr, *, measure=None, at=(), label=""):
    """训练和只重新训练输出层共用的循环：rounds 轮 Adam 加梯度裁剪，原地更新 theta。
    step() 抽一批、返回 (每个模型这一批的平均交叉熵 (M,), 梯度 (M, 参数个数))。
    返回 (损失记录 {轮数: (M,)}，每 LOG_EVERY 轮和最后一轮记一次；{轮数: measure()}，在 at 里的轮数上量)。
    label：写进进度的那一行说的是哪次训练。"""
    moments = adam_moments(theta)
    losses, measured = {}, {}
    if 0 in at:
        measured[0] = measure()                          # 第 0 轮：还没训练
    for n in range(1, rounds + 1):
        loss, g = step()
        adam_step(theta, clip_by_norm(g, CLIP), moments, lr)
        if n % LOG_EVERY == 0 or n == rounds:
            losses[n] = loss                             # 这一轮的批次在更新之前的损失
            progress("%s：第 %d 轮，平均交叉熵 %s" % (label, n, " ".join("%.4f" % x for x in loss)))
        if n in at:
            measured[n] = measure()
    return losses, measured


def train(setting, test, rounds, *, seed_list=((SEED_INIT, SEED_BATCH),), checkpoints=()):
    """从固定的种子出发训练 rounds 轮，序列和测试集 test 一样长，测试集里的序列不拿来训练。
    seed_list 里每一对种子（初始参数、训练批次）一个模型，通常只有一对；几个模型摞在一起训练，
    每一个都和单独训练时逐位相同。返回 Model 的列表，每个是一个模型（M = 1），带着 setting、损失记录 model.losses，
    和训练途中在 checkpoints 这些轮数上量的 model.course（{轮数: Checkpoint}）。"""
    length = test.shape[1]
    what = "%d 位，%s，学习率 %g，种子 %s，%d 轮" % (length, setting.describe(), setting.lr,
                                                  " ".join("%d/%d" % seeds for seeds in seed_list), rounds)
    progress("开始训练：" + what)
    started = time.monotonic()
    inits = [init_params(np.random.RandomState(seed_init), setting.attention) for seed_init, _ in seed_list]
    theta, views = as_vector(stack(inits))
    together = Model(views, setting)                                           # M 个模型摞在一起
    models = [Model({name: p[i:i + 1] for name, p in views.items()}, setting) for i in range(len(theta))]   # 各自的视图，M = 1
    batches = [np.random.RandomState(seed_batch) for _, seed_batch in seed_list]
    test_codes = np.sort(seq_codes(test))

    def step():
        src = np.stack([sample_batch(rng, length, test_codes) for rng in batches])   # 每个模型一批 (M, B, T)
        losses, grads = loss_and_grads(together, src, src[:, :, ::-1])
        return losses, flatten(grads, like=views)

    losses, measured = optimise(theta, step, rounds, setting.lr,
                                measure=lambda: [checkpoint(model, test) for model in models], at=set(checkpoints),
                                label=what)
    for i, (model, seeds) in enumerate(zip(models, seed_list)):
        model.seeds = tuple(seeds)
        model.losses = {n: loss[i] for n, loss in losses.items()}
        model.course = {n: points[i] for n, points in measured.items()}
    progress("训练完：%s（%.0f 秒）" % (what, time.monotonic() - started))
    return models

# attention.md:961 (贪心解码与评估)
def predict(model, src, fixed_weights=None):
    """贪心解码：每一步读进自己上一步的输出。src (M, B, T)：第 m 批给第 m 个模型。
    返回记号 (M, B, T)，和注意力权重 alpha (M, B, T, T)（不用注意力时是 None）。
    fixed_weights 能广播成 (M, B, T, T) 就行，比如 (T, T)：不让模型自己挑，第 t 步的权重换成它的第 t 行
    （平均对照的模型缺省就是 1/T）。"""
    M, B, T = src.shape
    if fixed_weights is None and model.setting.uniform:
        fixed_weights = uniform_weights(T)                      # 平均对照：权重一直是 1/T
    hs_enc = encoder(model, src)
    h, token = hs_enc[:, :, -1], np.full((M, B), START)
    tokens = np.empty((M, B, T), dtype=np.int64)
    alphas = np.empty((M, B, T, T)) if model.setting.attention else None
    for t in range(T):
        fixed = None if fixed_weights is None else fixed_weights[..., t:t + 1, :]   # 第 t 步的那一行 (…, 1, T)
        h, logits, alpha = decode_step(model, h, token, hs_enc, fixed_weights=fixed)
        token = logits.argmax(axis=-1)
        tokens[:, :, t] = token
        if alphas is not None:
            alphas[:, :, t] = alpha[:, :, 0]
    return tokens, alphas


class Evaluation(NamedTuple):
    whole: float                 # 整串全对
    per_token: float             # 逐位正确
    by_position: np.ndarray      # 按输出位置的逐位正确 (T,)
    alpha: np.ndarray            # 每条测试序列每一步的注意力权重 (B, T, T)；不用注意力时是 None
    tokens: np.ndarray           # 贪心解码的输出 (B, T)


def evaluate(model, test, fixed_weights=None):
    """一个模型（M = 1）贪心解码整个测试集 test (B, T)，和倒序比。fixed_weights：解码时换上这些权重（见 predict）。"""
    tokens, alpha = predict(model, test[None], fixed_weights)          # test[None]：前面加上模型那一维 (1, B, T)
    correct = tokens[0] == test[:, ::-1]
    return Evaluation(correct.all(axis=1).mean(), correct.mean(), correct.mean(axis=0),
                      None if alpha is None else alpha[0], tokens[0])

# attention.md:1005 (五位对比)
class Comparison(NamedTuple):              # 第四节的对比：两个训练好的模型和它们的评估
    rounds: int
    no_attn: Model                         # 6.5 节的模型（不用注意力）
    no_attn_result: Evaluation
    attn: Model                            # 加了注意力的模型
    attn_result: Evaluation


def reversal_comparison(length=5, rounds=2000):
    """6.5 节的模型和加了注意力的模型，各训练 rounds 轮，在同一个测试集上评估。"""
    test = make_test_set(length)
    no_attn, attn = (train(Setting(attention=attention), test, rounds)[0] for attention in (False, True))
    return Comparison(rounds, no_attn, evaluate(no_attn, test), attn, evaluate(attn, test))

# attention.md:1035 (拿掉挑选和形成对齐的规则)
def with_uniform_weights(model, test):
    """拿掉挑选：同一个训练好的模型，参数一个不动，解码时把注意力权重全换成 1/T。"""
    return evaluate(model, test, uniform_weights(test.shape[1]))


def diagonal_weight(matrix, offset=0):
    """反对角线（offset=0）或它左边一列（offset=−1）上权重的平均：第 r 行取第 T+1−r+offset 列。"""
    T = len(matrix)
    cells = [(r, T - 1 - r + offset) for r in range(T)]          # 下标从 0 数：第 1 行是 0，第 T 列是 T − 1
    return np.mean([matrix[r, c] for r, c in cells if 0 <= c < T])


def diagonal_multiple(matrix, offset=0):
    """同一个平均，是均匀（每格 1/T）的几倍。"""
    return diagonal_weight(matrix, offset) * len(matrix)


FORMED_DROP, FORMED_DIAGONAL = 0.10, 2.0   # 跑 10 个种子的扫描之前定下的规则


def alignment_formed(drop, multiple):
    """对齐形成了吗：拿掉挑选，逐位正确至少降 0.10（drop：它在挑）；而且反对角线上的平均权重
    至少是均匀（1/T）的 2 倍（multiple：挑的正是倒序要的那一位）。"""
    return bool(drop >= FORMED_DROP and multiple >= FORMED_DIAGONAL)

# attention.md:1067 (第五节的两组设置)
BOOK_SETTING = Setting(query="after", lr=LR)       # 第四节的设置：更新后的查询（我们对原书示意代码的读法），学习率 0.003（我们定的）
PICKING_SETTING = Setting(query="before", lr=0.02)  # 换两个旋钮：更新前的查询，学习率大一些
SECTION_FIVE = {"第一个": BOOK_SETTING, "第二个": PICKING_SETTING}   # 第五节并排的模型：名字 → 设置
SECTION_FIVE_LENGTH = 10      # 第五节的序列有几位：和原书的矩阵一样；换成别的长度，表里原书的数字就空着
SECTION_FIVE_ROUNDS = 3000    # 每个模型训练几轮：和原书一样

# attention.md:1078 (把权重换掉)
def reversal_weights(T, shift=0):
    """倒序要的权重：第 r 行只在第 T+1−r 列上是 1，其余是 0。shift=−1 整体挪到左边一列，
    最后一行左边没有列了，绕回第 T 列。"""
    alpha = np.zeros((T, T))
    r = np.arange(T)
    alpha[r, (T - 1 - r + shift) % T] = 1.0
    return alpha


def most_frequent_letter_accuracy(test):
    """不分第几步、只看整条序列能做到多好：每一步都输出这条序列里出现最多的字母（并列时取编号小的），
    逐位正确是多少。权重全是 1/T 时，上下文每一步都一样，它能给的就是这样一种整条序列的偏向。"""
    counts = np.stack([(test == letter).sum(axis=1) for letter in range(LETTERS)], axis=1)   # (B, 5)
    return (test[:, ::-1] == counts.argmax(axis=1)[:, None]).mean()


class Interventions(NamedTuple):
    """参数一个不动，解码时把每一步的注意力权重换掉，量到的。"""
    greedy: dict                 # {换成什么: Evaluation}（贪心解码）；"uniform" 就是拿掉挑选
    follows: float               # 换成左边一列时，输出正好是被指到的那一列的字母的比例（不是逐位正确）
    forced: dict                 # {换成什么（"own" 是不换）: 喂对的字母时每一位对不对 (B, T)}
    other_change: float          # 别条的权重和自己的差多少：每一行两个分布之差的绝对值加起来的一半，再平均（0 一样，1 不重叠）

    def forced_accuracy(self, name):
        return self.forced[name].mean()

    def forced_by_position(self, name):
        return self.forced[name].mean(axis=0)


def forced_tokens(model, test, fixed_weights=None):
    """喂对的字母：解码器每一步读进正确答案（倒序）的上一位，不是自己的输出，一步错了不会传到下一步。
    返回每一步分数最大的记号 (B, T)。这就是训练时的 teacher forcing，所有步一次算完，和一步步解码逐位相同。"""
    _, hs_enc, hs_dec = teacher_forced_states(model, test[None], test[None, :, ::-1])   # 一个模型：M = 1
    queries = queries_of(hs_enc, hs_dec, model.setting.query)
    logits = decoder_output(model, hs_dec, hs_enc, queries, fixed_weights=fixed_weights)[0]   # (1, B, T, V)
    return logits[0].argmax(axis=-1)


def interventions(model, test, own_alpha):
    """把权重换成倒序要的、左边一列、别条序列的（第 i 条用第 i−1 条自己算出的）、全是 1/T（拿掉挑选），
    贪心解码和喂对的字母各解一遍。own_alpha (B, T, T) 是模型自己算的权重。"""
    B, T = test.shape
    replaced = {"reversal": reversal_weights(T),              # 倒序要的那一列
                "shifted": reversal_weights(T, shift=-1),     # 左边一列
                "other": np.roll(own_alpha, 1, axis=0),       # 第 i 条序列用第 i−1 条自己算出的权重
                "uniform": uniform_weights(T)}                # 拿掉挑选
    greedy = {name: evaluate(model, test, alpha) for name, alpha in replaced.items()}
    forced = {name: forced_tokens(model, test, alpha) == test[:, ::-1]
              for name, alpha in [("own", None)] + list(replaced.items())}
    pointed = test[:, replaced["shifted"].argmax(axis=1)]     # 每一行被指到的那一列上的字母 (B, T)
    return Interventions(greedy, (greedy["shifted"].tokens == pointed).mean(), forced,
                         np.abs(own_alpha - replaced["other"]).sum(axis=-1).mean() / 2)

# attention.md:1179 (第五节的一次运行：训练、评估、干预)
REFIT_ROUNDS, SEED_REFIT = 3000, 8         # 只重新训练输出层：轮数，和它自己的批次随机流
REFIT_CHECKPOINTS = (1000, 2000, REFIT_ROUNDS)


@dataclass
class Run:
    """一个训练好的注意力模型，和在它身上量到的一切。"""
    model: Model                 # 参数、设置（model.setting）、训练途中量的（model.course）
    rounds: int                  # 训练了几轮
    own: Evaluation              # 测试集上的评估，权重是模型自己算的
    sample: np.ndarray           # 第一条测试序列
    swaps: Interventions         # 把权重换掉（〈把权重换掉〉）
    refit: dict                  # 只重新训练输出层：{轮数: 权重全是 1/T 时的逐位正确（贪心解码）}；没做时是 None
    refit_forced: float = None   # 只重新训练输出层之后，喂对的字母时的逐位正确（权重全是 1/T）；没做时是 None

    @property
    def setting(self):
        return self.model.setting

    @property
    def course(self):
        """训练途中量的：{轮数: Checkpoint}。"""
        return self.model.course

    @property
    def unpicked(self):
        """拿掉挑选（解码时权重全换成 1/T）之后的评估。"""
        return self.swaps.greedy["uniform"]

    @property
    def matrix(self):
        """测试集的平均权重：行 = 输出第几位，列 = 输入第几位。"""
        return self.own.alpha.mean(axis=0)

    @property
    def final(self):
        """训练完时量的，和训练途中的检查点同一个样子（Checkpoint）：降了多少、反对角线、形成了没有。"""
        return Checkpoint(self.own.per_token, self.unpicked.per_token, self.matrix)

    @property
    def sample_alpha(self):
        """第一条测试序列自己的权重矩阵。"""
        return self.own.alpha[0]


class Checkpoint(NamedTuple):
    """训练到某一轮时量的：逐位正确，拿掉挑选之后的逐位正确，测试集的平均权重矩阵。"""
    per_token: float
    per_token_unpicked: float
    matrix: np.ndarray

    @property
    def drop(self):
        return self.per_token - self.per_token_unpicked

    @property
    def diagonal(self):
        """反对角线上的平均权重是均匀的几倍。"""
        return diagonal_multiple(self.matrix)

    @property
    def formed(self):
        return alignment_formed(self.drop, self.diagonal)


def change(drop):
    """印出来的「变化」：拿掉挑选后逐位正确变了多少，降了是负数。0.0 − 0.0 是 +0.0：不会印出 -0.000。"""
    return 0.0 - drop


def checkpoint(model, test):
    own = evaluate(model, test)
    return Checkpoint(own.per_token, with_uniform_weights(model, test).per_token, own.alpha.mean(axis=0))


def attention_runs(setting, seed_list=((SEED_INIT, SEED_BATCH),), length=10, rounds=3000, *, checkpoints=(),
                   refit=True):
    """训练注意力模型（seed_list 里每一对种子一个，通常只有一对），逐个交给 examine。返回 Run 的列表。
    checkpoints：训练途中在这些轮数上各量一次（run.model.course）。refit：也只重新训练输出层。"""
    test = make_test_set(length)
    models = train(setting, test, rounds, seed_list=seed_list, checkpoints=checkpoints)
    return [examine(model, test, rounds, refit=refit) for model in models]


def examine(model, test, rounds, *, refit=True):
    """一个训练好的注意力模型：评估，把权重换掉（包括拿掉挑选）；refit=True 时再只重新训练输出层，
    它是喂对的字母训练的，所以贪心解码和喂对的字母各评估一遍。"""
    own = evaluate(model, test)
    run = Run(model, rounds, own, sample=test[0], swaps=interventions(model, test, own.alpha), refit=None)
    if refit:
        refitted, run.refit = refit_readout(model, test)
        forced = forced_tokens(refitted, test, uniform_weights(test.shape[1]))
        run.refit_forced = (forced == test[:, ::-1]).mean()
    return run


def frozen_features(model, src):
    """只重新训练输出层时，一个模型的输出层的输入 (1, B, T, 2H)：冻结的编码器、解码器读 src (B, T)（答案是倒序）
    算出的状态，拼上权重全是 1/T 的上下文（权重是定的，查询不起作用）。"""
    _, hs_enc, hs_dec = teacher_forced_states(model, src[None], src[None, :, ::-1])
    ctx, _ = attend(hs_dec[:, :, :1], hs_enc, uniform_weights(src.shape[1])[:1])   # 权重全是 1/T，每一步的上下文都一样：只算一步
    return np.concatenate([hs_dec, np.broadcast_to(ctx, hs_dec.shape)], axis=-1)   # 再铺到每一步


REFIT_CHUNK = 10       # 冻结的部分一次算几轮的批次


def frozen_batches(model, batches, length, test_codes):
    """只重新训练输出层时每一轮的 (批次, 它的 frozen_features)：批次和一轮一轮抽的一样，冻结的部分一次算 REFIT_CHUNK 轮。
    每一行的特征只看这一行，所以和一批一批算的一个比特也不差，只是 NumPy 的调用少了十倍。"""
    while True:
        srcs = [sample_batch(batches, length, test_codes) for _ in range(REFIT_CHUNK)]
        yield from zip(srcs, np.split(frozen_features(model, np.concatenate(srcs)), REFIT_CHUNK, axis=1))


def refit_readout(model, test):
    """只重新训练输出层：权重全是 1/T，其余参数冻结，Wo、bo 从训练好的值出发，学习率都是 LR。
    返回 (新的模型：Wo、bo 是新的，其余还是原来那些数组，一个也没改；
    {轮数: 权重全是 1/T 时测试集上的逐位正确}，在 REFIT_CHECKPOINTS 上量)。"""
    theta, readout = as_vector({"Wo": model["Wo"], "bo": model["bo"]})     # theta 是复制出来的，(1, 参数个数)
    refitted = Model(dict(model, **readout), model.setting)                 # 新的 Wo、bo 是 theta 的视图
    length, test_codes = test.shape[1], np.sort(seq_codes(test))
    frozen = frozen_batches(model, np.random.RandomState(SEED_REFIT), length, test_codes)

    def step():
        src, features = next(frozen)                                      # src (B, T)，features (1, B, T, 2H)
        losses, dlogits = cross_entropy(affine(features, refitted["Wo"], refitted["bo"]), src[None, :, ::-1])
        return losses, flatten(readout_grads(features, dlogits), like=readout)

    _, measured = optimise(theta, step, REFIT_ROUNDS, LR, measure=lambda: with_uniform_weights(refitted, test).per_token,
                           at=REFIT_CHECKPOINTS, label="只重新训练输出层")
    return refitted, measured

# attention.md:1319 (对齐是怎么长出来的)
GROWTH_CHECKPOINTS = (0,) + tuple(range(10, 600, 10)) + tuple(range(600, 3001, 100))   # 每 10 轮；第 600 轮以后每 100 轮
JUMP_FROM, JUMP_TO = 0.2, 0.8      # 「跳」：超出均匀的部分从训练完时的 20% 涨到 80%（看结果之前定下）


def diagonal_of(cp):
    return cp.diagonal


def per_token_of(cp):
    return cp.per_token


def share_of_end(course, n, value=diagonal_of, base=1.0):
    """第 n 轮的 value 超出 base 的部分，是训练完时的几成（缺省：反对角线超出均匀的 1 倍）。
    训练完时不超出 base，就说不上：None。"""
    end = value(course[max(course)]) - base
    return (value(course[n]) - base) / end if end > 0 else None


def first_round(course, condition):
    """第一个满足 condition(轮数) 的检查点；没有就是 None。"""
    return next((n for n in sorted(course) if condition(n)), None)


def rise(course, value=diagonal_of, base=1.0):
    """value 超出 base 的部分从训练完时的两成涨到八成：从哪一轮开始，到哪一轮结束；训练完时不超出 base，
    就是 (None, None)。"""
    if share_of_end(course, max(course), value, base) is None:
        return None, None
    return (first_round(course, lambda n: share_of_end(course, n, value, base) >= JUMP_FROM),
            first_round(course, lambda n: share_of_end(course, n, value, base) >= JUMP_TO))


def jump(course):
    """跳：反对角线超出均匀的部分从两成涨到八成，从哪一轮到哪一轮。"""
    return rise(course)


def learning(course):
    """同样的量法用在逐位正确上：超出第 0 轮（还没训练）的部分从两成涨到八成，从哪一轮到哪一轮。
    拿来和跳比：对齐长出来，是不是比学会这个任务本身还快。"""
    return rise(course, per_token_of, base=course[0].per_token)


def growth_panels(course):
    """主线的四个检查点：跳开始之前的最后一次（跳从第一个检查点就开始时，就是它），到一半，跳完，训练完。"""
    start, stop = jump(course)
    rounds = sorted(course)
    before = rounds[max(rounds.index(start) - 1, 0)]
    half = first_round(course, lambda n: share_of_end(course, n) >= 0.5)
    return before, half, stop, rounds[-1]

# attention.md:1506 (原书的矩阵)
BOOK_FIVE = ((0.9900, 0.9980), (0.9300, 0.9860))   # 原书第四节的表：(整串全对, 逐位正确)，不用注意力、用注意力
BOOK_ROUNDS, BOOK_PER_TOKEN = 3000, 0.6820         # 原书第五节：10 位的模型训练 3000 轮，逐位正确 0.6820
BOOK_MATRIX = np.array([                   # 原书印出的矩阵：行 = 输出第几位，列 = 输入第几位
    [0.08, 0.11, 0.10, 0.06, 0.10, 0.08, 0.07, 0.08, 0.18, 0.15],
    [0.11, 0.11, 0.05, 0.10, 0.08, 0.09, 0.07, 0.20, 0.12, 0.06],
    [0.09, 0.08, 0.11, 0.06, 0.06, 0.08, 0.25, 0.11, 0.09, 0.07],
    [0.09, 0.08, 0.09, 0.06, 0.09, 0.21, 0.13, 0.07, 0.06, 0.13],
    [0.08, 0.07, 0.07, 0.09, 0.22, 0.15, 0.08, 0.04, 0.10, 0.09],
    [0.08, 0.08, 0.09, 0.16, 0.17, 0.08, 0.06, 0.06, 0.12, 0.10],
    [0.09, 0.10, 0.13, 0.17, 0.09, 0.05, 0.07, 0.10, 0.11, 0.10],
    [0.11, 0.12, 0.13, 0.08, 0.07, 0.07, 0.10, 0.13, 0.11, 0.09],
    [0.11, 0.11, 0.11, 0.07, 0.07, 0.11, 0.12, 0.08, 0.10, 0.11],
    [0.10, 0.09, 0.11, 0.10, 0.12, 0.10, 0.08, 0.07, 0.11, 0.12]])


def print_book_matrix():
    print("原书印出的矩阵（它的模型训练 3000 轮）：")
    columns, on_diagonal, left_of_it = peak_counts(BOOK_MATRIX)
    print("每一行的峰值落在输入第几列：" + columns + "（并列时取左边的）")
    print("落在反对角线上的有 %d 行，落在它左边一列上的有 %d 行。" % (on_diagonal, left_of_it))
    print("反对角线上的平均权重是均匀的 %.2f 倍，左边一列 %.2f 倍；规则的第二条（%.0f 倍以上）：%s。"
          % (diagonal_multiple(BOOK_MATRIX), diagonal_multiple(BOOK_MATRIX, -1), FORMED_DIAGONAL,
             "满足" if diagonal_multiple(BOOK_MATRIX) >= FORMED_DIAGONAL else "不满足"))


def encoder_reads_in_order(params, test):
    """编码器第 j 步的状态只读过输入的前 j 位：把第 k 位换成别的字母，前 k − 1 步的状态
    一个比特也不变，第 k 步的变了。每一个 k 都这样才返回 True。"""
    hs = encoder(params, test[None])[0]                       # 一个模型：M = 1
    for k in range(test.shape[1]):
        changed = test.copy()
        changed[:, k] = (changed[:, k] + 1) % LETTERS
        hs_changed = encoder(params, changed[None])[0]
        if not (hs_changed[:, :k] == hs[:, :k]).all() or (hs_changed[:, k] == hs[:, k]).all(axis=-1).any():
            return False
    return True

# attention.md:1551 (读矩阵和画热图)
def peak_columns(matrix):
    """每一行最大权重所在的列（从 1 数起）和那个权重。"""
    return matrix.argmax(axis=1) + 1, matrix.max(axis=1)


def peak_offsets(matrix):
    """每一行的峰值比严格倒序那一列（第 r 行对第 T+1−r 列）偏了几列：0 正好，−1 左边一列。"""
    T = len(matrix)
    columns, _ = peak_columns(matrix)
    return columns - (T - np.arange(T))


def peak_counts(matrix):
    """每一行的峰值落在输入第几列（连成一串，供打印），落在反对角线上的行数，落在它左边一列上的行数。"""
    columns, _ = peak_columns(matrix)
    offsets = peak_offsets(matrix)
    return " ".join("%d" % c for c in columns), int((offsets == 0).sum()), int((offsets == -1).sum())


def print_table(rows, width=9):
    """一张表：每一行是几格数字（或别的 ASCII 字符），标签放在数字后面。数字前面没有汉字，所以数字的列在任何
    等宽字体里都对得齐：有的字体里一个汉字不正好是两个字母宽，汉字在前面，后面的列就歪了。"""
    for cells, label in rows:
        print("".join("%-*s" % (width, cell) for cell in cells) + label)


def percent_cells(row):
    """一行权重，每格印成百分之几（0.10 印成 10）：一格三列，十列的矩阵三张并排也不到 110 列宽。"""
    return "".join(" %2.0f" % (w * 100) for w in row)


def print_matrices(matrices, titles, gap=" "):
    """几个同样大小的权重矩阵并排（也可以只有一个），每格是权重的百分之几（均匀的 1/T 是 100/T，T = 10 时是 10）。
    上面一行是标题：一个矩阵就是「标题：」，几个是「从左到右：甲、乙、丙」，汉字都在数字前面的行之外。行标「输出」
    和列标「输入」一样宽，数字在任何等宽字体里都对得齐；三个 10 列的矩阵并排正好 100 列。"""
    T = len(matrices[0])
    print(titles[0] + "：" if len(titles) == 1 else "从左到右：" + "、".join(titles))
    print("输入    " + gap.join("".join(" %2d" % (j + 1) for j in range(T)) for _ in matrices))
    for i in range(T):
        print("输出 %-3d" % (i + 1) + gap.join(percent_cells(matrix[i]) for matrix in matrices))


def print_matrix(matrix, title):
    print_matrices([matrix], [title])


SHADES = (" ", "·", "░", "▓", "█")        # 由浅到深；相邻两级一眼分得开（▒ 和 ░ 在网页上太像，不用）
SHADE_LEVELS = (1.0, 1.05, 1.25, 2.0)     # 以均匀的 1/T 为单位的分界


HEATMAP_LEGEND = "图例（是均匀的几倍）：空白 不到 1，·· 1–1.05，░░ 1.05–1.25，▓▓ 1.25–2，██ 2 倍以上"


def heatmap_rows(matrix):
    """每个权重画成两个字符宽的一格，按它是均匀的几倍来涂深浅：反对角线一眼就看得见。
    每一行用竖线框起来，空白的格子也看得出在哪。"""
    T = len(matrix)
    return ["|" + "".join(SHADES[s] * 2 for s in np.searchsorted(SHADE_LEVELS, row * T, side="right")) + "|"
            for row in matrix]


def heatmap(matrix, column_labels=None, row_labels=None):
    """一张热图。缺省时列标输入第几位、行标输出第几位；单条序列可以换成字母。"""
    T = len(matrix)
    column_labels = column_labels or [str(j + 1) for j in range(T)]
    row_labels = row_labels or ["输出 %-3d" % (i + 1) for i in range(T)]
    print("输入     " + "".join("%-2s" % label for label in column_labels).rstrip())   # 「输入」和行标「输出」一样宽
    for label, row in zip(row_labels, heatmap_rows(matrix)):
        print(label + row)
    print(HEATMAP_LEGEND)


def heatmaps_side_by_side(matrices, say_column=True, gap="  "):
    """几张同样大小的热图并排，一眼比得出来。图例在前；say_column：每一行的行标写着倒序要看输入第几列。
    gap：两张图之间的空隙（四张并排时用一格，一行才不超过 100 列）。"""
    T = len(matrices[0])
    print(HEATMAP_LEGEND)
    labels = ["输出 %-3d应看 %-3d" % (i + 1, T - i) if say_column else "输出 %-3d" % (i + 1) for i in range(T)]
    columns = "".join("%-2d" % (j + 1) for j in range(T))
    corner = "输入位置         " if say_column else "输入     "       # 汉字和行标一样多：任何字体里都对得齐
    print(corner + (" " * (2 + len(gap))).join([columns] * len(matrices)).rstrip())
    for label, rows in zip(labels, zip(*map(heatmap_rows, matrices))):
        print(label + gap.join(rows))


def letters(seq):
    return ["abcde"[token] for token in seq]


def sample_heatmap(seq, alpha):
    """一条测试序列自己的权重：列标是输入的字母，行标是这一位该输出的字母。"""
    wanted = letters(seq[::-1])
    print("输入 " + " ".join(letters(seq)) + "，倒过来应该输出 " + " ".join(wanted))
    heatmap(alpha, letters(seq), ["输出 %s  " % c for c in wanted])     # 第 r 行 = 输出第 r 位


def train_and_evaluate(setting, length, rounds, seeds=(SEED_INIT, SEED_BATCH)):
    """从头训练一个模型，在测试集上评估（Evaluation）。"""
    test = make_test_set(length)
    return evaluate(train(setting, test, rounds, seed_list=[seeds])[0], test)

# attention.md:1686 (打印实跑输出)
def vector(v):
    return "(" + ", ".join("%g" % x for x in v) + ")"


def signed(v):
    return " ".join("%+.4f" % x for x in v)


def print_hand_example():
    ex = hand_example()
    q, K = ex.q, ex.K
    print("手算一遍：查询 q = %s，四个键 %s，d = %d" % (vector(q), " ".join(vector(k) for k in K), len(q)))
    print()
    print_table([(["%d" % (i + 1) for i in range(len(K))], "第几个键")]
                + [(["%.4f" % v for v in values], label)
                   for label, values in (("点积", ex.dots), ("除以根号 d 后", ex.scaled), ("softmax 权重", ex.alpha))])
    print("加权求和 = " + signed(ex.context))
    print("取平均值 = " + signed(ex.average) + "（每个键都拿 %.2f）" % (1 / len(K)))
    inside = all(K[:, j].min() <= ex.context[j] <= K[:, j].max() for j in range(len(q)))
    print("权重之和 = %.4f；加权求和的每一维都落在四个键这一维的范围里：%s" % (ex.alpha.sum(), "是" if inside else "否"))
    print("除以根号 d 把分数压小多少倍：d = 3 时 %.1f 倍，d = 512 时 %.1f 倍。" % (np.sqrt(3.0), np.sqrt(512.0)))


def verdict(plain, attn):
    """比较 (整串全对, 逐位正确) 两个元组（先比整串全对，一样再比逐位正确），说出数字支持的那句话。"""
    if attn < plain:
        return "加注意力反而低了一点"
    if attn > plain:
        return "加注意力高了一点"
    return "加不加注意力，结果一样"


def print_reversal(five):
    n_plain, whole_plain, token_plain = count_params(five.no_attn), five.no_attn_result.whole, five.no_attn_result.per_token
    n_attn, whole_attn, token_attn = count_params(five.attn), five.attn_result.whole, five.attn_result.per_token
    print("加到 6.5 节的反转任务上：5 个字母，各训练 %d 轮（每轮 %d 条），Adam 学习率 %g，"
          % (five.rounds, BATCH, LR))
    print("梯度裁剪 %.1f，测试集 %d 条，训练时从没见过。" % (CLIP, TEST_SIZE))
    print()
    (book_whole_plain, book_token_plain), (book_whole_attn, book_token_attn) = BOOK_FIVE
    print("左列不用注意力，右列用注意力：")
    print_table([([form % plain_value, form % attn_value], label)
                 for label, form, plain_value, attn_value in (("参数", "%d", n_plain, n_attn),
                                                              ("整串全对", "%.4f", whole_plain, whole_attn),
                                                              ("逐位正确", "%.4f", token_plain, token_attn),
                                                              ("原书：整串全对", "%.4f", book_whole_plain, book_whole_attn),
                                                              ("原书：逐位正确", "%.4f", book_token_plain, book_token_attn))])
    plain, attn = five.no_attn, five.attn                # 各是一个模型：形状 (1, …)，shape[1:] 是它自己的
    size = lambda params, *names: sum(params[name].size for name in names)
    print("参数怎么数：编码器 %d（Wx %d×%d、Wh %d×%d、b %d），解码器也是 %d，输出层 %d（Wo、bo），共 %d。"
          % ((size(plain, "enc_Wx", "enc_Wh", "enc_b"),) + plain["enc_Wx"].shape[1:] + plain["enc_Wh"].shape[1:]
             + (HIDDEN, size(plain, "dec_Wx", "dec_Wh", "dec_b"), size(plain, "Wo", "bo"), n_plain)))
    print("多出来的 %d 个参数全在输出层：Wo 从 %d×%d 变成 %d×%d，输出层从 %d 个变成 %d 个。"
          % (n_attn - n_plain, HIDDEN, VOCAB, 2 * HIDDEN, VOCAB, size(plain, "Wo", "bo"), size(attn, "Wo", "bo")))
    print("这一行要说实话：这一个种子上，%s。" % verdict((whole_plain, token_plain), (whole_attn, token_attn)))


def print_untouched(five):
    same = [unchanged(model) for model in (five.no_attn, five.attn)]
    counts = [sum(int(mask.sum()) for mask in masks.values()) for masks in same]
    start_row = all(masks["enc_Wx"][START].all() and count == masks["enc_Wx"][START].size   # 没变的正好就是这一行
                    for masks, count in zip(same, counts))
    print("训练完还和初始值一模一样的参数：不用注意力 %d 个，用注意力 %d 个；" % tuple(counts))
    print("正好都是 enc_Wx 里起始符那一行（编码器从来读不到起始符，拿不到梯度）：%s。" % ("是" if start_row else "否"))


def without_attention(setting):
    """第五节每个模型旁边的那一列：不用注意力，学习率和它一样。"""
    return Setting(attention=False, lr=setting.lr)


def growth_order(runs):
    """{名字: Run} 的名字，形成了对齐的在前（各自保持原来的顺序）：生长的表和图先画长出对齐的那一个。"""
    return sorted(runs, key=lambda name: not runs[name].final.formed)


def how_many(n):
    """「两个模型」「五列」：几个，用汉字写（到十为止）。"""
    return "两" if n == 2 else "零一二三四五六七八九十"[n]


class Plain(NamedTuple):
    """第五节里不用注意力的一个模型：它的设置和它在测试集上的评估。"""
    setting: Setting
    own: Evaluation


def letters_in(runs):
    """第五节这几次训练（runs：{名字: Run}）的序列有几位：T。"""
    return len(next(iter(runs.values())).matrix)


def beside_book(T):
    """原书的数字是 10 位的：序列一样长，才和它并排。"""
    return T == len(BOOK_MATRIX)


def print_section_five(runs, plains):
    """第五节：原书，同一个种子的几次训练（runs：{名字: Run}），每次旁边一个不用注意力的模型（plains：
    {名字: Plain}，学习率和它一样），一张数字表。原书的数字只在序列和它一样长（10 位）时并排。"""
    T = letters_in(runs)
    as_book = beside_book(T)
    from_book = lambda value: value if as_book else None
    rounds = next(iter(runs.values())).rounds
    print("%d 位，同一个种子，各训练 %d 轮%s；%s。" % (T, rounds, "（原书也是）" if as_book and rounds == BOOK_ROUNDS else "", "，".join(
        "%s%s用%s" % (name, "" if k else "模型", QUERY_NAMES[run.setting.query]) for k, (name, run) in enumerate(runs.items()))))
    columns = [column for name in runs for column in ((plains[name], None), (runs[name], name))]
    print("%s列依次是：原书（照抄原书或用它的矩阵算）、" % how_many(1 + len(columns)) + "、".join(
        "不用注意力" if name is None else name + "模型" for _, name in columns) + "。")
    picking = lambda value: [None if name is None else value(run) for run, name in columns]   # 只有注意力模型才有
    table = (("学习率；- 是没有这一项", None, ["%g" % model.setting.lr for model, _ in columns], "%s"),
             ("逐位正确", from_book(BOOK_PER_TOKEN), [model.own.per_token for model, _ in columns], "%.4f"),
             ("拿掉挑选（解码时权重全换成 1/%d）之后的逐位正确" % T, None, picking(lambda run: run.unpicked.per_token), "%.4f"),
             ("反对角线上的平均权重是均匀的几倍", from_book(diagonal_multiple(BOOK_MATRIX)),
              picking(lambda run: diagonal_multiple(run.matrix)), "%.2f"),
             ("反对角线左边一列上（末行不计）的平均权重是均匀的几倍", from_book(diagonal_multiple(BOOK_MATRIX, -1)),
              picking(lambda run: diagonal_multiple(run.matrix, -1)), "%.2f"))
    print_table([(["-" if value is None else form % value for value in [book] + ours], label)
                 for label, book, ours, form in table])
    print("对齐（拿掉挑选后降 %.2f 以上，且反对角线 %.0f 倍以上）：%s。" % (FORMED_DROP, FORMED_DIAGONAL, "，".join(
        "%s模型%s" % (name, "形成了" if run.final.formed else "没有形成") for name, run in runs.items())))


def print_section_five_matrices(runs):
    """第五节的三张矩阵（正文里画成图，数字折叠在图下）；原书的只在序列和它一样长时并排。"""
    T = letters_in(runs)
    book = {"原书": BOOK_MATRIX} if beside_book(T) else {}
    print("%s个权重矩阵，每格是权重的百分之几（均匀是 %g）；%s我们的是测试集 %d 条的平均。"
          % (how_many(len(book) + len(runs)), 100 / T, "原书的照抄原书，" if book else "", TEST_SIZE))
    matrices = {**book, **{name + "模型": run.matrix for name, run in runs.items()}}
    print_matrices(list(matrices.values()), list(matrices))


def print_growth(runs):
    """第五节：每个模型训练途中的每一个检查点，一张表（正文把它画成曲线）。"""
    print("%s个模型训练途中的每一个检查点（第 0 轮是还没训练，之后每 10 轮量一次）：" % how_many(len(runs)))
    print("横轴：第几轮（第 600 轮以后每 100 轮量一次，图上每个检查点一样宽）")
    print("纵轴：逐位正确、拿掉挑选后降多少（规则：至少 %.2f）、反对角线是均匀的几倍（规则：至少 %.0f 倍）"
          % (FORMED_DROP, FORMED_DIAGONAL))
    shown = growth_order(runs)
    print("曲线：" + "、".join("%s模型（%s，学习率 %g）" % (name, QUERY_NAMES[runs[name].setting.query],
                                                      runs[name].setting.lr) for name in shown))
    for n in sorted(runs[shown[0]].course):
        print("%-6d" % n + "".join("   %.4f %7.4f %5.2f" % (cp.per_token, cp.drop, cp.diagonal)
                                   for cp in (runs[name].course[n] for name in shown)))


def print_growth_summary(runs):
    """第五节：形成了对齐的模型，对齐什么时候长出来，和它学会这个任务比；没形成的，每个一行。"""
    for name in growth_order(runs):
        course = runs[name].course
        if runs[name].final.formed:
            start, stop = jump(course)
            learned = learning(course)
            print("%s模型：第一次满足对齐的规则在第 %d 轮；跳从第 %d 轮到第 %d 轮，共 %d 轮。"
                  % (name, first_round(course, lambda n: course[n].formed), start, stop, stop - start))
            print("逐位正确同样量（第 0 轮 %.4f，训练完 %.4f，涨的两成到八成）：第 %d 轮到第 %d 轮，共 %d 轮。" % (
                course[0].per_token, course[max(course)].per_token, learned[0], learned[1], learned[1] - learned[0]))
            continue
        flat = course.values()
        print("%s模型：反对角线 %.2f 到 %.2f 倍，拿掉挑选最多降 %.4f，满足规则的检查点 %d 个。"
              % (name, min(cp.diagonal for cp in flat), max(cp.diagonal for cp in flat),
                 max(cp.drop for cp in flat), sum(cp.formed for cp in flat)))


GROWTH_STAGES = ("跳开始之前", "跳到一半", "跳完", "训练完")


def print_growth_matrices(name, run):
    """第五节：同一个模型在四个检查点的矩阵，两个两个并排（正文画成图）。"""
    panels = growth_panels(run.course)
    print("%s模型训练途中四个检查点的权重矩阵，每格是权重的百分之几：" % name)
    titles = ["第 %d 轮（%s）" % (n, stage) for n, stage in zip(panels, GROWTH_STAGES)]
    for k in range(0, len(panels), 2):
        print_matrices([run.course[n].matrix for n in panels[k:k + 2]], titles[k:k + 2])


def print_long_run_numbers(run, name):
    """一次 10 位训练的数字：整串全对和逐位正确，拿掉挑选之后，按输出位置的逐位正确，每一行的峰值落在哪一列。"""
    matrix = run.matrix
    T = len(matrix)
    print("%s（%s，学习率 %g）：" % (name, QUERY_NAMES[run.setting.query], run.setting.lr))
    print("整串全对 %.4f，逐位正确 %.4f；拿掉挑选之后整串全对 %.4f，逐位正确 %.4f（变化 %+.4f）。"
          % (run.own.whole, run.own.per_token, run.unpicked.whole, run.unpicked.per_token, change(run.final.drop)))
    print("按输出位置的逐位正确：" + " ".join("%.2f" % a for a in run.own.by_position))
    columns, on_diagonal, left_of_it = peak_counts(matrix)
    print("最大的权重 %.2f，是均匀的 %.1f 倍；每一行的峰值落在输入第几列：%s" % (matrix.max(), matrix.max() * T, columns))
    print("落在反对角线（输入 %d − r）上的有 %d 行，落在它左边一列（输入 %d − r）上的有 %d 行。"
          % (T + 1, on_diagonal, T, left_of_it))


def print_reading_order(name, run):
    same = encoder_reads_in_order(run.model, make_test_set(len(run.matrix)))
    print("把输入第 k 位换成别的字母（%s模型，测试集 %d 条，每一个 k）：" % (name, TEST_SIZE))
    print("编码器前 k − 1 步的状态一个比特也不变，第 k 步的变了：%s。" % ("是" if same else "否"))


REPLACEMENTS = (("reversal", "（甲）倒序要的那一列：第 r 行只有第 {T_plus_1} − r 列是 1"),   # {T}：序列有几位
                ("shifted", "（乙）左边一列：第 r 行只有第 {T} − r 列是 1（末行绕回第 {T} 列）"),
                ("other", "（丙）另一条测试序列（第 i − 1 条）算出的权重"),
                ("uniform", "（丁）全是 1/{T}（拿掉挑选）"))


def print_interventions(by_name):
    """第五节的干预：同一个模型，解码时把权重换掉，逐位正确怎么变。每个模型一列，贪心解码和喂对的字母各一组。"""
    names, runs = list(by_name), list(by_name.values())
    T = letters_in(by_name)
    print("把权重换掉：参数一个不动（（戊）除外），只在解码时把每一步的注意力权重换成别的（逐位正确）。")
    print("；".join("%s模型：%s，学习率 %g" % (name, QUERY_NAMES[run.setting.query], run.setting.lr)
                   for name, run in zip(names, runs)) + "。")
    print("「贪心」：每一步读进自己上一步的输出（正文的表就是它）；「喂对」：每一步读进正确答案的上一位，")
    print("一步错了不传到下一步，量到的只是换了权重的那一步。%s是%s模型；- 是没有量。"
          % ("".join("「%s」" % name[1] for name in names), "、".join(names)))
    print("%s列依次是：" % how_many(2 * len(names)) + "、".join(mode + name[1] for mode in ("贪心", "喂对") for name in names)
          + "；数字后面是解码时每一步的权重。")
    blank = [None] * len(runs)
    swapped = {name: (label.format(T=T, T_plus_1=T + 1), [run.swaps.greedy[name].per_token for run in runs],
                      [run.swaps.forced_accuracy(name) for run in runs]) for name, label in REPLACEMENTS}
    follows = ("    （乙）时输出正好是被指到的那一列的字母的比例（不是逐位正确）", [run.swaps.follows for run in runs], blank)
    rows = [("不换：模型自己算的", [run.own.per_token for run in runs], [run.swaps.forced_accuracy("own") for run in runs]),
            swapped["reversal"], swapped["shifted"], follows, swapped["other"], swapped["uniform"]]
    rows.append(("（戊）全是 1/%d，只重新训练输出层 %d 轮（其余参数冻结）" % (T, REFIT_ROUNDS),
                 [run.refit[REFIT_ROUNDS] for run in runs], [run.refit_forced for run in runs]))
    rows += [("    （戊）训练到第 %d 轮时" % n, [run.refit[n] for run in runs], blank) for n in REFIT_CHECKPOINTS[:-1]]
    print_table([(["-" if v is None else "%.4f" % v for v in greedy + forced], label) for label, greedy, forced in rows])
    print("对照：每一步都输出这条序列里出现最多的字母（不分第几步），逐位正确 %.4f；"
          % most_frequent_letter_accuracy(make_test_set(T)))
    print("瞎猜（每一步随便输出 %d 个字母里的一个），逐位正确平均 %.4f。" % (LETTERS, 1 / LETTERS))
    print("（丙）换上的权重和模型自己的差多少：" + "，".join("%s %.3f" % (name, run.swaps.other_change)
                                                          for name, run in zip(names, runs)))
    print("（每一行两个分布之差的绝对值加起来的一半，再平均；0 是一样，1 是毫不重叠。）")
    print()
    print_forced_by_position(by_name)


def print_forced_by_position(runs):
    """喂对的字母时，每种权重下按输出位置的逐位正确。标签放在数字后面，数字的列在任何字体里都对得齐。"""
    T = letters_in(runs)
    print("喂对的字母时，按输出位置的逐位正确：")
    print(" ".join("%4d" % (r + 1) for r in range(T)) + "   模型，解码时的权重")
    labels = (("own", "不换"),) + tuple((name, label[:3]) for name, label in REPLACEMENTS)
    for name, run in runs.items():
        for key, label in labels:
            print(" ".join("%.2f" % a for a in run.swaps.forced_by_position(key)) + "   %s模型，%s" % (name, label))


STARTED = {}       # 程序的 main（〈附录：同时训练〉）早早交给别的进程去训练的：{设置: 之后取结果的 Future}


def train_section_five(setting):
    """第五节的一次训练（SECTION_FIVE_LENGTH 位，第一对种子，SECTION_FIVE_ROUNDS 轮）：用注意力的是带训练途中
    检查点和一切量到的 Run，不用注意力的是 Plain。"""
    if setting.attention:
        return attention_runs(setting, length=SECTION_FIVE_LENGTH, rounds=SECTION_FIVE_ROUNDS,
                              checkpoints=GROWTH_CHECKPOINTS)[0]
    return Plain(setting, train_and_evaluate(setting, SECTION_FIVE_LENGTH, SECTION_FIVE_ROUNDS))


def section_five_result(setting):
    """main 已经交给别的进程去训练的，就取那个结果（只取一次）；否则当场训练。"""
    future = STARTED.pop(setting, None)
    return future.result() if future is not None else train_section_five(setting)


def print_transcript():
    """按顺序打印实跑输出的十段，段与段之间空一行。每段前面的注释写着它是第几段、在讲义的哪里；
    笔记本（make notebook）把每段的这几行原样放进那一段实跑输出上面的一格，所以每段先算出它要的，再打印。"""
    # 第 1 段：第三节，手算一遍
    print_hand_example()
    print()
    # 第 2 段：第四节，5 位反转任务
    five = reversal_comparison()
    print_reversal(five)
    print()
    # 第 3 段：第五节，原书、不用注意力的两个模型和同一个种子的两次 10 位训练
    runs = {name: section_five_result(setting) for name, setting in SECTION_FIVE.items()}
    plains = {name: section_five_result(without_attention(setting)) for name, setting in SECTION_FIVE.items()}
    print_section_five(runs, plains)
    print()
    # 第 4 段：第五节的三张矩阵（正文画成图，数字折叠着）
    print_section_five_matrices(runs)
    print()
    # 第 5 段：第五节，对齐是什么时候长出来的
    print_growth_summary(runs)
    print()
    # 第 6 段：完整实现里的梯度检查
    print_gradient_checks()
    print()
    # 第 7 段：第四节两个模型没动过的参数
    print_untouched(five)
    print()
    # 第 8 段：第五节的干预，把两个模型的权重换掉
    print_interventions(runs)
    print()
    # 第 9 段：两个模型训练途中的每一个检查点（正文画成曲线）
    print_growth(runs)
    print()
    # 第 10 段：第二个模型训练途中四个检查点的矩阵（正文画成图）
    grown = growth_order(runs)[0]
    print_growth_matrices(grown, runs[grown])
    print()
    # 第 11 段：第五节的数字：两个模型、原书的矩阵，编码器按顺序读
    for name, run in runs.items():
        print_long_run_numbers(run, name + "模型")
        print()
    print_book_matrix()
    print()
    print_reading_order(*next(iter(runs.items())))         # 编码器按不按顺序读，哪个模型都一样：用第一个

# attention.md:3397 (附录：同时训练)
def in_background(pool, function, *args, **options):
    """让另一个进程去算 function(*args, **options)，返回一个之后取结果的 Future。进程之间按「模块名.函数名」
    传函数，所以这个模块要能按名字导入；不能的时候（比如被别的程序按文件路径执行），就当场算。"""
    if getattr(sys.modules.get(function.__module__), function.__name__, None) is function:
        return pool.submit(function, *args, **options)
    done = Future()
    done.set_result(function(*args, **options))
    return done


def main():
    """程序从这里开始：先调好内存分配（下面的〈附录：让释放的内存留在进程里〉），再把第五节的两次训练交给另外两个进程，然后按顺序打印。"""
    keep_freed_memory()
    with ProcessPoolExecutor(max_workers=2) as pool:
        settings = list(SECTION_FIVE.values())
        for setting in settings + [without_attention(setting) for setting in settings]:   # 最久的先交出去
            STARTED[setting] = in_background(pool, train_section_five, setting)
        print_transcript()

# attention.md:3341 (转置着存的循环)
def right_multiplier(W, batch):
    """循环里要拿同一个 W 乘很多次：返回函数 f，f(x_cols) = (x @ W).T，x_cols 是转置着存的 (K, M·batch)：
    先是第 1 个模型的 batch 列，再是第 2 个的……W (M, K, N)，每个模型乘自己的 W。
    W 先沿批量铺开一次；之后每一步只剩一次逐元素乘、一次按 k 顺序的求和，结果和 mm 的一模一样。"""
    W_wide = np.repeat(W.transpose(1, 2, 0), batch, axis=2)                # (K, N, M·batch)
    return lambda x_cols: np.add.reduce(W_wide * x_cols[:, None, :], axis=0)


def rnn_fast(x_rows, Wh, h):
    """rnn 的快写法：循环里状态转置着存，h_cols (H, M·B)，所有模型的批量在最里层。"""
    M, B, T, H = x_rows.shape
    x_steps = x_rows.reshape(M * B, T, H).transpose(1, 2, 0).copy()    # (T, H, M·B)
    hs = np.empty_like(x_steps)
    times_Wh = right_multiplier(Wh, B)
    h_cols = h.reshape(M * B, H).T
    for t in range(len(x_steps)):
        h_cols = tanh(x_steps[t] + times_Wh(h_cols))      # h = tanh(x_t + h @ Wh)，转置着写
        hs[t] = h_cols
    return hs.transpose(2, 0, 1).reshape(M, B, T, H)   # 转回 (M, B, T, H)


def rnn_backward_fast(dhs, hs, h0, Wh):
    """rnn_backward 的快写法：也转置着算，(T, H, M·B)。"""
    M, B, T, H = dhs.shape
    dhs_steps, hs_steps = (x.reshape(M * B, T, H).transpose(1, 2, 0) for x in (dhs, hs))
    dtanh = 1 - hs_steps * hs_steps                # tanh 的导数是 1 − h²
    dz = np.empty(dtanh.shape)
    dh_cols = np.zeros(dz.shape[1:])               # 从后一步流回来的梯度，转置着存 (H, M·B)
    times_WhT = right_multiplier(np.swapaxes(Wh, 1, 2), B)
    for t in reversed(range(len(dz))):
        dz[t] = (dhs_steps[t] + dh_cols) * dtanh[t]
        dh_cols = times_WhT(dz[t])                 # 流回上一步的隐状态：dh = dz_t @ Whᵀ，转置着写
    dz = np.ascontiguousarray(dz.transpose(2, 0, 1)).reshape(M, B, T, H)   # 转回来，连续存放：摞行时不必再复制
    h_prev = np.concatenate([h0[:, :, None], hs[:, :, :-1]], axis=2)      # 每一步乘 Wh 的那个 h_{t-1}
    return dz, weight_grad(h_prev, dz), dh_cols.T.reshape(M, B, H)


def input_grads_fast(dz, tokens, Wx):
    """input_grads 的快写法：不去乘 one-hot 里那一大堆 0，np.bincount 按行的顺序把每一步的 dz 一格格地加到
    它读进的那个记号的那一行上（每个模型加到自己的 Wx 上），加出来的和按 k 的顺序乘出来的一模一样。"""
    M, V, H = Wx.shape
    row = (model_numbers(tokens) * V + tokens).ravel()             # 每一步加到哪个模型的 Wx 的哪一行 (M·B·T,)
    cells = (row[:, None] * H + np.arange(H)).ravel()              # dz 的每个数加到哪一格 (M·B·T·H,)
    return np.bincount(cells, weights=dz.ravel(), minlength=M * V * H).reshape(Wx.shape)

# attention.md:3454 (精确的矩阵乘法、exp 与 tanh)
def mm(a, b):
    """a @ b，形状规则同 np.matmul；但每个结果都按 k = 0, 1, 2, … 的顺序一项项加出来。"""
    if a.ndim == 1:                                   # 左边是一个向量：当成一行来乘
        return mm(a[None, :], b)[..., 0, :]
    if b.ndim == 1:                                   # 右边是一个向量：当成一列来乘
        return mm(a, b[:, None])[..., 0]
    if b.ndim == 2:                                   # 右边是一个矩阵：左边所有的行摞成一摞来乘
        out = matrix_product(a.reshape(-1, a.shape[-1]), b)
        return out.reshape(a.shape[:-1] + b.shape[1:])
    if a.shape[:-2] != b.shape[:-2]:                  # 批量维不一样时，按 matmul 的规则补齐
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
    out_shape = a.shape[:-1] + b.shape[-1:]
    a, b = a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:])
    if len(a) <= a.shape[1]:                          # 批量少、行多（每个模型乘自己的参数矩阵）：一个一个地乘
        out = np.stack([matrix_product(a_i, b_i) for a_i, b_i in zip(a, b)])
    else:
        out = batched_product(a, b)
    return out.reshape(out_shape)


# 下面两种乘法都先把所有乘积存进一块 (K, …)：k 在最外层，沿它求和就是按 k 的顺序相加
# （〈转置着存的循环〉里的 right_multiplier 也是）。
# 其余各维怎么摆只影响速度：最里层放最长、又在内存里连续的那一维，NumPy 的内层循环一次做得最多。

def matrix_product(a, b):
    """(R, K) @ (K, N)：R 行。"""
    if len(a) > b.shape[1]:                           # R 更长：乘积摆成 (K, N, R)
        return np.add.reduce(b[:, :, None] * np.ascontiguousarray(a.T)[:, None, :], axis=0).T
    return np.add.reduce(a.T[:, :, None] * np.ascontiguousarray(b)[:, None, :], axis=0)


def batched_product(a, b):
    """(B, R, K) @ (B, K, N)：B 批，每批 R 行。乘积摆成 (K, R, N, B)：批量在最里层。"""
    a_t = np.ascontiguousarray(a.transpose(2, 1, 0))   # (K, R, B)
    b_t = np.ascontiguousarray(b.transpose(1, 2, 0))   # (K, N, B)
    return np.add.reduce(a_t[:, :, None, :] * b_t[:, None, :, :], axis=0).transpose(2, 0, 1)


def decimal_table(f, n):
    """f(0), f(1), …, f(n-1)，用 40 位十进制算好再舍入成 float：每台机器上都一样。"""
    with localcontext() as ctx:
        ctx.prec = 40
        return np.array([float(f(Decimal(i))) for i in range(n)])


EXP_BITS = 6
EXP_STEPS = 2 ** EXP_BITS                           # exp 把 x 拆成 (k/64)·ln2 + r
with localcontext() as _ctx:
    _ctx.prec = 40
    _STEP = Decimal(2).ln() / EXP_STEPS
    STEP_HI = int(_STEP * 2 ** 40) / 2 ** 40        # ln2/64 的高位：只有 34 位，k·STEP_HI 没有舍入
    STEP_LO = float(_STEP - Decimal(STEP_HI))       # 剩下的低位
    INV_STEP = float(1 / _STEP)
EXP_TABLE = decimal_table(lambda i: (i * _STEP).exp(), EXP_STEPS)   # 2 的 i/64 次方

# exp、tanh、log 每一步都要调用，数组又小，时间多花在调用本身上。所以：常数先做成 0 维数组，NumPy 就不必每次把
# Python 的 float 再转换一遍；中间结果原地改（out=、+=、*=），少分配内存。值一个比特也不变：a + b 和 b + a、
# a·b 和 b·a 在 IEEE 里是同一个数。结果写回从 x 算出来的数组：它沿用 x 在内存里的维度顺序，和以前一样，后面
# 沿某一维求和的顺序也就不变（NumPy 沿内存里连续的那一维求和时用的是另一种顺序，见上面 mm 的说明）。
# 原地改要数组：传进来的是一个数时，当成只有一个元素的数组来算。
_EXP_FLOOR, _INV_STEP, _STEP_HI, _STEP_LO, _ONE = (np.array(c) for c in (-746.0, INV_STEP, STEP_HI, STEP_LO, 1.0))
_EXP_COEFFICIENTS = tuple(np.array(1 / n) for n in (120, 24, 6, 2, 1, 1))   # e^r ≈ 1 + r(1 + r(1/2 + r(1/6 + r(1/24 + r·(1/120)))))


def horner(x, coefficients):
    """c[-1] + x·(c[-2] + x·(… + x·(c[1] + x·c[0])))：从最里面那一层往外算，原地改同一个数组。"""
    p = x * coefficients[0]
    for c in coefficients[1:-1]:
        p += c
        p *= x
    p += coefficients[-1]
    return p


def exp(x):
    """e 的 x 次方 = 2^(k/64) · e^r，|r| ≤ ln2/128，e^r 用 5 次多项式。"""
    x = np.asarray(x, dtype=float)
    if x.ndim == 0:
        return exp(x.reshape(1))[0]
    x = np.maximum(x, _EXP_FLOOR)                   # e⁻⁷⁴⁶ 在 float64 里已经是 0
    k = x * _INV_STEP
    np.rint(k, out=k)
    r = k * _STEP_HI
    np.subtract(x, r, out=r)
    r -= k * _STEP_LO                               # r = (x − k·STEP_HI) − k·STEP_LO
    p = horner(r, _EXP_COEFFICIENTS)
    k = k.astype(np.int32)
    p *= EXP_TABLE.take(k & (EXP_STEPS - 1))        # 2 的 (k mod 64)/64 次方：查表（k & 63 对负数也对，比 % 快）
    return np.ldexp(p, k >> EXP_BITS, out=p)        # 再乘 2 的 (k 整除 64) 次方


TANH_STEPS, TANH_MAX = 256, 20                      # tanh(20) 在 float64 里已经就是 1


def tanh_table(n):
    """tanh(j/256)，j = 0 … n−1。e^(2j/256) 用 40 位十进制连乘得到（比逐个求 exp 快得多）。"""
    with localcontext() as ctx:
        ctx.prec = 40
        step = (Decimal(2) / TANH_STEPS).exp()
        e, values = Decimal(1), []
        for _ in range(n):
            values.append(float((e - 1) / (e + 1)))
            e *= step
    return np.array(values)


TANH_TABLE = tanh_table(TANH_MAX * TANH_STEPS + 1)
_MAX, _STEPS = np.array(float(TANH_MAX)), np.array(float(TANH_STEPS))
_TANH_COEFFICIENTS = (np.array(2 / 15), np.array(-1 / 3))   # tanh b ≈ b + b³·(−1/3 + b²·2/15)


def tanh(x):
    """tanh(a + b) = (tanh a + tanh b) / (1 + tanh a · tanh b)：a 是离 |x| 最近的 j/256，查表；
    |b| ≤ 1/512，tanh b ≈ b − b³/3 + 2b⁵/15（下一项小于 10⁻¹⁸）。"""
    x = np.asarray(x, dtype=float)
    if x.ndim == 0:
        return tanh(x.reshape(1))[0]
    a = np.abs(x)
    np.minimum(a, _MAX, out=a)
    j = a * _STEPS
    np.rint(j, out=j)
    b = j / _STEPS
    np.subtract(a, b, out=b)                        # b = a − j/256，精确：a 和 j/256 离得足够近
    b2 = b * b
    tanh_b = horner(b2, _TANH_COEFFICIENTS)
    tanh_b *= b * b2
    tanh_b += b
    tanh_a = TANH_TABLE.take(j.astype(np.intp))
    denominator = tanh_a * tanh_b
    denominator += _ONE
    tanh_b += tanh_a
    tanh_b /= denominator                           # (tanh a + tanh b) / (1 + tanh a · tanh b)
    return np.copysign(tanh_b, x, out=tanh_b)


with localcontext() as _ctx:
    _ctx.prec = 40
    LN2 = float(Decimal(2).ln())
SQRT_HALF = np.sqrt(0.5)
_LN2, _TWO = np.array(LN2), np.array(2.0)
_LOG_COEFFICIENTS = tuple(np.array(1 / k) for k in range(21, 0, -2))   # 1/21, 1/19, …, 1/1


def log(x):
    """自然对数：x = m·2^e，m 挪到 [√½, √2)，log m = 2·atanh((m-1)/(m+1)) 用级数。只用精确运算。
    x 必须是正数：log(0) 给出的不是 −inf，是一个没有意义的数。"""
    m, e = np.frexp(x)
    low = m < SQRT_HALF
    m = np.where(low, _TWO * m, m)
    e = np.where(low, e - 1, e)
    s = m - _ONE
    m += _ONE
    s /= m                                          # s = (m−1)/(m+1)，|s| ≤ 0.172，级数到 s²¹ 已足够
    series = horner(s * s, _LOG_COEFFICIENTS)       # 1 + s²/3 + s⁴/5 + … + s²⁰/21
    s *= _TWO
    s *= series
    result = e * _LN2
    result += s                                     # e·ln2 + 2s·series
    return result

# attention.md:3421 (附录：让释放的内存留在进程里)
def keep_freed_memory():
    """让 glibc 把释放的内存留着重用，不还给系统。只在 glibc 上做：别的 C 库没有 mallopt，或者编号不同。"""
    try:
        libc = ctypes.CDLL(None)                       # 本进程已经载入的 C 库
    except (OSError, TypeError):
        return
    if not hasattr(libc, "gnu_get_libc_version"):      # 只有 glibc 有这个函数
        return
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3        # glibc 的 <malloc.h> 里的编号
    if libc.mallopt(M_MMAP_THRESHOLD, 32 << 20):       # 32 MiB 以下的块都从堆里分，不单独映射（32 位的 glibc 不接受，返回 0）
        libc.mallopt(M_TRIM_THRESHOLD, 64 << 20)       # 堆顶空出 64 MiB 以上才还给系统；只调这一个反而更糟


# attention.md:389 (generated/attention.py)
if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")     # 不论终端是什么编码，输出的字节都一样
    main()
