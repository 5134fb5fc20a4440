"""Training curves from a run's log.jsonl: train NLL and penalty, mean dev BLEU, learning rate.

    python benchmarks/plot_training.py runs/multi30k-m2m/log.jsonl pretrained/multi30k-m2m/training.png
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(log_path: str, png_path: str) -> None:
    events = [json.loads(line) for line in open(log_path, encoding="utf-8")]
    train = [e for e in events if e["event"] == "train"]
    valid = [e for e in events if e["event"] == "valid"]
    epoch_of = {e["step"]: e["epoch"] for e in train}
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    ax1.plot([e["epoch"] for e in train], [e["nll"] for e in train], lw=0.8, label="train NLL / token")
    ax1.plot([e["epoch"] for e in train], [e["penalty"] for e in train], lw=0.8, label="penalty ||AA^T - I||^2")
    ax1.set_xlabel("epoch (16 directions)")
    ax1.legend(fontsize=8)
    ax1.set_title("training loss", fontsize=9)
    steps = [v["step"] for v in valid]
    epochs = [epoch_of.get(s, s / max(epoch_of.items())[0] * max(epoch_of.items())[1]) for s in steps]
    ax2.plot(epochs, [v["mean_bleu"] for v in valid], marker="o", label="mean dev BLEU (12 directions, greedy)")
    for v, x in zip(valid, epochs):
        if v["best"]:
            ax2.plot([x], [v["mean_bleu"]], "k.", ms=3)
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("BLEU")
    twin = ax2.twinx()
    twin.step(epochs, [v["lr"] for v in valid], where="post", color="grey", lw=0.8, label="learning rate")
    twin.set_ylabel("learning rate", fontsize=8)
    ax2.legend(fontsize=8, loc="lower right")
    ax2.set_title("validation", fontsize=9)
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
