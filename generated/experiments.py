# Generated from attention.md by tangle.py — edit attention.md and run make tangle, or edit here and run make stitch.
# sha256 of the lines below: a8e171e878bc7cc59891b9d388547ffb746eb3c9d002bd0463b1a4d56fb556d6
# attention.md:3230 (generated/experiments.py)
"""「30 秒实验」的答案。运行：python generated/experiments.py（要几分钟）。

由 attention.md 用 tangle.py 生成。请改 attention.md 再 make tangle；直接改了这个文件，make stitch 把改动搬回 attention.md。
"""
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import NamedTuple

import numpy as np

from attention import (        # 正文的程序：同一个文件夹里的 generated/attention.py
    BOOK_SETTING, FORMED_DIAGONAL, FORMED_DROP, GROWTH_CHECKPOINTS, LR, PICKING_SETTING, REFIT_CHECKPOINTS,
    TEST_SIZE, Model, Setting, attention_runs, change, diagonal_multiple, evaluate, first_round, hand_example, heatmap,
    init_params, jump, keep_freed_memory, learning, log, make_test_set, mm, peak_counts, peak_offsets, print_matrix,
    print_table, progress, sample_heatmap, softmax, stack, train)

# attention.md:2006 (实验一：除以根号 d，还是除以 d)
SEED_EXPERIMENT = 4           # 实验一用的随机流


def unit_variance(rng, shape):
    """均值 0、方差 1 的均匀分布 [-√3, √3]。只用精确运算抽样（randn 要经过 C 库的 log）。"""
    return rng.uniform(-np.sqrt(3.0), np.sqrt(3.0), size=shape)


class Summary(NamedTuple):                 # 实验一的表里一列的七个数
    variance: float                        # 分数的方差
    top_weight: float                      # 平均最大权重
    entropy: float                         # 平均熵
    dscores_mean: float                    # ∂α/∂分数 的大小：平均
    dscores_median: float                  #   中位数
    dq_mean: float                         # ∂α/∂q 的大小：平均
    dq_median: float                       #   中位数


def attention_summary(q, K, scale):
    """一批查询 q (N, 1, d) 对 K (N, T, d)，分数除以 scale：
    平均最大权重、平均熵，两种梯度的大小（Frobenius 范数）的平均和中位数。"""
    scores = mm(q, np.swapaxes(K, -1, -2))[:, 0] / scale          # (N, T)
    p = softmax(scores)
    entropy = -(p * log(np.maximum(p, 1e-300))).sum(axis=-1)
    context = mm(p[:, None, :], K)                                  # (N, 1, d)
    grad = p[:, :, None] * (K - context) / scale                    # ∂α_i/∂q = α_i (k_i − Σ α_j k_j) / scale  (N, T, d)
    grad_q = np.sqrt((grad * grad).sum(axis=(1, 2)))
    jacobian = p[:, :, None] * (np.eye(p.shape[1]) - p[:, None, :])   # ∂α/∂分数 = diag(α) − α αᵀ  (N, T, T)
    grad_scores = np.sqrt((jacobian * jacobian).sum(axis=(1, 2)))
    return Summary(variance(scores), p.max(axis=-1).mean(), entropy.mean(),
                   grad_scores.mean(), np.median(grad_scores), grad_q.mean(), np.median(grad_q))


def mean(x):
    """所有元素的平均。先沿第一维按顺序加，再加剩下的几项：NumPy 把超过 8192 项的
    一维求和分块相加，分块的办法各版本不同，这样写每次求和都只有几千项以内。"""
    return x.reshape(len(x), -1).sum(axis=0).sum() / x.size


def variance(x):
    centred = x - mean(x)
    return mean(centred * centred)


def scaling_experiment(dims=(3, 300), n=2000, T=10):
    rng = np.random.RandomState(SEED_EXPERIMENT)
    print("一、除以根号 d，还是除以 d？q、K 的每个分量独立、均值 0、方差 1；%d 个查询，每个对 %d 个键。" % (n, T))
    print("均匀分布的熵是 ln %d = %.3f，最大权重 %.3f。" % (T, log(np.array([float(T)]))[0], 1 / T))
    print()
    columns = []                                                    # (d, 缩放, 量到的七个数)
    for d in dims:
        q, K = unit_variance(rng, (n, 1, d)), unit_variance(rng, (n, T, d))
        for label, scale in (("不缩放", 1.0), ("除以根号 d", np.sqrt(d)), ("除以 d", float(d))):
            columns.append((d, label, attention_summary(q, K, scale)))
    print("每个 d 三列，依次是%s：" % "、".join(label for _, label, _ in columns[:3]))
    measures = (("variance", "分数的方差", "%.3f"), ("top_weight", "最大权重", "%.3f"), ("entropy", "熵", "%.3f"),
                ("dscores_mean", "∂α/∂分数 的平均", "%.4f"), ("dscores_median", "∂α/∂分数 的中位数", "%.4f"),
                ("dq_mean", "∂α/∂q 的平均", "%.4f"), ("dq_median", "∂α/∂q 的中位数", "%.4f"))
    print_table([(["%d" % d for d, _, _ in columns], "d")]
                + [([form % getattr(summary, field) for _, _, summary in columns], label)
                   for field, label, form in measures])
    last = {label: summary for d, label, summary in columns if d == dims[-1]}
    print_chain_rule(dims[-1], last["不缩放"], last["除以根号 d"])


