"""`bridgeembed-data recipe|pud|newstest2013` (datasets/origins.py) against a local HTTP server laid out as the
raw-file host is (OWNER/REPO/COMMIT/PATH), serving small files in the real formats that the tests build: gzipped
captions, WMT and Tatoeba text files, ComTrans's tokenized text (English Latin-1, German UTF-8), GNOME's PO files, PUD's CoNLL-U. No internet."""

import gzip
import socket
import sys

import pytest

from bridgeembed.cli.data import main as data_main
from bridgeembed.datasets import checksums, origins, source_checksums
from bridgeembed.datasets.origins import (
    COMTRANS,
    FOUR,
    GNOME,
    ISO3,
    MULTI30K,
    NEWS_4WAY_TRAIN,
    NEWS_PAIRS,
    OPUS_MT,
    PUD,
    TATOEBA,
    TATOEBA_PAIRS,
    parse_po,
    read_conllu,
)
from bridgeembed.errors import DataError
from tests.datasets.test_datasets import Server

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
SHIPPED = dict(source_checksums.SHA256), dict(checksums.SHA256)  # the package's manifests, before a fixture empties them
WORDS = {"en": "the dog runs", "de": "der Hund läuft", "fr": "le chien court", "cs": "pes běží"}


def lines(tag, lang, n):
    return [f"{WORDS[lang]} {tag} {i}" for i in range(n)]


def text(rows):
    return "".join(r + "\n" for r in rows).encode("utf-8")


def po(lang, n):
    head = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Language: %s\\n"\n\n' % lang)
    entries = [f'#. (itstool) path: page/title\n#: C/help{i}.page:{i}\nmsgid ""\n"<em>Help</em> "\n'
               f'"page {i}"\nmsgstr "{WORDS[lang]} <em>{i}</em>"\n' for i in range(n)]
    entries.append('#, fuzzy\nmsgid "fuzzy one"\nmsgstr "not kept"\n')  # fuzzy: left out
    entries.append(f'msgid "only here"\nmsgstr "{lang == "de" and "nur hier" or ""}"\n')  # not in all three
    entries.append('#~ msgid "obsolete"\n#~ msgstr "alt"\n')
    return (head + "\n".join(entries)).encode("utf-8")


def conllu(lang, n):
    out = []
    for i in range(n):
        words = f"{WORDS[lang]} pud {i} .".split()
        out.append(f"# newdoc id = n0100{i}\n# sent_id = n0100{i:04d}\n# text = {' '.join(words)}\n"
                   + "".join(f"{k + 1}\t{w}\t{w}\tX\t_\t_\t0\tdep\t_\t_\n" for k, w in enumerate(words)) + "\n")
    return "".join(out).encode("utf-8")


def build_mirror(http, small=6, dev=8, europarl=8):
    """Every source file of the recipe's folders and the evaluation sets, a handful of lines each (more where the
    recipe holds out dev lines, if asked), under /OWNER/REPO/COMMIT/PATH."""
    files = {}

    def put(origin, path, data):
        files[f"/{origin.key(path)}"] = data

    for split in ("train", "val", "test_2016_flickr"):
        for lang in FOUR:
            put(MULTI30K, f"data/task1/raw/{split}.{lang}.gz", gzip.compress(text(lines(f"caption {split}", lang,
                                                                                          small))))
    for split in ("train", "val"):
        for n in range(1, 6):
            for lang in ("en", "de"):
                put(MULTI30K, f"data/task2/raw/{split}.{n}.{lang}.gz",
                    gzip.compress(text(lines(f"task2 {split} {n}", lang, small))))
    for year, stem in NEWS_4WAY_TRAIN + [(2013, "newstest2013")]:
        for lang in FOUR:
            put(OPUS_MT, f"{origins.NEWS}/{year}/{stem}.{lang}", text(lines(stem, lang, small)))
    for pair, directions in NEWS_PAIRS.items():
        for sides in directions:
            for lang, path in zip(pair, sides):
                put(OPUS_MT, path, text(lines(sides[0], lang, small)))  # each line tagged with its a-side's path
    for a, b in TATOEBA_PAIRS:
        pair = "-".join(sorted((ISO3[a], ISO3[b])))
        for lang in (a, b):
            put(OPUS_MT, f"{TATOEBA}/{pair}/tatoeba-test-v2021-08-07.{ISO3[lang]}",
                text(lines(f"tatoeba {pair}", lang, dev)))
    en = [f'" Mrs Díez González , the Ombudsman \' s number {i} "' for i in range(europarl)] + ["Mr President ."]
    de = [f'" Frau Díez González erklärt Nummer {i} "' for i in range(europarl)] + ["Mr President ."]
    put(COMTRANS, "data/comtrans.e", "".join(x + "\n" for x in en).encode("latin-1"))  # as at b1ed896: the English
    put(COMTRANS, "data/comtrans.g", "".join(x + "\n" for x in de).encode("utf-8"))  # Latin-1, the German UTF-8
    for lang in ("de", "fr", "cs"):
        put(GNOME, f"gnome-help/{lang}/{lang}.po", po(lang, dev))
    for lang, origin in PUD.items():
        put(origin, f"{lang}_pud-ud-test.conllu", conllu(lang, small))
    # a training line that is a PUD sentence: dropped from the training folders
    files[f"/{OPUS_MT.key(f'{origins.NEWS}/2012/newstest2012.en')}"] = text(
        lines("newstest2012", "en", small - 1) + [f"{WORDS['en']} pud 0 ."])
    http.files.update(files)
    return files


