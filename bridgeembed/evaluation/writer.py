"""The one writer of benchmark results: `<stem>.json` (everything), `<stem>.csv`, `<stem>.md`.

Every benchmark hands over the same three things, so every output folder reads alike: the
result as a dict (JSON without NaN: an undefined correlation is `null`), rows for a spreadsheet
(header first) and the Markdown a paper's table would show. `markdown_table` is the one Markdown
table renderer of the package.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from bridgeembed.atomic import write_text_atomic

log = logging.getLogger(__name__)


def clean(obj: object) -> object:
    """JSON-ready data: NaN and infinities become None, tuples lists."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    return obj


def markdown_table(header: Sequence[str], rows: Iterable[Sequence]) -> list[str]:
    """Lines of a Markdown table: `| a | b |`, `|---|---|`, then one line per row."""
    lines = ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in rows]
    return lines


def view_stem(stem: str, view: str, n_views: int) -> str:
    """The file stem of one view's results: `stem` when a run scores one view, else e.g. `xnli-head3`."""
    return stem if n_views == 1 else f"{stem}-{view.replace(' ', '')}"


def write(out_dir: str | Path, stem: str, payload: dict, rows: Iterable[Sequence], markdown: str) -> dict[str, Path]:
    """Write `stem`.json, .csv and .md into `out_dir` (created); returns {"json": path, "csv": ..., "md": ...}."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {ext: out_dir / f"{stem}.{ext}" for ext in ("json", "csv", "md")}
    table = io.StringIO()
    csv.writer(table).writerows(rows)
    write_text_atomic(paths["json"], json.dumps(clean(payload), indent=2, ensure_ascii=False) + "\n")
    write_text_atomic(paths["csv"], table.getvalue(), newline="")
    write_text_atomic(paths["md"], markdown)
    log.debug("wrote %s", ", ".join(str(p) for p in paths.values()))
    return paths
