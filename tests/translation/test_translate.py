"""bridgeembed-translate: text in, text out; --evaluate writes BLEU of every direction."""

import json

import pytest

from bridgeembed.cli.translate import main
from tests.helpers import one_line_error


def test_translate_file(toy_run, toy_corpus, tmp_path):
    out = tmp_path / "hyp.y"
    code = main(["--model", str(toy_run[0] / "best.pt"), "--src", "x", "--tgt", "y",
                 "--input", str(toy_corpus / "test.x"), "--output", str(out), "--beam", "3"])
    assert code == 0
    hyps = out.read_text().splitlines()
    refs = (toy_corpus / "test.y").read_text().splitlines()
    assert len(hyps) == len(refs)
    assert sum(h == r for h, r in zip(hyps, refs)) > 0.8 * len(refs)


def test_evaluate_every_direction(toy_run, toy_corpus, tmp_path, capsys):
    code = main(["--model", str(toy_run[0] / "best.pt"), "--evaluate", "--corpus", str(toy_corpus),
                 "--out", str(tmp_path / "eval"), "--beam", "2"])
    assert code == 0
    results = json.loads((tmp_path / "eval" / "bleu.json").read_text())
    assert set(results["directions"]) == {"x-y", "y-x", "x-x", "y-y"}
    assert all(d["bleu"] > 90 and d["trained"] for d in results["directions"].values())
    assert results["split"] == "test" and "case:lc" in results["signature"]
    buckets = results["directions"]["x-y"]["by_length"]
    assert sum(b["sentences"] for b in buckets.values()) == 100
    assert (tmp_path / "eval" / "bleu_by_length.png").stat().st_size > 1000
    assert "| x |" in capsys.readouterr().out
    assert (tmp_path / "eval" / "translations" / "test.x-y.y").exists()


def test_unknown_language_lists_known_ones(toy_run, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("apple\n")
    code = main(["--model", str(toy_run[0] / "best.pt"), "--src", "fr", "--tgt", "y", "--input", str(tmp_path / "in.txt")])
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown language 'fr'" in err and "x, y" in err


def test_missing_model_is_one_line(tmp_path, capsys):
    assert main(["--model", str(tmp_path / "nope.pt"), "--src", "x", "--tgt", "y"]) == 2
    assert "no model" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--beam", "0"], "--beam must be a positive integer, got 0"),
    (["--batch-size", "0"], "--batch-size must be a positive integer, got 0"),
    (["--batch-size", "-1"], "--batch-size must be a positive integer, got -1"),
    (["--threads", "-2"], "--threads must be a positive integer, got -2"),
    (["--out", "/dev/null/x"], "--out /dev/null/x: /dev/null is a file, not a folder"),
    (["--device", "cuda:x"], "device 'cuda:x' is not a torch device"),
])
def test_bad_options_are_one_line_before_any_work(toy_run, tmp_path, monkeypatch, capsys, argv, message):
    import bridgeembed.checkpoint

    (tmp_path / "in.txt").write_text("apple\n")
    monkeypatch.setattr(bridgeembed.checkpoint, "load_model", lambda *a: pytest.fail("loaded before the check"))
    assert main(["--model", str(toy_run[0] / "best.pt"), "--src", "x", "--tgt", "y",
                 "--input", str(tmp_path / "in.txt"), *argv]) == 2
    assert message in one_line_error(capsys)


def test_model_defaults_to_the_shipped_one_and_threads_apply(toy_run, tmp_path, capsys):
    import torch

    from bridgeembed.cli.translate import parse_args

    assert parse_args(["--src", "de", "--tgt", "en"]).model == "general-m2m"
    (tmp_path / "in.txt").write_text("apple banana\n")
    before = torch.get_num_threads()
    try:
        assert main(["--model", str(toy_run[0] / "best.pt"), "--src", "x", "--tgt", "y", "--threads", "1",
                     "--input", str(tmp_path / "in.txt"), "--beam", "1"]) == 0
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 1 and out.startswith("banana apple")


def test_library_translate_rejects_bad_beam_and_text(toy_run):
    from bridgeembed.checkpoint import load_model
    from bridgeembed.translation.translator import Translator

    model, tokenizers, config = load_model(toy_run[0] / "best.pt")
    translator = Translator(model, tokenizers, config.tokenizer.max_len)
    with pytest.raises(ValueError, match="beam must be a positive integer, got 0"):
        translator.translate(["apple"], "x", "y", beam=0)
    with pytest.raises(ValueError, match="batch_size must be a positive integer, got -1"):
        translator.translate(["apple"], "x", "y", batch_size=-1)
    with pytest.raises(ValueError, match="sentence 1 is not valid Unicode"):
        translator.translate(["apple", "kite \udce9"], "x", "y")


