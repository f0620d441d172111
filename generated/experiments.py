# Generated from attention.md by tangle.py — do not edit; edit attention.md and run make tangle.
# sha256 of the lines below: 8373ddcd4139bd2cfa9414e4ec0671466d4c80c00d3c18a4be383d7b4e7d4b6d
# attention.md:1547 (generated/experiments.py)
"""「30 秒实验」的答案。运行：python generated/experiments.py（要几分钟）。

由 attention.md 用 tangle.py 生成，请改 attention.md，不要改这个文件。
"""
from attention import *        # 正文的全部代码：同一个文件夹里的 generated/attention.py

# attention.md:927 (实验一：除以根号 d，还是除以 d)
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

# attention.md:1019 (实验二：只保留最大的那个)
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

# attention.md:1071 (实验三：多个种子)
EXPERIMENT_SEEDS = [(s, 100 + s) for s in range(10)]   # 种子 s：RandomState(s) 初始化，RandomState(100 + s) 抽批次


def mean_and_spread(values):
    values = np.asarray(values)
    return values.mean(), np.sqrt(variance(values))


CHECKPOINTS = (1000, 2000)                 # 训练途中量反对角线的轮数（实验五用）


def control_run(length, rounds, lr, seeds, attention):
    """对照：不用注意力（attention=False）；或者权重从训练到测试都是均匀的 1/T（attention=True）。"""
    whole, per_token, _, _ = train_and_evaluate(length, rounds, attention, seeds, lr=lr, uniform=attention)
    return whole, per_token


def picking_run(length, rounds, lr, seeds, query):
    return attention_run(query, lr, seeds, length, rounds, CHECKPOINTS)    # 第五节那个函数


def selection_sweep(pool, length, rounds, rates, queries):
    """每个学习率：两种对照、每种查询，各 10 个种子，全部从头训练。返回
    {学习率: {"none": [...], "uniform": [...], "after": [...], "before": [...]}}，列表按种子排。
    这些训练互不相干，交给进程池同时跑；结果按提交的顺序取回，所以输出和谁先算完无关。"""
    controls = [(lr, name, attention) for lr in rates for name, attention in (("none", False), ("uniform", True))]
    picks = [(lr, query) for lr in rates for query in queries]
    n = len(EXPERIMENT_SEEDS)
    jobs = [(length, rounds, lr, seeds, query) for lr, query in picks for seeds in EXPERIMENT_SEEDS]
    picked = [pool.submit(picking_run, *job) for job in jobs]          # 先交出去：它们比对照慢
    jobs = [(length, rounds, lr, seeds, attention) for lr, _, attention in controls for seeds in EXPERIMENT_SEEDS]
    controlled = [pool.submit(control_run, *job) for job in jobs]
    finished = []

    def tick(_):                                                       # 进度，只写到标准错误
        finished.append(1)
        progress("扫描 %d 位：%d/%d 个模型训练完" % (length, len(finished), len(picked) + len(controlled)))

    for future in picked + controlled:
        future.add_done_callback(tick)
    picked, controlled = [f.result() for f in picked], [f.result() for f in controlled]
    sweep = {lr: {} for lr in rates}
    for i, (lr, name, _) in enumerate(controls):
        sweep[lr][name] = controlled[i * n:(i + 1) * n]
    for i, (lr, query) in enumerate(picks):
        sweep[lr][query] = picked[i * n:(i + 1) * n]
    return sweep


def selection(run):
    """一个学出来的模型挑了没有：拿掉挑选后逐位正确掉了多少，反对角线是均匀的几倍，
    峰值落在反对角线上的行数，按规则算不算形成了对齐。"""
    matrix = run["matrix"]
    return {"drop": run["per_token"] - run["uniform"][1],
            "diagonal": diagonal_weight(matrix) * len(matrix),
            "peaks": int((peak_offsets(matrix) == 0).sum()),
            "formed": alignment_formed(run["per_token"], run["uniform"][1], matrix)}


QUERY_SHORT = {"after": "更新后", "before": "更新前"}


def queries_in(cell):
    return [query for query in ("after", "before") if query in cell]


