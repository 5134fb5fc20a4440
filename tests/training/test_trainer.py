"""The trainer: it learns, it logs, and an interrupted run resumes exactly (what a run prints:
test_train_output.py)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from bridgeembed.checkpoint import load_checkpoint
from bridgeembed.errors import DataError
from bridgeembed.training.distributed import World
from bridgeembed.training.setup import prepare
from bridgeembed.training.trainer import Trainer
from tests.helpers import REPO
from tests.helpers.toy import toy_config


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
    trainer = Trainer.from_config(config, show_progress=False)
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


def test_keep_every_keeps_the_weights_of_every_nth_step(toy_corpus, tmp_path):
    out = tmp_path / "kept"
    settings = dict(valid_every=100000, save_every=7, keep_every=10)
    run_to(toy_corpus, out, 20, **settings)
    resumed = run_to(toy_corpus, out, 30, **settings)  # a resumed run keeps on, the earlier copies stay
    assert sorted(p.name for p in out.glob("step*.pt")) == ["step10.pt", "step20.pt", "step30.pt"]
    kept = load_checkpoint(out / "step30.pt")
    assert "optimizer" not in kept and kept["trainer"]["step"] == 30
    assert_same(kept["model"], params(resumed))
    first = load_checkpoint(out / "step10.pt")
    assert first["trainer"]["step"] == 10
    assert not torch.equal(first["model"]["bridge.w1.weight"], kept["model"]["bridge.w1.weight"])


def test_keep_every_off_keeps_no_copies(toy_corpus, tmp_path):
    run_to(toy_corpus, tmp_path / "plain", 20, valid_every=100000, save_every=10)
    assert not list((tmp_path / "plain").glob("step*.pt"))


def _launch(corpus, out) -> subprocess.Popen:
    """`bridgeembed-train CONFIG` in a child process, on this checkout's code."""
    config = toy_config(corpus, out, max_steps=100000, valid_every=100000, save_every=10, log_every=5, threads=1)
    config.model.dropout = 0.2
    path = Path(out).with_suffix(".yaml")
    path.write_text(yaml.safe_dump(config.to_dict()))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-m", "bridgeembed.cli.train", str(path)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


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
    proc.communicate(timeout=60)
    stopped_at = load_checkpoint(out / "last.pt")["trainer"]["step"]
    target = stopped_at + 15
    settings = dict(valid_every=100000, save_every=10, log_every=5, threads=1)  # the same threads as the child
    resumed = run_to(corpus, out, target, **settings)
    straight = run_to(corpus, tmp_path / "straight", target, **settings)
    assert_same(params(resumed), params(straight))
    return proc.returncode, stopped_at


def test_sigint_saves_and_resumes_exactly(toy_corpus, tmp_path):
    code, stopped_at = _interrupted_run_matches(toy_corpus, tmp_path, signal.SIGINT)
    assert code == 130  # saved, and scripts can tell the run did not finish
    assert stopped_at >= 35
    assert records(tmp_path / "interrupted", "end")[0]["reason"] == "interrupted"


