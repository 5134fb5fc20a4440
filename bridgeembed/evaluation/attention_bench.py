"""Per-head entropy, coverage and position of the bridge's attention A over a text (`bridgeembed-bench attention`,
whose command line is `cli/attention_bench.py`).

Where `bridgeembed attention` draws A for one sentence, this measures it over many (statistics in
`evaluation.attention`) and writes attention.json, .csv, .md (through the shared writer) and
attention.png. The Markdown's first table is Vázquez et al. (2020), Table 13: the mean entropy of
the heads h < n_i (the sentence length) against that of the heads beyond it.
"""

from __future__ import annotations

import logging
from pathlib import Path

from bridgeembed.atomic import result_set, save_figure_atomic
from bridgeembed.errors import CheckpointError, DataError
from bridgeembed.evaluation.attention import GROUPS, MASS, METRICS, AttentionStats
from bridgeembed.evaluation.writer import markdown_table, write

log = logging.getLogger(__name__)
BRIDGE_WEIGHTS = ("bridge.w1.weight", "bridge.w2.weight")
GROUP_NAMES = {"within": "heads h < n_i", "beyond": "heads h >= n_i", "all": "all heads"}


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
        cells = [fmt(s[f"{metric}_{group}"]) for metric in METRICS]
        pairs = s.get(f"pairs_{group}", s["sentences"] * stats.heads)
        rows.append([GROUP_NAMES[group], *cells, pairs])
    lines += markdown_table(["heads", *METRICS, "(sentence, head) pairs"], rows)
    lines += ["", f"By rank instead of index: entropy of the n_i lowest-entropy heads of each sentence "
              f"{fmt(s['entropy_focused'])}, of the other heads {fmt(s['entropy_rest'])} nats."]
    lines += ["", "## Per head", ""]
    per = {(m, g): stats.per_head(m, g) for m in METRICS for g in ("all", *GROUPS)}
    lines += markdown_table(["head", "entropy", "entropy h < n_i", "entropy h >= n_i", "coverage", "position"],
                            [[h, fmt(per[("entropy", "all")][h]), fmt(per[("entropy", "within")][h]),
                              fmt(per[("entropy", "beyond")][h]), fmt(per[("coverage", "all")][h]),
                              fmt(per[("position", "all")][h])] for h in range(stats.heads)])
    return "\n".join(lines) + "\n"


def fmt(value: float | None) -> str:
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
    save_figure_atomic(fig, path, dpi=110)
    plt.close(fig)


def evaluate(model: str, input_path: str, lang: str, out: Path, limit: int = 0, plots: bool = True) -> tuple:
    """Measure `model`'s bridge attention over the sentences of `input_path` (the first `limit`, 0: all) in
    `lang`; write attention.json, .csv, .md (and attention.png with `plots`) into `out`, a checked folder.
    -> (AttentionStats, {format: path})."""
    from bridgeembed.evaluation.languages import check_language

    sentences = read_text(input_path, limit)
    encoder = load_bridge_encoder(model)
    check_language(encoder, lang)
    stats = measure(encoder, sentences, lang)
    meta = {"model": model, "input": input_path, "lang": lang, "heads": stats.heads, "mass": MASS,
            "entropy_unit": "nats"}
    with result_set(out):  # the files of one run, all or nothing
        paths = write(out, "attention", {"meta": meta, **stats.to_dict()}, stats.rows(), markdown(stats, meta))
        if plots:
            plot(stats, out / "attention.png", f"{model}: {stats.sentences} {lang} sentences, k = {stats.heads}")
    return stats, paths
