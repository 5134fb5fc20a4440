"""Checkpoints load safely, fail clearly, and round-trip exactly."""

import datetime
import pickle

import numpy as np
import pytest
import torch

from bridgeembed.checkpoint import build_from_payload, load_checkpoint, load_model, save_atomic
from bridgeembed.checkpoint_checks import meta_checksum
from bridgeembed.cli.export import main as export_main
from bridgeembed.errors import CheckpointError


@pytest.fixture(scope="module")
def checkpoint(toy_run):
    return toy_run[0] / "best.pt"


def _encode(model):
    src = torch.tensor([[5, 9, 7, 3], [6, 3, 0, 0]])
    with torch.no_grad():
        return model.encode(src, torch.tensor([4, 2]), "x").memory


def test_truncated_and_garbage_files(checkpoint, tmp_path):
    data = checkpoint.read_bytes()
    (tmp_path / "cut.pt").write_bytes(data[: len(data) // 2])
    (tmp_path / "junk.pt").write_bytes(b"this is not a checkpoint" * 100)
    for name in ("cut.pt", "junk.pt"):
        with pytest.raises(CheckpointError, match="not a readable checkpoint"):
            load_checkpoint(tmp_path / name)
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        load_checkpoint(tmp_path / "absent.pt")


def test_foreign_and_future_files(checkpoint, tmp_path):
    torch.save({"state_dict": {}}, tmp_path / "foreign.pt")
    with pytest.raises(CheckpointError, match="not a bridgeembed checkpoint"):
        load_checkpoint(tmp_path / "foreign.pt")
    payload = load_checkpoint(checkpoint)
    torch.save({**payload, "version": 99}, tmp_path / "future.pt")
    with pytest.raises(CheckpointError, match="version 99"):
        load_checkpoint(tmp_path / "future.pt")


class Exploit:
    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def test_loading_never_executes_code(tmp_path):
    marker = tmp_path / "pwned"
    Exploit.marker = marker
    with open(tmp_path / "evil.pt", "wb") as handle:
        pickle.dump({"format": "bridgeembed", "x": Exploit()}, handle)
    torch.save({"format": "bridgeembed", "x": Exploit()}, tmp_path / "evil2.pt")
    for name in ("evil.pt", "evil2.pt"):
        with pytest.raises(CheckpointError):
            load_checkpoint(tmp_path / name)
    assert not marker.exists()


def test_incompatible_weights_are_named(checkpoint, tmp_path):
    payload = load_checkpoint(checkpoint)
    payload["config"]["model"]["heads"] = 3  # the stored bridge has 8 heads
    with pytest.raises(CheckpointError, match="does not fit"):
        build_from_payload(payload, "edited")


def test_save_load_and_export_round_trip(checkpoint, tmp_path):
    model, tokenizers, config = load_model(checkpoint)
    save_atomic(load_checkpoint(checkpoint), tmp_path / "copy.pt")
    again, _, _ = load_model(tmp_path / "copy.pt")
    assert torch.equal(_encode(model), _encode(again))
    assert export_main([str(checkpoint), str(tmp_path / "enc.pt"), "--no-decoders"]) == 0
    encoder_only, tok2, _ = load_model(tmp_path / "enc.pt")
    assert len(encoder_only.decoders) == 0 and tok2["x"].spm_model == tokenizers["x"].spm_model
    assert torch.equal(_encode(model), _encode(encoder_only))
    assert export_main([str(checkpoint), str(tmp_path / "half.pt"), "--half"]) == 0
    half, _, _ = load_model(tmp_path / "half.pt")
    torch.testing.assert_close(_encode(model), _encode(half), atol=5e-3, rtol=0)
    weights = {name: sum(t.numel() * t.element_size() for t in load_checkpoint(tmp_path / name)["model"].values())
               for name in ("copy.pt", "half.pt")}
    assert weights["half.pt"] == weights["copy.pt"] / 2


def test_unreadable_files_never_suggest_weights_only_false(tmp_path):
    """torch's advice to retry with weights_only=False would run the file's code: never pass it on."""
    (tmp_path / "random.pt").write_bytes(np.random.default_rng(0).bytes(5000))
    torch.save({"format": "bridgeembed", "when": datetime.datetime(2020, 1, 1)}, tmp_path / "object.pt")
    for name, reason in (("random.pt", "Unsupported operand"), ("object.pt", "datetime.datetime")):
        with pytest.raises(CheckpointError) as err:
            load_checkpoint(tmp_path / name)
        message = str(err.value)
        assert "weights_only" not in message and "trusted source" not in message
        assert reason in message and str(tmp_path / name) in message and "\n" not in message


def test_state_dict_mismatch_keeps_the_detail(checkpoint):
    payload = load_checkpoint(checkpoint)
    payload["config"]["model"]["heads"] = 3  # the stored bridge has 8 heads
    with pytest.raises(CheckpointError) as err:
        build_from_payload(payload, "edited")
    assert "size mismatch for bridge." in str(err.value) and "torch.Size([8" in str(err.value)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused_at_load(checkpoint, tmp_path, bad):
    payload = load_checkpoint(checkpoint)
    name = next(k for k, v in payload["model"].items() if k.startswith("bridge.") and v.is_floating_point())
    payload["model"][name] = payload["model"][name].clone()
    payload["model"][name].view(-1)[3] = bad
    torch.save(payload, tmp_path / "diverged.pt")
    with pytest.raises(CheckpointError, match=f"NaN or Inf weights in {name}"):
        load_model(tmp_path / "diverged.pt")


def test_a_flipped_bit_inside_a_tensor_is_found_at_load(checkpoint, tmp_path):
    """Issue 19: torch.load never checks the archive's CRC-32s; a bit flip in a weight loaded silently."""
    import zipfile

    data = bytearray(checkpoint.read_bytes())
    with zipfile.ZipFile(checkpoint) as archive:
        member = max(archive.infolist(), key=lambda m: m.file_size)  # the largest tensor
    start = member.header_offset + 30 + len(member.filename.encode()) + len(member.extra)
    data[start + member.file_size // 2] ^= 0x10
    (tmp_path / "flipped.pt").write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=f"flipped.pt is damaged: {member.filename} fails its CRC-32 check"):
        load_checkpoint(tmp_path / "flipped.pt")


@pytest.mark.parametrize("edit, message", [
    (lambda p: p.update(tokenizers={}), "has no tokenizers"),
    (lambda p: p["tokenizers"]["x"].update(spm_model=None), "an empty tokenizer for 'x'"),
    (lambda p: p["tokenizers"]["x"].update(lang="y"), "the tokenizer stored for 'x' is the one of 'y'"),
    (lambda p: p.update(decoder_languages="x"), "decoder_languages must be a list of language codes"),
    (lambda p: p.update(decoder_languages=["x", "zz"]), "decoder_languages names 'zz', which has no tokenizer"),
    (lambda p: p["model"].update({k: v.to(torch.int64) for k, v in p["model"].items() if k.startswith("bridge.")}),
     "has non-float weights (torch.int64) in bridge."),
])
def test_crafted_checkpoints_are_refused(checkpoint, tmp_path, edit, message):
    payload = load_checkpoint(checkpoint)
    edit(payload)
    torch.save(payload, tmp_path / "crafted.pt")
    with pytest.raises(CheckpointError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_model(tmp_path / "crafted.pt")


@pytest.mark.parametrize("edit, message", [
    (lambda m: m["tokenizers"]["en"].update(lowercase="false"),
     r"is incompatible: the tokenizer of 'en': lowercase must be true or false, got 'false'"),
    (lambda m: m["tokenizers"]["de"].update(moses=None),
     r"is incompatible: the tokenizer of 'de': moses must be true or false, got None"),
    (lambda m: m.update(tied={"bridge.w1.weight": "bridge.w2.weight"}),
     r"tied maps 'bridge.w1.weight' to 'bridge.w2.weight', but a tie names a weight not stored"),
    (lambda m: m["tokenizers"]["de"].update(file="sentencepiece.en.model"),
     r"the tokenizer entry of 'de' names .*: tokenizers swapped or edited"),
], ids=["lowercase-str", "moses-null", "tied-over-a-stored-weight", "tokenizer-file-swapped"])
def test_edited_config_json_values_are_checked_at_load(shipped_model, tmp_path, edit, message):
    """Issue 31: config.json was trusted beyond its checksums: "lowercase": "false" read as true, "moses": null
    changed the vectors, a tie replaced a stored tensor, another language's tokenizer was loaded."""
    import json
    import shutil

    from bridgeembed.checkpoint import load_model

    folder = tmp_path / "m"
    shutil.copytree(shipped_model, folder)
    meta = json.loads((folder / "config.json").read_text())
    edit(meta)
    meta["checksum"] = meta_checksum(meta)  # the checksum made again too: the values are still checked one by one
    (folder / "config.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=message):
        load_model(folder)


def test_a_tokenizer_swapped_in_a_pt_file_is_found_by_its_fingerprint(shipped_model, tmp_path):
    from bridgeembed.checkpoint import make_payload

    model, tokenizers, config = load_model(shipped_model)
    payload = make_payload(model, tokenizers, config, kind="encoder")
    assert payload["tokenizers"]["de"]["sha256"] != payload["tokenizers"]["en"]["sha256"]
    payload["tokenizers"]["de"] = {**payload["tokenizers"]["de"], "spm_model": payload["tokenizers"]["en"]["spm_model"]}
    save_atomic(payload, tmp_path / "swapped.pt")
    with pytest.raises(CheckpointError, match=r"the tokenizer of 'de' is not the one recorded for it \(its sha256 "
                                              r"differs\): a tokenizer swapped with another language's"):
        load_model(tmp_path / "swapped.pt")


def _swap_files(folder, meta):
    en, de = folder / "sentencepiece.en.model", folder / "sentencepiece.de.model"
    en_bytes, de_bytes = en.read_bytes(), de.read_bytes()
    en.write_bytes(de_bytes)
    de.write_bytes(en_bytes)


def _swap_files_and_checksums(folder, meta):
    _swap_files(folder, meta)
    sums = meta["sha256"]
    sums["sentencepiece.en.model"], sums["sentencepiece.de.model"] = \
        sums["sentencepiece.de.model"], sums["sentencepiece.en.model"]
    for lang in ("en", "de"):
        del meta["tokenizers"][lang]["sha256"]


@pytest.mark.parametrize("edit, message", [
    (lambda folder, meta: meta["tokenizers"]["en"].update(lowercase=False),
     r"is incompatible: the tokenizer of 'en' has lowercase False, but the model was trained with "
     r"tokenizer.lowercase True \(its config\): one was edited$"),
    (lambda folder, meta: meta["config"]["tokenizer"].update(moses=False),
     r"is incompatible: the tokenizer of 'en' has moses True, but the model was trained with tokenizer.moses False"),
    (_swap_files, r"m/sentencepiece.en.model holds what config.json records for sentencepiece.de.model: files swapped "
                  r"or renamed; put each back under its own name$"),
    (_swap_files_and_checksums, r"m/config.json: the tokenizer entry of 'en' records no sha256, not that of "
                                r"sentencepiece.en.model \([0-9a-f]{12}\.\.\.\), as every saved folder does: tokenizers "
                                r"swapped or edited$"),
], ids=["lowercase-false", "moses-false-in-the-config", "files-swapped", "files-and-checksums-swapped"])
def test_a_changed_setting_or_swapped_tokenizer_files_are_refused(shipped_model, tmp_path, edit, message):
    """Issue 40: `"lowercase": false` or `"moses": false` loaded and changed every vector; tokenizer files swapped
    with their top-level sha256 entries, their own sha256 deleted, loaded German with the English tokenizer."""
    import json
    import shutil

    folder = tmp_path / "m"
    shutil.copytree(shipped_model, folder)
    meta = json.loads((folder / "config.json").read_text())
    edit(folder, meta)
    meta["checksum"] = meta_checksum(meta)  # the checksum made again too: the settings are still checked one by one
    (folder / "config.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=message):
        load_model(folder)


def test_a_saved_folder_records_a_checksum_of_its_config_json(checkpoint, tmp_path):
    """Every setting edited by hand in a folder saved now is found, even one edited consistently everywhere (the
    retired shipped folders were saved before config.json had a checksum: there the settings are checked against
    each other)."""
    import json

    from bridgeembed.checkpoint import save_folder

    save_folder(load_checkpoint(checkpoint), tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "config.json").read_text())
    assert all(tok["sha256"] == meta["sha256"][tok["file"]] for tok in meta["tokenizers"].values())
    load_model(tmp_path / "m")  # as saved: loads
    assert "checksum" in meta and "checksum" not in load_checkpoint(tmp_path / "m")  # of the file, not the model
    for tok in [*meta["tokenizers"].values(), meta["config"]["tokenizer"]]:
        tok["lowercase"] = not tok["lowercase"]
    (tmp_path / "m" / "config.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=r"m/config.json was edited after the model was saved: its content no "
                                              r"longer matches the checksum it records"):
        load_model(tmp_path / "m")


def test_a_folder_of_today_without_its_checksum_is_refused(checkpoint, tmp_path):
    """Issue 49, item 7: a config.json whose "checksum" key was deleted loaded its edits without a word (a flipped
    tokenizer.lowercase encoded APPLE otherwise). Only the folders saved before config.json had a checksum, the
    retired shipped models, known by their weights, load without one."""
    import json

    from bridgeembed.checkpoint import save_folder

    save_folder(load_checkpoint(checkpoint), tmp_path / "m")
    saved = json.loads((tmp_path / "m" / "config.json").read_text())
    for flip in (False, True):  # the key deleted alone, or with tokenizer.lowercase flipped everywhere
        meta = json.loads(json.dumps(saved))
        del meta["checksum"]
        for tok in [*meta["tokenizers"].values(), meta["config"]["tokenizer"]] if flip else []:
            tok["lowercase"] = not tok["lowercase"]
        (tmp_path / "m" / "config.json").write_text(json.dumps(meta))
        with pytest.raises(CheckpointError, match=r"m/config.json records no checksum of its content, as every "
                                                  r"folder saved since 2026-11-27 does: the key was deleted"):
            load_model(tmp_path / "m")


def test_tokenizers_swapped_in_a_pt_file_with_their_fingerprints_removed_are_refused(shipped_model, tmp_path):
    from bridgeembed.checkpoint import make_payload

    model, tokenizers, config = load_model(shipped_model)
    payload = make_payload(model, tokenizers, config, kind="encoder")
    en, de = payload["tokenizers"]["en"], payload["tokenizers"]["de"]
    payload["tokenizers"]["en"] = {**en, "spm_model": de["spm_model"], "sha256": None}
    payload["tokenizers"]["de"] = {**de, "spm_model": en["spm_model"], "sha256": None}
    save_atomic(payload, tmp_path / "swapped.pt")
    with pytest.raises(CheckpointError, match=r"swapped.pt: the tokenizers of 'en', 'de' record no sha256, the others "
                                              r"do: edited \(a tokenizer swapped with another language's"):
        load_model(tmp_path / "swapped.pt")


def test_a_load_failure_says_what_failed_not_a_bare_number_or_errno(tmp_path, monkeypatch):
    """Issue 49 (also seen): load errors ended in a cryptic tail, `...not a bridgeembed file): 101` (a KeyError of
    the unpickler: a pickle whose memo is damaged, its CRC made again) or `[Errno 22] Invalid argument`."""
    import zipfile

    save_atomic({"format": "bridgeembed", "model": {"w": torch.ones(3)}}, tmp_path / "ok.pt")
    with zipfile.ZipFile(tmp_path / "ok.pt") as src, zipfile.ZipFile(tmp_path / "memo.pt", "w") as out:
        for info in src.infolist():
            out.writestr(info.filename, b"\x80\x02h\x65." if info.filename.endswith("data.pkl") else
                         src.read(info.filename))
    with pytest.raises(CheckpointError, match=r"memo.pt is not a readable checkpoint \(corrupt, truncated, or not a "
                                              r"bridgeembed file\): its pickled data is damaged \(KeyError 101\)$"):
        load_checkpoint(tmp_path / "memo.pt")

    def invalid(*args, **kwargs):
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr(torch, "load", invalid)
    with pytest.raises(CheckpointError, match=r"ok.pt is not a readable checkpoint \(corrupt, truncated, or not a "
                                              r"bridgeembed file\): cannot read it: Invalid argument$"):
        load_checkpoint(tmp_path / "ok.pt")
