"""`bridgeembed-bench senteval-controls` (`senteval.controls`): a model against the mean and spread of its untrained
controls, on the tests' SentEval stand-ins. The controls here are bags of random word vectors of their own salt,
named `untrained:bow@SEED` (the bridge's untrained controls load as tests/evaluation's test of them shows)."""

import json

import numpy as np
import pytest

from bridgeembed.encoders.baselines import HashBowEncoder
from bridgeembed.errors import ConfigError
from bridgeembed.senteval.controls import compare, parse_seeds, summary, table
from tests.helpers.senteval_fixtures import write_tree


@pytest.fixture()
def data(tmp_path):
    return write_tree(tmp_path / "data" / "senteval").parent


@pytest.fixture()
def loads(monkeypatch):
    """The encoders loaded, by spec: `bow` and its controls `untrained:bow@0..2`, each with its own word vectors."""
    from bridgeembed.evaluation import models

    loaded = []

    def factory(spec, salt):
        return lambda device: loaded.append(spec) or HashBowEncoder(dim=32, salt=salt)

    monkeypatch.setitem(models.BASELINES, "bow", factory("bow", "model"))
    for seed in range(3):
        monkeypatch.setitem(models.BASELINES, f"untrained:bow@{seed}", factory(f"untrained:bow@{seed}", str(seed)))
    return loaded


def bench(*argv):
    from bridgeembed.cli.bench import main

    return main(["senteval-controls", "bow", *argv])


def test_the_table_of_a_model_against_its_controls(data, loads, tmp_path, capsys):
    out, report = tmp_path / "controls", tmp_path / "report.json"
    assert bench("--data", str(data), "--tasks", "SICK-R", "--config", "prototype", "--out", str(out),
                 "--json", str(report), "--quiet") == 0
    text = capsys.readouterr().out
    assert loads == ["bow", "untrained:bow@0", "untrained:bow@1", "untrained:bow@2"]
    for folder in ("bow", "untrained-bow-0", "untrained-bow-1", "untrained-bow-2"):  # as bench senteval writes
        assert (out / f"{folder}-prototype" / "results.json").is_file(), folder
    found = json.loads(report.read_text())
    assert found["seeds"] == [0, 1, 2] and list(found["tasks"]) == ["SICK-R"] and found["compared"] == 1
    sick = found["tasks"]["SICK-R"]
    assert sick["primary"] == "pearson" and len(sick["controls"]) == 3
    assert sick["mean"] == pytest.approx(np.mean(sick["controls"]))  # results.json's unit: Pearson r
    assert sick["std"] == pytest.approx(np.std(sick["controls"]))
    theirs = [100 * r for r in sick["controls"]]  # the table's: correlations x 100
    mine, mean, std = 100 * sick["model"], float(np.mean(theirs)), float(np.std(theirs))
    row = f"| SICK-R | {mine:.1f} | {mean:.1f} ± {std:.1f} | {'yes' if mine > mean else 'no'} |"
    assert text.startswith("| task | bow | untrained, mean ± std of 3 seeds | beats the mean |\n") and row in text
    assert text.strip().endswith(f"bow beats the mean of 3 untrained controls on {found['beats']} of 1 tasks")
    assert (out / "bow-prototype.md").read_text() == text  # the table beside the runs too


def test_runs_there_already_are_reused_and_fresh_recomputes_them(data, loads, tmp_path, capsys):
    out = tmp_path / "controls"
    args = ("--data", str(data), "--tasks", "MR", "--config", "prototype", "--out", str(out), "--quiet")
    assert bench(*args) == 0
    results = out / "bow-prototype" / "results.json"
    changed = json.loads(results.read_text())
    changed["tasks"]["MR"]["views"]["mean"]["metrics"]["acc"] = 99.0
    results.write_text(json.dumps(changed))
    loads.clear()
    capsys.readouterr()
    assert bench(*args) == 0  # nothing loaded, nothing scored: the results found are the table's
    assert loads == [] and "| MR | 99.0 |" in capsys.readouterr().out
    (out / "untrained-bow-1-prototype" / "results.json").unlink()
    assert bench(*args) == 0 and loads == ["untrained:bow@1"]  # only the run missing
    loads.clear()
    capsys.readouterr()
    assert bench(*args, "--fresh") == 0
    assert loads == ["bow", "untrained:bow@0", "untrained:bow@1", "untrained:bow@2"]
    assert "| MR | 99.0 |" not in capsys.readouterr().out
    assert json.loads(results.read_text())["tasks"]["MR"]["views"]["mean"]["metrics"]["acc"] != 99.0


def test_compare_counts_only_tasks_with_a_score_on_both_sides():
    def tasks(**scores):
        return {name: {"status": "ok", "primary": primary, "views": {"mean": {"metrics": {primary: value}}}}
                for name, (primary, value) in scores.items()}

    model = {**tasks(MR=("acc", 70.0), STSB=("pearson", 0.5), TREC=("acc", 80.0)),
             "SNLI": {"status": "skipped", "primary": "acc", "views": {}}}
    controls = {0: tasks(MR=("acc", 68.0), STSB=("pearson", 0.60), SNLI=("acc", 50.0)),
                1: tasks(MR=("acc", 71.0), STSB=("pearson", 0.62)),
                2: tasks(MR=("acc", 69.5), STSB=("pearson", 0.58))}
    report = compare("m", model, controls)
    assert (report["beats"], report["compared"], report["seeds"]) == (1, 2, [0, 1, 2])
    assert list(report["tasks"]) == ["MR", "STSB", "TREC"]  # SNLI: the model has no score
    assert report["tasks"]["TREC"] == {"primary": "acc", "model": 80.0, "controls": [None, None, None],
                                       "mean": None, "std": None, "beats": None}
    assert report["tasks"]["STSB"]["mean"] == pytest.approx(0.6)  # results.json's unit
    assert table(report).splitlines()[2:] == ["| MR | 70.0 | 69.5 ± 1.2 | yes |", "| STSB | 50.0 | 60.0 ± 1.6 | no |"]
    assert summary(report) == "m beats the mean of 3 untrained controls on 1 of 2 tasks"
    assert parse_seeds(" 0, 2") == [0, 2]
    with pytest.raises(ConfigError, match="whole numbers"):
        parse_seeds("")


@pytest.mark.parametrize("argv, said", [
    (["--seeds", "0,x"], "error: --seeds takes the control seeds as whole numbers"),
    (["--seeds", "1,1"], "each once"),
    (["--seeds", "-1"], "got '-1'"),
    (["--tasks", "NOPE"], "error: unknown task 'NOPE'"),
    (["--data", "nowhere"], "bridgeembed-data senteval --data DIR"),
    (["--out", "a-file"], "error: --out a-file is a file, not a folder"),
])
def test_bad_input_is_one_line_before_any_model_loads(argv, said, data, loads, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("")
    assert bench("--data", str(data), "--config", "prototype", *argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and said in err, err
    assert loads == [] and not (tmp_path / "results").exists()
