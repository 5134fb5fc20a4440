"""SentEval's evaluation protocol for any `encode(sentences, lang)` encoder, per attention head.

Modules: `readers` (SentEval's files), `encoding` (a task's sentences -> vectors through the shared
encoding cache), `classifiers` and `optim` (SentEval's PyTorch classifiers, stacked), `protocols`
(inner k-fold, k-fold, dev split), `similarity` (Tai et al.'s relatedness, STS cosine), `tasks`
(the registry), `runner` (`SentEvalEvaluator`), `report`, `plots`, `cli` (`bridgeembed-bench
senteval`), `adapters` (for the real SentEval).
"""

__all__ = ["batcher", "default_params", "prepare"]


def __getattr__(name: str) -> object:
    """The adapters on first use: importing a light module of the package (readers, for `MissingData`) does not
    load torch and the classifiers (issue 50: `bridgeembed-bench senteval` without data took 7-9 s to say so)."""
    if name in __all__:
        from bridgeembed.senteval import adapters

        return getattr(adapters, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
