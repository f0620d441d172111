# Generated from attention.md by tangle.py — do not edit; edit attention.md and run make tangle.
# sha256 of the lines below: 71fb7573602e38ecee8d7fd6b47e3e32989b79b686cdd713e88a1c8504ff007d
# attention.md:885 (generated/experiments.py)
"""「30 秒实验」的答案。运行：python generated/experiments.py（要几分钟）。

由 attention.md 用 tangle.py 生成，请改 attention.md，不要改这个文件。
"""
from attention import *        # 正文的全部代码：同一个文件夹里的 generated/attention.py

# attention.md:694 (实验一：除以根号 d，还是除以 d)
SEED_EXPERIMENT = 4           # 实验一用的随机流


def unit_variance(rng, shape):
    """均值 0、方差 1 的均匀分布 [-√3, √3]。只用精确运算抽样（randn 要经过 C 库的 log）。"""
    return rng.uniform(-np.sqrt(3.0), np.sqrt(3.0), size=shape)


with localcontext() as _ctx:
    _ctx.prec = 40
    LN2 = float(Decimal(2).ln())
SQRT_HALF = np.sqrt(0.5)


def log(x):
    """自然对数：x = m·2^e，m 挪到 [√½, √2)，log m = 2·atanh((m-1)/(m+1)) 用级数。只用精确运算。"""
    m, e = np.frexp(x)
    low = m < SQRT_HALF
    m = np.where(low, 2 * m, m)
    e = np.where(low, e - 1, e)
    s = (m - 1) / (m + 1)                          # |s| ≤ 0.172，级数到 s²¹ 已足够
    s2 = s * s
    series = 1 / 21
    for k in range(19, 0, -2):
        series = 1 / k + s2 * series
    return e * LN2 + 2 * s * series


def attention_summary(q, K, scale):
    """一批查询 q (N, 1, d) 对 K (N, T, d)，分数除以 scale：
    平均最大权重、平均熵、权重对查询的梯度 ∂α/∂q 的平均大小（Frobenius 范数）。"""
    scores = mm(q, np.swapaxes(K, -1, -2))[:, 0] / scale          # (N, T)
    p = softmax(scores)
    entropy = -(p * log(np.maximum(p, 1e-300))).sum(axis=-1)
    context = mm(p[:, None, :], K)                                  # (N, 1, d)
    grad = p[:, :, None] * (K - context) / scale                    # ∂α_i/∂q = α_i (k_i − Σ α_j k_j) / scale
    grad_q = np.sqrt((grad * grad).sum(axis=(1, 2)))
    jacobian = p[:, :, None] * (np.eye(p.shape[1]) - p[:, None, :])   # ∂α/∂分数 = diag(α) − α αᵀ
    grad_scores = np.sqrt((jacobian * jacobian).sum(axis=(1, 2)))
    return variance(scores), p.max(axis=-1).mean(), entropy.mean(), grad_scores.mean(), grad_q.mean()


def mean(x):
    """所有元素的平均。先沿第一维按顺序加，再加剩下的几项：NumPy 把超过 8192 项的
    一维求和分块相加，分块的办法各版本不同，这样写每次求和都只有几千项以内。"""
    return x.reshape(len(x), -1).sum(axis=0).sum() / x.size


def variance(x):
    centred = x - mean(x)
    return mean(centred * centred)


def scaling_experiment(dims=(3, 300), n=2000, T=10):
    rng = np.random.RandomState(SEED_EXPERIMENT)
    print("一、除以根号 d，还是除以 d？q、K 的每个分量独立、均值 0、方差 1；%d 个查询，每个对 %d 个 key。" % (n, T))
    print("均匀分布的熵是 ln %d = %.3f，最大权重 %.3f。" % (T, log(np.array([float(T)]))[0], 1 / T))
    print()
    print("d      缩放          分数的方差   最大权重    熵     ∂α/∂分数   ∂α/∂q")
    print("-" * 72)
    for d in dims:
        q, K = unit_variance(rng, (n, 1, d)), unit_variance(rng, (n, T, d))
        for label, scale in (("不缩放", 1.0), ("除以根号 d", np.sqrt(d)), ("除以 d", float(d))):
            var, top, entropy, grad_scores, grad_q = attention_summary(q, K, scale)
            print("%-6d %-12s %10.3f   %8.3f  %7.3f   %8.4f  %8.4f"
                  % (d, label, var, top, entropy, grad_scores, grad_q))

# attention.md:769 (实验二：只保留最大的那个)
def hard_max(scores):
    """「只保留最大的那个」：最大的分数拿权重 1，其余拿 0。"""
    return (scores == scores.max()).astype(float)


def hard_attention_experiment():
    """把 softmax 换成「只保留最大的那个」：输出、以及输出对四个分数的梯度。"""
    q, K, dots, scaled, weights, context = hand_example()
    hard = hard_max(scaled)
    hard_context = mm(hard[None, :], K)[0]
    soft_grad = weights[:, None] * (K - context)                   # ∂ctx/∂s_i = α_i (k_i − ctx)
    hard_grad = np.empty_like(K)
    for i in range(len(K)):                                        # 硬选择没有公式，只能数值地挪一挪
        step = np.zeros(len(K))
        step[i] = 1e-6
        up, down = (mm(hard_max(s)[None, :], K)[0] for s in (scaled + step, scaled - step))
        hard_grad[i] = (up - down) / 2e-6
    print("二、把 softmax 换成「只保留最大的那个」（手算那个例子）：")
    print("硬选择的权重 " + " ".join("%.4f" % w for w in hard) + "，输出 " + " ".join("%+.4f" % c for c in hard_context))
    print("softmax 的权重 " + " ".join("%.4f" % w for w in weights) + "，输出 " + " ".join("%+.4f" % c for c in context))
    print()
    print("输出对第 i 个分数的梯度     softmax                      硬选择")
    for i in range(len(K)):
        print("第 %d 个 key        %s      %s" % (i + 1, " ".join("%+.4f" % g for g in soft_grad[i]),
                                            " ".join("%+.4f" % g for g in hard_grad[i])))
    print("硬选择的梯度处处是 0：%s；softmax 的梯度里非零的有 %d 个（共 %d 个）。"
          % ("是" if not hard_grad.any() else "否", np.count_nonzero(soft_grad), soft_grad.size))

