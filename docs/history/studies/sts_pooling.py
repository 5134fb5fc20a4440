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
  give with uniform attention), to tell the encoder's states from the bridge's choice of tokens;
- `sif`: the states weighted by a / (a + p(piece)) (Arora et al. 2017's smooth inverse frequency, a = --sif-a),
  p counted over the English side of every training corpus under the data root (PUD excepted; at most
  --sif-lines lines a file): whether frequent pieces dominate the trained model's mean more than a random one's.

Besides the scores it prints the anisotropy of each encoder: the mean cosine of random pairs of sentences (0 for
an isotropic space) and the share of variance in the top principal direction. And how lexical each encoder is:
the Pearson correlation of its cosines (`mean`) with the pairs' word overlap (Jaccard of the lowercased word sets),
beside the overlap's own STS score (no encoder at all).

    BRIDGEEMBED_DATA=../shared/data python docs/history/studies/sts_pooling.py general-m2m --controls 3 \\
        --json results/sts.json

`--dry` uses made-up pairs (the test's mode).
"""

from __future__ import annotations

import sys
from itertools import islice
from pathlib import Path

import numpy as np
import torch
from scipy.stats import pearsonr

from bridgeembed import BridgeEncoder
from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from bridgeembed.paths import data_root
from bridgeembed.senteval import readers
from bridgeembed.senteval.readers import STS_SUBSETS as SUBSETS  # as bridgeembed.senteval.tasks.TASKS reads them

POOLINGS = ("mean", "centred", "abtt", "heads", "states", "sif")


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


def state_means(encoder, sentences: list, lang: str, weights: np.ndarray,
                batch_size: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """(N, d_h) twice, from one pass of the encoder: the mean of each sentence's BiLSTM states H over its tokens
    (EOS included, cut as encode cuts), and the same mean weighted by `weights` (one per piece id)."""
    from bridgeembed.text.parallel import pad, with_eos

    ids, _ = with_eos(encoder.tokenizers[lang].encode_many(sentences), encoder.max_len)
    table = torch.as_tensor(weights, dtype=torch.float32)
    plain, weighted = [], []
    with torch.inference_mode():
        for start in range(0, len(ids), batch_size):
            seqs = ids[start:start + batch_size]
            src, lengths = pad(seqs), torch.tensor([len(x) for x in seqs])
            states = encoder.model.encoders[lang](src, lengths).float()  # H: (B, T, d_h)
            mask = (torch.arange(src.size(1))[None, :] < lengths[:, None]).float()
            for out, w in ((plain, mask), (weighted, mask * table[src])):
                out.append(((states * w.unsqueeze(-1)).sum(1) / w.sum(1, keepdim=True)).numpy())
    return np.concatenate(plain), np.concatenate(weighted)


def sif_weights(encoder, root: Path | None, lang: str, a: float, lines: int) -> np.ndarray:
    """a / (a + p(piece)) for every piece id, p counted over `lang`'s training text under `root` (PUD excepted,
    the first `lines` lines of each file; EOS counted once a sentence, like any piece); with no root (the dry
    run), every weight is 1."""
    from bridgeembed.text.parallel import with_eos
    from bridgeembed.text.streaming import iter_lines

    size = encoder.tokenizers[lang].sp.get_piece_size()
    if root is None:
        return np.ones(size)
    counts = np.zeros(size)
    for path in sorted(Path(root).glob(f"*/train*.{lang}.gz")):
        if path.parent.name != "pud":
            text = list(islice(iter_lines(path), lines))
            ids, _ = with_eos(encoder.tokenizers[lang].encode_many(text), encoder.max_len)
            counts += np.bincount(np.concatenate([np.asarray(x, dtype=np.int64) for x in ids]), minlength=size)
    return a / (a + counts / max(1.0, counts.sum()))


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


def overlap(split) -> np.ndarray:
    """The Jaccard overlap of each pair's lowercased word sets."""
    sets = [({w.lower() for w in a}, {w.lower() for w in b}) for a, b in zip(split.a, split.b)]
    return np.array([len(a & b) / max(1, len(a | b)) for a, b in sets])


def overlap_scores(tasks: dict) -> dict:
    """{year: mean Pearson x 100} of the word overlap alone against the gold scores."""
    return {year: float(np.mean([100 * pearsonr(overlap(split), np.asarray(split.y, dtype=float))[0]
                                 for split in subsets.values()])) for year, subsets in tasks.items()}


def score(encoder, tasks: dict, pcs: int, weights: np.ndarray) -> dict:
    """{pooling: {year: mean Pearson x 100}}, the anisotropy of the mean vectors over every sentence, and the
    Pearson x 100 of the `mean` cosines with the word overlap (the mean over every subset)."""
    out = {how: {} for how in POOLINGS}
    every, lexical = [], []
    for year, subsets in tasks.items():
        per = {how: [] for how in POOLINGS}
        for split in subsets.values():
            a = [" ".join(s) for s in split.a]
            b = [" ".join(s) for s in split.b]
            each = encoder.encode(a + b, lang="en", heads="each", batch_size=64)  # (2n, k, d)
            every.append(each.mean(axis=1))
            states = dict(zip(("states", "sif"), state_means(encoder, a + b, "en", weights)))
            gold = np.asarray(split.y, dtype=float)
            for how in POOLINGS:
                x = states[how] if how in states else pool(each, how, pcs)
                sim = cosine(x[: len(a)], x[len(a):])
                per[how].append(100 * pearsonr(sim, gold)[0])
                if how == "mean":
                    lexical.append(100 * pearsonr(sim, overlap(split))[0])
        for how in POOLINGS:
            out[how][year] = float(np.mean(per[how]))
    return {"sts": out, "anisotropy": anisotropy(np.concatenate(every)), "word_overlap": float(np.mean(lexical))}


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
    parser = script_parser(__doc__, "--data", first_paragraph=True, dry="made-up pairs, no data", json_out=True)
    parser.add_argument("model", help="a shipped model's name or a path")
    parser.add_argument("--controls", type=int, default=3, help="untrained controls, seeds 1..N (default: 3)")
    parser.add_argument("--pcs", type=int, default=3, help="principal directions abtt removes (default: 3)")
    parser.add_argument("--sif-a", type=float, default=1e-3, help="sif's a (default: 1e-3, Arora et al.'s)")
    parser.add_argument("--sif-lines", type=int, default=100_000,
                        help="lines read from each training file to count pieces for sif (default: 100,000)")
    args = parse_script(parser, argv)
    tasks = load_tasks(None if args.dry else data_root(args.data), args.dry)
    model = BridgeEncoder(args.model, device="cpu")
    encoders = {args.model: model, **{f"untrained seed {s}": model.reinitialized(seed=s)
                                      for s in range(1, args.controls + 1)}}
    weights = sif_weights(model, None if args.dry else data_root(args.data), "en", args.sif_a, args.sif_lines)
    results = {name: score(encoder, tasks, args.pcs, weights) for name, encoder in encoders.items()}
    years = list(tasks)
    alone = overlap_scores(tasks)
    print("| encoder | pooling | " + " | ".join(years) + " | mean |\n|---|---|" + "---|" * (len(years) + 1))
    print("| none | word overlap | " + " | ".join(f"{alone[y]:.1f}" for y in years)
          + f" | {np.mean(list(alone.values())):.1f} |")
    for name, found in results.items():
        for how in POOLINGS:
            values = [found["sts"][how][y] for y in years]
            print(f"| {name} | {how} | " + " | ".join(f"{v:.1f}" for v in values) + f" | {np.mean(values):.1f} |")
    print("\n| encoder | random-pair cosine | top principal direction's variance | cosine ~ word overlap |"
          "\n|---|---|---|---|")
    for name, found in results.items():
        a = found["anisotropy"]
        print(f"| {name} | {a['random_pair_cosine']:.3f} | {100 * a['top_pc_variance']:.1f}% "
              f"| {found['word_overlap']:.1f} |")
    write_json(args.json, {"encoders": results, "word_overlap": alone})
    return 0


if __name__ == "__main__":
    sys.exit(main())
