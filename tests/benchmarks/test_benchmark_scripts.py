"""The benchmark scripts behind the README's and the model card's figures run, on tiny inputs."""

import json
import os
import subprocess
import sys

import pytest

from tests.helpers import REPO, checkout_env, run_script

run = run_script


def test_train_throughput_times_every_variant(tmp_path):
    out = tmp_path / "speed.json"
    text = run("train_throughput.py", "--configs", "shipped", "--steps", "1", "--rounds", "1", "--threads", "1",
               "--devices", "cpu", "--batch", "16", "--out", str(out))
    rows = json.loads(out.read_text())
    assert [r["variant"] for r in rows] == ["baseline", "synced", "fast"]
    assert rows[0]["precision"] == "float32" and all(r["pairs_per_s"] > 0 for r in rows)
    assert all(r["batch"] == 16 for r in rows)
    # the same initial weights, batches of the same length distribution: the losses agree (nothing is dropped)
    assert abs(rows[1]["final_loss"] - rows[2]["final_loss"]) < 0.05 * abs(rows[1]["final_loss"])
    assert "| shipped | cpu | fast | system |" in text


def test_train_throughput_says_how_malloc_ran(tmp_path):
    for mode in ("held", "system"):
        out = tmp_path / f"{mode}.json"
        text = run("train_throughput.py", "--configs", "shipped", "--variants", "fast", "--steps", "1", "--rounds",
                   "1", "--threads", "1", "--devices", "cpu", "--batch", "16", "--malloc", mode, "--out", str(out))
        assert [r["malloc"] for r in json.loads(out.read_text())] == [mode]
        assert f"| shipped | cpu | fast | {mode} |" in text


def run_here(script: str, *args) -> str:
    """As `run`, with this checkout's bridgeembed first on the path, one thread."""
    return run_script(script, *args, env=checkout_env())


def test_mining_benchmark_search_and_mine_run_on_random_vectors(tmp_path):
    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    run_here("mining.py", "search", "--random", "--size", "2000", "--queries", "50", "--out", str(tmp_path / "s.json"))
    search = json.loads((tmp_path / "s.json").read_text())
    assert set(search["indexes"]) == {"flat", "ivf"} and search["indexes"]["ivf"]["config"]["nlist"] == 51
    assert 0 <= search["indexes"]["ivf"]["recall_at_4"] <= 1 and search["peak_rss_mib"] > 0
    # the nprobe trade-off: one row per value, recall rising with cells searched, exact when all 51 are
    run_here("mining.py", "search", "--random", "--size", "2000", "--queries", "50", "--nprobe", "1", "8", "51",
             "--out", str(tmp_path / "sweep.json"))
    rows = json.loads((tmp_path / "sweep.json").read_text())["indexes"]
    assert list(rows) == ["flat", "ivf-nprobe1", "ivf-nprobe8", "ivf-nprobe51"]
    recalls = [rows[f"ivf-nprobe{n}"]["recall_at_4"] for n in (1, 8, 51)]
    assert recalls[0] < recalls[1] <= recalls[2] == 1.0 and rows["ivf-nprobe8"]["config"]["nprobe"] == 8
    run_here("mining.py", "mine", "--random", "--size", "2000", "--extrapolate", "20000", "--out", str(tmp_path / "m.json"))
    mined = json.loads((tmp_path / "m.json").read_text())
    assert mined["pairs"] > 0 and mined["extrapolated"]["note"] == "extrapolated, not measured"


@pytest.mark.slow
def test_mining_benchmark_bucc_plants_and_finds_translations(tmp_path, real_data):
    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    root = real_data("multi30k")
    text = run_here("mining.py", "bucc", "--data", str(root), "--distractors", "200", "--out", str(tmp_path / "b.json"))
    result = json.loads((tmp_path / "b.json").read_text())
    assert set(result["pairs"]) == {"de-en", "cs-en"}
    for row in result["pairs"].values():
        # 1,000 planted translations among 200 distractors: both scorings find nearly all of them; margin's gain
        # over cosine shows with thousands of distractors (docs/mining.md), here they are level (stage 10: within
        # 0.3 points, stage 9: margin ahead)
        assert row["absolute"]["f1"] > 0.9 and row["ratio"]["f1"] > row["absolute"]["f1"] - 0.01
    assert "| de-en | ratio margin |" in text


