"""train.subword_dropout: BPE-dropout on the encoder's inputs, seeded so that a resumed run is exact."""

import ast
import subprocess
import sys

import numpy as np
import pytest

from bridgeembed.config import Config
from bridgeembed.errors import ConfigError
from bridgeembed.text.tokenization import EOS, PAD
from bridgeembed.training.sampling import SubwordDropout
from bridgeembed.training.trainer import Trainer
from tests.helpers import REPO
from tests.helpers.toy import toy_config
from tests.training.test_alignment import trainer_for
from tests.training.test_trainer import assert_same, params, records, run_to


def rows_of(tensor):
    return [row[row != PAD].tolist() for row in tensor]


def test_resegmenting_keeps_the_text_and_varies_the_pieces(toy_corpus, tmp_path):
    trainer = trainer_for(toy_corpus, tmp_path / "run")
    ids = trainer.data.train.ids["x"]
    sentences = [ids[i] for i in range(200)]
    sp = trainer.data.tokenizers["x"].sp
    dropout = SubwordDropout(trainer.data.tokenizers, 0.3, max_len=200, seed=3)
    first = dropout.resegment("x", sentences, (7, 0))
    assert first == dropout.resegment("x", sentences, (7, 0))  # the key decides the segmentation
    assert first != dropout.resegment("x", sentences, (8, 0))
    assert all(seq[-1] == EOS for seq in first)
    assert [sp.decode(seq[:-1]) for seq in first] == [sp.decode(s[:-1].tolist()) for s in sentences]
    changed = sum(seq != s.tolist() for seq, s in zip(first, sentences))
    assert changed > 100  # at rate 0.3 most sentences of 3-7 words lose a merge somewhere
    assert np.mean([len(seq) for seq in first]) > np.mean([len(s) for s in sentences])


def test_long_sentences_are_cut_to_max_len(toy_corpus, tmp_path):
    trainer = trainer_for(toy_corpus, tmp_path / "run")
    ids = trainer.data.train.ids["x"]
    dropout = SubwordDropout(trainer.data.tokenizers, 0.9, max_len=6, seed=1)
    out = dropout.resegment("x", [ids[i] for i in range(50)], (0, 0))
    assert max(len(seq) for seq in out) == 6 and all(seq[-1] == EOS for seq in out)


def test_a_step_resegments_the_encoder_inputs_only(toy_corpus, tmp_path, monkeypatch):
    config = toy_config(toy_corpus, tmp_path / "run", align_weight=1.0, subword_dropout=0.3)
    config.tokenizer.max_len = 100  # room for the longer segmentations: nothing is cut
    trainer = Trainer.from_config(config, show_progress=False)
    seen = {}
    forward = trainer.model.forward

    def spy(src, lengths, src_lang, tgt_in, tgt_lang, real=None, partners=(), decode=True):
        seen.update(src=src, lengths=lengths, tgt_in=tgt_in, partners=partners)
        return forward(src, lengths, src_lang, tgt_in, tgt_lang, real=real, partners=partners, decode=decode)

    monkeypatch.setattr(trainer, "ddp", spy)
    step = 1  # x->y: source and partner are different languages
    trainer.train_step(step)
    unit, rows = trainer._rows(step)
    d = unit.direction
    plain = trainer.packed[0].batch(rows, d.src, d.tgt).batch
    sources = rows_of(seen["src"])
    assert sources != rows_of(plain.src)
    assert seen["lengths"].tolist() == [len(s) for s in sources]
    sp = trainer.data.tokenizers[d.src].sp
    assert [sp.decode(s[:-1]) for s in sources] == [sp.decode(s[:-1]) for s in rows_of(plain.src)]
    assert seen["tgt_in"].equal(plain.tgt_in)  # the decoder keeps the deterministic segmentation
    [partner] = seen["partners"]  # one partner language: always a list
    assert rows_of(partner.src) != [trainer.data.train.ids[partner.lang][i].tolist() for i in rows]
    assert partner.lengths.tolist() == [len(s) for s in rows_of(partner.src)]


def test_resume_with_subword_dropout_is_exact(toy_corpus, tmp_path):
    # validated at steps 10 and 20 by both runs: the stopped one makes no validation of its own at its last step
    settings = dict(valid_every=10, valid_sentences=20, save_every=10, subword_dropout=0.2, align_weight=1.0)
    straight = run_to(toy_corpus, tmp_path / "straight", 30, **settings)
    run_to(toy_corpus, tmp_path / "stopped", 20, **settings)
    resumed = run_to(toy_corpus, tmp_path / "stopped", 30, **settings)
    assert records(tmp_path / "stopped", "resume")[0]["step"] == 20
    assert_same(params(resumed), params(straight))
    plain = run_to(toy_corpus, tmp_path / "plain", 30, **{**settings, "subword_dropout": 0.0})
    assert any(not a.equal(b) for a, b in zip(params(plain).values(), params(straight).values()))


@pytest.mark.parametrize("value", [1.0, -0.1])
def test_rate_outside_0_1_is_a_config_error(toy_corpus, tmp_path, value):
    raw = toy_config(toy_corpus, tmp_path / "run").to_dict()
    raw["train"]["subword_dropout"] = value
    with pytest.raises(ConfigError, match=r"train\.subword_dropout.*in \[0, 1\)"):
        Config.from_dict(raw)


SEGMENT_IN_A_NEW_PROCESS = """
import numpy as np
from bridgeembed import BridgeEncoder
from bridgeembed.text.tokenization import EOS
from bridgeembed.training.sampling import SubwordDropout
tokenizers = BridgeEncoder("general-m2m", device="cpu").tokenizers
lines = ["the unequivocal conclusion of the municipal prosecutor", "internationalisation of lazy conferences"] * 20
ids = [np.array(x + [EOS]) for x in tokenizers["en"].encode_many(lines)]
print(SubwordDropout(tokenizers, 0.3, 80, seed=42).resegment("en", ids, (5, 1)))
"""


def test_the_key_gives_the_same_segmentations_in_every_process():
    """A resumed run is a new process: sentencepiece's own sampling, seeded alike, differed from one process
    to the next; these segmentations may not."""
    runs = [subprocess.run([sys.executable, "-c", SEGMENT_IN_A_NEW_PROCESS], capture_output=True, text=True,
                           cwd=REPO, timeout=300) for _ in range(2)]
    assert all(run.returncode == 0 for run in runs), runs[0].stderr[-2000:]
    first = ast.literal_eval(runs[0].stdout)
    assert runs[0].stdout == runs[1].stdout
    assert len({tuple(seq) for seq in first}) > 2  # the 20 copies of each line are not all split alike
