"""SentEval's file formats: encodings, headers, sorting, and errors that name file and line."""

import pytest

from bridgeembed.errors import DataError
from bridgeembed.senteval import readers
from bridgeembed.senteval.encoding import sentence
from tests.helpers.senteval_fixtures import write_tree


@pytest.fixture()
def tree(tmp_path):
    return write_tree(tmp_path)


def test_readers_follow_senteval(tree):
    d = tree / "downstream"
    mr = readers.binary(d / "MR" / "rt-polarity.pos", d / "MR" / "rt-polarity.neg")["all"]
    assert len(mr) == 80 and sorted(set(mr.y)) == [0, 1]
    assert [len(a) for a in mr.a] == sorted(len(a) for a in mr.a)  # SentEval's length order
    trec = readers.trec(d / "TREC")
    assert "caf\xe9" in {t for s in trec["train"].a for t in s}  # read as latin-1
    assert set(trec["train"].y) == {readers.TREC_CLASSES["NUM"], readers.TREC_CLASSES["HUM"]}
    mrpc = readers.mrpc(d / "MRPC")
    assert len(mrpc["train"]) == 40 and mrpc["train"].b is not None  # header (with BOM) skipped
    sick = readers.sick(d / "SICK", entailment=False)
    assert len(sick["test"]) == 12 and all(1 <= y <= 5 for y in sick["test"].y)  # CRLF read like LF
    assert all("\r" not in t for s in sick["test"].b for t in s)
    sts = readers.sts(d / "STS" / "STS12-en-test", ["MSRpar"])
    assert len(sts["MSRpar"]) == 7  # the unscored pair is dropped
    splits, classes = readers.probing(tree / "probing" / "sentence_length.txt")
    assert classes == ["long", "short"] and len(splits["train"]) == 40


def test_malformed_line_names_file_and_line(tree):
    path = tree / "downstream" / "TREC" / "train_5500.label"
    lines = path.read_bytes().decode("latin-1").splitlines()
    lines[4] = "this line has no class"
    path.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    with pytest.raises(DataError, match=r"train_5500\.label:5:"):
        readers.trec(tree / "downstream" / "TREC")
    gs = tree / "downstream" / "STS" / "STS12-en-test" / "STS.gs.MSRvid.txt"
    gs.write_text("5.0\nfive\n" + "1\n" * 6)
    with pytest.raises(DataError, match=r"STS\.gs\.MSRvid\.txt:2: expected a number"):
        readers.sts(gs.parent, ["MSRvid"])
    probe = tree / "probing" / "sentence_length.txt"
    probe.write_text("tr\tlong\tsome words\nxx\tshort\tother words\n")
    with pytest.raises(DataError, match=r"sentence_length\.txt:2: split must be"):
        readers.probing(probe)


def test_missing_file_names_path_and_download(tmp_path):
    with pytest.raises(readers.MissingData) as err:
        readers.sst(tmp_path / "SST" / "binary", 2)
    assert "sentiment-train" in str(err.value) and "bridgeembed-data senteval --data DIR" in str(err.value)


def test_snli_without_train_is_skipped(tmp_path):
    for split in ("dev", "test"):
        for f, text in [("s1", "a man .\n"), ("s2", "a person .\n"), ("labels", "entailment\n")]:
            (tmp_path / f"{f}.{split}").write_text(text)
    with pytest.raises(readers.TaskSkipped, match="train"):
        readers.snli(tmp_path)


def test_batcher_joins_tokens_like_senteval():
    assert sentence(["a", "b", "."]) == "a b ."
    assert sentence([]) == "."
    assert sentence([b"caf\xc3\xa9"]) == "caf\xe9"


@pytest.mark.released_counts
def test_a_cut_senteval_file_is_never_scored(tmp_path, real_data):
    """Issue 19: MR cut to 30 KB was scored (95.4) without a word; the released line counts are checked."""
    from bridgeembed.senteval import readers
    from bridgeembed.senteval.counts import EXPECTED_LINES

    source = real_data("senteval/downstream/MR") / "senteval/downstream/MR"
    assert len(readers.read_lines(source / "rt-polarity.pos", "latin-1")) == EXPECTED_LINES["MR/rt-polarity.pos"]
    cut = tmp_path / "downstream" / "MR"
    cut.mkdir(parents=True)
    (cut / "rt-polarity.pos").write_bytes((source / "rt-polarity.pos").read_bytes()[:30_000])
    (cut / "rt-polarity.neg").write_bytes((source / "rt-polarity.neg").read_bytes())
    with pytest.raises(DataError, match=r"rt-polarity.pos: expected 5331 lines \(SentEval's release\), found \d+: "
                                        r"the file is truncated"):
        readers.binary(cut / "rt-polarity.pos", cut / "rt-polarity.neg")


def test_an_empty_file_is_refused_even_when_any_size_is_accepted(tmp_path, monkeypatch):
    """Issue 31: with BRIDGEEMBED_SENTEVAL_ANY_SIZE=1 an empty MR scored 100%."""
    monkeypatch.setenv(readers.ANY_SIZE, "1")
    mr = tmp_path / "senteval" / "downstream" / "MR"
    mr.mkdir(parents=True)
    (mr / "rt-polarity.pos").write_text("a fine film .\n", encoding="latin-1")
    (mr / "rt-polarity.neg").write_text("", encoding="latin-1")
    with pytest.raises(DataError, match=r"rt-polarity.neg is empty: no task is scored from an empty file"):
        readers.binary(mr / "rt-polarity.pos", mr / "rt-polarity.neg")
    (mr / "rt-polarity.neg").write_text("boring .\n", encoding="latin-1")
    assert len(readers.binary(mr / "rt-polarity.pos", mr / "rt-polarity.neg")["all"].y) == 2


def test_the_sts_subsets_have_one_home():
    """Issue 48: STS12-16's subsets were written three times (the tasks, the data command, a study). The tasks read
    readers.STS_SUBSETS; the data command's download table must name the same subsets until it reads them too."""
    from bridgeembed.datasets.senteval import STS_YEARS
    from bridgeembed.senteval.readers import STS_SUBSETS
    from bridgeembed.senteval.tasks import TASKS

    assert {task: sorted(subsets.split()) for task, (_, _, subsets) in STS_YEARS.items()} == {
        task: sorted(subsets) for task, subsets in STS_SUBSETS.items()}  # the download's order is its own
    assert [name for name in TASKS if name.startswith("STS1")] == list(STS_SUBSETS)
