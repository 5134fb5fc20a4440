"""Why the bridge's vectors score below an untrained network on unsupervised STS, and which pooling helps
(issue 42).

STS12-16 (SentEval's protocol: cosine of the two sentences' vectors, Pearson per subset, the mean of the subsets)
for a model and its untrained controls (`reinitialized(seed)`), under several poolings of the bridge's k heads,
each applied to the model and the controls alike:

- `mean`: the mean of the heads (the sentence vector everything else uses);
- `centred`: minus the mean vector of the task's sentences (anisotropy: every vector shares a large common part);
- `abtt`: centred, then the top --pcs principal directions removed ("all-but-the-top", Mu and Viswanath 2018);
- `heads`: the k heads normalised one by one, then concatenated (no head's norm dominates the cosine);
- `states`: no bridge at all: the mean of the BiLSTM's states H over the sentence's tokens (what the bridge would
  give with uniform attention), to tell the encoder's states from the bridge's choice of tokens.

Besides the scores it prints the anisotropy of each encoder: the mean cosine of random pairs of sentences (0 for
an isotropic space) and the share of variance in the top principal direction.

    BRIDGEEMBED_DATA=../shared/data python benchmarks/sts_pooling.py general-m2m --controls 3 --json results/sts.json

`--dry` uses made-up pairs (the test's mode).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch
from common import add_run_options, parse_run_options, write_json  # benchmarks/, first on sys.path
from scipy.stats import pearsonr

from bridgeembed import BridgeEncoder
from bridgeembed.paths import data_root
from bridgeembed.senteval import readers

SUBSETS = {  # as bridgeembed.senteval.tasks.TASKS reads them
    "STS12": ["MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"],
    "STS13": ["FNWN", "headlines", "OnWN"],
    "STS14": ["deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"],
    "STS15": ["answers-forums", "answers-students", "belief", "headlines", "images"],
    "STS16": ["answer-answer", "headlines", "plagiarism", "postediting", "question-question"],
}
POOLINGS = ("mean", "centred", "abtt", "heads", "states")


def pool(each: np.ndarray, how: str, pcs: int) -> np.ndarray:
    """(N, k, d) heads of a task's sentences -> (N, D) vectors pooled `how`."""
    if how == "heads":
        unit = each / np.maximum(np.linalg.norm(each, axis=-1, keepdims=True), 1e-12)
        return unit.reshape(len(each), -1)
    x = each.mean(axis=1)
    if how == "mean":
        return x
    x = x - x.mean(axis=0, keepdims=True)
    if how == "abtt":
        top = np.linalg.svd(x, full_matrices=False)[2][:pcs]  # (pcs, d)
        x = x - (x @ top.T) @ top
    return x


def state_means(encoder, sentences: list, lang: str, batch_size: int = 64) -> np.ndarray:
    """(N, d_h): the mean of each sentence's BiLSTM states H over its tokens (EOS included), cut as encode cuts."""
    from bridgeembed.text.parallel import pad, with_eos

    ids, _ = with_eos(encoder.tokenizers[lang].encode_many(sentences), encoder.max_len)
    out = []
    with torch.inference_mode():
        for start in range(0, len(ids), batch_size):
            seqs = ids[start:start + batch_size]
            src, lengths = pad(seqs), torch.tensor([len(x) for x in seqs])
            states = encoder.model.encoders[lang](src, lengths)  # H: (B, T, d_h)
            mask = (torch.arange(src.size(1))[None, :] < lengths[:, None]).unsqueeze(-1)
            out.append(((states * mask).sum(1) / lengths[:, None]).float().numpy())
    return np.concatenate(out)


def cosine(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return (u * v).sum(-1) / np.maximum(np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1), 1e-30)


def anisotropy(x: np.ndarray, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(x), 2000), rng.integers(0, len(x), 2000)
    keep = i != j
    centred = x - x.mean(axis=0)
    s = np.linalg.svd(centred, compute_uv=False) ** 2
    return {"random_pair_cosine": float(cosine(x[i[keep]], x[j[keep]]).mean()),
            "top_pc_variance": float(s[0] / s.sum())}


def score(encoder, tasks: dict, pcs: int) -> dict:
    """{pooling: {year: mean Pearson x 100}} and the anisotropy of the mean vectors over every sentence."""
    out = {how: {} for how in POOLINGS}
    every = []
    for year, subsets in tasks.items():
        per = {how: [] for how in POOLINGS}
        for split in subsets.values():
            a = [" ".join(s) for s in split.a]
            b = [" ".join(s) for s in split.b]
            each = encoder.encode(a + b, lang="en", heads="each", batch_size=64)  # (2n, k, d)
            every.append(each.mean(axis=1))
            for how in POOLINGS:
                x = state_means(encoder, a + b, "en") if how == "states" else pool(each, how, pcs)
                sim = cosine(x[: len(a)], x[len(a):])
                per[how].append(100 * pearsonr(sim, np.asarray(split.y, dtype=float))[0])
        for how in POOLINGS:
            out[how][year] = float(np.mean(per[how]))
    return {"sts": out, "anisotropy": anisotropy(np.concatenate(every))}


def load_tasks(root: Path | None, dry: bool) -> dict:
    if dry:
        words = "a dog runs on the beach while two girls read books in the park".split()
        rng = np.random.default_rng(0)
        pairs = [(list(rng.choice(words, 6)), list(rng.choice(words, 6))) for _ in range(12)]
        split = readers.Split([p[0] for p in pairs], list(rng.uniform(0, 5, 12)), [p[1] for p in pairs])
        return {"dry": {"dry": split}}
    folder = Path(root) / "senteval" / "downstream" / "STS"
    return {year: readers.sts(folder / f"{year}-en-test", subsets) for year, subsets in SUBSETS.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a shipped model's name or a path")
    parser.add_argument("--controls", type=int, default=3, help="untrained controls, seeds 1..N (default: 3)")
    parser.add_argument("--pcs", type=int, default=3, help="principal directions abtt removes (default: 3)")
    add_run_options(parser, dry="made-up pairs, no data")
    args = parse_run_options(parser, argv)
    tasks = load_tasks(None if args.dry else data_root(args.data), args.dry)
    model = BridgeEncoder(args.model, device="cpu")
    encoders = {args.model: model, **{f"untrained seed {s}": model.reinitialized(seed=s)
                                      for s in range(1, args.controls + 1)}}
    results = {name: score(encoder, tasks, args.pcs) for name, encoder in encoders.items()}
    years = list(tasks)
    print("| encoder | pooling | " + " | ".join(years) + " | mean |\n|---|---|" + "---|" * (len(years) + 1))
    for name, found in results.items():
        for how in POOLINGS:
            values = [found["sts"][how][y] for y in years]
            print(f"| {name} | {how} | " + " | ".join(f"{v:.1f}" for v in values) + f" | {np.mean(values):.1f} |")
    print("\n| encoder | random-pair cosine | top principal direction's variance |\n|---|---|---|")
    for name, found in results.items():
        a = found["anisotropy"]
        print(f"| {name} | {a['random_pair_cosine']:.3f} | {100 * a['top_pc_variance']:.1f}% |")
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
