"""The shipped model (pretrained/general-m2m): loads offline, translations share a space, and the retired
models (multi30k-m2m, broad-m2m) are named as retired, with the way back from git history."""

import itertools

import numpy as np
import pytest

from bridgeembed.pretrained import DEFAULT_MODEL

pytestmark = pytest.mark.usefixtures("shipped_model")


@pytest.fixture(scope="module")
def shipped():
    from bridgeembed import BridgeEncoder

    return BridgeEncoder.from_pretrained(device="cpu")


def test_shipped_model_describes_itself(shipped):
    assert sorted(shipped.languages) == ["cs", "de", "en", "fr"]
    assert shipped.num_heads == 10
    assert shipped.encode("Ein Hund rennt.", "de").shape == (shipped.dim,)


def test_demo_runs_offline(capsys):
    from bridgeembed.__main__ import main

    assert main(["demo", "--beam", "2"]) == 0
    out = capsys.readouterr().out
    assert "cosine similarity" in out and "-> de:" in out


@pytest.mark.slow
def test_translations_are_closer_than_random_captions(shipped, real_data):
    from bridgeembed.text.parallel import read_split

    langs = shipped.languages
    lines = read_split(real_data("multi30k") / "multi30k", "test_2016_flickr", langs)
    n = 300
    vectors = {lang: shipped.encode(lines[lang][:n], lang, normalize=True) for lang in langs}
    shuffled = np.random.default_rng(0).permutation(n)
    shuffled = np.where(shuffled == np.arange(n), (shuffled + 1) % n, shuffled)  # never the caption itself
    for a, b in itertools.permutations(langs, 2):
        same = (vectors[a] * vectors[b]).sum(1)  # cosine with the translation
        other = (vectors[a] * vectors[b][shuffled]).sum(1)  # cosine with a random other caption
        assert same.mean() > other.mean() + 0.05, (a, b, same.mean(), other.mean())
        assert (same > other).mean() > 0.8, (a, b, (same > other).mean())


def test_constructor_loads_by_name_path_or_default(shipped):
    """`BridgeEncoder()` and `BridgeEncoder("general-m2m")`, as the README, the docstring and the model card show."""
    from bridgeembed import BridgeEncoder
    from bridgeembed.pretrained import resolve

    expected = shipped.encode("Ein Hund rennt.", "de")
    for args in ((), (DEFAULT_MODEL,), (resolve(DEFAULT_MODEL),), (str(resolve(DEFAULT_MODEL)) + "/",)):
        encoder = BridgeEncoder(*args, device="cpu")
        np.testing.assert_array_equal(encoder.encode("Ein Hund rennt.", "de"), expected)
    assert BridgeEncoder().source == DEFAULT_MODEL


def test_a_folder_named_like_a_shipped_model_does_not_replace_it(tmp_path, monkeypatch):
    """Issue 19: `./multi30k-m2m/` (then the default) in the working directory silently replaced the shipped model."""
    from bridgeembed.pretrained import DEFAULT_MODEL, list_pretrained, resolve

    if DEFAULT_MODEL not in list_pretrained():
        pytest.skip("shipped model not present")
    shipped = resolve(DEFAULT_MODEL)
    (tmp_path / DEFAULT_MODEL).mkdir()
    (tmp_path / DEFAULT_MODEL / "model.pt").write_bytes(b"someone else's model")
    monkeypatch.chdir(tmp_path)
    assert resolve(DEFAULT_MODEL) == shipped
    assert resolve(f"./{DEFAULT_MODEL}") == tmp_path / DEFAULT_MODEL / "model.pt" or \
        resolve(f"./{DEFAULT_MODEL}").resolve() == (tmp_path / DEFAULT_MODEL / "model.pt").resolve()


def test_every_shipped_model_is_installed_by_a_wheel_too():
    """setup.cfg's data_files put each shipped folder's loadable files in <prefix>/share/bridgeembed/pretrained,
    where `resolve` looks after a wheel install: a new model folder missing there would load only from a checkout."""
    import configparser

    from tests.helpers import REPO

    parser = configparser.ConfigParser()
    parser.read(REPO / "setup.cfg")
    listed = {key: set(value.split()) for key, value in parser["options.data_files"].items()}
    folders = [p for p in (REPO / "pretrained").iterdir() if (p / "config.json").is_file()]
    assert folders
    for folder in folders:
        needed = {f"pretrained/{folder.name}/{p.name}" for p in folder.iterdir()
                  if p.name in ("config.json", "model.safetensors", "README.md") or p.name.startswith("sentencepiece.")}
        assert needed <= listed.get(f"share/bridgeembed/pretrained/{folder.name}", set()), folder.name


