"""Translation retrieval on a training config's own dev sets: the number that chooses a checkpoint (issue 42).

The dev sets are the ones the trainer holds out: the main corpus's `data.valid` split, and for every entry of
`data.corpora` its `valid` split or its last `dev_lines` training lines (never trained on). For each set and
model: the mean over its ordered language pairs of "is a sentence's nearest vector (cosine, mean of the heads)
its translation" (`retrieval.accuracy`, whose rule `translation.matching.translation_found` is training's dev
retrieval's too); then the mean over the sets. PUD and the captions' test_2016 can be added beside them
(`evaluation_sets(report=True)`), for reporting only: never choose by them; they are not in the dev mean.
`benchmarks/dev_retrieval.py` runs it on checkpoints.
"""

from __future__ import annotations

import warnings
from itertools import permutations
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bridgeembed.config import Config, corpus_configs
from bridgeembed.crosslingual.retrieval import accuracy
from bridgeembed.text.parallel import corpus_dir, read_split
from bridgeembed.training.data import corpus_files, dev_split

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.bridge import BridgeEncoder

# evaluation sets by name: (corpus folder under the data root, split); PUD and test_2016 are reported, never chosen by
SETS = {"pud": ("pud", "test"), "news2013": ("newstest-4way", "valid"), "test_2016": ("multi30k", "test_2016_flickr")}
REPORT_SETS = {"PUD": SETS["pud"], "test_2016": SETS["test_2016"]}


def dev_sets(config: Config, data_root: str | None) -> dict:
    """{name: {lang: lines}}: every dev set the run validates on."""
    d = config.data
    sets = {Path(d.path).name: read_split(corpus_dir(d.path, data_root), d.valid, d.languages)}
    for corpus in corpus_configs(d):
        if corpus.use == "alignment":
            continue
        folder, files = corpus_files(corpus, data_root)
        raw, _ = dev_split(corpus, folder, files, lines=1 << 62)
        if raw is not None:
            sets[corpus.label] = raw
    return sets


def evaluation_sets(config: Config, data_root: str | None, report: bool) -> dict:
    """`dev_sets`, and with `report` PUD and test_2016 beside them (reported, never chosen by)."""
    sets = dev_sets(config, data_root)
    if report:
        for name, (path, split) in REPORT_SETS.items():
            sets[name] = read_split(corpus_dir(path, data_root), split, config.data.languages)
    return sets


def encode_quietly(encoder: BridgeEncoder, lines: dict) -> dict:
    """{lang: vectors} of `lines` ({lang: sentences}), without the warning about sentences cut at
    max_seq_length: a measurement counts the cut (or scores every set alike) rather than warns about it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return {lang: encoder.encode(text, lang, batch_size=64) for lang, text in lines.items()}


def score(encoder: BridgeEncoder, lines: dict) -> dict:
    """Retrieval (%) of every ordered pair of `lines`' languages ("de-en": a German sentence finds its English)."""
    vectors = encode_quietly(encoder, lines)
    return {f"{a}-{b}": 100 * accuracy(vectors[a], vectors[b], lines[b]) for a, b in permutations(lines, 2)}


def score_sets(encoder: BridgeEncoder, sets: dict, lines: int) -> dict:
    """{"sets": each set's mean over its ordered pairs, "dev_mean": their mean over the dev sets (the report
    sets left out), "pairs": every pair} on the first `lines` sentences of each set's languages the encoder has."""
    pairs = {name: score(encoder, {lang: text[:lines] for lang, text in by_lang.items() if lang in encoder.languages})
             for name, by_lang in sets.items()}
    found = {name: float(np.mean(list(by_pair.values()))) for name, by_pair in pairs.items()}
    dev = [v for name, v in found.items() if name not in REPORT_SETS]
    return {"sets": found, "dev_mean": float(np.mean(dev)), "pairs": pairs}
