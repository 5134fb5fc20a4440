"""Every `bridgeembed-bench` command takes the same `--heads` forms (and refuses the same bad ones)."""

import json

import pytest

from bridgeembed.cli import bench
from bridgeembed.evaluation import models
from tests.helpers.crosslingual_toy import write_bitext, write_tweets, write_xnli
from tests.helpers.senteval_fixtures import HeadsEncoder, write_tree

FORMS = {"mean": ["mean"], "each": ["head 0", "head 1", "head 2"], "1": ["head 1"], "0,2": ["head 0", "head 2"]}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    write_tree(root / "senteval")
    write_xnli(root / "xnli" / "xtreme", langs=("en", "de"), n_dev=60, n_test=30)
    write_tweets(root / "reviews" / "xlm-t-umsab-tweets", langs=("en", "de"), n_train=60, n_test=30)
    return root


@pytest.fixture(autouse=True)
def three_heads(monkeypatch):
    monkeypatch.setitem(models.BASELINES, "heads3", lambda device=None: HeadsEncoder())


def command(name, data, out, heads):
    common = ["--model", "heads3", "--heads", heads, "--out", str(out)]
    if name == "senteval":
        return ["senteval", *common, "--data", str(data), "--tasks", "STS12", "--quiet", "--no-plots"]
    if name == "retrieval":
        return ["retrieval", *common, "--template", write_bitext(data / "bitext", langs=("en", "de"), n=20),
                "--langs", "en,de"]
    return [name, *common, "--data", str(data), "--test-langs", "en,de"]


def views_written(name, out):
    if name == "senteval":
        return list(json.loads((out / "results.json").read_text())["tasks"]["STS12"]["views"])
    return [json.loads(p.read_text())["view"] for p in sorted(out.glob(f"{name}*.json"))
            if not p.name.endswith("_views.json")]  # the combined table of several views


@pytest.mark.parametrize("name", ["senteval", "xnli", "sentiment", "retrieval"])
def test_same_heads_forms_everywhere(name, data, tmp_path, capsys):
    for heads, views in FORMS.items():
        out = tmp_path / heads
        assert bench.main(command(name, data, out, heads)) == 0, capsys.readouterr().err
        if name == "senteval" and views != ["mean"]:  # SentEval scores the mean row first, the heads' reference
            views = sorted(["mean", *views])
        assert sorted(views_written(name, out)) == views
    for bad, message in (("first", "--heads 'first': expected mean, each"), ("0,3", "out of range")):
        assert bench.main(command(name, data, tmp_path / "bad", bad)) == 2
        assert message in capsys.readouterr().err


@pytest.mark.parametrize("name", ["xnli", "sentiment"])
def test_transfer_per_head_writes_one_combined_table(name, data, tmp_path, capsys):
    """Issue 32: `bench xnli --heads each` wrote a set of files per head and no table of them all."""
    out = tmp_path / "each"
    assert bench.main(command(name, data, out, "each")) == 0, capsys.readouterr().err
    combined = json.loads((out / f"{name}_views.json").read_text())
    per_view = {json.loads(p.read_text())["view"]: json.loads(p.read_text()) for p in out.glob(f"{name}*.json")
                if not p.name.endswith("_views.json")}
    assert set(combined["views"]) == set(per_view) and len(per_view) > 1
    for view, result in per_view.items():
        assert combined["views"][view]["accuracy"] == result["accuracy"]
    table = (out / f"{name}_views.md").read_text()
    assert table.count("\n| ") == len(per_view) + 1  # the header and a row per view
    assert (out / f"{name}_views.csv").is_file()
