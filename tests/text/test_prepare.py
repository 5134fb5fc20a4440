"""Preparing a training split (text/prepare.py): the tokenizers, ids and losses of the in-memory path it
replaces; a cache that is reused, rebuilt only where its inputs changed, and never used when broken or made
by another tokenizer; bad files named before any work."""

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from bridgeembed.errors import DataError
from bridgeembed.text import prepare as preparation
from bridgeembed.text.packed import PackedCorpus, PackedSplit
from bridgeembed.text.parallel import DirectionBatches, encode_split, read_lines
from bridgeembed.text.prepare import TokenizerSettings, prepare
from bridgeembed.text.tokenization import LanguageTokenizer
from bridgeembed.training.trainer import Trainer
from tests.helpers import REPO, one_line_error
from tests.helpers.toy import toy_config

SETTINGS = TokenizerSettings(vocab_size=80, lowercase=True, moses=True, max_len=8, seed=3)  # max_len 8: some cut
WORDS = "apple banana Cherry dog eagle fish grape horse café naïve l'eau «quoted», (paren) 3.5km U.S. don't".split()


def write_corpus(folder: Path, n: int = 400, seed: int = 0) -> dict:
    """en: random words with the awkward cases (blank and whitespace-only lines, CRLF line ends, a line longer
    than max_len); fr: the same words reversed, gzipped, with a blank line of its own."""
    rng = np.random.default_rng(seed)
    en = [" ".join(rng.choice(WORDS, size=rng.integers(1, 7))) for _ in range(n)]
    en[5], en[9], en[13] = "", "  \t ", " ".join(WORDS)
    fr = [" ".join(reversed(line.split())) for line in en]
    fr[20] = ""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.en").write_bytes("".join(line + "\r\n" for line in en).encode("utf-8"))
    with gzip.open(folder / "train.fr.gz", "wt", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in fr))
    return {"en": folder / "train.en", "fr": folder / "train.fr.gz"}


def in_memory(files: dict, s: TokenizerSettings = SETTINGS, tokenizers: dict | None = None):
    """What the trainer did before: whole files in memory, tokenizers on every line, encoding on one core."""
    raw = {lang: read_lines(path) for lang, path in files.items()}
    tokenizers = tokenizers or {lang: LanguageTokenizer.train(lang, lines, s.vocab_size, s.lowercase, s.moses, s.seed)
                                for lang, lines in raw.items()}
    return tokenizers, encode_split(raw, tokenizers, s.max_len)


def assert_same_corpus(got: PackedCorpus, want: PackedCorpus):
    assert got.flat.keys() == want.flat.keys()
    for lang in want.flat:
        assert np.array_equal(got.flat[lang], want.flat[lang]), lang
        assert np.array_equal(got.lengths[lang], want.lengths[lang]), lang
    assert got.empty == want.empty and got.truncated == want.truncated


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def reference(corpus):
    tokenizers, encoded = in_memory(corpus)
    return tokenizers, encoded, PackedCorpus.from_encoded(encoded)


# --- exactness ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("workers", [1, 2])
def test_the_tokenizers_and_ids_of_the_in_memory_path(corpus, reference, tmp_path, monkeypatch, workers):
    monkeypatch.setattr(preparation, "CHUNK", 64)  # several chunks per file, several in flight at once
    tokenizers, got = prepare(corpus, SETTINGS, tmp_path, workers=workers, progress=False)
    for lang, tokenizer in reference[0].items():
        assert tokenizers[lang].spm_model == tokenizer.spm_model, lang  # byte for byte
    assert_same_corpus(got, reference[2])
    assert got.empty == {"en": 2, "fr": 3} and got.truncated["en"] >= 1
    assert all(isinstance(flat, np.memmap) for flat in got.flat.values())
    assert got.ids["fr"][20] is None and got.ids["en"][0].tolist() == reference[1].ids["en"][0].tolist()