@pytest.mark.slow
def test_threads_under_load_times_each_setting_with_spinners(tmp_path, real_data):
    data = real_data("senteval/downstream/MR")  # the released files: a subprocess checks their line counts
    out = tmp_path / "threads.json"
    run("docs/history/studies/threads_under_load.py", "--data", str(data), "--tasks", "MR", "--model", "bow", "--busy", "1",
        "--repeats", "1", "--out", str(out))
    result = json.loads(out.read_text())
    assert result["busy"] == 1 and set(result["median"]) == {"default", "--threads 1", f"--threads {result['cores']}"}
    assert all(len(times) == 1 and times[0] > 0 for times in result["seconds"].values())


def small_multi30k(tmp_path, real_data, rows: int, langs=("en", "de", "cs")):
    """A data root whose multi30k/ holds the first `rows` train and val lines and the whole test_2016 set."""
    import gzip

    source = real_data("multi30k") / "multi30k"
    folder = tmp_path / "data" / "multi30k"
    folder.mkdir(parents=True)
    for lang in langs:
        for split, keep in (("train", rows), ("val", rows), ("test_2016_flickr", None)):
            with gzip.open(source / f"{split}.{lang}.gz", "rt", encoding="utf-8") as handle:
                lines = handle.read().splitlines()[:keep]
            with gzip.open(folder / f"{split}.{lang}.gz", "wt", encoding="utf-8") as handle:
                handle.write("\n".join(lines) + "\n")
    return folder.parent


@pytest.mark.slow
def test_mining_benchmark_corpus_splices_captions_and_plants_the_test_set(tmp_path, real_data):
    root = small_multi30k(tmp_path, real_data, 200, langs=("en", "de"))
    for lang in ("en", "de"):
        run_here("mining.py", "corpus", "--data", str(root), "--lang", lang, "--size", "3000",
                 "--text", str(tmp_path / f"big.{lang}"))
    en = (tmp_path / "big.en").read_text(encoding="utf-8").splitlines()
    de = (tmp_path / "big.de").read_text(encoding="utf-8").splitlines()
    assert len(en) == len(de) == 4000 and len(set(en[:3000])) == 3000
    test_de = gzip_lines(root / "multi30k" / "test_2016_flickr.de.gz")
    assert de[3000:] == test_de and not set(de[:3000]) & set(test_de)
    # each synthetic German line is made of words of the German half of train (rows 100..199), never the English
    train_de = gzip_lines(root / "multi30k" / "train.de.gz")
    own_words = {w for line in train_de[100:] for w in line.split()}
    assert all(set(line.split()) <= own_words for line in de[:3000])


def gzip_lines(path):
    import gzip

    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()


def test_mining_benchmark_score_counts_planted_pairs_at_the_best_threshold(tmp_path):
    root = tmp_path / "data" / "multi30k"
    root.mkdir(parents=True)
    import gzip

    for lang, lines in (("de", ["Ein Hund.", "Eine Katze.", "Ein Haus."]), ("en", ["A dog.", "A cat.", "A house."])):
        with gzip.open(root / f"test_2016_flickr.{lang}.gz", "wt", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
    (tmp_path / "pairs.tsv").write_text("1.30\tEin Hund.\tA dog.\n1.20\tEine Katze.\tA cat.\n"
                                        "1.10\tEin Baum.\tA tree.\n1.00\tEin Haus.\tA cat.\n", encoding="utf-8")
    run_here("mining.py", "score", "--data", str(tmp_path / "data"), "--pairs", str(tmp_path / "pairs.tsv"),
             "--src-lang", "de", "--out", str(tmp_path / "score.json"))
    result = json.loads((tmp_path / "score.json").read_text())
    assert result["planted_found"] == 2 and result["mined_pairs"] == 4
    assert result["precision"] == 1.0 and abs(result["recall"] - 2 / 3) < 1e-9 and result["threshold"] == 1.2


@pytest.mark.slow
def test_mining_benchmark_bucc_fills_up_with_spliced_captions(tmp_path, real_data):
    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    root = small_multi30k(tmp_path, real_data, 100)
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "mining.py"), "bucc", "--data", str(root),
                           "--distractors", "150", "--pairs", "en-de"], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=600)
    assert done.returncode != 0 and "add --splice" in done.stderr and "at most 100" in done.stderr
    run_here("mining.py", "bucc", "--data", str(root), "--distractors", "150", "--pairs", "en-de", "--splice",
             "--out", str(tmp_path / "b.json"))
    result = json.loads((tmp_path / "b.json").read_text())
    assert result["distractors_by_kind"]["de"] == {"captions": 100, "spliced": 50}
    assert result["pairs"]["de-en"]["ratio"]["f1"] > 0.3


