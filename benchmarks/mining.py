"""Bitext mining, offline: a BUCC-style test on Multi30k, and throughput at scale (README, "Mining and search").

  bucc    plant the 1,000 test_2016_flickr translations among N distractors per side and mine them:
          en side = test en + train/val en rows 0..N-1; xx side = test xx + rows N..2N-1 of xx, so no
          distractor has its translation on the other side (with --splice, beyond 15,007 per side, the rest are
          spliced captions made from the same rows, as in corpus). Precision, recall and F1 of the mined pairs
          (retrieval max, k = 4) at the best threshold, for cosine (absolute), ratio and distance margins.
  encode  sharded encoding of whole files (default the four Multi30k training files): sentences/s, peak RSS.
  search  k-NN queries/s at N indexed vectors (shard folders or random), flat against ivf (and hnsw with
          --hnsw), and each approximate index's recall of the exact top-k; `--nprobe 4 16 64` gives the ivf
          trade-off, one row per value, all searched in one index.
  mine    mine() on N x N vectors (random, or the first N rows of shard folders on each side): wall time,
          peak RSS, and the extrapolation to --extrapolate rows (stated as such).
  corpus  a large synthetic caption collection in one language, for the 1M x 1M run: N distinct sentences,
          each the first words of one Multi30k training caption joined to the last words of another, from
          the language's own half of the training rows (en: rows 0..14499, the others 14500..28999, so no
          line of one side is made from a translation of a line of the other), then the 1,000
          test_2016_flickr captions as the last rows (the planted pairs).
  score   precision, recall and F1 of a `bridgeembed-mine` output (pairs.tsv) on the planted test_2016 pairs.

Run each in its own process so that its peak RSS is its own:

    nice -n 10 python benchmarks/mining.py bucc --data ../shared/data --distractors 10000 --threads 1
    nice -n 10 python benchmarks/mining.py encode --data ../shared/data --shards /tmp/m30k-shards --threads 1
    nice -n 10 python benchmarks/mining.py search --shards /tmp/m30k-shards/train.* --size 100000 --threads 1
    nice -n 10 python benchmarks/mining.py mine --random --size 100000 --index ivf --threads 1
    python benchmarks/mining.py corpus --data ../shared/data --lang de --size 1000000 --text /tmp/m1m/big.de
    python benchmarks/mining.py score --pairs /tmp/m1m/pairs.tsv --data ../shared/data --src-lang de
"""

import json
import math
import resource
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from bridgeembed.cli.scripts import parse_script, script_parser, write_json


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kB


# --- bucc ----------------------------------------------------------------------------------------------------
def best_f1(scores: np.ndarray, hit: np.ndarray, total: int) -> dict:
    """Precision, recall and F1 of the pairs scoring at least t (pairs best first, `hit` marks the right ones),
    at the t that maximises F1 (an oracle threshold, as BUCC reports on its training split)."""
    hit = np.asarray(hit, dtype=np.float64)
    if not len(hit):
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0, "threshold": float("nan"), "pairs_kept": 0}
    correct = np.cumsum(hit)
    ranks = np.arange(1, len(hit) + 1)
    precision, recall = correct / ranks, correct / total
    f1 = np.where(correct > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0)
    best = int(np.argmax(f1))
    return {"precision": float(precision[best]), "recall": float(recall[best]), "f1": float(f1[best]),
            "threshold": float(scores[best]), "pairs_kept": best + 1}


