"""The scripts that write docs/results/ (issue 41): each writes its figures with the command, commit, machine and
date, on tiny inputs: docs/tools/results_file.py and install_times.py (the docs tooling), tiny_retrieval.py and
xnli_results.py and bleu_results.py (domains.py's and senteval_controls.py's --results: tests/benchmarks/test_benchmark_scripts.py;
mining_threshold.py's: tests/benchmarks/test_measurement_scripts.py)."""

import json
import sys

import pytest

from tests.helpers import REPO, checkout_env, run_script
from tests.helpers.toy import write_toy_corpus

TOOLS = REPO / "docs" / "tools"


@pytest.fixture
def tools_module():
    """Import a module of docs/tools/ by name (the folder is on sys.path only while the test runs)."""
    sys.path.insert(0, str(TOOLS))
    yield __import__
    sys.path.remove(str(TOOLS))


def run(script: str, *args, **env) -> str:
    return run_script(script, *args, env=checkout_env(**env))


def provenance(path) -> dict:
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["command"].startswith("python benchmarks/") and record["commit"] and record["date"]
    assert record["machine"]["cpus"] >= 1 and len(record["machine"]["loadavg"]) == 3
    return record


def test_results_file_records_the_command_commit_machine_and_date(tools_module, tmp_path):
    results_file = tools_module("results_file")
    path = results_file.write_results(tmp_path / "x" / "r.json", {"a.b": 1.5}, command="python benchmarks/x.py",
                                      setting="y")
    record = provenance(path)
    assert record["figures"] == {"a.b": 1.5} and record["setting"] == "y"
    assert results_file.read_figures(path) == {"a.b": 1.5}
    assert results_file.git_commit(tmp_path) == ("unknown", False)  # outside a checkout


def test_results_file_writes_numpy_figures_and_a_nan_as_valid_json(tools_module, tmp_path):
    """Issue 49, items 9 and 13: numpy float32 and int64 figures were a TypeError at the very end of a benchmark,
    and nothing was written; a NaN was written as a bare NaN, which is not JSON; a path under a file was a
    FileExistsError."""
    import numpy as np

    from bridgeembed.errors import DataError, WriteError

    results_file = tools_module("results_file")
    path = tmp_path / "r.json"
    with pytest.warns(UserWarning, match=r"r.json: figures.b, spread not a finite number \(NaN or infinite\)"):
        results_file.write_results(path, {"a": np.float32(1.5), "n": np.int64(7), "b": float("nan")},
                                   command="python benchmarks/x.py", spread=np.float64("inf"))

    def no_constant(name):
        raise AssertionError(f"{name} is not JSON")

    record = json.loads(path.read_text(encoding="utf-8"), parse_constant=no_constant)
    assert record["figures"] == {"a": 1.5, "n": 7, "b": None} and record["spread"] is None
    with pytest.raises(DataError, match=r"r.json: figure 'b' is null, not a number"):
        results_file.read_figures(path)
    path.write_text('{"figures": {"a": 1.5', encoding="utf-8")
    with pytest.raises(DataError, match=r"r.json is not valid JSON \(.* at line 1, column \d+\): cut short"):
        results_file.read_figures(path)
    with pytest.raises(WriteError, match=r"cannot write .*r.json/x/s.json: .*r.json is a file, not a folder"):
        results_file.write_results(path / "x" / "s.json", {"a": 1.0}, command="python benchmarks/x.py")


def test_tiny_retrieval_trains_both_arms_and_writes_their_figures(tmp_path):
    corpus = write_toy_corpus(tmp_path / "toy", n_train=200, n_valid=20)
    out = tmp_path / "tiny.json"
    text = run("tiny_retrieval.py", "--out", str(out), "--set", f"data.path={corpus}", "--set", "data.languages=[x,y]",
               "--set", "tokenizer.moses=false", "--set", "tokenizer.vocab_size=60", "--set", "train.max_steps=4",
               "--set", "train.valid_every=2", "--set", "train.valid_sentences=10",
               BRIDGEEMBED_CACHE=str(tmp_path / "cache"))
    record = provenance(out)
    figures = record["figures"]
    assert set(figures) == {f"align_{w}.{k}" for w in ("1.0", "0") for k in ("retrieval", "bleu", "seconds", "step")}
    assert figures["align_1.0.step"] == figures["align_0.step"] == 4 and 0 <= figures["align_0.retrieval"] <= 100
    assert "train.threads=1" in record["overrides"] and "align_weight 0: dev retrieval" in text


