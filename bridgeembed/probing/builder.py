"""Build a set of probing tasks from one corpus: the registry of tasks and the loop over it."""

import logging
from dataclasses import dataclass, field
from typing import Optional

from bridgeembed.probing.base import BuildContext
from bridgeembed.probing.rewrite import CoordinationInversion, OddManOut
from bridgeembed.probing.sampling import TooSmall
from bridgeembed.probing.surface import BigramShift, SentLen, WordContent
from bridgeembed.probing.syntax import ObjNumber, SubjNumber, Tense, TopConstituents, TreeDepth

logger = logging.getLogger(__name__)

# In SentEval's order (Conneau et al. 2018, Table 2): surface, syntactic, semantic.
TASKS = {
    "SentLen": SentLen,
    "WC": WordContent,
    "TreeDepth": TreeDepth,
    "TopConst": TopConstituents,
    "BShift": BigramShift,
    "Tense": Tense,
    "SubjNum": SubjNumber,
    "ObjNum": ObjNumber,
    "SOMO": OddManOut,
    "CoordInv": CoordinationInversion,
}


@dataclass
class BuildReport:
    built: dict = field(default_factory=dict)  # task name -> TaskData
    skipped: dict = field(default_factory=dict)  # task name -> reason
    tasks: dict = field(default_factory=dict)  # task name -> the task object (for file names, approximations)


def build_tasks(ctx: BuildContext, names=None, overrides: Optional[dict] = None) -> BuildReport:
    """Build `names` (default: all); a task that needs parses without `ctx.parses`, or whose corpus is
    too small, is skipped with the reason. `overrides`: task name -> a configured task object."""
    report = BuildReport()
    for name in names or TASKS:
        task = (overrides or {}).get(name) or TASKS[name]()
        report.tasks[name] = task
        if task.needs_parser and ctx.parses is None:
            report.skipped[name] = "needs a spaCy pipeline (--spacy-model; package spacy, pip install 'bridgeembed[probing]')"
        else:
            try:
                report.built[name] = task.build(ctx)
            except TooSmall as err:
                report.skipped[name] = f"corpus too small: {err}"
        if name in report.skipped:
            logger.warning("%s skipped: %s", name, report.skipped[name])
        else:
            logger.info("%s: %d examples", name, len(report.built[name].examples))
    return report