def print_chain_rule(d, plain, root):
    """∂α/∂q = ∂α/∂分数 · ∂分数/∂q，后一项是 k / 缩放：不缩放比除以根号 d 多乘了根号 d。
    两个平均数之比，大致就是 ∂α/∂分数 的平均之比再乘根号 d（不完全相等：平均和乘法不能交换）。"""
    ratio_scores, ratio_q = plain.dscores_mean / root.dscores_mean, plain.dq_mean / root.dq_mean
    print("d = %d 时，不缩放比除以根号 d：∂α/∂分数的平均之比 %.3f，乘上根号 %d = %.2f 是 %.2f；"
          % (d, ratio_scores, d, np.sqrt(d), ratio_scores * np.sqrt(d)))
    print("∂α/∂q 的平均之比 %.2f（链式法则：∂α/∂q = ∂α/∂分数 · k / 缩放）。" % ratio_q)

# attention.md:2116 (实验二：只保留最大的那个)
def hard_max(scores):
    """「只保留最大的那个」：最大的分数拿权重 1，其余拿 0。"""
    return (scores == scores.max()).astype(float)


def hard_attention_experiment():
    """把 softmax 换成「只保留最大的那个」：输出、以及输出对四个分数的梯度。"""
    example = hand_example()
    K, scaled, alpha, context = example.K, example.scaled, example.alpha, example.context
    hard = hard_max(scaled)
    hard_context = mm(hard[None, :], K)[0]
    soft_grad = alpha[:, None] * (K - context)                   # ∂ctx/∂s_i = α_i (k_i − ctx)
    hard_grad = np.empty_like(K)
    for i in range(len(K)):                                        # 硬选择没有公式，只能数值地挪一挪
        step = np.zeros(len(K))
        step[i] = 1e-6
        up, down = (mm(hard_max(s)[None, :], K)[0] for s in (scaled + step, scaled - step))
        hard_grad[i] = (up - down) / 2e-6
    print("二、把 softmax 换成「只保留最大的那个」（手算那个例子）：")
    print("硬选择的权重 " + " ".join("%.4f" % w for w in hard) + "，输出 " + " ".join("%+.4f" % c for c in hard_context))
    print("softmax 的权重 " + " ".join("%.4f" % w for w in alpha) + "，输出 " + " ".join("%+.4f" % c for c in context))
    print()
    print("输出对第 i 个分数的梯度     softmax                      硬选择")
    for i in range(len(K)):
        print("第 %d 个键         %s      %s" % (i + 1, " ".join("%+.4f" % g for g in soft_grad[i]),
                                            " ".join("%+.4f" % g for g in hard_grad[i])))
    print("硬选择的梯度全是 0：%s；softmax 的梯度里非零的有 %d 个（共 %d 个）。"
          % ("是" if not hard_grad.any() else "否", np.count_nonzero(soft_grad), soft_grad.size))

# attention.md:2183 (实验三：多个种子)
EXPERIMENT_SEEDS = [(s, 100 + s) for s in range(10)]   # 种子 s：RandomState(s) 初始化，RandomState(100 + s) 抽批次
SHORT_ROUNDS, SWEEP_ROUNDS = 2000, 3000                 # 5 位和 10 位的扫描各训练多少轮，和正文一样
SHORT_SETTINGS = (BOOK_SETTING, PICKING_SETTING)        # 5 位跑两格：第四节的设置，和 10 位上长得出对齐的那一格


def mean_and_spread(values):
    values = np.asarray(values)
    return values.mean(), np.sqrt(variance(values))


CHECKPOINTS = GROWTH_CHECKPOINTS           # 训练途中量的轮数：和正文第五节一样（实验五用）
SHARPENING_ROUNDS = (1000, 2000)           # 实验五的锐化表看这几轮（第 3000 轮是训练完）


CONTROLS = {"none": dict(attention=False), "uniform": dict(uniform=True)}   # 不用注意力；平均对照（权重一直是 1/T）


def control_runs(setting, seed_list, length, rounds):
    """对照（不用注意力，或者平均对照）：seed_list 里每一对种子一个模型，一起训练（〈几个模型摞在一起〉）；
    返回每个模型的 Evaluation。"""
    test = make_test_set(length)
    return [evaluate(model, test) for model in train(setting, test, rounds, seed_list=seed_list)]


SEEDS_PER_JOB = 5        # 一格的 10 个种子分两份交出去：5 个一起训练已经省下大部分调用，两个进程也分得匀