def test_mining_benchmark_mines_shard_folders_and_compares_with_exact(tmp_path):
    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    from bridgeembed.encoders.baselines import HashBowEncoder
    from bridgeembed.mining import encode_options, encode_to_shards

    words = ["dog", "cat", "man", "woman", "runs", "sits", "red", "blue", "park", "beach", "ball", "car"]
    rng = __import__("random").Random(0)
    for side in ("src", "tgt"):
        path = tmp_path / f"{side}.txt"
        path.write_text("".join(" ".join(rng.choices(words, k=6)) + "\n" for _ in range(3000)), encoding="utf-8")
        encode_to_shards(HashBowEncoder(dim=32), path, "en", tmp_path / side,
                         encode_options(normalize=True), shard_size=1000)
    run_here("mining.py", "mine", "--src-shards", str(tmp_path / "src"), "--tgt-shards", str(tmp_path / "tgt"),
             "--size", "2500", "--compare-exact", "--out", str(tmp_path / "m.json"))
    mined = json.loads((tmp_path / "m.json").read_text())
    assert mined["vectors"] == "encoded" and mined["size"] == 2500 and mined["pairs"] > 0
    assert mined["exact_pairs"] > 0 and 0 < mined["recall_of_exact_pairs"] <= 1


def test_plot_training_draws_a_run_as_a_64_colour_png_and_compacts_others(toy_run, tmp_path):
    from PIL import Image

    run_dir, _ = toy_run
    png = tmp_path / "training.png"
    run("plot_training.py", str(run_dir / "log.jsonl"), str(png))
    with Image.open(png) as image:
        # three panels (loss, BLEU, retrieval): wider than two; a palette of at most 64 colours
        assert image.mode == "P" and image.size == (1500, 360) and len(image.getcolors()) <= 64
    full = tmp_path / "full.png"  # the plot as an RGBA PNG, as matplotlib writes one (the card's older plots)
    with Image.open(png) as image:
        image.convert("RGBA").save(full)
    before = full.stat().st_size
    run("plot_training.py", "--compact", str(full))
    with Image.open(full) as image:
        assert image.mode == "P" and image.size == (1500, 360)
    assert full.stat().st_size < before


def test_valid_table_lists_every_validation_of_a_run(toy_run, tmp_path):
    run_dir, state = toy_run
    log = run_dir / "log.jsonl"
    valid = [json.loads(line) for line in log.read_text().splitlines() if '"valid"' in line]
    text = run("valid_table.py", f"toy={log}")
    rows = [line for line in text.splitlines() if line.startswith("| toy |")]
    assert len(rows) == len(valid) == 2
    last = valid[-1]
    cells = [c.strip() for c in rows[-1].strip("|").split("|")]
    assert cells[1] == f"{last['step']:,}" and cells[2] == f"{last['step'] * 64 / 1000:,.0f}k"  # toy batch: 64
    assert cells[3] == f"{last['mean_bleu']:.2f}" and cells[4] == f"{last['retrieval']['mean']:.1f}"
    assert cells[8] == f"{last['retrieval']['heads_mean']:.1f}"
    missing = subprocess.run([sys.executable, str(REPO / "benchmarks" / "valid_table.py"), str(tmp_path / "x.jsonl")],
                             capture_output=True, text=True)
    assert missing.returncode == 1 and "x.jsonl: no such log" in missing.stderr


def _senteval_results(folder, scores):
    folder.mkdir(parents=True)
    tasks = {name: {"status": "ok", "primary": primary, "views": {"mean": {"metrics": {primary: value}}}}
             for name, (primary, value) in scores.items()}
    tasks["SNLI"] = {"status": "skipped", "primary": "acc", "views": {}}
    (folder / "results.json").write_text(json.dumps({"meta": {}, "tasks": tasks}))


