"""What every probing task is: a name, SentEval's file name, and `build(context) -> TaskData`.

Tasks are registered by name in `bridgeembed.probing.builder.TASKS`; a new task is one small
class plus one line there.
"""

import random
from dataclasses import dataclass, field
from typing import Optional, Sequence

from bridgeembed.probing.names import ABBREVIATIONS, FILES
from bridgeembed.probing.sampling import TaskData, task_rng


@dataclass
class BuildContext:
    """Everything a task may read; tasks never see files or the command line."""

    lang: str
    sentences: Sequence  # tuple[str, ...] per unique corpus sentence
    size: int  # examples per task at most (SentEval: 100k + 10k + 10k)
    fractions: tuple  # (tr, va, te)
    seed: int
    parses: Optional[Sequence] = None  # parse.Parsed per sentence (None: not one sentence), aligned with `sentences`


@dataclass
class BuildReport:
    """What a build made: the tasks built, those skipped and why (the writer's and the README's input)."""

    built: dict = field(default_factory=dict)  # task name -> TaskData
    skipped: dict = field(default_factory=dict)  # task name -> reason
    tasks: dict = field(default_factory=dict)  # task name -> the task object (for file names, approximations)


class ProbingTask:
    """Base class: subclasses set the attributes and implement `build`."""

    name = ""  # SentEval's name (`names.TASKS`)
    needs_parser = False
    approximation = ""  # how it departs from Conneau et al. (2018); "" = follows the definition

    @property
    def filename(self) -> str:
        """SentEval's file name."""
        return FILES[self.name]

    def rng(self, seed: int) -> random.Random:
        """The task's own generator. Keyed by the paper's abbreviation, the name tasks were first built
        under, so that a seed still gives the same data."""
        return task_rng(seed, ABBREVIATIONS[self.name])

    def build(self, ctx: BuildContext) -> TaskData:
        raise NotImplementedError
