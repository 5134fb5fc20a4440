"""benchmarks/sentence_length.py, dev_retrieval.py and docs/history/studies/sts_pooling.py (issue 42) run, in their
dry modes, with the options they share from bridgeembed.cli.scripts and the quiet encoding of
bridgeembed.crosslingual.dev_retrieval."""

import json
import os
import subprocess
import sys

import pytest

from tests.helpers import REPO, run_script

pytestmark = pytest.mark.usefixtures("shipped_model")


run = run_script


def test_sentence_length_counts_the_cut_at_each_length(tmp_path):
    out = tmp_path / "length.json"
    text = run("sentence_length.py", "general-m2m", "--dry", "--lengths", "50", "256", "--rounds", "1",
               "--json", str(out))
    rows = {r["length"]: r for r in json.loads(out.read_text())}
    # one sentence of six is 80+ pieces long: cut at 50 in every language, whole at 256
    assert all(abs(v - 100 / 6) < 0.01 for v in rows[50]["cut_percent"].values())
    assert all(v == 0 for v in rows[256]["cut_percent"].values())
    assert len(rows[256]["pairs"]) == 12 and rows[256]["seconds"] > 0
    assert "| general-m2m | dry | 256 | 0.0 |" in text


def test_dev_retrieval_scores_a_config_dev_sets(tmp_path):
    out = tmp_path / "dev.json"
    text = run("dev_retrieval.py", str(REPO / "configs" / "general-m2m.yaml"), "general-m2m", "--dry",
               "--json", str(out))
    row = json.loads(out.read_text())[0]
    assert set(row["sets"]) == {"dry"} and 0 <= row["dev_mean"] <= 100 and len(row["pairs"]["dry"]) == 12
    assert text.splitlines()[0] == "| model | dry | dev mean |"


def test_dev_retrieval_names_a_missing_model_before_any_work(tmp_path):
    """A snapshot not written yet, last in the list, was a traceback after the others had been scored."""
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "dev_retrieval.py"),
                           str(REPO / "configs" / "general-m2m.yaml"), "general-m2m", str(tmp_path / "step4500.pt"),
                           "--dry"], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: no model ") and "step4500.pt" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_dev_sets_are_the_ones_the_trainer_holds_out(real_data):
    data_root = real_data("multi30k", "newstest-4way", "tatoeba-en-fr", "europarl-comtrans", "gnome-help")
    from bridgeembed.config import Config
    from bridgeembed.crosslingual.dev_retrieval import dev_sets

    sets = dev_sets(Config.from_yaml(REPO / "configs" / "general-m2m.yaml"), data_root)
    assert {"multi30k", "news", "tatoeba-en-de", "tatoeba-de-cs", "europarl", "gnome"} <= set(sets)
    assert "captions-task2" not in sets  # alignment only: no dev set
    assert {len(v) for v in sets["tatoeba-en-fr"].values()} == {300} and set(sets["news"]) == {"en", "de", "fr", "cs"}


def test_sts_pooling_scores_every_pooling_for_the_model_and_its_controls(tmp_path):
    out = tmp_path / "sts.json"
    text = run("docs/history/studies/sts_pooling.py", "general-m2m", "--dry", "--controls", "1", "--json", str(out))
    written = json.loads(out.read_text())
    found = written["encoders"]
    assert set(found) == {"general-m2m", "untrained seed 1"}
    assert -100 <= written["word_overlap"]["dry"] <= 100
    assert "| none | word overlap |" in text
    for result in found.values():
        assert -100 <= result["word_overlap"] <= 100
        assert set(result["sts"]) == {"mean", "centred", "abtt", "heads", "states", "sif"}
        assert all(-100 <= v <= 100 for pooled in result["sts"].values() for v in pooled.values())
        # no data root in the dry run: every piece weighs 1, and the weighted mean is the plain one
        assert result["sts"]["sif"]["dry"] == pytest.approx(result["sts"]["states"]["dry"], abs=1e-6)
        assert 0 < result["anisotropy"]["top_pc_variance"] <= 1
    assert "| untrained seed 1 | abtt |" in text


def test_evaluate_general_runs_its_plumbing_dry(tmp_path):
    done = subprocess.run(["bash", str(REPO / "benchmarks" / "evaluate_general.sh"), "general-m2m", str(tmp_path)],
                          capture_output=True, text=True, cwd=REPO, timeout=600,
                          env={**os.environ, "DRY": "1", "PY": sys.executable})
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((tmp_path / "dev.json").read_text())[0]["model"] == "general-m2m"
    assert (tmp_path / "length.md").read_text().count("| general-m2m | dry |") == 2