# attention.md:805 (实验三：多个种子)
EXPERIMENT_SEEDS = [(s, 100 + s) for s in range(10)]   # 种子 s：RandomState(s) 初始化，RandomState(100 + s) 抽批次


def mean_and_spread(values):
    values = np.asarray(values)
    return values.mean(), np.sqrt(variance(values))


def seed_experiment(pool, length, rounds, variants):
    """variants：[(名字, 用不用注意力, 查询)]。每个种子、每个做法都从头训练一次。
    这些训练互不相干，交给进程池同时跑；pool.map 按提交的顺序交回结果，所以输出和先后无关。"""
    jobs = [(length, rounds, attention, seeds, query)          # train_and_evaluate 的参数，见第五节
            for seeds in EXPERIMENT_SEEDS for _, attention, query in variants]
    outcomes = list(pool.map(train_and_evaluate, *zip(*jobs)))
    return {name: outcomes[i::len(variants)] for i, (name, _, _) in enumerate(variants)}


def print_seed_table(length, rounds, results):
    names = list(results)
    print("%d 位序列，每个做法 %d 个种子各训练 %d 轮（整串全对 / 逐位正确）：" % (length, len(EXPERIMENT_SEEDS), rounds))
    print(("种子    " + "".join("%-22s" % name for name in names)).rstrip())
    for i, (seed_init, _) in enumerate(EXPERIMENT_SEEDS):
        row = "%-8d" % seed_init + "".join("%.4f / %.4f       " % results[name][i][:2] for name in names)
        print(row.rstrip())
    for k, label in ((0, "整串全对"), (1, "逐位正确")):
        print("%s 平均 ± 标准差：" % label + "，".join(
            "%s %.4f ± %.4f" % ((name,) + mean_and_spread([r[k] for r in results[name]])) for name in names))


def print_peak_offsets(results):
    for name, runs in results.items():
        if runs[0][3] is None:
            continue
        offsets = np.concatenate([peak_offsets(matrix) for *_, matrix in runs])
        counts = {o: int((offsets == o).sum()) for o in (-2, -1, 0, 1)}
        print("%s：%d 行里，峰值在严格倒序那一列 %d 行，左边一列 %d 行，左边两列 %d 行，右边一列 %d 行，其他 %d 行。"
              % (name, len(offsets), counts[0], counts[-1], counts[-2], counts[1], len(offsets) - sum(counts.values())))

# attention.md:853 (实验四：训练得更久)
def diagonal_weight(matrix, offset):
    """第 r 行第 T+1−r+offset 列的权重的平均：offset=0 是严格倒序的反对角线，−1 是左边一列。"""
    T = len(matrix)
    rows = np.arange(T)
    cols = T - 1 - rows + offset
    keep = (cols >= 0) & (cols < T)
    return matrix[rows[keep], cols[keep]].mean()


LONG_ROUNDS = 30000


def print_long_training(whole, per_token, matrix, rounds=LONG_ROUNDS):
    print("四、训练充分之后会不会锐化？同样的 10 位模型、同样的种子，训练 %d 轮：" % rounds)
    print("整串全对 %.4f，逐位正确 %.4f。" % (whole, per_token))
    print_matrix(matrix)
    heatmap(matrix)
    print("反对角线（严格倒序）上的平均权重 %.3f，左边一列 %.3f，均匀是 %.3f。"
          % (diagonal_weight(matrix, 0), diagonal_weight(matrix, -1), 1 / len(matrix)))


def main():
    with ProcessPoolExecutor(max_workers=2) as pool:       # 两个进程同时训练；结果和进程数、先后都无关
        # 最久的那次训练先交出去，其余的训练由两个进程分着跑
        long_training = pool.submit(train_and_evaluate, 10, LONG_ROUNDS)   # 第五节那个模型，训练更久
        scaling_experiment()
        print()
        hard_attention_experiment()
        print()
        print("三、多个种子。")
        short = seed_experiment(pool, 5, 2000, [("不用注意力", False, "after"), ("用注意力", True, "after")])
        print_seed_table(5, 2000, short)
        print()
        variants = [("不用注意力", False, "after"), ("Luong 查询", True, "after"), ("Bahdanau 查询", True, "before")]
        long = seed_experiment(pool, 10, 3000, variants)
        print_seed_table(10, 3000, long)
        print()
        whole, per_token, _, matrix = long_training.result()
        print_long_training(whole, per_token, matrix)
    print()
    print("五、峰值落在哪一列（10 位，10 个种子，每个种子 10 行）：")
    print_peak_offsets(long)
    for name, runs in long.items():
        if runs[0][3] is not None:
            print()
            print("%s：10 个种子平均的注意力权重" % name)
            heatmap(sum(matrix for *_, matrix in runs) / len(runs))


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    main()
