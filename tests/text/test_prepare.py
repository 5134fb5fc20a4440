"""Preparing a training split (text/prepare.py): the tokenizers, ids and losses of the in-memory path it
replaces; a cache that is reused, rebuilt only where its inputs changed, and never used when broken or made
by another tokenizer (bad input and the command: test_prepare_command.py)."""

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

from bridgeembed.errors import DataError
from bridgeembed.text import prepare as preparation
from bridgeembed.text.packed import PackedCorpus, PackedSplit
from bridgeembed.text.parallel import DirectionBatches, read_lines
from bridgeembed.text.prepare import TokenizerSettings, prepare
from bridgeembed.text.tokenization import LanguageTokenizer
from bridgeembed.training.trainer import Trainer
from tests.helpers import REPO
from tests.helpers.prepare_corpus import SETTINGS, WORDS, Spy, assert_same_corpus, in_memory, write_corpus
from tests.helpers.toy import toy_config


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
