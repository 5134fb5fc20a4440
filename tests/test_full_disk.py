"""A full disk during every write of issue 40's list, for real: each command runs under a file size limit
(`tests/helpers/disk.py`), so the write fails in the kernel, where the code meets it (before, the tests
mocked torch.save or np.save with an OSError, and a real full disk gave torch's "unexpected pos", numpy's
"N requested and M written" or an OSError traceback). Each must print one line naming the file, leave the
file that was there before as it was, and leave no partial file or temporary behind."""

import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers.disk import leftovers, limited
from tests.helpers.toy import toy_config, write_toy_corpus

TOO_LARGE = "File too large; the previous file is unchanged"


def contents(folder: Path) -> dict:
    """{relative path: bytes} of every file below `folder`."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def one_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert "Traceback" not in err and lines and lines[-1].startswith("error: "), err
    assert [line for line in lines if line.startswith("error: ")] == [lines[-1]], err
    return lines[-1]


@pytest.mark.parametrize("how", ["export", "save"])
def test_a_full_disk_while_writing_a_pt_file_keeps_the_old_one(tmp_path, how):
    """`bridgeembed-export MODEL m.pt` and `encoder.save("m.pt")` (torch.save): "[enforce fail at
    inline_container.cc:672] unexpected pos" before."""
    export = [sys.executable, "-m", "bridgeembed.cli.export", "general-m2m", "m.pt"]
    assert limited([*export, "--no-decoders"], tmp_path, 1 << 22)[0] == 0  # an earlier export, unlimited
    before = (tmp_path / "m.pt").read_bytes()
    save = [sys.executable, "-c", "from bridgeembed import BridgeEncoder; BridgeEncoder(device='cpu').save('m.pt')"]
    code, err = limited({"export": export, "save": save}[how], tmp_path, 2000)
    if how == "export":
        assert code == 2 and one_error(err) == f"error: cannot write m.pt: {TOO_LARGE}"
    else:  # a library call raises the WriteError, with that message
        assert code == 1 and err.strip().splitlines()[-1] == f"bridgeembed.errors.WriteError: cannot write m.pt: " \
                                                             f"{TOO_LARGE}", err
    assert (tmp_path / "m.pt").read_bytes() == before
    assert leftovers(tmp_path) == []


def test_a_full_disk_while_encoding_to_a_file_names_the_cause(tmp_path):
    """`bridgeembed-encode --out v.npy` said "4096000 requested and 25568 written", with no cause."""
    encode = [sys.executable, "-m", "bridgeembed.cli.encode", "--lang", "en", "--out", "v.npy"]
    assert limited([*encode, "A dog."], tmp_path, 1 << 20)[0] == 0
    before = (tmp_path / "v.npy").read_bytes()
    code, err = limited([*encode, *(f"A dog number {i}." for i in range(8))], tmp_path, 4)
    assert code == 2 and one_error(err) == f"error: cannot write v.npy: {TOO_LARGE}"
    assert (tmp_path / "v.npy").read_bytes() == before
    assert leftovers(tmp_path) == []


def test_a_full_disk_while_grafting_decoders_keeps_the_old_output(toy_run, tmp_path):
    """`bridgeembed-recipe with-decoders` (benchmarks/with_decoders.py before): a WriteError traceback."""
    from bridgeembed import BridgeEncoder

    run_dir, _ = toy_run
    BridgeEncoder(run_dir / "best.pt", device="cpu").save(tmp_path / "encoder.pt")  # encoders and bridge only
    graft = [sys.executable, "-m", "bridgeembed.cli.recipe", "with-decoders", "encoder.pt", str(run_dir / "last.pt"),
             "--out", "both.pt"]
    assert limited(graft, tmp_path, 1 << 20)[0] == 0
    before = (tmp_path / "both.pt").read_bytes()
    (tmp_path / "both.pt").write_bytes(before[:100])  # the earlier output, smaller than what the limit allows
    code, err = limited(graft, tmp_path, 16)
    assert code == 2 and one_error(err) == f"error: cannot write both.pt: {TOO_LARGE}"
    assert (tmp_path / "both.pt").read_bytes() == before[:100]
    assert leftovers(tmp_path) == []


