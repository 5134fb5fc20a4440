"""SentEval's evaluation protocol for any `encode(sentences, lang)` encoder, per attention head.

Modules: `readers` (SentEval's files), `encoding` (a task's sentences -> vectors through the shared
encoding cache), `classifiers` and `optim` (SentEval's PyTorch classifiers, stacked), `protocols`
(inner k-fold, k-fold, dev split), `similarity` (Tai et al.'s relatedness, STS cosine), `tasks`
(the registry), `runner` (`SentEvalEvaluator`), `report`, `plots`, `cli` (`bridgeembed-bench
senteval`), `adapters` (for the real SentEval).
"""

from bridgeembed.senteval.adapters import batcher, default_params, prepare

__all__ = ["batcher", "default_params", "prepare"]
