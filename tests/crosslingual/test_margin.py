"""Margin scoring (crosslingual/margin.py): a hub that fools cosine, parity with a brute-force reference,
and `--scoring` on the command line of retrieval and neutrality."""

import json

import numpy as np
import pytest

from bridgeembed.cli import bench
from bridgeembed.crosslingual.margin import knn_mean, nearest, parse_scoring
from bridgeembed.crosslingual.neutrality import mixed_pool
from bridgeembed.crosslingual.retrieval import normalize, retrieval_matrix
from bridgeembed.errors import ConfigError

S, G = 2.0, 1.5  # weight of the direction every sentence shares; weight of a translation's own noise


class HubEncoder:
    """"en i" -> q_i = unit(S u + e_i); "de i" -> t_i = unit(S u + e_i + G f_i), except "de 0" = u itself.

    u is a hub: cos(q_i, u) = 0.89 beats the translation's cos(q_i, t_i) = 0.83, so cosine retrieves
    "de 0" for every English query. u is as close to every query, so its margin is small."""

    languages = ["en", "de"]

    def __init__(self, n: int = 8) -> None:
        self.n = n

    def encode(self, sentences, lang, heads="mean", batch_size=64):
        n, rows = self.n, []
        for s in sentences:
            i = int(s.split()[-1])
            v = np.zeros(1 + 2 * n)  # [u | e_0..e_n-1 | f_0..f_n-1]
            if lang == "de" and i == 0:
                v[0] = 1.0
            else:
                v[0], v[1 + i] = S, 1.0
                v[1 + n + i] = G if lang == "de" else 0.0
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32)


def hub_lines(n: int = 8) -> dict:
    return {lang: [f"{lang} {i}" for i in range(n)] for lang in ("en", "de")}


def test_cosine_picks_the_hub_and_margin_does_not():
    lines = hub_lines()
    cosine = retrieval_matrix(HubEncoder(), lines, show_progress=False)
    margin = retrieval_matrix(HubEncoder(), lines, show_progress=False, scoring="margin")
    assert cosine.accuracy["en"]["de"] == pytest.approx(1 / 8)  # only "en 0", whose translation is the hub
    assert margin.accuracy["en"]["de"] == 1.0 and margin.accuracy["de"]["en"] == 1.0
    assert (cosine.scoring, margin.scoring) == ("cosine", "margin")
    assert margin.protocol["similarity"] == "ratio margin (k = 4)" and "xsim" in margin.protocol["margin"]
    queries = normalize(HubEncoder().encode(lines["en"], "en"))
    targets = normalize(HubEncoder().encode(lines["de"], "de"))
    assert (nearest(queries, targets) == 0).all()
    np.testing.assert_array_equal(nearest(queries, targets, "margin"), np.arange(8))


# --- parity with a brute-force reference ---------------------------------------------------------------------
def reference_margin(x: np.ndarray, y: np.ndarray, k: int = 4, pool: bool = False) -> np.ndarray:
    """The formula written out pair by pair (Artetxe & Schwenk 2019, ratio margin, both directions)."""
    x, y = normalize(x), normalize(y)
    cos = lambda a, b: float(a @ b)  # noqa: E731

    def knn(v: np.ndarray, others: np.ndarray, own: int | None) -> float:
        sims = sorted((cos(v, o) for j, o in enumerate(others) if j != own), reverse=True)
        return sum(sims[:k]) / len(sims[:k])

    fwd = [knn(x[i], y, i if pool else None) for i in range(len(x))]
    bwd = [knn(y[j], x, j if pool else None) for j in range(len(y))]
    best = []
    for i in range(len(x)):
        scores = [-np.inf if pool and i == j else cos(x[i], y[j]) / ((fwd[i] + bwd[j]) / 2) for j in range(len(y))]
        best.append(int(np.argmax(scores)))
    return np.asarray(best)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_margin_equals_the_brute_force_reference(seed):
    rng = np.random.default_rng(seed)
    shared = rng.normal(size=(5, 12))  # a few common directions, so that some targets are hubs
    x = rng.normal(size=(37, 12)) + shared[rng.integers(0, 5, 37)]
    y = rng.normal(size=(23, 12)) + shared[rng.integers(0, 5, 23)]
    expected = reference_margin(x, y)
    for block in (1, 5, 1024):
        np.testing.assert_array_equal(nearest(normalize(x), normalize(y), "margin", block=block), expected)
    pool = np.concatenate([x, y])  # queries and targets are the same rows: never itself, also not as a neighbour
    np.testing.assert_array_equal(nearest(normalize(pool), normalize(pool), "margin", block=7, skip_self=True),
                                  reference_margin(pool, pool, pool=True))
    assert (reference_margin(x, y) != normalize(x).dot(normalize(y).T).argmax(axis=1)).any()  # not plain cosine


