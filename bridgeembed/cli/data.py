"""`bridgeembed-data`: fetch evaluation and training data, prepare a training corpus, or build probing tasks."""

from __future__ import annotations

from collections.abc import Sequence

from bridgeembed.cli.runtime import dispatch

COMMANDS = {
    "senteval": ("bridgeembed.cli.downloads:senteval", "download SentEval's data and apply its preprocessing"),
    "multi30k": ("bridgeembed.cli.downloads:multi30k", "download Multi30k (en, de, fr, cs captions)"),
    "xnli": ("bridgeembed.cli.downloads:xnli", "download XNLI 1.0 dev/test in 15 languages"),
    "reviews": ("bridgeembed.cli.downloads:reviews", "download the crosslingual tweet-sentiment sets"),
    "recipe": ("bridgeembed.cli.downloads:recipe",
               "every folder a training recipe trains on, and PUD and newstest2013, from their pinned origins"),
    "pud": ("bridgeembed.cli.downloads:pud",
            "the Parallel Universal Dependencies treebanks' 1,000 sentences (en/de/fr/cs)"),
    "newstest2013": ("bridgeembed.cli.downloads:newstest2013",
                     "WMT newstest2013 (the 4-way news folder, whose valid split it is)"),
    "probing": ("bridgeembed.cli.probing", "build SentEval-format probing tasks from raw text in any language"),
    "prepare": ("bridgeembed.cli.prepare", "tokenise a training config's corpus into the cache, on every core"),
}


def main(argv: Sequence[str] | None = None) -> int:
    return dispatch("bridgeembed-data", __doc__, COMMANDS, argv, device=False)


if __name__ == "__main__":
    raise SystemExit(main())
