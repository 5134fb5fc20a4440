"""Preparing a training split (text/prepare.py) from bad input, and from the command line: a bad file is named in
one line before any work; `bridgeembed-data prepare` prepares what the trainer then finds; the shipped model's
tokenizers from Multi30k; SIGTERM or SIGHUP stops the workers quietly."""

import gzip
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from bridgeembed.config import Config
from bridgeembed.errors import DataError
from bridgeembed.text.packed import PackedCorpus
from bridgeembed.text.prepare import prepare
from bridgeembed.training.trainer import Trainer
from tests.helpers import REPO, one_line_error
from tests.helpers.prepare_corpus import SETTINGS, Spy, in_memory, write_corpus
from tests.helpers.toy import toy_config, write_toy_corpus


# --- bad input: one line naming the file and the line, before any work -------------------------------
def _nothing_built(cache: Path) -> bool:
    return not any(p.is_file() for p in cache.rglob("*"))


def test_different_line_counts_fail_before_any_work(tmp_path):
    files = write_corpus(tmp_path / "corpus")
    with gzip.open(files["fr"], "wt", encoding="utf-8") as handle:
        handle.write("one line\n" * 399)
    with pytest.raises(DataError, match=r"line counts differ: .*train\.en has 400 lines, .*train\.fr\.gz has 399"):
        prepare(files, SETTINGS, tmp_path / "cache", progress=False)
    assert _nothing_built(tmp_path / "cache")


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_a_truncated_or_corrupt_gzip_file_is_named_with_its_line(tmp_path, damage):
    files = write_corpus(tmp_path / "corpus", n=20000)
    data = bytearray(files["fr"].read_bytes())
    if damage == "truncated":
        data = data[: len(data) // 2]
    else:
        data[len(data) // 2: len(data) // 2 + 64] = bytes(64)
    files["fr"].write_bytes(bytes(data))
    with pytest.raises(DataError, match=r"train\.fr\.gz: line \d+: truncated or corrupt gzip data \(.+\); "
                                        r"get the file again$"):
        prepare(files, SETTINGS, tmp_path / "cache", progress=False)
    assert _nothing_built(tmp_path / "cache")


def test_text_that_is_not_utf8_is_named_with_its_line(tmp_path):
    files = write_corpus(tmp_path / "corpus")
    lines = files["en"].read_bytes().split(b"\r\n")
    lines[6] = "café".encode("latin-1")
    files["en"].write_bytes(b"\r\n".join(lines))
    with pytest.raises(DataError, match=r"train\.en: line 7 is not UTF-8 text \(byte 0xe9\)"):
        prepare(files, SETTINGS, tmp_path / "cache", progress=False)
    assert _nothing_built(tmp_path / "cache")


# --- the command and the trainer ---------------------------------------------------------------------
def test_prepare_command_then_the_trainer_finds_everything(toy_corpus, tmp_path, monkeypatch, capsys):
    from bridgeembed.cli.data import main

    config = toy_config(toy_corpus, tmp_path / "run", max_steps=2, valid_every=100, save_every=100)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config.to_dict()))
    assert main(["prepare", str(path), "--cache", str(tmp_path / "cache")]) == 0
    out = capsys.readouterr().out
    assert "train.x: 300 lines" in out and f"prepared in {tmp_path / 'cache'}" in out
    Spy(monkeypatch, forbid=True)
    config.train.cache_dir = str(tmp_path / "cache")
    assert Trainer.from_config(config, show_progress=False).train().step == 2


@pytest.mark.parametrize("tokenizer_text", ["main", "all"])
def test_prepare_command_prepares_every_corpus_of_the_config(toy_corpus, tmp_path, monkeypatch, capsys,
                                                             tokenizer_text):
    """Issue 42: `bridgeembed-data prepare` prepared data.path alone; the trainer then tokenised every data.corpora
    entry on its first start (four runs started at once on a GPU did it four times over). With
    data.tokenizer_text=all its tokenizers learnt from the main corpus alone, not the trainer's."""
    from bridgeembed.cli.data import main

    second = write_toy_corpus(tmp_path / "second", n_train=300, n_valid=20, seed=11)
    raw = toy_config(toy_corpus, tmp_path / "run", max_steps=2, valid_every=100, save_every=100).to_dict()
    raw["data"]["corpora"] = [{"path": str(second), "name": "second", "languages": ["x", "y"]}]
    raw["data"]["tokenizer_text"] = tokenizer_text
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(raw))
    assert main(["prepare", str(path), "--cache", str(tmp_path / "cache")]) == 0
    out = capsys.readouterr().out
    assert "second: train.x: 300 lines" in out and "second: train.y: 300 lines" in out
    Spy(monkeypatch, forbid=True)  # the trainer prepares nothing: both corpora are in the cache
    config = Config.from_dict(raw)
    config.train.cache_dir = str(tmp_path / "cache")
    assert Trainer.from_config(config, show_progress=False).train().step == 2


