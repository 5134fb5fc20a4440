"""Issue 31, losing data: an output that is also an input, and a model saved into a folder that is not a
model's. Each case here replaced or mixed a user's file before; now it is refused before any work, and
the file is unchanged."""

import json
import os
from pathlib import Path

import pytest

from bridgeembed.errors import ConfigError
from tests.helpers.disk import leftovers, limited

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
    assert run("export", ["general-m2m", ""]) == 2
    assert capsys.readouterr().err == "error: OUT '' is an empty path: give a folder's name (or a file name " \
                                      "ending in .pt)\n"
    assert [p.name for p in tmp_path.iterdir()] == ["config.json"]
    assert (tmp_path / "config.json").read_text() == '{"mine": 1}\n'


@pytest.mark.parametrize("foreign", ["config.json", "model.safetensors", "notes.txt"])
def test_export_never_writes_into_a_folder_that_is_not_a_model_folder(tmp_path, monkeypatch, foreign, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / foreign).write_text("the user's own\n")
    assert run("export", ["general-m2m", "out"]) == 2
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


# --- issue 40: every input of a command, stdin's file and the model included; kills and full disks ----------------
REFUSED = "writing the output would replace the input; give another"


def shipped_as_file(path: Path) -> Path:
    """The shipped model, decoders included, as one checkpoint file (what a trainer writes)."""
    import torch

    from bridgeembed.checkpoint import load_checkpoint
    from bridgeembed.pretrained import DEFAULT_MODEL, resolve

    torch.save(load_checkpoint(resolve(DEFAULT_MODEL)), path)
    return path


@pytest.mark.parametrize("command", ["translate", "encode"])
def test_the_file_stdin_reads_is_never_an_output(command, text, tmp_path, monkeypatch, capsys):
    out = {"translate": "de.txt", "encode": "de.npy"}[command]
    (tmp_path / "de.npy").write_text(TEXT, encoding="utf-8")  # a text file named like vectors
    argv = {"translate": ["--src", "de", "--tgt", "en"], "encode": ["--lang", "de"]}[command]
    for spelling in (out, f"x/../{out}"):
        (tmp_path / "x").mkdir(exist_ok=True)
        with open(tmp_path / out, encoding="utf-8") as stdin:
            monkeypatch.setattr("sys.stdin", stdin)
            assert run(command, [*argv, "--out", spelling]) == 2
        assert capsys.readouterr().err == f"error: --out {spelling} is the file stdin reads (< {spelling}): " \
                                          f"{REFUSED} --out\n"
        assert (tmp_path / out).read_text(encoding="utf-8") == TEXT


def test_no_command_writes_over_its_model(text, tmp_path, capsys):
    import shutil

    model = shipped_as_file(tmp_path / "m.pt")
    shutil.copy(model, tmp_path / "mm.npy")  # a checkpoint named like vectors
    (tmp_path / "en.txt").write_text("A dog runs.\nA cat sleeps.\n", encoding="utf-8")
    before = model.read_bytes()
    cases = [("translate", ["--src", "de", "--tgt", "en", "--model", "m.pt", "--in", "de.txt", "--out", "m.pt"],
              f"error: --out m.pt is the same file as --model m.pt: {REFUSED} --out"),
             ("mine", ["--src", "de.txt", "--src-lang", "de", "--tgt", "en.txt", "--tgt-lang", "en", "--model", "m.pt",
                       "--out", "m.pt"], f"error: --out m.pt is the same file as --model m.pt: {REFUSED} --out"),
             ("encode", ["--lang", "en", "--model", "mm.npy", "--out", "mm.npy", "A dog."],
              f"error: --out mm.npy is the same file as --model mm.npy: {REFUSED} --out"),
             ("export", ["m.pt", "m.pt"], f"error: OUT m.pt is the same file as MODEL m.pt: {REFUSED} OUT"),
             ("export", ["m.pt", "./m.pt"], f"error: OUT m.pt is the same file as MODEL m.pt: {REFUSED} OUT")]
    for command, argv, expected in cases:
        assert run(command, argv) == 2, argv
        assert capsys.readouterr().err == expected + "\n"
        assert model.read_bytes() == before and (tmp_path / "mm.npy").read_bytes() == before
    assert run("export", ["m.pt", "folder", "--no-decoders"]) == 0
    capsys.readouterr()
    card = (tmp_path / "folder" / "README.md").read_bytes()
    for command, argv, expected in [
            ("export", ["folder", "folder"], f"error: OUT folder is the same folder as MODEL folder: {REFUSED} OUT"),
            ("export", ["folder", "folder/sub"], "error: OUT folder/sub is inside MODEL folder: writing the output "
                                                 "would change the input; give another OUT"),
            ("translate", ["--src", "de", "--tgt", "en", "--model", "folder", "--in", "de.txt", "--out",
                           "folder/README.md"], "error: --out folder/README.md is inside --model folder: writing the "
                                                "output would change the input; give another --out")]:
        assert run(command, argv) == 2, argv
        assert capsys.readouterr().err == expected + "\n"
        assert (tmp_path / "folder" / "README.md").read_bytes() == card


