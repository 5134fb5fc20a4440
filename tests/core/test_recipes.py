"""The recipes of the shipped weights (bridgeembed/recipes.py), run as `bridgeembed-recipe` runs them on a toy
model: interpolation, decoder grafting, a model carried over to new tokenizers; and the checks of their
arguments (issue 40): an output that is an input is refused, a missing input is named, on one line each."""

import pytest

from bridgeembed.cli import recipe
from tests.helpers import one_line_error


def test_interpolate_mixes_two_checkpoints_of_one_model(toy_run, tmp_path, capsys):
    import torch

    from bridgeembed.checkpoint import load_checkpoint, save_atomic

    run_dir, _ = toy_run
    start, tuned = load_checkpoint(run_dir / "best.pt"), load_checkpoint(run_dir / "last.pt")
    tuned["model"] = {k: v + 1.0 if v.is_floating_point() else v for k, v in tuned["model"].items()}
    save_atomic(tuned, tmp_path / "tuned.pt")
    assert recipe.main(["interpolate", str(run_dir / "best.pt"), str(tmp_path / "tuned.pt"), "--alpha", "0", "0.25",
                        "1", "--out", str(tmp_path / "soup")]) == 0
    assert "soup-0.25.pt" in capsys.readouterr().out
    for alpha in (0.0, 0.25, 1.0):
        mixed = load_checkpoint(tmp_path / "soup" / f"soup-{alpha:g}.pt")["model"]
        for key, value in start["model"].items():
            if value.is_floating_point():
                expected = (1 - alpha) * value.float() + alpha * tuned["model"][key].float()
                assert torch.allclose(mixed[key], expected, atol=1e-6), key
    other = load_checkpoint(run_dir / "best.pt")
    lang = next(iter(other["tokenizers"]))
    other["tokenizers"][lang]["lowercase"] = not other["tokenizers"][lang]["lowercase"]
    save_atomic(other, tmp_path / "other.pt")
    assert recipe.main(["interpolate", str(run_dir / "best.pt"), str(tmp_path / "other.pt"), "--alpha", "0.5",
                        "--out", str(tmp_path / "no")]) == 2
    assert "different tokenizers" in one_line_error(capsys)
    assert not (tmp_path / "no").exists()
    assert recipe.main(["interpolate", str(run_dir / "best.pt"), str(tmp_path / "tuned.pt"), "--alpha", "1.5",
                        "--out", str(tmp_path / "no")]) == 2
    assert "--alpha takes weights between 0 and 1" in one_line_error(capsys)


def test_with_decoders_gives_an_encoder_only_model_the_decoders_of_another(toy_run, tmp_path, capsys):
    import torch

    from bridgeembed import BridgeEncoder
    from bridgeembed.checkpoint import load_checkpoint, save_atomic
    from bridgeembed.config import Config
    from bridgeembed.training.setup import load_init

    run_dir, _ = toy_run
    BridgeEncoder(run_dir / "best.pt").save(tmp_path / "encoder.pt")  # encoders and bridge only
    encoder, decoders = load_checkpoint(tmp_path / "encoder.pt"), load_checkpoint(run_dir / "last.pt")
    assert not encoder["decoder_languages"]
    assert recipe.main(["with-decoders", str(tmp_path / "encoder.pt"), str(run_dir / "last.pt"),
                        "--out", str(tmp_path / "both.pt")]) == 0
    assert "both.pt: encoders and bridge of" in capsys.readouterr().out
    both = load_init(tmp_path / "both.pt", Config.from_dict(decoders["config"]))  # what train.init_from reads
    assert both["decoder_languages"] == decoders["decoder_languages"] and "trainer" not in both
    assert set(both["model"]) == set(decoders["model"])
    for key, value in both["model"].items():
        source = encoder["model"] if key in encoder["model"] else decoders["model"]
        assert torch.equal(value, source[key]), key
    other = dict(decoders, tokenizers=dict(decoders["tokenizers"]))
    lang = next(iter(other["tokenizers"]))
    other["tokenizers"][lang] = dict(other["tokenizers"][lang], lowercase=not other["tokenizers"][lang]["lowercase"])
    save_atomic(other, tmp_path / "other.pt")
    assert recipe.main(["with-decoders", str(tmp_path / "encoder.pt"), str(tmp_path / "other.pt"),
                        "--out", str(tmp_path / "no.pt")]) == 2
    lowered = other["tokenizers"][lang]["lowercase"]
    assert f"ENCODER's {lang} tokenizer is not DECODERS' (lowercase {not lowered} against {lowered}): decoders fit " \
           f"only the tokenizers they were trained with" in one_line_error(capsys)
    assert not (tmp_path / "no.pt").exists()