def selection_sweep(pool, length, rounds, settings, *, refit_settings=()):
    """settings 里每个学出权重的设置，和它那个学习率下的两种对照，各 10 个种子，全部从头训练。返回
    {学习率: {"none": [...], "uniform": [...], "after": [...], "before": [...]}}，列表按种子排。
    refit_settings 里的设置，还要只重新训练输出层（实验七）。
    两种对照的列表里是 Evaluation，两种查询的是 Run（它的评估是 run.own）。
    这些训练互不相干，交给进程池同时跑，一件事是一格里的 5 个种子（一起训练）；
    结果按提交的顺序取回，所以输出和谁先算完无关。"""
    parts = [EXPERIMENT_SEEDS[i:i + SEEDS_PER_JOB] for i in range(0, len(EXPERIMENT_SEEDS), SEEDS_PER_JOB)]
    rates = list(dict.fromkeys(setting.lr for setting in settings))           # 出现过的学习率，按先后
    controls = [(name, Setting(lr=lr, **CONTROLS[name])) for lr in rates for name in CONTROLS]
    picked = [[pool.submit(attention_runs, setting, part, length, rounds, checkpoints=CHECKPOINTS,
                           refit=setting in refit_settings) for part in parts]
              for setting in settings]                                     # 先交出去：它们比对照慢
    controlled = [[pool.submit(control_runs, setting, part, length, rounds) for part in parts]
                  for _, setting in controls]
    futures = [future for cell in picked + controlled for future in cell]
    finished = []

    def tick(_):                                                           # 进度，只写到标准错误
        finished.append(1)
        progress("扫描 %d 位：%d/%d 份训练完" % (length, len(finished), len(futures)))

    for future in futures:
        future.add_done_callback(tick)
    sweep = {lr: {} for lr in rates}
    for (name, setting), cell in zip(controls, controlled):
        sweep[setting.lr][name] = [result for future in cell for result in future.result()]
    for setting, cell in zip(settings, picked):
        sweep[setting.lr][setting.query] = [run for future in cell for run in future.result()]
    return sweep


class Selection(NamedTuple):
    """一个学出来的模型挑了没有。"""
    drop: float        # 拿掉挑选后逐位正确降了多少（Checkpoint.drop）
    diagonal: float    # 反对角线是均匀的几倍
    peaks: int         # 峰值落在反对角线上的行数
    formed: bool       # 按规则算，形成了对齐没有


def selection(run):
    final = run.final                                     # 训练完时量的 Checkpoint
    return Selection(drop=final.drop, diagonal=final.diagonal,
                     peaks=int((peak_offsets(final.matrix) == 0).sum()), formed=final.formed)


QUERY_SHORT = {"after": "更新后", "before": "更新前"}


def queries_in(cell):
    return [query for query in ("after", "before") if query in cell]


def print_sweep_table(lr, cell):
    """每个种子一列：不用注意力、平均对照和学出权重的模型。"""
    queries = queries_in(cell)
    print("学习率 %g（「整串」「逐位」= 整串全对、逐位正确；「变化」= 拿掉挑选后逐位正确的变化，负数是降；" % lr)
    print("「对角」= 反对角线是均匀的几倍；「峰」= 峰值落在反对角线上的行数）")
    rows = [(["%d" % seed_init for seed_init, _ in EXPERIMENT_SEEDS], "种子"),
            (["%.4f" % result.per_token for result in cell["none"]], "不用注意力：逐位"),
            (["%.4f" % result.per_token for result in cell["uniform"]], "平均对照：逐位")]
    for query in queries:
        runs, picks = cell[query], [selection(run) for run in cell[query]]
        name = QUERY_SHORT[query]
        rows += [(["%.2f" % run.own.whole for run in runs], "%s：整串" % name),
                 (["%.4f" % run.own.per_token for run in runs], "%s：逐位" % name),
                 (["%+.3f" % change(pick.drop) for pick in picks], "%s：变化" % name),
                 (["%.2f" % pick.diagonal for pick in picks], "%s：对角" % name),
                 (["%d" % pick.peaks for pick in picks], "%s：峰" % name)]
    print_table(rows, width=8)
    print_formed_seeds(cell, queries)


def print_formed_seeds(cell, queries):
    """每种查询一行：这一格里哪几个种子形成了对齐。"""
    for query in queries:
        formed = [run.model.seeds[0] for run in cell[query] if selection(run).formed]
        print("查询 = %s的状态，形成了对齐的种子：%s" % (QUERY_SHORT[query], " ".join("%d" % s for s in formed) or "没有"))


def seed_by_seed(first, second):
    """同一个种子上两种做法比：first 高的个数，second 高的个数，一样的个数。"""
    pairs = list(zip(first, second))
    return sum(a > b for a, b in pairs), sum(a < b for a, b in pairs), sum(a == b for a, b in pairs)