def test_an_encoder_is_never_saved_over_what_it_was_loaded_from(tmp_path, monkeypatch):
    from bridgeembed import BridgeEncoder
    from bridgeembed.checkpoint import load_checkpoint

    monkeypatch.chdir(tmp_path)
    model = shipped_as_file(tmp_path / "m3.pt")  # with decoders, which an encoder-only save drops
    os.link(model, tmp_path / "hard.pt")
    before = model.read_bytes()
    encoder = BridgeEncoder("m3.pt", device="cpu")
    for save, target in ((encoder.save, "m3.pt"), (encoder.save, "hard.pt"), (encoder.reinitialized(1).save, "m3.pt")):
        with pytest.raises(ConfigError, match=rf"^path {target} is the same file as the model it was loaded from "
                                              rf".*m3.pt: writing the output would replace the input; give another "
                                              rf"path$"):
            save(target)
    assert model.read_bytes() == before and load_checkpoint(model)["decoder_languages"]
    encoder.save_pretrained("folder")
    again = BridgeEncoder("folder", device="cpu")
    config = (tmp_path / "folder" / "config.json").read_bytes()
    for target in ("folder", "./folder/"):
        with pytest.raises(ConfigError, match=r"^folder .*folder/? is the same folder as the model it was loaded from"):
            again.save_pretrained(target)
    with pytest.raises(ConfigError, match=r"^path folder/m.pt is inside the model it was loaded from"):
        again.save("folder/m.pt")
    assert (tmp_path / "folder" / "config.json").read_bytes() == config


# A script that runs a command and stops it where the weights are being made durable (their fsync): argv[1] is
# the file it creates there, the rest the command's. The test then kills it.
PAUSED = """
import os, sys, time
real = os.fsync
def fsync(fd):
    try:
        name = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        name = ""
    if "model.safetensors" in name:
        open(sys.argv[1], "w").close()
        time.sleep(600)
    return real(fd)
os.fsync = fsync
from bridgeembed.cli import export
sys.exit(export.main(sys.argv[2:]))
"""


