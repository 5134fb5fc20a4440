"""Weights stored in int8 (bridgeembed/storage.py, `bridgeembed-export --int8`, `save_pretrained(int8=True)`):
every matrix but the encoders' recurrent ones in int8, every weight within half a step of its group's scale,
tied weights kept once, a loaded model an ordinary float32 one, and a damaged or edited file refused with the
weight named."""

import json

import pytest
import torch
from safetensors.torch import load_file, save_file

from bridgeembed import BridgeEncoder
from bridgeembed.checkpoint import load_checkpoint, load_model
from bridgeembed.cli.export import main as export_main
from bridgeembed.errors import CheckpointError, ConfigError
from bridgeembed.storage import SCALE, dequantize, quantize


def test_every_weight_comes_back_within_half_a_step_of_its_group():
    torch.manual_seed(0)
    matrix = torch.randn(5, 150) * torch.logspace(-3, 1, 150)  # groups of very different sizes in one row
    matrix[2] = 0.0
    state = {"m": matrix, "tied": matrix, "bias": torch.randn(7), "steps": torch.tensor(3)}
    stored, info = quantize(state, group=64, kept=())
    assert info == {"group": 64, "names": ["m", "tied"]}
    assert stored["m"].dtype == torch.int8 and stored["m"].shape == (5, 150)
    assert stored["m" + SCALE].shape == (5, 3) and stored["m" + SCALE].dtype == torch.float16
    assert stored["tied"] is stored["m"] and stored["bias"].dtype == torch.float16 and stored["steps"].item() == 3
    back = dequantize(stored, info, "here")
    step = stored["m" + SCALE].float().repeat_interleave(64, dim=1)[:, :150]
    assert ((back["m"] - matrix).abs() <= step / 2 + 1e-7).all()
    assert torch.equal(back["m"][2], torch.zeros(150)) and back["tied"] is back["m"]
    # the small weights of a row keep their group's precision: far finer than one scale for the whole row
    row_step = matrix.abs().amax(dim=1) / 127
    assert (back["m"][:, :64] - matrix[:, :64]).abs().max() < row_step[row_step > 0].min() / 20


def test_an_int8_export_keeps_the_encoders_recurrent_weights_and_encodes_almost_the_same(toy_run, tmp_path):
    checkpoint = toy_run[0] / "best.pt"
    for flag in ("", "--half", "--int8"):
        assert export_main([str(checkpoint), str(tmp_path / f"m{flag}"), *([flag] if flag else [])]) == 0
    sizes = {flag: (tmp_path / f"m{flag}" / "model.safetensors").stat().st_size for flag in ("", "--half", "--int8")}
    assert sizes["--int8"] < 0.8 * sizes["--half"] and sizes["--half"] < 0.55 * sizes[""]
    stored = load_file(tmp_path / "m--int8" / "model.safetensors")
    matrices = {name: value.dtype for name, value in stored.items() if value.dim() == 2 and not name.endswith(SCALE)}
    assert {dtype for name, dtype in matrices.items() if ".rnn." in name and name.startswith("encoders.")} == \
        {torch.float16}  # their rounding would compound over a sentence
    assert {dtype for name, dtype in matrices.items() if not name.startswith("encoders.x.rnn.")
            and not name.startswith("encoders.y.rnn.")} == {torch.int8}
    meta = json.loads((tmp_path / "m--int8" / "config.json").read_text())
    assert meta["version"] == 2 and meta["int8"]["group"] == 64 and meta["tied"]  # the decoders' tie, kept once
    full, _, _ = load_model(checkpoint)
    small, _, _ = load_model(tmp_path / "m--int8")
    assert all(p.dtype == torch.float32 for p in small.parameters())
    assert small.decoders.keys() == full.decoders.keys()
    sentences = ["a dog runs", "two men play music"]
    encoder = BridgeEncoder(checkpoint)
    vectors, int8 = encoder.encode(sentences, "x"), BridgeEncoder(tmp_path / "m--int8").encode(sentences, "x")
    cosine = (vectors * int8).sum(1) / ((vectors ** 2).sum(1) * (int8 ** 2).sum(1)) ** 0.5
    assert (cosine > 0.999).all() and not (vectors == int8).all()
    encoder.save(tmp_path / "enc.pt", int8=True)  # a file too, and the encoder-only export
    payload = load_checkpoint(tmp_path / "enc.pt")
    assert "int8" not in payload and not any(name.endswith(SCALE) for name in payload["model"])
    assert {v.dtype for v in payload["model"].values() if v.dim() == 2} == {torch.float32, torch.float16}  # no int8
    with pytest.raises(ConfigError, match="half and int8 are two ways to store the weights: choose one"):
        encoder.save(tmp_path / "both.pt", half=True, int8=True)
    with pytest.raises(TypeError, match="int8 must be True or False, got 'yes'"):
        encoder.save(tmp_path / "yes.pt", int8="yes")
    with pytest.raises(SystemExit):
        export_main([str(checkpoint), str(tmp_path / "both"), "--half", "--int8"])


def test_a_damaged_or_edited_int8_folder_names_the_weight(toy_run, tmp_path):
    folder = tmp_path / "m"
    assert export_main([str(toy_run[0] / "best.pt"), str(folder), "--int8"]) == 0
    meta = json.loads((folder / "config.json").read_text())
    name = meta["int8"]["names"][0]

    def edited(edit_state=None, edit_meta=None):
        state = load_file(folder / "model.safetensors")
        copy = tmp_path / "copy.pt"
        payload = load_checkpoint(folder)  # a .pt payload built from the folder's bytes, then edited
        payload = {**payload, "model": {**state}, "int8": json.loads(json.dumps(meta["int8"])), "version": 2}
        for alias, source in meta["tied"].items():
            payload["model"][alias] = payload["model"][source]
        if edit_state:
            edit_state(payload["model"])
        if edit_meta:
            edit_meta(payload)
        torch.save(payload, copy)
        return copy

    assert load_checkpoint(edited())  # the unedited copy loads
    with pytest.raises(CheckpointError, match=rf"the int8 weight {name} lacks its scales {name}\.int8_scale"):
        load_checkpoint(edited(lambda state: state.pop(name + SCALE)))
    with pytest.raises(CheckpointError, match=rf"the int8 weight {name} lacks its scales"):
        load_checkpoint(edited(lambda state: state.__setitem__(name, state[name].float())))
    with pytest.raises(CheckpointError, match=r"int8 must name the int8 weights and their group size, got \{'group': 0"):
        load_checkpoint(edited(edit_meta=lambda payload: payload["int8"].__setitem__("group", 0)))
    with pytest.raises(CheckpointError, match=rf"{name}\.int8_scale is the scale of a weight that int8 does not name"):
        load_checkpoint(edited(edit_meta=lambda payload: payload["int8"]["names"].remove(name)))
    state = load_file(folder / "model.safetensors")  # and in the folder itself: its checksum finds any change
    state.pop(name + SCALE)
    save_file(state, folder / "model.safetensors", metadata={"format": "bridgeembed"})
    with pytest.raises(CheckpointError, match="model.safetensors is damaged: its sha256 differs"):
        load_checkpoint(folder)
