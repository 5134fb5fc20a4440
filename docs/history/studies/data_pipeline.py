"""Data pipeline at paper scale (issue 16): time to the first training step, peak memory, a second start
(resume), and the cache on disk, for Multi30k repeated to larger corpora.

A corpus of N lines per language is Multi30k's training set repeated (the first copy as it is, copy r >= 1
with the marker word `rep{r}` in front of every line, the same in every language, so that repeats are
distinct sentences), with Multi30k's dev set. Each size trains the caption recipe of the model shipped
then (multi30k-m2m, retired in issue 42: docs/history/multi30k-m2m/config.yaml) with train.max_steps=20 and
train.threads=1 in a fresh process from an empty cache, then starts again with max_steps=40, which resumes from last.pt.

    python docs/history/studies/data_pipeline.py --data ../shared/data --sizes 29000,290000
    python docs/history/studies/data_pipeline.py --data ../shared/data --sizes 29000 --code /tmp/before --label before

--code runs another checkout (the code before the pipeline, say) on the same corpora. Figures go to
--out (JSON, one record per size, appended) and stdout (a Markdown table). `--set KEY=VALUE` adds overrides of
the config (the test makes the model tiny and runs a few hundred lines).
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bridgeembed.cli.scripts import parse_script, script_parser, write_json

REPO = Path(__file__).resolve().parents[3]
CONFIG = REPO / "docs" / "history" / "multi30k-m2m" / "config.yaml"  # captions only, as the corpora built here
MULTI30K = 29000
LANGS = ("en", "de", "fr", "cs")


def build_corpus(source: Path, folder: Path, lines: int) -> Path:
    """Multi30k train repeated to `lines` lines per language (gzip level 1: fast to write), its dev set beside."""
    if (folder / "done").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for lang in LANGS:
        with gzip.open(source / f"train.{lang}.gz", "rt", encoding="utf-8") as handle:
            base = handle.read().splitlines()
        with gzip.open(folder / f"train.{lang}.gz", "wt", encoding="utf-8", compresslevel=1) as out:
            for i in range(lines):
                copy, line = divmod(i, len(base))
                out.write((f"rep{copy} " if copy else "") + base[line] + "\n")
        shutil.copy(source / f"val.{lang}.gz", folder / f"val.{lang}.gz")
    (folder / "done").write_text("")
    return folder


def _tree(pid: int) -> list:
    """pid and every descendant's pid (from /proc)."""
    children: dict = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def _kib(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_training(code: Path, overrides: list, log: Path, event: str) -> dict:
    """Run the trainer; seconds from launch to its `event` ('start' or 'resume': just before step 1), the
    trainer's peak RSS (VmHWM), the peak of all its processes together (workers included, sampled), and the
    CPU seconds of all of them (the whole run: on a busy machine wall time grows, CPU time does not)."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    env.pop("BRIDGEEMBED_CACHE", None)
    command = [sys.executable, "-m", "bridgeembed.cli.train", str(CONFIG), *overrides]
    launched, cpu = time.time(), _children_cpu()
    errors = log.parent.with_name(f"{log.parent.name}-{event}.stderr")
    handle = open(errors, "w")
    proc = subprocess.Popen(command, cwd=code, env=env, stdout=subprocess.DEVNULL, stderr=handle)
    trainer_peak = tree_peak = 0
    while proc.poll() is None:
        trainer_peak = max(trainer_peak, _kib(proc.pid, "VmHWM"))
        tree_peak = max(tree_peak, sum(_kib(p, "VmRSS") for p in _tree(proc.pid)))
        time.sleep(0.25)
    handle.close()
    err = errors.read_text(errors="replace")
    if proc.returncode:
        raise SystemExit(f"training failed ({proc.returncode}):\n{err[-3000:]}")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    started = [r for r in records if r["event"] == event][-1]
    phases = [line.split(": ", 1)[1] for line in err.splitlines()
              if "bridgeembed.text.prepare: " in line and " in " in line]
    return {"to_first_step_s": round(started["time"] - launched, 1), "trainer_peak_rss_mb": round(trainer_peak / 1024),
            "all_processes_peak_rss_mb": round(tree_peak / 1024), "total_s": round(time.time() - launched, 1),
            "cpu_s": round(_children_cpu() - cpu, 1), "phases": phases}


def _children_cpu() -> float:
    """CPU seconds of every finished child process and its waited-for children (the trainer's workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def du(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def measure(args, lines: int) -> dict:
    work = Path(args.work)
    corpus = build_corpus(Path(args.data) / "multi30k", work / f"corpus-{lines}", lines) if lines != MULTI30K \
        else Path(args.data) / "multi30k"
    run, cache = work / f"run-{args.label}-{lines}", work / f"cache-{args.label}-{lines}"
    overrides = [f"data.path={corpus.resolve()}", f"train.out_dir={run}", "train.threads=1", "train.valid_every=100000",
                 *args.set]
    if not args.no_cache_key:
        overrides.append(f"train.cache_dir={cache}")
    load = os.getloadavg()[0]
    if args.resume_only:
        step = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()][-1]["step"]
        again = run_training(Path(args.code), [*overrides, f"train.max_steps={step + 20}"], run / "log.jsonl", "resume")
        record = {"label": args.label, "lines": lines, "resume_only": again, "load_average_before": round(load, 2)}
        print(json.dumps(record), flush=True)
        return record
    for folder in (run, cache):
        shutil.rmtree(folder, ignore_errors=True)
    first = run_training(Path(args.code), [*overrides, "train.max_steps=20"], run / "log.jsonl", "start")
    second = run_training(Path(args.code), [*overrides, "train.max_steps=40"], run / "log.jsonl", "resume")
    record = {"label": args.label, "lines": lines, "first": first, "second": second,
              "cache_mb": round(du(cache) / 2**20), "load_average_before": round(load, 2), "cores": os.cpu_count()}
    print(json.dumps(record), flush=True)
    return record


def table(records: list) -> str:
    rows = ["| code | lines per language | first start: time to step 1 | peak RSS: trainer / all processes | "
            "second start (resume) | cache on disk |", "|---|---|---|---|---|---|"]
    for r in (r for r in records if "first" in r):
        f, s = r["first"], r["second"]
        first = f"{f['to_first_step_s'] / 60:.1f} min ({f['to_first_step_s']:.0f} s)"
        rows.append(f"| {r['label']} | {r['lines']:,} | {first} | "
                    f"{f['trainer_peak_rss_mb']:,} / {f['all_processes_peak_rss_mb']:,} MB | "
                    f"{s['to_first_step_s']:.0f} s | {r['cache_mb']:,} MB |")
    return "\n".join(rows)


def main(argv=None) -> None:
    parser = script_parser(__doc__, threads=False)
    parser.add_argument("--data", required=True, help="data root with multi30k/")
    parser.add_argument("--sizes", default="29000,290000", help="lines per language, comma-separated")
    parser.add_argument("--work", default="/tmp/bridgeembed-data-pipeline", help="corpora, runs and caches")
    parser.add_argument("--code", default=str(REPO), help="the checkout to run (default: this one)")
    parser.add_argument("--label", default="after", help="names the code in the table")
    parser.add_argument("--no-cache-key", action="store_true", help="code without train.cache_dir (before it)")
    parser.add_argument("--resume-only", action="store_true",
                        help="keep an earlier call's runs and caches and measure one more resume (20 steps)")
    parser.add_argument("--out", default="results/data_pipeline.json")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="another override of the config (repeat; the test's tiny model)")
    args = parse_script(parser, argv)
    records = [measure(args, int(size)) for size in args.sizes.split(",")]
    out = Path(args.out)
    previous = json.loads(out.read_text()) if out.exists() else []
    write_json(out, previous + records)
    print(table(previous + records))


if __name__ == "__main__":
    main()
