"""SentEval's evaluation protocol for any `encode(sentences, lang)` encoder, per attention head.

Modules: `data` (SentEval's files), `encoding` (sentences -> checked vectors), `classifiers` and
`optim` (SentEval's PyTorch classifiers, stacked), `protocols` (inner k-fold, k-fold, dev split),
`similarity` (Tai et al.'s relatedness, STS cosine), `tasks` (the registry), `runner`, `report`,
`plots`, `cli` (`bridgeembed-bench senteval`), `adapters` (for the real SentEval).
"""

from bridgeembed.senteval.adapters import batcher, default_params, prepare

__all__ = ["batcher", "default_params", "prepare"]
