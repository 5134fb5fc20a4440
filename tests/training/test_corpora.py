"""Several corpora in one run (data.corpora): shares of the steps, held-out dev lines, per-corpus validation,
uses, resume, and the config's refusals."""

import json
import re
from collections import Counter

import numpy as np
import pytest
import torch

from bridgeembed.config import Config
from bridgeembed.errors import ConfigError
from bridgeembed.text.parallel import read_lines
from bridgeembed.training.schedule import RotatingScheduler, units
from bridgeembed.training.trainer import Trainer
from tests.helpers.toy import toy_config, write_toy_corpus


@pytest.fixture(scope="module")
def second_corpus(tmp_path_factory):
    """Another x-y corpus (other sentences) with a third language z only there: z is x's words upper-cased."""
    folder = write_toy_corpus(tmp_path_factory.mktemp("second"), n_train=300, n_valid=20, seed=11)
    import gzip

    with gzip.open(folder / "train.x.gz", "rt", encoding="utf-8") as handle:
        xs = handle.read().splitlines()
    with gzip.open(folder / "train.z.gz", "wt", encoding="utf-8") as handle:
        handle.write("\n".join(x.upper() for x in xs) + "\n")
    return folder


def config_with(toy_corpus, out, corpora, weight=1.0, **train):
    config = toy_config(toy_corpus, out, **train)
    raw = config.to_dict()
    raw["data"]["corpora"], raw["data"]["weight"] = corpora, weight
    return Config.from_dict(raw)


def test_units_without_corpora_are_the_directions_once_each(toy_corpus, tmp_path):
    config = toy_config(toy_corpus, tmp_path)
    found, visits = units(config.data)
    assert [str(u) for u in found] == ["x-y", "y-x", "x-x", "y-y"] and visits == [1, 1, 1, 1]


def test_weights_give_each_corpus_its_share_of_steps(toy_corpus, second_corpus, tmp_path):
    corpora = [{"path": str(second_corpus), "name": "second", "languages": ["x", "y"], "directions": ["x-y"],
                "monolingual": False, "weight": 3.0}]
    config = config_with(toy_corpus, tmp_path, corpora)
    found, visits = units(config.data)
    scheduler = RotatingScheduler(found, seed=5, visits=visits)
    steps = Counter(found[scheduler.index(s)].corpus for s in range(sum(visits) * 10))
    assert steps[1] / (steps[0] + steps[1]) == pytest.approx(0.75)
    # visits_before counts exactly the earlier steps of each unit
    seen = Counter()
    for step in range(sum(visits) * 3):
        index = scheduler.index(step)
        assert scheduler.visits_before(step, index) == seen[index]
        seen[index] += 1


def test_uniform_visits_are_the_old_rotation():
    old = RotatingScheduler(list("abcde"), seed=3)
    new = RotatingScheduler(list("abcde"), seed=3, visits=[1] * 5)
    assert [old.index(s) for s in range(40)] == [new.index(s) for s in range(40)]


def test_run_on_two_corpora_validates_each_and_never_trains_on_held_out_lines(toy_corpus, second_corpus, tmp_path):
    corpora = [{"path": str(second_corpus), "name": "second", "languages": ["x", "y"], "dev_lines": 50}]
    config = config_with(toy_corpus, tmp_path / "run", corpora, max_steps=40, valid_every=20, log_every=10)
    trainer = Trainer.from_config(config, show_progress=False)
    extra = trainer.data.corpora[0]
    assert extra.train_rows == 250 and len(extra.raw_valid["x"]) == 50
    assert extra.raw_valid["y"] == read_lines(second_corpus / "train.y.gz")[250:]  # the last 50 lines
    for unit, batches in zip(trainer.units, trainer.batches):
        if unit.corpus == 1:
            assert batches.pairs.max() < 250
    trainer.train()
    records = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    start = records[0]
    assert start["corpora"] == {str(toy_corpus.name): 50.0, "second": 50.0}
    assert "x-y@1" in start["directions"]
    valid = [r for r in records if r["event"] == "valid"]
    assert len(valid) == 2
    second = valid[-1]["corpora"]["second"]
    assert set(second["bleu"]) == {"x-y", "y-x", "x-x", "y-y"} and second["retrieval"]["sentences"] == 50
    assert valid[-1]["select_by"] == "bleu"  # the score is the mean over the dev sets
    assert valid[-1]["score"] == pytest.approx((valid[-1]["mean_bleu"] + second["mean_bleu"]) / 2)


