"""The measurement scripts of benchmarks/ that docs/performance.md, docs/senteval.md, docs/probing.md,
docs/mining.md, docs/training.md and the model cards quote, each run end to end on tiny inputs: a data root of
80 caption-like sentences in en/de/fr/cs written here, SentEval's layout in miniature, the shipped model or `bow`.
They check that each script runs and writes what it reports, not any figure."""

import gzip
import json

import pytest
import yaml

from tests.helpers import checkout_env, run_script
from tests.helpers.senteval_fixtures import write_tree

WORDS = {  # subject, verb, place: 5 x 4 x 4 = 80 parallel sentences
    "en": (["a man", "a woman", "a dog", "two children", "a girl"], ["is running", "is sitting", "is eating", "is playing"],
           ["in the park", "on the beach", "in a street", "near a lake"]),
    "de": (["ein mann", "eine frau", "ein hund", "zwei kinder", "ein mädchen"], ["läuft", "sitzt", "isst", "spielt"],
           ["im park", "am strand", "auf einer straße", "an einem see"]),
    "fr": (["un homme", "une femme", "un chien", "deux enfants", "une fille"], ["court", "est assis", "mange", "joue"],
           ["dans le parc", "sur la plage", "dans une rue", "près d'un lac"]),
    "cs": (["muž", "žena", "pes", "dvě děti", "dívka"], ["běží", "sedí", "jí", "hraje si"],
           ["v parku", "na pláži", "na ulici", "u jezera"]),
}


def sentences(lang: str) -> list:
    subjects, verbs, places = WORDS[lang]
    return [f"{s} {v} {p} ." for s in subjects for v in verbs for p in places]


def write_gz(path, lines) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory):
    """multi30k/ (train: the 80 sentences, val: 20 of them, test_2016_flickr: 20 others) and europarl-comtrans/
    (train: 60 lines, en and de)."""
    root = tmp_path_factory.mktemp("tiny") / "data"
    for lang in WORDS:
        lines = sentences(lang)
        write_gz(root / "multi30k" / f"train.{lang}.gz", lines)
        write_gz(root / "multi30k" / f"val.{lang}.gz", lines[::4])
        write_gz(root / "multi30k" / f"test_2016_flickr.{lang}.gz", lines[1::4])
        if lang in ("en", "de"):
            write_gz(root / "europarl-comtrans" / f"train.{lang}.gz", [f"{line[:-2]} , {n} ." for n in (1, 2, 3)
                                                                       for line in lines[:20]])
    return root


def run(script: str, *args, env=None) -> str:
    """SCRIPT (below benchmarks/ unless it names a folder) with this checkout's bridgeembed, one thread; its stdout."""
    return run_script(script, *args, env=checkout_env(**(env or {})))


# --- tables from result files ----------------------------------------------------------------------------
def neutrality(path, accuracy: float, mixed: float = 0.5) -> None:
    langs = ("en", "de", "fr", "cs")
    grid = {a: {b: None if a == b else accuracy + 0.01 * i for i, b in enumerate(langs)} for a in langs}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"raw": {"pair_accuracy": grid, "mixed_pool": {"all": mixed},
                                        "same_language": {"all": 0.1}}}))


def bleu_json(path, bleu: float) -> None:
    directions = {f"{a}-{b}": {"bleu": bleu + (a == "en")} for a in ("en", "de", "fr", "cs") for b in ("en", "de", "fr", "cs")}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"directions": directions, "split": "test_2016_flickr", "beam": 5,
                                "signature": "nrefs:1|case:lc"}))


def test_bleu_vs_paper_puts_the_papers_table_beside_each_direction(tmp_path):
    bleu_json(tmp_path / "bleu.json", 20.0)
    text = run("bleu_vs_paper.py", str(tmp_path / "bleu.json"))
    assert "| en-de | 21.00 | 38.48 |" in text and "| de-fr | 20.00 | — |" in text
    assert "| **mean of 12** | **20.25** | **38.6** |" in text and "Monolingual copies (A→A): cs-cs 20.00" in text