def test_with_decoders_replaces_the_decoders_a_model_already_has(toy_run, tmp_path, capsys):
    """A model with decoders of its own (an interpolation, a shipped model) takes DECODERS' in their place: before,
    its own were kept and the recipe said "0 tensors" of DECODERS."""
    import torch

    from bridgeembed.checkpoint import load_checkpoint, save_atomic

    run_dir, _ = toy_run
    encoder = load_checkpoint(run_dir / "best.pt")
    other = dict(encoder, model={k: v + 1.0 if k.startswith("decoders.") else v for k, v in encoder["model"].items()})
    save_atomic(other, tmp_path / "decoders.pt")
    assert recipe.main(["with-decoders", str(run_dir / "best.pt"), str(tmp_path / "decoders.pt"),
                        "--out", str(tmp_path / "both.pt")]) == 0
    decoder_keys = [k for k in encoder["model"] if k.startswith("decoders.")]
    assert decoder_keys
    assert f"{len(decoder_keys)} tensors (decoders of" in capsys.readouterr().out
    both = load_checkpoint(tmp_path / "both.pt")
    for key, value in both["model"].items():
        assert torch.equal(value, (other if key in decoder_keys else encoder)["model"][key]), key


@pytest.mark.parametrize("case", ["another-vocabulary", "no-decoders"])
def test_with_decoders_of_another_vocabulary_or_of_none_says_so(toy_run, tmp_path, capsys, case):
    """Issue 40: the command's docstring example of then (broad-m2m, retokenized at stage 13, and multi30k-m2m's
    decoders) said only "different en tokenizers"; an encoder-only DECODERS exited 0 with "(decoders of )".
    Two toy models stand in for the two retired shipped ones (issue 42): one whose x tokenizer is another
    vocabulary (y's), and an encoder-only export."""
    import re

    from bridgeembed import BridgeEncoder
    from bridgeembed.checkpoint import load_checkpoint, save_atomic
    from bridgeembed.text.tokenization import LanguageTokenizer

    run_dir, _ = toy_run
    last = str(run_dir / "last.pt")
    lean = tmp_path / "encoder.pt"
    BridgeEncoder(run_dir / "best.pt").save(lean)  # encoders and bridge only
    if case == "another-vocabulary":
        other = load_checkpoint(lean)
        mine = other["tokenizers"]["x"]
        words = [f"zq{i} banana{i % 7} kiwi apple" for i in range(300)]  # text the toy corpus never has
        other["tokenizers"] = {**other["tokenizers"], "x": LanguageTokenizer.train(
            "x", words, 100, lowercase=mine["lowercase"], moses=mine["moses"]).state()}
        save_atomic(other, tmp_path / "retokenized.pt")
        encoder, decoders = str(tmp_path / "retokenized.pt"), last
        message = (r"ENCODER's x tokenizer is not DECODERS' \(another vocabulary: [\d,]+ of ENCODER's [\d,]+ pieces are "
                   r"not DECODERS'\): decoders fit only the tokenizers they were trained with; give as DECODERS a model "
                   r"with ENCODER's tokenizers, such as the one ENCODER was fine-tuned from \(a model retokenized since "
                   r"has others\)")
    else:
        encoder, decoders = last, str(lean)
        message = re.escape("DECODERS has no decoders (an encoder-only model): give a trainer checkpoint or a model "
                            "exported with its decoders")
    assert recipe.main(["with-decoders", encoder, decoders, "--out", str(tmp_path / "no.pt")]) == 2
    error = one_line_error(capsys)
    assert re.fullmatch(re.escape(f"error: ENCODER {encoder}, DECODERS {decoders}: ") + message, error), error
    assert not (tmp_path / "no.pt").exists()


def test_retokenize_carries_a_model_over_to_tokenizers_from_every_corpus(toy_run, tmp_path, capsys):
    import gzip

    import torch
    import yaml

    from bridgeembed.checkpoint import load_checkpoint
    from bridgeembed.config import Config
    from bridgeembed.text.tokenization import LanguageTokenizer
    from bridgeembed.training.setup import build_model, load_init

    run_dir, _ = toy_run
    domain = tmp_path / "domain"  # a word the toy corpus never has, so the new tokenizers learn a piece for it
    domain.mkdir()
    for lang in ("x", "y"):
        with gzip.open(domain / f"train.{lang}.gz", "wt", encoding="utf-8") as handle:
            handle.write("zqzq zqzq zqzq banana\n" * 300)
    start = load_checkpoint(run_dir / "last.pt")
    raw = dict(start["config"])
    raw["data"] = {**raw["data"], "tokenizer_text": "all",
                   "corpora": [{"path": str(domain), "name": "domain", "languages": ["x", "y"], "dev_lines": 10}]}
    raw["train"] = {**raw["train"], "out_dir": str(tmp_path / "run"), "cache_dir": str(tmp_path / "cache")}
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(raw))
    assert recipe.main(["retokenize", str(run_dir / "last.pt"), str(config), "--out", str(tmp_path / "init.pt")]) == 0
    text = capsys.readouterr().out
    assert "init.pt:" in text and "pieces that kept their row: x " in text
    init = load_init(tmp_path / "init.pt", Config.from_yaml(config))  # what train.init_from reads
    assert "trainer" not in init and init["config"]["data"]["tokenizer_text"] == "all"
    for lang in ("x", "y"):
        old = LanguageTokenizer.from_state(start["tokenizers"][lang]).sp
        new = LanguageTokenizer.from_state(init["tokenizers"][lang]).sp
        assert new.piece_to_id("\u2581zqzq") != new.unk_id() and old.piece_to_id("\u2581zqzq") == old.unk_id()
        rows, before = init["model"][f"encoders.{lang}.embed.weight"], start["model"][f"encoders.{lang}.embed.weight"]
        assert rows.shape == (new.get_piece_size(), before.size(1))
        spelled = [i for i in old.encode("zqzq", out_type=int) if i > 3]  # not UNK (q is unknown to the old)
        assert len(spelled) > 1 and torch.allclose(rows[new.piece_to_id("\u2581zqzq")], before[spelled].mean(dim=0))
        both = [(i, old.piece_to_id(new.id_to_piece(i))) for i in range(4, new.get_piece_size())
                if old.piece_to_id(new.id_to_piece(i)) != old.unk_id()]
        assert len(both) > 10 and all(torch.equal(rows[i], before[j]) for i, j in both)  # pieces both have: kept
        assert torch.equal(rows[:4], before[:4])  # PAD, UNK, BOS, EOS
        bias = init["model"][f"decoders.{lang}.out.bias"]
        assert all(torch.equal(bias[i], start["model"][f"decoders.{lang}.out.bias"][j]) for i, j in both)
    for key, value in init["model"].items():  # everything but the vocabulary tables is the start's
        if "embed" not in key and not key.endswith(("out.weight", "out.bias")):
            assert torch.equal(value, start["model"][key]), key
    tokenizers = {lang: LanguageTokenizer.from_state(s) for lang, s in init["tokenizers"].items()}
    build_model(Config.from_yaml(config).model, tokenizers, 0, init)  # the weights fit a model of the new vocabulary
    encoder_only = dict(start, decoder_languages=[])
    torch.save(encoder_only, tmp_path / "encoder.pt")
    assert recipe.main(["retokenize", str(tmp_path / "encoder.pt"), str(config), "--out", str(tmp_path / "no.pt")]) == 2
    assert "lacks the decoder of x, y" in one_line_error(capsys)
    assert not (tmp_path / "no.pt").exists()


