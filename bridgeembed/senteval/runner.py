"""Run a list of SentEval tasks with one encoder: encode each task once, score every view and seed.

The result is a plain dict (what `results.json` holds):
`{"meta": {...}, "tasks": {name: {"status", "group", "source", "seconds", "views": {view: {"metrics",
"std", "per_seed"}}}}}`; a skipped task has `"status": "skipped"` and a `"reason"`.
"""

import logging
import platform
import time

import numpy as np
import torch
from tqdm.auto import tqdm

from bridgeembed.errors import ConfigError, UnknownLanguageError
from bridgeembed.protocol import num_heads
from bridgeembed.senteval.config import EvalConfig
from bridgeembed.senteval.data import MissingData, TaskSkipped
from bridgeembed.senteval.encoding import Embeddings, encode_task
from bridgeembed.senteval.tasks import ALIASES, GROUPS, TASKS, Dirs

log = logging.getLogger(__name__)

VIEW_BUDGET = 2_000_000_000  # bytes of features scored at once; more heads are scored in blocks


def select_tasks(spec: str) -> list:
    """`all`, a group name, or comma-separated names/groups -> [(task, named_explicitly)]."""
    chosen = {}
    lookup = {n.lower(): n for n in TASKS} | {a.lower(): n for a, n in ALIASES.items()}
    for item in [s.strip() for s in spec.split(",") if s.strip()]:
        key = item.lower()
        if key == "all":
            chosen.update({n: chosen.get(n, False) for n in TASKS})
        elif key in GROUPS:
            chosen.update({n: chosen.get(n, False) for n in GROUPS[key]})
        elif key in lookup:
            chosen[lookup[key]] = True
        else:
            raise ConfigError(f"unknown task {item!r}; expected all, {', '.join(GROUPS)} or task names: {', '.join(TASKS)}")
    if not chosen:
        raise ConfigError("no task selected")
    return list(chosen.items())


def parse_heads(spec, encoder) -> object:
    """`mean` -> "mean"; `each` -> all head ids; `0,5,9` -> [0, 5, 9], checked against the encoder."""
    if spec in (None, "mean"):
        return "mean"
    k = num_heads(encoder)
    if k == 0:
        raise ConfigError(f"--heads {spec}: this encoder has no attention heads; use --heads mean")
    if spec == "each":
        return list(range(k))
    try:
        heads = [int(h) for h in str(spec).split(",")]
    except ValueError:
        raise ConfigError(f"--heads must be mean, each or head numbers like 0,5,9; got {spec!r}") from None
    bad = [h for h in heads if not 0 <= h < k]
    if bad:
        raise ConfigError(f"--heads {spec}: heads {bad} out of range; this encoder has heads 0..{k - 1}")
    return heads


def _check_language(encoder, lang):
    known = getattr(encoder, "languages", None)
    if known is not None and lang not in known:
        raise UnknownLanguageError(lang, known, what="the encoder")


def preflight(selected, dirs: Dirs) -> dict:
    """Tasks whose data folder is missing: an error when named explicitly (or when nothing could run),
    else skipped with the reason. Returns {task: reason}."""
    missing = [name for name, _ in selected if not TASKS[name].path(dirs).exists()]
    explicit = [name for name, named in selected if named and name in missing]
    if explicit or (missing and len(missing) == len(selected)):
        first = TASKS[(explicit or missing)[0]].missing(dirs)
        paths = [str(TASKS[n].path(dirs)) for n in (explicit or missing)]
        raise MissingData(paths, what=str(first).split(" not found")[0], hint=str(first).split("; ", 1)[1])
    return {name: str(TASKS[name].missing(dirs)) for name in missing}


def _aggregate(per_seed: list) -> dict:
    keys = [k for k, v in per_seed[0].items() if isinstance(v, (int, float)) and k != "seed"]
    metrics = {k: float(np.mean([r[k] for r in per_seed])) for k in keys}
    std = {k: float(np.std([r[k] for r in per_seed])) for k in keys}
    return {"metrics": metrics, "std": std, "per_seed": per_seed}


def _blocks(emb: Embeddings, n_rows: int):
    """Slices of the views small enough to score at once (features up to 4d per row for SNLI)."""
    per_view = max(1, n_rows * emb.vectors.shape[-1] * 4 * 4)
    size = max(1, VIEW_BUDGET // per_view)
    for i in range(0, len(emb.views), size):
        yield Embeddings(emb.index, emb.vectors[i : i + size], emb.views[i : i + size])


def run_task(name, encoder, cfg, seed_list, heads, dirs, lang, batch_size, device, progress) -> dict:
    task = TASKS[name]
    entry = {"group": task.group, "source": task.source(dirs), "primary": task.primary}
    start = time.perf_counter()
    try:
        loaded = task.load(dirs)
    except TaskSkipped as why:
        log.warning("%s skipped: %s", name, why)
        return {**entry, "status": "skipped", "reason": str(why), "seconds": 0.0}
    tokens = list(task.sentences(loaded))
    emb = encode_task(encoder, tokens, lang, heads, name, batch_size=batch_size, device=device, progress=progress)
    encoded = time.perf_counter()
    views = {v: [] for v in emb.views}
    runs = seed_list[:1] if task.deterministic else seed_list
    bar = tqdm(total=len(emb.views) * len(runs), desc=f"{name}: scoring", unit="head" if heads != "mean" else "run",
               disable=not progress, leave=False)
    for seed in runs:
        for block in _blocks(emb, len(tokens)):
            for view, metrics in zip(block.views, task.evaluate(loaded, block, cfg, seed)):
                views[view].append({"seed": seed, **metrics})
            bar.update(len(block.views))
    bar.close()
    end = time.perf_counter()
    log.info("%s done in %.1fs (encoding %.1fs)", name, end - start, encoded - start)
    return {**entry, "status": "ok", "seconds": end - start, "encode_seconds": encoded - start,
            "n_sentences": len(emb.index), "views": {v: _aggregate(r) for v, r in views.items()}}


def run_suite(encoder, tasks="all", config: EvalConfig = None, seed_list=(1111,), heads="mean", dirs: Dirs = None,
              lang="en", batch_size=64, device=None, progress=True, model_name="") -> dict:
    """Score `encoder` on `tasks` (a `--tasks` string); see the module docstring for the result."""
    from bridgeembed.senteval.config import get_config

    config = config or get_config("default")
    device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    _check_language(encoder, lang)
    heads = parse_heads(heads, encoder) if not isinstance(heads, list) else heads
    selected = select_tasks(tasks)
    skipped = preflight(selected, dirs)
    results = {}
    start = time.perf_counter()
    for name, _ in tqdm(selected, desc="SentEval", unit="task", disable=not progress):
        if name in skipped:
            log.warning("%s skipped: %s", name, skipped[name])
            results[name] = {"group": TASKS[name].group, "source": TASKS[name].source(dirs), "primary": TASKS[name].primary,
                             "status": "skipped", "reason": skipped[name], "seconds": 0.0}
            continue
        results[name] = run_task(name, encoder, config, list(seed_list), heads, dirs, lang, batch_size, device, progress)
    meta = {"model": model_name, "config": config.name, "kfold": config.kfold, "seeds": list(seed_list),
            "heads": heads, "lang": lang, "downstream": str(dirs.downstream), "probing": str(dirs.probing),
            "device": str(device), "seconds": time.perf_counter() - start, "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__, "python": platform.python_version(), "machine": platform.machine()}
    return {"meta": meta, "tasks": results}
