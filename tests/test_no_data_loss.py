"""Issue 31, losing data: an output that is also an input, and a model saved into a folder that is not a
model's. Each case here replaced or mixed a user's file before; now it is refused before any work, and
the file is unchanged."""

import json
import os
from pathlib import Path

import pytest

from bridgeembed.errors import ConfigError

pytestmark = pytest.mark.usefixtures("shipped_model")
TEXT = "Ein Hund rennt.\nEine Katze schläft.\n"


def run(command: str, argv: list) -> int:
    from bridgeembed.cli import encode, export, mine, translate

    mains = {"encode": encode.main, "translate": translate.main, "mine": mine.main, "export": export.main}
    return mains[command](argv)


@pytest.fixture
def text(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "de.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def same_files(tmp_path: Path) -> list:
    """(input, output) naming one file, de.txt: by the same name, through a symbolic link to it (an output that
    is a link is refused anyway), a hard link, or another spelling."""
    (tmp_path / "link.txt").symlink_to("de.txt")
    os.link(tmp_path / "de.txt", tmp_path / "hard.txt")
    (tmp_path / "x").mkdir()
    return [("de.txt", "de.txt"), ("link.txt", "de.txt"), ("de.txt", "hard.txt"), ("de.txt", "x/../de.txt")]


@pytest.mark.parametrize("side", ["--src", "--tgt"])
def test_mine_never_writes_the_pairs_over_an_input(text, tmp_path, side, capsys):
    (tmp_path / "en.txt").write_text("A dog runs.\nA cat sleeps.\n", encoding="utf-8")
    for given, out in same_files(tmp_path):
        sides = {"--src": ["--src", given, "--src-lang", "de", "--tgt", "en.txt", "--tgt-lang", "en"],
                 "--tgt": ["--src", "en.txt", "--src-lang", "en", "--tgt", given, "--tgt-lang", "de"]}
        code = run("mine", [*sides[side], "--out", out])
        err = capsys.readouterr().err
        assert code == 2, (given, out)
        assert err == f"error: --out {out} is the same file as {side} {given}: writing the output would replace " \
                      f"the input; give another --out\n"
        assert text.read_text(encoding="utf-8") == TEXT


def test_mine_never_writes_over_the_text_a_shard_folder_was_encoded_from(text, tmp_path, capsys):
    assert run("encode", ["--lang", "de", "--in", "de.txt", "--shards", "shards", "--quiet"]) == 0
    (tmp_path / "en.txt").write_text("A dog runs.\nA cat sleeps.\n", encoding="utf-8")
    code = run("mine", ["--src", "shards", "--tgt", "en.txt", "--tgt-lang", "en", "--out", "de.txt"])
    assert code == 2 and "is the same file as the text of --src shards" in capsys.readouterr().err
    assert text.read_text(encoding="utf-8") == TEXT


def test_translate_never_writes_over_its_input(text, tmp_path, capsys):
    for given, out in same_files(tmp_path):
        code = run("translate", ["--src", "de", "--tgt", "en", "--in", given, "--out", out])
        assert code == 2 and f"is the same file as --in {given}:" in capsys.readouterr().err, (given, out)
        assert text.read_text(encoding="utf-8") == TEXT


def test_encode_never_writes_over_its_input(text, tmp_path, capsys):
    (tmp_path / "de.npy").write_text(TEXT, encoding="utf-8")  # a text file named like the output
    for out in ("de.npy", "de"):  # "de" is written as de.npy
        code = run("encode", ["--lang", "de", "--in", "de.npy", "--out", out])
        assert code == 2 and "is the same file as --in de.npy" in capsys.readouterr().err, out
        assert (tmp_path / "de.npy").read_text(encoding="utf-8") == TEXT


def test_export_to_an_empty_path_never_writes_into_the_working_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.json").write_text('{"mine": 1}\n')
    assert run("export", ["multi30k-m2m", ""]) == 2
    assert capsys.readouterr().err == "error: OUT '' is an empty path: give a folder's name (or a file name " \
                                      "ending in .pt)\n"
    assert [p.name for p in tmp_path.iterdir()] == ["config.json"]
    assert (tmp_path / "config.json").read_text() == '{"mine": 1}\n'


@pytest.mark.parametrize("foreign", ["config.json", "model.safetensors", "notes.txt"])
def test_export_never_writes_into_a_folder_that_is_not_a_model_folder(tmp_path, monkeypatch, foreign, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / foreign).write_text("the user's own\n")
    assert run("export", ["multi30k-m2m", "out"]) == 2
    err = capsys.readouterr().err
    assert err == f"error: OUT out is a folder holding files that are not a bridgeembed model's ({foreign}): " \
                  f"saving there would overwrite or mix with them; give a new or empty folder\n"
    assert [p.name for p in (tmp_path / "out").iterdir()] == [foreign]
    assert (tmp_path / "out" / foreign).read_text() == "the user's own\n"


def test_save_and_save_pretrained_refuse_an_empty_path_and_a_foreign_folder(tmp_path, monkeypatch):
    from bridgeembed import BridgeEncoder

    encoder = BridgeEncoder(device="cpu")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.json").write_text('{"mine": 1}\n')
    with pytest.raises(ConfigError, match="path '' is an empty path"):
        encoder.save("")
    with pytest.raises(ConfigError, match="folder '' is an empty path"):
        encoder.save_pretrained("")
    with pytest.raises(ConfigError, match=r"folder \. is a folder holding files that are not a bridgeembed model's "
                                          r"\(config.json\)"):
        encoder.save_pretrained(".")
    assert [p.name for p in tmp_path.iterdir()] == ["config.json"]
    assert (tmp_path / "config.json").read_text() == '{"mine": 1}\n'


def test_export_over_another_models_folder_keeps_none_of_its_files(tmp_path, monkeypatch):
    from bridgeembed.checkpoint import load_checkpoint, save_folder
    from bridgeembed.pretrained import DEFAULT_MODEL, resolve

    monkeypatch.chdir(tmp_path)
    shipped = load_checkpoint(resolve(DEFAULT_MODEL))
    other = {**shipped, "tokenizers": {**shipped["tokenizers"], "xx": {**shipped["tokenizers"]["en"], "lang": "xx"}}}
    save_folder(other, tmp_path / "out", card="the other model's card\n")
    assert (tmp_path / "out" / "sentencepiece.xx.model").is_file()
    assert run("export", [DEFAULT_MODEL, "out", "--no-decoders"]) == 0
    names = {p.name for p in (tmp_path / "out").iterdir()}
    assert names == {"config.json", "model.safetensors", "README.md",
                     *(f"sentencepiece.{lang}.model" for lang in ("en", "de", "fr", "cs"))}
    card = (tmp_path / "out" / "README.md").read_text()
    assert card.startswith("---\nlibrary_name: bridgeembed\n") and "- xx" not in card
    assert set(json.loads((tmp_path / "out" / "config.json").read_text())["tokenizers"]) == {"en", "de", "fr", "cs"}
    load_checkpoint(tmp_path / "out")  # whole, by its checksums


def test_an_unfinished_save_can_be_saved_again(tmp_path):
    from bridgeembed import BridgeEncoder

    encoder = BridgeEncoder(device="cpu")
    encoder.save_pretrained(tmp_path / "m")
    (tmp_path / "m" / "config.json").unlink()  # a save killed before its last file
    encoder.save_pretrained(tmp_path / "m")
    BridgeEncoder(tmp_path / "m")