@pytest.mark.parametrize("languages, message", [
    (["x", "y", "z"], "CONFIG's data.languages (x, y, z) add z, a language the model does not have (it has x, y): "
                      "retokenize carries a model's own languages over to new tokenizers; take z out of "
                      "data.languages, or train a model with it"),
    (["x"], "CONFIG's data.languages (x) leave out y, which the model has (it has x, y): its weights would stay "
            "without a tokenizer; give every language of the model in data.languages"),
], ids=["adds-a-language", "leaves-one-out"])
def test_retokenize_refuses_a_config_of_other_languages_before_training_tokenizers(toy_run, toy_corpus, tmp_path,
                                                                                   capsys, languages, message):
    """Issue 40: a config that adds a language said the model "lacks the decoder of" it, after training every
    tokenizer; one that leaves a language out wrote a model that does not load (decoders without a tokenizer)."""
    import shutil

    import yaml

    from bridgeembed.checkpoint import load_checkpoint

    run_dir, _ = toy_run
    corpus = tmp_path / "corpus"
    shutil.copytree(toy_corpus, corpus)
    for path in list(corpus.glob("*.x*")):  # z: a third language with text of its own
        shutil.copy(path, corpus / path.name.replace(".x", ".z"))
    raw = dict(load_checkpoint(run_dir / "last.pt")["config"])
    raw["data"] = {**raw["data"], "path": str(corpus), "languages": languages}
    raw["train"] = {**raw["train"], "out_dir": str(tmp_path / "run"), "cache_dir": str(tmp_path / "cache")}
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(raw))
    last = run_dir / "last.pt"
    assert recipe.main(["retokenize", str(last), str(config), "--out", str(tmp_path / "init.pt")]) == 2
    assert one_line_error(capsys) == f"error: {last}: {message}"
    assert not (tmp_path / "init.pt").exists() and not (tmp_path / "cache").exists()  # no tokenizer was trained


def test_average_is_the_mean_of_checkpoints_and_keeps_shared_tensors_bit_identical(toy_run, tmp_path, capsys):
    """Checkpoint averaging: the element-wise mean, and a tensor equal in every input (frozen encoders) comes out
    the same bytes, so a decoders-only run's mean keeps the vectors of the encoders it trained on."""
    import torch

    from bridgeembed.checkpoint import load_checkpoint, save_atomic

    run_dir, _ = toy_run
    base = load_checkpoint(run_dir / "last.pt")
    shifted = []
    for i, shift in enumerate((0.0, 1.0, 3.5)):  # decoders move; the encoders and bridge stay as they are
        payload = load_checkpoint(run_dir / "last.pt")
        payload["model"] = {k: v + shift if k.startswith("decoders.") else v for k, v in payload["model"].items()}
        save_atomic(payload, tmp_path / f"step{i}.pt")
        shifted.append(str(tmp_path / f"step{i}.pt"))
    assert recipe.main(["average", *shifted, "--out", str(tmp_path / "avg.pt")]) == 0
    assert capsys.readouterr().out.strip() == f"{tmp_path / 'avg.pt'}: the mean of 3 checkpoints"
    mean = load_checkpoint(tmp_path / "avg.pt")
    assert "optimizer" not in mean and "trainer" not in mean
    decoders = [k for k in base["model"] if k.startswith("decoders.")]
    assert decoders and len(decoders) < len(base["model"])
    for key, value in base["model"].items():
        if key.startswith("decoders.") and value.is_floating_point():
            assert torch.allclose(mean["model"][key], value + 1.5, atol=1e-5), key
        else:
            assert mean["model"][key].dtype == value.dtype
            assert mean["model"][key].numpy().tobytes() == value.numpy().tobytes(), key


