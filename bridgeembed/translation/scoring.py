"""Test-set BLEU of every direction (zero-shot ones included) and BLEU by source length
(Vázquez et al. 2020, Table 1 and Figure 3), written as JSON, Markdown and a PNG plot."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm.auto import tqdm

from bridgeembed.atomic import result_set, save_figure_atomic, write_text_atomic
from bridgeembed.directions import Direction, evaluation_directions, training_directions
from bridgeembed.text.parallel import read_split
from bridgeembed.translation.bleu import bleu_by_length, corpus_bleu, signature
from bridgeembed.translation.translator import Translator

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.config import Config
    from bridgeembed.model import BridgeModel
    from bridgeembed.text.tokenization import LanguageTokenizer

logger = logging.getLogger(__name__)


def evaluate(model: BridgeModel, tokenizers: dict[str, LanguageTokenizer], config: Config, folder: Path, split: str,
             directions: Sequence[Direction] | None = None, beam: int = 5,
             batch_size: int = 64, out_dir: str | Path | None = None, show_progress: bool | None = None) -> dict:
    """{"signature", "split", "beam", "directions": {"en-de": {"bleu", "trained", "by_length"}}}."""
    directions = directions or [d for d in evaluation_directions(config.data) if d.tgt in model.decoders]
    langs = sorted({lang for d in directions for lang in d})
    lines = read_split(folder, split, langs)
    trained = {str(d) for d in training_directions(config.data)}
    translator = Translator(model, tokenizers, config.tokenizer.max_len)
    results = {"signature": signature(), "split": split, "beam": beam, "directions": {}}
    with result_set(out_dir):  # the translations and reports of one run land together, or not at all
        for d in tqdm(directions, desc="directions", disable=show_progress is False or None):
            keep = [i for i in range(len(lines[d.src])) if lines[d.src][i].strip() and lines[d.tgt][i].strip()]
            sources, refs = [lines[d.src][i] for i in keep], [lines[d.tgt][i] for i in keep]
            hyps = translator.translate(sources, d.src, d.tgt, beam=beam, batch_size=batch_size)
            results["directions"][str(d)] = {"bleu": corpus_bleu(hyps, refs), "trained": str(d) in trained,
                                             "sentences": len(keep), "by_length": bleu_by_length(sources, hyps, refs)}
            logger.info("%s: BLEU %.2f%s", d, results["directions"][str(d)]["bleu"],
                        "" if str(d) in trained else " (zero-shot)")
            if out_dir:
                hyp_file = Path(out_dir) / "translations" / f"{split}.{d.src}-{d.tgt}.{d.tgt}"
                hyp_file.parent.mkdir(parents=True, exist_ok=True)
                write_text_atomic(hyp_file, "\n".join(hyps) + "\n")
        if out_dir:
            write_reports(results, Path(out_dir))
    return results


def markdown_table(results: dict) -> str:
    """Source languages as rows, target languages as columns; * marks zero-shot directions."""
    scores = results["directions"]
    pairs = [Direction.parse(name) for name in scores]
    sources, targets = sorted({p.src for p in pairs}), sorted({p.tgt for p in pairs})
    rows = ["| src \\ tgt | " + " | ".join(targets) + " |", "|---|" + "---|" * len(targets)]
    for src in sources:
        cells = []
        for tgt in targets:
            entry = scores.get(f"{src}-{tgt}")
            cells.append("" if entry is None else f"{entry['bleu']:.2f}" + ("" if entry["trained"] else "*"))
        rows.append(f"| {src} | " + " | ".join(cells) + " |")
    translation = [e["bleu"] for n, e in scores.items() if Direction.parse(n).src != Direction.parse(n).tgt]
    if translation:
        rows.append(f"\nMean BLEU over {len(translation)} translation directions: "
                    f"{sum(translation) / len(translation):.2f}. * zero-shot (not trained). "
                    f"sacrebleu {results['signature']}")
    return "\n".join(rows) + "\n"


def plot_by_length(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, entry in results["directions"].items():
        d = Direction.parse(name)
        if d.src == d.tgt:
            continue
        buckets = entry["by_length"]
        ax.plot(list(buckets), [b["bleu"] for b in buckets.values()], marker="o",
                linestyle="-" if entry["trained"] else "--", label=name)
    ax.set_xlabel("source length (words)")
    ax.set_ylabel("BLEU")
    ax.set_title(f"BLEU by source length ({results['split']}; dashed: zero-shot)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    save_figure_atomic(fig, path, dpi=120)
    plt.close(fig)


def write_reports(results: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out_dir / "bleu.json", json.dumps(results, indent=2) + "\n")
    write_text_atomic(out_dir / "bleu.md", markdown_table(results))
    plot_by_length(results, out_dir / "bleu_by_length.png")
