"""What a training run says: the command's one-line refusals before any training, a line per validation and per
log interval without a terminal, and the reason of its end record."""

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

from bridgeembed.training.trainer import Trainer
from tests.helpers.toy import toy_config


def records(run: Path, event: str) -> list:
    lines = (run / "log.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["event"] == event]


def test_train_command_refuses_bad_values_before_training(toy_corpus, tmp_path, capsys):
    from bridgeembed.cli.train import main

    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(toy_config(toy_corpus, tmp_path / "run").to_dict()))
    for override, message in (("train.max_steps=-5", "train.max_steps must be at least 1, got -5"),
                              ("train.batch_size=true", "train.batch_size: expected int, got True"),
                              ("train.device=cuda:7", "device 'cuda:7'")):
        assert main([str(config), override]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "run").exists()


def test_each_validation_prints_a_line_without_a_terminal(toy_corpus, tmp_path):
    """nohup and batch jobs have no progress bar: each validation still says loss, BLEU and retrieval."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(toy_config(toy_corpus, tmp_path / "run", max_steps=20, valid_every=10,
                                              valid_sentences=10, threads=1).to_dict()))
    run = subprocess.run([sys.executable, "-m", "bridgeembed.cli.train", str(path)], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stderr.splitlines() if re.search(r"step \d+: dev loss", line)]
    assert [re.search(r"step (\d+):", line).group(1) for line in lines] == ["10", "20"], run.stderr
    assert all(re.search(r"dev loss \d+\.\d{3}, BLEU \d+\.\d\d, retrieval \d+\.\d% \(worst pair", line)
               for line in lines), lines
    assert "new best.pt" in lines[0]


def test_without_a_terminal_training_logs_a_progress_line_per_log_interval(toy_corpus, tmp_path, caplog):
    """Issue 32: training showed nothing between validations without a terminal (nohup, batch jobs)."""
    import logging

    from bridgeembed.cli.train import main

    caplog.set_level(logging.INFO, "bridgeembed")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(toy_config(toy_corpus, tmp_path / "run", max_steps=20, valid_every=15,
                                                log_every=5, save_every=100).to_dict()))
    assert main([str(config)]) == 0
    lines = [line for line in caplog.messages if re.search(r"step \d+ of 20:", line)]
    assert len(lines) == 4, caplog.messages
    assert re.search(r"step 5 of 20: nll \d+\.\d+, pen \d+\.\d+, pairs/s \d+, \d+\.\d+ steps/s; next validation at "
                     r"step 15, in about \d+ s", lines[0]), lines[0]
    assert "next validation" not in lines[-1]  # none after step 20
    caplog.clear()
    assert main([str(config), "train.max_steps=25", "--quiet"]) == 0
    assert not [line for line in caplog.messages if "of 25:" in line]


def test_a_stop_by_max_epochs_is_logged_as_such(toy_corpus, tmp_path):
    trainer = Trainer.from_config(toy_config(toy_corpus, tmp_path / "run", max_epochs=0.5, valid_every=1000,
                                             save_every=1000), show_progress=False)
    trainer.train()
    end = records(tmp_path / "run", "end")[0]
    assert end["reason"] == "max_epochs" and end["step"] == trainer.max_steps < trainer.cfg.train.max_steps