def test_space_summary_has_a_row_per_model_with_margin_and_heads(tmp_path):
    neutrality(tmp_path / "a" / "neutrality.json", 0.80)
    neutrality(tmp_path / "a" / "neutrality_margin.json", 0.90, mixed=0.7)
    for head in range(2):
        neutrality(tmp_path / "heads" / f"neutrality-head{head}.json", 0.30 + 0.1 * head)
    neutrality(tmp_path / "b" / "neutrality.json", 0.50)
    text = run("space_summary.py", f"a={tmp_path / 'a'},{tmp_path / 'heads'}", f"b={tmp_path / 'b'}")
    assert "| a | 81.5 | 80.0 | 50.0 | 10.0 | 91.5 | 90.0 | 70.0 | 36.5 |" in text
    assert "| b | 51.5 | 50.0 | 50.0 | 10.0 | – | – | – | – |" in text


def test_gpu_decision_picks_the_candidate_by_val_and_ships_only_past_the_current_model(tmp_path):
    for name, val, bleu in (("align", 0.90, 26.0), ("heads", 0.85, 27.0), ("current", 0.88, 25.0), ("paper", 0.5, 30.0)):
        folder = tmp_path / "eval" / name
        neutrality(folder / "neutrality-val" / "neutrality.json", val)
        neutrality(folder / "neutrality-test_2016_flickr" / "neutrality.json", val - 0.02)
        neutrality(folder / "heads-val" / "neutrality-head0.json", 0.3)
        bleu_json(folder / "bleu" / "bleu.json", bleu)
    text = run("docs/history/multi30k-m2m/gpu_decision.py", str(tmp_path))
    assert text.startswith("candidate: align (best val retrieval of align, heads)\nships: yes")
    assert "| current | 89.50 | 88.00 | 50.00 |" in text


# --- encoding ------------------------------------------------------------------------------------------
def test_encode_throughput_times_the_shipped_model_beside_another(shipped_model, tiny_root, tmp_path):
    out = tmp_path / "encode.json"
    text = run("encode_throughput.py", "--models", "general-m2m,bow", "--data", str(tiny_root), "--sentences", "12",
               "--batch-size", "4", "--threads", "1", "--repeats", "1", "--out", str(out))
    rows = json.loads(out.read_text())
    assert [r["model"] for r in rows] == ["general-m2m", "bow"] and all(r["sentences"] == 12 for r in rows)
    assert all(r["sentences_per_s"] > 0 for r in rows) and "| general-m2m |" in text


def test_encode_memory_encodes_short_sentences(shipped_model, tiny_root):
    text = run("encode_memory.py", "--data", str(tiny_root), "--sentences", "50", "--batch-size", "16")
    assert text.startswith("50 sentences -> (50, ") and "float32" in text


@pytest.mark.slow  # a dozen passes of the shipped model in four settings, and a translator
def test_quantize_measures_every_section_on_a_tiny_root(shipped_model, tiny_root, tmp_path):
    out = tmp_path / "quantize.json"
    run("quantize.py", "--data", str(tiny_root), "--reference", "bow", "--sentences", "8", "--batch-size", "4",
        "--repeats", "1", "--translate", "3", "--corpus", "40", "--out", str(out))
    result = json.loads(out.read_text())
    speeds = {r["encoder"]: r for r in result["speed"]}
    assert {"fp32", "int8", "bow"} <= set(speeds) and speeds["bow"]["relative_to_reference"] == 1.0
    assert set(result["retrieval"]) >= {"fp32", "int8", "largest_cosine_change"}
    assert 0 <= result["retrieval"]["fp32"]["mean"] <= 100 and len(result["retrieval"]["fp32"]["pairs"]) == 12
    assert {(r["direction"], r["beam"]) for r in result["translation"]} == {("en-de", 1), ("en-de", 5), ("de-en", 1),
                                                                          ("de-en", 5)}
    search = result["search"]
    assert search[0]["precision"] == "float32" and {r["precision"] for r in search[1:]} == {"int8", "binary"}


