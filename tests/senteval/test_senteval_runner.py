"""The suite end to end on a tiny tree: per-head scoring from one pass, reports, bad encoders, CLI."""

import json

import numpy as np
import pytest

from bridgeembed.errors import ConfigError, DataError, UnknownLanguageError
from bridgeembed.evaluation.encoding import EncoderOutputError
from bridgeembed.senteval import report
from bridgeembed.senteval.config import EvalConfig, TrainSpec
from bridgeembed.senteval.runner import run_suite, select_tasks
from bridgeembed.senteval.tasks import Dirs
from tests.helpers.senteval_fixtures import BrokenEncoder, HeadsEncoder, write_tree

TINY = EvalConfig("tiny", kfold=3, classifier=TrainSpec(0, "rmsprop", 16, tenacity=2, epoch_size=2, max_epoch=12),
                  probing_nhid=8)


@pytest.fixture()
def dirs(tmp_path):
    root = write_tree(tmp_path / "data" / "senteval")
    return Dirs(root / "downstream", root / "probing")


def test_select_tasks():
    assert ("MR", True) in select_tasks("mr,similarity")
    assert dict(select_tasks("similarity"))["STS-B"] is False
    assert dict(select_tasks("SICKRelatedness"))["SICK-R"] is True
    assert len(select_tasks("all")) == 27
    with pytest.raises(ConfigError, match="unknown task"):
        select_tasks("MR,NOPE")


def test_each_head_scored_from_one_pass(dirs):
    enc = HeadsEncoder()
    res = run_suite(enc, "MR,STS12", TINY, [1111], "each", dirs, progress=False)
    mr = res.tasks["MR"]
    assert list(mr.views) == ["head 0", "head 1", "head 2"]
    assert enc.calls == ["each"]  # one encoding pass: STS12's toy sentences are among MR's, so cached
    assert mr.views["head 0"].metrics["acc"] > 80  # bag of words separates the toy classes (chance: 50)
    sts = res.tasks["STS12"].views["head 0"].metrics
    assert sts["MSRpar.n"] == 7


def test_heads_subset_and_seeds(dirs):
    enc = HeadsEncoder()
    res = run_suite(enc, "SST2,Length", TINY, [1111, 1112], "0,2", dirs, progress=False)
    views = res.tasks["SST2"].views
    assert list(views) == ["head 0", "head 2"] and enc.calls[0] == [0, 2]
    assert [r["seed"] for r in views["head 0"].per_seed] == [1111, 1112]
    assert res.tasks["Length"].source == "senteval"


def test_rebuilt_probing_and_reports(dirs, tmp_path):
    (dirs.probing / "REBUILT").write_text("built from Multi30k\n")
    res = run_suite(HeadsEncoder(), "MR,MRPC,SICK-E,Length,TREC", TINY, [1111], "each", dirs, progress=False,
                    model_name="toy")
    assert res.tasks["Length"].source == "rebuilt"
    assert "f1" in res.tasks["MRPC"].views["head 0"].metrics
    paths = report.write(res, tmp_path / "out")
    names = {p.name for p in paths}
    assert {"results.json", "results.csv", "results.md", "scores.png", "heads.png"} <= names
    md = (tmp_path / "out" / "results.md").read_text()
    assert "Length †" in md and "| head 2 |" in md
    assert json.loads((tmp_path / "out" / "results.json").read_text())["meta"]["model"] == "toy"


def test_missing_and_partial_data(dirs, tmp_path):
    with pytest.raises(DataError, match=r"SUBJ.*bridgeembed-data senteval --data DIR"):
        run_suite(HeadsEncoder(), "MR,SUBJ", TINY, [1111], "mean", dirs, progress=False)
    res = run_suite(HeadsEncoder(), "classification", TINY, [1111], "mean", dirs, progress=False)
    assert res.tasks["CR"].status == "skipped" and "CR" in res.tasks["CR"].reason
    assert res.tasks["MR"].ok
    empty = Dirs(tmp_path / "none", tmp_path / "none")
    with pytest.raises(DataError, match="probing"):
        run_suite(HeadsEncoder(), "probing", TINY, [1111], "mean", empty, progress=False)


def test_skipped_tasks_stay_out_of_the_tables_and_the_bar(dirs, monkeypatch):
    import bridgeembed.senteval.runner as runner

    totals = []
    real_tqdm = runner.tqdm

    def counting(iterable=None, **kwargs):
        if kwargs.get("desc") == "SentEval":
            totals.append(len(iterable))
        return real_tqdm(iterable, **kwargs)

    monkeypatch.setattr(runner, "tqdm", counting)
    res = run_suite(HeadsEncoder(), "classification", TINY, [1111], "mean", dirs, progress=True)
    ran = [name for name, task in res.tasks.items() if task.ok]
    skipped = [name for name, task in res.tasks.items() if not task.ok]
    assert skipped and totals == [len(ran)]  # the bar's total: only what runs
    assert list(res.tasks) == [name for name in ("MR", "CR", "SUBJ", "MPQA", "SST2", "SST5", "TREC", "MRPC")
                               if name in res.tasks]  # the order asked for
    text = report.markdown(res)
    assert "n/a" not in text
    table_header = next(line for line in text.splitlines() if line.startswith("| view"))
    assert all(name not in table_header for name in skipped) and all(name in table_header for name in ran)
    assert all(f"- {name}: skipped:" in text for name in skipped)


