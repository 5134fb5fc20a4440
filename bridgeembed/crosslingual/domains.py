"""Translation retrieval in and out of the caption domain, one table for several models: the model card's table.

For every model, retrieval (cosine, mean vectors; `RetrievalEvaluator`) on the captions (test_2016, val) and on
PUD (news and Wikipedia, the out-of-domain test), then one Markdown row per model with the figures the card quotes:
mean and worst of the 12 ordered pairs, PUD en->de and de->en, PUD's 6 pairs without Czech. Dev sets of one's own
(line-aligned files with {lang}, e.g. the Europarl lines a run held out) add a column each: choose checkpoints and
settings by those and by val, never by PUD.

Each (model, set) is written as `bridgeembed-bench retrieval` writes it, to `OUT/LABEL/SET/retrieval.json`, and
found there again on the next run (`fresh` recomputes): a table of several models costs only the new ones.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from bridgeembed.crosslingual.readers import find_bitext, read_bitext
from bridgeembed.crosslingual.retrieval import RetrievalEvaluator
from bridgeembed.crosslingual.sources import BITEXT_FETCH, BITEXT_SETS, bitext_set
from bridgeembed.errors import ConfigError, DataError

logger = logging.getLogger(__name__)

SETS = ("test_2016", "val", "pud")  # the named sets of every table, in its column order
LANGS = ("en", "de", "fr", "cs")
NOTE = ("nearest neighbour by cosine of the mean vectors; mean and worst over the 12 ordered pairs of en, de, fr, "
        "cs (models without Czech: their pairs); en/de/fr: the 6 pairs without cs.")


def label(model: str) -> str:
    """A folder name for a model: its name, or a checkpoint's parent folder and file stem."""
    path = Path(model)
    return f"{path.parent.name}-{path.stem}" if path.suffix == ".pt" else path.name


def parse_dev(items: list) -> dict:
    """["NAME=TEMPLATE", ...] -> {name: template}: a name other than the named sets', {lang} in the template."""
    dev = dict(item.split("=", 1) for item in items if "=" in item)
    if len(dev) < len(items) or any(name in SETS or "{lang}" not in template for name, template in dev.items()):
        raise ConfigError(f"--dev takes NAME=TEMPLATE with a name other than {', '.join(SETS)} and {{lang}} in the "
                          f"template, got {items}")
    return dev


def templates(dev: dict, root: str | Path) -> dict:
    """{set: path template with {lang}}: the named sets below the data root, then the dev sets."""
    return {**{name: bitext_set(root, name) for name in SETS}, **dev}


def _lines(name: str, template: str) -> tuple:
    paths, skipped = find_bitext(template, LANGS)
    if len(paths) < 2:
        fetch = f"; fetch it with `bridgeembed-data {BITEXT_FETCH[name]}`" if name in BITEXT_FETCH else ""
        raise DataError(f"domains: the {name} set ({BITEXT_SETS.get(name, template)}) needs files in two of "
                        f"{', '.join(LANGS)}: {'; '.join(skipped.values())}{fetch}")
    return read_bitext(paths), paths, skipped


def model_results(model: str, out: str | Path, sets: dict, *, fresh: bool = False, device: str | None = None,
                  batch_size: int = 64) -> dict:
    """{set: retrieval.json's content} of one model on `sets` ({name: template}), computed where missing: every
    missing set's files are read (and refused) first, and the model is loaded only if one is left to compute."""
    folders = {name: Path(out) / label(model) / name for name in sets}
    todo = {name: _lines(name, template) for name, template in sets.items()
            if fresh or not (folders[name] / "retrieval.json").is_file()}
    if todo:
        from bridgeembed.evaluation.models import load_encoder

        encoder = load_encoder(model, device=device)
        for name, (lines, paths, skipped) in todo.items():
            logger.info("%s: retrieval on %s", model, name)
            RetrievalEvaluator(lines, files=paths, skipped=skipped, batch_size=batch_size, model=model)(
                encoder, output_path=folders[name])
    return {name: json.loads((folder / "retrieval.json").read_text(encoding="utf-8"))
            for name, folder in folders.items()}


def figures(result: dict) -> dict:
    """mean and worst of the ordered pairs (%), and every ordered pair by name."""
    pairs = {}
    for pair in result["pairs"]:
        a, b = pair["pair"].split("-")
        pairs[f"{a}-{b}"], pairs[f"{b}-{a}"] = 100 * pair["a_to_b"], 100 * pair["b_to_a"]
    values = list(pairs.values())
    return {"mean": sum(values) / len(values), "worst": min(values), "pairs": pairs}


def without_czech(pairs: dict) -> float:
    """The mean of the ordered pairs that do not involve cs (PUD's en/de/fr: the languages USE-m has)."""
    three = [v for k, v in pairs.items() if "cs" not in k]
    return sum(three) / len(three)


def table(results: dict, dev: dict) -> str:
    """{model: {set: retrieval.json}} -> one Markdown row per model, a column per dev set after the named ones."""
    rows = ["| model | test_2016 mean | test_2016 worst | val mean | val worst | PUD mean | PUD en→de | PUD de→en "
            "| PUD en/de/fr mean |" + "".join(f" dev {name} mean |" for name in dev),
            "|---|---|---|---|---|---|---|---|---|" + "---|" * len(dev)]
    for name, found in results.items():
        test, val, pud = (figures(found[s]) for s in SETS)
        rows.append(f"| {name} | {test['mean']:.1f} | {test['worst']:.1f} | {val['mean']:.1f} | {val['worst']:.1f} "
                    f"| {pud['mean']:.1f} | {pud['pairs']['en-de']:.1f} | {pud['pairs']['de-en']:.1f} "
                    f"| {without_czech(pud['pairs']):.1f} |"
                    + "".join(f" {figures(found[d])['mean']:.1f} |" for d in dev))
    return "\n".join(rows)