def print_cell_summary(lr, cell):
    for name, label in (("none", "不用注意力"), ("uniform", "平均对照")):
        print("  %s：整串全对 %.4f ± %.4f，逐位正确 %.4f ± %.4f" % (
            (label,) + mean_and_spread([r.whole for r in cell[name]]) + mean_and_spread([r.per_token for r in cell[name]])))
    for query in queries_in(cell):
        runs = cell[query]
        picks = [selection(run) for run in runs]
        formed = [run.own.per_token for run, pick in zip(runs, picks) if pick.formed]
        other = [run.own.per_token for run, pick in zip(runs, picks) if not pick.formed]
        print("  查询 = %s：整串全对 %.4f ± %.4f，逐位正确 %.4f ± %.4f" % (
            (QUERY_SHORT[query],) + mean_and_spread([run.own.whole for run in runs])
            + mean_and_spread([run.own.per_token for run in runs])))
        print("    形成了 %d/%d；逐位正确：形成的 %s，没形成的 %s" % (
            len(formed), len(runs), "%.4f" % np.mean(formed) if formed else "—", "%.4f" % np.mean(other) if other else "—"))
        print("    拿掉挑选平均变化 %+.4f；反对角线平均是均匀的 %.2f 倍；峰值在反对角线上的行 %d/%d" % (
            np.mean([change(pick.drop) for pick in picks]), np.mean([pick.diagonal for pick in picks]),
            sum(pick.peaks for pick in picks), sum(len(run.matrix) for run in runs)))
        learned = [run.own.per_token for run in runs]
        print("    逐个种子比逐位正确：平均对照高的 %d 个，学出权重的高的 %d 个，一样的 %d 个"
              % seed_by_seed([r.per_token for r in cell["uniform"]], learned))
        print("    和不用注意力比：不用注意力高的 %d 个，学出权重的高的 %d 个，一样的 %d 个"
              % seed_by_seed([r.per_token for r in cell["none"]], learned))

# attention.md:2385 (实验四：注意力什么时候真的在挑)
SWEEP_RATES = (0.003, 0.01, 0.02)          # 学习率：从第四节的 0.003 到大它六倍多的 0.02
SWEEP_QUERIES = ("after", "before")        # 更新后的查询，更新前的查询


def first_of_each_kind(sweep):
    """事先定好的挑图规则：按打印的顺序（学习率从小到大，先更新后、再更新前，种子从小到大）
    找第一个形成了对齐的模型，和第一个没有形成的模型。"""
    found = {}
    for cell in sweep.values():
        for query in SWEEP_QUERIES:
            for run in cell[query]:
                found.setdefault(selection(run).formed, run)
    return found.get(True), found.get(False)


def print_gap(sweep):
    """形成了的和没形成的之间隔着多宽：规则的两个门槛是不是都落在空当里。"""
    picks = [selection(run) for cell in sweep.values() for query in SWEEP_QUERIES for run in cell[query]]
    formed = [pick for pick in picks if pick.formed]
    other = [pick for pick in picks if not pick.formed]
    most_drop, top_diagonal = max(p.drop for p in other), max(p.diagonal for p in other)
    least_drop, low_diagonal = min(p.drop for p in formed), min(p.diagonal for p in formed)
    print("没形成的 %d 个模型：拿掉挑选最多降 %.3f，反对角线最高 %.2f 倍。" % (len(other), most_drop, top_diagonal))
    print("形成了的 %d 个模型：拿掉挑选最少降 %.3f，反对角线最低 %.2f 倍。" % (len(formed), least_drop, low_diagonal))
    inside = most_drop < FORMED_DROP <= least_drop and top_diagonal < FORMED_DIAGONAL <= low_diagonal
    print("规则的两个门槛（降 %.2f、%.0f 倍）都落在这段空当里：%s。"
          % (FORMED_DROP, FORMED_DIAGONAL, "是" if inside else "否"))


def print_picture(title, run):
    if run is None:
        print("%s：扫描里没有这样的模型。" % title)
        return
    print("%s：学习率 %g，查询 = %s的状态，种子 %d；" % (title, run.setting.lr, QUERY_SHORT[run.setting.query],
                                                  run.model.seeds[0]))
    print("逐位正确 %.4f，拿掉挑选后 %.4f。" % (run.own.per_token, run.unpicked.per_token))
    print_matrix(run.matrix, "测试集 %d 条的平均" % TEST_SIZE)
    heatmap(run.matrix)
    print_matrix(run.sample_alpha, "第一条测试序列自己的权重")
    sample_heatmap(run.sample, run.sample_alpha)

# attention.md:2667 (实验五：训练得更久)
LONG_ROUNDS = 30000
LONG_CHECKPOINTS = (3000, 10000)