def test_knn_mean_blocks_and_small_sets():
    rng = np.random.default_rng(0)
    x, y = normalize(rng.normal(size=(9, 4))), normalize(rng.normal(size=(3, 4)))
    sims = x @ y.T
    np.testing.assert_allclose(knn_mean(x, y, k=2, block=4), np.sort(sims, axis=1)[:, -2:].mean(axis=1))
    np.testing.assert_allclose(knn_mean(x, y, k=4), sims.mean(axis=1))  # k past the 3 targets: all of them
    self_sims = x @ x.T
    np.fill_diagonal(self_sims, -np.inf)
    np.testing.assert_allclose(knn_mean(x, x, k=3, block=2, skip_self=True),
                               np.sort(self_sims, axis=1)[:, -3:].mean(axis=1))


def test_mixed_pool_by_margin_uses_every_language_as_the_pool():
    encoder, lines = HubEncoder(), hub_lines()
    vectors = {lang: encoder.encode(rows, lang).astype(np.float64) for lang, rows in lines.items()}
    cosine_hits, cosine_same = mixed_pool(vectors, lines)
    margin_hits, margin_same = mixed_pool(vectors, lines, "margin")
    assert cosine_hits["en"] == pytest.approx(1 / 8)  # the hub again
    assert margin_hits["all"] > cosine_hits["all"]


# --- the command line ----------------------------------------------------------------------------------------
def write_lines(folder, lines: dict) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    for lang, rows in lines.items():
        (folder / f"test.{lang}").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return str(folder / "test.{lang}")


@pytest.fixture
def hub_model(monkeypatch):
    from bridgeembed.evaluation import models

    monkeypatch.setitem(models.BASELINES, "hub", lambda device=None: HubEncoder())


def test_retrieval_cli_reports_both_scorings(tmp_path, hub_model, capsys):
    template, out = write_lines(tmp_path / "data", hub_lines()), tmp_path / "out"
    assert bench.main(["retrieval", "--model", "hub", "--langs", "en,de", "--template", template,
                       "--out", str(out), "--scoring", "both"]) == 0
    cosine = json.loads((out / "retrieval.json").read_text())
    margin = json.loads((out / "retrieval_margin.json").read_text())
    assert cosine["scoring"] == "cosine" and cosine["accuracy"]["en"]["de"] == pytest.approx(0.125)
    assert margin["scoring"] == "margin" and margin["accuracy"]["en"]["de"] == 1.0
    assert "bitext retrieval by margin" in (out / "retrieval_margin.md").read_text()
    assert "bitext retrieval by cosine" in (out / "retrieval.md").read_text()
    header, *rows = (out / "retrieval_margin.csv").read_text().splitlines()
    assert header.endswith(",scoring") and all(row.endswith(",margin") for row in rows)
    assert (out / "retrieval_margin.png").stat().st_size > 0
    printed = capsys.readouterr().out
    assert "by cosine" in printed and "by margin" in printed


def test_neutrality_cli_by_margin(tmp_path, hub_model):
    template, out = write_lines(tmp_path / "data", hub_lines()), tmp_path / "out"
    assert bench.main(["neutrality", "--model", "hub", "--langs", "en,de", "--template", template,
                       "--out", str(out), "--scoring", "margin"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["neutrality_margin.csv", "neutrality_margin.json",
                                                     "neutrality_margin.md", "neutrality_margin.png",
                                                     "neutrality_margin_centred.png"]
    payload = json.loads((out / "neutrality_margin.json").read_text())
    assert payload["scoring"] == "margin" and payload["raw"]["pair_accuracy"]["en"]["de"] == 1.0
    assert "nearest neighbour by ratio margin (k = 4)" in (out / "neutrality_margin.md").read_text()
    assert (out / "neutrality_margin.csv").read_text().splitlines()[1].startswith("margin,raw,")


def test_unknown_scoring_is_one_line_listing_the_choices(tmp_path, hub_model, capsys):
    for command in ("retrieval", "neutrality"):
        assert bench.main([command, "--model", "hub", "--data", str(tmp_path), "--scoring", "csls"]) == 2
        err = capsys.readouterr().err.strip()
        assert err == "error: --scoring 'csls': expected one of cosine, margin, both"
    with pytest.raises(ConfigError, match="scoring 'cos': expected one of cosine, margin, both"):
        parse_scoring("cos")
    with pytest.raises(ConfigError, match="one scoring"):
        retrieval_matrix(HubEncoder(), hub_lines(), show_progress=False, scoring="both")  # two results
    assert parse_scoring("both") == ("cosine", "margin") and parse_scoring(["margin"]) == ("margin",)
