"""`bridgeembed-bench mining-threshold`: the mining threshold a model can carry, chosen on planted dev pairs.

    bridgeembed-bench mining-threshold --model general-m2m --sets news --distractors 10186 --at 1.157 --json m.json

Each set's dev pairs (captions: Multi30k val; europarl: Europarl's last --europarl-dev lines; news: newstest2013)
are planted among --distractors lines a side and mined de -> en as bridgeembed-mine mines by default (ratio
margin, k = 4); the threshold with the best mean F1 of the sets is chosen (`mining.threshold`). Never run it on
test sets. `benchmarks/mining_threshold.py` runs this and also writes the model card's results file.
"""

from __future__ import annotations

import argparse
import sys

from bridgeembed.cli.options import add_options
from bridgeembed.mining.threshold import SETS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser, "--model", "--data")
    parser.add_argument("--distractors", type=int, default=14500, help="distractors per side (default: 14500)")
    parser.add_argument("--europarl-dev", type=int, default=1000,
                        help="the last lines of Europarl that are the dev set (default: 1000, stage 10's dev_lines)")
    parser.add_argument("--k", type=int, default=4, help="neighbours of the margin (default: 4)")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=["captions", "europarl"],
                        help="the planted sets (default: captions europarl)")
    parser.add_argument("--at", type=float, help="also give each set's figures at this threshold")
    parser.add_argument("--json", help="write the report (the curves' figures) here, as JSON")


def run(args: argparse.Namespace) -> int:
    from bridgeembed.cli.scripts import write_json
    from bridgeembed.evaluation.models import load_encoder
    from bridgeembed.mining.threshold import LANGS, choose_threshold, dev_sets, mine_set, planted, table

    encoder = load_encoder(args.model, device=args.device or "cpu")
    sets = {}
    for name, pools, dev in dev_sets(args.data, tuple(args.sets), args.europarl_dev):
        src, tgt, n = planted(pools[LANGS[0]], pools[LANGS[1]], dev[LANGS[0]], dev[LANGS[1]], args.distractors)
        sets[name] = {**mine_set(encoder, src, tgt, n, len(dev[LANGS[1]]), LANGS, args.k), "distractors": n}
        print(f"{name}: {len(dev[LANGS[1]])} dev pairs among {n:,} distractors per side, mined", file=sys.stderr)
    report = {"model": args.model, **choose_threshold(sets, args.k, args.at)}
    print(table(report))
    write_json(args.json, report)
    return 0
