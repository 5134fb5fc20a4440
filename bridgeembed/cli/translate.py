"""`bridgeembed-translate`: translate text, or score every direction of a test set with BLEU.

  bridgeembed-translate --model best.pt --src de --tgt en < in.de > out.en
  bridgeembed-translate --model best.pt --evaluate --split test_2016_flickr --out results/bleu
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bridgeembed.cli.checks import model_input, output_file, read_sentences, stdout_open
from bridgeembed.cli.options import add_options
from bridgeembed.cli.runtime import add_common, run_main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bridgeembed-translate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", help="source language")
    parser.add_argument("--tgt", help="target language")
    parser.add_argument("--in", "--input", dest="input", help="one sentence per line (default: stdin; --input is "
                                                               "the old spelling, kept for this release)")
    parser.add_argument("--evaluate", action="store_true", help="BLEU of every direction on a test split")
    parser.add_argument("--corpus", help="corpus folder (default: the model's training corpus, data.path)")
    parser.add_argument("--split", help="split to score (default: the model's data.test)")
    parser.add_argument("--directions", default="all", help="'all' or a list like en-de,de-en (default: all)")
    parser.add_argument("--out", "--output", dest="out",
                        help="the translations, one per line (default: stdout); with --evaluate: the folder for "
                             "bleu.json, bleu.md, the plot and the translations (--output: the old spelling)")
    parser.add_argument("--beam", type=int, default=5, help="beam size (default 5; 1: greedy, at most 100)")
    add_options(parser, "--model", "--data", "--batch-size", "--device", "--threads", "--quantize")
    add_common(parser)
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> int:
    from bridgeembed.atomic import write_text_atomic
    from bridgeembed.directions import Direction
    from bridgeembed.errors import ConfigError, positive_int
    from bridgeembed.paths import check_not_input, check_output
    from bridgeembed.text.parallel import corpus_dir
    from bridgeembed.translation.scoring import evaluate, markdown_table
    from bridgeembed.translation.search import check_beam
    from bridgeembed.translation.translator import Translator

    try:  # every option is checked before the model loads and the work starts
        check_beam(args.beam, "--beam")
    except ValueError as err:
        raise ConfigError(str(err)) from None
    positive_int(args.batch_size, "--batch-size")
    if not args.evaluate and not (args.src and args.tgt):
        raise ConfigError("--src and --tgt are required to translate (or use --evaluate)")
    output = None if args.evaluate else output_file(args.out, "--out")
    if output:
        check_not_input(output, "--out", [("--in", args.input), *model_input(args.model)], stdin=not args.input)
    if not output and not args.evaluate:
        stdout_open("give --out FILE")
    evaluate_out = check_output(args.out, "--out", "folder") if args.out and args.evaluate else None
    translator = Translator.from_pretrained(args.model, device=args.device, quantize=args.quantize)
    model, tokenizers, config = translator.model, translator.tokenizers, translator.config
    if args.evaluate:
        folder = corpus_dir(args.corpus or config.data.path, args.data)
        directions = None if args.directions == "all" else [Direction.parse(d) for d in args.directions.split(",")]
        results = evaluate(model, tokenizers, config, folder, args.split or config.data.test, directions,
                           args.beam, args.batch_size, evaluate_out)
        print(markdown_table(results), end="")
        return 0
    sentences, _ = read_sentences(args.input)
    try:
        hyps = translator.translate(sentences, args.src, args.tgt, beam=args.beam, batch_size=args.batch_size)
    except (TypeError, ValueError) as err:
        raise ConfigError(str(err)) from None
    text = "".join(h + "\n" for h in hyps)
    if output:
        write_text_atomic(output, text)
    else:
        sys.stdout.write(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_main(parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