def print_sharpening(sweep):
    """形成了对齐的模型训练完以前还在不在变尖：逐个种子在第 1000、2000、3000 轮的反对角线。跳完得晚的，
    这段时间里涨的是跳，不是变尖：每格的平均只算第 1000 轮以前就跳完了的。"""
    ends = SHARPENING_ROUNDS + (SWEEP_ROUNDS,)
    at = lambda run, n: run.course[n].diagonal          # 量过的轮数（CHECKPOINTS）包括训练完的第 3000 轮
    formed = [run for lr in sweep for query in SWEEP_QUERIES for run in sweep[lr][query] if selection(run).formed]
    print("形成了对齐的 %d 个模型，反对角线是均匀的几倍（每行一个）；最后是跳完在第几轮、学习率和查询："
          % len(formed))
    rows = [(["%d" % n for n in ends], "第几轮")]
    rows += [(["%.2f" % at(run, n) for n in ends], "种子 %d，跳完在第 %d 轮，%g，%s" % (
        run.model.seeds[0], jump(run.course)[1], run.setting.lr, QUERY_SHORT[run.setting.query])) for run in formed]
    print_table(rows, width=8)
    print()
    print("跳完在第 %d 轮以前的（只在变尖，不在跳），每格的平均；- 是这一格没有这样的种子：" % ends[0])
    cells = [(lr, query) for lr in sweep for query in SWEEP_QUERIES]
    done = {cell: [run for run in formed if (run.setting.lr, run.setting.query) == cell
                   and jump(run.course)[1] <= ends[0]] for cell in cells}
    rows = [(["%g" % lr for lr, _ in cells], "学习率")]
    rows += [(["%.2f" % np.mean([at(run, n) for run in done[cell]]) if done[cell] else "-" for cell in cells],
              "第 %d 轮" % n) for n in ends]
    rows.append((["%d" % len(done[cell]) for cell in cells], "种子数"))
    print("每个学习率两列，先%s的查询，再%s的：" % tuple(QUERY_SHORT[query] for query in SWEEP_QUERIES))
    print_table(rows, width=8)
    other = [run for lr in sweep for query in SWEEP_QUERIES for run in sweep[lr][query] if not selection(run).formed]
    print("没形成的 %d 个，反对角线平均：%s。" % (len(other), "，".join(
        "第 %d 轮 %.2f 倍" % (n, np.mean([at(run, n) for run in other])) for n in ends)))


ABRUPT_ROUNDS = 300        # 「突然」：跳不超过训练的十分之一（看结果之前定下）


def print_growth_over_seeds(sweep):
    """实验四的每个模型训练途中：形成了的，第一次满足规则和跳在哪几轮；没形成的，走到过哪一步。"""
    runs = [run for cell in sweep.values() for query in SWEEP_QUERIES for run in cell[query]]
    formed = [run for run in runs if selection(run).formed]
    print("训练途中（第 0 轮未训练，以后每 10 轮、第 600 轮起每 100 轮量一次）。形成了对齐的 %d 个，每行一个；"
          % len(formed))
    print("七列依次是：种子、第一次满足规则、跳从第几轮、跳到第几轮、跳了几轮，")
    print("逐位正确按同样的量法（超出第 0 轮的部分从两成涨到八成）从第几轮、到第几轮；最后是学习率和查询。")
    lengths, learned, rows = [], [], []
    for run in formed:
        course = run.course
        start, stop = jump(course)
        first, last = learning(course)
        lengths.append(stop - start)
        learned.append(last - first)
        rows.append((["%d" % run.model.seeds[0], "%d" % first_round(course, lambda n: course[n].formed), "%d" % start,
                      "%d" % stop, "%d" % (stop - start), "%d" % first, "%d" % last],
                     "%g，%s" % (run.setting.lr, QUERY_SHORT[run.setting.query])))
    print_table(rows, width=7)
    print("跳了几轮：中位数 %g，最短 %d，最长 %d；不超过 %d 轮的 %d 个。"
          % (np.median(lengths), min(lengths), max(lengths), ABRUPT_ROUNDS, sum(n <= ABRUPT_ROUNDS for n in lengths)))
    print("逐位正确同样涨两成到八成用了几轮：中位数 %g，最短 %d，最长 %d；跳比它短的 %d 个，一样长的 %d 个。"
          % (np.median(learned), min(learned), max(learned), sum(a < b for a, b in zip(lengths, learned)),
             sum(a == b for a, b in zip(lengths, learned))))
    other = [run for run in runs if not selection(run).formed]
    ever = sum(any(cp.formed for cp in run.course.values()) for run in other)
    print("没形成的 %d 个模型：训练途中反对角线最高到过均匀的 %.2f 倍，拿掉挑选最多降过 %.4f；"
          % (len(other), max(cp.diagonal for run in other for cp in run.course.values()),
             max(cp.drop for run in other for cp in run.course.values())))
    print("在哪个检查点满足过规则的有 %d 个。" % ever)


def print_long_training(run):
    print("同样是第五节那个没有形成对齐的模型，训练 %d 轮：" % LONG_ROUNDS)
    print("整串全对 %.4f，逐位正确 %.4f；拿掉挑选之后逐位正确 %.4f（变化 %+.4f）。"
          % (run.own.whole, run.own.per_token, run.unpicked.per_token, change(run.final.drop)))
    print_matrix(run.matrix, "第 %d 轮（测试集 %d 条的平均）" % (LONG_ROUNDS, TEST_SIZE))
    heatmap(run.matrix)
    columns, on_diagonal, left_of_it = peak_counts(run.matrix)
    print("最大的权重 %.2f；每一行的峰值落在输入第几列：%s；" % (run.matrix.max(), columns))
    print("落在反对角线上的 %d 行，左边一列上的 %d 行。" % (on_diagonal, left_of_it))
    print("反对角线是均匀的几倍：" + "，".join("第 %d 轮 %.2f" % (n, run.course[n].diagonal) for n in LONG_CHECKPOINTS)
          + "，第 %d 轮 %.2f；左边一列 %.2f 倍。" % (LONG_ROUNDS, diagonal_multiple(run.matrix),
                                                    diagonal_multiple(run.matrix, -1)))

