"""docs/bad_input.md runs: every row's input is executed and what it prints or raises must match the
table (`…` = any text), with exit status 2 and no traceback for command-line errors."""

import gzip
import io
import json
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
import torch

from bridgeembed.pretrained import DEFAULT_MODEL, resolve

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "bad_input.md"
pytestmark = pytest.mark.usefixtures("shipped_model")


def rows(columns: int = 2) -> list:
    """(input, note, expected) of every table row with `columns` cells whose first cell is code."""
    out = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == columns and cells[0].startswith("`"):
            code, note = re.fullmatch(r"`(.+?)`\s*(\(.*\))?", cells[0]).groups()
            out.append((code, note or "", cells[1]))
    return out


def pattern(expected: str) -> re.Pattern:
    text = re.fullmatch(r"`(.*)`", expected).group(1)
    return re.compile(".*".join(re.escape(part) for part in text.split("…")), re.DOTALL)


PROGRAMS = ("bridgeembed-encode", "bridgeembed-translate", "bridgeembed-train", "bridgeembed-bench",
            "bridgeembed-data", "bridgeembed-mine", "bridgeembed-export", "python")


def programs() -> dict:
    from bridgeembed import __main__ as module_main
    from bridgeembed.cli import bench, data, encode, export, mine, train, translate

    def python(argv: list) -> int:  # `python -m bridgeembed COMMAND ...`
        assert argv[:2] == ["-m", "bridgeembed"], argv
        return module_main.main(argv[2:])

    return {"bridgeembed-encode": encode.main, "bridgeembed-translate": translate.main,
            "bridgeembed-train": train.main, "bridgeembed-bench": bench.main, "bridgeembed-data": data.main,
            "bridgeembed-mine": mine.main, "bridgeembed-export": export.main, "python": python}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """The files the table's inputs name."""
    from bridgeembed.checkpoint import load_checkpoint

    folder = tmp_path_factory.mktemp("bad_input")
    (folder / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    (folder / "latin1.txt").write_bytes(b"A dog runs.\nA caf\xe9.\n")
    (folder / "in.txt").write_text("Ein Hund rennt.\n", encoding="utf-8")
    (folder / "text.npy").write_text("Ein Hund rennt.\n", encoding="utf-8")  # a text file named like vectors
    (folder / "empty.txt").write_text("", encoding="utf-8")
    (folder / "list.yaml").write_text("- model\n- train\n")
    (folder / "twice.yaml").write_text("train:\n  lr: 0.1\n  batch_size: 8\n  lr: 0.2\n")
    (folder / "train5.yaml").write_text("train: 5\n")
    (folder / "random.pt").write_bytes(bytes(range(256)) * 16)
    (folder / "configs").mkdir()
    shutil.copy(REPO / "configs" / "tiny.yaml", folder / "configs" / "tiny.yaml")
    (folder / "mine").mkdir()
    shutil.copy(REPO / "configs" / "tiny.yaml", folder / "mine" / "config.yaml")
    (folder / "empty").mkdir()
    manifest = {"format": "bridgeembed-shards", "version": 1, "model": "general-m2m", "fingerprint": "0" * 16,
                "dim": 512, "heads": "mean", "normalized": True, "dtype": "float32", "lang": "de",
                "shard_size": 100000, "input": {"path": str(folder / "in.txt"), "bytes": 16, "sha256": "0" * 64,
                                                "lines": 1, "blank_lines": []}}
    edits = {"m-no-dim": {"dim": None}, "m-dim-str": {"dim": "512"}, "m-no-input": {"input": None},
             "m-size0": {"shard_size": 0}, "m-size-neg": {"shard_size": -5}, "m-v99": {"version": 99},
             "m-lines-str": {"input": {**manifest["input"], "lines": "1"}},
             "m-blank": {"input": {**manifest["input"], "blank_lines": [7]}},
             "m-binary": {"precision": "binary", "dtype": "int8"}}  # a folder of sign bits, as a manifest says
    for name, edit in edits.items():  # shard manifests edited by hand (issue 31)
        (folder / name).mkdir()
        edited = {k: v for k, v in {**manifest, **edit}.items() if v is not None}
        (folder / name / "manifest.json").write_text(json.dumps(edited))
    mr = folder / "cut-mr" / "senteval" / "downstream" / "MR"
    mr.mkdir(parents=True)
    for name in ("rt-polarity.pos", "rt-polarity.neg"):  # the first 3 of 5331 lines
        (mr / name).write_text("a fine film .\nboring .\nwell acted .\n", encoding="latin-1")
    (folder / "bitext.en").write_text("A dog runs.\n", encoding="utf-8")  # one language of a bitext template
    (folder / "bitext.de").write_text("Ein Hund rennt.\n", encoding="utf-8")  # its other: a pool of one
    snli = folder / "snli-dev-only" / "senteval" / "downstream" / "SNLI"  # no train split: SNLI is skipped
    snli.mkdir(parents=True)
    for name in ("s1.dev", "s2.dev", "labels.dev", "s1.test", "s2.test", "labels.test"):
        (snli / name).write_text("entailment\n" if name.startswith("labels") else "a man .\n")
    (folder / "dangling.npy").symlink_to("nowhere/v.npy")
    (folder / "dangling-dir").symlink_to("nowhere")
    (folder / "empty-val").mkdir()
    for lang in ("en", "de"):
        (folder / "empty-val" / f"train.{lang}").write_text("a dog runs\n" * 20)
        (folder / "empty-val" / f"val.{lang}").write_text("")
    for name in ("uneven", "cut-gz", "latin1-corpus"):  # training files that fail before any work
        (folder / name).mkdir()
        for lang in ("en", "de"):
            (folder / name / f"train.{lang}").write_text("a dog runs\na cat\nbirds\n")
            (folder / name / f"val.{lang}").write_text("a dog runs\n")
    (folder / "uneven" / "train.de").write_text("ein Hund\neine Katze\n")
    shutil.copytree(folder / "latin1-corpus", folder / "both-gz")  # train.en and train.en.gz: which one?
    (folder / "both-gz" / "train.en.gz").write_bytes(gzip.compress(b"a dog runs\na cat\nbirds\n"))
    (folder / "latin1-corpus" / "train.de").write_bytes("ein Hund\nein Caf\xe9\nVögel\n".encode("latin-1"))
    (folder / "cut-gz" / "train.de").unlink()
    whole = gzip.compress("".join(f"ein Hund {i}\n" for i in range(5000)).encode())
    (folder / "cut-gz" / "train.de.gz").write_bytes(whole[: len(whole) // 2])
    payload = load_checkpoint(resolve(DEFAULT_MODEL))
    payload["model"]["bridge.w1.weight"] = payload["model"]["bridge.w1.weight"].float().clone()
    payload["model"]["bridge.w1.weight"][0, 0] = float("nan")
    torch.save(payload, folder / "nan.pt")
    crafted = {"int.pt": lambda p: p["model"].update({"bridge.w1.weight": p["model"]["bridge.w1.weight"].long()}),
               "swapped.pt": lambda p: p["tokenizers"].update(de=p["tokenizers"]["en"]),
               "no-tokenizers.pt": lambda p: p.update(tokenizers={}),
               "decoders-str.pt": lambda p: p.update(decoder_languages="en"),
               "decoders-xx.pt": lambda p: p.update(decoder_languages=["en", "xx"])}
    shipped = load_checkpoint(resolve(DEFAULT_MODEL))
    for name, edit in crafted.items():
        payload = {**shipped, "model": dict(shipped["model"]), "tokenizers": dict(shipped["tokenizers"])}
        edit(payload)
        torch.save(payload, folder / name)
    torch.save(shipped, folder / "whole.pt")  # the shipped folder as one checkpoint file
    data = bytearray((folder / "whole.pt").read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit inside a tensor
    (folder / "flipped.pt").write_bytes(bytes(data))
    weights = {k: v for k, v in shipped["model"].items() if not k.startswith("bridge.")}
    torch.save({**shipped, "model": weights}, folder / "no-bridge.pt")
    return folder


def _skip_if_cuda(note: str) -> None:
    if "no CUDA" in note and torch.cuda.is_available():
        pytest.skip("CUDA is available here")


COMMAND_ROWS = [r for r in rows() if r[0].split()[0] in PROGRAMS]
PYTHON_ROWS = [r for r in rows() if r not in COMMAND_ROWS]


def test_the_table_covers_the_issue():
    assert len(COMMAND_ROWS) >= 40 and len(PYTHON_ROWS) >= 15


@pytest.mark.released_counts
@pytest.mark.parametrize("command, note, expected", COMMAND_ROWS, ids=[r[0] for r in COMMAND_ROWS])
def test_command_line_rows(command, note, expected, scratch, monkeypatch, capsys):
    _skip_if_cuda(note)
    monkeypatch.chdir(scratch)
    tokens = shlex.split(command)
    stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
    if "<" in tokens:  # the file itself, as a shell opens it: a command can tell which file stdin reads
        at = tokens.index("<")
        stdin = open(tokens[at + 1], encoding="utf-8")
        tokens = tokens[:at] + tokens[at + 2:]
    monkeypatch.setattr(sys, "stdin", stdin)
    with stdin:
        code = programs()[tokens[0]](tokens[1:])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    lines = [line.replace("`", "") for line in captured.err.splitlines()]
    is_error = expected.startswith("`error: ")
    assert code == (2 if is_error else 0), captured.err
    shown = [line for line in lines if line.startswith("error: ")] if is_error else lines
    assert len(shown) >= 1 and (not is_error or len(shown) == 1), captured.err
    assert any(pattern(expected).fullmatch(line) for line in shown), f"saw: {shown}"


@pytest.fixture(scope="module")
def encoder():
    from bridgeembed import BridgeEncoder

    return BridgeEncoder(device="cpu")


@pytest.mark.parametrize("expression, note, expected", PYTHON_ROWS, ids=[r[0] for r in PYTHON_ROWS])
def test_python_rows(expression, note, expected, encoder, scratch, monkeypatch):
    from bridgeembed import BridgeEncoder

    _skip_if_cuda(note)
    monkeypatch.chdir(scratch)
    name, message = re.fullmatch(r"`(\w+): (.*)`", expected).groups()
    with pytest.raises(Exception) as err:
        eval(expression, {"encoder": encoder, "BridgeEncoder": BridgeEncoder})
    assert type(err.value).__name__ == name, f"{type(err.value).__name__}: {err.value}"
    assert pattern(f"`{message}`").fullmatch(str(err.value)), str(err.value)


def test_rows_covered_elsewhere_name_existing_tests():
    named = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", DOC.read_text(encoding="utf-8"))
    assert len(named) >= 8
    for path, name in named:
        assert f"def {name}(" in (REPO / path).read_text(encoding="utf-8"), f"{path}::{name}"
