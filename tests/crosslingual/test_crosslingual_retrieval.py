"""Bitext retrieval and the three `bridgeembed-bench` commands end to end on synthetic data."""

import json
import zlib

import numpy as np
import pytest

from bridgeembed.cli import bench
from bridgeembed.crosslingual.readers import read_bitext
from bridgeembed.crosslingual.retrieval import accuracy, nearest, normalize, retrieval_matrix
from bridgeembed.evaluation import models
from tests.helpers.crosslingual_toy import RotatedEncoder, SharedSpaceEncoder, write_bitext, write_tweets, write_xnli


class IdentityOfText:
    """Vectors that depend on the text only: identical inputs in two 'languages' get identical vectors."""

    def encode(self, sentences, lang, heads="mean", batch_size=64):
        return np.stack([np.random.default_rng(zlib.crc32(s.encode())).normal(size=16) for s in sentences]
                        ).astype(np.float32)


def test_identical_inputs_retrieve_perfectly(tmp_path):
    rows = [f"sentence number {i}" for i in range(50)]
    result = retrieval_matrix(IdentityOfText(), {"en": rows, "xx": list(rows)}, show_progress=False)
    assert result.accuracy["en"]["xx"] == 1.0 and result.accuracy["xx"]["en"] == 1.0
    assert result.accuracy["en"]["en"] is None
    assert result.pairs() == [{"pair": "en-xx", "a_to_b": 1.0, "b_to_a": 1.0, "mean": 1.0}]


def test_shared_space_retrieves_and_rotated_space_does_not(tmp_path):
    lines = read_bitext({lang: write_bitext(tmp_path, n=80).replace("{lang}", lang) for lang in ("en", "de", "fr")})
    shared = retrieval_matrix(SharedSpaceEncoder(), lines, show_progress=False)
    rotated = retrieval_matrix(RotatedEncoder(), lines, show_progress=False)
    assert all(shared.accuracy[a][b] == 1.0 for a in lines for b in lines if a != b)
    assert all(rotated.accuracy[a][b] < 0.2 for a in lines for b in lines if a != b)  # chance is 1/80


def test_duplicate_targets_count_as_found_and_blocks_change_nothing():
    rng = np.random.default_rng(0)
    queries = normalize(rng.normal(size=(10, 4)))
    np.testing.assert_array_equal(nearest(queries, queries, block=3), nearest(queries, queries))
    queries[7] = queries[2]  # rows 2 and 7 are the same sentence pair: the same vectors on both sides
    targets = queries.copy()
    assert (nearest(queries, targets) == np.arange(10)).mean() == 0.9  # row 7 finds row 2 first
    assert accuracy(queries, targets, [f"t{i}" if i != 7 else "t2" for i in range(10)]) == 1.0


def test_unknown_language_is_skipped_in_retrieval():
    rows = ["en1 en2", "en3 en4"]
    with pytest.raises(Exception, match="two languages"):
        retrieval_matrix(SharedSpaceEncoder(languages=["en"]), {"en": rows, "de": ["de1 de2", "de3 de4"]},
                         show_progress=False)
    result = retrieval_matrix(SharedSpaceEncoder(languages=["en", "de"]),
                              {"en": rows, "de": ["de1 de2", "de3 de4"], "fr": ["fr1 fr2", "fr3 fr4"]},
                              show_progress=False)
    assert "unknown language 'fr'" in result.skipped["fr"] and result.accuracy["en"]["fr"] is None


@pytest.fixture
def toy_model(monkeypatch):
    monkeypatch.setitem(models.BASELINES, "toy", lambda device=None: SharedSpaceEncoder())


def test_bench_xnli_writes_all_outputs(tmp_path, toy_model, capsys):
    write_xnli(tmp_path / "data" / "xnli" / "xtreme")
    out = tmp_path / "out"
    code = bench.main(["xnli", "--model", "toy", "--data", str(tmp_path / "data"), "--out", str(out),
                       "--train-langs", "en", "en+de", "--test-langs", "en,de,fr,es", "--limit", "150"])
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["xnli.csv", "xnli.json", "xnli.md", "xnli.png"]
    payload = json.loads((out / "xnli.json").read_text())
    assert payload["train_size"] == {"en": 150, "en+de": 300} and "test es" in payload["skipped"]
    assert "| en+de |" in capsys.readouterr().out


def test_bench_sentiment_with_template_files_and_majority(tmp_path, toy_model):
    for lang in ("en", "de"):
        for split, n in (("train", 90), ("test", 30)):
            rows = "".join(f"{lang}{1 + 10 * (i % 3)} {lang}{40 + i % 7}\t{'neg neu pos'.split()[i % 3]}\n"
                           for i in range(n))
            (tmp_path / f"{lang}.{split}.tsv").write_text(rows, encoding="utf-8")
    args = ["sentiment", "--train-template", str(tmp_path / "{lang}.train.tsv"),
            "--test-template", str(tmp_path / "{lang}.test.tsv"), "--test-langs", "en,de"]
    assert bench.main(args + ["--model", "toy", "--out", str(tmp_path / "toy")]) == 0
    assert json.loads((tmp_path / "toy" / "sentiment.json").read_text())["accuracy"]["en"]["de"] == 1.0
    assert bench.main(args + ["--model", "majority", "--out", str(tmp_path / "maj")]) == 0
    majority = json.loads((tmp_path / "maj" / "sentiment.json").read_text())
    assert majority["majority_label"] == {"en": "neg"} and majority["protocol"]["classifier"] == "majority"


