"""A trained model under new tokenizers, as a `train.init_from`: its vocabulary carried over piece by piece.

The tokenizers a model is born with are fixed for its life (issue 29): the shipped models split text with BPE
learnt from captions, so news and parliament text costs them a quarter more pieces a word. A model from
scratch with tokenizers learnt from every corpus (`data.tokenizer_text: all`) needs a GPU. This starts from a
trained model instead: CONFIG's tokenizers are trained (or found in the cache) as its run would, and every
weight of MODEL is kept except the rows of the vocabulary tables, which are rebuilt for the new pieces:

- a piece MODEL's tokenizer also has (the same string) keeps its row;
- any other piece gets the mean of the rows of the pieces MODEL's tokenizer splits its text into (the "fast
  vocabulary transfer" of Gee et al. 2022), a piece inside a word as a piece inside a word;
- PAD, UNK, BOS and EOS keep theirs.

That applies to each encoder's embeddings, each decoder's (tied) embeddings and output bias. MODEL must have
decoders (a trainer checkpoint, or `with_decoders.py`'s output) and CONFIG's model section.

    BRIDGEEMBED_DATA=../shared/data python benchmarks/retokenized.py runs/stage12b/best.pt \\
        configs/broad/stage13.yaml runs/stage13-init.pt

Expect a higher loss for the first few hundred steps, while the model learns what its new pieces mean.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path

import torch

from bridgeembed.checkpoint import load_checkpoint, save_atomic
from bridgeembed.config import Config
from bridgeembed.pretrained import resolve
from bridgeembed.text.parallel import corpus_dir
from bridgeembed.text.tokenization import EOS, LanguageTokenizer
from bridgeembed.training.data import prepare_training_data
from bridgeembed.training.prepare import more_tokenizer_text

WORD = "\u2581"  # sentencepiece's word-start mark
SPECIAL = EOS + 1  # ids below this are PAD, UNK, BOS, EOS in every tokenizer we train


def old_pieces(old, piece: str) -> list:
    """The ids of `old` (a SentencePieceProcessor) that spell `piece` (a string of another vocabulary).

    sentencepiece marks a word start itself, so a piece from inside a word ("ment") would come back as a
    word's start ("\u2581ment"); its first id is then swapped for the same string without the mark where `old`
    has one."""
    text = piece.replace(WORD, " ")
    ids = old.encode(text, out_type=int) if text.strip() else []
    if not ids:
        return []
    if not piece.startswith(WORD):
        first = old.id_to_piece(ids[0])
        if first == WORD:
            ids = ids[1:]
        elif first.startswith(WORD) and old.piece_to_id(first[1:]) != old.unk_id():
            ids = [old.piece_to_id(first[1:]), *ids[1:]]
    return [i for i in ids if i >= SPECIAL] or ids


def transfer(old, new) -> tuple[list, int]:
    """For each id of `new`: the ids of `old` whose mean row it takes; and how many pieces kept their own row."""
    sources, same = [], 0
    for i in range(new.get_piece_size()):
        piece = new.id_to_piece(i)
        if i < SPECIAL:
            sources.append([i])
            continue
        j = old.piece_to_id(piece)
        if j != old.unk_id() and old.id_to_piece(j) == piece:
            sources.append([j])
            same += 1
        else:
            sources.append(old_pieces(old, piece) or [old.unk_id()])
    return sources, same


def mean_rows(table: torch.Tensor, sources: list) -> torch.Tensor:
    """(len(sources), *table.shape[1:]): row i the mean of table's rows sources[i]."""
    return torch.stack([table[ids].float().mean(dim=0) for ids in sources]).to(table.dtype)


def retokenized(payload: dict, tokenizers: dict, config: Config) -> tuple[dict, dict]:
    """MODEL's payload with `tokenizers` ({lang: LanguageTokenizer}) and its vocabulary rows carried over; and
    {lang: pieces that kept their own row}."""
    if payload["config"].get("model") != asdict(config.model):
        raise ValueError("the model has another model config than CONFIG's; copy its model section into CONFIG")
    missing = sorted(set(tokenizers) - set(payload.get("decoder_languages") or ()))
    if missing:
        raise ValueError(f"the model lacks the decoder of {', '.join(missing)} (an encoder-only model: give it "
                         f"decoders with with_decoders.py first)")
    state, kept = dict(payload["model"]), {}
    for lang, tokenizer in tokenizers.items():
        old = LanguageTokenizer.from_state(payload["tokenizers"][lang]).sp
        sources, kept[lang] = transfer(old, tokenizer.sp)
        for key in (f"encoders.{lang}.embed.weight", f"decoders.{lang}.embed.weight", f"decoders.{lang}.out.weight",
                    f"decoders.{lang}.out.bias"):
            if key in state:
                state[key] = mean_rows(state[key], sources)
    out = {**payload, "model": state, "tokenizers": {lang: tok.state() for lang, tok in tokenizers.items()},
           "config": {**payload["config"], "tokenizer": asdict(config.tokenizer), "data": asdict(config.data)}}
    out.pop("trainer", None)  # not a run to resume: a model to start from
    return out, kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="model with decoders (shipped name, folder or .pt)")
    parser.add_argument("config", help="the run's config: its tokenizers are trained here, as the run would")
    parser.add_argument("out", help="checkpoint file to write (.pt)")
    parser.add_argument("--data", help="data root (default: $BRIDGEEMBED_DATA)")
    args = parser.parse_args(argv)
    config = Config.from_yaml(args.config)
    more = more_tokenizer_text(config, args.data) if config.data.tokenizer_text == "all" else None
    tokenizers, _ = prepare_training_data(config, corpus_dir(config.data.path, args.data), vocab_text=more)
    try:
        payload, kept = retokenized(load_checkpoint(resolve(args.model)), tokenizers, config)
    except ValueError as err:
        print(f"retokenized.py: {args.model}: {err}", file=sys.stderr)
        return 1
    save_atomic(payload, args.out)
    sizes = ", ".join(f"{lang} {kept[lang]:,} of {tok.vocab_size:,}" for lang, tok in tokenizers.items())
    print(f"{args.out}: {args.model} under {Path(args.config).name}'s tokenizers; pieces that kept their row: {sizes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
