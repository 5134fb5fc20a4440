"""The validations of training runs as one Markdown table: dev BLEU and dev retrieval, as logged.

    python benchmarks/valid_table.py NAME=OUT_DIR/log.jsonl [NAME=...] [--every N]

One row per validation (every N-th with --every; the first and last always): the step, the pairs seen
(step x batch size, from the run's config.yaml beside the log), mean dev BLEU, and the retrieval figures
`train.select_by` reads (`retrieval` in log.jsonl: mean and worst ordered pair, mixed pool, nearest
neighbour in the query's own language, mean over single heads). A run logged without dev retrieval
(a single-language corpus) shows dashes there.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from bridgeembed.cli.scripts import parse_script, script_parser

COLUMNS = ("run", "step", "pairs seen", "dev BLEU", "pairs: mean", "pairs: worst", "mixed pool", "own language",
           "single heads")


def validations(log: Path) -> list:
    records = (json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip())
    return [r for r in records if r.get("event") == "valid"]


def batch_size(log: Path) -> int | None:
    config = log.parent / "config.yaml"
    if not config.is_file():
        return None
    return (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get("train", {}).get("batch_size")


def row(name: str, record: dict, batch: int | None) -> str:
    r = record.get("retrieval") or {}
    figures = [r.get(key) for key in ("mean", "worst", "mixed", "same_language", "heads_mean")]
    seen = f"{record['step'] * batch / 1000:,.0f}k" if batch else "–"
    cells = [name, f"{record['step']:,}", seen, f"{record['mean_bleu']:.2f}",
             *("–" if v is None else f"{v:.1f}" for v in figures)]
    return "| " + " | ".join(cells) + " |"


def table(specs: list, every: int = 1) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for spec in specs:
        name, _, path = spec.partition("=")
        log = Path(path or name)
        if not log.is_file():
            raise SystemExit(f"error: {log}: no such log (expected OUT_DIR/log.jsonl of a bridgeembed-train run)")
        found = validations(log)
        if not found:
            raise SystemExit(f"error: {log}: no validation logged yet")
        batch = batch_size(log)
        for i, record in enumerate(found):
            if i % every == 0 or i == len(found) - 1:
                lines.append(row(name if path else log.parent.name, record, batch))
    return "\n".join(lines)


def main(argv: list | None = None) -> None:
    parser = script_parser(__doc__.split("\n")[0], threads=False)
    parser.add_argument("logs", nargs="+", help="NAME=OUT_DIR/log.jsonl (or just the path)")
    parser.add_argument("--every", type=int, default=1, help="every N-th validation (default: all)")
    args = parse_script(parser, argv)
    if args.every < 1:
        parser.error(f"--every must be a positive integer, got {args.every}")
    print(table(args.logs, args.every))


if __name__ == "__main__":
    main()
