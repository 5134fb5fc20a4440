"""Typed results and the one writer: JSON without NaN, long-format CSV, Markdown tables."""

import csv
import json
import math

from bridgeembed.evaluation import writer
from bridgeembed.evaluation.results import ResultTable, TaskResult, ViewScores, mean_cell


def table():
    runs = [{"seed": 1111, "acc": 70.0, "devacc": 71.0}, {"seed": 1112, "acc": 72.0, "devacc": 73.0}]
    ok = TaskResult("TREC", "classification", "acc", "senteval", views={"mean": ViewScores.from_runs(runs)})
    sts = TaskResult("STS12", "similarity", "pearson", views={"mean": ViewScores.from_runs(
        [{"seed": 1111, "pearson": math.nan, "spearman": 0.5}])})
    skipped = TaskResult("SNLI", "nli", "acc", status="skipped", reason="train split missing")
    return ResultTable({"model": "toy"}, {"TREC": ok, "STS12": sts, "SNLI": skipped})


def test_view_scores_are_mean_and_population_std_over_seeds():
    scores = table().tasks["TREC"].views["mean"]
    assert scores.metrics == {"acc": 71.0, "devacc": 72.0} and scores.std == {"acc": 1.0, "devacc": 1.0}
    assert [r["seed"] for r in scores.per_seed] == [1111, 1112]


def test_primary_score_views_and_rows():
    t = table()
    assert t.tasks["TREC"].score("mean") == 71.0 and t.tasks["TREC"].score("head 0") is None
    assert t.tasks["SNLI"].score() is None and [r.task for r in t.scored()] == ["TREC", "STS12"]
    assert t.views() == ["mean"]
    rows = t.csv_rows()
    assert rows[0] == ["task", "group", "view", "metric", "value", "std", "n_seeds", "status", "source"]
    assert ["TREC", "classification", "mean", "acc", 71.0, 1.0, 2, "ok", "senteval"] in rows
    assert rows[-1][:2] == ["SNLI", "nli"] and rows[-1][7] == "skipped"


def test_writer_writes_three_files_and_json_has_no_nan(tmp_path):
    t = table()
    paths = writer.write(tmp_path / "out", "results", t.to_dict(), t.csv_rows(), "# title\n")
    payload = json.loads(paths["json"].read_text())  # strict JSON: no NaN token
    assert payload["tasks"]["STS12"]["views"]["mean"]["metrics"]["pearson"] is None
    assert payload["tasks"]["SNLI"] == {"group": "nli", "source": "", "primary": "acc", "status": "skipped",
                                        "seconds": 0.0, "reason": "train split missing"}
    with open(paths["csv"], newline="") as handle:
        assert len(list(csv.reader(handle))) == len(t.csv_rows())
    assert paths["md"].read_text() == "# title\n"


def test_markdown_table_view_stem_and_mean_cell():
    assert writer.markdown_table(["a", "b"], [[1, "x"]]) == ["| a | b |", "|---|---|", "| 1 | x |"]
    assert writer.view_stem("xnli", "head 3", 2) == "xnli-head3" and writer.view_stem("xnli", "mean", 1) == "xnli"
    assert mean_cell({"en": {"en": None, "de": 0.5}, "de": {"en": 0.7, "de": None}}) == 0.6
    assert mean_cell({"en": {"en": None}}) is None
