"""`bridgeembed-bench`: score an encoder the way the literature does."""

from __future__ import annotations

from collections.abc import Sequence

from bridgeembed.cli.runtime import dispatch

COMMANDS = {
    "senteval": ("bridgeembed.cli.senteval", "SentEval classification, NLI, similarity and probing, per head"),
    "senteval-controls": ("bridgeembed.cli.senteval_controls", "SentEval against the mean and spread of untrained "
                          "controls of several seeds: the model card's table"),
    "xnli": ("bridgeembed.cli.crosslingual:xnli", "crosslingual NLI transfer (train languages x test languages)"),
    "sentiment": ("bridgeembed.cli.crosslingual:sentiment",
                  "crosslingual sentiment transfer, trained on one language: tweets (xlm-t) by default"),
    "retrieval": ("bridgeembed.cli.crosslingual:retrieval",
                  "bitext retrieval: nearest-neighbour accuracy by cosine or margin"),
    "neutrality": ("bridgeembed.cli.crosslingual:neutrality",
                   "language neutrality: pair and mixed-pool retrieval, cosines, language-ID probe"),
    "langid": ("bridgeembed.cli.langid_bench",
               "encode without lang: the identifier's accuracy per language; retrieval with lang='auto' and codes"),
    "domains": ("bridgeembed.cli.domains",
                "retrieval on the captions (test_2016, val), PUD and dev sets of your own: the model card's table"),
    "dev-retrieval": ("bridgeembed.cli.dev_retrieval",
                      "translation retrieval on a training config's dev sets: the number that chooses a checkpoint"),
    "mining-threshold": ("bridgeembed.cli.mining_threshold",
                         "the mining threshold a model carries: planted dev pairs mined, the best mean F1 of the sets"),
    "attention": ("bridgeembed.cli.attention_bench",
                  "bridge attention over a text: per-head entropy (split at the sentence length), coverage, position"),
}


def main(argv: Sequence[str] | None = None) -> int:
    return dispatch("bridgeembed-bench", __doc__, COMMANDS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