def test_resume_of_a_run_on_two_corpora_is_exact(toy_corpus, second_corpus, tmp_path):
    corpora = [{"path": str(second_corpus), "name": "second", "languages": ["x", "y"], "dev_lines": 30}]
    settings = dict(max_steps=12, valid_every=100, save_every=100, align_weight=0.5)
    straight = Trainer.from_config(config_with(toy_corpus, tmp_path / "a", corpora, **settings), show_progress=False)
    straight.train()
    first = Trainer.from_config(config_with(toy_corpus, tmp_path / "b", corpora, **{**settings, "max_steps": 5}),
                                show_progress=False)
    first.train()
    resumed = Trainer.from_config(config_with(toy_corpus, tmp_path / "b", corpora, **settings), show_progress=False)
    resumed.train()
    for key, value in straight.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[key]), key


def test_alignment_only_corpus_adds_no_translation_loss_and_translation_only_no_alignment(toy_corpus, second_corpus,
                                                                                         tmp_path):
    corpora = [{"path": str(second_corpus), "name": "cmp", "languages": ["x", "y"], "directions": ["x-y"],
                "monolingual": False, "use": "alignment"},
               {"path": str(second_corpus), "name": "tr", "languages": ["x", "y"], "directions": ["y-x"],
                "monolingual": False, "use": "translation"}]
    trainer = Trainer.from_config(config_with(toy_corpus, tmp_path, corpora, align_weight=1.0), show_progress=False)
    seen = set()
    for step in range(len(trainer.scheduler._slots)):
        unit = trainer.units[trainer.scheduler.index(step)]
        stats = trainer.train_step(step)
        if unit.use == "alignment":
            assert stats["nll"] == 0.0 and stats["tokens"] == 0 and float(stats["align"]) > 0
        elif unit.use == "translation":
            assert stats["tokens"] > 0 and stats["align"] == 0.0
        seen.add(unit.use)
    assert seen == {"both", "alignment", "translation"}


def test_a_copy_in_a_one_language_corpus_has_no_partner(toy_corpus, second_corpus, tmp_path):
    corpora = [{"path": str(second_corpus), "name": "mono", "languages": ["x"], "directions": []}]
    trainer = Trainer.from_config(config_with(toy_corpus, tmp_path, corpora, align_weight=1.0), show_progress=False)
    mono = [i for i, u in enumerate(trainer.units) if u.corpus == 1]
    assert [str(trainer.units[i]) for i in mono] == ["x-x@1"]
    step = next(s for s in range(100) if trainer.scheduler.index(s) == mono[0])
    assert trainer.inputs.partner_languages(step, trainer.units[mono[0]]) == []
    assert np.isfinite(float(trainer.train_step(step)["nll"]))