def killed_at_the_weights(argv: list, cwd: Path, sig: int) -> None:
    import subprocess
    import sys
    import time

    marker = cwd / "paused"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    child = subprocess.Popen([sys.executable, "-c", PAUSED, str(marker), *argv], cwd=cwd, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while not marker.exists():
        assert child.poll() is None, child.stderr.read().decode()
        assert time.monotonic() < deadline, "the export never reached its weights"
        time.sleep(0.05)
    child.send_signal(sig)
    child.wait(timeout=60)
    child.stderr.close()
    assert child.returncode == -sig
    marker.unlink()


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM"])
def test_a_killed_export_leaves_the_old_model_whole_and_the_next_export_clean(tmp_path, monkeypatch, sig, capsys):
    import signal

    from bridgeembed.checkpoint import load_checkpoint

    monkeypatch.chdir(tmp_path)
    assert run("export", ["general-m2m", "ex2", "--no-decoders"]) == 0  # an earlier export
    before = {p.name: p.read_bytes() for p in (tmp_path / "ex2").iterdir()}
    killed_at_the_weights(["general-m2m", "ex2"], tmp_path, getattr(signal, sig))
    assert {p.name: p.read_bytes() for p in (tmp_path / "ex2").iterdir()} == before  # config.json is not gone
    assert load_checkpoint(tmp_path / "ex2")["decoder_languages"] == []
    assert run("export", ["general-m2m", "ex2"]) == 0
    assert load_checkpoint(tmp_path / "ex2")["decoder_languages"] == ["en", "de", "fr", "cs"]
    assert leftovers(tmp_path) == []  # what the killed export left is gone too


def test_a_killed_first_export_does_not_block_the_next(tmp_path, monkeypatch, capsys):
    import signal

    from bridgeembed.checkpoint import load_checkpoint

    monkeypatch.chdir(tmp_path)
    killed_at_the_weights(["general-m2m", "ex"], tmp_path, signal.SIGKILL)
    assert run("export", ["general-m2m", "ex", "--no-decoders"]) == 0, capsys.readouterr().err
    assert load_checkpoint(tmp_path / "ex")["decoder_languages"] == []
    assert leftovers(tmp_path) == []


FULL_DISK_SAVE = """
import sys
from bridgeembed import BridgeEncoder
from bridgeembed.errors import WriteError
try:
    BridgeEncoder(device="cpu").save_pretrained(sys.argv[1])
except WriteError as err:
    print(err, file=sys.stderr)
    sys.exit(3)
"""


@pytest.mark.parametrize("how", ["export", "save_pretrained"])
def test_a_full_disk_during_an_export_keeps_the_old_model_whole(tmp_path, monkeypatch, how):
    import sys

    from bridgeembed.checkpoint import load_checkpoint

    monkeypatch.chdir(tmp_path)
    assert run("export", ["general-m2m", "mf", "--no-decoders"]) == 0  # an earlier export
    before = {p.name: p.read_bytes() for p in (tmp_path / "mf").iterdir()}
    argv = {"export": [sys.executable, "-m", "bridgeembed.cli.export", "general-m2m", "mf"],
            "save_pretrained": [sys.executable, "-c", FULL_DISK_SAVE, "mf"]}[how]
    code, err = limited(argv, tmp_path, 5000)
    assert code == {"export": 2, "save_pretrained": 3}[how], err
    message = "cannot write mf/model.safetensors: File too large; the previous folder is unchanged"
    assert "Traceback" not in err and err.strip() == (f"error: {message}" if how == "export" else message)
    assert {p.name: p.read_bytes() for p in (tmp_path / "mf").iterdir()} == before
    assert load_checkpoint(tmp_path / "mf")["decoder_languages"] == []
    assert leftovers(tmp_path) == []


def test_a_full_disk_during_a_benchmark_keeps_the_earlier_result_set_whole(tmp_path, monkeypatch):
    """bridgeembed-bench retrieval writes four files; the png, the largest, does not fit: none of the new set
    replaces the old one (before, the csv, json and md were the new run's beside the old png)."""
    import sys

    monkeypatch.chdir(tmp_path)
    for lang, words in (("en", "dog cat bird fish horse cow"), ("de", "Hund Katze Vogel Fisch Pferd Kuh")):
        (tmp_path / f"bitext.{lang}").write_text("".join(f"a {w} runs .\n" for w in words.split()), encoding="utf-8")
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "mpl"))
    bench = [sys.executable, "-m", "bridgeembed.cli.bench", "retrieval", "--model", "bow", "--template",
             "bitext.{lang}", "--langs", "en,de", "--out", "RES", "--quiet"]
    code, err = limited([*bench, "--limit", "6"], tmp_path, 1 << 20)
    assert code == 0, err
    before = {p.name: p.read_bytes() for p in (tmp_path / "RES").iterdir()}
    assert sorted(before) == ["retrieval.csv", "retrieval.json", "retrieval.md", "retrieval.png"]
    assert all(len(data) < 8000 for name, data in before.items() if not name.endswith(".png"))
    assert len(before["retrieval.png"]) > 8000
    code, err = limited([*bench, "--limit", "4"], tmp_path, 8)
    assert code == 2 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == "error: cannot write RES/retrieval.png: File too large; no file of these " \
                                           "results was written, and the results there before are unchanged"
    assert {p.name: p.read_bytes() for p in (tmp_path / "RES").iterdir()} == before
    assert leftovers(tmp_path / "RES") == []
    code, err = limited([*bench, "--limit", "4"], tmp_path, 1 << 20)
    assert code == 0, err
    after = {p.name: p.read_bytes() for p in (tmp_path / "RES").iterdir()}
    assert sorted(after) == sorted(before) and all(after[name] != before[name] for name in after)


def test_what_an_export_killed_before_issue_40_left_in_its_folder_neither_blocks_nor_survives_the_next(tmp_path,
                                                                                                       monkeypatch):
    """Exports wrote into the folder itself then: a kill left `.model.safetensors.PID.tmp` in it, alone (a first
    export) or beside an earlier export."""
    import subprocess
    import sys

    from bridgeembed.checkpoint import load_checkpoint

    monkeypatch.chdir(tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    (tmp_path / "first").mkdir()
    assert run("export", ["general-m2m", "earlier", "--no-decoders"]) == 0
    for folder in ("first", "earlier"):
        (tmp_path / folder / f".model.safetensors.{dead}.tmp").write_bytes(b"half of the weights")
        assert run("export", ["general-m2m", folder, "--no-decoders"]) == 0
        assert load_checkpoint(tmp_path / folder)["decoder_languages"] == []
    assert leftovers(tmp_path) == []
