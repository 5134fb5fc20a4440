"""Crosslingual readers: bad input is an error naming file and line (or files and counts)."""

import gzip

import numpy as np
import pytest

from bridgeembed.crosslingual.readers import (
    MissingFile,
    read_bitext,
    read_lines,
    read_nli_tsv,
    read_tsv_labelled,
    read_xlmt,
)
from bridgeembed.crosslingual.sources import TsvTemplates, XnliXtreme
from bridgeembed.errors import DataError


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_lines_split_on_newline_only_with_optional_final_newline(tmp_path):
    assert read_lines(write(tmp_path / "a.txt", "x\u2028y\r\nz")) == ["x\u2028y", "z"]
    assert read_lines(write(tmp_path / "b.txt", "x\nz\n")) == ["x", "z"]
    with gzip.open(tmp_path / "c.gz", "wt", encoding="utf-8") as handle:
        handle.write("eins\nzwei\n")
    assert read_lines(tmp_path / "c.gz") == ["eins", "zwei"]
    with pytest.raises(MissingFile, match="nope.txt"):
        read_lines(tmp_path / "nope.txt")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(DataError, match="latin1.txt.*UTF-8"):
        read_lines(tmp_path / "latin1.txt")


def test_xnli_dev_and_test_with_shared_labels(tmp_path):
    write(tmp_path / "dev-de.tsv", "P1\tH1\tentailment\nP1\tH2\tcontradictory\nP2\tH3\tneutral\n")
    write(tmp_path / "test-de.tsv", "P1\tH1\nP2\tH2\n")
    write(tmp_path / "test.labels", "neutral\ncontradiction\n")
    source = XnliXtreme(tmp_path)
    dev = source.load("train", "de")
    assert dev.texts == ["P1", "P1", "P2"] and dev.texts2 == ["H1", "H2", "H3"]
    np.testing.assert_array_equal(dev.labels, [0, 2, 1])  # "contradictory" is XNLI 1.0's spelling
    np.testing.assert_array_equal(source.load("test", "de").labels, [1, 2])
    with pytest.raises(MissingFile, match="test-fr.tsv"):
        source.load("test", "fr")


@pytest.mark.parametrize("content, message", [
    ("P\tH\tentailment\nP\tH\tmaybe\n", r"dev-en.tsv:2: label 'maybe' is not one of entailment, neutral, contradiction"),
    ("P\tH\tentailment\nP\tH\n", r"dev-en.tsv:2: expected 3 tab-separated fields"),
    ("P\tH\tneutral\n\tH\tneutral\n", r"dev-en.tsv:2: empty premise or hypothesis"),
])
def test_xnli_bad_rows_name_file_and_line(tmp_path, content, message):
    with pytest.raises(DataError, match=message):
        read_nli_tsv(write(tmp_path / "dev-en.tsv", content))


def test_xnli_test_labels_must_match_rows(tmp_path):
    pairs = write(tmp_path / "test-en.tsv", "P\tH\nP\tH2\nQ\tH3\n")
    with pytest.raises(DataError, match=r"test-en.tsv has 3 pairs but .*test.labels has 2 labels"):
        read_nli_tsv(pairs, write(tmp_path / "test.labels", "neutral\nentailment\n"))
    with pytest.raises(DataError, match=r"test.labels:3: label 'yes'"):
        read_nli_tsv(pairs, write(tmp_path / "test.labels", "neutral\nentailment\nyes"))


def test_xlmt_layout_and_its_errors(tmp_path):
    write(tmp_path / "german" / "train_text.txt", "gut\nschlecht\nnaja")
    write(tmp_path / "german" / "train_labels.txt", "2\n0\n1")  # no final newline, as shipped
    data = read_xlmt(tmp_path, "de", "train")
    assert data.texts == ["gut", "schlecht", "naja"]
    np.testing.assert_array_equal(data.labels, [2, 0, 1])
    write(tmp_path / "german" / "test_text.txt", "gut\nschlecht")
    write(tmp_path / "german" / "test_labels.txt", "2\n0\n1")
    with pytest.raises(DataError, match=r"test_text.txt has 2 lines but .*test_labels.txt has 3"):
        read_xlmt(tmp_path, "de", "test")
    write(tmp_path / "german" / "test_labels.txt", "2\n4")
    with pytest.raises(DataError, match=r"test_labels.txt:2: label '4' is not one of 0, 1, 2"):
        read_xlmt(tmp_path, "de", "test")
    with pytest.raises(MissingFile, match="xlm-t folder"):
        read_xlmt(tmp_path, "xx", "test")


def test_text_tab_label_files(tmp_path):
    data = read_tsv_labelled(write(tmp_path / "en.tsv", "good food\tpos\nmeh\tneg\tpos\nbad\tneg\n"))
    assert data.label_names == ("neg", "pos") and data.texts[1] == "meh\tneg"  # the label is the last field
    with pytest.raises(DataError, match=r"fr.tsv:2: expected 'text<TAB>label'"):
        read_tsv_labelled(write(tmp_path / "fr.tsv", "bon\tpos\nsans label\n"))
    source = TsvTemplates(str(tmp_path / "{lang}.tsv"), str(tmp_path / "{lang}.test.tsv"))
    source.load("train", "en")
    write(tmp_path / "de.test.tsv", "gut\tpos\nso lala\tneutral\n")
    with pytest.raises(DataError, match=r"de.test.tsv:2: label 'neutral' is not one of neg, pos"):
        source.load("test", "de")
    with pytest.raises(DataError, match="must contain"):
        TsvTemplates("no-placeholder.tsv", "x").load("train", "en")


def test_bitext_lengths_and_empty_lines(tmp_path):
    a, b = write(tmp_path / "t.en", "a\nb\nc\n"), write(tmp_path / "t.de", "A\nB\n")
    with pytest.raises(DataError, match=r"t.en has 3, .*t.de has 2"):
        read_bitext({"en": a, "de": b})
    write(tmp_path / "t.de", "A\n \nC\n")
    with pytest.raises(DataError, match=r"t.de:2: empty line"):
        read_bitext({"en": a, "de": b})


def test_a_utf8_bom_is_not_part_of_the_first_sentence(tmp_path):
    """Issue 31: a BOM at the start of an XNLI file was kept in the first premise."""
    from bridgeembed.crosslingual.readers import read_lines, read_nli_tsv

    (tmp_path / "dev-en.tsv").write_bytes("\ufeffA man sleeps.\tSomeone rests.\tentailment\n".encode("utf-8"))
    assert read_nli_tsv(tmp_path / "dev-en.tsv").texts[0] == "A man sleeps."
    (tmp_path / "x.gz").write_bytes(gzip.compress("\ufeffone\ntwo\n".encode("utf-8")))
    assert read_lines(tmp_path / "x.gz") == ["one", "two"]