def test_average_refuses_one_checkpoint_and_another_model(toy_run, tmp_path, capsys):
    from bridgeembed.checkpoint import load_checkpoint, save_atomic

    run_dir, _ = toy_run
    assert recipe.main(["average", str(run_dir / "last.pt"), "--out", str(tmp_path / "avg.pt")]) == 2
    assert one_line_error(capsys) == f"error: average takes two checkpoints or more, got 1: {run_dir / 'last.pt'}"
    other = load_checkpoint(run_dir / "last.pt")
    lang = next(iter(other["tokenizers"]))
    other["tokenizers"][lang]["lowercase"] = not other["tokenizers"][lang]["lowercase"]
    save_atomic(other, tmp_path / "other.pt")
    assert recipe.main(["average", str(run_dir / "best.pt"), str(run_dir / "last.pt"), str(tmp_path / "other.pt"),
                        "--out", str(tmp_path / "avg.pt")]) == 2
    assert one_line_error(capsys) == ("error: checkpoint 3 is not the first's model: the two checkpoints have "
                                      "different tokenizers: interpolation needs one vocabulary")
    assert not (tmp_path / "avg.pt").exists()


@pytest.mark.parametrize("command", ["interpolate", "average", "with-decoders", "retokenize", "widen-decoders",
                                     "add-decoder-heads", "add-decoder-states"])
def test_an_output_that_is_an_input_is_refused_before_any_work(command, toy_run, tmp_path, capsys):
    import shutil

    run_dir, _ = toy_run
    model = tmp_path / "soup-0.5.pt"  # interpolate --out FOLDER writes FOLDER/soup-0.5.pt
    shutil.copy(run_dir / "last.pt", model)
    before = model.read_bytes()
    (tmp_path / "c.yaml").write_text("model:\n  heads: 2\n")
    argv = {"interpolate": [str(run_dir / "best.pt"), str(model), "--alpha", "0.5", "--out", str(tmp_path)],
            "average": [str(run_dir / "best.pt"), str(model), "--out", str(model)],
            "with-decoders": [str(run_dir / "best.pt"), str(model), "--out", str(model)],
            "retokenize": [str(model), str(tmp_path / "c.yaml"), "--out", str(model)],
            "widen-decoders": [str(model), "--dec-hidden", "512", "--out", str(model)],
            "add-decoder-heads": [str(model), "--decoder-heads", "2", "--out", str(model)],
            "add-decoder-states": [str(model), "--out", str(model)]}[command]
    assert recipe.main([command, *argv]) == 2
    err = one_line_error(capsys)
    assert "is the same file as" in err and str(model) in err
    assert model.read_bytes() == before
    if command == "retokenize":
        assert recipe.main([command, str(model), str(tmp_path / "c.yaml"), "--out", str(tmp_path / "c.yaml")]) == 2
        assert "is the same file as CONFIG" in one_line_error(capsys)


@pytest.mark.parametrize("command", ["interpolate", "average", "with-decoders", "retokenize", "widen-decoders",
                                     "add-decoder-heads", "add-decoder-states"])
def test_a_missing_input_is_named_on_one_line(command, toy_run, tmp_path, capsys):
    run_dir, _ = toy_run
    missing = str(tmp_path / "missing.pt")
    argv = {"interpolate": ["interpolate", str(run_dir / "best.pt"), missing, "--alpha", "0.5", "--out",
                            str(tmp_path / "soup")],
            "average": ["average", str(run_dir / "last.pt"), missing, "--out", str(tmp_path / "o.pt")],
            "with-decoders": ["with-decoders", missing, str(run_dir / "last.pt"), "--out", str(tmp_path / "o.pt")],
            "retokenize": ["retokenize", missing, str(tmp_path / "c.yaml"), "--out", str(tmp_path / "o.pt")],
            "widen-decoders": ["widen-decoders", missing, "--dec-hidden", "512", "--out", str(tmp_path / "o.pt")],
            "add-decoder-heads": ["add-decoder-heads", missing, "--decoder-heads", "2", "--out", str(tmp_path / "o.pt")],
            "add-decoder-states": ["add-decoder-states", missing, "--out", str(tmp_path / "o.pt")]}[command]
    assert recipe.main(argv) == 2
    assert "missing.pt" in one_line_error(capsys)
    if command == "retokenize":
        assert recipe.main(["retokenize", str(run_dir / "last.pt"), str(tmp_path / "c.yaml"), "--out",
                            str(tmp_path / "o.pt")]) == 2
        assert f"config file {tmp_path / 'c.yaml'} does not exist" in one_line_error(capsys)
    assert not list(tmp_path.glob("o.pt")) and not (tmp_path / "soup").exists()


