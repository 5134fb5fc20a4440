"""The steps of the claims (run.py): the models of models.yaml at a scale, trained once, and the project's own
benches run on them in this process (bridgeembed-translate --evaluate, bridgeembed-bench senteval / attention).

Models land in OUT/<name>/ (best.pt, last.pt, log.jsonl) and are reused once finished (an interrupted
run resumes); benches write under OUT/eval/ and are not re-run when their JSON is there.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
if str(REPO) not in sys.path:  # this checkout's bridgeembed, also when another one is installed in the environment
    sys.path.insert(0, str(REPO))
log = logging.getLogger("claims")
SPLITS = ("train", "val", "test_2016_flickr")
TEST = "test_2016_flickr"

# section.key overrides of base.yaml per scale (train.threads comes from --threads)
SCALES = {
    "toy": {"model.emb_dim": 16, "model.enc_hidden": 16, "model.dec_hidden": 16, "model.bridge_dim": 16,
            "tokenizer.vocab_size": 100, "tokenizer.moses": False, "train.max_steps": 6, "train.valid_every": 6,
            "train.valid_sentences": 10, "train.save_every": 6, "train.log_every": 3, "train.precision": "fp32"},
    "cpu": {"train.max_steps": 4000, "train.valid_every": 2000},
    "paper": {"model.emb_dim": 512, "model.enc_hidden": 512, "model.enc_layers": 2, "model.dec_hidden": 512,
              "model.dec_layers": 2, "model.bridge_dim": 1024, "model.dropout": 0.3, "tokenizer.vocab_size": 10000,
              "tokenizer.max_len": 50, "train.max_steps": 40000, "train.valid_every": 2000,
              "train.valid_sentences": 0, "train.precision": "auto"},
}

# what the benches score per scale
EVAL = {
    "toy": {"beam": 1, "sts": "STS12", "trainable": "MR,TREC", "probing": "Length", "senteval": "prototype",
            "probing_size": 0},
    "cpu": {"beam": 1, "sts": "STS12,STS13,STS14,STS15,STS16", "trainable": "MR,CR,SUBJ,MPQA,SST2,TREC",
            "probing": "Length,WordContent", "senteval": "prototype", "probing_size": 10000},
    "paper": {"beam": 5, "sts": "STS12,STS13,STS14,STS15,STS16", "trainable": "MR,CR,SUBJ,MPQA,TREC,SST2",
              "probing": "Length,WordContent,BigramShift,Depth,TopConstituents,Tense,SubjNumber,ObjNumber,"
                         "OddManOut,CoordinationInversion", "senteval": "default", "probing_size": 0},
}
PROBING_FILES = {"Length": "sentence_length.txt", "WordContent": "word_content.txt", "BigramShift": "bigram_shift.txt",
                 "Depth": "tree_depth.txt", "TopConstituents": "top_constituents.txt", "Tense": "past_present.txt",
                 "SubjNumber": "subj_number.txt", "ObjNumber": "obj_number.txt", "OddManOut": "odd_man_out.txt",
                 "CoordinationInversion": "coordination_inversion.txt"}
SENTEVAL_DIRS = {"MR": "MR", "CR": "CR", "SUBJ": "SUBJ", "MPQA": "MPQA", "TREC": "TREC", "SST2": "SST/binary",
                 **{f"STS{y}": f"STS/STS{y}-en-test" for y in range(12, 17)}}


class ClaimError(Exception):
    """Bad input found before any training: printed as one line, exit status 2."""


@dataclass
class Context:
    data: Path
    out: Path
    scale: str
    threads: int
    seconds: dict = field(default_factory=dict)  # what each step took: "train k10", "bleu k10", ...

    @property
    def eval(self) -> dict:
        return EVAL[self.scale]


# --- models -------------------------------------------------------------------------------------
def model_overrides(name: str, ctx: Context) -> list:
    variants = yaml.safe_load((HERE / "models.yaml").read_text(encoding="utf-8"))
    if name not in variants:
        raise ClaimError(f"unknown model {name!r}; models.yaml has {', '.join(variants)}")
    pairs = {**SCALES[ctx.scale], **variants[name], "train.threads": ctx.threads,
             "train.out_dir": str(ctx.out / name)}
    return [f"{key}={json.dumps(value)}" for key, value in pairs.items()]


def model_config(name: str, ctx: Context) -> object:
    from bridgeembed.config import Config

    return Config.from_yaml(HERE / "base.yaml", model_overrides(name, ctx))


def check_corpus(names: list, ctx: Context) -> None:
    """Every corpus file the models need, before any training: a ClaimError naming the first missing one."""
    for name in names:
        data = model_config(name, ctx).data
        folder = ctx.data / data.path
        for lang in data.languages:
            for split in SPLITS:
                if not any((folder / f"{split}.{lang}{ext}").is_file() for ext in ("", ".gz")):
                    raise ClaimError(f"{ctx.data} lacks the corpus: missing file {folder / f'{split}.{lang}'}.gz "
                                     f"(model {name} needs {data.path}/{{{','.join(SPLITS)}}}.{{"
                                     f"{','.join(data.languages)}}}[.gz])")


def check_senteval(tasks: str, ctx: Context) -> None:
    for task in tasks.split(","):
        folder = ctx.data / "senteval" / "downstream" / SENTEVAL_DIRS[task]
        if not folder.is_dir():
            raise ClaimError(f"{ctx.data} lacks SentEval's {task}: missing folder {folder}")


def finished(out: Path, max_steps: int) -> bool:
    """Has the run in `out` reached max_steps (or stopped early) and saved best.pt?"""
    log_file = out / "log.jsonl"
    if not (out / "best.pt").is_file() or not log_file.is_file():
        return False
    ends = [e for e in map(json.loads, log_file.read_text().splitlines()) if e.get("event") == "end"]
    return bool(ends) and (ends[-1]["step"] >= max_steps or ends[-1]["reason"] == "early_stopping")


def train_seconds(out: Path) -> float:
    """Wall time of a run from its log: the sum over its (resumed) segments from start to end."""
    total, start = 0.0, None
    for event in map(json.loads, (out / "log.jsonl").read_text().splitlines()):
        if event.get("event") in ("start", "resume"):
            start = event["time"]
        elif event.get("event") == "end" and start is not None:
            total, start = total + event["time"] - start, None
    return total


def train(name: str, ctx: Context) -> Path:
    """best.pt of model `name`, trained now unless a finished run is already there. The one use of Trainer."""
    config = model_config(name, ctx)
    out = Path(config.train.out_dir)
    if not finished(out, config.train.max_steps):
        from bridgeembed.training.trainer import Trainer

        print(f"[claims] training {name} ({ctx.scale}) into {out}", flush=True)
        trainer = Trainer.from_config(config, data_root=ctx.data, show_progress=False)
        trainer.train()
        if trainer.stopped_by:  # SIGINT/SIGTERM: last.pt is saved; scoring a half-trained model would mislead
            raise KeyboardInterrupt
    ctx.seconds[f"train {name}"] = round(train_seconds(out), 1)
    return out / "best.pt"


# --- benches (the project's own command lines, in this process) ---------------------------------------
def _call(main: object, argv: list, what: str) -> None:
    """Run a command line's main; its own report goes to the log, not between the claims' tables."""
    with contextlib.redirect_stdout(io.StringIO()) as report:
        rc = main(argv)
    log.debug("%s", report.getvalue())
    if rc:
        raise ClaimError(f"{what} failed with exit status {rc}: {' '.join(argv)}")


def _timed(ctx: Context, key: str, path: Path, run: object, model: Path) -> dict:
    """Read `path` (JSON) after `run()` made it, or as a previous run left it if it is newer than `model`; the
    seconds `run()` took are kept beside it (`path`.seconds), so a claim re-read from finished results still
    reports its compute."""
    stamp = path.with_suffix(".seconds")
    if not path.is_file() or path.stat().st_mtime < model.stat().st_mtime:
        start = time.perf_counter()
        run()
        stamp.write_text(f"{time.perf_counter() - start:.1f}\n")
    if stamp.is_file():
        ctx.seconds[key] = float(stamp.read_text())
    return json.loads(path.read_text(encoding="utf-8"))


def bleu(name: str, ctx: Context, directions: str = "all") -> dict:
    """{direction: {"bleu", "trained"}} on the test split (bridgeembed-translate --evaluate)."""
    from bridgeembed.cli import translate

    ckpt, out = train(name, ctx), ctx.out / "eval" / "bleu" / name
    argv = ["--model", str(ckpt), "--evaluate", "--data", str(ctx.data), "--split", TEST, "--directions",
            directions, "--beam", str(ctx.eval["beam"]), "--threads", str(ctx.threads), "--out", str(out)]
    result = _timed(ctx, f"bleu {name}", out / "bleu.json", lambda: _call(translate.main, argv, "translate"), ckpt)
    return result["directions"]


def senteval(name: str, ctx: Context, tasks: str, heads: str, probing: Path | None = None) -> dict:
    """{task: {view: primary score}} (bridgeembed-bench senteval)."""
    from bridgeembed.cli import bench

    ckpt = train(name, ctx)
    out = ctx.out / "eval" / "senteval" / f"{name}-{tasks.replace(',', '+')}-{heads}"
    argv = ["senteval", "--model", str(ckpt), "--tasks", tasks, "--heads", heads, "--config", ctx.eval["senteval"],
            "--data", str(ctx.data), "--threads", str(ctx.threads), "--quiet", "--no-plots", "--out", str(out)]
    if probing:
        argv += ["--probing-data", str(probing)]
    table = _timed(ctx, f"senteval {name} {tasks} {heads}", out / "results.json",
                   lambda: _call(bench.main, argv, "bench senteval"), ckpt)
    return {task: {view: s["metrics"][r["primary"]] for view, s in r.get("views", {}).items()}
            for task, r in table["tasks"].items()}


def attention(name: str, ctx: Context) -> dict:
    """bridgeembed-bench attention on the English test sentences: {"summary", "per_head", ...}."""
    from bridgeembed.cli import bench

    ckpt, out = train(name, ctx), ctx.out / "eval" / "attention" / name
    source = next(p for p in (ctx.data / "multi30k" / f"{TEST}.en{ext}" for ext in (".gz", "")) if p.is_file())
    argv = ["attention", "--model", str(ckpt), "--in", str(source), "--lang", "en", "--out", str(out)]
    return _timed(ctx, f"attention {name}", out / "attention.json",
                  lambda: _call(bench.main, argv, "bench attention"), ckpt)