@pytest.mark.parametrize("entry, message", [
    ({"languages": ["x"]}, "data.corpora[0]: path is required"),
    ({"path": "p", "languages": ["q"]}, "data.corpora[0]: languages q are not among data.languages (x, y)"),
    ({"path": "p", "languages": ["x"], "weight": 0}, "data.corpora[0]: weight must be a positive number, got 0"),
    ({"path": "p", "languages": ["x"], "use": "all"}, "data.corpora[0]: use must be both, translation or alignment"),
    ({"path": "p", "languages": ["x"], "dev_lines": 5, "valid": "val"}, "give valid (a dev split) or dev_lines"),
    ({"path": "p", "languages": ["x"], "lang": "x"}, "data.corpora[0]: unknown key(s) lang"),
    ({"path": "p", "languages": ["x"], "dev_lines": "5"}, "data.corpora[0]: dev_lines: expected int, got '5'"),
    # issue 40: a corpus's mistakes named its own keys, not the main corpus's data.pivot or data.languages
    ({"path": "p", "languages": ["x"], "directions": "many-to-one", "pivot": "y"},
     "data.corpora[0] (p): data.corpora[0].pivot 'y' is not among data.corpora[0].languages (x)"),
    ({"path": "p", "languages": ["x"], "directions": ["x-y"]},
     "data.corpora[0] (p): direction x-y: language 'y' is not among data.corpora[0].languages (x)"),
    ({"path": "p", "languages": ["x"], "monolingual": False}, "data.corpora[0] (p): no training directions left: "
     "check data.corpora[0].directions, data.corpora[0].languages and data.corpora[0].monolingual"),
    ({"path": "p", "name": "q", "languages": ["x", "y"], "directions": [], "monolingual": False},
     "data.corpora[0] (q): no training directions left: check data.corpora[0].directions"),
    ({"path": "p", "languages": ["x", "y"], "directions": ["x_y"]},
     "data.corpora[0] (p): data.corpora[0].directions: direction 'x_y': expected SRC-TGT"),
])
def test_bad_corpus_entries_are_refused(toy_corpus, tmp_path, entry, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        config_with(toy_corpus, tmp_path, [entry])


def test_two_corpora_of_one_name_are_refused(toy_corpus, second_corpus, tmp_path):
    entry = {"path": str(second_corpus), "languages": ["x"]}
    with pytest.raises(ConfigError, match="the name 'second.*' is used twice"):
        config_with(toy_corpus, tmp_path, [entry, entry])


def test_dev_lines_of_the_whole_split_are_refused_before_training(toy_corpus, second_corpus, tmp_path):
    corpora = [{"path": str(second_corpus), "languages": ["x", "y"], "dev_lines": 300}]
    with pytest.raises(ConfigError, match="dev_lines=300 holds out every line of its training split"):
        Trainer.from_config(config_with(toy_corpus, tmp_path, corpora), show_progress=False)


@pytest.mark.parametrize("weights", [(1.0, 0.0001), (1.0, 0.0004), (0.0001, 1.0), (1.0, 1.0e9), (1.0, 1.0e300),
                                     (1e-300, 1.0)])
def test_any_positive_weights_are_served_by_a_bounded_schedule(toy_corpus, second_corpus, tmp_path, weights, caplog):
    """Issue 40: weight 0.0001 (or data.weight=0.0001) was a ZeroDivisionError in fractions (limit_denominator(1000)
    made it 0), 1e9 a numpy MemoryError (4e9 visits a cycle, 119 GiB) and 1e300 an OverflowError. Weights are
    taken as written, a cycle holds at most MAX_CYCLE steps, and a share raised to one step a cycle is named."""
    from bridgeembed.training.schedule import MAX_CYCLE, shares

    main, extra = weights
    corpora = [{"path": str(second_corpus), "name": "second", "languages": ["x", "y"], "directions": ["x-y"],
                "monolingual": False, "weight": extra}]
    config = config_with(toy_corpus, tmp_path, corpora, weight=main)
    found, visits = units(config.data)
    assert sum(visits) <= MAX_CYCLE + len(found) and min(visits) >= 1
    share = shares(found, visits, ["main", "second"])["second"] / 100
    asked = extra / (main + extra)
    if 1e-5 < asked < 1 - 1e-5:
        assert share == pytest.approx(asked, rel=0.01)
        assert "too far apart" not in caplog.text
    else:
        assert "corpus weights too far apart for the schedule" in caplog.text
        key = "data.weight" if asked > 0.5 else "data.corpora[0].weight (second)"
        assert f"{key} asks for" in caplog.text
    scheduler = RotatingScheduler(found, seed=5, visits=visits)
    assert {found[scheduler.index(s)].corpus for s in range(sum(visits))} == {0, 1}


def test_a_dev_set_another_corpus_trains_on_is_refused(toy_corpus, tmp_path):
    """Issue 40: a corpus in the main corpus's own folder with dev_lines held out lines the main corpus trained on,
    silently; its dev scores measured memorised text. Both entries' keys are named."""
    corpora = [{"path": str(toy_corpus), "name": "again", "languages": ["x", "y"], "dev_lines": 20}]
    with pytest.raises(ConfigError, match=re.escape("data.corpora[0] (again).dev_lines 20 (the last lines of its "
                                                    "train split) is a dev set that the main corpus (data.path ")
                       + ".*data.train train.* trains on .*train.x.gz"):
        Trainer.from_config(config_with(toy_corpus, tmp_path, corpora), show_progress=False)
    corpora = [{"path": str(toy_corpus), "name": "dev", "languages": ["x", "y"], "train": "val"}]  # the main dev
    with pytest.raises(ConfigError, match=re.escape("data.valid val (the main corpus's dev split) is a dev set that "
                                                    "data.corpora[0] (dev) (its path ")):
        Trainer.from_config(config_with(toy_corpus, tmp_path, corpora), show_progress=False)


def test_an_alignment_corpus_that_would_train_nothing_is_refused(toy_corpus, second_corpus, tmp_path):
    """Issue 40: use: alignment with one language aligned nothing, and with train.align_weight=0 its steps had no
    loss but the penalty ("nll 0.000, ppl 1.0"): refused where a run starts, naming the keys. A saved model's
    config is not checked for them (it loads as it did)."""
    from bridgeembed.config import check_run

    one = [{"path": str(second_corpus), "name": "cmp", "languages": ["x"], "use": "alignment"}]
    with pytest.raises(ConfigError, match=re.escape("data.corpora[0] (cmp): use: alignment trains only the alignment "
                                                    "loss, which pairs a sentence with its counterpart in another "
                                                    "language of the corpus, but its languages are [x]")):
        Trainer.from_config(config_with(toy_corpus, tmp_path, one, align_weight=1.0), show_progress=False)
    two = [{"path": str(second_corpus), "name": "cmp", "languages": ["x", "y"], "use": "alignment"}]
    config = config_with(toy_corpus, tmp_path, two)  # a config, as a checkpoint stores it: fine
    with pytest.raises(ConfigError, match=re.escape("data.corpora[0] (cmp): use: alignment trains only the alignment "
                                                    "loss, but train.align_weight and train.align_per_head are 0")):
        check_run(config)
    path = tmp_path / "c.yaml"
    import yaml

    path.write_text(yaml.safe_dump(config.to_dict()))
    with pytest.raises(ConfigError, match=re.escape(f"{path}: data.corpora[0] (cmp): use: alignment")):
        Config.from_yaml(path)
    Config.from_yaml(path, ["train.align_per_head=0.5"])


def test_a_corpus_with_empty_files_names_itself_and_the_direction(toy_corpus, tmp_path):
    """Issue 40: "a training direction has no sentence pairs", naming no corpus and no direction."""
    from bridgeembed.errors import DataError

    empty = tmp_path / "blank"
    empty.mkdir()
    (empty / "train.x").write_text("a b\n\n")  # text on one side at most
    (empty / "train.y").write_text("\nc d\n")
    corpora = [{"path": str(empty), "languages": ["x", "y"], "directions": ["y-x"]}]
    with pytest.raises(DataError, match=re.escape("data.corpora[0] (blank): training direction y-x has no sentence "
                                                  "pair with text on both sides (")):
        Trainer.from_config(config_with(toy_corpus, tmp_path / "run", corpora), show_progress=False)


def test_tokenizer_text_all_beside_init_from_says_it_is_not_applied(toy_corpus, second_corpus, tmp_path, caplog):
    """Issue 40: data.tokenizer_text=all with train.init_from was ignored without a word (the tokenizers are
    init_from's), while config.yaml recorded all."""
    from bridgeembed.training.setup import prepare

    Trainer.from_config(toy_config(toy_corpus, tmp_path / "init", max_steps=1, valid_every=1), show_progress=False) \
        .train()
    raw = toy_config(toy_corpus, tmp_path / "run", init_from=str(tmp_path / "init" / "last.pt")).to_dict()
    raw["data"]["corpora"] = [{"path": str(second_corpus), "name": "second", "languages": ["x", "y"]}]
    raw["data"]["tokenizer_text"] = "all"
    caplog.clear()
    prepare(Config.from_dict(raw), show_progress=False)
    assert "data.tokenizer_text=all is not applied: the tokenizers are those of train.init_from" in caplog.text
    raw["data"]["tokenizer_text"] = "main"
    caplog.clear()
    prepare(Config.from_dict(raw), show_progress=False)
    assert "is not applied" not in caplog.text  # (the tmp path holds this test's name, tokenizer_text too)
