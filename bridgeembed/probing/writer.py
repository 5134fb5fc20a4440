"""The output folder: `<task>.txt` in SentEval's format, a README.md that says what was built from
what, and the `REBUILT` marker by which the SentEval harness labels these tasks as rebuilt."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bridgeembed.atomic import atomic_file
from bridgeembed.probing.sampling import SPLITS

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.probing.base import BuildReport
    from bridgeembed.probing.corpus import Corpus
    from bridgeembed.probing.sampling import Example

logger = logging.getLogger(__name__)

MARKER = "REBUILT"


def _write_atomic(path: Path, text: str) -> None:
    with atomic_file(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def format_examples(examples: Sequence[Example]) -> str:
    """SentEval's probing format: `split<TAB>label<TAB>sentence`, one per line."""
    return "".join(f"{e.split}\t{e.label}\t{e.sentence}\n" for e in examples)


def _sizes(examples: Sequence[Example]) -> dict:
    return Counter(e.split for e in examples)


def readme(report: BuildReport, corpus: Corpus, meta: dict) -> str:
    stats = corpus.stats
    lines = [
        f"# Probing tasks rebuilt from raw text ({corpus.lang})", "",
        "SentEval-format probing tasks (Conneau et al., 2018) built by `bridgeembed-data probing`. They are **not** "
        "SentEval's own data (BookCorpus, English): report results on them as *rebuilt*.", "",
        f"- language: `{corpus.lang}`",
        f"- corpus: {', '.join(f'`{f}`' for f in stats.files)}",
        f"- lines read: {stats.lines}; kept (unique, non-empty): {stats.kept}; duplicates: {stats.duplicates}; "
        f"empty: {stats.empty}; skipped as not UTF-8: {stats.non_utf8}",
    ]
    lines += [f"- {key}: {value}" for key, value in meta.items()]
    lines += ["", "| task | file | tr | va | te | classes | definition |", "|---|---|---|---|---|---|---|"]
    for name, data in report.built.items():
        task, sizes = report.tasks[name], _sizes(data.examples)
        how = f"approximation: {task.approximation}" if task.approximation else "as in SentEval"
        if data.notes:
            how += f"; {data.notes}"
        n_classes = len({e.label for e in data.examples})
        lines.append(f"| {name} | `{task.filename}` | {sizes['tr']} | {sizes['va']} | {sizes['te']} | {n_classes} "
                     f"| {how} |")
    if report.skipped:
        lines += ["", "## Skipped", ""]
        lines += [f"- {name} (`{report.tasks[name].filename}`): {reason}" for name, reason in report.skipped.items()]
    lines += ["", "Every class has the same number of examples in each split; splits share no sentence. "
              "Tense, SubjNumber and ObjNumber also keep each target word form in one split.", ""]
    return "\n".join(lines)


def write_folder(out: Path, report: BuildReport, corpus: Corpus, meta: dict) -> None:
    """Write the built tasks, remove files of tasks skipped this time (stale data would be mislabelled)."""
    out.mkdir(parents=True, exist_ok=True)
    for name, task in report.tasks.items():
        path = out / task.filename
        if name in report.built:
            _write_atomic(path, format_examples(report.built[name].examples))
            sizes = _sizes(report.built[name].examples)
            logger.info("wrote %s (%s)", path, ", ".join(f"{s} {sizes[s]}" for s in SPLITS))
        elif path.exists():
            path.unlink()
            logger.info("removed %s from an earlier build (the task was skipped now)", path)
    _write_atomic(out / "README.md", readme(report, corpus, meta))
    _write_atomic(out / MARKER, f"rebuilt by bridgeembed-data probing from a {corpus.lang} corpus; see README.md\n")