# attention.md:2867 (实验六：峰值落在哪一列)
def print_peak_offsets(sweep):
    n, T = len(EXPERIMENT_SEEDS), len(sweep[SWEEP_RATES[0]][SWEEP_QUERIES[0]][0].matrix)
    print("严格倒序：输出第 r 位对输入第 %d − r 位。解码器输出第 r 位之前读进的是上一位的输出，答对时就是" % (T + 1))
    print("输入第 %d − r 位（r ≥ 2）；更新前的查询还没读进它，最后读进的是输入第 %d − r 位（r ≥ 3）。"
          % (T + 2, T + 3))
    print("要是按「刚读进的字母相同」来挑，峰值会落在右边一列（更新后）或右边两列（更新前）。")
    print("峰值比严格倒序那一列偏了几列（每格 %d 个种子的平均矩阵，共 %d 行）：" % (n, T * n))
    cells = [(lr, query) for lr in sweep for query in SWEEP_QUERIES]
    print("每个学习率两列，先%s的查询，再%s的；每一行是峰值落在那里的行数：" % tuple(QUERY_SHORT[q] for q in SWEEP_QUERIES))
    offsets = [np.concatenate([peak_offsets(run.matrix) for run in sweep[lr][query]]) for lr, query in cells]
    named = ((0, "正好"), (-1, "左一列"), (-2, "左两列"), (1, "右一列"), (2, "右两列"))
    rows = [(["%g" % lr for lr, _ in cells], "学习率")]
    rows += [(["%d" % (found == offset).sum() for found in offsets], label) for offset, label in named]
    rows.append((["%d" % (len(found) - sum((found == offset).sum() for offset, _ in named)) for found in offsets], "其他"))
    print_table(rows, width=8)


def first_row_at_start(query, length=10):
    """训练之前（初始参数），每个种子的平均矩阵的第 1 行：峰值落在第几列，最后一列是均匀的几倍。"""
    test = make_test_set(length)
    peaks, last = [], []
    for seed_init, _ in EXPERIMENT_SEEDS:
        model = Model(stack([init_params(np.random.RandomState(seed_init), True)]), Setting(query=query))
        first_row = evaluate(model, test).alpha.mean(axis=0)[0]
        peaks.append(int(first_row.argmax()) + 1)
        last.append(first_row[-1] * length)
    return peaks, last


def print_first_row_at_start(length=10):
    print("训练之前（初始参数）的第 1 行，%d 个种子：" % len(EXPERIMENT_SEEDS))
    for query in SWEEP_QUERIES:
        peaks, last = first_row_at_start(query, length)
        print("  查询 = %s：峰值落在第 %d 列的种子 %d 个；第 %d 列平均是均匀的 %.2f 倍"
              % (QUERY_SHORT[query], length, peaks.count(length), length, np.mean(last)))

# attention.md:2953 (实验七：把权重换掉)
REFIT_SETTINGS = (BOOK_SETTING, PICKING_SETTING)   # 只重新训练输出层的两格：第五节的两个设置
SWAPS = ("reversal", "shifted", "other", "uniform")
SWAP_SHORT = {"reversal": "倒序", "shifted": "左移", "other": "别条", "uniform": "均匀"}


def swap_row(run):
    """一个模型：不换权重的逐位正确，和换成四种权重之后的。"""
    return [run.own.per_token] + [run.swaps.greedy[name].per_token for name in SWAPS]


def print_swap_table(lr, cell):
    """每个种子一列；每一行是一种查询、一种权重下的逐位正确。"""
    print("学习率 %g" % lr)
    rows = [(["%d" % seed_init for seed_init, _ in EXPERIMENT_SEEDS], "种子")]
    for query in SWEEP_QUERIES:
        table = [swap_row(run) for run in cell[query]]
        for j, name in enumerate(("自己",) + tuple(SWAP_SHORT[swap] for swap in SWAPS)):
            rows.append((["%.4f" % values[j] for values in table], "%s：%s" % (QUERY_SHORT[query], name)))
    print_table(rows, width=8)
    print_formed_seeds(cell, SWEEP_QUERIES)


