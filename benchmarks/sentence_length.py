"""Encoding with and without the training length cut, in one run (issue 42, item 3).

The shipped models were trained on sentences cut at 50 subword tokens, and `BridgeEncoder` used to cut every
sentence there too; a BiLSTM has no length limit, so the encoder now keeps up to `max_seq_length`
(DEFAULT_MAX_SEQ_LENGTH, 256). For every model, set and length this gives the share of sentences cut, translation
retrieval (the mean of the ordered pairs: is a sentence's nearest vector, by cosine, its translation) and the
encoding time, the lengths alternating in one process so that the machine's load hits both alike:

    BRIDGEEMBED_DATA=../shared/data python benchmarks/sentence_length.py general-m2m \\
        --lengths 50 256 --threads 1 --json results/sentence_length.json

Sets: PUD (news and Wikipedia, 1,000 4-way sentences: reporting only), newstest2013 (newstest-4way's `valid`,
the first --lines), caption test_2016. `--dry` runs one tiny set of made-up sentences (the test's mode).
"""

from __future__ import annotations

import sys
import time
from itertools import permutations

import numpy as np

from bridgeembed import BridgeEncoder
from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from bridgeembed.crosslingual.dev_retrieval import SETS, encode_quietly
from bridgeembed.crosslingual.retrieval import accuracy
from bridgeembed.text.parallel import corpus_dir, read_split

LANGS = ("en", "de", "fr", "cs")


def cut_share(encoder: BridgeEncoder, lines: list, lang: str, length: int) -> float:
    """% of `lines` longer than `length` subword tokens, the end marker included."""
    pieces = encoder.tokenizers[lang].encode_many(lines)
    return 100 * float(np.mean([len(p) + 1 > length for p in pieces]))


def measure(encoder: BridgeEncoder, lines: dict, length: int) -> dict:
    encoder.max_seq_length = length
    start = time.perf_counter()
    vectors = encode_quietly(encoder, lines)  # the cut is what this measures: counted below, not warned about
    seconds = time.perf_counter() - start
    pairs = {f"{a}-{b}": 100 * accuracy(vectors[a], vectors[b], lines[b]) for a, b in permutations(lines, 2)}
    return {"length": length, "seconds": seconds, "retrieval_mean": float(np.mean(list(pairs.values()))),
            "retrieval_worst": float(min(pairs.values())), "pairs": pairs,
            "cut_percent": {lang: cut_share(encoder, text, lang, length) for lang, text in lines.items()}}


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--data", first_paragraph=True, dry="made-up sentences, no data", json_out=True)
    parser.add_argument("models", nargs="+", help="shipped model names or paths")
    parser.add_argument("--lengths", nargs="+", type=int, default=[50, 256],
                        help="max_seq_length values (default: 50 256)")
    parser.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS), help="default: all")
    parser.add_argument("--lines", type=int, default=1000, help="sentences per set and language (default: 1000)")
    parser.add_argument("--rounds", type=int, default=2, help="timing rounds, lengths alternating (default: 2)")
    args = parse_script(parser, argv)
    results = []
    for model in args.models:
        encoder = BridgeEncoder(model, device="cpu")
        for name in (["dry"] if args.dry else args.sets):
            if args.dry:
                long = " ".join(["the dog runs on the beach and"] * 12)
                lines = {lang: [f"a dog {i}." for i in range(5)] + [long] for lang in encoder.languages}
            else:
                folder, split = SETS[name]
                langs = [lang for lang in LANGS if lang in encoder.languages]
                raw = read_split(corpus_dir(folder, args.data), split, langs)
                lines = {lang: text[: args.lines] for lang, text in raw.items()}
            runs = {length: [] for length in args.lengths}
            for _ in range(args.rounds):
                for length in args.lengths:
                    runs[length].append(measure(encoder, lines, length))
            for length, found in runs.items():
                row = dict(found[0], seconds=float(np.median([r["seconds"] for r in found])), model=model, set=name)
                results.append(row)
                print(f"| {model} | {name} | {length} | {np.mean(list(row['cut_percent'].values())):.1f} | "
                      f"{row['retrieval_mean']:.1f} | {row['retrieval_worst']:.1f} | {row['seconds']:.2f} |",
                      flush=True)
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