def test_kill_resumes_from_last_checkpoint_exactly(toy_corpus, tmp_path):
    code, stopped_at = _interrupted_run_matches(toy_corpus, tmp_path, signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert stopped_at % 10 == 0 and stopped_at >= 30  # the last periodic save survived the kill


def test_early_stopping_and_lr_decay(toy_corpus, tmp_path):
    config = toy_config(toy_corpus, tmp_path / "run", max_steps=1000, valid_every=5, valid_sentences=5,
                        patience=2, lr=1e-9, lr_decay=0.5)
    state = Trainer.from_config(config, show_progress=False).train()
    assert state.step < 1000 and state.bad_validations == 2
    assert records(tmp_path / "run", "end")[0]["reason"] == "early_stopping"
    assert state.lr == 1e-9 * 0.25


def test_sigterm_saves_and_exits_143(toy_corpus, tmp_path):
    out = tmp_path / "run"
    proc = _launch(toy_corpus, out)
    _wait_for_step(out, 12, proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err.decode()
    assert "interrupted by SIGTERM" in err.decode() and "Traceback" not in err.decode()
    end = records(out, "end")[0]
    assert end["reason"] == "interrupted" and load_checkpoint(out / "last.pt")["trainer"]["step"] == end["step"]


def test_sighup_saves_and_exits_129(toy_corpus, tmp_path):
    """Issue 19: closing the terminal (SIGHUP) ended training without the save SIGINT and SIGTERM get."""
    out = tmp_path / "run"
    proc = _launch(toy_corpus, out)
    _wait_for_step(out, 12, proc)
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 129, err.decode()
    assert "interrupted by SIGHUP" in err.decode() and "Traceback" not in err.decode()
    end = records(out, "end")[0]
    assert end["reason"] == "interrupted" and load_checkpoint(out / "last.pt")["trainer"]["step"] == end["step"]


def test_a_config_inside_out_dir_is_never_overwritten(toy_corpus, tmp_path, capsys):
    """Issue 19: `bridgeembed-train D/config.yaml train.out_dir=D` replaced the user's config.yaml (and its
    comments) with the resolved one."""
    from bridgeembed.cli.train import main

    out = tmp_path / "run"
    out.mkdir()
    mine = out / "config.yaml"
    text = "# my notes: lr tuned by hand\n" + yaml.safe_dump(toy_config(toy_corpus, out, max_steps=2).to_dict())
    mine.write_text(text)
    assert main([str(mine)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"error: train.out_dir {out} holds {mine}, the config this run starts from" in err
    assert mine.read_text() == text and not (out / "last.pt").exists()
    assert main([str(mine), f"train.out_dir={tmp_path / 'elsewhere'}"]) == 0  # another out_dir: trains
    assert mine.read_text() == text


@pytest.mark.parametrize("left", [["best.pt", "config.yaml"], ["best.pt"], ["log.jsonl"]])
def test_a_new_run_over_an_earlier_one_is_refused(toy_corpus, tmp_path, capsys, left):
    """Issue 31: an out_dir with an earlier run's best.pt (or a user's files) but no last.pt was trained over,
    silently replacing them."""
    from bridgeembed.cli.train import main

    out = tmp_path / "run"
    out.mkdir()
    for name in left:
        (out / name).write_bytes(b"earlier " + name.encode())
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(toy_config(toy_corpus, out, max_steps=2).to_dict()))
    assert main([str(config)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"error: train.out_dir {out} holds {', '.join(left)} but no last.pt to resume from" in err
    assert all((out / name).read_bytes() == b"earlier " + name.encode() for name in left)
    assert not (out / "last.pt").exists()


def test_a_second_trainer_on_the_same_out_dir_is_refused(toy_corpus, tmp_path):
    """Issue 19: two trainers on one out_dir overwrote each other's checkpoints; the second is now refused."""
    from bridgeembed.errors import ConfigError

    out = tmp_path / "run"
    proc = _launch(toy_corpus, out)
    try:
        _wait_for_step(out, 5, proc)
        config = toy_config(toy_corpus, out, max_steps=100000, valid_every=100000, save_every=10, log_every=5,
                            threads=1)
        config.model.dropout = 0.2  # as _launch's: a resumable config, whether last.pt is there yet or not
        with pytest.raises(ConfigError, match=f"train.out_dir {out} is in use by process {proc.pid}: two runs in "
                                              f"one folder would overwrite each other's checkpoints"):
            # refused before any data is prepared (before last.pt exists), or else when it trains
            Trainer.from_config(config, show_progress=False).train()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    assert proc.returncode == 143
    run_to(toy_corpus, out, load_checkpoint(out / "last.pt")["trainer"]["step"] + 2, valid_every=100000,
           save_every=10, log_every=5, threads=1)  # the lock went with the process


def test_log_after_a_kill_and_resume_has_each_step_once_in_order(toy_corpus, tmp_path):
    """Issue 19: kill -9 after a log record but before the next save, then resume: log.jsonl had the
    steps between the save and the kill twice, out of order."""
    out = tmp_path / "run"
    settings = dict(valid_every=100000, save_every=10, log_every=5, threads=1)
    run_to(toy_corpus, out, 20, **settings)
    with open(out / "log.jsonl", "a", encoding="utf-8") as log:  # what the killed run wrote after its save
        log.write(json.dumps({"event": "train", "time": 0, "step": 25, "nll": 1.0}) + "\n")
        log.write('{"event": "train", "time": 0, "st')  # cut by the kill
    run_to(toy_corpus, out, 30, **settings)
    lines = (out / "log.jsonl").read_text().splitlines()
    steps = [r["step"] for r in map(json.loads, lines) if r["event"] == "train"]
    assert steps == [5, 10, 15, 20, 25, 30]
    assert [r["event"] for r in map(json.loads, lines)].count("resume") == 1


def test_a_non_finite_loss_stops_and_keeps_the_last_good_checkpoint(toy_corpus, tmp_path):
    """Issue 19: train.penalty_weight=.inf trained on with NaN weights and saved them over last.pt."""
    from bridgeembed.errors import BridgeembedError

    out = tmp_path / "run"
    settings = dict(valid_every=100000, save_every=10, log_every=5, threads=1)
    run_to(toy_corpus, out, 10, **settings)
    good = (out / "last.pt").read_bytes()
    config = toy_config(toy_corpus, out, max_steps=30, penalty_weight=float("inf"), **settings)
    config.model.dropout = 0.2
    with pytest.raises(BridgeembedError, match=r"training diverged: the loss became NaN or Inf between steps 10 and "
                                               r"15; stopped without saving"):
        Trainer.from_config(config, show_progress=False).train()
    assert (out / "last.pt").read_bytes() == good
    load_checkpoint(out / "last.pt")  # finite, loadable


def test_a_full_disk_during_a_checkpoint_save_keeps_the_last_good_one(toy_corpus, tmp_path, monkeypatch, capsys):
    """Issue 19: a full disk while saving, and again on resume: one line each time, last.pt survives."""
    import errno

    from bridgeembed import checkpoint
    from bridgeembed.cli.train import main

    out = tmp_path / "run"
    settings = dict(valid_every=100000, save_every=10, log_every=5, threads=1)
    run_to(toy_corpus, out, 10, **settings)
    good = (out / "last.pt").read_bytes()
    real_save = torch.save

    def full_disk(obj, handle, *args, **kwargs):
        real_save({"half": torch.zeros(1000)}, handle)  # some bytes land in the temporary, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(checkpoint.torch, "save", full_disk)
    config = toy_config(toy_corpus, out, max_steps=20, **settings)
    config.model.dropout = 0.2
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config.to_dict()))
    for _ in range(2):  # the save fails, and again on the next resume
        assert main([str(path)]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err
        assert f"error: cannot write {out / 'last.pt'}: No space left on device; the previous file is unchanged" in err
        assert (out / "last.pt").read_bytes() == good
        assert not list(out.glob(".*.tmp"))
    monkeypatch.setattr(checkpoint.torch, "save", real_save)
    assert main([str(path)]) == 0 and load_checkpoint(out / "last.pt")["trainer"]["step"] == 20


def test_stale_temporaries_are_removed_on_start(toy_corpus, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    stale = out / ".last.pt.999999999.tmp"  # no such process: a kill during a save left it
    live = out / f".best.pt.{os.getppid()}.tmp"  # a live process may be writing it: keep
    for path in (stale, live):
        path.write_bytes(b"half a checkpoint")
    config = toy_config(toy_corpus, out, max_steps=2, valid_every=100, save_every=100)
    Trainer.from_config(config, show_progress=False).train()
    assert not stale.exists() and live.exists() and (out / "last.pt").exists()


@pytest.mark.parametrize("content", ["", "\n\n\n"])
def test_unusable_validation_files_fail_before_step_one(toy_corpus, tmp_path, content):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for path in toy_corpus.iterdir():
        (corpus / path.name).write_bytes(path.read_bytes())
    for lang in ("x", "y"):
        (corpus / f"val.{lang}").write_text(content)
    with pytest.raises(DataError, match=r"validation split 'val' in .* has no sentence pair with text on both "
                                        r"sides for x-y \(val.x: 0 non-empty of \d+ lines, val.y"):
        Trainer.from_config(toy_config(corpus, tmp_path / "run"), show_progress=False)
    assert not (tmp_path / "run").exists()


def test_best_pt_copied_over_last_pt_resumes_without_optimizer_state(toy_run, toy_corpus, tmp_path, caplog):
    run, state = toy_run
    out = tmp_path / "run"
    out.mkdir()
    (out / "last.pt").write_bytes((run / "best.pt").read_bytes())
    trainer = Trainer.from_config(toy_config(toy_corpus, out, max_steps=state.best_step + 3), show_progress=False)
    assert "no optimizer state" in caplog.text and "best.pt" in caplog.text
    assert trainer.state.step == state.best_step
    assert trainer.train().step == state.best_step + 3


def test_trainer_trains_with_the_scaled_learning_rate(toy_corpus, tmp_path):
    config = toy_config(toy_corpus, tmp_path / "a", lr=0.001, lr_batch=16, batch_size=64)
    trainer = Trainer.from_config(config, show_progress=False)
    assert trainer.state.lr == pytest.approx(0.002)  # sqrt(64 / 16) x 0.001 (Adam)
    assert all(group["lr"] == pytest.approx(0.002) for group in trainer.optimizer.param_groups)


def test_a_trainer_handed_its_parts_trains_as_from_config(toy_corpus, tmp_path):
    """prepare + Trainer(model, data, train, world) + restore is what from_config does: the same losses, seed for
    seed, and the same resumed run."""
    def losses(run: Path) -> list:
        return [(r["step"], r["nll"], r["penalty"]) for r in records(run, "train")]

    settings = dict(max_steps=20, valid_every=10, valid_sentences=10, save_every=10, log_every=5)
    Trainer.from_config(toy_config(toy_corpus, tmp_path / "a", **settings), show_progress=False).train()
    config = toy_config(toy_corpus, tmp_path / "b", **settings)
    parts = prepare(config)
    assert parts.resume is None and next(parts.model.parameters()).device.type == "cpu"
    Trainer(parts.model, parts.data, config.train, World(), show_progress=False).train()
    assert losses(tmp_path / "a") == losses(tmp_path / "b") and len(losses(tmp_path / "a")) == 4
    longer = toy_config(toy_corpus, tmp_path / "b", **{**settings, "max_steps": 25})
    parts = prepare(longer)
    trainer = Trainer(parts.model, parts.data, longer.train, World(), show_progress=False)
    trainer.restore(parts.resume)
    assert trainer.state.step == 20 and trainer.train().step == 25


def test_a_resume_with_a_new_lr_applies_it_and_says_so(toy_corpus, tmp_path, caplog):
    """Issue 31: resuming with train.lr=X kept the checkpoint's rate while config.yaml said X."""
    import logging

    out = tmp_path / "run"
    Trainer.from_config(toy_config(toy_corpus, out, max_steps=4, valid_every=100), show_progress=False).train()
    caplog.set_level(logging.WARNING, "bridgeembed")
    resumed = Trainer.from_config(toy_config(toy_corpus, out, max_steps=6, valid_every=100, lr=0.001),
                                  show_progress=False)
    assert resumed.state.lr == 0.001 and all(g["lr"] == 0.001 for g in resumed.optimizer.param_groups)
    assert "train.lr (or lr_batch, batch_size) changed" in caplog.text and "goes on at 0.001" in caplog.text
    resumed.train()
    assert records(out, "resume")[-1]["lr_changed"] == {"from": 0.005, "to": 0.001}
    assert yaml.safe_load((out / "config.yaml").read_text())["train"]["lr"] == 0.001
    again = Trainer.from_config(toy_config(toy_corpus, out, max_steps=8, valid_every=100, lr=0.001),
                                show_progress=False)
    assert again.lr_changed is None and again.state.lr == 0.001  # the same rate again: nothing to apply


def test_a_resume_with_another_subword_dropout_or_translate_share_applies_it_and_says_so(toy_corpus, tmp_path,
                                                                                         caplog):
    """Issue 49, items 5 and 6: resuming with another train.subword_dropout (0.3, then 0.0) or translate_share
    (0.5, then 1.0) was accepted without a word, and config.yaml then showed only the new value (a changed lr had a
    warning and a log record)."""
    import logging

    out = tmp_path / "run"
    first = dict(max_steps=4, valid_every=100, subword_dropout=0.3, translate_share=0.5)
    Trainer.from_config(toy_config(toy_corpus, out, **first), show_progress=False).train()
    caplog.set_level(logging.WARNING, "bridgeembed")
    resumed = Trainer.from_config(toy_config(toy_corpus, out, max_steps=6, valid_every=100), show_progress=False)
    assert resumed.inputs.subword_dropout is None
    assert ("train.subword_dropout 0.3 -> 0.0, train.translate_share 0.5 -> 1.0 changed since "
            f"{out / 'last.pt'} was saved: the run goes on with the new values") in caplog.text
    resumed.train()
    assert records(out, "resume")[-1]["changed"] == {"train.subword_dropout": {"from": 0.3, "to": 0.0},
                                                     "train.translate_share": {"from": 0.5, "to": 1.0}}
    again = Trainer.from_config(toy_config(toy_corpus, out, max_steps=8, valid_every=100), show_progress=False)
    again.train()
    assert "changed" not in records(out, "resume")[-1]  # the same values again: nothing changed


def test_a_second_run_takes_the_lock_before_it_reads_last_pt(toy_corpus, tmp_path, monkeypatch):
    """Issue 49, item 10: a second bridgeembed-train on one out_dir read last.pt (step 6) before it took the lock,
    waited for the first to end (step 30), then resumed from step 6 and rewrote its checkpoints and log."""
    from bridgeembed.errors import ConfigError
    from bridgeembed.paths import FolderLock
    from bridgeembed.training import setup

    out = tmp_path / "run"
    run_to(toy_corpus, out, 4, valid_every=100)
    read = []
    real = setup.load_checkpoint
    monkeypatch.setattr(setup, "load_checkpoint", lambda path: read.append(path) or real(path))
    first = FolderLock(out)  # the first run, still training
    try:
        with pytest.raises(ConfigError, match=f"train.out_dir {out} is in use by process {os.getpid()}"):
            Trainer.from_config(toy_config(toy_corpus, out, max_steps=8, valid_every=100), show_progress=False)
    finally:
        first.release()
    assert read == []  # refused before anything of the run was read
    assert run_to(toy_corpus, out, 6, valid_every=100).state.step == 6  # the lock went with the refusal


@pytest.mark.parametrize("damage", ["not-utf-8", "a-folder"])
def test_a_damaged_log_is_one_line_before_any_data_is_prepared(toy_corpus, tmp_path, monkeypatch, damage):
    """Issue 49, item 11: a resume with a non-UTF-8 line in log.jsonl was a UnicodeDecodeError, and with log.jsonl
    a folder an IsADirectoryError, both from drop_records_after, after all the data preparation."""
    import shutil

    from bridgeembed.training import data

    out = tmp_path / "run"
    run_to(toy_corpus, out, 4, valid_every=100, log_every=2)
    log = out / "log.jsonl"
    if damage == "a-folder":
        log.unlink()
        log.mkdir()
        message = f"{log} is a folder, not the training log; move it away to resume"
    else:
        lines = log.read_bytes().split(b"\n")
        log.write_bytes(b"\n".join([lines[0], b'{"event": "train", "step": 1, "note": "caf\xe9"}', *lines[1:]]))
        message = (f"{log}: line 2 is not UTF-8 text (byte 0xe9): the training log is damaged; move it away to "
                   f"resume")

    def not_now(*args, **kwargs):
        raise AssertionError("data prepared before the log was checked")

    monkeypatch.setattr(data, "prepare_main_corpus", not_now)
    config = toy_config(toy_corpus, out, max_steps=6, valid_every=100, log_every=2)
    config.model.dropout = 0.2  # as run_to's
    with pytest.raises(DataError, match="^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        Trainer.from_config(config, show_progress=False)
    monkeypatch.undo()
    if damage == "a-folder":
        shutil.rmtree(log)
    else:  # a line cut by a kill in the middle of a character is dropped, as any cut line
        lines = [line for line in log.read_bytes().split(b"\n") if b"caf" not in line]
        log.write_bytes(b"\n".join(lines).rstrip(b"\n") + b'\n{"event": "train", "note": "caf\xc3')
    assert run_to(toy_corpus, out, 6, valid_every=100, log_every=2).state.step == 6
    assert [r["step"] for r in records(out, "train")][-1] == 6
