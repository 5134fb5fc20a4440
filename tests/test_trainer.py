"""The trainer: it learns, it logs, and an interrupted run resumes exactly."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch
from toy import toy_config

from bridgeembed.checkpoint import load_checkpoint
from bridgeembed.trainer import Trainer

REPO = Path(__file__).resolve().parents[1]


def records(run: Path, event: str) -> list:
    lines = (run / "log.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["event"] == event]


def test_overfits_copy_and_reverse(toy_run):
    run, state = toy_run
    valid = records(run, "valid")
    assert state.step == 400 and len(valid) == 2
    assert set(valid[-1]["bleu"]) == {"x-y", "y-x", "x-x", "y-y"}
    assert valid[-1]["mean_bleu"] > 90, valid[-1]["bleu"]
    assert all(b > 90 for b in valid[-1]["bleu"].values()), valid[-1]["bleu"]
    train = records(run, "train")
    assert train[-1]["nll"] < train[0]["nll"] / 4
    assert {"penalty", "pairs_per_s", "tokens_per_s", "lr", "epoch"} <= set(train[-1])
    assert (run / "best.pt").exists() and (run / "last.pt").exists() and (run / "config.yaml").exists()
    assert load_checkpoint(run / "last.pt")["trainer"]["step"] == 400


def params(trainer) -> dict:
    return {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}


def assert_same(a: dict, b: dict):
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


def run_to(corpus, out, steps, **train):
    config = toy_config(corpus, out, max_steps=steps, **train)
    config.model.dropout = 0.2  # dropout makes the test check that the RNG state is restored too
    trainer = Trainer(config, show_progress=False)
    trainer.train()
    return trainer


def test_resume_reaches_the_same_parameters(toy_corpus, tmp_path):
    settings = dict(valid_every=25, valid_sentences=20, save_every=10, lr_decay=0.5)
    straight = run_to(toy_corpus, tmp_path / "straight", 60, **settings)
    run_to(toy_corpus, tmp_path / "stopped", 40, **settings)
    resumed = run_to(toy_corpus, tmp_path / "stopped", 60, **settings)
    assert records(tmp_path / "stopped", "resume")[0]["step"] == 40
    assert resumed.state == straight.state
    assert_same(params(resumed), params(straight))


def _launch(corpus, out) -> subprocess.Popen:
    script = (f"import sys; sys.path[:0] = [{str(REPO)!r}, {str(REPO / 'tests')!r}]\n"
              "from toy import toy_config\nfrom bridgeembed.trainer import Trainer\n"
              f"c = toy_config({str(corpus)!r}, {str(out)!r}, max_steps=100000, valid_every=100000, "
              "save_every=10, log_every=5, threads=1)\nc.model.dropout = 0.2\nTrainer(c, show_progress=False).train()\n")
    return subprocess.Popen([sys.executable, "-c", script])


def _wait_for_step(out: Path, step: int, proc, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if (out / "log.jsonl").exists() and any(r["step"] >= step for r in records(out, "train")):
            return
        assert proc.poll() is None, "training process died"
        time.sleep(0.2)
    raise AssertionError(f"no step {step} within {timeout}s")


def _interrupted_run_matches(corpus, tmp_path, sig):
    out = tmp_path / "interrupted"
    proc = _launch(corpus, out)
    _wait_for_step(out, 35, proc)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    stopped_at = load_checkpoint(out / "last.pt")["trainer"]["step"]
    target = stopped_at + 15
    settings = dict(valid_every=100000, save_every=10, log_every=5, threads=1)  # the same threads as the child
    resumed = run_to(corpus, out, target, **settings)
    straight = run_to(corpus, tmp_path / "straight", target, **settings)
    assert_same(params(resumed), params(straight))
    return proc.returncode, stopped_at


def test_sigint_saves_and_resumes_exactly(toy_corpus, tmp_path):
    code, stopped_at = _interrupted_run_matches(toy_corpus, tmp_path, signal.SIGINT)
    assert code == 0  # a clean stop with last.pt written at the current step
    assert stopped_at >= 35
    assert records(tmp_path / "interrupted", "end")[0]["reason"] == "interrupted"


def test_kill_resumes_from_last_checkpoint_exactly(toy_corpus, tmp_path):
    code, stopped_at = _interrupted_run_matches(toy_corpus, tmp_path, signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert stopped_at % 10 == 0 and stopped_at >= 30  # the last periodic save survived the kill


def test_early_stopping_and_lr_decay(toy_corpus, tmp_path):
    config = toy_config(toy_corpus, tmp_path / "run", max_steps=1000, valid_every=5, valid_sentences=5,
                        patience=2, lr=1e-9, lr_decay=0.5)
    state = Trainer(config, show_progress=False).train()
    assert state.step < 1000 and state.bad_validations == 2
    assert records(tmp_path / "run", "end")[0]["reason"] == "early_stopping"
    assert state.lr == 1e-9 * 0.25
