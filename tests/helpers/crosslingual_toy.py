"""Synthetic multilingual data and encoders for the crosslingual tests (helpers only, no tests here).

Sentences are made of *concepts*; language `xx` writes concept 7 as the word `xx7`, so every
language has its own vocabulary and the data sets are parallel across languages. Two encoders:

- `SharedSpaceEncoder`: a word's vector depends on its concept only, so all languages share one
  space and a classifier trained on one language transfers to the others;
- `RotatedEncoder`: the same vectors turned by a random rotation per language, so no transfer.
"""

from pathlib import Path

import numpy as np

LANGS = ("en", "de", "fr")
DIM = 24
N_CONCEPTS = 60
NLI_LABELS = ("entailment", "neutral", "contradiction")


class SharedSpaceEncoder:
    """Mean of per-concept random vectors; `languages=None` means any language."""

    def __init__(self, dim: int = DIM, languages=None, seed: int = 0):
        self.table = np.random.default_rng(seed).normal(size=(N_CONCEPTS, dim)).astype(np.float32)
        self.languages = languages
        self.calls = []

    def _concepts(self, sentence: str, lang: str):
        words = sentence.split()
        assert all(w.startswith(lang) for w in words), f"{sentence!r} is not {lang}"
        return [int(w[len(lang):]) for w in words]

    def encode(self, sentences, lang, heads="mean", batch_size=64):
        self.calls.append((lang, len(sentences)))
        return np.stack([self.table[self._concepts(s, lang)].mean(axis=0) for s in sentences])  # (N, d)


class RotatedEncoder(SharedSpaceEncoder):
    """SharedSpaceEncoder followed by a language-specific random orthogonal map: no shared space."""

    def encode(self, sentences, lang, heads="mean", batch_size=64):
        seed = sum(ord(c) * 131 ** i for i, c in enumerate(lang))
        q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(DIM, DIM)))  # (d, d) orthogonal
        return (super().encode(sentences, lang) @ q).astype(np.float32)


def render(concepts, lang: str) -> str:
    return " ".join(f"{lang}{c}" for c in concepts)


def nli_rows(n: int, seed: int):
    """n (premise concepts, hypothesis concepts, label) triples, labels cycling e/n/c (XNLI is balanced).

    The hypothesis repeats three premise concepts and adds one cue concept whose group (1-5, 6-10,
    11-15) gives the label. Every class is then as far from its premise, so only the *direction*
    of the difference tells the label: a per-language rotation must leave nothing to transfer.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        premise = list(rng.choice(np.arange(16, N_CONCEPTS), size=4, replace=False))
        cue = 1 + 5 * (i % 3) + int(rng.integers(5))
        rows.append((premise, premise[:3] + [cue], NLI_LABELS[i % 3]))
    return rows


def write_xnli(folder: Path, langs=LANGS, n_dev: int = 300, n_test: int = 240) -> Path:
    """XTREME layout: dev-{lang}.tsv with labels, test-{lang}.tsv without, test.labels shared."""
    folder.mkdir(parents=True, exist_ok=True)
    dev, test = nli_rows(n_dev, seed=1), nli_rows(n_test, seed=2)
    for lang in langs:
        (folder / f"dev-{lang}.tsv").write_text(
            "".join(f"{render(p, lang)}\t{render(h, lang)}\t{y}\n" for p, h, y in dev), encoding="utf-8")
        (folder / f"test-{lang}.tsv").write_text(
            "".join(f"{render(p, lang)}\t{render(h, lang)}\n" for p, h, _ in test), encoding="utf-8")
    (folder / "test.labels").write_text("".join(f"{y}\n" for _, _, y in test), encoding="utf-8")
    return folder


def sentiment_rows(n: int, seed: int):
    """n (concepts, label 0/1/2): concepts 1-10 are negative, 11-20 neutral, 21-30 positive, the rest noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        label = i % 3
        cue = list(rng.choice(np.arange(1 + 10 * label, 11 + 10 * label), size=2, replace=False))
        noise = list(rng.choice(np.arange(31, N_CONCEPTS), size=3, replace=False))
        rows.append((cue + noise, label))
    return rows


XLMT_NAMES = {"en": "english", "de": "german", "fr": "french", "es": "spanish"}


def write_tweets(folder: Path, langs=LANGS, n_train: int = 450, n_test: int = 150) -> Path:
    """The xlm-t layout: {english,...}/{train,test}_{text,labels}.txt, last line without newline."""
    for lang in langs:
        base = folder / XLMT_NAMES[lang]
        base.mkdir(parents=True, exist_ok=True)
        for split, rows in (("train", sentiment_rows(n_train, 3)), ("test", sentiment_rows(n_test, 4))):
            (base / f"{split}_text.txt").write_text("\n".join(render(c, lang) for c, _ in rows), encoding="utf-8")
            (base / f"{split}_labels.txt").write_text("\n".join(str(y) for _, y in rows), encoding="utf-8")
    return folder


def write_bitext(folder: Path, langs=LANGS, n: int = 80) -> str:
    """Line-aligned `bitext.{lang}` files; returns the path template."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(5)
    rows = [list(rng.choice(np.arange(1, N_CONCEPTS), size=5, replace=False)) for _ in range(n)]
    for lang in langs:
        (folder / f"bitext.{lang}").write_text("".join(render(c, lang) + "\n" for c in rows), encoding="utf-8")
    return str(folder / "bitext.{lang}")
