"""The threshold that filters a noisy corpus by `bridgeembed-mine --mode align`, measured where the truth is known
(issue 47: wmt15-sample-en-de is noisy, some of its pairs misaligned).

A clean en-de corpus (europarl-v7-en-de) gets a share of its German lines moved to other rows, the misalignments a
noisy corpus has; every line is then scored as `bridgeembed-mine --mode align` scores it (ratio margin, k = 4, the
shipped model). For each threshold: the share of clean pairs kept and of moved pairs dropped, and the share of the
noisy corpus the threshold keeps.

    BRIDGEEMBED_DATA=../shared/data python docs/history/studies/align_filter.py \\
        --json docs/results/new-text/align-threshold.json

--lines N scores the first N lines of each corpus only (the test's mode).
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import numpy as np

from bridgeembed.cli.scripts import parse_script, script_parser, write_json

THRESHOLDS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def lines(path: Path, limit: int) -> list:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        out = handle.read().splitlines()
    return out[:limit] if limit else out


def align_scores(encoder: object, en: list, de: list) -> np.ndarray:
    """Line i against line i, as align mode scores it, in row order."""
    from bridgeembed.mining.mine import mine

    pairs = mine(encoder.encode(de, "de", batch_size=64), encoder.encode(en, "en", batch_size=64), mode="align")
    out = np.empty(len(en), dtype=np.float32)
    out[pairs.src] = pairs.score
    return out


def main(argv: list | None = None) -> int:
    parser = script_parser(__doc__, "--data", first_paragraph=True, json_out=True)
    parser.add_argument("--clean", default="europarl-v7-en-de", help="a clean en-de corpus folder of the data root")
    parser.add_argument("--noisy", default="wmt15-sample-en-de", help="the noisy en-de corpus folder")
    parser.add_argument("--moved", type=float, default=0.1, help="share of the clean pairs misaligned (default 0.1)")
    parser.add_argument("--model", default="general-m2m")
    parser.add_argument("--lines", type=int, default=0, help="score only the first N lines of each corpus")
    args = parse_script(parser, argv)
    from bridgeembed import BridgeEncoder
    from bridgeembed.paths import data_root

    root = data_root(args.data)
    encoder = BridgeEncoder(args.model)
    en, de = (lines(root / args.clean / f"train.{lang}.gz", args.lines) for lang in ("en", "de"))
    moved = np.random.default_rng(0).choice(len(en), size=int(args.moved * len(en)), replace=False)
    for i, line in zip(moved, [de[j] for j in np.roll(moved, 1)]):  # each moved row gets another's German
        de[i] = line
    is_moved = np.zeros(len(en), bool)
    is_moved[moved] = True
    clean = align_scores(encoder, en, de)
    noisy = align_scores(encoder, *(lines(root / args.noisy / f"train.{lang}.gz", args.lines) for lang in ("en", "de")))
    table = {f"{t:.1f}": {"clean_kept": round(100 * float((clean[~is_moved] >= t).mean()), 1),
                          "moved_dropped": round(100 * float((clean[is_moved] < t).mean()), 1),
                          "noisy_kept": round(100 * float((noisy >= t).mean()), 1)} for t in THRESHOLDS}
    for t, row in table.items():
        print(f"{t}: clean kept {row['clean_kept']:5.1f}%  moved dropped {row['moved_dropped']:5.1f}%  "
              f"{args.noisy} kept {row['noisy_kept']:5.1f}%")
    write_json(args.json, {"clean": args.clean, "noisy": args.noisy, "moved_share": args.moved, "model": args.model,
                           "pairs": len(en), "noisy_pairs": len(noisy), "thresholds": table,
                           "command": "python docs/history/studies/align_filter.py " + " ".join(sys.argv[1:])})
    return 0


if __name__ == "__main__":
    sys.exit(main())
