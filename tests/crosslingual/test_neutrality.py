"""`bridgeembed-bench neutrality`: the four measures on synthetic spaces whose answers are known."""

import json
import zlib

import numpy as np
import pytest

from bridgeembed.cli import bench
from bridgeembed.crosslingual.neutrality import centre, cosines, langid_probe, mixed_pool, neutrality
from bridgeembed.errors import DataError

LANGS = ("en", "de", "fr")


class OffsetEncoder:
    """Vector = the caption's meaning (shared by its translations) + weight x the language's offset.

    With a large offset language identity dominates: the nearest neighbour of a sentence is another
    sentence of its language; subtracting each language's mean removes the offset exactly."""

    def __init__(self, offset: float, languages=LANGS, dim: int = 32):
        self.offset, self.languages, self.dim = offset, list(languages), dim

    def encode(self, sentences, lang, heads="mean", batch_size=64):
        rows = []
        for s in sentences:
            meaning = np.random.default_rng(int(s.split()[-1])).normal(size=self.dim)  # same number = same caption
            noise = np.random.default_rng(zlib.crc32(s.encode())).normal(size=self.dim) * 0.1
            shift = np.random.default_rng(zlib.crc32(lang.encode())).normal(size=self.dim) * self.offset
            rows.append(meaning + noise + shift)
        return np.asarray(rows, dtype=np.float32)


def captions(n: int = 60, langs=LANGS) -> dict:
    return {lang: [f"{lang} caption {i}" for i in range(n)] for lang in langs}


def test_a_neutral_space_scores_perfectly():
    result = neutrality(OffsetEncoder(0.0), captions(), show_progress=False)
    f = result.raw
    assert f.min_pair_accuracy() == 1.0 and f.mixed_pool["all"] == 1.0 and f.same_language["all"] == 0.0
    assert f.cosine["translation"] > 0.95 and abs(f.cosine["random_within"]) < 0.2
    assert f.langid_accuracy < 0.6  # chance is 1/3: only the small per-sentence noise differs


def test_language_offsets_dominate_raw_vectors_and_centring_removes_them():
    result = neutrality(OffsetEncoder(3.0), captions(), show_progress=False)
    raw, centred = result.raw, result.centred
    assert raw.same_language["all"] == 1.0 and raw.mixed_pool["all"] == 0.0  # every neighbour shares the language
    assert raw.langid_accuracy == 1.0
    assert raw.cosine["random_within"] > raw.cosine["translation"]  # the symptom
    assert centred.mixed_pool["all"] == 1.0 and centred.min_pair_accuracy() == 1.0
    assert centred.langid_accuracy < 0.6
    summary = result.summary()
    assert summary["raw"]["mixed_pool"] == 0.0 and summary["centred"]["mixed_pool"] == 1.0


def test_mixed_pool_counts_a_duplicate_translation_as_found():
    e1, e2, e3 = np.eye(3)
    # de rows 1 and 2 are the same text, so the same vector: en row 2 retrieves de row 1, which counts
    vectors = {"en": np.stack([e1, e2 + 0.1 * e3, e2 - 0.1 * e3]), "de": np.stack([e1, e2, e2])}
    texts = {"en": ["a", "b", "c"], "de": ["x", "y", "y"]}
    hits, same = mixed_pool(vectors, texts)
    assert hits["en"] == 1.0 and same["en"] == 0.0
    assert cosines({"en": np.eye(3), "de": np.eye(3)})["translation"] == pytest.approx(1.0)


def test_centre_and_probe():
    rng = np.random.default_rng(0)
    vectors = {"en": rng.normal(size=(40, 8)) + 5, "de": rng.normal(size=(40, 8)) - 5}
    centred = centre(vectors)
    assert all(abs(v.mean(axis=0)).max() < 1e-9 for v in centred.values())
    assert langid_probe(vectors) == 1.0 and langid_probe(centred) < 0.75


def test_unknown_language_is_skipped_with_its_reason():
    result = neutrality(OffsetEncoder(0.0, languages=["en", "de"]), captions(20), show_progress=False)
    assert "unknown language 'fr'" in result.skipped["fr"]
    assert result.raw.pair_accuracy["en"]["fr"] is None and result.raw.pair_accuracy["en"]["de"] == 1.0
    with pytest.raises(DataError, match="two languages"):
        neutrality(OffsetEncoder(0.0, languages=["en"]), captions(20), show_progress=False)


def write_parallel(folder, lines: dict) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    for lang, rows in lines.items():
        (folder / f"test.{lang}").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return str(folder / "test.{lang}")


def test_cli_writes_every_report(tmp_path, monkeypatch, capsys):
    from bridgeembed.evaluation import models

    monkeypatch.setitem(models.BASELINES, "fake", lambda device=None: OffsetEncoder(3.0))
    template = write_parallel(tmp_path / "data", captions(30))
    out = tmp_path / "out"
    code = bench.main(["neutrality", "--model", "fake", "--langs", "en,de,fr,cs", "--template", template,
                       "--out", str(out)])
    assert code == 0
    payload = json.loads((out / "neutrality.json").read_text())
    assert payload["summary"]["raw"]["mixed_pool"] == 0.0 and payload["summary"]["centred"]["mixed_pool"] == 1.0
    assert "missing file" in payload["skipped"]["cs"]
    for name in ("neutrality.csv", "neutrality.md", "neutrality.png", "neutrality_centred.png"):
        assert (out / name).stat().st_size > 0, name
    assert "mixed-pool retrieval (%) | 0.0 | 100.0" in capsys.readouterr().out


def test_cli_names_both_files_when_line_counts_differ(tmp_path, capsys):
    lines = captions(10, ("en", "de"))
    lines["de"] = lines["de"][:7]
    template = write_parallel(tmp_path / "data", lines)
    code = bench.main(["neutrality", "--model", "bow", "--langs", "en,de", "--template", template,
                       "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "test.en has 10" in err and "test.de has 7" in err


def test_runs_on_the_bow_baseline(tmp_path):
    template = write_parallel(tmp_path / "data", captions(20, ("en", "de")))
    assert bench.main(["neutrality", "--model", "bow", "--langs", "en,de", "--template", template,
                       "--out", str(tmp_path / "out")]) == 0
    payload = json.loads((tmp_path / "out" / "neutrality.json").read_text())
    assert payload["model"] == "bow" and 0 <= payload["summary"]["raw"]["pair_accuracy_mean"] <= 1


@pytest.mark.slow
def test_shipped_model_and_its_untrained_control_on_multi30k(shared_data, shipped_model, tmp_path):
    for spec in ("general-m2m", "untrained:general-m2m"):
        out = tmp_path / spec.replace(":", "-")
        assert bench.main(["neutrality", "--model", spec, "--data", str(shared_data), "--out", str(out),
                           "--limit", "300"]) == 0
        summary = json.loads((out / "neutrality.json").read_text())["summary"]
        assert 0 <= summary["raw"]["pair_accuracy_min"] <= summary["raw"]["pair_accuracy_mean"] <= 1
        assert 0.25 <= summary["raw"]["langid_accuracy"] <= 1
