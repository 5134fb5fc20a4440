"""Peak memory of `encode` on many short sentences (README, "Memory"): run it under `/usr/bin/time -v`.

The sentences are the first five words of the Multi30k training captions (English), repeated
until there are --sentences of them; heads="mean", so the result is (N, 512) float32.

    /usr/bin/time -v python benchmarks/encode_memory.py --data ../shared/data --sentences 100000
"""

import time

from bridgeembed.cli.scripts import parse_script, script_parser
from bridgeembed.encoders.bridge import BridgeEncoder
from bridgeembed.text.parallel import corpus_dir, read_lines


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--model", "--data", "--batch-size")
    parser.add_argument("--sentences", type=int, default=100_000)
    args = parse_script(parser, argv)
    captions = [" ".join(line.split()[:5]) for line in read_lines(corpus_dir("multi30k", args.data) / "train.en.gz")]
    sentences = [captions[i % len(captions)] for i in range(args.sentences)]
    encoder = BridgeEncoder.from_pretrained(args.model, device="cpu")
    start = time.perf_counter()
    vectors = encoder.encode(sentences, "en", batch_size=args.batch_size)
    print(f"{len(sentences)} sentences -> {vectors.shape} float32 ({vectors.nbytes / 2**20:.0f} MiB) "
          f"in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