def test_a_full_disk_while_training_saves_a_checkpoint_keeps_the_last_good_one(toy_corpus, tmp_path):
    """The trainer's checkpoint on a real full disk: torch's "unexpected pos" RuntimeError before (its test
    mocked torch.save with an OSError)."""
    out = tmp_path / "run"
    settings = dict(valid_every=100000, save_every=4, log_every=2, threads=1)
    config = tmp_path / "run.yaml"
    train = [sys.executable, "-m", "bridgeembed.cli.train", str(config), "--quiet"]
    config.write_text(yaml.safe_dump(toy_config(toy_corpus, out, max_steps=4, **settings).to_dict()))
    code, err = limited(train, tmp_path, 1 << 20)
    assert code == 0, err
    good = (out / "last.pt").read_bytes()
    assert len(good) > 200_000
    config.write_text(yaml.safe_dump(toy_config(toy_corpus, out, max_steps=8, **settings).to_dict()))
    code, err = limited(train, tmp_path, 100)  # 100 KiB: the log and the config fit, a checkpoint does not
    assert code == 2 and one_error(err) == f"error: cannot write {out / 'last.pt'}: {TOO_LARGE}"
    assert (out / "last.pt").read_bytes() == good
    assert leftovers(out) == [".lock"]  # the run's lock file, and no temporary


APPEND = """
import sys
from pathlib import Path
from bridgeembed.training.distributed import World
from bridgeembed.training.log import TrainingLog
from bridgeembed.errors import WriteError
try:
    TrainingLog(Path(sys.argv[1]), World()).event("train", step=4, note="x" * 3000)
except WriteError as err:
    print(f"error: {err}", file=sys.stderr)
    sys.exit(2)
"""


def test_a_full_disk_while_appending_to_the_training_log_leaves_whole_lines(tmp_path):
    """A log.jsonl append under `ulimit -f 4`: an OSError traceback, and half a record in the log."""
    log = tmp_path / "log.jsonl"
    log.write_text('{"event": "start", "step": 0}\n' * 40)  # 1,240 bytes: 2,856 left below 4 KiB
    before = log.read_bytes()
    code, err = limited([sys.executable, "-c", APPEND, str(log)], tmp_path, 4)
    assert code == 2 and one_error(err) == f"error: cannot write {log}: {TOO_LARGE}"
    assert log.read_bytes() == before  # the part of the line that fitted is cut back off
    code, err = limited([sys.executable, "-c", APPEND, str(log)], tmp_path, 8)
    assert code == 0, err
    assert log.read_bytes().startswith(before) and log.read_text().count("\n") == 41


def test_a_full_disk_while_preparing_data_keeps_what_the_cache_held(tmp_path):
    """`bridgeembed-data prepare` on a full disk: an OSError traceback in _build_text (and _build_ids)."""
    cache = tmp_path / "cache"

    def prepare(corpus: Path, blocks: int) -> tuple:
        config = tmp_path / f"{corpus.name}.yaml"
        config.write_text(yaml.safe_dump(toy_config(corpus, tmp_path / "run").to_dict()))
        return limited([sys.executable, "-m", "bridgeembed.cli.data", "prepare", str(config), "--cache", str(cache),
                        "--quiet"], tmp_path, blocks)

    assert prepare(write_toy_corpus(tmp_path / "small", n_train=50), 1 << 20)[0] == 0
    before = contents(cache)
    code, err = prepare(write_toy_corpus(tmp_path / "large", n_train=3000, seed=1), 16)
    message = one_error(err)
    assert code == 2 and message.startswith(f"error: cannot write {cache}/"), err
    assert message.endswith(": File too large; nothing of it was kept (the cache holds finished entries only)")
    assert contents(cache) == before
    assert leftovers(cache) == []