def test_training_takes_the_same_steps_as_on_the_in_memory_path(toy_corpus, tmp_path):
    """The batches, losses and parameters of a few steps with dropout, against the trainer's old data path:
    EncodedSplit, packed from its lists, batches from its pairs and lengths."""

    def trainer(out):
        config = toy_config(toy_corpus, out, max_steps=10)
        config.tokenizer.moses, config.model.dropout = True, 0.2
        return Trainer.from_config(config, show_progress=False)

    new = trainer(tmp_path / "new")
    new_losses = [new.train_step(step)["nll"].item() for step in range(10)]
    old = trainer(tmp_path / "old")  # seeds the RNG again, as every start does
    files = {lang: toy_corpus / f"train.{lang}.gz" for lang in ("x", "y")}
    t = old.cfg.tokenizer
    tokenizers, encoded = in_memory(files, TokenizerSettings(t.vocab_size, t.lowercase, t.moses, t.max_len, 3))
    assert all(tokenizers[lang].spm_model == new.data.tokenizers[lang].spm_model for lang in files)
    old.packed = [PackedSplit.from_encoded(encoded)]
    old.batches = [DirectionBatches(encoded.pairs(d.src, d.tgt),
                                    np.array([0 if s is None else len(s) for s in encoded.ids[d.src]]),
                                    old.cfg.train.batch_size, old.cfg.train.seed, i)
                   for i, d in enumerate(old.directions)]
    old_losses = [old.train_step(step)["nll"].item() for step in range(10)]
    assert new_losses == old_losses
    for (name, a), b in zip(new.model.state_dict().items(), old.model.state_dict().values()):
        assert torch.equal(a, b), name


AWKWARD = ["„Anführungszeichen“ – und — so…", "l'eau « bien »,", "\u00a0«\u00a0oui\u00a0»\u00a0", "50 %", "(a) b ; c : d",
           "It’s ‘quoted’ ´´twice´´", "1,5 km and 2.000,50", "nº\u00a05", "``hi'' there", "x\ry", "  spaces   (  ) ",
           "a\u2028b\x07c", "Dr. Smith, e.g. U.S.A.", "Kč 1 000,-", '"quote",', "it's ok.", "… ‚low‘ ’99"]


def normalizer_cases(lines):
    from sacremoses import MosesPunctNormalizer

    from bridgeembed.text.tokenization import _PunctNormalizer

    for lang in ("en", "de", "fr", "cs"):
        fast, reference = _PunctNormalizer(lang), MosesPunctNormalizer(lang=lang)
        for line in lines(lang):
            assert fast.normalize(line) == reference.normalize(line), (lang, line)


def test_the_compiled_normalizer_is_sacremoses():
    normalizer_cases(lambda lang: AWKWARD + [" ".join(WORDS)])


@pytest.mark.slow
def test_the_compiled_normalizer_is_sacremoses_on_multi30k(real_data):
    folder = real_data("multi30k") / "multi30k"
    normalizer_cases(lambda lang: read_lines(folder / f"train.{lang}.gz")[:5000])


def test_on_the_cpu_the_training_tensors_share_the_mapped_memory(corpus, reference, tmp_path):
    _, got = prepare(corpus, SETTINGS, tmp_path, workers=1, progress=False)
    packed, want = PackedSplit(got), PackedSplit.from_encoded(reference[1])
    assert packed.languages["en"].ids.data_ptr() == got.flat["en"].ctypes.data  # no copy
    rows = np.array([3, 0, 17, 13, 40])
    a, b = packed.batch(rows, "en", "fr"), want.batch(rows, "en", "fr")
    for name in ("src", "lengths", "tgt_in", "tgt_out"):
        assert torch.equal(getattr(a.batch, name), getattr(b.batch, name)), name


# --- the cache ---------------------------------------------------------------------------------------
class Spy:
    """Counts the building steps of a preparation (and can forbid them)."""

    def __init__(self, monkeypatch, forbid: bool = False):
        self.calls = []
        for step in ("_build_text", "_train", "_build_ids"):
            real = getattr(preparation._Preparation, step)

            def spy(this, pool, lang, *args, _step=step, _real=real):
                assert not forbid, f"{_step} ran"
                self.calls.append((_step, lang if isinstance(lang, str) else tuple(lang)))
                return _real(this, pool, lang, *args)

            monkeypatch.setattr(preparation._Preparation, step, spy)
        if forbid:
            monkeypatch.setattr(preparation, "count_lines", lambda *a: pytest.fail("counted lines again"))


