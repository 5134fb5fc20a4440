"""`bridgeembed-translate`: translate text, or score every direction of a test set with BLEU.

  bridgeembed-translate --model best.pt --src de --tgt en < in.de > out.en
  bridgeembed-translate --model best.pt --evaluate --split test_2016_flickr --out results/bleu
"""

import argparse
import sys
from pathlib import Path

from bridgeembed.cli.registry import guarded, setup_logging


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="bridgeembed-translate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a checkpoint, an export, or a shipped model's name")
    parser.add_argument("--src", help="source language")
    parser.add_argument("--tgt", help="target language")
    parser.add_argument("--input", help="one sentence per line (default: stdin)")
    parser.add_argument("--output", help="default: stdout")
    parser.add_argument("--evaluate", action="store_true", help="BLEU of every direction on a test split")
    parser.add_argument("--data", help="data root (default: $BRIDGEEMBED_DATA)")
    parser.add_argument("--corpus", help="corpus folder (default: the model's training corpus, data.path)")
    parser.add_argument("--split", help="split to score (default: the model's data.test)")
    parser.add_argument("--directions", default="all", help="'all' or a list like en-de,de-en")
    parser.add_argument("--out", help="with --evaluate: folder for bleu.json, bleu.md, plot and translations")
    parser.add_argument("--beam", type=int, default=5, help="beam size (1: greedy)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda if available)")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser.parse_args(argv)


def run(args) -> int:
    import torch

    from bridgeembed.checkpoint import load_model
    from bridgeembed.data import corpus_dir, read_lines
    from bridgeembed.errors import ConfigError
    from bridgeembed.pretrained import resolve
    from bridgeembed.schedule import Direction
    from bridgeembed.translate import Translator
    from bridgeembed.translation_eval import evaluate, markdown_table

    model, tokenizers, config = load_model(resolve(args.model))
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)
    if args.evaluate:
        folder = corpus_dir(args.corpus or config.data.path, args.data)
        directions = None if args.directions == "all" else [Direction.parse(d) for d in args.directions.split(",")]
        results = evaluate(model, tokenizers, config, folder, args.split or config.data.test, directions,
                           args.beam, args.batch_size, args.out)
        print(markdown_table(results), end="")
        return 0
    if not (args.src and args.tgt):
        raise ConfigError("--src and --tgt are required to translate (or use --evaluate)")
    if args.input:
        sentences = read_lines(Path(args.input))  # a DataError naming the file when it cannot be read
    else:
        sentences = [line.rstrip("\r\n") for line in sys.stdin]
    hyps = Translator(model, tokenizers, config.tokenizer.max_len).translate(
        sentences, args.src, args.tgt, beam=args.beam, batch_size=args.batch_size)
    text = "".join(h + "\n" for h in hyps)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    setup_logging(args.verbose)
    return guarded(run, args)


if __name__ == "__main__":
    sys.exit(main())
