"""Probing-task builder: parser-free tasks on a corpus the tests write (balance, disjoint splits,
labels correct by construction, reproducibility) and the command line."""

import gzip
import itertools
import random
from collections import Counter

import pytest

from bridgeembed.cli.data import main as data_main
from bridgeembed.errors import UnknownLanguageError
from bridgeembed.probing.base import BuildContext
from bridgeembed.probing.builder import build_tasks
from bridgeembed.probing.corpus import read_corpus
from bridgeembed.probing.sampling import SPLITS
from bridgeembed.probing.surface import LENGTH_BINS, BigramShift, Length, WordContent, length_bin

VOCAB = ["".join(w) for w in itertools.product("bdgklp", "aeiou", "mnrst", "ao")]  # 300 words


def zipf_corpus(n=3000, seed=1):
    """Sentences of 3-30 tokens from a Zipfian vocabulary, ending with a full stop."""
    rng = random.Random(seed)
    weights = [1 / (r + 1) for r in range(len(VOCAB))]
    return [" ".join(rng.choices(VOCAB, weights, k=rng.randint(2, 29))) + " ." for _ in range(n)]


def context(sentences, size=100000, seed=0):
    return BuildContext("en", [tuple(s.split()) for s in sentences], size, (0.8, 0.1, 0.1), seed)


def assert_balanced_disjoint(examples):
    per_split = {s: Counter(e.label for e in examples if e.split == s) for s in SPLITS}
    for split, counts in per_split.items():
        assert counts, f"split {split} is empty"
        assert len(set(counts.values())) == 1, f"unbalanced {split}: {counts}"
        assert set(counts) == set(per_split["tr"])
    seen = {s: {e.sentence for e in examples if e.split == s} for s in SPLITS}
    assert not seen["tr"] & seen["va"] and not seen["tr"] & seen["te"] and not seen["va"] & seen["te"]
    assert len({e.sentence for e in examples}) == len(examples)
    order = [SPLITS.index(e.split) for e in examples]
    assert order == sorted(order), "examples must be ordered tr, va, te"


def test_sentlen_labels_match_token_counts_and_bins_are_senteval():
    assert LENGTH_BINS == ((5, 8), (9, 12), (13, 16), (17, 20), (21, 25), (26, 28))
    assert [length_bin(n) for n in (4, 5, 8, 9, 25, 26, 28, 29)] == [None, 0, 0, 1, 4, 5, 5, None]
    data = Length().build(context(zipf_corpus()))
    assert_balanced_disjoint(data.examples)
    assert {e.label for e in data.examples} == {str(i) for i in range(6)}
    for e in data.examples:
        low, high = LENGTH_BINS[int(e.label)]
        assert low <= len(e.sentence.split()) <= high


def test_word_content_each_sentence_holds_exactly_one_target_once():
    task = WordContent(skip=20, min_per_word=10)
    ctx = context(zipf_corpus())
    targets, _ = task.targets(ctx.sentences)
    data = task.build(ctx)
    assert_balanced_disjoint(data.examples)
    assert {e.label for e in data.examples} <= targets and len({e.label for e in data.examples}) >= 2
    for e in data.examples:
        words = [w.lower() for w in e.sentence.split()]
        assert words.count(e.label) == 1
        assert [w for w in words if w in targets] == [e.label]


def _one_adjacent_swap(a, b):
    if len(a) != len(b):
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]


def test_bigram_shift_positives_are_one_adjacent_swap_of_an_unused_source():
    corpus = zipf_corpus(800)
    data = BigramShift().build(context(corpus))
    assert_balanced_disjoint(data.examples)
    originals = set(corpus)
    by_shape = {}
    for s in corpus:
        by_shape.setdefault((len(s.split()), s.split()[0], s.split()[-1]), []).append(s.split())
    used_sources = set()
    for e in data.examples:
        tokens = e.sentence.split()
        if e.label == "O":
            assert e.sentence in originals
            continue
        assert e.label == "I" and e.sentence not in originals
        sources = [s for s in by_shape[len(tokens), tokens[0], tokens[-1]] if _one_adjacent_swap(s, tokens)]
        assert sources, e.sentence
        used_sources.update(" ".join(s) for s in sources)
        assert tokens[0] == sources[0][0], "the first token is never moved"
    assert not used_sources & {e.sentence for e in data.examples if e.label == "O"}


