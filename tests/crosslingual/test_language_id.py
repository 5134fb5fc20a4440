"""`bridgeembed-bench langid`: the identifier's accuracy per language and retrieval with lang="auto" (issue 51)."""

import json
import subprocess
import sys

import numpy as np
import pytest

from bridgeembed.cli import bench
from bridgeembed.crosslingual.language_id import IdentifiedLanguages, first_words, identification_accuracy
from tests.helpers import REPO

pytest.importorskip("py3langid")  # the langid extra, in the test extra too

LINES = {"en": ["A man is riding a bicycle down the street.", "Two children are playing football on the beach."],
         "de": ["Ein Mann fährt mit dem Fahrrad die Straße entlang.", "Zwei Kinder spielen Fußball am Strand."]}


def test_accuracy_is_per_language_and_per_input_length():
    table = identification_accuracy(LINES, ["en", "de"])
    assert list(table) == ["sentence", "1 word", "2 words", "3 words"]
    assert table["sentence"] == {"en": 1.0, "de": 1.0}
    assert first_words("Zwei Kinder spielen Fußball", 2) == "Zwei Kinder"


def test_the_benchmarks_code_is_replaced_by_auto():
    class Recorder:
        languages, num_heads = ["en", "de"], 2

        def encode(self, sentences, lang, heads="mean", batch_size=64):
            self.lang = lang
            return np.zeros((len(sentences), 4), dtype=np.float32)

    inner = Recorder()
    IdentifiedLanguages(inner).encode(["x"], "de", heads="mean")
    assert inner.lang == "auto" and IdentifiedLanguages(inner).languages == ["en", "de"]


def test_the_command_on_test_2016_gives_auto_equal_to_given(real_data, shipped_model, tmp_path, capsys):
    root = real_data("multi30k")
    out = tmp_path / "out"
    argv = ["langid", "--model", str(shipped_model), "--data", str(root), "--limit", "30", "--langs", "en,de",
            "--out", str(out), "--device", "cpu", "--threads", "1", "--quiet"]
    assert bench.main(argv) == 0, capsys.readouterr().err
    result = json.loads((out / "language_id.json").read_text(encoding="utf-8"))
    assert result["identified"]["sentence"] == {"en": 1.0, "de": 1.0}  # so auto encodes as the codes would
    assert set(result["retrieval"]) == {"en -> de", "de -> en", "mean"}
    for row in result["retrieval"].values():
        assert row["auto"] == pytest.approx(row["given"], abs=1e-9)
    assert "| mean |" in capsys.readouterr().out and (out / "language_id.md").is_file()


def test_a_limit_below_two_is_refused_before_any_work(tmp_path, capsys):
    assert bench.main(["langid", "--limit", "1", "--out", str(tmp_path / "o")]) == 2
    assert "--limit must be at least 2" in capsys.readouterr().err


def test_the_identifier_study_scores_py3langid_per_language_and_length(real_data, tmp_path):
    """docs/history/studies/langid_choice.py, the study that chose py3langid (lingua scored where installed)."""
    root = real_data("multi30k", "pud")
    done = subprocess.run([sys.executable, str(REPO / "docs/history/studies/langid_choice.py"), "--data", str(root),
                           "--limit", "20", "--json", str(tmp_path / "choice.json")],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "choice.json").read_text(encoding="utf-8"))["results"]
    assert set(results) == {"test_2016", "pud"}
    for by_identifier in results.values():
        assert by_identifier["py3langid"]["sentence"] == {"en": 1.0, "de": 1.0, "fr": 1.0, "cs": 1.0}
        assert set(by_identifier["py3langid"]) == {"sentence", "1 word", "2 words", "3 words", "seconds"}
