"""benchmarks/crosslingual_tables.py on synthetic data in the real layouts, with `bow` and `majority`."""

import gzip
import importlib.util
import json

from tests.helpers import REPO
from tests.helpers.crosslingual_toy import write_bitext, write_tweets, write_xnli


def load_script():
    spec = importlib.util.spec_from_file_location("crosslingual_tables", REPO / "benchmarks" / "crosslingual_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tables_for_several_models(tmp_path):
    root = tmp_path / "data"
    write_xnli(root / "xnli" / "xtreme", langs=("en", "de", "fr"), n_dev=60, n_test=30)
    write_tweets(root / "reviews" / "xlm-t-umsab-tweets", langs=("en", "de"), n_train=60, n_test=30)
    template = write_bitext(tmp_path / "plain", langs=("en", "de", "fr"), n=20)
    (root / "multi30k").mkdir()
    for lang in ("en", "de", "fr"):
        with gzip.open(root / "multi30k" / f"test_2016_flickr.{lang}.gz", "wt", encoding="utf-8") as handle:
            handle.write(open(template.replace("{lang}", lang), encoding="utf-8").read())
    out = tmp_path / "out"
    code = load_script().main(["--model", "bow", "majority", "no-such-model", "--data", str(root), "--out", str(out),
                               "--xnli-train", "en", "en+de", "en+es", "--test-langs", "en,de,fr,es"])
    assert code == 1  # one model could not be loaded; the others are in the tables
    tables = (out / "crosslingual_tables.md").read_text()
    assert "## Table 6 layout" in tables and "**bow**" in tables and "**majority**" in tables
    assert "| EN+ES | – | – | – | – |" in tables and "skipped test es: missing file" in tables
    assert "## Table 7 layout" in tables and "| majority class (negative) |" in tables
    assert "| en → de |" in tables and "not scored: no-such-model" in tables
    payload = json.loads((out / "crosslingual_tables.json").read_text())
    assert set(payload["results"]) == {"bow", "majority"} and "retrieval" not in payload["results"]["majority"]
    assert "spanish" in payload["results"]["bow"]["sentiment"]["skipped"]["test es"]
    assert (out / "bow" / "xnli.png").is_file() and (out / "majority" / "sentiment.md").is_file()
    rows = (out / "crosslingual_cells.csv").read_text().splitlines()
    assert rows[0] == "model,task,train_or_query,test_or_target,accuracy,supervised" and len(rows) > 20