def test_install_times_reads_pytests_summary_and_the_history_size(tools_module):
    install_times = tools_module("install_times")
    log = "....\n==== 890 passed, 11 skipped, 2 warnings in 2760.12s (0:46:00) ====\n"
    assert install_times.pytest_summary(log) == {"passed": 890, "skipped": 11, "warnings": 2}
    assert install_times.pytest_summary("=== 1 failed, 3 passed in 1.0s ===") == {"failed": 1, "passed": 3}
    assert install_times.pytest_summary("make: *** [test] Error 1") == {}
    assert install_times.history_mib() > 1
    env = install_times.clean_environment()
    assert "VIRTUAL_ENV" not in env and str(REPO / ".venv") not in env["PATH"]


def test_xnli_results_writes_english_de_fr_and_the_zero_shot_drop(tmp_path):
    folder = tmp_path / "xnli" / "m"  # a result there already is reused
    folder.mkdir(parents=True)
    accuracy = {"en": {"en": 0.47, "de": 0.411, "fr": 0.402}}
    (folder / "xnli.json").write_text(json.dumps({"accuracy": accuracy, "zero_shot_drop": {"overall": 0.0635,
                                                                                           "en": 0.0635}}))
    results = tmp_path / "m-xnli.json"
    text = run("xnli_results.py", "m", "--out", str(tmp_path / "xnli"), "--results", str(results))
    record = provenance(results)
    assert record["figures"] == pytest.approx({"en": 47.0, "de": 41.1, "fr": 40.2, "drop": 6.35})
    assert record["model"] == "m" and "m: en 47.0, de 41.1, fr 40.2, drop 6.3" in text


def _bleu_folder(folder, beam, directions, base):
    folder.mkdir(parents=True)
    scores = {d: {"bleu": base + i} for i, d in enumerate(directions)}
    (folder / "bleu.json").write_text(json.dumps({"beam": beam, "directions": scores}))


def test_bleu_results_writes_test_2016_and_newstest2013_from_scored_folders(tmp_path):
    every = ["en-de", "de-en", "en-fr", "fr-en", "en-cs", "cs-en", "de-fr", "fr-de", "de-cs", "cs-de", "fr-cs", "cs-fr"]
    out = tmp_path / "bleu"  # folders scored there already are read as they are
    _bleu_folder(out / "test2016-greedy", 1, every, 10.0)
    _bleu_folder(out / "test2016-beam5", 5, every, 20.0)
    _bleu_folder(out / "newstest2013-greedy", 1, every[:6], 1.0)
    test, news = tmp_path / "m-bleu-test2016.json", tmp_path / "m-bleu.json"
    text = run("bleu_results.py", "m", "--out", str(out), "--results", str(test), "--news-results", str(news),
               "--weights", "int8")
    figures = provenance(test)["figures"]
    assert figures["greedy.en-de"] == 10.0 and figures["greedy.cs-fr"] == 21.0 and figures["beam5.mean"] == 25.5
    assert figures["greedy.mean4"] == 11.5 and figures["beam5.mean4"] == 21.5 and figures["newstest2013.mean"] == 3.5
    record = provenance(news)
    assert record["figures"] == {"en-de": 1.0, "de-en": 2.0, "en-fr": 3.0, "fr-en": 4.0, "en-cs": 5.0, "cs-en": 6.0,
                                 "mean": 3.5}
    assert record["weights"] == "int8" and "--split test_2016_flickr --beam 5" in record["translations"]
    assert "test_2016 greedy en<->de/fr 11.50, 12 directions 15.50, beam 5 25.50; newstest2013 3.50" in text
    (out / "test2016-beam5" / "bleu.json").write_text(json.dumps({"beam": 1, "directions": {}}))
    with pytest.raises(AssertionError, match="is not this set's"):
        run("bleu_results.py", "m", "--out", str(out), "--results", str(test), "--news-results", str(news))
