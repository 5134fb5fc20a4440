"""What every benchmark is: a small class that takes an encoder and returns a typed result.

In the manner of sentence-transformers' evaluators: the benchmark's data and protocol go to the
constructor, `evaluator(encoder)` scores one encoder (anything with `encode(sentences, lang,
heads=...)`, see `bridgeembed.encoders.protocol`), and `primary_metric` names the number a paper's table
shows. `output_path` writes the result with the package's one writer, as one result set
(`atomic.result_set`): every file of it, or none.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.encoders.protocol import SentenceEncoder


class Evaluator:
    """Subclasses set `name` and `primary_metric` and implement `evaluate` (and `write`)."""

    name = ""
    primary_metric = ""

    def __call__(self, encoder: SentenceEncoder, output_path: str | Path | None = None) -> object:
        result = self.evaluate(encoder)
        if output_path is not None:
            from bridgeembed.atomic import result_set

            with result_set(output_path):  # all or nothing: never a new csv beside an old png
                self.write(result, Path(output_path))
        return result

    def evaluate(self, encoder: SentenceEncoder) -> None:
        raise NotImplementedError

    def write(self, result: object, out: Path) -> list:
        """Write `result` into folder `out`; returns the paths written."""
        raise NotImplementedError
