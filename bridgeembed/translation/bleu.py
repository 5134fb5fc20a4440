"""BLEU as the paper reports it: sacrebleu on detokenised text, lowercased (Vázquez et al. 2020, Section 3),
and BLEU by source-length bucket (their Figure 3)."""

from __future__ import annotations

from collections.abc import Sequence

import sacrebleu

LENGTH_BUCKETS = (5, 10, 15, 20, 25, 30)  # upper bounds in source words; one more bucket takes the rest


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    return float(sacrebleu.BLEU(lowercase=True).corpus_score(list(hypotheses), [list(references)]).score)


def signature() -> str:
    """sacrebleu's signature of the metric above (e.g. nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:...)."""
    metric = sacrebleu.BLEU(lowercase=True)
    metric.corpus_score(["a"], [["a"]])  # the signature names the reference count, known only after scoring
    return str(metric.get_signature())


def bucket_name(length: int, bounds: Sequence[tuple[int, int]] = LENGTH_BUCKETS) -> str:
    low = 1
    for high in bounds:
        if length <= high:
            return f"{low}-{high}"
        low = high + 1
    return f"{low}+"


def bleu_by_length(sources: Sequence[str], hypotheses: Sequence[str], references: Sequence[str],
                   bounds: Sequence[tuple[int, int]] = LENGTH_BUCKETS) -> dict:
    """{bucket: {"bleu": .., "sentences": n}} with buckets by the source's length in whitespace words."""
    groups = {}
    for src, hyp, ref in zip(sources, hypotheses, references):
        groups.setdefault(bucket_name(len(src.split()), bounds), []).append((hyp, ref))
    names = [bucket_name(b, bounds) for b in bounds] + [bucket_name(bounds[-1] + 1, bounds)]
    return {name: {"bleu": corpus_bleu(*zip(*groups[name])), "sentences": len(groups[name])}
            for name in names if name in groups}
