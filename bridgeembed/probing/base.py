"""What every probing task is: a name, SentEval's file name, and `build(context) -> TaskData`.

Tasks are registered by name in `bridgeembed.probing.builder.TASKS`; a new task is one small
class plus one line there.
"""

from dataclasses import dataclass
from typing import Optional, Sequence

from bridgeembed.probing.sampling import TaskData  # noqa: F401  (re-exported for task modules)


@dataclass
class BuildContext:
    """Everything a task may read; tasks never see files or the command line."""

    lang: str
    sentences: Sequence  # tuple[str, ...] per unique corpus sentence
    size: int  # examples per task at most (SentEval: 100k + 10k + 10k)
    fractions: tuple  # (tr, va, te)
    seed: int
    parses: Optional[Sequence] = None  # parse.Parsed (or None where a line is not one sentence), aligned with `sentences`


class ProbingTask:
    """Base class: subclasses set the attributes and implement `build`."""

    name = ""  # the paper's name (SentLen, WC, ...)
    filename = ""  # SentEval's file name
    needs_parser = False
    approximation = ""  # how it departs from Conneau et al. (2018); "" = follows the definition

    def build(self, ctx: BuildContext) -> TaskData:
        raise NotImplementedError