def test_the_shipped_model_translates_and_its_neighbours_are_translations(shipped, shipped_model):
    """Properties every general-m2m has, not the outputs of one set of weights (they change at each retraining):
    it translates a caption's words, and a sentence is nearer its translation than a sentence of other text."""
    from bridgeembed.checkpoint import load_model
    from bridgeembed.translation.translator import Translator

    model, tokenizers, config = load_model(shipped_model)
    assert sorted(model.decoders) == ["cs", "de", "en", "fr"]
    translator = Translator(model, tokenizers, config.tokenizer.max_len)
    assert "dog" in translator.translate(["Ein Hund rennt."], "de", "en", beam=2)[0].lower()
    assert "hund" in translator.translate(["A dog runs."], "en", "de", beam=2)[0].lower()
    caption = ("A dog runs on the beach.", "Ein Hund rennt am Strand.")
    news = ("The committee adopted the report on the budget.", "Der Ausschuss hat den Bericht über den Haushalt "
            "angenommen.")
    en, de = (shipped.encode([caption[i], news[i]], lang, normalize=True) for i, lang in enumerate(("en", "de")))
    cosine = en @ de.T
    assert cosine[0, 0] > cosine[0, 1] and cosine[1, 1] > cosine[1, 0], cosine
    assert cosine[0, 0] > cosine[1, 0] and cosine[1, 1] > cosine[0, 1], cosine


@pytest.mark.parametrize("name", ["multi30k-m2m", "broad-m2m"])
def test_a_retired_model_says_it_was_retired_and_how_to_get_it_back(name, tmp_path, monkeypatch, capsys):
    """Issue 42: general-m2m replaced both shipped models. Their names, to BridgeEncoder or any --model, say so
    and give the git command that puts the folder back (after which the name loads again)."""
    from bridgeembed import BridgeEncoder
    from bridgeembed.cli.encode import main as encode
    from bridgeembed.errors import CheckpointError
    from bridgeembed.evaluation.models import load_encoder
    from bridgeembed.pretrained import RETIRED, resolve

    back = f"git checkout {RETIRED[name][:7]} -- pretrained/{name}"
    with pytest.raises(CheckpointError, match="was retired in favour of general-m2m") as err:
        BridgeEncoder(name, device="cpu")
    assert back in str(err.value)
    with pytest.raises(CheckpointError, match="was retired in favour of general-m2m"):
        load_encoder(f"untrained:{name}")  # a benchmark's control of it
    assert encode(["--model", name, "--lang", "en", "A dog.", "--out", str(tmp_path / "v.npy")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "was retired in favour of general-m2m" in err and back in err, err
    restored = tmp_path / "pretrained" / name  # what the git command puts back, found by its name again
    restored.mkdir(parents=True)
    (restored / "config.json").write_text("{}")
    monkeypatch.setenv("BRIDGEEMBED_PRETRAINED", str(tmp_path / "pretrained"))
    assert resolve(name) == restored


@pytest.mark.parametrize("name", ["multi30k-m2m", "broad-m2m"])
def test_a_retired_model_is_in_git_history_where_the_message_says(name):
    import subprocess

    from bridgeembed.pretrained import RETIRED
    from tests.helpers import REPO

    git = ["git", "-C", str(REPO)]
    try:
        shallow = subprocess.run([*git, "rev-parse", "--is-shallow-repository"], capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("no git")
    if shallow.returncode != 0 or shallow.stdout.strip() == "true":
        pytest.skip("not a git checkout with its history")
    for file in ("config.json", "model.safetensors", "sentencepiece.en.model"):
        found = subprocess.run([*git, "cat-file", "-e", f"{RETIRED[name][:7]}:pretrained/{name}/{file}"])
        assert found.returncode == 0, file


def test_a_run_whose_best_pt_is_a_directory_says_so(tmp_path):
    """It said "a training run without best.pt yet … or wait" (issue 40)."""
    from bridgeembed import BridgeEncoder
    from bridgeembed.errors import CheckpointError

    run = tmp_path / "run"
    (run / "best.pt").mkdir(parents=True)
    (run / "log.jsonl").write_text('{"event": "start"}\n')
    with pytest.raises(CheckpointError, match=r"run/best.pt is a directory, not a checkpoint file") as err:
        BridgeEncoder(run)
    assert "wait" not in str(err.value)


def test_a_dangling_link_or_a_link_loop_as_model_says_so(tmp_path, capsys):
    """Issue 49 (also seen): a dangling symbolic link or a loop of links as --model got the generic "no model"
    message, as if the path were mistyped."""
    from bridgeembed.cli import encode
    from bridgeembed.errors import CheckpointError
    from bridgeembed.pretrained import resolve
    from tests.helpers import one_line_error

    (tmp_path / "gone.pt").symlink_to(tmp_path / "moved.pt")
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(CheckpointError, match=r"gone.pt is a dangling symbolic link \(to .*moved.pt, which does not "
                                              r"exist\): give the model's own path"):
        resolve(tmp_path / "gone.pt")
    for link in ("a", "b"):
        with pytest.raises(CheckpointError, match=rf"/{link} is a loop of symbolic links \(.* points back to itself\)"):
            resolve(tmp_path / link)
    assert encode.main(["--lang", "en", "--model", str(tmp_path / "gone.pt"), "A dog."]) == 2
    assert "is a dangling symbolic link" in one_line_error(capsys)
