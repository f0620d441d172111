"""The lesson's four trainings written in PyTorch: a yardstick for bench/bench.py.

Same task, model, sizes and optimizer as generated/attention.py, written the way one
would in PyTorch (autograd, torch.optim.Adam, clip_grad_norm_), on the CPU in float64.
Its own random streams and initialisation: the bits are not meant to match the lesson's,
only the work per round. Not part of the lesson and not needed by `make check`:
bench.py installs torch into .cache/bench-venv and runs this file there.

Prints one JSON object on stdout: torch version, threads, the seconds `import torch` and
a first throwaway round took, and per model its rounds, parameters, training seconds
(wall, CPU, system) and page faults, evaluation seconds, and the whole-sequence and
per-token accuracy on 100 held-out test sequences.

Examples:
  .cache/bench-venv/bin/python bench/torch_reference.py                 # 1 thread
  .cache/bench-venv/bin/python bench/torch_reference.py --threads 2 --fraction 0.1
"""

import argparse
import json
import math
import resource
import time

from measure.subjects import MODELS  # the four trainings of generated/attention.py (bench/ is sys.path[0])

_started = time.perf_counter()
import torch  # noqa: E402  (timed: the import is part of what a torch program pays)

IMPORT_SECONDS = time.perf_counter() - _started

LETTERS, START, VOCAB, HIDDEN, BATCH, TEST_SIZE = 5, 5, 6, 16, 32, 100
BETAS, EPS, CLIP = (0.9, 0.999), 1e-8, 1.0
SEED = 2
DTYPE = torch.float64


def codes(seqs):
    """Each sequence read as a base-5 number: one integer per row, to compare whole rows."""
    powers = LETTERS ** torch.arange(seqs.shape[1])
    return (seqs * powers).sum(dim=1)


def make_test_set(gen, length):
    """TEST_SIZE distinct random sequences in the order drawn, shape (TEST_SIZE, length)."""
    distinct = {}                                  # a dict keeps the order of first sight
    while len(distinct) < TEST_SIZE:
        for row in torch.randint(0, LETTERS, (TEST_SIZE, length), generator=gen).tolist():
            distinct.setdefault(tuple(row), None)
    return torch.tensor(list(distinct)[:TEST_SIZE])


def sample_batch(gen, length, test_codes):
    """A training batch; rows that happen to be test sequences are drawn again."""
    src = torch.randint(0, LETTERS, (BATCH, length), generator=gen)
    clash = torch.isin(codes(src), test_codes)
    while clash.any():
        src[clash] = torch.randint(0, LETTERS, (int(clash.sum()), length), generator=gen)
        clash = torch.isin(codes(src), test_codes)
    return src


def init_params(gen, attention):
    """Same shapes and init rule as the lesson: U(±1/sqrt(fan_in)) matrices, zero biases."""
    shapes = {
        "enc_Wx": (VOCAB, HIDDEN), "enc_Wh": (HIDDEN, HIDDEN), "enc_b": (HIDDEN,),
        "dec_Wx": (VOCAB, HIDDEN), "dec_Wh": (HIDDEN, HIDDEN), "dec_b": (HIDDEN,),
        "Wo": (2 * HIDDEN if attention else HIDDEN, VOCAB), "bo": (VOCAB,),
    }
    params = {}
    for name, shape in shapes.items():
        if len(shape) == 1:
            p = torch.zeros(shape, dtype=DTYPE)
        else:
            limit = 1 / math.sqrt(shape[0])
            p = (torch.rand(shape, generator=gen, dtype=DTYPE) * 2 - 1) * limit
        params[name] = p.requires_grad_()
    return params


def rnn(x_rows, Wh, h):
    """tanh RNN over x_rows (B, T, H), the looked-up Wx rows plus bias; returns (B, T, H)."""
    hs = []
    for t in range(x_rows.shape[1]):
        h = torch.tanh(x_rows[:, t] + h @ Wh)
        hs.append(h)
    return torch.stack(hs, dim=1)


def output_logits(params, hs_dec, hs_enc, attention, queries=None):
    """Luong dot-product attention over the encoder states, then the output layer. The queries
    are the decoder states themselves unless given (the state before each update)."""
    features = hs_dec
    if attention:
        queries = hs_dec if queries is None else queries
        scores = queries @ hs_enc.transpose(1, 2) / math.sqrt(HIDDEN)  # (B, Tq, Tk)
        context = torch.softmax(scores, dim=-1) @ hs_enc                # (B, Tq, H)
        features = torch.cat([hs_dec, context], dim=-1)
    return features @ params["Wo"] + params["bo"]


