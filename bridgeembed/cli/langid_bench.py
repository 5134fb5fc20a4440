"""`bridgeembed-bench langid`: encode(sentences) without `lang`, measured on a line-aligned set.

    bridgeembed-bench langid --set pud --limit 1000

The identifier's accuracy per language (whole sentences, and their first 1, 2 and 3 words), then retrieval with
the files' codes given beside retrieval with lang="auto" (`crosslingual.language_id`); writes language_id.json and
language_id.md to results/langid/MODEL/SET unless --out.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bridgeembed.cli.crosslingual import DEFAULT_SET, read_parallel
from bridgeembed.cli.options import add_options
from bridgeembed.crosslingual.sources import BITEXT_SETS
from bridgeembed.errors import ConfigError
from bridgeembed.paths import check_output, default_out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser, "--model", "--data", "--batch-size")
    parser.add_argument("--set", choices=sorted(BITEXT_SETS),
                        help="a named set under the data root: " + ", ".join(f"{k} ({v})" for k, v in
                                                                         BITEXT_SETS.items())
                        + f" (default: {DEFAULT_SET})")
    parser.add_argument("--template", help="line-aligned (multi-way parallel) files with {lang}, instead of a --set")
    parser.add_argument("--langs", default="en,de,fr,cs", help="comma-separated languages (default: en,de,fr,cs)")
    parser.add_argument("--limit", type=int, help="use only the first N lines of every file (quick checks)")
    parser.add_argument("--out", help="output folder (default: results/langid/MODEL/SET)")
    parser.set_defaults(command="langid")


def check(args: argparse.Namespace) -> None:
    if args.limit is not None and args.limit < 2:
        raise ConfigError(f"--limit must be at least 2 (retrieval needs two sentences to choose among), got "
                          f"{args.limit}")
    folder = default_out("langid", args.model)
    folder = folder if args.template else Path(folder) / (args.set or DEFAULT_SET)
    args.out = check_output(args.out or folder, "--out", "folder")


def run(args: argparse.Namespace) -> int:
    from bridgeembed.atomic import write_text_atomic
    from bridgeembed.crosslingual.language_id import language_id_report
    from bridgeembed.encoders.bridge import BridgeEncoder

    lines, paths, _ = read_parallel(args)
    encoder = BridgeEncoder(args.model, device=args.device)
    result = language_id_report(encoder, lines, model=args.model, batch_size=args.batch_size, files=paths)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "language_id.json", json.dumps(result.to_dict(), indent=2) + "\n")
    write_text_atomic(out / "language_id.md", result.markdown() + "\n")
    print(result.markdown())
    return 0