def test_bench_sentiment_xlmt_and_retrieval(tmp_path, toy_model):
    write_tweets(tmp_path / "tweets")
    assert bench.main(["sentiment", "--model", "toy", "--dir", str(tmp_path / "tweets"), "--test-langs", "en,de,es",
                       "--out", str(tmp_path / "s")]) == 0
    skipped = json.loads((tmp_path / "s" / "sentiment.json").read_text())["skipped"]
    assert "spanish" in skipped["test es"]  # no such folder in the toy data: skipped, named
    template = write_bitext(tmp_path / "bitext")
    assert bench.main(["retrieval", "--model", "toy", "--template", template, "--langs", "en,de,fr,cs",
                       "--out", str(tmp_path / "r")]) == 0
    payload = json.loads((tmp_path / "r" / "retrieval.json").read_text())
    assert payload["accuracy"]["de"]["fr"] == 1.0 and "missing file" in payload["skipped"]["cs"]
    assert (tmp_path / "r" / "retrieval.png").is_file()


def test_bench_user_errors_are_one_line(tmp_path, toy_model, capsys):
    (tmp_path / "xnli" / "xtreme").mkdir(parents=True)
    (tmp_path / "xnli" / "xtreme" / "dev-en.tsv").write_text("P\tH\tentailment\nP\tH\tnope\n", encoding="utf-8")
    (tmp_path / "xnli" / "xtreme" / "test-en.tsv").write_text("P\tH\n", encoding="utf-8")
    (tmp_path / "xnli" / "xtreme" / "test.labels").write_text("neutral\n", encoding="utf-8")
    assert bench.main(["xnli", "--model", "toy", "--data", str(tmp_path), "--test-langs", "en",
                       "--out", str(tmp_path / "o")]) == 2
    assert "dev-en.tsv:2: label 'nope'" in capsys.readouterr().err
    assert bench.main(["xnli", "--model", "toy", "--train-langs", "en+", "--out", str(tmp_path / "o")]) == 2
    assert bench.main(["retrieval", "--model", "majority", "--out", str(tmp_path / "o")]) == 2
    assert bench.main(["xnli", "--model", "toy", "--heads", "first", "--out", str(tmp_path / "o")]) == 2


@pytest.mark.parametrize("langs", [["en", "de"], ["en", "de", "fr", "cs"]])
def test_heat_map_has_a_fixed_scale_and_an_unclipped_title(langs):
    """22.0 against 22.2 must not fill the colour range; the title must fit in the figure."""
    import matplotlib.pyplot as plt

    from bridgeembed.crosslingual.report import MatrixTable, heatmap_figure

    values = [[None if a == b else 0.220 + 0.002 * ((i + j) % 2) for j, b in enumerate(langs)]
              for i, a in enumerate(langs)]
    table = MatrixTable("bitext retrieval: accuracy (%) of untrained:/a/long/path/to/some-checkpoint-name.pt",
                        "query \\ target", langs, langs, values, [[False] * len(langs) for _ in langs])
    fig = heatmap_figure(table)
    try:
        ax, image = fig.axes[0], fig.axes[0].images[0]
        assert image.get_clim() == (0, 100)
        assert abs(image.norm(22.2) - image.norm(22.0)) < 0.01
        fig.canvas.draw()
        title, frame = ax.title.get_window_extent(), fig.bbox
        assert frame.x0 <= title.x0 and title.x1 <= frame.x1 and title.y1 <= frame.y1, (title, frame)
        assert "some-checkpoint-name.pt" in ax.get_title().replace("\n", " ")
    finally:
        plt.close(fig)


def test_retrieval_and_neutrality_take_a_named_set(tmp_path, toy_model, monkeypatch):
    """--set pud reads DATA/pud/test.{lang}.gz and writes below the model's folder in one of the set's name;
    so does the default set, test_2016 (issue 41: pud's folder was inside test_2016's)."""
    import gzip

    template = write_bitext(tmp_path / "bitext", langs=("en", "de"))
    for folder, name in (("pud", "test.{lang}.gz"), ("multi30k", "test_2016_flickr.{lang}.gz")):
        (tmp_path / "data" / folder).mkdir(parents=True)
        for lang in ("en", "de"):
            text = (tmp_path / "bitext" / f"bitext.{lang}").read_bytes()
            with gzip.open(tmp_path / "data" / folder / name.format(lang=lang), "wb") as handle:
                handle.write(text)
    monkeypatch.chdir(tmp_path)
    for task in ("retrieval", "neutrality"):
        for given, folder, file in (([], "test_2016", "multi30k/test_2016_flickr.en.gz"),
                                    (["--set", "pud"], "pud", "pud/test.en.gz")):
            assert bench.main([task, "--model", "toy", *given, "--data", str(tmp_path / "data"),
                               "--langs", "en,de"]) == 0
            written = json.loads((tmp_path / "results" / task / "toy" / folder / f"{task}.json").read_text())
            assert str(tmp_path / "data" / file) in json.dumps(written)
        assert sorted(p.name for p in (tmp_path / "results" / task / "toy").iterdir()) == ["pud", "test_2016"]
        assert not (tmp_path / "results" / task / "toy" / "test_2016" / "pud").exists()
    assert bench.main(["retrieval", "--model", "toy", "--set", "pud", "--template", template]) == 2