@pytest.mark.parametrize("kind,match", [("nan", "task MR: encoder returned NaN"), ("short", "task MR: encoder returned shape")])
def test_broken_encoder_output_names_the_task(dirs, kind, match):
    with pytest.raises(EncoderOutputError, match=match):
        run_suite(BrokenEncoder(kind), "MR", TINY, [1111], "mean", dirs, progress=False)


def test_bad_heads_and_language(dirs):
    from bridgeembed.encoders.baselines import HashBowEncoder

    with pytest.raises(ConfigError, match="no attention heads"):
        run_suite(HashBowEncoder(), "MR", TINY, [1111], "each", dirs, progress=False)
    with pytest.raises(ConfigError, match="out of range"):
        run_suite(HeadsEncoder(), "MR", TINY, [1111], "0,7", dirs, progress=False)
    with pytest.raises(UnknownLanguageError):
        run_suite(HeadsEncoder(), "MR", TINY, [1111], "mean", dirs, lang="fi", progress=False)


def test_cli_writes_outputs(dirs, tmp_path, capsys):
    from bridgeembed.cli.bench import main

    out = tmp_path / "cli"
    rc = main(["senteval", "--model", "bow", "--data", str(dirs.downstream.parent.parent), "--tasks", "STS12",
               "--config", "prototype", "--out", str(out), "--quiet"])
    assert rc == 0
    assert (out / "results.md").exists() and "STS12" in capsys.readouterr().out
    rc = main(["senteval", "--model", "bow", "--data", str(tmp_path / "nowhere"), "--tasks", "MR", "--out", str(out)])
    assert rc == 2
    assert "bridgeembed-data senteval --data DIR" in capsys.readouterr().err


def test_adapters_feed_real_senteval_batches():
    from bridgeembed.senteval import batcher, default_params, prepare

    params = default_params(HeadsEncoder(), "data/senteval", config="prototype", heads=2)
    assert params["kfold"] == 5 and params["classifier"]["optim"] == "rmsprop"
    assert prepare(params, [["a"]]) is None
    out = batcher(params, [["good", "film"], []])
    assert out.shape == (2, 16) and np.isfinite(out).all()


@pytest.mark.parametrize("heads, message", [("each", "one vector per sentence"), ("0,1", "one vector per sentence"),
                                            (99, "out of range"), ("x", "expected")])
def test_adapters_refuse_heads_that_give_no_single_vector(heads, message):
    from bridgeembed.errors import ConfigError
    from bridgeembed.senteval import default_params

    with pytest.raises(ConfigError, match=message):
        default_params(HeadsEncoder(), "data/senteval", heads=heads)


@pytest.mark.slow
def test_real_data_mr_and_sts12(real_data, tmp_path):
    from bridgeembed.encoders.baselines import HashBowEncoder
    from bridgeembed.senteval.config import get_config

    root = real_data("senteval/downstream/MR", "senteval/downstream/STS") / "senteval"
    res = run_suite(HashBowEncoder(), "MR,STS12", get_config("prototype"), [1111], "mean",
                    Dirs(root / "downstream", root / "probing"), progress=False)
    mr = res.tasks["MR"].views["mean"].metrics
    assert mr["ntest"] == 10662 and 55 < mr["acc"] < 80  # above chance, below learned encoders
    sts = res.tasks["STS12"].views["mean"].metrics
    assert sts["ntest"] == 3108 and 0.2 < sts["pearson"] < 0.8


def test_bench_commands_share_model_and_out_defaults(dirs, tmp_path, monkeypatch, capsys):
    """--model defaults to the shipped model and --out to results/TASK/MODEL in every bench command that scores one
    model (dev-retrieval and domains score several models, senteval-controls one model and its controls, named as
    arguments); --data takes the data root or the senteval folder itself."""
    import argparse

    from bridgeembed.cli.bench import COMMANDS, main
    from bridgeembed.cli.runtime import load

    for name, (target, _) in COMMANDS.items():
        parser = argparse.ArgumentParser()
        load(target).add_arguments(parser)
        defaults = {a.dest: a.default for a in parser._actions if a.option_strings}
        assert "model" in defaults or name in ("dev-retrieval", "domains", "senteval-controls"), name
        assert defaults.get("model", "general-m2m") == "general-m2m" and defaults.get("out") is None, name
    monkeypatch.chdir(tmp_path)
    senteval_folder = dirs.downstream.parent
    for data in (senteval_folder.parent, senteval_folder):
        assert main(["senteval", "--model", "bow", "--data", str(data), "--tasks", "STS12",
                     "--config", "prototype", "--quiet", "--no-plots"]) == 0
        assert (tmp_path / "results/senteval/bow/results.md").is_file()
    capsys.readouterr()