@pytest.fixture
def http():
    """The local server of tests/datasets/test_datasets.py (Range, cut responses)."""
    s = Server()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


@pytest.fixture
def mirror(http, monkeypatch):
    """The server and a mirror of made-up files: the shipped checksums (of the real files) set aside."""
    monkeypatch.setattr(source_checksums, "SHA256", {})
    monkeypatch.setattr(checksums, "SHA256", {})
    build_mirror(http)
    return http


@pytest.fixture
def big_mirror(mirror):
    """The mirror with more lines where configs/general-m2m.yaml holds out dev lines (300 of Tatoeba and GNOME
    help, 1,000 of Europarl)."""
    build_mirror(mirror, dev=305, europarl=1005)
    return mirror


def count(path):
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return sum(1 for _ in handle)


def test_the_recipe_folders_are_the_configs_folders():
    assert origins.recipe_folders("general-m2m") == origins.recipe_folders(str(ROOT / "configs/general-m2m.yaml"))


def test_parsers_read_the_real_formats():
    messages = parse_po(po("de", 2).decode())
    assert messages[("", "<em>Help</em> page 1")] == "der Hund läuft <em>1</em>"
    assert ("", "fuzzy one") not in messages and ("", "obsolete") not in messages
    assert read_conllu(conllu("en", 2).decode()) == [("n01000000", "the dog runs pud 0 ."),
                                                    ("n01000001", "the dog runs pud 1 .")]