def test_senteval_controls_compares_with_the_mean_of_the_seeds(tmp_path):
    from bridgeembed.paths import model_folder

    out = tmp_path / "controls"
    _senteval_results(out / f"{model_folder('m')}-default", {"MR": ("acc", 70.0), "STSB": ("pearson", 0.50)})
    for seed, (mr, sts) in enumerate([(68.0, 0.60), (71.0, 0.62), (69.5, 0.58)]):
        _senteval_results(out / f"{model_folder(f'untrained:m@{seed}')}-default",
                          {"MR": ("acc", mr), "STSB": ("pearson", sts)})
    results = tmp_path / "m-senteval.json"  # --results: the figures for docs/results/ (docs/tools/figures.py)
    text = run("senteval_controls.py", "m", "--out", str(out), "--results", str(results))
    assert "| MR | 70.0 | 69.5 ± 1.2 | yes |" in text and "| STSB | 50.0 | 60.0 ± 1.6 | no |" in text
    assert "m beats the mean of 3 untrained controls on 1 of 2 tasks" in text
    record = json.loads(results.read_text())
    assert record["figures"] == pytest.approx({  # the controls' mean and spread per task, in the model's unit
        "beats": 1, "tasks": 2, "model.MR": 70.0, "model.STSB": 0.5, "controls.MR.mean": 69.5,
        "controls.MR.std": 1.2247, "controls.STSB.mean": 0.6, "controls.STSB.std": 0.0163})
    assert record["seeds"] == [0, 1, 2] and record["command"].startswith("python benchmarks/senteval_controls.py m ")


def test_domains_table_from_retrieval_results(tmp_path):
    out = tmp_path / "domains"
    for split, base in (("test_2016", 0.9), ("val", 0.8), ("pud", 0.1)):
        folder = out / "m" / split
        folder.mkdir(parents=True)
        pairs = [{"pair": f"{a}-{b}", "a_to_b": base, "b_to_a": base + 0.02}
                 for i, a in enumerate(("en", "de", "fr", "cs")) for b in ("en", "de", "fr", "cs")[i + 1:]]
        (folder / "retrieval.json").write_text(json.dumps({"pairs": pairs}))
    text = run("domains.py", "m", "--out", str(out))
    assert "| m | 91.0 | 90.0 | 81.0 | 80.0 | 11.0 | 10.0 | 12.0 | 11.0 |" in text


def test_mining_threshold_results_figures_are_at_the_best_threshold_without_at():
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import numpy as np
        from mining_threshold import results_figures

        from bridgeembed.mining.threshold import at
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    pairs = {"scores": np.array([1.3, 1.2, 1.1, 1.0]), "hit": np.array([1.0, 0.0, 1.0, 0.0]), "gold": 2}
    report = {"threshold": 1.1, "at_threshold": {"captions": at(1.1, pairs)}}  # --results without --at: at the best
    assert results_figures(report) == pytest.approx({"best_threshold": 1.1, "captions.precision": 66.667,
                                                     "captions.recall": 100.0, "captions.f1": 80.0})


def test_mining_threshold_help_gives_its_own_options_then_the_commands():
    text = run("mining_threshold.py", "--help")
    assert text.index("--results FILE") < text.index("usage: bridgeembed-bench mining-threshold") < text.index("--distractors")