def test_alphas_that_name_one_file_are_refused_before_any_work(toy_run, tmp_path, capsys):
    """Issue 49, item 1: --alpha 0.3 0.3000001 wrote both to soup-0.3.pt, the second over the first, and said
    "wrote" twice."""
    run_dir, _ = toy_run
    for alphas in (["0.3", "0.3000001"], ["0.5", "0.5"]):
        assert recipe.main(["interpolate", str(run_dir / "best.pt"), str(run_dir / "last.pt"), "--alpha", *alphas,
                            "--out", str(tmp_path / "soup")]) == 2
        assert one_line_error(capsys) == (f"error: --alpha {alphas[0]} and {alphas[1]} would both be written to "
                                          f"{tmp_path / 'soup' / ('soup-' + alphas[0] + '.pt')} (names keep 6 "
                                          "digits): give each weight once")
        assert not list((tmp_path / "soup").glob("*.pt"))


@pytest.mark.parametrize("command", ["interpolate", "average", "with-decoders", "retokenize"])
def test_an_empty_out_is_refused(command, toy_run, tmp_path, capsys, monkeypatch):
    """Issue 49, item 2: interpolate --out '' wrote soup-0.5.pt into the working directory."""
    run_dir, _ = toy_run
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text("model:\n  heads: 2\n")
    argv = {"interpolate": [str(run_dir / "best.pt"), str(run_dir / "last.pt"), "--alpha", "0.5"],
            "average": [str(run_dir / "best.pt"), str(run_dir / "last.pt")],
            "with-decoders": [str(run_dir / "best.pt"), str(run_dir / "last.pt")],
            "retokenize": [str(run_dir / "last.pt"), str(tmp_path / "c.yaml")]}[command]
    assert recipe.main([command, *argv, "--out", ""]) == 2
    kind = "folder" if command == "interpolate" else "file"
    assert one_line_error(capsys) == f"error: --out '' is an empty path: give a {kind}'s name"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


@pytest.mark.parametrize("command", ["interpolate", "average", "with-decoders"])
def test_what_a_killed_recipe_write_left_is_cleared_by_the_next(command, toy_run, tmp_path, capsys):
    """Issue 49, item 3: a killed write left `.soup-0.5.pt.PID.tmp`; interpolate and with-decoders never removed
    it (export and train did): every atomic write now clears its own file's (`atomic_file`)."""
    import subprocess
    import sys

    run_dir, _ = toy_run
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    out = tmp_path / "out"
    out.mkdir()
    name = "soup-0.5.pt" if command == "interpolate" else "init.pt"
    stale = out / f".{name}.{dead}.tmp"
    stale.write_bytes(b"half a checkpoint")
    argv = {"interpolate": [str(run_dir / "best.pt"), str(run_dir / "last.pt"), "--alpha", "0.5", "--out", str(out)],
            "average": [str(run_dir / "best.pt"), str(run_dir / "last.pt"), "--out", str(out / name)],
            "with-decoders": [str(run_dir / "best.pt"), str(run_dir / "last.pt"), "--out", str(out / name)]}[command]
    assert recipe.main([command, *argv]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in out.iterdir()) == [name]


def _decoder_logits(payload: dict, seed: int = 0) -> dict:
    """Every decoder's teacher-forced logits for one random batch of bridge outputs and target tokens."""
    import torch

    from bridgeembed.checkpoint import build_from_payload

    model = build_from_payload(payload)[0].eval()
    generator = torch.Generator().manual_seed(seed)
    memory = torch.randn(3, model.cfg.heads, model.dim, generator=generator)
    out = {}
    with torch.no_grad():
        for lang, decoder in model.decoders.items():
            tokens = torch.randint(4, decoder.embed.num_embeddings, (3, 6), generator=generator)
            out[lang] = decoder(tokens, memory)
    return out


@pytest.mark.parametrize("shape", [{}, {"dec_layers": 2, "input_feed": True}])
def test_widen_decoders_translates_as_before_and_leaves_the_vectors_alone(shape, toy_run, tmp_path, capsys):
    import torch

    from bridgeembed.checkpoint import build_from_payload, load_checkpoint, make_payload, save_atomic
    from bridgeembed.config import Config
    from bridgeembed.model.nmt import BridgeModel
    from bridgeembed.training.setup import load_init

    run_dir, _ = toy_run
    narrow = load_checkpoint(run_dir / "last.pt")
    if shape:  # the same model in another decoder shape, random weights
        config = Config.from_dict(narrow["config"])
        for key, value in shape.items():
            setattr(config.model, key, value)
        torch.manual_seed(1)
        tokenizers = build_from_payload(narrow)[1]
        model = BridgeModel(config.model, {lang: tok.vocab_size for lang, tok in tokenizers.items()})
        narrow = make_payload(model, tokenizers, config)
    save_atomic(narrow, tmp_path / "narrow.pt")
    old = narrow["config"]["model"]["dec_hidden"]
    assert recipe.main(["widen-decoders", str(tmp_path / "narrow.pt"), "--dec-hidden", str(2 * old),
                        "--out", str(tmp_path / "wide.pt")]) == 0
    assert f"widened from {old} to {2 * old} units (train with model.dec_hidden={2 * old})" in capsys.readouterr().out
    config = Config.from_dict(narrow["config"])
    config.model.dec_hidden = 2 * old
    wide = load_init(tmp_path / "wide.pt", config)  # what train.init_from reads
    for key, value in narrow["model"].items():  # encoders, bridge and vocabulary tables: the same bytes
        if not key.startswith("decoders.") or ".embed." in key or ".out." in key:
            assert torch.equal(wide["model"][key], value), key
    lang = wide["decoder_languages"][0]
    assert wide["model"][f"decoders.{lang}.rnn.weight_hh_l0"].shape == (8 * old, 2 * old)
    before, after = _decoder_logits(narrow), _decoder_logits(wide)
    for lang, logits in before.items():
        assert torch.allclose(after[lang], logits, atol=1e-5), lang
    model = build_from_payload(wide)[0].train()  # the new units learn: their outgoing weights get gradients
    decoder = model.decoders[lang]
    assert decoder.out.weight is decoder.embed.weight  # still tied, at dec_hidden != emb_dim
    tokens = torch.randint(4, decoder.embed.num_embeddings, (4, 5))
    decoder(tokens, torch.randn(4, model.cfg.heads, model.dim)).logsumexp(-1).sum().backward()
    new_columns = decoder.attn_out.weight.grad[:, -old:]
    assert (decoder.attn_out.weight[:, -old:] == 0).all() and new_columns.abs().sum() > 0