def tags(path):
    """The source files (tagged by their a-side's path) whose lines a folder's file holds."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return {line.split()[-2] for line in handle}


def test_the_news_pairs_are_the_project_copys_years(mirror, tmp_path):
    """shared/data's news folders: newstest2019 en->de and en->cs held out (none of their lines there), newstest2021
    of en-de and en-cs from wmt21-news-systems (source and reference A: wmt_newstest/2021's sides are not
    line-parallel), newstest2019 de-cs in both directions (different documents)."""
    root = tmp_path / "data"
    origins.fetch_folders(root, ["newstest-en-de", "newstest-en-cs", "newstest-de-cs"], mirror.url, progress=False)
    news, wmt21 = f"{origins.NEWS}/", "datasets/statmt/wmt21-news-systems/txt/"
    en_de = tags(root / "newstest-en-de/train.en.gz")
    assert f"{news}2019/de-en/newstest2019.en" in en_de and f"{news}2019/en-de/newstest2019.en" not in en_de
    assert {f"{wmt21}sources/newstest2021.en-de.src.en", f"{wmt21}references/newstest2021.de-en.ref.A.en"} < en_de
    assert not any("/2021/" in t for t in en_de)
    assert len(en_de) == 14  # 2014 once, 2015-2018 and 2020 both directions, 2019 de->en, 2021 both directions
    en_cs = tags(root / "newstest-en-cs/train.en.gz")
    assert not any("2019" in t for t in en_cs) and len(en_cs) == 11  # 2014 once, 2015-2018 and 2021 both
    assert {f"{wmt21}sources/newstest2021.en-cs.src.en", f"{wmt21}references/newstest2021.cs-en.ref.A.en"} < en_cs
    with gzip.open(root / "newstest-en-cs/train.cs.gz", "rt", encoding="utf-8") as handle:
        assert handle.readline().startswith(WORDS["cs"]), "each side read from its own language's file"
    assert tags(root / "newstest-de-cs/train.de.gz") == {f"{news}2019/{d}/newstest2019.de" for d in ("de-cs", "cs-de")}


def test_recipe_writes_every_folder_and_the_evaluation_sets_from_an_empty_root(mirror, tmp_path, capsys):
    root = tmp_path / "data"
    assert data_main(["recipe", "general-m2m", "--data", str(root), "--mirror", mirror.url]) == 0
    for name in origins.RECIPES["general-m2m"] + ["pud", "newstest-4way"]:
        assert (root / name).is_dir(), name
    assert count(root / "pud/test.cs.gz") == 6 and (root / "pud/ids.txt").read_text().split()[0] == "n01000000"
    assert count(root / "newstest-4way/valid.fr.gz") == 6
    assert count(root / "newstest-4way/train.en.gz") == 6 * 6 - 1, "the PUD sentence is dropped from training"
    assert count(root / "multi30k-task2/train.5.de.gz") == 6 and count(root / "multi30k/val.cs.gz") == 6
    assert count(root / "newstest-de-fr/train.fr.gz") == 6 * 6  # both directions of three years
    assert count(root / "tatoeba-de-cs/train.cs.gz") == 8
    assert count(root / "gnome-help/train.fr.gz") == 8
    with gzip.open(root / "europarl-comtrans/train.de.gz", "rt", encoding="utf-8") as handle:
        first = handle.readline()
    assert first == '"Frau Díez González erklärt Nummer 0"\n', "UTF-8, Moses-detokenized"
    with gzip.open(root / "europarl-comtrans/train.en.gz", "rt", encoding="utf-8") as handle:
        assert handle.readline() == '"Mrs Díez González, the Ombudsman\'s number 0"\n', "Latin-1"
    assert count(root / "europarl-comtrans/train.en.gz") == 8, "the copied English pair dropped"
    assert "tatoeba-en-de: 8 rows" in capsys.readouterr().out
    requests = len(mirror.requests)
    assert data_main(["recipe", "general-m2m", "--data", str(root), "--mirror", mirror.url]) == 0
    assert len(mirror.requests) == requests, "folders already there are kept"
    record = (root / ".sources/SHA256SUMS").read_text()
    assert f"  {PUD['en'].key('en_pud-ud-test.conllu')}\n" in record
    requested = {path[1:] for path, _ in mirror.requests}
    task1 = {key for key in requested if "/data/task1/raw/" in key}
    assert requested - task1 <= set(SHIPPED[0]), "source_checksums.py holds every other source the recipe fetches"
    assert {f"multi30k/{key.rsplit('/', 1)[1]}" for key in task1} <= set(SHIPPED[1]), "checksums.py: Multi30k task 1"


def test_a_later_fetch_is_checked_against_the_first(mirror, tmp_path, capsys):
    root = tmp_path / "data"
    assert data_main(["pud", "--data", str(root), "--mirror", mirror.url, "--print-manifest"]) == 0
    key = PUD["de"].key("de_pud-ud-test.conllu")
    digest = __import__("hashlib").sha256(conllu("de", 6)).hexdigest()
    assert f'    "{key}":\n        "{digest}",' in capsys.readouterr().out, "the record, in the package's form"
    mirror.files[f"/{key}"] = conllu("de", 7)  # the origin changed
    (root / ".sources" / key).unlink()
    import shutil
    shutil.rmtree(root / "pud")
    assert data_main(["pud", "--data", str(root), "--mirror", mirror.url]) == 2
    err = capsys.readouterr().err
    assert "checksum mismatch" in err and key in err and "Traceback" not in err


def test_the_shipped_manifest_is_checked(http, tmp_path):
    build_mirror(http)  # made-up task-2 captions: not the bytes whose sha256 the package ships
    with pytest.raises(DataError, match="checksum mismatch") as err:
        origins.fetch_folders(tmp_path, ["multi30k-task2"], http.url, progress=False)
    assert "data/task2/raw/train.1.en.gz" in str(err.value)
    assert not (tmp_path / "multi30k-task2").exists(), "no folder is left half made"


def test_offline_is_one_line_naming_the_url_and_what_to_do(tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    assert data_main(["newstest2013", "--data", str(tmp_path), "--mirror", f"http://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert f"http://127.0.0.1:{port}/{PUD['en'].key('en_pud-ud-test.conllu')}" in err
    assert "run the same command again" in err and "--mirror" in err and "Traceback" not in err


def test_an_interrupted_fetch_resumes(mirror, tmp_path):
    for lang in FOUR:  # large enough to be cut in the middle
        key = f"/{OPUS_MT.key(f'{origins.NEWS}/2013/newstest2013.{lang}')}"
        mirror.files[key] = mirror.files[key] * 2000
    mirror.truncate_once.add(key)
    root = tmp_path / "data"
    with pytest.raises(DataError, match="run the same command again"):
        origins.fetch_folders(root, ["newstest-4way"], mirror.url, progress=False)
    assert not (root / "newstest-4way").exists()
    assert origins.fetch_folders(root, ["newstest-4way"], mirror.url, progress=False)["newstest-4way"] == 35
    assert (key, f"bytes={(root / '.sources' / key[1:]).stat().st_size // 2}-") in mirror.requests, \
        "the rest was asked for with a Range request"
    assert count(root / "newstest-4way/valid.cs.gz") == 6 * 2000


def test_unknown_recipes_and_folders_are_refused(tmp_path, capsys):
    assert data_main(["recipe", "no-such-recipe", "--data", str(tmp_path)]) == 2
    assert "unknown recipe 'no-such-recipe'" in capsys.readouterr().err
    config = tmp_path / "c.yaml"
    config.write_text("data:\n  path: multi30k\n  corpora:\n    - {path: my-own-folder}\n")
    assert data_main(["recipe", str(config), "--data", str(tmp_path)]) == 2
    assert "my-own-folder" in capsys.readouterr().err


@pytest.mark.slow  # 16 s: 15 corpora prepared, tokenizers learnt, two steps
def test_training_starts_on_the_fetched_folders(big_mirror, tmp_path, monkeypatch):
    """Done when (issue 50): from an empty data root, the recipe's folders fetched, and bridgeembed-train
    configs/general-m2m.yaml starts on them (a tiny model, a few steps)."""
    from bridgeembed.cli.train import main as train_main

    root = tmp_path / "data"
    assert data_main(["recipe", "general-m2m", "--data", str(root), "--mirror", big_mirror.url]) == 0
    out = tmp_path / "run"
    overrides = ["model.emb_dim=8", "model.enc_hidden=8", "model.dec_hidden=8", "model.heads=2",
                 "model.bridge_dim=8", "tokenizer.vocab_size=120", "tokenizer.max_len=16", "train.batch_size=4",
                 "train.max_steps=2", "train.valid_every=1000", "train.valid_sentences=2", "train.save_every=1000",
                 "train.log_every=1", f"train.out_dir={out}", f"train.cache_dir={tmp_path / 'cache'}",
                 "train.precision=fp32", "train.threads=1"]
    monkeypatch.setattr(sys, "argv", ["bridgeembed-train"])
    assert train_main([str(ROOT / "configs/general-m2m.yaml"), "--data", str(root), *overrides]) == 0
    assert (out / "last.pt").is_file()


@pytest.mark.slow  # real bytes: 32 files, 10 MB
def test_the_shipped_checksums_are_those_of_the_real_files(http, tmp_path, real_data):
    """The real Multi30k files (the project's copy, byte for byte the origin's), served at their origin paths, pass
    the package's manifest and land unchanged."""
    copy = real_data("multi30k-task2", "multi30k") / "multi30k-task2"
    for path in copy.glob("*.gz"):
        http.files[f"/{MULTI30K.key(f'data/task2/raw/{path.name}')}"] = path.read_bytes()
    for path in (copy.parent / "multi30k").glob("*.gz"):
        http.files[f"/{MULTI30K.key(f'data/task1/raw/{path.name}')}"] = path.read_bytes()
    done = origins.fetch_folders(tmp_path, ["multi30k", "multi30k-task2"], http.url, progress=False)
    assert done == {"multi30k": 29000, "multi30k-task2": 29000}
    for path in copy.glob("*.gz"):
        assert (tmp_path / "multi30k-task2" / path.name).read_bytes() == path.read_bytes()
    assert not (tmp_path / ".sources/SHA256SUMS").exists(), "every file had a shipped checksum"
