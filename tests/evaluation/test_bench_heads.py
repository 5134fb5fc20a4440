"""Every `bridgeembed-bench` command takes the same `--heads` forms (and refuses the same bad ones), parsed
in one place (`cli.options.bench_heads`): any choice but `mean` is scored after the mean over heads."""

import json

import pytest

from bridgeembed.cli import bench
from bridgeembed.evaluation import models
from tests.helpers.crosslingual_toy import write_bitext, write_tweets, write_xnli
from tests.helpers.senteval_fixtures import HeadsEncoder, write_tree

FORMS = {"mean": ["mean"], "each": ["mean", "head 0", "head 1", "head 2"], "mean,each": ["mean", "head 0", "head 1",
         "head 2"], "1": ["mean", "head 1"], "mean,0,2": ["mean", "head 0", "head 2"]}


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
    """The views a run scored, in their order."""
    if name == "senteval":
        return list(json.loads((out / "results.json").read_text())["tasks"]["STS12"]["views"])
    if (out / f"{name}_views.json").is_file():  # xnli, sentiment: one table of several views
        return list(json.loads((out / f"{name}_views.json").read_text())["views"])
    found = {json.loads(p.read_text())["view"] for p in out.glob(f"{name}*.json")}
    return sorted(found, key=lambda view: -1 if view == "mean" else int(view.split()[1]))


@pytest.mark.parametrize("name", ["senteval", "xnli", "sentiment", "retrieval"])
def test_same_heads_forms_everywhere(name, data, tmp_path, capsys):
    for heads, views in FORMS.items():
        out = tmp_path / heads
        assert bench.main(command(name, data, out, heads)) == 0, capsys.readouterr().err
        assert views_written(name, out) == views, heads  # the mean first: the heads' reference
    for bad, message in (("first", "--heads 'first': expected mean, each"), ("0,3", "out of range"),
                         ("mean,x", "--heads 'mean,x': expected mean, each")):
        assert bench.main(command(name, data, tmp_path / "bad", bad)) == 2
        assert message in capsys.readouterr().err


def test_one_parse_of_heads_for_every_bench():
    from bridgeembed.cli.options import bench_heads

    assert [(str(h), m) for h, m in map(bench_heads, ["mean", "mean,each", "each", "0,2", "mean,1", "mean,mean"])] \
        == [("mean", False), ("each", True), ("each", True), ("0,2", True), ("1", True), ("mean", False)]


@pytest.mark.parametrize("name", ["xnli", "sentiment"])
def test_transfer_per_head_writes_one_combined_table(name, data, tmp_path, capsys):
    """Issue 32: `bench xnli --heads each` wrote a set of files per head and no table of them all. Issue 41:
    it still wrote 43 files, titled the table "(head 0)", had no mean row though its footer promised one, and
    printed a table per head. Now: one table, the mean row first, printed once; the mean's own files beside it."""
    out = tmp_path / "each"
    assert bench.main(command(name, data, out, "each")) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"{name}_views.json", f"{name}_views.csv", f"{name}_views.md", f"{name}.json", f"{name}.csv", f"{name}.md",
         f"{name}.png"])
    combined = json.loads((out / f"{name}_views.json").read_text())
    assert list(combined["views"]) == ["mean", "head 0", "head 1", "head 2"]
    mean = json.loads((out / f"{name}.json").read_text())
    assert mean["view"] == "mean" and combined["views"]["mean"]["accuracy"] == mean["accuracy"]
    assert mean["protocol"]["heads"] == "mean,each"
    table = (out / f"{name}_views.md").read_text()
    assert table.startswith(f"### {name}: accuracy (%) of heads3 per view\n") and "(head" not in table
    rows = [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ")][1:]
    assert rows == ["mean", "head 0", "head 1", "head 2"]
    assert "rows: the mean over heads" in table
    assert printed.count("### ") == 1 and table.strip() in printed  # one table, printed once
    csv_rows = (out / f"{name}_views.csv").read_text().splitlines()
    assert [row.split(",")[0] for row in csv_rows] == ["view", "mean", "head 0", "head 1", "head 2"]
