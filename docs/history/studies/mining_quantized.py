"""Mining from float32, int8 and binary shards (issue 33): peak memory, index bytes, time, and the share of
float32's mined pairs that each precision finds.

One command does it all, reusing what an earlier run left in --work:
1. two collections of --size sentences, German and English, as for the 1M x 1M run (`mining.py corpus`):
   spliced Multi30k training captions from each language's own half of the rows, then the 1,000
   test_2016_flickr captions as the last rows (the planted pairs);
2. float32 shards of each (`bridgeembed-encode --shards`, resumed if they are there);
3. int8 and binary shards made from those float32 vectors, not encoded again: each row quantized as
   `encode_to_shards(..., precision=)` does it (`shard_codes`: int8 per row), the manifest the same but for
   the precision, so they are the shards `--precision int8|binary` writes, bit for bit, in a third of the time;
4. de -> en mining with `bridgeembed-mine --threshold all` once per setting, each in its own process under
   `/usr/bin/time -v` (its peak RSS), one thread (OPENBLAS_NUM_THREADS too: the int8 scan runs on numpy);
5. index bytes: the index of one side (the larger, English) built in this process and measured (FAISS indexes
   serialised; int8 flat: its codes and norms), and the 1M x 1M figure computed from it (n x d x bytes plus
   the index's overhead per row, scaled by 10): extrapolated, not measured.

    nice -n 10 python docs/history/studies/mining_quantized.py --data ../shared/data --work /tmp/mq --size 100000 \\
        --threads 1 --out /tmp/mq/results.json      # float32, int8, binary, binary+f32: about 13 min
    ... --size 30000 --index flat --runs int8 int8+f32 binary binary+f32 binary+f32x16   # exact: 8 min

The figures, with both commands, are in docs/performance.md ("Mining from int8 and binary shards").
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bridgeembed.cli.scripts import parse_script, script_parser, write_json

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"  # mining.py: its corpus and its F1
# (name, precision, float32 rescoring, rescore multiplier); float32 first: the others are compared with it
RUNS = [("float32", "float32", False, 4), ("int8", "int8", False, 4), ("int8+f32", "int8", True, 4),
        ("binary", "binary", False, 4), ("binary+f32", "binary", True, 4), ("binary+f32x16", "binary", True, 16)]
LANGS = {"de": 1, "en": 0}  # language -> the corpus seed (as the 1M run)


def run(cmd: list, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
    if proc.returncode:
        sys.exit(f"error: {' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def write_collections(args, work: Path) -> dict:
    """{lang: text file}: written by `mining.py corpus` unless there already."""
    texts = {}
    for lang, seed in LANGS.items():
        texts[lang] = work / f"corpus.{lang}"
        if not texts[lang].exists():
            run([sys.executable, BENCHMARKS / "mining.py", "corpus", "--data", args.data, "--lang", lang, "--size",
                 args.size - 1000, "--text", texts[lang], "--seed", seed])
    return texts


def float_shards(args, texts: dict, work: Path) -> dict:
    """{lang: float32 shard folder}, encoded by bridgeembed-encode (which resumes, or finds them all there)."""
    folders = {}
    for lang, text in texts.items():
        folders[lang] = work / f"{lang}.float32"
        start = time.perf_counter()
        run([sys.executable, "-m", "bridgeembed.cli.encode", "--lang", lang, "--in", text, "--shards", folders[lang],
             "--threads", args.threads, "--model", args.model, "--quiet"])
        print(f"{folders[lang]}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return folders


def quantized_shards(floats: Path, precision: str) -> Path:
    """The shards `--precision` would write, from the float32 ones: each row quantized, the manifest the same but
    for its precision and the shards' checksums."""
    from bridgeembed.atomic import save_array_atomic, write_text_atomic
    from bridgeembed.encoders.codes import shard_codes
    from bridgeembed.mining.manifest import MANIFEST, STORED
    from bridgeembed.mining.shards import Shards, shard_checksum, shard_name

    source = Shards(floats)
    out = floats.with_name(f"{floats.name.rsplit('.', 1)[0]}.{precision}")
    if (out / MANIFEST).exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    manifest = {**source.manifest, "precision": precision, "dtype": STORED[precision], "shards": {}}
    for index in range(-(-len(source) // source.shard_size)):
        rows = source.read(index * source.shard_size, min((index + 1) * source.shard_size, len(source)))
        save_array_atomic(out / shard_name(index), shard_codes(rows.astype(np.float32), precision))
        manifest["shards"][shard_name(index)] = shard_checksum(out / shard_name(index))
    write_text_atomic(out / MANIFEST, json.dumps(manifest, indent=1) + "\n")
    return out


def index_bytes(folder: Path, kind: str) -> int:
    """Bytes of the index `bridgeembed-mine` builds over this folder (all its rows; none is blank here)."""
    from bridgeembed.mining.index import IndexConfig, build_index, faiss_module
    from bridgeembed.mining.index_quantized import build_code_index
    from bridgeembed.mining.shards import Shards
    from bridgeembed.mining.vectors import Vectors

    vectors = Vectors(Shards(folder))
    config = IndexConfig(kind).resolve(len(vectors), len(vectors))
    if vectors.quantized:
        index = build_code_index(vectors, config)
        size = index.nbytes
    else:
        index = build_index(vectors, config)
        size = int(faiss_module().serialize_index(index).nbytes)
    index.reset()
    return size


def mine_once(args, work: Path, name: str, folders: dict, rescore: dict | None, multiplier: int) -> dict:
    """One `bridgeembed-mine` process under /usr/bin/time -v: its peak RSS, wall time and pairs."""
    out = work / f"pairs.{name}.tsv"
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "bridgeembed.cli.mine", "--src", folders["de"], "--tgt",
           folders["en"], "--out", out, "--threshold", "all", "--index", args.index, "--threads", args.threads,
           "--rescore-multiplier", multiplier]
    if rescore:
        cmd += ["--rescore-src", rescore["de"], "--rescore-tgt", rescore["en"]]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(args.threads), "OMP_NUM_THREADS": str(args.threads)}
    start = time.perf_counter()
    proc = run(cmd, env)
    seconds = time.perf_counter() - start
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))
    print(f"{name}: {seconds:.0f} s, peak RSS {rss / 2 ** 20:.2f} GiB", file=sys.stderr)
    return {"seconds": seconds, "peak_rss_kib": rss, "pairs_file": str(out)}


