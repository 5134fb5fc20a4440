"""`bridgeembed-bench attention` and its statistics (evaluation/attention.py): entropy, coverage and position
per head, split at the sentence length as in Vázquez et al. (2020), Table 13."""

import json
import math

import numpy as np
import pytest
import torch

from bridgeembed.cli import bench
from bridgeembed.evaluation.attention import collect, head_coverage, head_entropy, head_position
from tests.helpers import one_line_error


@pytest.mark.parametrize("n", [1, 2, 7, 30])
def test_entropy_of_a_uniform_head_is_log_n_and_of_a_one_hot_head_zero(n):
    uniform = np.full((1, n), 1.0 / n)
    one_hot = np.eye(1, n, k=n - 1)
    assert head_entropy(uniform)[0] == pytest.approx(math.log(n))
    assert head_entropy(one_hot)[0] == 0.0
    assert head_coverage(one_hot)[0] == pytest.approx(1 / n)
    assert head_coverage(uniform)[0] == pytest.approx(math.ceil(0.9 * n - 1e-9) / n)
    assert head_position(one_hot)[0] == (1.0 if n > 1 else 0.0)  # all the mass on the last token
    assert head_position(uniform)[0] == pytest.approx(0.5 if n > 1 else 0.0)


def test_heads_are_split_at_the_sentence_length():
    # k = 4 heads; a 2-token sentence: heads 0, 1 are within its length, 2, 3 beyond; a 5-token one: all within
    short = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [0.5, 0.5]])
    long = np.full((4, 5), 0.2)
    stats = collect([short, long])
    assert stats.sentences == 2 and stats.tokens == 7
    assert [int(c) for c in stats.counts["within"]] == [2, 2, 1, 1]
    assert [int(c) for c in stats.counts["beyond"]] == [0, 0, 1, 1]
    assert stats.per_head("entropy", "beyond") == [None, None, pytest.approx(math.log(2)), pytest.approx(math.log(2))]
    assert stats.per_head("entropy", "within")[2] == pytest.approx(math.log(5))
    assert stats.per_head("entropy", "within")[0] == pytest.approx(math.log(5) / 2)  # one-hot and uniform
    summary = stats.summary()
    assert summary["entropy_beyond"] == pytest.approx(math.log(2))
    assert summary["entropy_within"] == pytest.approx((0 + 0 + 4 * math.log(5)) / 6)
    assert summary["pairs_within"] == 6 and summary["pairs_beyond"] == 2
    with pytest.raises(ValueError, match="3 heads, expected 4"):
        stats.add(np.full((3, 2), 0.5))


def test_bench_attention_writes_json_csv_markdown_and_a_plot(toy_run, toy_corpus, tmp_path, capsys):
    out = tmp_path / "attention"
    assert bench.main(["attention", "--model", str(toy_run[0] / "best.pt"), "--in", str(toy_corpus / "test.x"),
                       "--lang", "x", "--limit", "40", "--out", str(out)]) == 0
    result = json.loads((out / "attention.json").read_text())
    summary = result["summary"]
    assert summary["sentences"] == 40 and summary["heads"] == 8
    assert summary["pairs_within"] + summary["pairs_beyond"] == 40 * 8
    assert len(result["per_head"]["entropy_all"]) == 8
    assert all(0 <= c <= 1 for c in result["per_head"]["coverage_all"])
    rows = (out / "attention.csv").read_text().splitlines()
    assert rows[0].startswith("head,entropy_all,entropy_within,entropy_beyond") and len(rows) == 9
    assert "Table 13" in (out / "attention.md").read_text()
    assert (out / "attention.png").stat().st_size > 0
    assert "entropy h < n_i" in capsys.readouterr().out


@pytest.fixture
def broken(toy_run, tmp_path):
    """Checkpoints without the bridge: one whose weights lack it, one whose config does."""
    from bridgeembed.checkpoint import load_checkpoint

    payload = load_checkpoint(toy_run[0] / "best.pt")
    no_weights = {**payload, "model": {k: v for k, v in payload["model"].items() if not k.startswith("bridge.")}}
    torch.save(no_weights, tmp_path / "no-weights.pt")
    config = {**payload["config"], "model": {k: v for k, v in payload["config"]["model"].items() if k != "heads"}}
    torch.save({**payload, "config": config}, tmp_path / "no-heads.pt")
    return tmp_path


@pytest.mark.parametrize("model, lines, lang, expected", [
    ("no-weights.pt", "a b c\n", "x", "has no attention bridge: it lacks the bridge weights (bridge.w1/w2)"),
    ("no-heads.pt", "a b c\n", "x", "has no attention bridge: it lacks model.heads in its config"),
    ("bow", "a b c\n", "x", "--model bow is a baseline without an attention bridge"),
    ("best.pt", "a b c\n", "fr", "unknown language 'fr': the encoder knows x, y"),
    ("best.pt", "\n  \n", "x", "has no sentences: expected one sentence per line"),
])
def test_bad_input_is_one_line_and_exit_status_2(model, lines, lang, expected, toy_run, broken, capsys):
    (broken / "in.txt").write_text(lines, encoding="utf-8")
    spec = model if model == "bow" else str(toy_run[0] / model if model == "best.pt" else broken / model)
    assert bench.main(["attention", "--model", spec, "--in", str(broken / "in.txt"), "--lang", lang,
                       "--out", str(broken / "out")]) == 2
    assert expected in one_line_error(capsys)
    assert not (broken / "out").exists()


def test_heads_are_also_split_by_rank_whatever_their_index():
    # a 2-token sentence, k = 3: the one-hot heads sit at indices 1 and 2, the uniform one at 0
    stats = collect([np.array([[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]])])
    summary = stats.summary()
    assert summary["entropy_focused"] == 0.0  # the 2 lowest-entropy heads, wherever they are
    assert summary["entropy_rest"] == pytest.approx(math.log(2))
    assert summary["entropy_within"] == pytest.approx(math.log(2) / 2)  # by index: heads 0 and 1


def test_without_in_it_reads_multi30k_test_under_the_data_root(toy_run, tmp_path, capsys):
    folder = tmp_path / "data" / "multi30k"
    folder.mkdir(parents=True)
    (folder / "test_2016_flickr.x").write_text("apple banana\ncherry dog eagle\n", encoding="utf-8")
    out = tmp_path / "out"
    assert bench.main(["attention", "--model", str(toy_run[0] / "best.pt"), "--lang", "x",
                       "--data", str(tmp_path / "data"), "--out", str(out), "--no-plots"]) == 0
    assert json.loads((out / "attention.json").read_text())["summary"]["sentences"] == 2
    assert bench.main(["attention", "--model", str(toy_run[0] / "best.pt"), "--lang", "y",
                       "--data", str(tmp_path / "data"), "--out", str(out)]) == 2
    assert "missing corpus file" in one_line_error(capsys)
