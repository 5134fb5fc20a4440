"""Training curves from a run's log.jsonl: train NLL, penalty and alignment loss, mean dev BLEU and
learning rate, and (runs that log it) dev retrieval beside BLEU: mean and worst ordered pair, mixed
pool, and the mean of the single heads.

    python benchmarks/plot_training.py runs/general-m2m/log.jsonl runs/general-m2m/training.png

The PNG is written with a palette of 64 colours: a third of the bytes of a full-colour one, with the
same lines and text, so that a model card's plots fit beside the weights (pretrained/ is capped at
45 MB). `python benchmarks/plot_training.py --compact FILE.png ...` rewrites existing PNGs that way.
"""

import io
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(log_path: str, png_path: str) -> None:
    events = [json.loads(line) for line in open(log_path, encoding="utf-8")]
    train = [e for e in events if e["event"] == "train"]
    valid = [e for e in events if e["event"] == "valid"]
    per_epoch = next(e["steps_per_epoch"] for e in events if e["event"] in ("start", "resume"))
    epoch_of = {e["step"]: e["step"] / per_epoch for e in events if "step" in e}
    retrieval = [v for v in valid if "retrieval" in v]
    fig, axes = plt.subplots(1, 3 if retrieval else 2, figsize=(15 if retrieval else 10, 3.6))
    ax1, ax2 = axes[:2]
    ax1.plot([e["epoch"] for e in train], [e["nll"] for e in train], lw=0.8, label="train NLL / token")
    ax1.plot([e["epoch"] for e in train], [e["penalty"] for e in train], lw=0.8, label="penalty ||AA^T - I||^2")
    for key, label in (("align", "alignment loss (mean vectors)"), ("align_heads", "alignment loss (per head)")):
        if any(e.get(key) for e in train):
            ax1.plot([e["epoch"] for e in train], [e.get(key, 0.0) for e in train], lw=0.8, label=label)
    ax1.set_xlabel("epoch (16 directions)")
    ax1.legend(fontsize=8)
    ax1.set_title("training loss", fontsize=9)
    steps = [v["step"] for v in valid]
    epochs = [epoch_of[s] for s in steps]
    ax2.plot(epochs, [v["mean_bleu"] for v in valid], marker="o", label="mean dev BLEU (12 directions, greedy)")
    for v, x in zip(valid, epochs):
        if v["best"]:
            ax2.plot([x], [v["mean_bleu"]], "k.", ms=3)
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("BLEU")
    twin = ax2.twinx()
    # a validation logs the rate the steps before it used (a decay it decides applies after it): "pre"
    twin.step(epochs, [v["lr"] for v in valid], where="pre", color="grey", lw=0.8, label="learning rate")
    twin.set_ylabel("learning rate", fontsize=8)
    ax2.legend(fontsize=8, loc="lower right")
    ax2.set_title("validation", fontsize=9)
    if retrieval:
        ax3 = axes[2]
        x = [epoch_of.get(v["step"], v["step"]) for v in retrieval]
        for key, label in (("mean", "ordered pairs: mean"), ("worst", "ordered pairs: worst"),
                           ("mixed", "mixed pool"), ("heads_mean", "single heads: mean")):
            ax3.plot(x, [v["retrieval"][key] for v in retrieval], marker=".", label=label)
        ax3.set_ylim(0, 100)
        ax3.set_xlabel("epoch")
        ax3.set_ylabel("dev retrieval accuracy (%)")
        ax3.legend(fontsize=8, loc="lower right")
        ax3.set_title(f"dev retrieval, cosine ({retrieval[-1]['retrieval']['sentences']} sentences per language)",
                      fontsize=9)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    compact_png(buffer, png_path)


def compact_png(source, png_path) -> None:
    """PNG `source` (a path or a file object) as a 64-colour palette PNG at `png_path`."""
    from PIL import Image

    with Image.open(source) as image:
        palette = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    palette.save(png_path, format="png", optimize=True)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--compact":
        for path in sys.argv[2:]:
            compact_png(path, path)
    elif len(sys.argv) == 3:
        main(*sys.argv[1:])
    else:
        sys.exit(__doc__)
