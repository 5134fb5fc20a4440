"""Result tables a user can quote (issue 41): retrieval's mean and worst rows, the share of sentences cut at
the encoder's max_len in every result, and scikit-learn's ConvergenceWarning said once, in our words."""

import json
import logging

import numpy as np
import pytest

from bridgeembed.crosslingual import RetrievalEvaluator, TransferEvaluator, XnliXtreme
from bridgeembed.crosslingual.classifier import ClassifierConfig, LogisticTransfer
from bridgeembed.crosslingual.readers import read_bitext
from bridgeembed.crosslingual.report import retrieval_table, to_markdown
from bridgeembed.evaluation import models
from tests.helpers.crosslingual_toy import SharedSpaceEncoder, write_bitext, write_xnli


class _OddIsLong:
    """A tokenizer whose sentences starting with an odd concept are 10 subwords long, the others 1."""

    def __init__(self, lang):
        self.lang = lang

    def encode_many(self, texts):
        return [[0] * (10 if int(t.split()[0][len(self.lang):]) % 2 else 1) for t in texts]


def is_cut(sentence, lang):
    return int(sentence.split()[0][len(lang):]) % 2 == 1


class CuttingEncoder(SharedSpaceEncoder):
    """Tells the benches its max_len and tokenizers, as BridgeEncoder does, so they can count what it cuts."""

    max_len = 5

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.tokenizers = {lang: _OddIsLong(lang) for lang in ("en", "de", "fr")}


@pytest.fixture(scope="module")
def bitext(tmp_path_factory):
    template = write_bitext(tmp_path_factory.mktemp("bitext"), langs=("en", "de", "fr"), n=40)
    return template, read_bitext({lang: template.replace("{lang}", lang) for lang in ("en", "de", "fr")})


def test_retrieval_table_has_mean_and_worst_rows_and_the_share_cut(bitext, tmp_path):
    _, lines = bitext
    lines = {**lines, "fr": lines["fr"][::-1]}  # French in another order: its directions are the worst
    result = RetrievalEvaluator(lines, model="toy", show_progress=False)(CuttingEncoder(), output_path=tmp_path)[0]
    md = (tmp_path / "retrieval.md").read_text()
    assert md == to_markdown(retrieval_table(result))
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in md.splitlines() if line.startswith("| ")}
    columns = {b: [result.accuracy[a][b] for a in result.langs if a != b] for b in result.langs}
    assert rows["mean"] == [f"{100 * np.mean(columns[b]):.1f}" for b in result.langs]
    assert rows["worst"] == [f"{100 * min(columns[b]):.1f}" for b in result.langs]
    a, b, worst = result.worst()
    assert worst == min(v for c in columns.values() for v in c) and "fr" in (a, b)
    assert f"all 6 directions: mean {100 * result.score():.1f}, worst {100 * worst:.1f} ({a} → {b})" in md
    cut = {lang: np.mean([is_cut(s, lang) for s in set(lines[lang])]) for lang in lines}
    assert 0 < cut["en"] < 1 and result.truncated == pytest.approx(cut)
    saved = json.loads((tmp_path / "retrieval.json").read_text())
    assert saved["truncated"] == pytest.approx(cut) and saved["protocol"]["max_len"] == 5
    assert saved["worst_direction"] == {"query": a, "target": b, "accuracy": worst}
    assert "sentences cut at the encoder's max_len (5 subword tokens), % of each set's distinct sentences: " \
           + ", ".join(f"{lang} {100 * share:.1f}" for lang, share in cut.items()) in md


def test_an_encoder_without_a_known_length_limit_reports_no_share(bitext):
    _, lines = bitext
    result = RetrievalEvaluator(lines, model="toy", show_progress=False)(SharedSpaceEncoder())[0]
    assert result.truncated == {} and "cut" not in to_markdown(retrieval_table(result))


def test_xnli_reports_the_share_cut_of_every_set(tmp_path):
    folder = write_xnli(tmp_path / "xnli", langs=("en", "de"), n_dev=60, n_test=30)
    source = XnliXtreme(folder)
    result = TransferEvaluator(source, [("en",)], ["en", "de"], task="xnli", model="toy", show_progress=False)(
        CuttingEncoder(), output_path=tmp_path / "out")[0]
    expected = {}
    for role, lang in (("train", "en"), ("test", "en"), ("test", "de")):
        data = source.load(role, lang)
        distinct = set(data.texts) | set(data.texts2)
        expected[f"{role} {lang}"] = np.mean([is_cut(s, lang) for s in distinct])
    assert result.truncated == pytest.approx(expected) and 0 < expected["test de"] < 1
    saved = json.loads((tmp_path / "out" / "xnli.json").read_text())
    assert saved["truncated"] == pytest.approx(expected) and saved["protocol"]["max_len"] == 5
    assert "sentences cut at the encoder's max_len (5 subword tokens)" in (tmp_path / "out" / "xnli.md").read_text()


def test_logistic_regression_that_stops_early_warns_nothing_and_is_counted(recwarn):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(200, 30)), rng.integers(0, 3, size=200)
    model = LogisticTransfer(ClassifierConfig(c_grid=(0.1, 10.0), max_iter=1)).fit(x, y)
    assert not [w for w in recwarn if "converge" in str(w.message).lower()]
    assert model.report.unconverged == [0.1, 10.0] and not model.report.final_converged
    assert model.report.unconverged_fits == 3 and model.report.fits == 3


@pytest.fixture
def xnli_data(tmp_path):
    write_xnli(tmp_path / "data" / "xnli" / "xtreme", langs=("en", "de"), n_dev=60, n_test=30)
    return tmp_path / "data"


@pytest.mark.parametrize("quiet", [False, True])
def test_convergence_is_said_once_in_our_words_and_quiet_silences_it(quiet, xnli_data, tmp_path, monkeypatch,
                                                                     capsys, recwarn):
    """Issue 41: two scikit-learn ConvergenceWarning blocks printed, --quiet or not."""
    from sklearn.exceptions import ConvergenceWarning

    from bridgeembed.cli import bench
    from bridgeembed.cli import crosslingual as cli

    monkeypatch.setitem(models.BASELINES, "shared", lambda device=None: SharedSpaceEncoder())
    monkeypatch.setattr(cli, "ClassifierConfig", lambda *args: ClassifierConfig(*args, max_iter=1))
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])  # bench sets logging up (basicConfig) as a user's run does
    monkeypatch.setattr(root, "level", root.level)
    code = bench.main(["xnli", "--model", "shared", "--data", str(xnli_data), "--test-langs", "en,de",
                       "--train-langs", "en,en+de", "--heads", "mean", "--out", str(tmp_path / "out"),
                       *(["--quiet"] if quiet else [])])
    err = capsys.readouterr().err
    assert code == 0, err
    assert not [w for w in recwarn if issubclass(w.category, ConvergenceWarning)]
    assert err.count("did not converge within max_iter=1 iterations") == (0 if quiet else 1), err
    saved = json.loads((tmp_path / "out" / "xnli.json").read_text())
    assert set(saved["unconverged"]) == {"en", "en+de"}