# --- mining --------------------------------------------------------------------------------------------
def test_mining_threshold_picks_a_threshold_on_planted_dev_pairs(shipped_model, tiny_root, tmp_path):
    out, results = tmp_path / "threshold.json", tmp_path / "m-mining.json"
    text = run("mining_threshold.py", "--model", "general-m2m", "--data", str(tiny_root), "--distractors", "20",
               "--europarl-dev", "10", "--at", "1.1", "--out", str(out), "--results", str(results))
    report = json.loads(out.read_text())
    assert set(report["at_threshold"]) == {"captions", "europarl"} and report["distractors"]["europarl"] == 20
    assert report["at_given"]["threshold"] == 1.1 and "| captions |" in text and "at threshold 1.1:" in text
    record = json.loads(results.read_text())  # --results: the figures for docs/results/ (docs/tools/figures.py)
    assert record["command"].startswith("python benchmarks/mining_threshold.py --model general-m2m ")
    assert record["k"] == 4 and record["distractors"] == report["distractors"] and f"wrote {results}" in text
    given = report["at_given"]  # with --at, the sets' figures are at that threshold, as a model card's
    assert record["figures"] == {"best_threshold": report["threshold"], "default_threshold": 1.1,
                                 **{f"{name}.{stat}": pytest.approx(given[name][stat], abs=1e-3)
                                    for name in ("captions", "europarl") for stat in ("precision", "recall", "f1")}}


@pytest.mark.slow  # six processes: two corpora, two encodings, two mining runs
def test_mining_quantized_mines_float32_int8_and_binary_shards(shipped_model, tiny_root, tmp_path):
    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    out = tmp_path / "mq.json"
    # 1,030 "sentences a side, the 1,000 planted included": 30 spliced captions and the 20 test captions here
    text = run("docs/history/studies/mining_quantized.py", "--data", str(tiny_root), "--work", str(tmp_path / "work"), "--size", "1030",
               "--index", "flat", "--runs", "binary+f32", "--out", str(out), env={"OPENBLAS_NUM_THREADS": "1"})
    result = json.loads(out.read_text())
    assert list(result["runs"]) == ["float32", "binary+f32"]
    assert result["runs"]["float32"]["recall_of_float32_pairs"] == 1.0
    assert all(r["peak_rss_kib"] > 0 and r["planted"]["planted_found"] >= 0 for r in result["runs"].values())
    assert set(result["index_bytes"]) == {"float32", "int8", "binary"} and "| binary+f32 |" in text


# --- SentEval and probing ------------------------------------------------------------------------------
def test_senteval_suite_times_each_task_of_each_run(tmp_path):
    root = write_tree(tmp_path / "data" / "senteval").parent
    out = tmp_path / "suite"
    run("senteval_suite.py", "--model", "bow", "--config", "prototype", "--tasks", "MR,MRPC", "--threads", "1",
        "--data", str(root), "--out", str(out))
    suite = json.loads((out / "suite.json").read_text())
    assert [(r["model"], r["config"]) for r in suite["runs"]] == [("bow", "prototype")]
    assert set(suite["runs"][0]["tasks"]) == {"MR", "MRPC"} and "| **total** |" in (out / "suite.md").read_text()


def test_senteval_fidelity_compares_the_harness_with_the_sequential_reference(tmp_path):
    root = write_tree(tmp_path / "data" / "senteval").parent
    out = tmp_path / "fidelity.json"
    text = run("docs/history/studies/senteval_fidelity.py", "--model", "bow", "--data", str(root), "--tasks", "MRPC", "--seeds", "1",
               "--out", str(out))
    result = json.loads(out.read_text())
    assert set(result) == {"MRPC"} and all(len(rows) == 1 for rows in result.values())
    assert all(0 <= r["harness"] <= 100 and 0 <= r["reference"] <= 100 for rows in result.values() for r in rows)
    assert "| seed | harness | L2 |" in text


