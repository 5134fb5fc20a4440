"""`bridgeembed-bench attention`: per-head entropy, coverage and position of the bridge's attention A over a text.

    bridgeembed-bench attention --model runs/k50/best.pt --in test.en --lang en --out results/attention/k50

Where `bridgeembed attention` draws A for one sentence, this measures it over many (`evaluation.attention_bench`)
and writes attention.json, .csv, .md and attention.png.
"""

from __future__ import annotations

import argparse

from bridgeembed.cli.options import add_options
from bridgeembed.errors import DataError
from bridgeembed.paths import check_output, default_out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser, "--model", "--data")
    parser.add_argument("--in", dest="input",
                        help="text file, one sentence per line (UTF-8, may be gzipped; default: Multi30k's "
                             "test_2016_flickr in --lang under the data root)")
    parser.add_argument("--lang", default="en", help="language code of the sentences (default: en)")
    parser.add_argument("--limit", type=int, default=0, help="measure only the first N sentences (0: all)")
    parser.add_argument("--out", help="output folder (default: results/attention/MODEL)")
    parser.add_argument("--no-plots", action="store_true", help="skip attention.png")


def run(args: argparse.Namespace) -> int:
    from bridgeembed.evaluation.attention_bench import default_input, evaluate, fmt

    if args.limit < 0:
        raise DataError(f"--limit must be 0 (all sentences) or a positive number, got {args.limit}")
    out = check_output(args.out or default_out("attention", args.model), "--out", "folder")  # before the work
    args.input = args.input or default_input(args.data, args.lang)
    stats, paths = evaluate(args.model, args.input, args.lang, out, args.limit, plots=not args.no_plots)
    s = stats.summary()
    print(f"entropy h < n_i: {fmt(s['entropy_within'])}  h >= n_i: {fmt(s['entropy_beyond'])}  "
          f"({s['sentences']} sentences, k = {stats.heads}); wrote {paths['md'].parent}")
    return 0