def test_same_seed_same_data_other_seed_other_data():
    corpus = zipf_corpus(1500)
    build = lambda seed: build_tasks(context(corpus, seed=seed), ["Length", "BigramShift"]).built  # noqa: E731
    first, again, other = build(3), build(3), build(4)
    assert all(first[t].examples == again[t].examples for t in first)
    assert any(first[t].examples != other[t].examples for t in first)


def test_size_caps_examples_and_small_corpus_is_skipped_with_counts():
    capped = Length().build(context(zipf_corpus(), size=120))
    assert len(capped.examples) == 120
    report = build_tasks(context(zipf_corpus(40)), ["Length", "WordContent", "Tense"])
    assert "needs at least 10 per class" in report.skipped["Length"]
    assert "counts per class" in report.skipped["Length"]
    assert "spacy" in report.skipped["Tense"]


def test_corpus_skips_non_utf8_lines_and_duplicates(tmp_path):
    path = tmp_path / "c.txt.gz"
    with gzip.open(path, "wb") as handle:
        handle.write("Hello , world .\n\xff broken\n".replace("\xff", "").encode() + b"\xff\xfe bad line\n"
                     + "Hello,   world.\n\n Caf\u00e9\tau lait .\n".encode())
    corpus = read_corpus([path], "en")
    assert corpus.stats.non_utf8 == 1 and corpus.stats.duplicates == 1 and corpus.stats.empty == 1
    assert corpus.sentences[0] == ("Hello", ",", "world", ".")
    assert ("Café", "au", "lait", ".") in corpus.sentences
    with pytest.raises(UnknownLanguageError, match="xx"):
        read_corpus([path], "xx")
    assert read_corpus([path], "xx", tokenizer="whitespace").stats.kept == 4


def test_command_writes_senteval_files_readme_and_marker(tmp_path, caplog):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes("\n".join(zipf_corpus(1500)).encode() + b"\n\xc3\x28 not utf-8\n")
    out = tmp_path / "probing"
    (out).mkdir()
    (out / "past_present.txt").write_text("stale\n")
    status = data_main(["probing", "--lang", "en", "--corpus", str(corpus), "--out", str(out), "--seed", "1",
                        "--wc-skip", "20", "--tasks", "SentLen,WC,BShift,Tense"])
    assert status == 0
    for name in ("sentence_length.txt", "word_content.txt", "bigram_shift.txt"):
        lines = (out / name).read_text(encoding="utf-8").splitlines()
        assert lines and all(len(line.split("\t")) == 3 and line.split("\t")[0] in SPLITS for line in lines)
    assert not (out / "past_present.txt").exists(), "a skipped task's old file must not survive"
    assert (out / "REBUILT").exists()
    readme = (out / "README.md").read_text()
    assert "`en`" in readme and "not UTF-8: 1" in readme and "| Length | `sentence_length.txt` |" in readme
    assert "Tense" in readme.split("## Skipped")[1]


def test_command_reports_bad_options(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b c\n")
    assert data_main(["probing", "--lang", "en", "--corpus", str(corpus), "--out", str(tmp_path / "o"),
                      "--tasks", "SentLen,Nope"]) == 2
    assert "Nope" in capsys.readouterr().err
    assert data_main(["probing", "--lang", "en", "--corpus", str(tmp_path / "missing.txt"), "--out", str(tmp_path)]) == 2
    assert "missing.txt" in capsys.readouterr().err


def test_one_name_per_task_everywhere():
    from bridgeembed.probing import names
    from bridgeembed.probing.builder import TASKS as BUILT
    from bridgeembed.probing.sampling import task_rng
    from bridgeembed.senteval.tasks import GROUPS

    assert list(BUILT) == list(names.TASKS) == GROUPS["probing"]  # builder, harness: the same names, same order
    assert all(BUILT[n]().filename == names.FILES[n] for n in BUILT)
    assert names.canonical("somo") == "OddManOut" and names.canonical("WordContent") == "WordContent"
    assert names.canonical("Nope") is None
    # the generators keep the seed key of the first release (the paper's name): a seed keeps its data
    assert Length().rng(3).random() == task_rng(3, "SentLen").random()