def test_probing_tables_builds_the_tasks_and_scores_them(tmp_path):
    root = write_tree(tmp_path / "data" / "senteval").parent
    down = root / "senteval" / "downstream"
    english = [f"the {a} {b} saw {' '.join(['small'] * n)} birds near the {c} ." for a in ("old", "young", "tall")
               for b in ("man", "woman") for c in ("river", "house", "hill") for n in range(8)]
    (down / "SNLI").mkdir()
    for split in ("dev", "test"):
        for side in ("s1", "s2"):
            (down / "SNLI" / f"{side}.{split}").write_text("\n".join(english[::2] if side == "s1" else english[1::2]))
    (down / "STS" / "STSBenchmark").mkdir()
    for split in ("train", "dev", "test"):
        rows = [f"g\tf\t2012\t{i}\t3.0\t{english[i]}\t{english[i + 1]}" for i in range(0, 40, 2)]
        (down / "STS" / "STSBenchmark" / f"sts-{split}.csv").write_text("\n".join(rows) + "\n")
    xnli = root / "xnli" / "xtreme"
    xnli.mkdir(parents=True)
    german = [f"der {a} {b} sah {' '.join(['kleine'] * n)} vögel am {c} ." for a in ("alte", "junge", "große")
              for b in ("mann", "hund") for c in ("fluss", "haus", "berg") for n in range(8)]
    for split in ("dev", "test"):
        (xnli / f"{split}-de.tsv").write_text("".join(f"{german[i]}\t{german[i + 1]}\tneutral\n"
                                                      for i in range(0, len(german) - 1, 2)))
    out = tmp_path / "probing"
    run("probing_tables.py", "--model", "bow", "--data", str(root), "--langs", "en,de", "--heads", "mean",
        "--config", "prototype", "--size", "400", "--out", str(out))
    for lang in ("en", "de"):
        assert (out / "corpora" / f"{lang}.txt").stat().st_size > 0 and (out / f"probing-{lang}" / "README.md").is_file()
        results = json.loads((out / f"results-{lang}-mean" / "results.json").read_text())
        assert any(task["status"] == "ok" for task in results["tasks"].values())


# --- training ------------------------------------------------------------------------------------------
@pytest.mark.slow  # two trainings, each in its own process
def test_data_pipeline_times_a_first_start_and_a_resume(tiny_root, tmp_path):
    out = tmp_path / "pipeline.json"
    tiny = ["model.emb_dim=16", "model.enc_hidden=16", "model.dec_hidden=16", "model.bridge_dim=16", "model.heads=2",
            "tokenizer.vocab_size=60", "train.batch_size=8", "train.log_every=5"]
    text = run("docs/history/studies/data_pipeline.py", "--data", str(tiny_root), "--sizes", "160", "--work", str(tmp_path / "work"),
               "--out", str(out), *(f"--set={override}" for override in tiny))
    record = json.loads(out.read_text())[-1]
    assert record["lines"] == 160 and record["first"]["to_first_step_s"] > 0 and record["second"]["to_first_step_s"] > 0
    assert record["cache_mb"] >= 0 and "| after | 160 |" in text
    train = gzip.open(tmp_path / "work" / "corpus-160" / "train.de.gz", "rt", encoding="utf-8").read().splitlines()
    assert len(train) == 160 and train[80] == "rep1 " + train[0]  # the second copy marked


def test_vocab_size_trains_each_size_alike_and_resumes(tmp_path):
    """Issue 42: the vocabulary chosen by dev retrieval and pieces a word. Each size is its own run of the
    trainer (the same steps), its tokenizers of that size; a second call finds the runs done and measures again."""
    out, runs = tmp_path / "vocab.json", tmp_path / "runs"
    args = ("docs/history/studies/vocab_size.py", "--dry", "--sizes", "40,80", "--steps", "4", "--out", str(runs), "--json", str(out))
    text = run(*args)
    rows = {row["vocab_size"]: row for row in json.loads(out.read_text())["sizes"]}
    assert set(rows) == {40, 80} and all(row["steps"] == 4 and 0 <= row["dev_mean"] <= 100 for row in rows.values())
    # the larger vocabulary spells the same dev text in fewer pieces
    assert rows[80]["pieces_a_word"]["corpus"] < rows[40]["pieces_a_word"]["corpus"]
    assert "| 40 |" in text and "| 80 |" in text
    assert json.loads(out.read_text())["command"].startswith("python docs/history/studies/vocab_size.py --dry --sizes 40,80")
    for size in (40, 80):
        config = yaml.safe_load((runs / f"vocab-{size}" / "config.yaml").read_text())
        assert config["tokenizer"]["vocab_size"] == size
    again = json.loads(out.read_text())
    run(*args)  # the runs are at their steps: nothing trains again
    assert [r["dev_mean"] for r in json.loads(out.read_text())["sizes"]] == [r["dev_mean"] for r in again["sizes"]]