def read_pairs(path: str) -> tuple:
    """(scores, [(source, target)]) of a bridgeembed-mine output, best first."""
    scores, pairs = [], []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            score, src, tgt = line.rstrip("\n").split("\t")
            scores.append(float(score))
            pairs.append((src, tgt))
    return np.asarray(scores), pairs


def compare(reference: tuple, found: tuple, threshold: float) -> dict:
    """The share of the reference's pairs found: all, its best tenth, and those at >= threshold (each side cut at
    its own scores' threshold, as a user would keep them)."""
    (ref_scores, ref_pairs), (scores, pairs) = reference, found
    every = set(pairs)
    tenth = ref_pairs[:max(1, len(ref_pairs) // 10)]
    kept_ref = [p for s, p in zip(ref_scores, ref_pairs) if s >= threshold]
    kept = {p for s, p in zip(scores, pairs) if s >= threshold}
    return {"pairs": len(pairs), "recall_of_float32_pairs": sum(p in every for p in ref_pairs) / len(ref_pairs),
            "recall_of_float32_best_tenth": sum(p in every for p in tenth) / len(tenth),
            f"pairs_at_{threshold}": len(kept),
            f"recall_of_float32_pairs_at_{threshold}": sum(p in kept for p in kept_ref) / max(1, len(kept_ref))}


def planted(args, found: tuple) -> dict:
    """The 1,000 planted test_2016 pairs: how many mined, and the best F1 (an oracle threshold), as mining.py score."""
    sys.path.insert(0, str(BENCHMARKS))
    from bridgeembed.text.parallel import corpus_dir, read_lines
    from mining import best_f1

    folder = corpus_dir("multi30k", args.data)
    gold = set(zip(read_lines(folder / "test_2016_flickr.de.gz"), read_lines(folder / "test_2016_flickr.en.gz")))
    scores, pairs = found
    hits = [p in gold for p in pairs]
    return {"planted_found": int(sum(hits)), **best_f1(scores, hits, len(gold))}


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--data", "--model")
    parser.add_argument("--work", required=True, help="folder for the collections, shards and pairs (reused)")
    parser.add_argument("--size", type=int, default=100_000, help="sentences per side, the 1,000 planted included")
    parser.add_argument("--index", default="ivf", choices=["flat", "ivf", "auto"],
                        help="ivf (default: what auto gives at 1M x 1M) or flat (exact: 6-9 min a run at 100k)")
    parser.add_argument("--runs", nargs="*", default=["int8", "binary", "binary+f32"], choices=[r[0] for r in RUNS],
                        help="which settings to mine besides float32, which always runs first (default: int8 binary "
                        "binary+f32, about 13 minutes in all at 100k on one thread)")
    parser.add_argument("--threshold", type=float, default=1.157, help="the pairs a user keeps (the default)")
    parser.add_argument("--extrapolate", type=int, default=1_000_000)
    parser.add_argument("--out", help="also write the results as JSON here")
    args = parse_script(parser, argv)
    args.data = args.data or os.environ.get("BRIDGEEMBED_DATA")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    texts = write_collections(args, work)
    floats = float_shards(args, texts, work)
    folders = {"float32": floats, **{p: {lang: quantized_shards(f, p) for lang, f in floats.items()}
                                     for p in ("int8", "binary")}}
    results = {"command": " ".join(sys.argv), "size": args.size, "index": args.index, "threads": args.threads,
               "runs": {}}
    reference = None
    for name, precision, rescored, multiplier in RUNS:
        if name != "float32" and name not in args.runs:
            continue
        row = mine_once(args, work, name, folders[precision], floats if rescored else None, multiplier)
        found = read_pairs(row["pairs_file"])
        reference = reference or found
        row.update(precision=precision, rescored_with_float32=rescored, rescore_multiplier=multiplier,
                   planted=planted(args, found), **compare(reference, found, args.threshold))
        results["runs"][name] = row
    scale = args.extrapolate / args.size
    for precision in ("float32", "int8", "binary"):
        size = index_bytes(folders[precision]["en"], args.index)
        results.setdefault("index_bytes", {})[precision] = {
            "measured": size, "rows": args.size,
            f"extrapolated_{args.extrapolate}": int(size * scale), "note": "extrapolated (x rows), not measured"}
    results["wall_s"] = time.perf_counter() - started
    print(table(results))
    print(json.dumps(results, indent=1))
    write_json(args.out, results)
    return 0


def table(results: dict) -> str:
    mib = 2 ** 20
    lines = ["| setting | peak RSS | index (one side) | float32's pairs found | its best tenth | pairs >= threshold "
             "found | planted found | time |", "|---|---|---|---|---|---|---|---|"]
    for name, r in results["runs"].items():
        at = next(v for k, v in r.items() if k.startswith("recall_of_float32_pairs_at_"))
        index = results["index_bytes"][r["precision"]]["measured"] / mib
        lines.append(f"| {name} | {r['peak_rss_kib'] / 1024:.0f} MiB | {index:.1f} MiB | "
                     f"{100 * r['recall_of_float32_pairs']:.1f}% | {100 * r['recall_of_float32_best_tenth']:.1f}% | "
                     f"{100 * at:.1f}% | {r['planted']['planted_found']} | {r['seconds']:.0f} s |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
