"""Every run writes `<stem>.json` (everything), `<stem>.csv` (the matrix), `<stem>.md` (the table, as in
the paper), through the package's one writer, and `<stem>.png` (a heat map of the matrix).
Accuracies are shown in percent."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import numpy as np

from bridgeembed.atomic import save_figure_atomic
from bridgeembed.crosslingual.margin import LABELS
from bridgeembed.crosslingual.results import RetrievalResult, TransferResult
from bridgeembed.evaluation import writer

if TYPE_CHECKING:  # for annotations only
    from matplotlib.figure import Figure

SUPERVISED_MARK = "*"


@dataclass
class MatrixTable:
    """A matrix of fractions in [0, 1] with optional marked cells and extra (pre-formatted) rows."""

    title: str
    corner: str  # header of the row-label column, e.g. "train \\ test"
    rows: List[str]
    cols: List[str]
    values: List[List[Optional[float]]]
    marked: List[List[bool]]
    extra_rows: Dict[str, List[str]] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    scoring: Optional[str] = None  # retrieval tables: how neighbours were picked; the CSV gets a column for it


def pct(value: Optional[float]) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def marked_pct(value: Optional[float], marked: bool) -> str:
    """A cell in percent, with the supervised mark when `marked` (and scored)."""
    return pct(value) + (SUPERVISED_MARK if marked and value is not None else "")


def to_markdown(table: MatrixTable) -> str:
    rows = [[row] + [marked_pct(v, m) for v, m in zip(values, marks)]
            for row, values, marks in zip(table.rows, table.values, table.marked)]
    rows += [[label] + cells for label, cells in table.extra_rows.items()]
    lines = [f"### {table.title}", "", *writer.markdown_table([table.corner] + table.cols, rows), ""]
    lines.extend(f"{note}  " for note in table.notes)
    return "\n".join(lines).rstrip() + "\n"


def csv_rows(table: MatrixTable) -> List[list]:
    """The matrix with 4 decimals, header first; skipped cells empty; a last column `scoring` when the table has one."""
    tag = [] if table.scoring is None else [table.scoring]
    header = [table.corner] + table.cols + (["scoring"] if tag else [])
    return [header] + [[row] + ["" if v is None else f"{v:.4f}" for v in values] + tag
                       for row, values in zip(table.rows, table.values)]


def heatmap(table: MatrixTable, path: Path) -> None:
    """Accuracy heat map; marked (supervised) cells get a black frame, skipped cells stay blank."""
    import matplotlib.pyplot as plt

    fig = heatmap_figure(table)
    save_figure_atomic(fig, path, dpi=120)
    plt.close(fig)


def heatmap_figure(table: MatrixTable) -> Figure:
    """The figure of `heatmap`. The colour scale is fixed at 0-100 %: scaled to the data, a 0.2-point
    spread (22.0 vs 22.2) filled the whole range and looked like a large difference."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    grid = np.array([[np.nan if v is None else 100 * v for v in row] for row in table.values], dtype=float)
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(table.cols), 1.2 + 0.6 * len(table.rows)))
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="viridis", aspect="auto", vmin=0, vmax=100)
    ax.set_xticks(range(len(table.cols)), labels=table.cols)
    ax.set_yticks(range(len(table.rows)), labels=table.rows)
    corner = table.corner.replace("\\", "/")
    ax.set_xlabel(corner.split("/")[-1].strip() if "/" in corner else "")
    ax.set_ylabel(corner.split("/")[0].strip() if "/" in corner else corner)
    for i, j in np.ndindex(grid.shape):
        if np.isfinite(grid[i, j]):
            ax.text(j, i, f"{grid[i, j]:.1f}", ha="center", va="center", fontsize=8,
                    color="black" if grid[i, j] > 50 else "white")  # viridis is light above the middle
        if table.marked[i][j] and np.isfinite(grid[i, j]):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=2))
    fig.colorbar(image, ax=ax, label="accuracy (%)")
    chars = int(0.7 * fig.get_figwidth() * 72 / (9 * 0.6))  # 9-point characters that fit above the axes
    title = textwrap.wrap(table.title, max(chars, 20), break_on_hyphens=False)  # wrapped, never clipped
    ax.set_title("\n".join(title), fontsize=9)
    fig.tight_layout()
    return fig


def write_report(out_dir: str | Path, stem: str, table: MatrixTable, payload: dict) -> Dict[str, Path]:
    """Write the four files; returns {"json": path, "csv": ..., "md": ..., "png": ...}."""
    paths = writer.write(out_dir, stem, payload, csv_rows(table), to_markdown(table))
    paths["png"] = Path(out_dir) / f"{stem}.png"
    heatmap(table, paths["png"])
    return paths


def model_name(result: Any) -> str:
    """The model's name, with the view when it is a head: `general-m2m (head 3)`."""
    return result.model if result.view == "mean" else f"{result.model} ({result.view})"


def _distribution(result: TransferResult, lang: str) -> str:
    dist = result.test_label_distribution.get(lang)
    return "–" if dist is None else "/".join(f"{100 * f:.0f}" for f in dist.values())


def cut_note(truncated: Dict[str, float], max_len: Optional[int]) -> List[str]:
    """The note on sentences cut at the encoder's max_len: every set's share, or nothing when the encoder's
    limit is not known (`truncated` empty)."""
    if not truncated:
        return []
    limit = f" ({max_len} subword tokens)" if max_len else ""
    shares = ", ".join(f"{what} {100 * share:.1f}" for what, share in truncated.items())
    return [f"sentences cut at the encoder's max_len{limit}, % of each set's distinct sentences: {shares}"]


