"""`--model SPEC` -> an encoder, and the language check every benchmark shares."""

import re

import numpy as np
import pytest

from bridgeembed.encoders.baselines import HashBowEncoder
from bridgeembed.errors import CheckpointError, UnknownLanguageError
from bridgeembed.evaluation import models
from bridgeembed.evaluation.languages import check_language, known_languages
from bridgeembed.paths import model_folder


def test_baselines_by_name_and_a_new_one_is_one_line(monkeypatch):
    assert isinstance(models.load_encoder("bow"), HashBowEncoder)
    monkeypatch.setitem(models.BASELINES, "bow64", lambda device=None: HashBowEncoder(dim=64))
    assert models.load_encoder("bow64").encode(["a b"], "en").shape == (1, 64)
    with pytest.raises(CheckpointError, match="no model 'nope'"):
        models.load_encoder("nope")


def test_checkpoint_and_its_untrained_control(toy_run):
    out, _ = toy_run
    trained = models.load_encoder(str(out / "last.pt"), device="cpu")
    control = models.load_encoder(f"untrained:{out / 'last.pt'}", device="cpu")
    assert control.languages == trained.languages and control.num_heads == trained.num_heads
    a, b = trained.encode(["apple kite"], "x"), control.encode(["apple kite"], "x")
    assert a.shape == b.shape and not np.allclose(a, b)
    assert control.source.startswith("untrained:")


def test_untrained_controls_of_several_seeds(toy_run):
    """Issue 29: the SentEval control is the mean and spread of several seeds: untrained:MODEL@SEED."""
    path = toy_run[0] / "last.pt"
    zero, same, one = (models.load_encoder(f"untrained:{spec}", device="cpu")
                       for spec in (path, f"{path}@0", f"{path}@1"))
    a, b, c = (e.encode(["apple kite"], "x") for e in (zero, same, one))
    assert np.array_equal(a, b) and not np.allclose(a, c)
    assert models.untrained_seed("runs/a@b/last.pt") == ("runs/a@b/last.pt", 0)
    assert models.untrained_seed("general-m2m@2") == ("general-m2m", 2)
    assert model_folder("untrained:general-m2m@2") != model_folder("untrained:general-m2m@1")


def test_the_model_of_an_untrained_spec_is_untrained_seeds_rule(toy_run):
    """Issue 48: the `untrained:NAME@SEED` parse had two copies; the commands' model_input cut at the last '@'
    ('untrained:runs/a@b/last.pt' -> 'runs/a'). Both read it through evaluation.models now."""
    from bridgeembed.cli.checks import model_input

    path = toy_run[0] / "last.pt"
    assert models.untrained_source("untrained:runs/a@b/last.pt") == "runs/a@b/last.pt"
    assert models.untrained_source("untrained:general-m2m@2") == "general-m2m"
    assert models.untrained_source("untrained:general-m2m@abc") == "general-m2m"  # the seed is the load's error
    assert models.untrained_source("general-m2m@2") == "general-m2m@2"  # not an untrained: spec
    assert [p for _, p in model_input(f"untrained:{path}@3")] == [path]


def test_the_untrained_control_leaves_the_callers_random_state_alone(toy_run):
    import torch

    trained = models.load_encoder(str(toy_run[0] / "last.pt"), device="cpu")
    torch.manual_seed(123)
    before = torch.get_rng_state()
    one, two = trained.reinitialized(seed=5), trained.reinitialized(seed=5)
    assert torch.equal(torch.get_rng_state(), before)
    for (name, a), b in zip(one.model.state_dict().items(), two.model.state_dict().values()):
        assert torch.equal(a, b), name  # the seed alone decides the weights


def test_model_folder():
    assert model_folder("untrained:general-m2m") == "untrained-general-m2m"
    assert re.fullmatch(r"best\.pt-[0-9a-f]{8}", model_folder("runs/exp 1/best.pt"))
    assert model_folder("runs/a/best.pt") != model_folder("runs/b/best.pt")  # two models, two folders
    assert model_folder("runs/a/best.pt") == model_folder("runs/../runs/a/best.pt")  # one model, one folder
    assert model_folder("::") == "model"


def test_language_check():
    class Two:
        languages = ("en", "de")

    assert known_languages(HashBowEncoder()) is None and known_languages(Two()) == ["en", "de"]
    check_language(HashBowEncoder(), "xx")  # takes any language
    check_language(Two(), "de")
    with pytest.raises(UnknownLanguageError, match="unknown language 'fr': the encoder knows de, en"):
        check_language(Two(), "fr")