def print_sweep_table(lr, cell):
    queries = queries_in(cell)
    print("学习率 %g（逐位正确；「掉」= 拿掉挑选后逐位正确掉了多少，「对角」= 反对角线是均匀的几倍，"
          % lr)
    print("「峰」= 峰值落在反对角线上的行数）")
    print("      不用     均匀权重  " + "".join("查询 = %s的状态                 " % QUERY_SHORT[q] for q in queries).rstrip())
    print(("种子  注意力   （训练）  " + "整串/逐位    掉      对角  峰 形成  " * len(queries)).rstrip())
    for i, (seed_init, _) in enumerate(EXPERIMENT_SEEDS):
        row = "%-6d%.4f   %.4f    " % (seed_init, cell["none"][i][1], cell["uniform"][i][1])
        for query in queries:
            run = cell[query][i]
            pick = selection(run)
            row += "%.2f/%.4f  %+.3f  %4.2f  %2d %s    " % (run["whole"], run["per_token"], pick["drop"],
                                                           pick["diagonal"], pick["peaks"], "是" if pick["formed"] else "否")
        print(row.rstrip())


def print_cell_summary(lr, cell):
    for name, label in (("none", "不用注意力"), ("uniform", "均匀权重（训练）")):
        print("  %s：整串全对 %.4f ± %.4f，逐位正确 %.4f ± %.4f" % (
            (label,) + mean_and_spread([r[0] for r in cell[name]]) + mean_and_spread([r[1] for r in cell[name]])))
    for query in queries_in(cell):
        runs = cell[query]
        picks = [selection(run) for run in runs]
        formed = [run["per_token"] for run, pick in zip(runs, picks) if pick["formed"]]
        other = [run["per_token"] for run, pick in zip(runs, picks) if not pick["formed"]]
        print("  查询 = %s：整串全对 %.4f ± %.4f，逐位正确 %.4f ± %.4f" % (
            (QUERY_SHORT[query],) + mean_and_spread([r["whole"] for r in runs])
            + mean_and_spread([r["per_token"] for r in runs])))
        print("    形成了 %d/%d；逐位正确：形成的 %s，没形成的 %s；平均掉 %+.4f，反对角线平均 %.2f 倍" % (
            len(formed), len(runs), "%.4f" % np.mean(formed) if formed else "—",
            "%.4f" % np.mean(other) if other else "—",
            np.mean([pick["drop"] for pick in picks]), np.mean([pick["diagonal"] for pick in picks])))

# attention.md:1206 (实验四：注意力什么时候真的在挑)
SWEEP_RATES = (0.003, 0.01, 0.02)          # 学习率：从第四节的 0.003 到大它六倍多的 0.02
SWEEP_QUERIES = ("after", "before")        # 查询：这一步更新之后的状态，或更新之前的状态


def first_of_each_kind(sweep):
    """事先定好的挑图规则：按打印的顺序（学习率从小到大，先更新后、再更新前，种子从小到大）
    找第一个形成了对齐的模型，和第一个没有形成的模型。"""
    found = {}
    for lr, cell in sweep.items():
        for query in SWEEP_QUERIES:
            for (seed_init, _), run in zip(EXPERIMENT_SEEDS, cell[query]):
                found.setdefault(selection(run)["formed"], (lr, query, seed_init, run))
    return found.get(True), found.get(False)


def print_picture(title, choice):
    if choice is None:
        print("%s：扫描里没有这样的模型。" % title)
        return
    lr, query, seed_init, run = choice
    print("%s：学习率 %g，查询 = %s的状态，种子 %d；" % (title, lr, QUERY_SHORT[query], seed_init))
    print("逐位正确 %.4f，拿掉挑选后 %.4f。" % (run["per_token"], run["uniform"][1]))
    print("测试集 100 条的平均：")
    print_matrix(run["matrix"])
    heatmap(run["matrix"])
    print("第一条测试序列自己的权重：")
    print_matrix(run["sample"][1])
    sample_heatmap(*run["sample"])

# attention.md:1425 (实验五：训练得更久)
LONG_ROUNDS = 30000
LONG_CHECKPOINTS = (3000, 10000)


def print_sharpening(sweep):
    print("训练途中反对角线是均匀的几倍（每格：形成了对齐的种子的平均 / 没形成的平均）：")
    print("学习率  查询      " + "".join("%-16s" % ("第 %d 轮" % n) for n in CHECKPOINTS + (3000,)).rstrip())
    for lr, cell in sweep.items():
        for query in SWEEP_QUERIES:
            runs = cell[query]
            formed = [selection(run)["formed"] for run in runs]
            row = "%-8g%-8s" % (lr, QUERY_SHORT[query])
            for n in CHECKPOINTS + (3000,):
                at = [run["diagonal_at"].get(n, selection(run)["diagonal"]) for run in runs]   # 第 3000 轮：训练完
                yes = [a for a, f in zip(at, formed) if f]
                no = [a for a, f in zip(at, formed) if not f]
                row += "%-16s" % ("%s / %s" % ("%.2f" % np.mean(yes) if yes else "—", "%.2f" % np.mean(no) if no else "—"))
            print(row.rstrip())


