"""`python -m bridgeembed attention`: heat maps of the bridge's attention A (k heads x subword tokens).

    python -m bridgeembed attention --lang en "A dog runs on the beach." --out dog.png
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from bridgeembed.cli.options import add_options
from bridgeembed.errors import BridgeembedError

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.bridge import SentenceAttention


FIGURE_SUFFIXES = (".png", ".pdf", ".svg")


def plot_attention(result: SentenceAttention, path: str | Path, title: str = "") -> None:
    """result: a `SentenceAttention` (tokens, attention (k, n)) from `BridgeEncoder.attention`; writes a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bridgeembed.atomic import save_figure_atomic

    k, n = result.attention.shape
    fig, ax = plt.subplots(figsize=(max(4.0, 0.45 * n + 1.5), max(2.5, 0.32 * k + 1.2)))
    image = ax.imshow(result.attention, aspect="auto", cmap="viridis", vmin=0.0)
    ax.set_xticks(range(n), result.tokens, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(k), [f"head {h}" for h in range(k)], fontsize=8)
    ax.set_title(title or "attention bridge: A (each row sums to 1)", fontsize=9)
    fig.colorbar(image, ax=ax, fraction=0.03)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    save_figure_atomic(fig, path, dpi=120)
    plt.close(fig)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sentences", nargs="+", help="one or more sentences")
    parser.add_argument("--lang", required=True, help="language code of the sentences")
    add_options(parser, "--model")
    parser.add_argument("--out", default="attention.png",
                        help="PNG path; with several sentences, NAME-1.png, NAME-2.png, ... (default: attention.png)")


def run(args: argparse.Namespace) -> int:
    from bridgeembed.encoders.bridge import BridgeEncoder
    from bridgeembed.paths import check_output

    out = Path(args.out)
    paths = [out] if len(args.sentences) == 1 else [out.with_name(f"{out.stem}-{i}{out.suffix or '.png'}")
                                                    for i in range(1, len(args.sentences) + 1)]
    if out.is_dir():
        raise BridgeembedError(f"--out {out} is a folder; give a file name like {out / 'attention.png'}")
    paths = [check_output(p, "--out", "file", suffixes=FIGURE_SUFFIXES) for p in paths]  # before the model loads
    encoder = BridgeEncoder.from_pretrained(args.model, device="cpu")
    results = encoder.attention(args.sentences, args.lang)
    for path, sentence, result in zip(paths, args.sentences, results):
        plot_attention(result, path, f"[{args.lang}] {sentence}")
        print(f"wrote {path} ({len(result.tokens)} tokens x {encoder.num_heads} heads)")
    return 0