def test_domains_table_adds_a_column_per_dev_set(tmp_path):
    out = tmp_path / "domains"
    for split, base in (("test_2016", 0.9), ("val", 0.8), ("pud", 0.1), ("europarl", 0.3)):
        folder = out / "m" / split
        folder.mkdir(parents=True)
        langs = ("en", "de") if split == "europarl" else ("en", "de", "fr", "cs")
        pairs = [{"pair": f"{a}-{b}", "a_to_b": base, "b_to_a": base + 0.02}
                 for i, a in enumerate(langs) for b in langs[i + 1:]]
        (folder / "retrieval.json").write_text(json.dumps({"pairs": pairs}))
    results = tmp_path / "m-domains.json"  # --results: the figures for docs/results/ (docs/tools/figures.py)
    text = run("domains.py", "m", "--out", str(out), "--dev", "europarl=x/dev.{lang}", "--results", str(results))
    assert "| dev europarl mean |" in text and "| m | 91.0 | 90.0 | 81.0 | 80.0 | 11.0 | 10.0 | 12.0 | 11.0 | 31.0 |" in text
    record = json.loads(results.read_text())
    assert record["command"].startswith("python benchmarks/domains.py m ") and record["machine"]["cpus"] >= 1
    figures = record["figures"]
    assert figures["m.test_2016.mean"] == pytest.approx(91.0) and figures["m.test_2016.worst"] == pytest.approx(90.0)
    assert figures["m.test_2016.best"] == pytest.approx(92.0) and figures["m.europarl.mean"] == pytest.approx(31.0)
    assert figures["m.pud.en-de"] == pytest.approx(10.0) and figures["m.pud.de-en"] == pytest.approx(12.0)
    assert figures["m.pud.en-de-fr"] == pytest.approx(11.0)
    bad = subprocess.run([sys.executable, str(REPO / "benchmarks" / "domains.py"), "m", "--dev", "pud=x.{lang}"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--dev takes NAME=TEMPLATE" in bad.stderr


def test_int8_storage_exports_the_model_and_tables_each_figure_beside_its_int8_one(toy_run, tmp_path):
    checkpoint, out = toy_run[0] / "best.pt", tmp_path / "int8"
    langs = ("en", "de", "fr", "cs")
    for name, shift in (("run-best", 0.0), ("run-best-int8", 0.002)):  # results there already are reused
        for split, base in (("test_2016", 0.9), ("val", 0.8), ("pud", 0.1)):
            folder = out / "retrieval" / name / split
            folder.mkdir(parents=True)
            pairs = [{"pair": f"{a}-{b}", "a_to_b": base + shift, "b_to_a": base + 0.02}
                     for i, a in enumerate(langs) for b in langs[i + 1:]]
            (folder / "retrieval.json").write_text(json.dumps({"pairs": pairs}))
    text = run("int8_storage.py", str(checkpoint), "--out", str(out))
    assert (out / "run-best-int8" / "config.json").is_file()  # the export it measured
    assert "| test_2016 mean | 91.00 | 91.10 | +0.10 |" in text and "| pud en-de | 10.00 | 10.20 | +0.20 ** |" in text
    assert "| pud de-en | 12.00 | 12.00 | +0.00 |" in text and "int8 weights:" in text
    for name, bleu in (("run-best", 20.0), ("run-best-int8", 20.05)):
        (out / "bleu" / name).mkdir(parents=True)
        directions = {"x-y": {"bleu": bleu}, "y-x": {"bleu": bleu + 2}, "x-x": {"bleu": 60.0}}
        (out / "bleu" / name / "bleu.json").write_text(json.dumps({"directions": directions}))
    text = run("int8_storage.py", str(checkpoint), "--out", str(out), "--bleu")
    assert "| test BLEU, mean of the pairs | 21.00 | 21.05 | +0.05 |" in text and "| test BLEU x-x |" in text


def test_recipe_step_times_each_step_since_the_issue_on_a_config(tmp_path):
    import yaml

    from tests.helpers.toy import toy_config, write_toy_corpus

    corpus = write_toy_corpus(tmp_path / "corpus", n_train=300)
    config = tmp_path / "toy.yaml"
    config.write_text(yaml.safe_dump(toy_config(corpus, tmp_path / "unused", align_weight=1.0).to_dict()))
    text = run("docs/history/studies/recipe_step.py", str(config), "--start", "1", "--steps", "2", "--rounds", "2", "--precisions",
               "fp32", "--out", str(tmp_path / "prep"), "--json", str(tmp_path / "result.json"))
    assert "| fp32 | filed |" in text and "| fp32 | now |" in text and "against fp32 filed" in text
    result = json.loads((tmp_path / "result.json").read_text())
    assert [r["variant"] for r in result["runs"]] == ["filed", "padded", "chunked", "now"]
    assert result["steps"] == [4, 5] and all(len(r["pairs_per_s"]) == 2 for r in result["runs"])
    assert result["runs"][0]["against_first"] == 1.0