def test_a_request_that_scores_nothing_fails_and_writes_nothing(dirs, tmp_path, capsys):
    """`--tasks SNLI` without SNLI's train split exited 0 and replaced the earlier results with an empty table."""
    from bridgeembed.cli.bench import main

    snli = dirs.downstream / "SNLI"
    snli.mkdir()
    for split in ("dev", "test"):
        for f, text in [("s1", "a man .\n"), ("s2", "a person .\n"), ("labels", "entailment\n")]:
            (snli / f"{f}.{split}").write_text(text)
    out = tmp_path / "cli"
    out.mkdir()
    (out / "results.md").write_text("earlier results\n")
    rc = main(["senteval", "--model", "bow", "--data", str(dirs.downstream.parent.parent), "--tasks", "SNLI",
               "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert [line for line in err.splitlines() if line.strip()] == [
        next(line for line in err.splitlines() if line.startswith("error: no task was scored, so nothing was "
                                                                   "written: SNLI skipped: SNLI train split"))]
    assert (out / "results.md").read_text() == "earlier results\n" and sorted(p.name for p in out.iterdir()) == [
        "results.md"]
    with pytest.raises(DataError, match="no task was scored"):
        run_suite(HeadsEncoder(), "SNLI", TINY, [1111], "mean", dirs, progress=False)


@pytest.mark.parametrize("heads", ["mean,each", "each"])
def test_heads_on_the_command_line_get_a_mean_row_first(heads, dirs, tmp_path, monkeypatch, capsys):
    import bridgeembed.evaluation.models as models
    from bridgeembed.cli.bench import main

    monkeypatch.setattr(models, "load_encoder", lambda spec, device=None: HeadsEncoder())
    out = tmp_path / "cli"
    rc = main(["senteval", "--model", "toy", "--data", str(dirs.downstream.parent.parent), "--tasks", "STS12",
               "--heads", heads, "--out", str(out), "--quiet", "--no-plots"])
    assert rc == 0, capsys.readouterr().err
    saved = json.loads((out / "results.json").read_text())
    assert list(saved["tasks"]["STS12"]["views"]) == ["mean", "head 0", "head 1", "head 2"]
    assert saved["meta"]["heads"] == "mean,each"
    rows = [line.split("|")[1].strip() for line in (out / "results.md").read_text().splitlines()
            if line.startswith("| ") and "view" not in line and "---" not in line and "head" in line or
            line.startswith("| mean")]
    assert rows[:4] == ["mean", "head 0", "head 1", "head 2"]


def test_heads_mean_alone_is_one_row():
    from bridgeembed.cli.options import bench_heads as parse_heads  # the one parse of every bench (issue 41)

    assert [(str(h), m) for h, m in map(parse_heads, ["mean", "mean,each", "each", "0,2", "mean,1"])] == [
        ("mean", False), ("each", True), ("each", True), ("0,2", True), ("1", True)]
    with pytest.raises(ConfigError, match="--heads"):
        parse_heads("mean,x")


class _Words:
    def encode_many(self, texts):
        return [t.split() for t in texts]


class TruncatingEncoder(HeadsEncoder):
    """Cuts sentences of more than 3 words, and warns as BridgeEncoder does."""

    max_len = 4  # 3 subwords and the end marker
    tokenizers = {"en": _Words()}

    def encode(self, sentences, lang, heads="mean", batch_size=64):
        import warnings

        cut = sum(len(s.split()) > 3 for s in sentences)
        if cut:
            warnings.warn(f"{cut} of {len(sentences)} sentences are longer than the model's maximum of 4 subword "
                          "tokens and were truncated", stacklevel=2)
        return super().encode(sentences, lang, heads, batch_size)


def test_truncation_is_counted_beside_the_scores_not_warned(dirs, tmp_path, recwarn):
    """Issue 32: a bench run printed 7-8 raw UserWarnings; the share of sentences cut goes into the results."""
    res = run_suite(TruncatingEncoder(), "MR,STS12", TINY, [1111], "mean", dirs, progress=False)
    assert not [w for w in recwarn if "truncated" in str(w.message)]
    mr_sentences = [s for s in (dirs.downstream / "MR" / "rt-polarity.pos").read_text().split("\n")
                    + (dirs.downstream / "MR" / "rt-polarity.neg").read_text().split("\n") if s]
    assert res.tasks["MR"].truncated == pytest.approx(np.mean([len(s.split()) > 3 for s in set(mr_sentences)]))
    assert 0 < res.tasks["MR"].truncated < 1 and res.tasks["STS12"].truncated is not None  # cached ones counted too
    report.write(res, tmp_path / "out", plots=False)
    assert json.loads((tmp_path / "out" / "results.json").read_text())["tasks"]["MR"]["truncated"] == \
        res.tasks["MR"].truncated
    assert f"| MR | {100 * res.tasks['MR'].truncated:.1f} |" in (tmp_path / "out" / "results.md").read_text()
    assert run_suite(HeadsEncoder(), "MR", TINY, [1111], "mean", dirs, progress=False).tasks["MR"].truncated is None