def print_swap_groups(sweep):
    """实验四的 60 个学出权重的模型，按是否形成了对齐分两组：每种换法的平均、最低、最高，贪心解码和喂对的字母各一遍。"""
    runs = [run for cell in sweep.values() for query in SWEEP_QUERIES for run in cell[query]]
    print("按是否形成了对齐分两组（实验四的全部 %d 个学出权重的模型）：" % len(runs))
    groups = formed_groups(runs)
    for label, group in groups:
        if not group:
            print("%s：0 个" % label)
            continue
        print("%s：%d 个。五列依次是：自己、%s" % (label, len(group), "、".join(SWAP_SHORT[name] for name in SWAPS)))
        tables = {"贪心": np.array([swap_row(run) for run in group]), "喂对": np.array([forced_swap_row(run) for run in group])}
        print_table([(["%.4f" % v for v in values], "%s，%s" % (mode, stat)) for mode, table in tables.items()
                     for stat, values in (("平均", table.mean(axis=0)), ("最低", table.min(axis=0)),
                                          ("最高", table.max(axis=0)))], width=8)
        follows = [run.swaps.follows for run in group]
        print("    左移时（贪心），输出正好是被指到的那一列的字母：平均 %.4f，最低 %.4f，最高 %.4f"
              % (np.mean(follows), min(follows), max(follows)))
        for mode, table in tables.items():
            counts = [seed_by_seed(table[:, j], table[:, 0]) for j in range(1, len(SWAPS) + 1)]
            print("    %s，换了之后比自己（高/低/一样的个数）：" % mode
                  + "，".join("%s %d/%d/%d" % ((SWAP_SHORT[name],) + c) for name, c in zip(SWAPS, counts)))
        changes = [run.swaps.other_change for run in group]
        print("    别条的权重和自己的差（每行两个分布之差的绝对值之和的一半）：平均 %.3f，最低 %.3f，最高 %.3f"
              % (np.mean(changes), min(changes), max(changes)))
    print()
    print_forced_positions(groups, len(runs[0].matrix))
    print()
    print_reversal_by_cell(sweep)


def formed_groups(runs):
    """按是否形成了对齐分成两组：[("形成了", 模型的列表), ("没形成", 模型的列表)]，组内保持原来的顺序。"""
    return [(label, [run for run in runs if selection(run).formed == formed])
            for formed, label in ((True, "形成了"), (False, "没形成"))]


def forced_swap_row(run):
    """一个模型，喂对的字母时：不换权重的逐位正确，和换成四种权重之后的。"""
    return [run.swaps.forced_accuracy(name) for name in ("own",) + SWAPS]


def print_forced_positions(groups, T):
    """喂对的字母时，每一组每种换法按输出位置的逐位正确（组内平均；空的组不印）。标签在数字后面。"""
    print("喂对的字母时，按输出位置的逐位正确（组内平均）：")
    print(" ".join("%4d" % (r + 1) for r in range(T)) + "   哪一组，换成什么")
    for label, group in groups:
        for name in ("own",) + SWAPS if group else ():
            by_position = np.mean([run.swaps.forced_by_position(name) for run in group], axis=0)
            print(" ".join("%.2f" % a for a in by_position) + "   %s，%s" % (label, "自己" if name == "own" else SWAP_SHORT[name]))


def print_reversal_by_cell(sweep):
    """没形成对齐的模型，逐格数：换成倒序之后比自己高、低、一样的个数，贪心解码和喂对的字母各一遍。"""
    print("没形成对齐的模型，换成倒序之后比自己（高/低/一样的个数），逐格。三列依次是：个数、贪心、喂对；")
    print("最后是学习率和查询。")
    rows = []
    for lr, cell in sweep.items():
        for query in SWEEP_QUERIES:
            group = [run for run in cell[query] if not selection(run).formed]
            if not group:
                continue
            greedy = seed_by_seed([run.swaps.greedy["reversal"].per_token for run in group],
                                  [run.own.per_token for run in group])
            forced = seed_by_seed([run.swaps.forced_accuracy("reversal") for run in group],
                                  [run.swaps.forced_accuracy("own") for run in group])
            rows.append((["%d" % len(group), "%d/%d/%d" % greedy, "%d/%d/%d" % forced], "%g，%s" % (lr, QUERY_SHORT[query])))
    print_table(rows, width=10)


def print_refits(sweep):
    print("只重新训练输出层（权重全是 1/10，编码器和解码器冻结；第 %s 轮的逐位正确）。"
          % "、".join("%d" % n for n in REFIT_CHECKPOINTS))
    print("它是喂对的字母训练的，最后两行再喂对的字母量一遍（每一步读进正确答案的上一位）：")
    for setting in REFIT_SETTINGS:
        lr, query = setting.lr, setting.query
        runs = sweep[lr][query]
        print("学习率 %g，查询 = %s的状态；每个种子一列，最后两列是平均和中位数：" % (lr, QUERY_SHORT[query]))
        table = np.array([[run.own.per_token, run.unpicked.per_token] + [run.refit[n] for n in REFIT_CHECKPOINTS]
                          + [run.swaps.forced_accuracy("uniform"), run.refit_forced] for run in runs])
        stats = np.stack([table.mean(axis=0), np.median(table, axis=0)], axis=1)        # (几行, 平均和中位)
        labels = (["自己", "均匀"] + ["重新训练 %d 轮" % n for n in REFIT_CHECKPOINTS]
                  + ["喂对，均匀", "喂对，重新训练后"])
        rows = [(["%d" % seed_init for seed_init, _ in EXPERIMENT_SEEDS] + ["", ""], "种子")]
        rows += [(["%.4f" % v for v in list(column) + list(stat)], label) for column, stat, label in zip(table.T, stats, labels)]
        print_table(rows, width=7)
        print("  同一格的平均对照（从头就取平均训练）：逐位正确 %.4f ± %.4f"
              % mean_and_spread([r.per_token for r in sweep[lr]["uniform"]]))


