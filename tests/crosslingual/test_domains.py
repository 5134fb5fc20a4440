"""`bridgeembed-bench domains` (`crosslingual.domains`): the card's retrieval table computed, reused and refused."""

import gzip
import json

import pytest

from bridgeembed.cli import bench
from bridgeembed.crosslingual import domains
from bridgeembed.evaluation import models
from tests.helpers.crosslingual_toy import RotatedEncoder, SharedSpaceEncoder, write_bitext


@pytest.fixture
def data(tmp_path):
    """A data root with the three named sets (en, de, fr; no cs) and a dev set of one's own (en, de)."""
    template = write_bitext(tmp_path / "bitext", langs=("en", "de", "fr"))
    for folder, name in (("multi30k", "test_2016_flickr.{lang}.gz"), ("multi30k", "val.{lang}.gz"),
                         ("pud", "test.{lang}.gz")):
        (tmp_path / "data" / folder).mkdir(parents=True, exist_ok=True)
        for lang in ("en", "de", "fr"):
            with gzip.open(tmp_path / "data" / folder / name.format(lang=lang), "wb") as handle:
                handle.write(open(template.format(lang=lang), "rb").read())
    return tmp_path / "data", write_bitext(tmp_path / "dev", langs=("en", "de"), n=40)


def test_domains_scores_every_set_once_and_reuses_what_is_there(tmp_path, data, monkeypatch, capsys):
    root, dev = data
    loads = []
    monkeypatch.setitem(models.BASELINES, "shared", lambda device=None: loads.append(1) or SharedSpaceEncoder())
    monkeypatch.setitem(models.BASELINES, "rotated", lambda device=None: RotatedEncoder())
    out, results = tmp_path / "out", tmp_path / "domains.json"
    args = ["domains", "shared", "rotated", "--data", str(root), "--out", str(out), "--dev", f"own={dev}",
            "--json", str(results)]
    assert bench.main(args) == 0
    assert loads == [1]  # one model load for its four sets
    text = capsys.readouterr().out
    assert "| dev own mean |" in text and "| shared | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 |" in text
    found = json.loads(results.read_text())
    assert list(found) == ["shared", "rotated"] and list(found["shared"]) == ["test_2016", "val", "pud", "own"]
    assert "cs" in found["shared"]["pud"]["skipped"]  # the languages a set lacks are named, not an error
    rotated = domains.figures(found["rotated"]["pud"])
    assert len(rotated["pairs"]) == 6 and rotated["mean"] < 50  # a space that does not align scores low
    assert (out / "shared" / "own" / "retrieval.json").is_file()
    assert bench.main(args) == 0 and loads == [1]  # all there: nothing loaded or computed again
    assert bench.main([*args, "--fresh"]) == 0 and loads == [1, 1]


def test_domains_refuses_a_bad_dev_set_and_a_missing_named_set_before_loading(tmp_path, data, monkeypatch, capsys):
    root, dev = data
    monkeypatch.setitem(models.BASELINES, "shared", lambda device=None: pytest.fail("loaded before the check"))
    for bad in ("pud=x.{lang}", "own=no-lang-here", "no-equals-sign"):
        assert bench.main(["domains", "shared", "--data", str(root), "--dev", bad, "--out", str(tmp_path)]) == 2
        assert "--dev takes NAME=TEMPLATE" in capsys.readouterr().err
    for path in (root / "pud").iterdir():
        path.unlink()
    assert bench.main(["domains", "shared", "--data", str(root), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "the pud set" in err and "bridgeembed-data pud" in err and "Traceback" not in err
