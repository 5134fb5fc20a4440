"""`python -m bridgeembed demo` (`make demo`): the shipped model at work, offline.

Encodes one caption in every language of the model, prints how close the translations are to each
other compared with unrelated captions, and translates the English caption into every language.
"""

from __future__ import annotations

import argparse

import numpy as np

from bridgeembed.cli.options import add_options

CAPTIONS = {
    "en": ["A dog is running through the grass.", "Two men are playing guitar on a stage."],
    "de": ["Ein Hund rennt durch das Gras.", "Zwei Männer spielen Gitarre auf einer Bühne."],
    "fr": ["Un chien court dans l'herbe.", "Deux hommes jouent de la guitare sur une scène."],
    "cs": ["Pes běží trávou.", "Dva muži hrají na kytaru na pódiu."],
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser, "--model")
    parser.add_argument("--beam", type=int, default=5, help="beam size of the translations (default 5; 1: greedy)")


def run(args: argparse.Namespace) -> int:
    from bridgeembed.checkpoint import load_model
    from bridgeembed.encoders.bridge import BridgeEncoder
    from bridgeembed.pretrained import resolve
    from bridgeembed.translation.translator import Translator

    model, tokenizers, config = load_model(resolve(args.model))  # one read serves encoding and translation
    encoder = BridgeEncoder.from_model(model, tokenizers, config, device="cpu", source=args.model)
    print(encoder, "\n")
    langs = [lang for lang in CAPTIONS if lang in encoder.languages]
    sentences = [s for lang in langs for s in CAPTIONS[lang]]
    vectors = encoder.encode(sentences, [lang for lang in langs for _ in CAPTIONS[lang]], normalize=True)
    sims = vectors @ vectors.T  # cosine
    labels = [f"{lang}:{i}" for lang in langs for i in range(len(CAPTIONS[lang]))]
    print("cosine similarity (caption 0 = dog, caption 1 = guitar players):")
    print("       " + " ".join(f"{x:>6}" for x in labels))
    for label, row in zip(labels, sims):
        print(f"{label:>6} " + " ".join(f"{x:6.2f}" for x in row))
    same = np.array([[a.split(":")[1] == b.split(":")[1] for b in labels] for a in labels])
    off = ~np.eye(len(labels), dtype=bool)
    print(f"\nmean cosine, same caption across languages: {sims[same & off].mean():.3f}; "
          f"different captions: {sims[~same].mean():.3f}\n")
    if not model.decoders:
        print("(this model ships without decoders: no translation)")
        return 0
    translator = Translator(model, tokenizers, config.tokenizer.max_len)
    source = CAPTIONS["en"][0] if "en" in langs else CAPTIONS[langs[0]][0]
    src = "en" if "en" in langs else langs[0]
    print(f"translations of [{src}] {source!r} (beam {args.beam}):")
    for tgt in model.decoders:
        print(f"  -> {tgt}: {translator.translate([source], src, tgt, beam=args.beam)[0]}")
    return 0