def test_widen_decoders_draws_the_same_weights_for_one_seed_whatever_the_order_of_the_loaded_tensors(toy_run):
    import torch

    from bridgeembed.checkpoint import load_checkpoint
    from bridgeembed.recipes import widen_decoders

    run_dir, _ = toy_run
    payload = load_checkpoint(run_dir / "last.pt")  # a model folder loads its tensors in no fixed order
    reordered = {**payload, "model": dict(reversed(payload["model"].items()))}
    hidden = 2 * payload["config"]["model"]["dec_hidden"]
    one, other = widen_decoders(payload, hidden, seed=5)["model"], widen_decoders(reordered, hidden, seed=5)["model"]
    assert all(torch.equal(one[key], other[key]) for key in one)
    another = widen_decoders(payload, hidden, seed=6)["model"]
    assert not all(torch.equal(one[key], another[key]) for key in one)


def test_widen_decoders_refuses_a_narrower_size_untied_decoders_and_no_decoders(toy_run, tmp_path, capsys):
    from bridgeembed import BridgeEncoder
    from bridgeembed.checkpoint import load_checkpoint, save_atomic

    run_dir, _ = toy_run
    payload = load_checkpoint(run_dir / "last.pt")
    old = payload["config"]["model"]["dec_hidden"]
    assert recipe.main(["widen-decoders", str(run_dir / "last.pt"), "--dec-hidden", str(old),
                        "--out", str(tmp_path / "no.pt")]) == 2
    assert f"--dec-hidden {old}: the decoders are already {old} wide; give a larger size" in one_line_error(capsys)
    payload["config"] = {**payload["config"], "model": {**payload["config"]["model"], "tie_embeddings": False}}
    save_atomic(payload, tmp_path / "untied.pt")
    assert recipe.main(["widen-decoders", str(tmp_path / "untied.pt"), "--dec-hidden", str(2 * old),
                        "--out", str(tmp_path / "no.pt")]) == 2
    assert "widen-decoders needs decoders with tied embeddings" in one_line_error(capsys)
    BridgeEncoder(run_dir / "best.pt").save(tmp_path / "encoder.pt")
    assert recipe.main(["widen-decoders", str(tmp_path / "encoder.pt"), "--dec-hidden", str(2 * old),
                        "--out", str(tmp_path / "no.pt")]) == 2
    assert "the model has no decoders" in one_line_error(capsys)
    assert not (tmp_path / "no.pt").exists()


def _translation_batch(model) -> tuple:
    """(source language, target language, src, lengths, tgt): a seeded batch of 3 for two of MODEL's languages."""
    import torch

    lang, other = list(model.decoders)[:2]
    generator = torch.Generator().manual_seed(0)
    src = torch.randint(4, model.encoders[lang].embed.num_embeddings, (3, 7), generator=generator)
    lengths = torch.tensor([7, 5, 3])
    tgt = torch.randint(4, model.decoders[other].embed.num_embeddings, (3, 6), generator=generator)
    return lang, other, src, lengths, tgt


