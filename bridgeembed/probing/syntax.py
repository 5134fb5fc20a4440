"""Probing tasks read off a dependency parse: Tense, SubjNumber, ObjNumber, Depth, TopConstituents.

Conneau et al. (2018) used PTB part-of-speech tags and constituency trees; here the same questions
are asked of UD morphology (`Tense`, `Number`) and dependency trees, so the last two tasks are
approximations (the generated README says so).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Optional

from bridgeembed.probing.base import BuildContext, ProbingTask
from bridgeembed.probing.parse import CLAUSAL, CONJUNCT, OBJECT, SUBJECT, VERBAL, Parsed
from bridgeembed.probing.sampling import TaskData, TooSmall, balanced_split, grouped_split
from bridgeembed.probing.surface import length_bin

TENSES = {"Past": "PAST", "Imp": "PAST", "Pres": "PRES"}  # Imp: the French/Spanish imperfect is a past tense
NUMBERS = {"Sing": "NN", "Plur": "NNS"}
VERB_GROUP = frozenset({"aux", "auxpass", "cop", "neg", "expl"})  # left dependents inside the VP (base label)
FINAL = frozenset({".", "?", "!", "…"})


def parses(ctx: BuildContext) -> Iterator[tuple[tuple, Parsed]]:
    """(tokens, parse) for every sentence the parser read as one sentence."""
    if ctx.parses is None:
        raise TooSmall("no parses (this task needs a spaCy pipeline: --spacy-model)")
    return [(t, p) for t, p in zip(ctx.sentences, ctx.parses) if p is not None]


def finite_verb(p: Parsed) -> Optional[int]:
    """The tense-bearing verb of the main clause: the first auxiliary or copula of the root, else the root."""
    root = p.root
    chain = [c for c in p.children(root) if c < root and p.dep[c].split(":")[0] in ("aux", "auxpass", "cop")] + [root]
    for i in chain:
        if p.pos[i] in VERBAL and p.feature(i, "VerbForm") in ("Fin", "") and p.feature(i, "Tense"):
            return i
    return None


class Tense(ProbingTask):
    """PAST/PRES of the main verb; a verb form (the root's word form) occurs in one split only."""

    name, needs_parser = "Tense", True
    approximation = ("UD Tense feature of the main clause's finite verb instead of PTB tags VBD vs VBP/VBZ; "
                     "no 100-5,000 frequency filter")

    def build(self, ctx: BuildContext) -> TaskData:
        by_label = defaultdict(list)
        for tokens, p in parses(ctx):
            verb = finite_verb(p)
            label = TENSES.get(p.feature(verb, "Tense")) if verb is not None else None
            if label and p.feature(verb, "Mood") in ("Ind", ""):
                by_label[label].append((p.tokens[p.root].lower(), " ".join(tokens)))
        return TaskData(self.name, grouped_split(by_label, ctx.size, ctx.fractions, self.rng(ctx.seed)))


class _Number(ProbingTask):
    """NN/NNS: grammatical number of a common noun attached to the root by one of `deps`."""

    needs_parser = True
    deps = frozenset()
    approximation = "UD Number feature of a common noun instead of PTB tags NN vs NNS; no 100-5,000 frequency filter"

    def build(self, ctx: BuildContext) -> TaskData:
        by_label = defaultdict(list)
        for tokens, p in parses(ctx):
            nouns = [c for c in p.children(p.root) if p.dep[c] in self.deps and p.pos[c] == "NOUN"]
            if len(nouns) == 1 and p.feature(nouns[0], "Number") in NUMBERS:
                label = NUMBERS[p.feature(nouns[0], "Number")]
                by_label[label].append((p.tokens[nouns[0]].lower(), " ".join(tokens)))
        return TaskData(self.name, grouped_split(by_label, ctx.size, ctx.fractions, self.rng(ctx.seed)))


class SubjNumber(_Number):
    name, deps = "SubjNumber", SUBJECT


class ObjNumber(_Number):
    name, deps = "ObjNumber", OBJECT


class Depth(ProbingTask):
    """Depth of the dependency tree; decorrelated from length by taking, within each Length bin,
    as many sentences of every depth class as the rarest one has there."""

    name, needs_parser = "Depth", True
    approximation = ("depth of the dependency tree (not of the constituency tree: values are smaller than "
                     "SentEval's 5-12)")

    def __init__(self, max_classes: int = 8, min_share: float = 0.05) -> None:
        self.max_classes, self.min_share = max_classes, min_share

    def build(self, ctx: BuildContext) -> TaskData:
        items = [(p.depth(), length_bin(len(t)), " ".join(t)) for t, p in parses(ctx)]
        items = [item for item in items if item[1] is not None]
        counts = Counter(depth for depth, _, _ in items)
        common = [d for d, n in counts.most_common(self.max_classes) if n >= self.min_share * len(items)]
        if len(common) < 2:
            raise TooSmall(f"depths found {dict(sorted(counts.items()))}: fewer than 2 reach "
                           f"{self.min_share:.0%} of the sentences")
        cells = defaultdict(list)  # (length bin, depth) -> sentences
        for depth, bin_, sentence in items:
            if depth in common:
                cells[bin_, depth].append(sentence)
        rng = self.rng(ctx.seed)
        by_label = defaultdict(list)
        for bin_ in sorted({b for b, _ in cells}):
            n = min(len(cells[bin_, d]) for d in common)
            for d in common:
                by_label[str(d)] += rng.sample(sorted(cells[bin_, d]), n)
        if not by_label:
            raise TooSmall(f"no length bin holds every depth class {sorted(common)} (depth counts: {dict(counts)})")
        examples = balanced_split(by_label, ctx.size, ctx.fractions, rng)
        return TaskData(self.name, examples, f"classes: dependency depths {sorted(common)}")


def constituent(p: Parsed, i: int) -> str:
    """A coarse phrase category for the subtree headed by token i (PTB-like names)."""
    pos, children = p.pos[i], p.children(i)
    if pos == "CCONJ":
        return "CC"
    if pos == "SCONJ":
        return "IN"
    if p.dep[i] in CLAUSAL or pos in VERBAL:
        return "SBAR" if any(p.dep[c] == "mark" for c in children) else "S"
    if pos in ("NOUN", "PROPN", "PRON", "NUM", "DET"):
        return "PP" if any(p.dep[c] == "case" for c in children) else "NP"
    return {"ADP": "PP", "ADV": "ADVP", "ADJ": "ADJP"}.get(pos, pos)


def in_verb_phrase(p: Parsed, i: int) -> bool:
    """Left dependents a constituency tree puts inside the VP: auxiliaries, copulas, negation, clitic objects."""
    base = p.dep[i].split(":")[0]
    return (base in VERB_GROUP or p.feature(i, "Polarity") == "Neg"
            or (p.pos[i] == "PRON" and base in ("obj", "iobj")))


def top_constituents(p: Parsed) -> Optional[str]:
    """`NP_VP_.`-style sequence under the root; None for internal punctuation or no final . ? !"""
    root, last = p.root, len(p.tokens) - 1
    if p.pos[last] != "PUNCT" or p.tokens[last] not in FINAL or p.head[last] != root:
        return None
    deps = p.children(root)
    if any(p.pos[c] == "PUNCT" for c in deps if c != last):
        return None
    conj = [c for c in deps if c > root and p.dep[c] in CONJUNCT and p.pos[c] in VERBAL
            and any(p.dep[s] in SUBJECT for s in p.children(c))]
    if conj and any(p.pos[c] == "CCONJ" for c in p.children(conj[0])):
        return "S_CC_S_."
    verbal = p.pos[root] in VERBAL or any(p.dep[c] == "cop" for c in deps)
    seq = [constituent(p, c) for c in deps if c < root and not (verbal and in_verb_phrase(p, c))]
    return "_".join(seq + ["VP" if verbal else constituent(p, root), "."])


class TopConstituents(ProbingTask):
    """Classes: the sequences that hold at least `min_share` of the usable sentences (at most 19), plus OTHER."""

    name, needs_parser = "TopConstituents", True
    approximation = ("the root's dependents mapped to coarse phrase labels (NP, PP, ADVP, S, SBAR, CC, IN, VP) "
                     "instead of the constituency tree's top constituents; no WHNP/SQ classes")

    def __init__(self, max_classes: int = 19, min_share: float = 0.02) -> None:
        self.max_classes, self.min_share = max_classes, min_share

    def build(self, ctx: BuildContext) -> TaskData:
        labelled = [(top_constituents(p), " ".join(t)) for t, p in parses(ctx)]
        labelled = [(seq, s) for seq, s in labelled if seq]
        counts = Counter(seq for seq, _ in labelled)
        keep = {seq for seq, n in counts.most_common(self.max_classes) if n >= self.min_share * len(labelled)}
        if not keep or len(keep) == len(counts):
            raise TooSmall(f"no sequence holds {self.min_share:.0%} of the {len(labelled)} usable sentences "
                           f"while leaving some for OTHER (most common: {dict(counts.most_common(5))})")
        by_label = defaultdict(list)
        for seq, sentence in labelled:
            by_label[seq if seq in keep else "OTHER"].append(sentence)
        examples = balanced_split(by_label, ctx.size, ctx.fractions, self.rng(ctx.seed))
        return TaskData(self.name, examples, f"{len(keep)} most common sequences plus OTHER (SentEval: 19 plus OTHER)")
