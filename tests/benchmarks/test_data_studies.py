"""The data studies of issue 47 run: docs/history/studies/align_filter.py (the threshold that filters a noisy corpus
by align-mode scores, measured on a clean corpus with some pairs misaligned on purpose) and tokenizer_fit.py (the
shipped tokenizers on the new training text against tokenizers learnt from all of it)."""

import json

import pytest

from tests.helpers import run_script


@pytest.mark.slow
@pytest.mark.usefixtures("shipped_model")
def test_align_filter_drops_the_moved_pairs_before_the_clean_ones(real_data, tmp_path):
    root = real_data("europarl-v7-en-de", "wmt15-sample-en-de")
    out = tmp_path / "filter.json"
    printed = run_script("docs/history/studies/align_filter.py", "--data", str(root), "--lines", "200", "--moved",
                         "0.2", "--json", str(out))
    result = json.loads(out.read_text())
    assert result["pairs"] == result["noisy_pairs"] == 200
    rows = result["thresholds"]
    # a threshold drops misaligned pairs far more often than true ones; and the higher, the more of both
    assert rows["0.7"]["moved_dropped"] > 80 and rows["0.7"]["clean_kept"] > 80
    assert [rows[t]["clean_kept"] for t in rows] == sorted((rows[t]["clean_kept"] for t in rows), reverse=True)
    assert "0.7: clean kept" in printed


@pytest.mark.slow
@pytest.mark.usefixtures("shipped_model")
def test_tokenizer_fit_measures_every_folder_under_both_tokenizers(real_data, tmp_path):
    root = real_data("multi30k", "python-docs-en-fr")
    out = tmp_path / "fit.json"
    printed = run_script("docs/history/studies/tokenizer_fit.py", "--data", str(root), "--lines", "30", "--sample",
                         "1500", "--json", str(out))
    rows = {(r["folder"], r["lang"]): r for r in json.loads(out.read_text())["rows"]}
    assert {("multi30k", "cs"), ("python-docs-en-fr", "fr")} <= set(rows)
    assert rows[("python-docs-en-fr", "fr")]["new"] and not rows[("multi30k", "en")]["new"]
    for r in rows.values():
        for kind in ("shipped", "learnt"):
            assert r[kind]["pieces_a_word"] >= 1 and 0 <= r[kind]["unknown_percent"] <= 100
    assert "| python-docs-en-fr | fr | yes |" in printed