def test_prepare_takes_a_shipped_models_name_as_init_from(shipped_model, tmp_path):
    """`train.init_from=general-m2m` trains from the shipped model; preparing for it said `no checkpoint at
    general-m2m` (its tokenizers were looked up as a file)."""
    from bridgeembed.training.data import reused_tokenizers

    config = Config.from_yaml(REPO / "configs" / "general-m2m.yaml",
                              [f"train.out_dir={tmp_path / 'run'}", f"train.init_from={shipped_model.name}"])
    assert sorted(reused_tokenizers(config)) == ["cs", "de", "en", "fr"]


def test_prepare_command_reports_bad_files_in_one_line(tmp_path, capsys):
    from bridgeembed.cli.data import main

    files = write_corpus(tmp_path / "corpus")
    files["fr"].write_bytes(gzip.compress(b"a\nb\n"))
    config = {"data": {"path": str(tmp_path / "corpus"), "languages": ["en", "fr"]},
              "train": {"cache_dir": str(tmp_path / "cache")}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    assert main(["prepare", str(tmp_path / "c.yaml")]) == 2
    assert "line counts differ" in one_line_error(capsys)


@pytest.mark.slow
def test_the_recipe_gives_the_shipped_models_tokenizers_and_the_in_memory_ids(real_data, shipped_model, tmp_path):
    """The shipped model's recipe (configs/general-m2m.yaml: tokenizers learnt from every corpus's text) prepared
    from the data gives its tokenizers again, and the cached ids of Multi30k's Czech are those encoded in memory."""
    from bridgeembed.checkpoint import build_from_payload, load_checkpoint
    from bridgeembed.config import Config
    from bridgeembed.pretrained import DEFAULT_MODEL
    from bridgeembed.training.data import more_tokenizer_text, prepare_training_data, tokenizer_settings

    config = Config.from_yaml(REPO / "configs" / f"{DEFAULT_MODEL}.yaml")
    config.train.cache_dir = str(tmp_path)
    root = real_data("multi30k", *(corpus["path"] for corpus in config.data.corpora))
    folder = root / "multi30k"
    tokenizers, got = prepare_training_data(config, folder, progress=False,
                                            vocab_text=more_tokenizer_text(config, root))
    shipped = build_from_payload(load_checkpoint(shipped_model), DEFAULT_MODEL)[1]
    for lang in config.data.languages:
        assert tokenizers[lang].spm_model == shipped[lang].spm_model, lang
    files = {"cs": folder / "train.cs.gz"}
    _, encoded = in_memory(files, tokenizer_settings(config), tokenizers={"cs": shipped["cs"]})
    want = PackedCorpus.from_encoded(encoded)
    assert np.array_equal(got.flat["cs"], want.flat["cs"]) and np.array_equal(got.lengths["cs"], want.lengths["cs"])
    assert got.truncated["cs"] == want.truncated["cs"]


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_sigterm_or_sighup_during_preparation_stops_the_workers_quietly(tmp_path, sig):
    """Issue 31: SIGTERM or SIGHUP during bridgeembed-data prepare: the workers are stopped with the command
    (exit status 128 + the signal), without a traceback, and none is left running. The corpus is large enough
    (300,000 lines a side through Moses) that the signal always lands while the workers are at work."""
    import time

    import yaml

    corpus = write_toy_corpus(tmp_path / "corpus", n_train=300_000, n_valid=10)
    config = toy_config(corpus, tmp_path / "run").to_dict()
    config["tokenizer"]["moses"] = True
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.Popen([sys.executable, "-m", "bridgeembed.cli.data", "prepare", str(tmp_path / "c.yaml"),
                             "--cache", str(tmp_path / "cache"), "--workers", "2"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            # a suite started under nohup ignores SIGHUP, and so would the command (rightly)
                            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(_children(proc.pid)) < 2:
        time.sleep(0.2)
    workers = _children(proc.pid)
    time.sleep(1)  # the workers at work
    assert proc.poll() is None, "preparation ended before the signal: the corpus is too small for this test"
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + getattr(signal, sig), err.decode()[-2000:]
    assert b"Traceback" not in err and b"BrokenPipeError" not in err, err.decode()[-2000:]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and [pid for pid in workers if os.path.exists(f"/proc/{pid}")]:
        time.sleep(0.2)
    assert not [pid for pid in workers if os.path.exists(f"/proc/{pid}")]


def _children(pid: int) -> list:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            if f"PPid:\t{pid}\n" in status.read_text() and b"spawn_main" in (status.parent / "cmdline").read_bytes():
                found.append(int(status.parent.name))  # a pool worker (not the resource tracker)
        except OSError:
            pass
    return found
