"""Each value resolved once (issue 39): one place builds an `EncodeOptions`, one function sets a process's CPU
threads (and each command calls it once), and `BridgeEncoder` resolves its device in one place. The counts are
read from the code (ast), so that a second copy fails here instead of drifting apart."""

import ast

import pytest
import torch
import yaml

from bridgeembed.encoders.options import EncodeOptions, encode_options
from bridgeembed.errors import BridgeembedError
from tests.helpers import REPO
from tests.helpers.toy import toy_config

# the code a user runs: the package, the measurement scripts and the docs tooling (tests may build what they like)
PACKAGE = sorted((REPO / "bridgeembed").rglob("*.py"))
SOURCES = PACKAGE + sorted(p for folder in ("benchmarks", "docs/history", "docs/tools")
                           for p in (REPO / folder).rglob("*.py"))


def calls(name: str, sources: list = SOURCES) -> list:
    """(file, innermost enclosing function) of every call of `name`, a plain name or an attribute, in `sources`."""
    found = []

    def visit(node: ast.AST, where: str, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, where, child.name)
                continue
            if isinstance(child, ast.Call) and _called(child) == name:
                found.append((where, function))
            visit(child, where, function)

    for path in sources:
        where = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else path.name
        visit(ast.parse(path.read_text(encoding="utf-8")), where, "<module>")
    return sorted(found)


def _called(node: ast.Call) -> str:
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def definitions(name: str) -> list:
    return sorted(str(path.relative_to(REPO)) for path in SOURCES for node in ast.walk(ast.parse(path.read_text()))
                  if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name)


def test_one_place_builds_encode_options():
    assert calls("EncodeOptions") == [("bridgeembed/encoders/options.py", "encode_options")]


def test_one_threads_setter():
    """One setter, devices.set_threads, the only call of torch's and FAISS's own in the package and in the
    measurement scripts (quantize.py times each thread count in one process through it too)."""
    assert definitions("set_threads") == ["bridgeembed/devices.py"]
    assert definitions("available_cores") == ["bridgeembed/devices.py"]
    assert calls("set_num_threads", PACKAGE) == [("bridgeembed/devices.py", "set_threads")]
    assert calls("omp_set_num_threads", PACKAGE) == [("bridgeembed/devices.py", "set_threads")]
    assert calls("set_num_threads") == [("bridgeembed/devices.py", "set_threads")]  # the scripts included
    assert calls("omp_set_num_threads") == [("bridgeembed/devices.py", "set_threads")]


def test_bridge_encoder_resolves_its_device_and_quantize_once():
    in_bridge = lambda name: [fn for f, fn in calls(name) if f == "bridgeembed/encoders/bridge.py"]  # noqa: E731
    assert in_bridge("target_device") == ["_target"]
    assert in_bridge("resolve_device") == in_bridge("check_quantized_device") == []
    assert in_bridge("check_quantize") == ["_settings"]
    # the rule itself, model.quantize.target_device, which Translator.from_pretrained resolves its device by too
    rule = "bridgeembed/model/quantize.py"
    assert [fn for f, fn in calls("resolve_device") if f == rule] == ["target_device"]
    assert [fn for f, fn in calls("check_quantized_device") if f == rule] == ["target_device"]
    assert [(f, fn) for f, fn in calls("target_device") if f != "bridgeembed/encoders/bridge.py"] == \
        [("bridgeembed/translation/translator.py", "from_pretrained")]


def test_the_count_sees_a_second_copy(tmp_path):
    extra = tmp_path / "extra.py"
    extra.write_text("def f(x):\n    return EncodeOptions(heads=x)\n\n\ntorch.set_num_threads(2)\n")
    assert calls("EncodeOptions", [*SOURCES, extra]) == [("bridgeembed/encoders/options.py", "encode_options"),
                                                         ("extra.py", "f")]
    assert ("extra.py", "<module>") in calls("set_num_threads", [*SOURCES, extra])


def test_encode_options_resolves_the_threads_of_each_worker():
    assert encode_options().threads is None  # one process keeps its own
    assert encode_options(processes=1, threads=3).threads is None
    assert encode_options(processes=2, threads=3).threads == 3
    assert encode_options(processes=2).threads >= 1  # the idle cores shared among the workers
    with pytest.raises(BridgeembedError, match="threads must be a positive integer, got 0"):
        encode_options(processes=2, threads=0)
    options = encode_options(heads=3, precision="float16", normalize=1)
    assert isinstance(options, EncodeOptions) and options.heads.single and options.precision == "float16"
    assert options.normalize is True and not hasattr(options, "half")


@pytest.fixture
def counted(monkeypatch):
    """How often this process sets torch's and FAISS's threads while a command runs."""
    seen = {"torch": [], "faiss": []}
    monkeypatch.setattr(torch, "set_num_threads", lambda n: seen["torch"].append(n))
    try:
        import faiss
    except ImportError:
        faiss = None
    if faiss is not None:
        monkeypatch.setattr(faiss, "omp_set_num_threads", lambda n: seen["faiss"].append(n))
    return seen


@pytest.mark.parametrize("how", ["--threads", "train.threads", "neither"])
def test_bridgeembed_train_sets_threads_once(how, toy_corpus, tmp_path, monkeypatch, counted):
    from bridgeembed.cli import train
    from bridgeembed.training import data

    def stop(*args, **kwargs):  # after the process has started (threads, device), before any data is read
        raise BridgeembedError("stop here")

    monkeypatch.setattr(data, "corpus_dir", stop)
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(toy_config(toy_corpus, tmp_path / "run", threads=0).to_dict()))
    argv = {"--threads": [str(config), "--threads", "1"], "train.threads": [str(config), "train.threads=1"],
            "neither": [str(config)]}[how]
    assert train.main(argv) == 2
    assert len(counted["torch"]) == 1, counted
    if how != "neither":
        assert counted["torch"] == [1]


def test_bridgeembed_mine_sets_threads_once(tmp_path, monkeypatch, counted):
    pytest.importorskip("faiss")
    from bridgeembed.cli import mine

    for side in ("src", "tgt"):
        (tmp_path / f"{side}.txt").write_text("".join(f"sentence number {i}\n" for i in range(30)), encoding="utf-8")
    common = ["--model", "bow", "--threads", "1", "--quiet", "--threshold", "all"]
    assert mine.main(["--src", str(tmp_path / "src.txt"), "--src-lang", "en", "--tgt", str(tmp_path / "tgt.txt"),
                      "--tgt-lang", "en", "--shards", str(tmp_path / "shards"), "--out", str(tmp_path / "a.tsv"),
                      *common]) == 0
    assert counted == {"torch": [1], "faiss": [1]}
    counted["torch"].clear(), counted["faiss"].clear()
    shards = sorted(p for p in (tmp_path / "shards").iterdir())
    assert mine.main(["--src", str(shards[0]), "--tgt", str(shards[1]), "--out", str(tmp_path / "b.tsv"),
                      "--threads", "1", "--quiet", "--threshold", "all"]) == 0
    assert counted == {"torch": [], "faiss": [1]}  # shard folders alone: no model, so torch's are not set
