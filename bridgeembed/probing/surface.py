"""The probing tasks that need no parser: Length, WordContent and BigramShift.

Definitions from Conneau et al. (2018), Section 3, as SentEval's data/probing/README.md states them.
"""

from __future__ import annotations

import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Optional

from bridgeembed.probing.base import BuildContext, ProbingTask
from bridgeembed.probing.sampling import TaskData, TooSmall, balanced_split, per_class_or_skip

# SentEval's six bins, inclusive: "0: (5-8), 1: (9-12), 2: (13-16), 3: (17-20), 4: (21-25), 5: (26-28)".
LENGTH_BINS = ((5, 8), (9, 12), (13, 16), (17, 20), (21, 25), (26, 28))
DOUBLE_QUOTES = frozenset('"“”„«»＂')


def length_bin(n_tokens: int) -> Optional[int]:
    for label, (low, high) in enumerate(LENGTH_BINS):
        if low <= n_tokens <= high:
            return label
    return None


def is_punctuation(token: str) -> bool:
    return all(unicodedata.category(ch)[0] in "PS" for ch in token)


class Length(ProbingTask):
    name = "Length"

    def build(self, ctx: BuildContext) -> TaskData:
        by_label = defaultdict(list)
        for tokens in ctx.sentences:
            label = length_bin(len(tokens))
            if label is not None:
                by_label[str(label)].append(" ".join(tokens))
        missing = [str(i) for i in range(len(LENGTH_BINS)) if str(i) not in by_label]
        if missing:
            raise TooSmall(f"no sentence in length bin(s) {', '.join(missing)} "
                           f"(bins {LENGTH_BINS}; counts: {dict(sorted((k, len(v)) for k, v in by_label.items()))})")
        examples = balanced_split(by_label, ctx.size, ctx.fractions, self.rng(ctx.seed))
        bins = ", ".join(f"{i}: {a}-{b}" for i, (a, b) in enumerate(LENGTH_BINS))
        return TaskData(self.name, examples, f"bins (tokens): {bins}")


class WordContent(ProbingTask):
    """SentEval: the first 1000 lower-cased words from rank 2,001 on, at least 4 characters; each
    sentence holds exactly one target, once. On a small corpus the skip and the number of targets
    shrink (`skip=None`, `words=None`): targets are the words that keep `min_per_word` sentences."""

    name = "WordContent"
    approximation = "number of target words, their frequency ranks and examples per word scaled to the corpus"

    def __init__(self, words: Optional[int] = None, skip: Optional[int] = None, min_per_word: int = 30) -> None:
        self.words, self.skip, self.min_per_word = words, skip, min_per_word

    @staticmethod
    def eligible(sentences: Sequence[str], targets: Sequence[str]) -> dict:
        """target -> sentences in which it is the only target word and occurs once."""
        found = defaultdict(list)
        for tokens in sentences:
            hits = [w for w in (t.lower() for t in tokens) if w in targets]
            if len(hits) == 1:
                found[hits[0]].append(" ".join(tokens))
        return found

    def targets(self, sentences: Sequence[str]) -> tuple:
        freq = Counter(t.lower() for tokens in sentences for t in tokens)
        ranked = sorted(freq, key=lambda w: (-freq[w], w))
        skip = self.skip if self.skip is not None else min(2000, len(ranked) // 50)
        candidates = [w for w in ranked[skip:] if len(w) >= 4 and w.isalpha()]
        if self.words:
            return set(candidates[:self.words]), skip
        targets = set(candidates[:1000])
        while True:  # drop the weakest tenth of the short targets: that makes their sentences eligible for others
            found = self.eligible(sentences, targets)
            short = sorted((w for w in targets if len(found.get(w, ())) < self.min_per_word),
                           key=lambda w: (len(found.get(w, ())), -freq[w], w))
            if not short:
                return targets, skip
            targets -= set(short[:max(1, len(short) // 10)])

    def build(self, ctx: BuildContext) -> TaskData:
        targets, skip = self.targets(ctx.sentences)
        found = self.eligible(ctx.sentences, targets)
        counts = {w: len(found.get(w, ())) for w in targets}
        if len(targets) < 2:
            raise TooSmall(f"{len(targets)} word(s) ranked after the {skip} most frequent appear, alone, in "
                           f"{self.min_per_word} sentences; needs at least 2 such words (lower --wc-skip or --wc-min)")
        per_class_or_skip(counts, ctx.size, self.min_per_word, what="sentences containing only it")
        examples = balanced_split(found, ctx.size, ctx.fractions, self.rng(ctx.seed), self.min_per_word)
        return TaskData(self.name, examples, f"{len(targets)} target words from frequency rank {skip + 1} on "
                                             f"(SentEval: 1000 from rank 2001)")


def shift_positions(tokens: Sequence[str]) -> list:
    """Positions i where tokens i and i+1 may be swapped: not the first token, no punctuation, not equal."""
    return [i for i in range(1, len(tokens) - 1)
            if not is_punctuation(tokens[i]) and not is_punctuation(tokens[i + 1]) and tokens[i] != tokens[i + 1]]


class BigramShift(ProbingTask):
    """Label I: two adjacent tokens swapped; O: the sentence as it is. Each source sentence is used once."""

    name = "BigramShift"

    def build(self, ctx: BuildContext) -> TaskData:
        rng = self.rng(ctx.seed)
        corpus = {" ".join(t) for t in ctx.sentences}
        sources = [t for t in ctx.sentences if not DOUBLE_QUOTES & set("".join(t)) and shift_positions(t)]
        rng.shuffle(sources)
        half = len(sources) // 2
        inverted = []
        for tokens in sources[:half]:
            i = rng.choice(shift_positions(tokens))
            swapped = list(tokens)
            swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
            sentence = " ".join(swapped)
            if sentence not in corpus:  # a swap that yields another real sentence would carry a wrong label
                inverted.append(sentence)
        by_label = {"I": inverted, "O": [" ".join(t) for t in sources[half:]]}
        return TaskData(self.name, balanced_split(by_label, ctx.size, ctx.fractions, rng))