def test_a_second_start_only_maps_the_arrays(corpus, reference, tmp_path, monkeypatch):
    first_tokenizers, _ = prepare(corpus, SETTINGS, tmp_path, workers=1, progress=False)
    Spy(monkeypatch, forbid=True)
    tokenizers, got = prepare(corpus, SETTINGS, tmp_path, workers=1, progress=False)
    assert {k: t.spm_model for k, t in tokenizers.items()} == {k: t.spm_model for k, t in first_tokenizers.items()}
    assert_same_corpus(got, reference[2])
    _, resumed = prepare(corpus, SETTINGS, tmp_path, tokenizers=tokenizers, progress=False)  # a resumed run's
    assert_same_corpus(resumed, reference[2])


def test_a_changed_file_rebuilds_only_what_depends_on_it(tmp_path, monkeypatch):
    files = write_corpus(tmp_path / "corpus")
    prepare(files, SETTINGS, tmp_path / "cache", workers=1, progress=False)
    en = read_lines(files["en"])
    (files["en"]).write_text("".join(line.upper() + "\n" for line in en), encoding="utf-8")  # same line count
    spy = Spy(monkeypatch)
    tokenizers, got = prepare(files, SETTINGS, tmp_path / "cache", workers=1, progress=False)
    assert spy.calls == [("_build_text", "en"), ("_train", ("en",)), ("_build_ids", "en")]
    assert_same_corpus(got, PackedCorpus.from_encoded(in_memory(files)[1]))


def test_another_tokenizer_never_reuses_the_ids(corpus, tmp_path, caplog):
    prepare(corpus, SETTINGS, tmp_path, workers=1, progress=False)
    other = {lang: LanguageTokenizer.train(lang, read_lines(path), 60, seed=9) for lang, path in corpus.items()}
    want = PackedCorpus.from_encoded(in_memory(corpus, tokenizers=other)[1])
    _, got = prepare(corpus, SETTINGS, tmp_path, tokenizers=other, workers=1, progress=False)
    assert_same_corpus(got, want)
    assert len(list((tmp_path / "ids").iterdir())) == 4  # both tokenizers' ids, side by side
    # an entry of the first tokenizer under the second's name (copied by hand, say) is refused and rebuilt
    by_tokenizer = {json.loads((e / "manifest.json").read_text())["info"]["tokenizer"]: e
                    for e in (tmp_path / "ids").iterdir()}
    mine = preparation.sha256(other["en"].spm_model)
    theirs = next(e for h, e in by_tokenizer.items() if h != mine and "train.en" in (e / "manifest.json").read_text())
    shutil.rmtree(by_tokenizer[mine])
    shutil.copytree(theirs, by_tokenizer[mine])
    _, again = prepare(corpus, SETTINGS, tmp_path, tokenizers=other, workers=1, progress=False)
    assert "made from other inputs" in caplog.text and "rebuilt" in caplog.text
    assert_same_corpus(again, want)


def _damage(entry: Path, how: str):
    ids = entry / "ids.npy"
    if how == "truncated":
        ids.write_bytes(ids.read_bytes()[:-100])
    elif how == "flipped":
        data = bytearray(ids.read_bytes())
        data[-7] ^= 0x10
        ids.write_bytes(bytes(data))
    elif how == "no manifest":
        (entry / "manifest.json").unlink()
    else:
        (entry / "manifest.json").write_text("{not json")


@pytest.mark.parametrize("how", ["truncated", "flipped", "no manifest", "garbage manifest"])
def test_a_corrupt_or_half_written_cache_is_rebuilt_with_a_warning(corpus, reference, tmp_path, caplog, how):
    prepare(corpus, SETTINGS, tmp_path, workers=1, progress=False)
    for entry in (tmp_path / "ids").iterdir():
        _damage(entry, how)
    _, got = prepare(corpus, SETTINGS, tmp_path, workers=1, progress=False)
    assert caplog.text.count("is unusable") == 2 and "rebuilt" in caplog.text
    assert_same_corpus(got, reference[2])


KILLED = """
import os, signal, sys
from bridgeembed.text import prepare as p
real, calls = p._raw_to_npy, []
def dying(*args):
    calls.append(1)
    if len(calls) == 2:  # halfway through the ids of the second file
        os.kill(os.getpid(), signal.SIGKILL)
    real(*args)
p._raw_to_npy = dying
files = {"en": sys.argv[1] + "/train.en", "fr": sys.argv[1] + "/train.fr.gz"}
p.prepare(files, p.TokenizerSettings(80, True, True, 8, 3), sys.argv[2], workers=1, progress=False)
"""