def print_average_by_position(sweep):
    """平均对照为什么比不用注意力好：按输出位置的逐位正确，10 个种子平均。"""
    print("不用注意力和平均对照，按输出位置的逐位正确（%d 个种子平均）；「全部」那一列后面是学习率和做法："
          % len(EXPERIMENT_SEEDS))
    print(" ".join("%4d" % (r + 1) for r in range(len(sweep[LR]["none"][0].by_position))) + "   全部")
    for lr in (LR, PICKING_SETTING.lr):
        for name, label in (("none", "不用注意力"), ("uniform", "平均对照")):
            by_position = np.mean([r.by_position for r in sweep[lr][name]], axis=0)
            print(" ".join("%.2f" % a for a in by_position)
                  + "   %.4f   %g，%s" % (np.mean([r.per_token for r in sweep[lr][name]]), lr, label))



# attention.md:3262 (generated/experiments.py)
def main():
    keep_freed_memory()                                     # 正文程序的附录：让释放的内存留在进程里
    with ProcessPoolExecutor(max_workers=2) as pool:       # 两个进程同时训练；结果和进程数、先后都无关
        # 最久的那次训练先交出去，其余的训练由两个进程分着跑
        long_training = pool.submit(attention_runs, BOOK_SETTING, rounds=LONG_ROUNDS,
                                    checkpoints=LONG_CHECKPOINTS, refit=False)   # 第五节那个模型，训练更久
        scaling_experiment()
        print()
        hard_attention_experiment()
        print()
        short = {setting.lr: selection_sweep(pool, 5, SHORT_ROUNDS, [setting])[setting.lr] for setting in SHORT_SETTINGS}
        sweep = selection_sweep(pool, 10, SWEEP_ROUNDS, [Setting(query=query, lr=lr) for lr in SWEEP_RATES
                                                         for query in SWEEP_QUERIES], refit_settings=REFIT_SETTINGS)
        long_run = long_training.result()[0]
    print("三、5 位任务：每个做法 %d 个种子，各训练 %d 轮。" % (len(EXPERIMENT_SEEDS), SHORT_ROUNDS))
    print("± 是 %d 个种子之间的标准差（总体标准差）；测试集都是同一份 %d 条。" % (len(EXPERIMENT_SEEDS), TEST_SIZE))
    for lr, cell in short.items():
        print_sweep_table(lr, cell)
        print_cell_summary(lr, cell)
        print()
    print("四、10 位任务：注意力什么时候真的在挑？每格 %d 个种子，各训练 %d 轮。" % (len(EXPERIMENT_SEEDS), SWEEP_ROUNDS))
    print("规则（跑这 %d 个种子之前定好）：" % len(EXPERIMENT_SEEDS))
    print("拿掉挑选后逐位正确降 %.2f 以上、反对角线是均匀的 %.0f 倍以上，才算形成了对齐。" % (FORMED_DROP, FORMED_DIAGONAL))
    for lr, cell in sweep.items():
        print()
        print_sweep_table(lr, cell)
        print_cell_summary(lr, cell)
    print()
    print_gap(sweep)
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
    print_growth_over_seeds(sweep)
    print()
    print("六、峰值落在哪一列？")
    print_peak_offsets(sweep)
    print()
    print_first_row_at_start()
    print()
    print("七、把权重换掉：实验四的每个模型，参数一个不动，解码时把每一步的权重换成别的（逐位正确）。")
    print("「自己」= 不换；「倒序」= 第 r 行只有第 11 − r 列是 1；「左移」= 只有第 10 − r 列是 1（最后一行")
    print("绕回第 10 列）；「别条」= 第 i − 1 条测试序列算出的权重；「均匀」= 全是 1/10（拿掉挑选）。")
    for lr, cell in sweep.items():
        print()
        print_swap_table(lr, cell)
    print()
    print_swap_groups(sweep)
    print()
    print_refits(sweep)
    print()
    print_average_by_position(sweep)
    print()
    trained = sum(len(runs) for results in (short, sweep) for cell in results.values() for runs in cell.values())
    refits = sum(len(sweep[setting.lr][setting.query]) for setting in REFIT_SETTINGS)
    print("这个程序一共从头训练了 %d 个模型（加上训练 30000 轮的那一个），另外只重新训练了 %d 个输出层。"
          % (trained + 1, refits))


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    main()
