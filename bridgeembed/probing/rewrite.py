"""Probing tasks that change sentences using a parse: OddManOut (SOMO) and CoordinationInversion.

Conneau et al. (2018): SOMO replaces one noun or verb by another of the same part of speech with a
comparable frequency, the replacements of each split used in that split only, no sentence shown both
as original and changed; CoordInv swaps the two clauses of a sentence with one coordinating
conjunction joining two top clauses, balanced by which clause is longer.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

from bridgeembed.probing.base import BuildContext, ProbingTask
from bridgeembed.probing.parse import CONJUNCT, SUBJECT, VERBAL, Parsed
from bridgeembed.probing.sampling import SPLITS, Example, TaskData, TooSmall, ordered, per_class_or_skip, split_sizes
from bridgeembed.probing.syntax import parses

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.probing.corpus import Corpus

SWAPPABLE = frozenset({"NOUN", "VERB"})


def frequency_band(count: int) -> int:
    return int(math.log2(max(count, 1)))


class OddManOut(ProbingTask):
    """O: original; C: one lower-case noun or verb replaced by a form with the same part of speech,
    the same morphological features and the same log2 corpus-frequency band."""

    name, needs_parser = "OddManOut", True
    approximation = ("replacement matched on part of speech, morphology and log2 unigram frequency, not on the "
                     "bigrams it forms with its neighbours; no 40-400 frequency filter")

    def build(self, ctx: BuildContext) -> TaskData:
        rng = self.rng(ctx.seed)
        items = parses(ctx)
        freq = Counter(t.lower() for tokens in ctx.sentences for t in tokens)
        key = lambda p, i: (p.pos[i], tuple(sorted(p.morph[i].items())), frequency_band(freq[p.tokens[i].lower()]))  # noqa: E731
        vocab = defaultdict(set)  # key -> replacement forms
        for _, p in items:
            for i, tok in enumerate(p.tokens):
                if p.pos[i] in SWAPPABLE and tok.isalpha() and tok.islower():
                    vocab[key(p, i)].add(tok)
        form_split = {}  # every replacement form belongs to one split
        for form in sorted(set().union(*vocab.values()) if vocab else ()):
            form_split[form] = rng.choices(SPLITS, weights=ctx.fractions)[0]
        corpus = {" ".join(t) for t in ctx.sentences}
        order = list(range(len(items)))
        rng.shuffle(order)
        sizes = split_sizes(len(order), ctx.fractions)
        examples, start = [], 0
        for split in SPLITS:
            sources = [items[j] for j in order[start:start + sizes[split]]]
            start += sizes[split]
            changed, kept = [], []
            for n, (tokens, p) in enumerate(sources):
                sentence = self._change(p, split, vocab, form_split, key, corpus, rng) if n % 2 == 0 else None
                (changed if sentence else kept).append(sentence or " ".join(tokens))
            m = min(len(changed), len(kept), split_sizes(ctx.size // 2, ctx.fractions)[split])
            examples += [Example(split, "C", s) for s in changed[:m]] + [Example(split, "O", s) for s in kept[:m]]
        per_class_or_skip({"C": sum(e.label == "C" for e in examples), "O": sum(e.label == "O" for e in examples)},
                          ctx.size, 2)
        if any(not any(e.split == s for e in examples) for s in SPLITS):
            raise TooSmall(f"too few replaceable words to fill every split ({len(items)} parsed sentences)")
        return TaskData(self.name, ordered(examples, rng))

    @staticmethod
    def _change(p: Parsed, split: str, vocab: dict, form_split: dict, key: Callable, corpus: Corpus,
                rng: random.Random) -> str | None:
        positions = [i for i in range(1, len(p.tokens)) if p.pos[i] in SWAPPABLE and p.tokens[i].isalpha()
                     and p.tokens[i].islower()]
        rng.shuffle(positions)
        for i in positions:
            options = sorted(f for f in vocab[key(p, i)] if f != p.tokens[i] and form_split[f] == split)
            if options:
                tokens = list(p.tokens)
                tokens[i] = rng.choice(options)
                sentence = " ".join(tokens)
                if sentence not in corpus:
                    return sentence
        return None


def clauses(p: Parsed) -> tuple[list[str], list[str], list[str], list[str]] | None:
    """(first clause, conjunction (with a comma before it), second clause, final punctuation) token lists, or None.

    Exactly one coordinating conjunction, joining the root to a verbal conjunct that has its own
    subject and spans the rest of the sentence (UD/ClearNLP attach the conjunction to the second
    conjunct, TIGER to the first).
    """
    cc = [i for i, pos in enumerate(p.pos) if pos == "CCONJ"]
    if len(cc) != 1 or cc[0] == 0:
        return None
    c, root = cc[0], p.root
    conj = [j for j in p.children(root) if j > c and p.dep[j] in CONJUNCT] + \
           [j for j in p.children(c) if p.head[c] == root and p.dep[j] in CONJUNCT]
    if len(conj) != 1 or p.pos[conj[0]] not in VERBAL or not any(p.dep[s] in SUBJECT for s in p.children(conj[0])):
        return None
    end = len(p.tokens) - (p.pos[-1] == "PUNCT")
    second = p.subtree(conj[0]) - {c}
    if second != set(range(c + 1, end)):
        return None
    tokens = list(p.tokens)
    first = tokens[:c]
    if first and first[-1] == ",":  # "A , and B" -> "B , and A"
        first = first[:-1]
    if not first or not tokens[c + 1:end]:
        return None
    return first, tokens[len(first):c + 1], tokens[c + 1:end], tokens[end:]


def invert(first: list[str], cc: list[str], second: list[str], final: list[str], proper_first: bool = False,
           proper_second: bool = False) -> list[str]:
    """Swap the clauses, moving sentence-initial capitals with the position (not proper nouns)."""
    first, second = list(first), list(second)
    if first[0][:1].isupper() and not proper_first and second[0][:1].islower():
        first[0] = first[0][:1].lower() + first[0][1:]
        if not proper_second:
            second[0] = second[0][:1].upper() + second[0][1:]
    return second + list(cc) + first + final


class CoordinationInversion(ProbingTask):
    name, needs_parser = "CoordinationInversion", True
    approximation = "clauses found in the dependency tree (conjunct with its own subject), not in a constituency tree"

    def build(self, ctx: BuildContext) -> TaskData:
        rng = self.rng(ctx.seed)
        groups = defaultdict(list)  # which clause is longer -> (source parse, clause split)
        for _, p in parses(ctx):
            parts = clauses(p)
            if parts:
                a, b = len(parts[0]), len(parts[2])
                groups["first" if a > b else "second" if b > a else "equal"].append((p, parts))
        for g in groups.values():
            rng.shuffle(g)
        # Presented first-longer sentences: originals of "first" and inversions of "second" (and vice versa),
        # so take as many of each: both labels then show every length relation equally often.
        k = min(len(groups["first"]), len(groups["second"])) // 2
        e = len(groups["equal"]) // 2
        pairs = {"O": groups["first"][:k] + groups["second"][:k] + groups["equal"][:e],
                 "I": groups["first"][k:2 * k] + groups["second"][k:2 * k] + groups["equal"][e:2 * e]}
        per = per_class_or_skip({label: len(v) for label, v in pairs.items()}, ctx.size,
                                what="sentences (coordinated clauses found: "
                                     f"{ {g: len(v) for g, v in groups.items()} })")
        sizes = split_sizes(per, ctx.fractions)
        examples = []
        for label, chosen in pairs.items():
            chosen = [chosen[i] for i in sorted(rng.sample(range(len(chosen)), per))]
            rng.shuffle(chosen)
            start = 0
            for split in SPLITS:
                for p, (first, cc, second, final) in chosen[start:start + sizes[split]]:
                    c = len(first) + len(cc) - 1  # the conjunction's index in the source
                    tokens = (list(p.tokens) if label == "O" else
                              invert(first, cc, second, final, p.pos[0] == "PROPN" or p.tokens[0] == "I",
                                     p.pos[c + 1] == "PROPN" or p.tokens[c + 1] == "I"))
                    examples.append(Example(split, label, " ".join(tokens)))
                start += sizes[split]
        return TaskData(self.name, ordered(examples, rng))