def test_a_kill_loses_only_the_file_in_progress(corpus, reference, tmp_path, monkeypatch):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", KILLED, str(corpus["en"].parent), str(tmp_path)], env=env)
    assert done.returncode == -signal.SIGKILL
    assert len(list((tmp_path / "ids").glob(".*.tmp"))) == 1  # the half-written entry, under a temporary name
    spy = Spy(monkeypatch)
    _, got = prepare(corpus, SETTINGS, tmp_path, workers=1, progress=False)
    assert spy.calls == [("_build_ids", "fr")]  # the text, both tokenizers and the English ids were kept
    assert not list((tmp_path / "ids").glob(".*.tmp"))
    assert_same_corpus(got, reference[2])


def test_ranks_that_only_load_name_a_missing_cache(corpus, tmp_path):
    with pytest.raises(DataError, match="no prepared data for .*train.en.* every node sees"):
        prepare(corpus, SETTINGS, tmp_path, build=False)


def test_progress_bars_per_phase_and_file_with_lines_per_second(corpus, tmp_path, capsys):
    prepare(corpus, SETTINGS, tmp_path, workers=1, progress=True)
    err = capsys.readouterr().err
    for phase in ("count train.en", "moses train.fr.gz", "tokenizers", "encode train.en"):
        assert phase in err, phase
    assert "line/s" in err


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
    from bridgeembed.cli.fetch import main

    config = toy_config(toy_corpus, tmp_path / "run", max_steps=2, valid_every=100, save_every=100)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config.to_dict()))
    assert main(["prepare", str(path), "--cache", str(tmp_path / "cache")]) == 0
    out = capsys.readouterr().out
    assert "train.x: 300 lines" in out and f"prepared in {tmp_path / 'cache'}" in out
    Spy(monkeypatch, forbid=True)
    config.train.cache_dir = str(tmp_path / "cache")
    assert Trainer.from_config(config, show_progress=False).train().step == 2


def test_prepare_command_reports_bad_files_in_one_line(tmp_path, capsys):
    from bridgeembed.cli.fetch import main

    files = write_corpus(tmp_path / "corpus")
    files["fr"].write_bytes(gzip.compress(b"a\nb\n"))
    config = {"data": {"path": str(tmp_path / "corpus"), "languages": ["en", "fr"]},
              "train": {"cache_dir": str(tmp_path / "cache")}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    assert main(["prepare", str(tmp_path / "c.yaml")]) == 2
    assert "line counts differ" in one_line_error(capsys)


@pytest.mark.slow
def test_multi30k_gives_the_shipped_models_tokenizers_and_the_in_memory_ids(real_data, shipped_model, tmp_path):
    from bridgeembed.checkpoint import build_from_payload, load_checkpoint
    from bridgeembed.config import Config
    from bridgeembed.training.data import prepare_training_data, tokenizer_settings

    config = Config.from_yaml(REPO / "pretrained" / "multi30k-m2m" / "config.yaml")
    config.train.cache_dir = str(tmp_path)
    folder = real_data("multi30k") / "multi30k"
    tokenizers, got = prepare_training_data(config, folder, progress=False)
    shipped = build_from_payload(load_checkpoint(shipped_model), "multi30k-m2m")[1]
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

    from tests.helpers.toy import toy_config, write_toy_corpus

    corpus = write_toy_corpus(tmp_path / "corpus", n_train=300_000, n_valid=10)
    config = toy_config(corpus, tmp_path / "run").to_dict()
    config["tokenizer"]["moses"] = True
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.Popen([sys.executable, "-m", "bridgeembed.cli.fetch", "prepare", str(tmp_path / "c.yaml"),
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


def test_a_same_size_edit_with_the_time_set_back_is_a_new_identity(tmp_path):
    """Issue 31: the cache was keyed on size, modification time and the first and last MiB: an edit in the
    middle of the same size, with the time restored, reused the stale prepared corpus."""
    from bridgeembed.text.cache import file_identity

    path = tmp_path / "train.en"
    lines = [f"sentence {i:07d}\n" for i in range(300_000)]  # 5 MiB: the middle is past the first and last MiB
    path.write_text("".join(lines))
    before, stat = file_identity(path), path.stat()
    lines[150_000] = "SENTENCE 0150000\n"
    path.write_text("".join(lines))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    assert file_identity(path) != before
    lines[150_000] = "sentence 0150000\n"
    path.write_text("".join(lines))  # the same content again, at another time: the same identity
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert file_identity(path) == before