def print_long_training(run):
    print("同样是第五节那个没有形成对齐的模型，训练 %d 轮：" % LONG_ROUNDS)
    whole_u, per_token_u = run["uniform"]
    print("整串全对 %.4f，逐位正确 %.4f；拿掉挑选之后逐位正确 %.4f（%+.4f）。"
          % (run["whole"], run["per_token"], per_token_u, per_token_u - run["per_token"]))
    print_matrix(run["matrix"])
    heatmap(run["matrix"])
    print("反对角线是均匀的几倍：" + "，".join("第 %d 轮 %.2f" % (n, run["diagonal_at"][n]) for n in LONG_CHECKPOINTS)
          + "，第 %d 轮 %.2f；左边一列 %.2f 倍。" % (LONG_ROUNDS, diagonal_weight(run["matrix"]) * 10,
                                                    diagonal_weight(run["matrix"], -1) * 10))

# attention.md:1507 (实验六：峰值落在哪一列)
def print_peak_offsets(sweep):
    n, T = len(EXPERIMENT_SEEDS), 10
    print("严格倒序：输出第 r 位对输入第 %d − r 位。训练时解码器在这一步读进的是上一位的答案，" % (T + 1))
    print("也就是输入第 %d − r 位（r ≥ 2）：要是按「读进的字母相同」来挑，峰值会落在右边一列。" % (T + 2))
    print("峰值比严格倒序那一列偏了几列（每格 %d 个种子的平均矩阵，共 %d 行）：" % (n, T * n))
    print("学习率  查询      正好   左一列  左两列  右一列  其他")
    for lr, cell in sweep.items():
        for query in SWEEP_QUERIES:
            offsets = np.concatenate([peak_offsets(run["matrix"]) for run in cell[query]])
            counts = [int((offsets == o).sum()) for o in (0, -1, -2, 1)]
            print("%-8g%-8s  %4d   %5d   %5d   %5d   %4d"
                  % ((lr, QUERY_SHORT[query]) + tuple(counts) + (len(offsets) - sum(counts),)))


def main():
    with ProcessPoolExecutor(max_workers=2) as pool:       # 两个进程同时训练；结果和进程数、先后都无关
        # 最久的那次训练先交出去，其余的训练由两个进程分着跑
        long_training = pool.submit(attention_run, *BOOK_SETTING, rounds=LONG_ROUNDS,
                                    checkpoints=LONG_CHECKPOINTS)   # 第五节那个模型，训练更久
        scaling_experiment()
        print()
        hard_attention_experiment()
        print()
        short = selection_sweep(pool, 5, 2000, (LR,), ("after",))
        sweep = selection_sweep(pool, 10, 3000, SWEEP_RATES, SWEEP_QUERIES)
        long_run = long_training.result()
    print("三、5 位任务：每个做法 %d 个种子，各训练 2000 轮。" % len(EXPERIMENT_SEEDS))
    print_sweep_table(LR, short[LR])
    print_cell_summary(LR, short[LR])
    print()
    print("四、10 位任务：注意力什么时候真的在挑？每格 %d 个种子，各训练 3000 轮。" % len(EXPERIMENT_SEEDS))
    print("规则（事先定好）：拿掉挑选后逐位正确掉 %.2f 以上、反对角线是均匀的 %.0f 倍以上，才算形成了对齐。"
          % (FORMED_DROP, FORMED_DIAGONAL))
    for lr, cell in sweep.items():
        print()
        print_sweep_table(lr, cell)
        print_cell_summary(lr, cell)
    formed, not_formed = first_of_each_kind(sweep)
    print()
    print_picture("第一个形成了对齐的模型", formed)
    print()
    print_picture("第一个没有形成对齐的模型", not_formed)
    print()
    print("五、训练充分之后会不会锐化？")
    print_sharpening(sweep)
    print()
    print_long_training(long_run)
    print()
    print("六、峰值落在哪一列？")
    print_peak_offsets(sweep)
    print()
    trained = sum(len(runs) for results in (short, sweep) for cell in results.values() for runs in cell.values())
    print("这个程序一共从头训练了 %d 个模型。" % (trained + 1))      # 加上训练 30000 轮的那一个


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    main()