def loss_fn(params, src, tgt, attention, query):
    """Mean cross-entropy per output token, teacher forcing (decoder input START, tgt[:-1])."""
    B = len(src)
    dec_in = torch.cat([torch.full((B, 1), START), tgt[:, :-1]], dim=1)
    h0 = torch.zeros(B, HIDDEN, dtype=DTYPE)
    hs_enc = rnn(params["enc_Wx"][src] + params["enc_b"], params["enc_Wh"], h0)
    hs_dec = rnn(params["dec_Wx"][dec_in] + params["dec_b"], params["dec_Wh"], hs_enc[:, -1])
    queries = hs_dec if query == "after" else torch.cat([hs_enc[:, -1:], hs_dec[:, :-1]], dim=1)
    logits = output_logits(params, hs_dec, hs_enc, attention, queries)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1))


def train(length, attention, rounds, test, gen, query="after", lr=0.003):
    params = init_params(gen, attention)
    values = list(params.values())
    optimizer = torch.optim.Adam(values, lr=lr, betas=BETAS, eps=EPS)
    test_codes = codes(test)
    for _ in range(rounds):
        src = sample_batch(gen, length, test_codes)
        loss = loss_fn(params, src, src.flip(1), attention, query)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(values, CLIP)
        optimizer.step()
    return params


@torch.no_grad()
def evaluate(params, test, attention, query):
    """Greedy decoding; (whole-sequence accuracy, per-token accuracy)."""
    B, T = test.shape
    h0 = torch.zeros(B, HIDDEN, dtype=DTYPE)
    hs_enc = rnn(params["enc_Wx"][test] + params["enc_b"], params["enc_Wh"], h0)
    h, token = hs_enc[:, -1], torch.full((B,), START)
    tokens = []
    for _ in range(T):
        h_before = h
        h = torch.tanh(params["dec_Wx"][token] + params["dec_b"] + h @ params["dec_Wh"])
        q = h if query == "after" else h_before
        token = output_logits(params, h[:, None], hs_enc, attention, q[:, None])[:, 0].argmax(dim=-1)
        tokens.append(token)
    correct = torch.stack(tokens, dim=1) == test.flip(1)
    return correct.all(dim=1).double().mean().item(), correct.double().mean().item()


def usage_now():
    """Wall, CPU (user + system, all threads), system seconds and minor page faults."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (time.perf_counter(), usage.ru_utime + usage.ru_stime, usage.ru_stime,
            usage.ru_minflt)


def run_model(length, attention, rounds, query, lr, gen):
    test = make_test_set(gen, length)
    before = usage_now()
    params = train(length, attention, rounds, test, gen, query, lr)
    wall, cpu, sys_, faults = (a - b for a, b in zip(usage_now(), before, strict=True))
    trained = time.perf_counter()
    whole, per_token = evaluate(params, test, attention, query)
    return {
        "length": length, "attention": attention, "rounds": rounds, "query": query, "lr": lr,
        "params": sum(p.numel() for p in params.values()),
        "train_s": wall, "train_cpu_s": cpu, "train_sys_s": sys_, "train_faults": faults,
        "eval_s": time.perf_counter() - trained,
        "whole": whole, "per_token": per_token,
    }


def warm_up():
    """Seconds of one throwaway training round: the first optimizer step imports
    torch._dynamo (seconds, once per process), which is no part of any training's time."""
    gen = torch.Generator().manual_seed(SEED)
    started = time.perf_counter()
    train(5, False, 1, make_test_set(gen, 5), gen)
    return time.perf_counter() - started


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    parser.add_argument("--fraction", type=float, default=1.0,
                        help="fraction of the lesson's rounds to train (default 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    warmup_s = warm_up()
    gen = torch.Generator().manual_seed(SEED)
    models = [run_model(length, attention, max(1, round(rounds * args.fraction)), query, lr, gen)
              for length, attention, rounds, query, lr in MODELS]
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(),
                      "import_s": IMPORT_SECONDS, "warmup_s": warmup_s,
                      "models": models}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