def test_add_decoder_heads_translates_as_before_and_leaves_the_vectors_alone(toy_run, tmp_path, capsys):
    import torch

    from bridgeembed.checkpoint import build_from_payload, load_checkpoint
    from bridgeembed.config import Config
    from bridgeembed.training.setup import load_init
    from bridgeembed.translation.search import beam_search

    run_dir, _ = toy_run
    before = load_checkpoint(run_dir / "last.pt")
    k = before["config"]["model"]["heads"]
    outputs = {}
    for heads in (k, 2 * k, k + 1):
        out = tmp_path / f"heads{heads}.pt"
        assert recipe.main(["add-decoder-heads", str(run_dir / "last.pt"), "--decoder-heads", str(heads),
                            "--out", str(out)]) == 0
        assert (f"with {heads} decoder-only heads beside its {k} shared ones (train with "
                f"model.decoder_heads={heads})") in capsys.readouterr().out
        config = Config.from_dict(before["config"])
        config.model.decoder_heads = heads
        payload = load_init(out, config)  # what train.init_from reads
        assert all(torch.equal(payload["model"][key], value) for key, value in before["model"].items())
        outputs[heads] = build_from_payload(payload)[0].eval()
    model = build_from_payload(before)[0].eval()
    lang, other, src, lengths, tgt = _translation_batch(model)
    with torch.no_grad():
        logits = {h: m(src, lengths, lang, tgt, other).logits for h, m in [(0, model), *outputs.items()]}
        for heads in (k, 2 * k):  # every shared column repeated equally often: the same translation
            assert torch.allclose(logits[heads], logits[0], atol=1e-5)
            assert beam_search(outputs[heads], src, lengths, lang, other, beam=2) == \
                beam_search(model, src, lengths, lang, other, beam=2)
            assert torch.equal(outputs[heads].encode(src, lengths, lang).memory, model.encode(src, lengths, lang).memory)
        assert not torch.allclose(logits[k + 1], logits[0], atol=1e-5)  # one column counted twice
    trained = outputs[k].train()  # the decoder heads get gradients through the decoders' loss
    trained(src, lengths, lang, tgt, other).logits.logsumexp(-1).sum().backward()
    assert trained.decoder_bridge.w2.weight.grad.abs().sum() > 0


def test_decoder_heads_go_with_the_decoders_and_an_encoder_only_save_drops_them(toy_run, tmp_path, capsys):
    import torch

    from bridgeembed import BridgeEncoder
    from bridgeembed.checkpoint import load_checkpoint

    run_dir, _ = toy_run
    assert recipe.main(["add-decoder-heads", str(run_dir / "last.pt"), "--decoder-heads", "3", "--out",
                        str(tmp_path / "heads.pt")]) == 0
    BridgeEncoder(tmp_path / "heads.pt").save(tmp_path / "encoder.pt")
    encoder = load_checkpoint(tmp_path / "encoder.pt")
    assert not [k for k in encoder["model"] if k.startswith("decoder_bridge.")]
    assert recipe.main(["with-decoders", str(tmp_path / "encoder.pt"), str(tmp_path / "heads.pt"),
                        "--out", str(tmp_path / "both.pt")]) == 0
    capsys.readouterr()
    both, heads = (load_checkpoint(tmp_path / name) for name in ("both.pt", "heads.pt"))
    assert both["config"]["model"]["decoder_heads"] == 3
    assert all(torch.equal(both["model"][key], value) for key, value in heads["model"].items())
    # and back: the decoders of a model without decoder heads drop them
    assert recipe.main(["with-decoders", str(tmp_path / "heads.pt"), str(run_dir / "last.pt"),
                        "--out", str(tmp_path / "plain.pt")]) == 0
    capsys.readouterr()
    plain = load_checkpoint(tmp_path / "plain.pt")
    assert plain["config"]["model"]["decoder_heads"] == 0
    assert not [k for k in plain["model"] if k.startswith("decoder_bridge.")]
    BridgeEncoder(tmp_path / "plain.pt")  # and it loads


def test_add_decoder_heads_refuses_no_heads_a_second_time_and_no_decoders(toy_run, tmp_path, capsys):
    from bridgeembed import BridgeEncoder

    run_dir, _ = toy_run
    out = tmp_path / "no.pt"
    assert recipe.main(["add-decoder-heads", str(run_dir / "last.pt"), "--decoder-heads", "0", "--out", str(out)]) == 2
    assert "--decoder-heads 0: give at least 1 decoder-only head" in one_line_error(capsys)
    assert recipe.main(["add-decoder-heads", str(run_dir / "last.pt"), "--decoder-heads", "2", "--out",
                        str(tmp_path / "two.pt")]) == 0
    capsys.readouterr()
    assert recipe.main(["add-decoder-heads", str(tmp_path / "two.pt"), "--decoder-heads", "2", "--out", str(out)]) == 2
    assert "the model already has 2 decoder-only heads" in one_line_error(capsys)
    BridgeEncoder(run_dir / "best.pt").save(tmp_path / "encoder.pt")
    assert recipe.main(["add-decoder-heads", str(tmp_path / "encoder.pt"), "--decoder-heads", "2", "--out", str(out)]) == 2
    assert "the model has no decoders" in one_line_error(capsys)
    assert not out.exists()


def _add_decoder_states(run_dir, out, capsys) -> None:
    assert recipe.main(["add-decoder-states", str(run_dir / "last.pt"), "--out", str(out)]) == 0
    assert "attending over the encoder states too (train with model.decoder_states=true)" in capsys.readouterr().out


