"""`bridgeembed-bench attention`: per-head entropy, coverage and position of the bridge's attention A over a text.

    bridgeembed-bench attention --model runs/k50/best.pt --in test.en --lang en --out results/attention/k50

Where `bridgeembed attention` draws A for one sentence, this measures it over many (statistics in
`evaluation.attention`) and writes attention.json, .csv, .md (through the shared writer) and
attention.png. The Markdown's first table is Vázquez et al. (2020), Table 13: the mean entropy of
the heads h < n_i (the sentence length) against that of the heads beyond it.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from bridgeembed.errors import CheckpointError, DataError
from bridgeembed.evaluation.attention import GROUPS, MASS, METRICS, AttentionStats
from bridgeembed.evaluation.options import add_options
from bridgeembed.evaluation.writer import markdown_table, write
from bridgeembed.paths import check_output, default_out

log = logging.getLogger(__name__)
BRIDGE_WEIGHTS = ("bridge.w1.weight", "bridge.w2.weight")
GROUP_NAMES = {"within": "heads h < n_i", "beyond": "heads h >= n_i", "all": "all heads"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_options(parser, "--model", "--data")
    parser.add_argument("--in", dest="input",
                        help="text file, one sentence per line (UTF-8, may be gzipped; default: Multi30k's "
                             "test_2016_flickr in --lang under the data root)")
    parser.add_argument("--lang", default="en", help="language code of the sentences (default: en)")
    parser.add_argument("--limit", type=int, default=0, help="measure only the first N sentences (0: all)")
    parser.add_argument("--out", help="output folder (default: results/attention/MODEL)")
    parser.add_argument("--no-plots", action="store_true", help="skip attention.png")


def load_bridge_encoder(spec: str) -> object:
    """A BridgeEncoder for `spec`, or a CheckpointError when the checkpoint has no attention bridge."""
    from bridgeembed.checkpoint import build_from_payload, load_checkpoint
    from bridgeembed.encoders.bridge import BridgeEncoder
    from bridgeembed.evaluation.models import BASELINES
    from bridgeembed.pretrained import resolve

    if spec in BASELINES:
        raise CheckpointError(f"--model {spec} is a baseline without an attention bridge; bench attention needs a "
                              f"bridge model (a shipped name, a checkpoint or an export)")
    path = resolve(spec)
    payload = load_checkpoint(path)
    model_config = (payload.get("config") or {}).get("model") or {}
    weights = payload.get("model") or {}
    if "heads" not in model_config or any(name not in weights for name in BRIDGE_WEIGHTS):
        lacking = "model.heads in its config" if "heads" not in model_config else "the bridge weights (bridge.w1/w2)"
        raise CheckpointError(f"{path} has no attention bridge: it lacks {lacking}; bench attention needs an "
                              f"attention-bridge checkpoint")
    model, tokenizers, config = build_from_payload(payload, str(path), with_decoders=False)
    return BridgeEncoder.from_model(model, tokenizers, config, device="cpu", source=spec)


def default_input(data: str | None, lang: str) -> str:
    """Multi30k's test sentences in `lang` under the data root, the text the claims measure."""
    from bridgeembed.paths import data_root
    from bridgeembed.text.parallel import corpus_file

    try:
        return str(corpus_file(data_root(data) / "multi30k", "test_2016_flickr", lang))
    except DataError as err:
        raise DataError(f"{err}; give a text file with --in FILE") from None


def read_text(path: str, limit: int) -> list:
    from bridgeembed.text.parallel import read_lines

    lines = read_lines(Path(path))  # plain or gzipped; a DataError naming the file and line for non-UTF-8 bytes
    sentences = [line.strip() for line in lines if line.strip()]
    if not sentences:
        raise DataError(f"{path} has no sentences: expected one sentence per line (UTF-8)")
    return sentences[:limit] if limit > 0 else sentences


def measure(encoder: object, sentences: list, lang: str) -> AttentionStats:
    """A of every sentence (`BridgeEncoder.attention`, the heat maps' source) into per-head statistics."""
    stats = AttentionStats(encoder.num_heads)
    for result in encoder.attention(sentences, lang):
        stats.add(result.attention)  # (k, n)
    return stats


