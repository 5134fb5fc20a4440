"""`bridgeembed-recipe`: recipes that build a model from other trained models (bridgeembed/recipes.py).

    bridgeembed-recipe interpolate general-m2m runs/tuned/best.pt --alpha 0.3 0.5 0.7 --out runs/soup
    bridgeembed-recipe average runs/dec/step3500.pt runs/dec/step3750.pt runs/dec/step4000.pt --out runs/avg.pt
    bridgeembed-recipe with-decoders runs/encoder-only/best.pt runs/general-m2m/last.pt --out runs/init.pt
    bridgeembed-recipe retokenize runs/general-m2m/best.pt configs/general-m2m.yaml --out runs/retokenized-init.pt
    bridgeembed-recipe widen-decoders general-m2m --dec-hidden 512 --out runs/wide-init.pt
    bridgeembed-recipe add-decoder-heads runs/my-model/best.pt --decoder-heads 10 --out runs/heads-init.pt

Each writes a checkpoint to start a training run from (`train.init_from`) or to export (`bridgeembed-export`).
Models are shipped names, model folders or checkpoint files. An output that is one of the inputs is refused.
The retired shipped models (multi30k-m2m, broad-m2m) were made with them: their recipes are in docs/history/.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from bridgeembed.cli.options import add_options
from bridgeembed.cli.runtime import dispatch
from bridgeembed.errors import CheckpointError, ConfigError
from bridgeembed.paths import check_not_input, check_output

COMMANDS = {
    "interpolate": ("bridgeembed.cli.recipe:interpolate",
                    "weight-space interpolation of a fine-tuned checkpoint with the model it started from (WiSE-FT)"),
    "average": ("bridgeembed.cli.recipe:average",
                "the mean of several checkpoints of one run (checkpoint averaging)"),
    "with-decoders": ("bridgeembed.cli.recipe:with_decoders",
                      "give a model the decoders of another (its own replaced), so that training can go on from it"),
    "widen-decoders": ("bridgeembed.cli.recipe:widen_decoders",
                       "give every decoder LSTM more units, the model translating as before (to train on from)"),
    "add-decoder-heads": ("bridgeembed.cli.recipe:add_decoder_heads",
                          "heads only the decoders read, started so that the model translates as before"),
    "add-decoder-states": ("bridgeembed.cli.recipe:add_decoder_states",
                           "decoders that also attend over the encoder states, started so that the model translates "
                           "as before"),
    "retokenize": ("bridgeembed.cli.recipe:retokenize",
                   "a trained model under a config's new tokenizers, its vocabulary carried over piece by piece"),
}


def _models(*specs: tuple) -> list:
    """[(name, spec)] -> [(name, path)]: each model found, or a one-line error naming it."""
    from bridgeembed.pretrained import resolve

    return [(name, resolve(spec)) for name, spec in specs]


@contextmanager
def _named(model: str) -> Iterator[None]:
    """A CheckpointError or ConfigError about MODEL, as one line that names it."""
    try:
        yield
    except (CheckpointError, ConfigError) as err:
        raise type(err)(f"{model}: {err}") from None


def _load(path: Path) -> dict:
    from bridgeembed.checkpoint import load_checkpoint

    return load_checkpoint(path)


def _one_model(args: argparse.Namespace, recipe: Callable[[dict], dict]) -> tuple[Path, dict, dict]:
    """A recipe of one model: args.model loaded, RECIPE's payload of it saved to args.out (checked first, and not
    the input); -> (out, the model's payload, the one saved). A refusal names args.model."""
    from bridgeembed.checkpoint import save_atomic

    inputs = _models(("MODEL", args.model))
    out = check_output(args.out, "--out")
    check_not_input(out, "--out", inputs)
    model = _load(inputs[0][1])
    with _named(args.model):
        payload = recipe(model)
    save_atomic(payload, out)
    return out, model, payload


class Interpolate:
    """theta = (1 - alpha) * START + alpha * TUNED for each alpha: OUT/soup-ALPHA.pt, trainer checkpoints in
    float32. Both must have the same model and tokenizer configuration and the same tokenizers (a run started
    with `train.init_from` from the other has them). Choose alpha on dev sets, never on test sets."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("start", help="the model fine-tuning started from (a shipped name or a checkpoint)")
        parser.add_argument("tuned", help="the fine-tuned checkpoint")
        parser.add_argument("--alpha", type=float, nargs="+", required=True, help="weights of the tuned model, 0-1")
        parser.add_argument("--out", required=True, help="folder for soup-ALPHA.pt files")

    def run(self, args: argparse.Namespace) -> int:
        from bridgeembed.checkpoint import save_atomic
        from bridgeembed.recipes import check_same_model, interpolate

        if any(not 0.0 <= a <= 1.0 for a in args.alpha):
            raise ConfigError(f"--alpha takes weights between 0 and 1, got {args.alpha}")
        inputs = _models(("START", args.start), ("TUNED", args.tuned))
        folder = check_output(args.out, "--out", "folder")
        paths = [folder / f"soup-{alpha:g}.pt" for alpha in args.alpha]
        for i, path in enumerate(paths):
            if path in paths[:i]:  # one file written twice, the second over the first
                raise ConfigError(f"--alpha {args.alpha[paths.index(path)]:.10g} and {args.alpha[i]:.10g} would both "
                                  f"be written to {path} (names keep 6 digits): give each weight once")
            check_not_input(path, "--out", inputs)
        start, tuned = (_load(path) for _, path in inputs)
        check_same_model(start, tuned)
        for alpha, path in zip(args.alpha, paths):
            save_atomic(interpolate(start, tuned, alpha), path)
            print(f"wrote {path} (alpha {alpha:g})")
        return 0


class Average:
    """The element-wise mean of CHECKPOINTS, checkpoints of one run (the same model, the same tokenizers) saved a
    few hundred steps apart: OUT, a trainer checkpoint with the last one's config. A tensor equal in every input
    stays the same bytes, so the encoders and bridge of a decoders-only run (train.freeze) are its own. Choose
    which checkpoints on dev sets, never on test sets."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("checkpoints", nargs="+", help="two or more checkpoints of one run (or shipped names)")
        parser.add_argument("--out", required=True, help="checkpoint file to write (.pt)")

    def run(self, args: argparse.Namespace) -> int:
        from bridgeembed.checkpoint import save_atomic
        from bridgeembed.recipes import average

        if len(args.checkpoints) < 2:
            raise ConfigError(f"average takes two checkpoints or more, got {len(args.checkpoints)}: "
                              f"{args.checkpoints[0]}")
        inputs = _models(*((f"CHECKPOINT {i + 1}", spec) for i, spec in enumerate(args.checkpoints)))
        out = check_output(args.out, "--out")
        check_not_input(out, "--out", inputs)
        payloads = [_load(path) for _, path in inputs]
        save_atomic(average(payloads), out)
        print(f"{out}: the mean of {len(payloads)} checkpoints")
        return 0


class WithDecoders:
    """One checkpoint with the encoders and bridge of ENCODER and the decoders (and anything else ENCODER lacks)
    of DECODERS, e.g. those of the model ENCODER was fine-tuned from, or decoders trained on for ENCODER's
    encoders; ENCODER's own decoders, if it has some, are replaced. The decoders then meet encoders they were
    not trained with: expect a higher translation loss for the first few hundred steps."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("encoder", help="model whose encoders and bridge to keep (shipped name, folder, .pt)")
        parser.add_argument("decoders", help="model whose decoders to add")
        parser.add_argument("--out", required=True, help="checkpoint file to write (.pt)")

    def run(self, args: argparse.Namespace) -> int:
        from bridgeembed.checkpoint import DECODER_WEIGHTS, save_atomic
        from bridgeembed.recipes import with_decoders

        inputs = _models(("ENCODER", args.encoder), ("DECODERS", args.decoders))
        out = check_output(args.out, "--out")
        check_not_input(out, "--out", inputs)
        encoder, decoders = (_load(path) for _, path in inputs)
        with _named(f"ENCODER {args.encoder}, DECODERS {args.decoders}"):
            payload = with_decoders(encoder, decoders)
        save_atomic(payload, out)
        taken = sum(payload["model"][k] is v for k, v in decoders["model"].items())
        replaced = sum(k.startswith(DECODER_WEIGHTS) for k in encoder["model"])
        print(f"{out}: encoders and bridge of {args.encoder}, {taken} tensors (decoders of "
              f"{', '.join(payload['decoder_languages'])}) of {args.decoders}"
              + (f", in place of ENCODER's own {replaced}" if replaced else ""))
        return 0


class Retokenize:
    """MODEL under CONFIG's tokenizers (trained, or found in the cache, as its run would train them), its
    vocabulary rows carried over piece by piece. MODEL needs decoders (a trainer checkpoint, or the output of
    `with-decoders`) and CONFIG's model section. Expect a higher loss for the first few hundred steps."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("model", help="model with decoders (shipped name, folder or .pt)")
        parser.add_argument("config", help="the run's config: its tokenizers are trained here, as the run would")
        parser.add_argument("--out", required=True, help="checkpoint file to write (.pt)")
        add_options(parser, "--data")

    def run(self, args: argparse.Namespace) -> int:
        from bridgeembed.checkpoint import save_atomic
        from bridgeembed.config import Config
        from bridgeembed.recipes import check_languages, retokenized, run_tokenizers

        inputs = _models(("MODEL", args.model))
        out = check_output(args.out, "--out")
        check_not_input(out, "--out", [*inputs, ("CONFIG", args.config)])
        config = Config.from_yaml(args.config)
        model = _load(inputs[0][1])
        with _named(args.model):
            check_languages(model, config)  # before any tokenizer is trained
        tokenizers = run_tokenizers(config, args.data)
        with _named(args.model):
            payload, kept = retokenized(model, tokenizers, config)
        save_atomic(payload, out)
        sizes = ", ".join(f"{lang} {kept[lang]:,} of {tok.vocab_size:,}" for lang, tok in tokenizers.items())
        print(f"{out}: {args.model} under {Path(args.config).name}'s tokenizers; pieces that kept their row: {sizes}")
        return 0


class WidenDecoders:
    """MODEL with every decoder LSTM --dec-hidden units wide: the old units keep their weights and the new ones
    start with zero weights into the rest of the network, so the wider model translates exactly as MODEL does
    (to float rounding) and a decoders-only run (configs/general-m2m-decoders.yaml with model.dec_hidden and
    train.init_from OUT) trains the added capacity from there. Encoders, bridge and vocabulary tables stay the same
    bytes: every sentence vector is MODEL's. Needs tied embeddings."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("model", help="model with decoders (shipped name, folder or .pt)")
        parser.add_argument("--dec-hidden", type=int, required=True, help="the new decoder LSTM size")
        parser.add_argument("--seed", type=int, default=0, help="seed of the new units' incoming weights")
        parser.add_argument("--out", required=True, help="checkpoint file to write (.pt)")

    def run(self, args: argparse.Namespace) -> int:
        from bridgeembed.recipes import widen_decoders

        out, model, payload = _one_model(args, lambda model: widen_decoders(model, args.dec_hidden, args.seed))
        old = model["config"]["model"]["dec_hidden"]
        print(f"{out}: {args.model} with decoders of {', '.join(payload['decoder_languages'])} widened from {old} "
              f"to {args.dec_hidden} units (train with model.dec_hidden={args.dec_hidden})")
        return 0


class AddDecoderHeads:
    """MODEL with --decoder-heads decoder-only heads (model.decoder_heads): a second bridge over the encoder states
    whose columns only the decoders attend over, beside the k shared ones. It starts as a copy of the shared bridge, so
    with --decoder-heads a multiple of k the model translates exactly as MODEL does (to float rounding). A decoders-only
    run (configs/general-m2m-decoders.yaml with model.decoder_heads and train.init_from OUT, encoders and bridge
    frozen) trains them: every sentence vector stays MODEL's, since vectors read the shared heads alone."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("model", help="model with decoders (shipped name, folder or .pt)")
        parser.add_argument("--decoder-heads", type=int, required=True, help="how many decoder-only heads (k: as "
                            "many as the shared bridge has)")
        parser.add_argument("--out", required=True, help="checkpoint file to write (.pt)")

    def run(self, args: argparse.Namespace) -> int:
        from bridgeembed.recipes import add_decoder_heads

        out, _, payload = _one_model(args, lambda model: add_decoder_heads(model, args.decoder_heads))
        shared = payload["config"]["model"]["heads"]
        print(f"{out}: {args.model} with {args.decoder_heads} decoder-only heads beside its {shared} shared ones "
              f"(train with model.decoder_heads={args.decoder_heads})")
        return 0


class AddDecoderStates:
    """MODEL whose decoders also attend over the encoder states, token by token (model.decoder_states), beside the
    columns of the bridge: translation can then read every source token, which a few columns summarise. Their new
    weights into the attentional state start at zero, so the model translates exactly as MODEL does. A
    decoders-only run (configs/general-m2m-decoders.yaml with model.decoder_states=true and train.init_from OUT,
    encoders and bridge frozen) trains them: every sentence vector stays MODEL's, since vectors read the bridge."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("model", help="model with decoders (shipped name, folder or .pt)")
        parser.add_argument("--out", required=True, help="checkpoint file to write (.pt)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the new attention scores' draws")

    def run(self, args: argparse.Namespace) -> int:
        from bridgeembed.recipes import add_decoder_states

        out, _, payload = _one_model(args, lambda model: add_decoder_states(model, args.seed))
        print(f"{out}: {args.model} with decoders of {', '.join(payload['decoder_languages'])} attending over the "
              f"encoder states too (train with model.decoder_states=true)")
        return 0


interpolate = Interpolate()
average = Average()
with_decoders = WithDecoders()
retokenize = Retokenize()
widen_decoders = WidenDecoders()
add_decoder_heads = AddDecoderHeads()
add_decoder_states = AddDecoderStates()


def main(argv: Sequence[str] | None = None) -> int:
    return dispatch("bridgeembed-recipe", __doc__, COMMANDS, argv, device=False)


if __name__ == "__main__":
    sys.exit(main())
