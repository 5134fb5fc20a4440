"""bridgeembed-translate: text in, text out; --evaluate writes BLEU of every direction."""

import json

from bridgeembed.cli.translate import main


def test_translate_file(toy_run, toy_corpus, tmp_path):
    out = tmp_path / "hyp.y"
    code = main(["--model", str(toy_run[0] / "best.pt"), "--src", "x", "--tgt", "y",
                 "--input", str(toy_corpus / "test.x"), "--output", str(out), "--beam", "3"])
    assert code == 0
    hyps = out.read_text().splitlines()
    refs = (toy_corpus / "test.y").read_text().splitlines()
    assert len(hyps) == len(refs)
    assert sum(h == r for h, r in zip(hyps, refs)) > 0.8 * len(refs)


def test_evaluate_every_direction(toy_run, toy_corpus, tmp_path, capsys):
    code = main(["--model", str(toy_run[0] / "best.pt"), "--evaluate", "--corpus", str(toy_corpus),
                 "--out", str(tmp_path / "eval"), "--beam", "2"])
    assert code == 0
    results = json.loads((tmp_path / "eval" / "bleu.json").read_text())
    assert set(results["directions"]) == {"x-y", "y-x", "x-x", "y-y"}
    assert all(d["bleu"] > 90 and d["trained"] for d in results["directions"].values())
    assert results["split"] == "test" and "case:lc" in results["signature"]
    buckets = results["directions"]["x-y"]["by_length"]
    assert sum(b["sentences"] for b in buckets.values()) == 100
    assert (tmp_path / "eval" / "bleu_by_length.png").stat().st_size > 1000
    assert "| x |" in capsys.readouterr().out
    assert (tmp_path / "eval" / "translations" / "test.x-y.y").exists()


def test_unknown_language_lists_known_ones(toy_run, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("apple\n")
    code = main(["--model", str(toy_run[0] / "best.pt"), "--src", "fr", "--tgt", "y", "--input", str(tmp_path / "in.txt")])
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown language 'fr'" in err and "x, y" in err


def test_missing_model_is_one_line(tmp_path, capsys):
    assert main(["--model", str(tmp_path / "nope.pt"), "--src", "x", "--tgt", "y"]) == 2
    assert "no model" in capsys.readouterr().err
