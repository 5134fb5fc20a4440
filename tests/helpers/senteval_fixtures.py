"""A tiny SentEval tree written by the tests, and encoder doubles."""

from pathlib import Path

import numpy as np

from bridgeembed.encoders.baselines import HashBowEncoder

POS = ["good great film", "great fun", "a good and great story", "fine good work", "great acting"]
NEG = ["bad awful film", "awful mess", "a bad and awful story", "dull bad work", "awful acting"]


def write_tree(root: Path, n=40) -> Path:
    """downstream/ with MR, TREC, SST2, MRPC, SICK, STS12 and probing/ with one task; returns root."""
    d = root / "downstream"
    rng = np.random.default_rng(0)
    pos = [POS[i % 5] + f" w{i}" for i in range(n)]
    neg = [NEG[i % 5] + f" w{i}" for i in range(n)]
    (d / "MR").mkdir(parents=True)
    (d / "MR" / "rt-polarity.pos").write_bytes(("\n".join(pos) + "\n").encode("latin-1"))
    (d / "MR" / "rt-polarity.neg").write_bytes(("\n".join(neg) + "\n").encode("latin-1"))
    (d / "TREC").mkdir()
    trec = [f"{'NUM' if i % 2 else 'HUM'}:x {'how many' if i % 2 else 'who is'} thing{i} caf\xe9 ?" for i in range(n)]
    (d / "TREC" / "train_5500.label").write_bytes(("\n".join(trec) + "\n").encode("latin-1"))
    (d / "TREC" / "TREC_10.label").write_bytes(("\n".join(trec[:10]) + "\n").encode("latin-1"))
    (d / "SST" / "binary").mkdir(parents=True)
    for split, k in [("train", n), ("dev", 10), ("test", 10)]:
        lines = [f"{(pos if i % 2 else neg)[i]} \t{i % 2}" for i in range(k)]
        (d / "SST" / "binary" / f"sentiment-{split}").write_text("\n".join(lines) + "\n")
    (d / "MRPC").mkdir()
    for split, k in [("train", n), ("test", 10)]:
        rows = ["Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"]
        rows += [f"{i % 2}\t{i}\t{i}\t{pos[i]}\t{pos[i] if i % 2 else neg[i]}" for i in range(k)]
        (d / "MRPC" / f"msr_paraphrase_{split}.txt").write_text("\ufeff" + "\n".join(rows) + "\n", encoding="utf-8")
    (d / "SICK").mkdir()
    labels = ["ENTAILMENT", "NEUTRAL", "CONTRADICTION"]
    for name, k in [("SICK_train.txt", n), ("SICK_trial.txt", 12), ("SICK_test_annotated.txt", 12)]:
        rows = ["pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment"]
        rows += [f"{i}\t{pos[i]}\t{pos[i] if i % 3 == 0 else neg[i]}\t{1 + 4 * rng.random():.1f}\t{labels[i % 3]}" for i in range(k)]
        (d / "SICK" / name).write_text("\r\n".join(rows) + "\r\n")  # CRLF, like SICK_test_annotated.txt
    sts = d / "STS" / "STS12-en-test"
    sts.mkdir(parents=True)
    for subset in ["MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"]:
        (sts / f"STS.input.{subset}.txt").write_text("\n".join(f"{pos[i]}\t{pos[i]}" for i in range(8)) + "\n")
        (sts / f"STS.gs.{subset}.txt").write_text("\n".join(["5.0"] * 7 + [""]) + "\n")  # last pair unscored
    probing = root / "probing"
    probing.mkdir()
    lines = [f"{s}\t{'long' if i % 2 else 'short'}\t{' '.join(['x'] * (8 if i % 2 else 2))} t{i}"
             for s, k in [("tr", n), ("va", 10), ("te", 10)] for i in range(k)]
    (probing / "sentence_length.txt").write_text("\n".join(lines) + "\n")
    return root


class HeadsEncoder:
    """Three heads: 0 and 2 carry bag-of-words vectors, 1 is constant noise."""

    num_heads = 3
    languages = ["en", "de"]

    def __init__(self):
        self.bow = HashBowEncoder(dim=16)
        self.calls = []

    def encode(self, sentences, lang, heads="mean", batch_size=64):
        self.calls.append(heads)
        v = self.bow.encode(sentences)  # (N, 16)
        noise = np.random.default_rng(1).standard_normal(v.shape).astype(np.float32)
        each = np.stack([v, noise, 2 * v], axis=1)  # (N, 3, 16)
        if heads == "mean":
            return each.mean(1)
        if heads == "each":
            return each
        if isinstance(heads, int):
            return each[:, heads]
        return each[:, list(heads)]


class BrokenEncoder:
    def __init__(self, kind):
        self.kind = kind

    def encode(self, sentences, lang, heads="mean", batch_size=64):
        out = np.ones((len(sentences), 4), dtype=np.float32)
        if self.kind == "nan":
            out[len(out) // 2, 1] = np.nan
            return out
        return out[:-1]  # one row short