def test_add_decoder_states_translates_as_before_and_leaves_the_vectors_alone(toy_run, tmp_path, capsys):
    import torch

    from bridgeembed.checkpoint import build_from_payload, load_checkpoint
    from bridgeembed.config import Config
    from bridgeembed.training.setup import load_init
    from bridgeembed.translation.search import beam_search

    run_dir, _ = toy_run
    before = load_checkpoint(run_dir / "last.pt")
    _add_decoder_states(run_dir, tmp_path / "states.pt", capsys)
    config = Config.from_dict(before["config"])
    config.model.decoder_states = True
    payload = load_init(tmp_path / "states.pt", config)  # what train.init_from reads
    kept = [key for key in before["model"] if not key.endswith("attn_out.weight")]
    assert all(torch.equal(payload["model"][key], before["model"][key]) for key in kept)
    states, model = build_from_payload(payload)[0].eval(), build_from_payload(before)[0].eval()
    lang, other, src, lengths, tgt = _translation_batch(model)
    with torch.no_grad():
        assert torch.allclose(states(src, lengths, lang, tgt, other).logits, model(src, lengths, lang, tgt, other).logits,
                              atol=1e-6)
        assert beam_search(states, src, lengths, lang, other, beam=2) == beam_search(model, src, lengths, lang, other,
                                                                                      beam=2)
        assert torch.equal(states.encode(src, lengths, lang).memory, model.encode(src, lengths, lang).memory)
    decoder = states.train().decoders[other]  # the new columns of W_c learn first, then the scores through them
    states(src, lengths, lang, tgt, other).logits.logsumexp(-1).sum().backward()
    new = decoder.attn_out.weight.grad[:, -model.dim:]
    assert (decoder.attn_out.weight[:, -model.dim:] == 0).all() and new.abs().sum() > 0
    assert decoder.states_score.weight.grad.abs().sum() == 0
    with torch.no_grad():
        decoder.attn_out.weight[:, -model.dim:] = 0.1
    decoder.zero_grad()
    states(src, lengths, lang, tgt, other).logits.logsumexp(-1).sum().backward()
    assert decoder.states_score.weight.grad.abs().sum() > 0


def test_attention_over_the_encoder_states_ignores_padding(toy_run, tmp_path, capsys):
    import torch

    from bridgeembed.checkpoint import build_from_payload, load_checkpoint
    from bridgeembed.translation.search import beam_search

    run_dir, _ = toy_run
    _add_decoder_states(run_dir, tmp_path / "states.pt", capsys)
    model = build_from_payload(load_checkpoint(tmp_path / "states.pt"))[0].eval()
    lang, other = list(model.decoders)[:2]
    with torch.no_grad():
        for decoder in model.decoders.values():  # give the attention over the states a say
            decoder.attn_out.weight[:, -model.dim:] = torch.randn(decoder.attn_out.weight.shape[0], model.dim)
    generator = torch.Generator().manual_seed(1)
    short = torch.randint(4, model.encoders[lang].embed.num_embeddings, (1, 3), generator=generator)
    padded = torch.cat([short, torch.zeros(1, 4, dtype=torch.long)], dim=1)  # PAD is 0
    tgt = torch.randint(4, model.decoders[other].embed.num_embeddings, (1, 5), generator=generator)
    with torch.no_grad():
        alone = model(short, torch.tensor([3]), lang, tgt, other).logits
        in_batch = model(padded, torch.tensor([3]), lang, tgt, other).logits
        assert torch.allclose(alone, in_batch, atol=1e-5)
        assert beam_search(model, padded, torch.tensor([3]), lang, other, beam=3) == \
            beam_search(model, short, torch.tensor([3]), lang, other, beam=3)


def test_decoder_states_go_with_the_decoders_and_refuse_a_second_time_widening_and_no_decoders(toy_run, tmp_path,
                                                                                                 capsys):
    import torch

    from bridgeembed import BridgeEncoder
    from bridgeembed.checkpoint import load_checkpoint

    run_dir, _ = toy_run
    _add_decoder_states(run_dir, tmp_path / "states.pt", capsys)
    BridgeEncoder(tmp_path / "states.pt").save(tmp_path / "encoder.pt")
    assert recipe.main(["with-decoders", str(tmp_path / "encoder.pt"), str(tmp_path / "states.pt"),
                        "--out", str(tmp_path / "both.pt")]) == 0
    capsys.readouterr()
    both, states = (load_checkpoint(tmp_path / name) for name in ("both.pt", "states.pt"))
    assert both["config"]["model"]["decoder_states"] is True
    assert all(torch.equal(both["model"][key], value) for key, value in states["model"].items())
    assert recipe.main(["with-decoders", str(tmp_path / "states.pt"), str(run_dir / "last.pt"),
                        "--out", str(tmp_path / "plain.pt")]) == 0
    capsys.readouterr()
    plain = load_checkpoint(tmp_path / "plain.pt")
    assert plain["config"]["model"]["decoder_states"] is False
    assert not [k for k in plain["model"] if "states_score" in k]
    BridgeEncoder(tmp_path / "plain.pt")  # and it loads
    out = tmp_path / "no.pt"
    assert recipe.main(["add-decoder-states", str(tmp_path / "states.pt"), "--out", str(out)]) == 2
    assert "already attend over the encoder states" in one_line_error(capsys)
    assert recipe.main(["widen-decoders", str(tmp_path / "states.pt"), "--dec-hidden", "64", "--out", str(out)]) == 2
    assert "widen before add-decoder-states" in one_line_error(capsys)
    assert recipe.main(["add-decoder-states", str(tmp_path / "encoder.pt"), "--out", str(out)]) == 2
    assert "the model has no decoders" in one_line_error(capsys)
    assert not out.exists()