def bucc(args) -> dict:
    from bridgeembed.evaluation.models import load_encoder
    from bridgeembed.mining import mine
    from bridgeembed.text.parallel import corpus_dir, read_lines

    folder = corpus_dir("multi30k", args.data)
    encoder = load_encoder(args.model, device="cpu")
    n = args.distractors
    langs = ["en", *(pair.split("-")[1] for pair in args.pairs.split(","))]
    side = {}
    for lang in langs:
        pool = read_lines(folder / f"train.{lang}.gz") + read_lines(folder / f"val.{lang}.gz")
        real = min(n, len(pool) // 2)
        if real < n and not args.splice:
            sys.exit(f"error: --distractors {n}: Multi30k train + val have {len(pool)} {lang} rows, and disjoint "
                     f"distractors need 2 x {n}; at most {len(pool) // 2}, or add --splice to fill up with "
                     f"spliced captions")
        rows = range(0, real) if lang == "en" else range(real, 2 * real)
        test = read_lines(folder / f"test_2016_flickr.{lang}.gz")
        captions = [pool[i] for i in rows]
        extra = spliced(captions, n - real, set(test) | set(captions), seed=langs.index(lang)) if real < n else []
        sentences = captions + extra + test  # the planted translations are rows n .. n + 999
        start = time.perf_counter()
        vectors = encoder.encode(sentences, lang, batch_size=64)
        side[lang] = {"sentences": sentences, "vectors": vectors, "test": len(test), "real": real,
                      "spliced": len(extra), "encode_s": time.perf_counter() - start}
        print(f"encoded {len(sentences)} {lang} sentences in {side[lang]['encode_s']:.0f} s", file=sys.stderr)
    results = {"distractors": n, "model": args.model, "k": args.k, "index": args.index, "pairs": {},
               "distractors_by_kind": {lang: {"captions": side[lang]["real"], "spliced": side[lang]["spliced"]}
                                       for lang in langs}}
    for pair in args.pairs.split(","):
        xx = pair.split("-")[1]
        gold = {(n + i, n + i) for i in range(side[xx]["test"])}
        dupes = len(set(side["en"]["sentences"][:n]) & set(side["en"]["sentences"][n:]))  # distractor == a test line
        row = {"test_en_lines_also_among_en_distractors": dupes}
        for scoring in ("absolute", "ratio", "distance"):
            start = time.perf_counter()
            pairs = mine(side[xx]["vectors"], side["en"]["vectors"], k=args.k, scoring=scoring, index=args.index)
            hit = [(s, t) in gold for _, s, t in pairs]
            row[scoring] = {**best_f1(pairs.score, hit, len(gold)), "mine_s": time.perf_counter() - start}
        results["pairs"][f"{xx}-en"] = row
    return results


def bucc_table(results: dict) -> str:
    lines = [f"| pair | scoring | precision | recall | F1 | best threshold | ({results['distractors']:,} distractors "
             f"per side, k = {results['k']}) |", "|---|---|---|---|---|---|---|"]
    names = {"absolute": "cosine", "ratio": "ratio margin", "distance": "distance margin"}
    for pair, row in results["pairs"].items():
        for scoring, name in names.items():
            r = row[scoring]
            lines.append(f"| {pair} | {name} | {100 * r['precision']:.1f} | {100 * r['recall']:.1f} | "
                         f"**{100 * r['f1']:.1f}** | {r['threshold']:.3f} | {r['mine_s']:.1f} s |")
    return "\n".join(lines)


# --- encode --------------------------------------------------------------------------------------------------
def encode(args) -> dict:
    from bridgeembed.encoders.bridge import BridgeEncoder
    from bridgeembed.mining import encode_options, encode_to_shards
    from bridgeembed.text.parallel import corpus_dir

    files = [Path(f) for f in args.files] if args.files else \
        [corpus_dir("multi30k", args.data) / f"train.{lang}.gz" for lang in ("en", "de", "fr", "cs")]
    encoder = BridgeEncoder(args.model, device="cpu")
    total, start = 0, time.perf_counter()
    for path in files:
        lang = path.name.split(".")[-2] if path.suffix == ".gz" else path.suffix[1:]
        options = encode_options(model=args.model, precision="float16" if args.half else None, normalize=True)
        shards = encode_to_shards(encoder, path, lang, Path(args.shards) / path.name, options, args.shard_size)
        total += len(shards)
    seconds = time.perf_counter() - start
    return {"sentences": total, "seconds": seconds, "sentences_per_s": total / seconds, "shard_size": args.shard_size,
            "peak_rss_mib": peak_rss_mib(), "files": [str(f) for f in files]}


# --- corpus, score ----------------------------------------------------------------------------------------
def spliced(captions: list, size: int, exclude: set, seed: int) -> list:
    """`size` distinct sentences: the first words of one caption and the last words of another (each cut
    strictly inside, so both parts keep at least one word), none of them in `exclude`."""
    rng = np.random.default_rng(seed)
    words = [c.split() for c in captions if len(c.split()) >= 2]
    out, seen = [], set(exclude)
    while len(out) < size:
        a, b = rng.integers(len(words), size=(2, 4096))
        for i, j in zip(a.tolist(), b.tolist()):
            head, tail = words[i], words[j]
            cut_a, cut_b = int(rng.integers(1, len(head))), int(rng.integers(1, len(tail)))
            line = " ".join(head[:cut_a] + tail[cut_b:])
            if line not in seen:
                seen.add(line)
                out.append(line)
                if len(out) == size:
                    break
    return out


def corpus(args) -> dict:
    import gzip

    from bridgeembed.text.parallel import corpus_dir, read_lines

    folder = corpus_dir("multi30k", args.data)
    train = read_lines(folder / f"train.{args.lang}.gz")
    half = len(train) // 2
    own = train[:half] if args.lang == "en" else train[half:]  # no line of one side from a translation of the other
    test = read_lines(folder / f"test_2016_flickr.{args.lang}.gz")
    lines = spliced(own, args.size, set(test), args.seed) + test
    out = Path(args.text)
    out.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if out.suffix == ".gz" else open
    with opener(out, "wt", encoding="utf-8", newline="\n") as handle:
        handle.writelines(line + "\n" for line in lines)
    return {"lines": len(lines), "synthetic": args.size, "planted": len(test), "out": str(out),
            "from_rows": "0..%d" % (half - 1) if args.lang == "en" else "%d..%d" % (half, len(train) - 1)}


def score(args) -> dict:
    """The planted pairs are test line i on both sides: a mined pair is right when both its sentences are the
    same test row (a test line may also occur elsewhere; the text decides)."""
    from bridgeembed.text.parallel import corpus_dir, read_lines

    folder = corpus_dir("multi30k", args.data)
    src_test = read_lines(folder / f"test_2016_flickr.{args.src_lang}.gz")
    tgt_test = read_lines(folder / f"test_2016_flickr.{args.tgt_lang}.gz")
    gold = {(s.replace("\t", " "), t.replace("\t", " ")) for s, t in zip(src_test, tgt_test)}
    scores, hits = [], []
    with open(args.pairs, encoding="utf-8") as handle:
        for line in handle:
            value, src, tgt = line.rstrip("\n").split("\t")
            scores.append(float(value))
            hits.append((src, tgt) in gold)
    return {"mined_pairs": len(scores), "planted": len(gold), "planted_found": int(sum(hits)),
            **best_f1(np.asarray(scores), hits, len(gold))}


# --- search ----------------------------------------------------------------------------------------------------
def load_vectors(args, size: int, seed: int, dim: int = 512) -> np.ndarray:
    """The first `size` rows of the shard folders, in order, or random unit vectors."""
    if args.random or not args.shards:
        return np.random.default_rng(seed).standard_normal((size, dim), dtype=np.float32)
    return shard_rows(args.shards, size)


def shard_rows(folders: list, size: int) -> np.ndarray:
    """The first `size` rows of these shard folders, one after another, as float32."""
    from bridgeembed.mining.shards import Shards

    parts, have = [], 0
    for folder in folders:
        shards = Shards(folder)
        take = min(len(shards), size - have)
        parts.append(shards.read(0, take).astype(np.float32))
        have += take
        if have == size:
            break
    if have < size:
        sys.exit(f"error: the shard folders hold {have} vectors, fewer than --size {size}")
    return np.concatenate(parts)


def search(args) -> dict:
    from bridgeembed.mining.index import IndexConfig, build_index
    from bridgeembed.mining.index import search as knn_search
    from bridgeembed.mining.vectors import Vectors

    vectors = load_vectors(args, args.size + args.queries, 0)
    corpus, queries = Vectors(vectors[:args.size]), Vectors(vectors[args.size:])  # queries: rows after the corpus
    source = "random" if args.random or not args.shards else "encoded"
    results = {"indexed": len(corpus), "queries": len(queries), "k": args.k, "vectors": source, "indexes": {}}
    # one ivf index, searched at each nprobe in turn: the speed/recall trade-off of one build
    kinds = [("flat", IndexConfig("flat"), [None]), ("ivf", IndexConfig("ivf", nprobe=max(args.nprobe)), args.nprobe)]
    if args.hnsw:
        kinds.append(("hnsw", IndexConfig("hnsw", ef_search=args.ef_search), [None]))
    exact = None
    for name, config, settings in kinds:
        start = time.perf_counter()
        index = build_index(corpus, config)
        built = time.perf_counter() - start
        for nprobe in settings:
            if nprobe is not None:
                config = replace(config, nprobe=nprobe)
                index.nprobe = min(nprobe, index.nlist)
            start = time.perf_counter()
            ids = knn_search(index, queries, args.k).ids
            seconds = time.perf_counter() - start
            row = {"build_s": built, "queries_per_s": len(queries) / seconds, "config": vars_of(config, len(corpus))}
            if exact is None:
                exact = ids
            else:
                row["recall_at_1"] = float(np.mean(ids[:, 0] == exact[:, 0]))
                row[f"recall_at_{args.k}"] = float(np.mean([len(set(a) & set(e)) / args.k
                                                            for a, e in zip(ids, exact)]))
            key = name if len(settings) == 1 else f"{name}-nprobe{nprobe}"
            results["indexes"][key] = row
            print(f"{key}: {row}", file=sys.stderr)
        index.reset()
    results["peak_rss_mib"] = peak_rss_mib()
    return results


def vars_of(config, size: int) -> dict:
    """The settings that matter for `config` over `size` indexed rows (ivf: its cells as resolved)."""
    keys = {"flat": (), "ivf": ("nprobe",), "hnsw": ("hnsw_m", "ef_search")}[config.kind]
    out = {"kind": config.kind, **{key: getattr(config, key) for key in keys}}
    if config.kind == "ivf":
        out["nlist"] = config.cells(size)
    return out


# --- mine ------------------------------------------------------------------------------------------------------
def mine_scale(args) -> dict:
    from bridgeembed.mining import IndexConfig, mine
    from bridgeembed.mining.index import build_index
    from bridgeembed.mining.vectors import Vectors

    if args.shards and not args.random:
        sys.exit("error: mine takes --src-shards and --tgt-shards (one folder per side), or --random")
    if bool(args.src_shards) != bool(args.tgt_shards):
        sys.exit("error: --src-shards and --tgt-shards go together")
    if args.src_shards:
        src, tgt = shard_rows([args.src_shards], args.size), shard_rows([args.tgt_shards], args.size)
    else:
        src, tgt = load_vectors(args, args.size, 0), load_vectors(args, args.size, 1)
    config = IndexConfig(args.index, nprobe=args.nprobe)
    start = time.perf_counter()
    pairs = mine(src, tgt, k=args.k, index=config)
    seconds = time.perf_counter() - start
    compared = {}
    if args.compare_exact:  # the same mining with exact neighbours: how many of its pairs the index finds
        start = time.perf_counter()
        exact = mine(src, tgt, k=args.k, index="flat")
        found = set(zip(pairs.src.tolist(), pairs.tgt.tolist()))
        exact_pairs = list(zip(exact.src.tolist(), exact.tgt.tolist()))
        tenth = exact_pairs[:max(1, len(exact_pairs) // 10)]
        compared = {"exact_s": time.perf_counter() - start, "exact_pairs": len(exact_pairs),
                    "recall_of_exact_pairs": sum(p in found for p in exact_pairs) / len(exact_pairs),
                    "recall_of_exact_best_tenth": sum(p in found for p in tenth) / len(tenth)}
    resolved = config.resolve(args.size, args.size)
    train = 0.0
    if resolved.kind == "ivf":  # the k-means part of one index build, timed apart for the extrapolation
        nlist = resolved.cells(args.size)
        sample = Vectors(src[:nlist * resolved.train_per_cell])
        start = time.perf_counter()
        build_index(sample, replace(resolved, nlist=nlist)).reset()  # train + add of the sample: >= training alone
        train = time.perf_counter() - start
    out = {"size": args.size, "index": vars_of(resolved, args.size), "k": args.k, "pairs": len(pairs),
           "seconds": seconds, "train_s_per_index": train, "peak_rss_mib": peak_rss_mib(),
           "vectors": "encoded" if args.src_shards else "random", **compared}
    if args.extrapolate:
        factor = args.extrapolate / args.size
        if resolved.kind == "ivf":  # search and add grow as N^1.5 (nlist = 4 sqrt(N)); k-means as N (sample x nlist)
            estimate = (seconds - 2 * train) * factor ** 1.5 + 2 * train * factor
        else:  # exact search grows as N^2
            estimate = seconds * factor ** 2
        index_gib = args.extrapolate * 512 * 4 / 2 ** 30
        out["extrapolated"] = {"rows": args.extrapolate, "seconds": estimate, "index_gib": index_gib,
                               "note": "extrapolated, not measured"}
    return out


def main(argv=None) -> int:
    parser = script_parser(__doc__, threads=False)
    every = script_parser("", add_help=False)  # what every subcommand takes: --threads (1) and --out
    every.add_argument("--out", help="also write the results as JSON here")
    commands = parser.add_subparsers(dest="command", required=True)
    b = commands.add_parser("bucc", parents=[every])
    b.add_argument("--data", help="data root holding multi30k/ (default: $BRIDGEEMBED_DATA)")
    b.add_argument("--distractors", type=int, default=10_000)
    b.add_argument("--splice", action="store_true",
                   help="beyond the 15,007 disjoint captions per side, fill up with spliced captions (see corpus)")
    b.add_argument("--pairs", default="en-de,en-cs")
    b.add_argument("--model", default="general-m2m")
    b.add_argument("--index", default="flat")
    e = commands.add_parser("encode", parents=[every])
    e.add_argument("--data")
    e.add_argument("--files", nargs="*", help="text files named NAME.LANG or NAME.LANG.gz (default: Multi30k train)")
    e.add_argument("--shards", required=True, help="folder for the shard folders (one per file)")
    e.add_argument("--shard-size", type=int, default=10_000)
    e.add_argument("--half", action="store_true")
    e.add_argument("--model", default="general-m2m")
    c = commands.add_parser("corpus", parents=[every])
    c.add_argument("--data")
    c.add_argument("--lang", required=True)
    c.add_argument("--size", type=int, default=1_000_000, help="synthetic sentences (the 1,000 test lines follow)")
    c.add_argument("--text", required=True, help="text file to write (.gz: gzipped)")
    c.add_argument("--seed", type=int, default=0)
    sc = commands.add_parser("score", parents=[every])
    sc.add_argument("--data")
    sc.add_argument("--pairs", required=True, help="bridgeembed-mine's output: score, source, target per line")
    sc.add_argument("--src-lang", required=True)
    sc.add_argument("--tgt-lang", default="en")
    for sub in (commands.add_parser("search", parents=[every]), commands.add_parser("mine", parents=[every])):
        sub.add_argument("--shards", nargs="*", help="shard folders whose first --size rows are used")
        sub.add_argument("--random", action="store_true", help="random vectors (d = 512) instead")
        sub.add_argument("--size", type=int, default=100_000)
        if sub.prog.endswith("search"):
            sub.add_argument("--nprobe", type=int, nargs="+", default=[16],
                             help="ivf cells searched per query; several values: one row each, from one index")
            sub.add_argument("--queries", type=int, default=2000)
            sub.add_argument("--hnsw", action="store_true", help="also build an HNSW index (slow to build)")
            sub.add_argument("--ef-search", type=int, default=128)
        else:
            sub.add_argument("--nprobe", type=int, default=16)
            sub.add_argument("--index", default="ivf")
            sub.add_argument("--extrapolate", type=int, default=1_000_000)
            sub.add_argument("--src-shards", help="shard folder of the source side (its first --size rows)")
            sub.add_argument("--tgt-shards", help="shard folder of the target side")
            sub.add_argument("--compare-exact", action="store_true",
                             help="also mine with exact neighbours and report the share of its pairs found")
    for sub in (b, commands.choices["search"], commands.choices["mine"]):
        sub.add_argument("--k", type=int, default=4)
    from bridgeembed.mining.index import faiss_module

    faiss_module()  # FAISS imported quietly, then its threads and torch's by the library's one setter
    args = parse_script(parser, argv, libraries=("torch", "faiss"))
    started = time.perf_counter()
    commands = {"bucc": bucc, "encode": encode, "search": search, "mine": mine_scale, "corpus": corpus, "score": score}
    results = commands[args.command](args)
    results.update(command=" ".join(sys.argv), threads=args.threads, wall_s=time.perf_counter() - started,
                   peak_rss_mib=peak_rss_mib())
    if args.command == "bucc":
        print(bucc_table(results))
    print(json.dumps(results, indent=1, default=lambda x: None if isinstance(x, float) and math.isnan(x) else x))
    write_json(args.out, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