def test_blank_lines_stay_blank_and_a_huge_beam_is_refused(toy_run):
    """Issue 31: a blank line was translated (into "asleep." and the like), and --beam 100000 ran out of memory."""
    from bridgeembed.checkpoint import load_model
    from bridgeembed.translation.translator import Translator

    model, tokenizers, config = load_model(toy_run[0] / "best.pt")
    translator = Translator(model, tokenizers, config.tokenizer.max_len)
    alone = translator.translate(["apple banana", "kite"], "x", "y", batch_size=1)
    assert translator.translate(["", "apple banana", "  ", "kite", "\t"], "x", "y", batch_size=1) == \
        ["", alone[0], "", alone[1], ""]
    assert translator.translate(["", " "], "x", "y") == ["", ""]
    with pytest.raises(ValueError, match="beam 100000 is too large: give at most 100"):
        translator.translate(["apple"], "x", "y", beam=100000)


def test_a_model_without_decoders_says_so(toy_run):
    """Issue 32: an encoder-only export asked to translate said that "the model (decoders) knows no languages"."""
    import torch

    from bridgeembed.checkpoint import load_model
    from bridgeembed.errors import ConfigError
    from bridgeembed.translation.translator import Translator

    model, tokenizers, config = load_model(toy_run[0] / "best.pt")
    model.decoders = torch.nn.ModuleDict()  # what `bridgeembed-export --no-decoders` leaves
    translator = Translator(model, tokenizers, config.tokenizer.max_len)
    with pytest.raises(ConfigError, match=r"^this model has no decoders and cannot translate: it is an encoder "
                                          r"only, as BridgeEncoder.save_pretrained \(or save\) and "
                                          r"bridgeembed-export --no-decoders write them; translate with the model "
                                          r"it was saved from, or one that has decoders \(the shipped "
                                          r"general-m2m\)$"):
        translator.translate(["apple"], "x", "y")


def test_a_line_empty_after_normalisation_stays_empty(shipped_model, tmp_path, monkeypatch, capsys):
    """Issue 40: a line of only U+200B (zero-width space) became "asleep.": its ids are just EOS, as "" (which
    encode gives the same vector as ""), so it translates to an empty line."""
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("A dog runs.\n\u200b\n\u200b \u200b\n".encode())))
    assert main(["--src", "en", "--tgt", "de", "--device", "cpu"]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert lines[0].strip() and lines[1:3] == ["", ""], lines


def test_input_past_max_len_is_cut_with_one_warning_as_encode_does(shipped_model):
    """Issue 40: translate cut input beyond the model's 50 pieces without a word; encode warned."""
    import warnings

    from bridgeembed.checkpoint import load_model
    from bridgeembed.translation.translator import Translator

    model, tokenizers, config = load_model(shipped_model)
    translator = Translator(model, tokenizers, config.tokenizer.max_len)
    long = " ".join(["A dog runs on the green grass."] * 20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        translator.translate([long, "A dog.", long], "en", "de", beam=1)
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert messages == [f"2 of 3 sentences are longer than the model's maximum of {config.tokenizer.max_len} "
                        f"subword tokens and were truncated"], messages


def test_from_pretrained_loads_as_the_command_does_and_resolves_its_device_as_the_encoder(toy_run, monkeypatch):
    """Issue 48: bridgeembed-translate assembled the device, quantization and model itself; Translator.from_pretrained
    does it, by the encoder's own rule (model.quantize.target_device), every setting checked before the model loads."""
    import torch

    from bridgeembed import devices
    from bridgeembed.checkpoint import load_model
    from bridgeembed.errors import ConfigError
    from bridgeembed.translation.translator import Translator

    path = toy_run[0] / "best.pt"
    model, tokenizers, config = load_model(path)
    by_hand = Translator(model.to("cpu"), tokenizers, config.tokenizer.max_len)
    loaded = Translator.from_pretrained(path, device="cpu")
    assert loaded.max_len == by_hand.max_len and loaded.config.to_dict() == config.to_dict()
    assert loaded.device == torch.device("cpu")
    text = ["apple banana", "kite"]
    assert loaded.translate(text, "x", "y", beam=2) == by_hand.translate(text, "x", "y", beam=2)  # the same model
    int8 = Translator.from_pretrained(path, quantize="int8")  # None under quantize: the CPU
    assert int8.device == torch.device("cpu") and len(int8.translate(text, "x", "y", beam=1)) == 2
    with pytest.raises(ConfigError, match="quantize must be None"):
        Translator.from_pretrained(path, quantize="int4")
    monkeypatch.setattr(devices, "resolve_device", lambda name=None: torch.device(name or "cpu"))  # as with a GPU
    monkeypatch.setattr("bridgeembed.checkpoint.load_model", lambda *a, **k: pytest.fail("loaded before the check"))
    with pytest.raises(ConfigError, match=r"quantize='int8' runs on the CPU only"):
        Translator.from_pretrained(path, device="cuda", quantize="int8")