def markdown(stats: AttentionStats, meta: dict) -> str:
    s = stats.summary()
    lines = [f"# Bridge attention: {meta['model']} on {meta['input']} ({meta['lang']})", "",
             f"{s['sentences']} sentences, {s['mean_tokens']:.1f} subword tokens on average (n_i, end marker "
             f"included), k = {stats.heads} heads. Entropy in nats; coverage: share of the tokens holding "
             f"{MASS:.0%} of a head's attention; position: mean relative position of the mass (0 first, 1 last).",
             "", "## By sentence length (Vázquez et al. 2020, Table 13)", ""]
    rows = []
    for group in (*GROUPS, "all"):
        cells = [_fmt(s[f"{metric}_{group}"]) for metric in METRICS]
        pairs = s.get(f"pairs_{group}", s["sentences"] * stats.heads)
        rows.append([GROUP_NAMES[group], *cells, pairs])
    lines += markdown_table(["heads", *METRICS, "(sentence, head) pairs"], rows)
    lines += ["", f"By rank instead of index: entropy of the n_i lowest-entropy heads of each sentence "
              f"{_fmt(s['entropy_focused'])}, of the other heads {_fmt(s['entropy_rest'])} nats."]
    lines += ["", "## Per head", ""]
    per = {(m, g): stats.per_head(m, g) for m in METRICS for g in ("all", *GROUPS)}
    lines += markdown_table(["head", "entropy", "entropy h < n_i", "entropy h >= n_i", "coverage", "position"],
                            [[h, _fmt(per[("entropy", "all")][h]), _fmt(per[("entropy", "within")][h]),
                              _fmt(per[("entropy", "beyond")][h]), _fmt(per[("coverage", "all")][h]),
                              _fmt(per[("position", "all")][h])] for h in range(stats.heads)])
    return "\n".join(lines) + "\n"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def plot(stats: AttentionStats, path: Path, title: str) -> None:
    """Three panels over the head index: entropy (all, h < n_i, h >= n_i), coverage, position."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    heads = list(range(stats.heads))
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for group, style in (("all", "-"), ("within", "--"), ("beyond", ":")):
        values = [float("nan") if v is None else v for v in stats.per_head("entropy", group)]
        axes[0].plot(heads, values, style, marker=".", label=GROUP_NAMES[group])
    axes[0].set_ylabel("entropy (nats)")
    axes[0].legend(fontsize=8)
    axes[1].plot(heads, stats.per_head("coverage"), marker=".")
    axes[1].set_ylabel(f"coverage ({MASS:.0%} of the mass)")
    axes[2].plot(heads, stats.per_head("position"), marker=".")
    axes[2].set_ylabel("mean relative position")
    for ax in axes:
        ax.set_xlabel("head")
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(args: argparse.Namespace) -> int:
    from bridgeembed.evaluation.languages import check_language

    if args.limit < 0:
        raise DataError(f"--limit must be 0 (all sentences) or a positive number, got {args.limit}")
    out = check_output(args.out or default_out("attention", args.model), "--out", "folder")  # before the work
    args.input = args.input or default_input(args.data, args.lang)
    sentences = read_text(args.input, args.limit)
    encoder = load_bridge_encoder(args.model)
    check_language(encoder, args.lang)
    stats = measure(encoder, sentences, args.lang)
    meta = {"model": args.model, "input": args.input, "lang": args.lang, "heads": stats.heads, "mass": MASS,
            "entropy_unit": "nats"}
    paths = write(out, "attention", {"meta": meta, **stats.to_dict()}, stats.rows(), markdown(stats, meta))
    if not args.no_plots:
        plot(stats, out / "attention.png", f"{args.model}: {stats.sentences} {args.lang} sentences, k = {stats.heads}")
    s = stats.summary()
    print(f"entropy h < n_i: {_fmt(s['entropy_within'])}  h >= n_i: {_fmt(s['entropy_beyond'])}  "
          f"({s['sentences']} sentences, k = {stats.heads}); wrote {paths['md'].parent}")
    return 0