def transfer_table(result: TransferResult) -> MatrixTable:
    """Table 6 / Table 7 layout: training sets down, test languages across, supervised cells marked."""
    values = [[result.accuracy[r][lang] for lang in result.test_langs] for r in result.train_sets]
    marked = [[result.supervised(r, lang) for lang in result.test_langs] for r in result.train_sets]
    extra = {}
    for label in dict.fromkeys(result.majority_label.values()):  # one baseline row per distinct majority label
        row = next(r for r in result.train_sets if result.majority_label.get(r) == label)
        extra[f"majority class ({label})"] = [pct(result.majority[row][lang]) for lang in result.test_langs]
    extra["test labels % (" + "/".join(result.label_names) + ")"] = [_distribution(result, lang)
                                                                     for lang in result.test_langs]
    drop = result.zero_shot_drop()["overall"]
    notes = [f"{SUPERVISED_MARK} supervised: the test language is among the training languages; "
             "unmarked cells are zero-shot.",
             "zero-shot drop (mean supervised − mean zero-shot): "
             + ("n/a (needs both kinds of cell)" if drop is None else f"{100 * drop:.1f} points")]
    notes += [f"skipped {what}: {why}" for what, why in result.skipped.items()]
    notes += cut_note(result.truncated, result.protocol.get("max_len"))
    return MatrixTable(f"{result.task}: accuracy (%) of {model_name(result)}", "train \\ test", result.train_sets,
                       result.test_langs, values, marked, extra, notes)


def retrieval_table(result: RetrievalResult) -> MatrixTable:
    """Source languages down, target languages across; the diagonal is left out. Below the matrix, the mean
    and the worst of each column, and a note with the mean and worst of every direction: the figures a user
    quotes."""
    values = [[result.accuracy[a][b] for b in result.langs] for a in result.langs]
    marked = [[False] * len(result.langs) for _ in result.langs]
    columns = [[v for v in column if v is not None] for column in zip(*values)]
    extra = {"mean": [pct(float(np.mean(c))) if c else pct(None) for c in columns],
             "worst": [pct(min(c)) if c else pct(None) for c in columns]}
    worst = result.worst()
    notes = [f"nearest neighbour by {LABELS[result.scoring]} among {result.sentences} line-aligned sentences; "
             "row = query language, column = retrieved language; mean and worst: over each column's queries."]
    if worst is not None:
        notes.append(f"all {result.directions()} directions: mean {pct(result.score())}, "
                     f"worst {pct(worst[2])} ({worst[0]} → {worst[1]})")
    notes += [f"skipped {what}: {why}" for what, why in result.skipped.items()]
    notes += cut_note(result.truncated, result.protocol.get("max_len"))
    return MatrixTable(f"bitext retrieval by {result.scoring}: accuracy (%) of {model_name(result)}", "query \\ target",
                       result.langs, result.langs, values, marked, extra, notes, result.scoring)


def write_transfer(result: TransferResult, out_dir: str | Path, stem: Optional[str] = None) -> Dict[str, Path]:
    return write_report(out_dir, stem or result.task, transfer_table(result), result.to_dict())


def views_table(results: List[TransferResult]) -> tuple[List[list], dict, str]:
    """One table of several views (--heads each: the mean over heads, then every head): a row per view, a
    column per (training set, test language) cell, the mean over cells and the zero-shot drop.
    -> (CSV rows, header first; the JSON payload, each view's whole result; the Markdown)."""
    first = results[0]
    cells = [(r, lang) for r in first.train_sets for lang in first.test_langs]
    header = ["view"] + [f"{r} → {lang}" for r, lang in cells] + ["mean", "zero-shot drop"]
    rows, payload = [header], {"task": first.task, "model": first.model, "views": {}}
    for result in results:
        values = [result.accuracy[r][lang] for r, lang in cells]
        rows.append([result.view] + [pct(v) for v in values] + [pct(result.score()),
                                                                 pct(result.zero_shot_drop()["overall"])])
        payload["views"][result.view] = result.to_dict()
    which = "the mean over heads (the sentence vector), then each head alone" if first.view == "mean" else \
        "one per view"
    notes = [f"rows: {which}; columns: training set → test language, then the mean over those cells and the "
             "zero-shot drop (mean supervised − mean zero-shot, points); each view's whole result is in "
             f"{first.task}_views.json."]
    notes += [f"skipped {what}: {why}" for what, why in first.skipped.items()]
    notes += cut_note(first.truncated, first.protocol.get("max_len"))
    lines = [f"### {first.task}: accuracy (%) of {first.model} per view", "", *writer.markdown_table(header, rows[1:]),
             "", *(f"{note}  " for note in notes)]
    return rows, payload, "\n".join(lines).rstrip() + "\n"


def views_markdown(results: List[TransferResult]) -> str:
    return views_table(results)[2]


def write_views(results: List[TransferResult], out_dir: str | Path) -> Dict[str, Path]:
    """`TASK_views.{json,csv,md}`: the table of several views (`views_table`)."""
    rows, payload, markdown = views_table(results)
    return writer.write(out_dir, f"{results[0].task}_views", payload, rows, markdown)


def write_retrieval(result: RetrievalResult, out_dir: str | Path, stem: str = "retrieval") -> Dict[str, Path]:
    return write_report(out_dir, stem, retrieval_table(result), result.to_dict())
