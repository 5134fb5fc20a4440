"""data.tokenizer_text: all: a new run's tokenizers learn from every corpus's training text (data.corpora
too), never from a corpus's held-out dev lines; main (the default) keeps the old tokenizers and cache keys."""

import gzip

import pytest

from bridgeembed.config import Config
from bridgeembed.errors import ConfigError
from bridgeembed.training.setup import prepare
from tests.helpers.toy import toy_config


@pytest.fixture(scope="module")
def domain_corpus(tmp_path_factory):
    """An x-y corpus of words the toy corpus never uses: 'zqzq' in its 250 training lines, 'vwvw' only in its
    last 50 (held out as its dev set)."""
    folder = tmp_path_factory.mktemp("domain")
    lines = ["zqzq zqzq zqzq banana"] * 250 + ["vwvw vwvw vwvw vwvw"] * 50
    for lang, rows in (("x", lines), ("y", [" ".join(reversed(line.split())) for line in lines])):
        with gzip.open(folder / f"train.{lang}.gz", "wt", encoding="utf-8") as handle:
            handle.write("\n".join(rows) + "\n")
    return folder


def config_for(toy_corpus, domain_corpus, tmp_path, text, name="run"):
    raw = toy_config(toy_corpus, tmp_path / name, cache_dir=str(tmp_path / "cache")).to_dict()
    raw["data"]["corpora"] = [{"path": str(domain_corpus), "name": "domain", "languages": ["x", "y"],
                               "dev_lines": 50}]
    raw["data"]["tokenizer_text"] = text
    return Config.from_dict(raw)


def test_all_learns_the_other_corpora_but_not_their_dev_lines(toy_corpus, domain_corpus, tmp_path):
    main = prepare(config_for(toy_corpus, domain_corpus, tmp_path, "main", "a"), show_progress=False).data.tokenizers
    every = prepare(config_for(toy_corpus, domain_corpus, tmp_path, "all", "b"), show_progress=False).data.tokenizers
    for lang in ("x", "y"):
        assert len(every[lang].pieces("zqzq")) == 1 < len(main[lang].pieces("zqzq"))  # its training text: learnt
        assert len(every[lang].pieces("vwvw")) > 1  # its dev lines: never seen by the tokenizer
        assert every[lang].spm_model != main[lang].spm_model
    again = prepare(config_for(toy_corpus, domain_corpus, tmp_path, "all", "c"), show_progress=False).data.tokenizers
    assert {k: t.spm_model for k, t in again.items()} == {k: t.spm_model for k, t in every.items()}  # cached


def test_main_keeps_the_tokenizers_of_the_main_corpus_alone(toy_corpus, domain_corpus, tmp_path):
    alone = toy_config(toy_corpus, tmp_path / "alone", cache_dir=str(tmp_path / "cache"))
    with_corpus = config_for(toy_corpus, domain_corpus, tmp_path, "main")
    assert alone.data.tokenizer_text == "main"  # the default
    first = prepare(alone, show_progress=False).data.tokenizers
    second = prepare(with_corpus, show_progress=False).data.tokenizers
    assert {k: t.spm_model for k, t in first.items()} == {k: t.spm_model for k, t in second.items()}


def test_a_bad_tokenizer_text_is_refused(toy_corpus, domain_corpus, tmp_path):
    with pytest.raises(ConfigError, match="data.tokenizer_text"):
        config_for(toy_corpus, domain_corpus, tmp_path, "everything")


def test_a_checkpoint_from_before_the_key_resumes(toy_corpus, domain_corpus, tmp_path):
    from dataclasses import asdict

    from bridgeembed.training.setup import check_resumable

    config = config_for(toy_corpus, domain_corpus, tmp_path, "main")
    saved = {k: asdict(getattr(config, k)) for k in ("model", "tokenizer", "data", "train")}
    del saved["data"]["tokenizer_text"]
    payload = {"config": saved, "kind": "trainer", "trainer": {}}
    check_resumable(payload, config, tmp_path / "last.pt")  # the key's default, as the old run had it
    with pytest.raises(ConfigError, match="different data config"):
        check_resumable(payload, config_for(toy_corpus, domain_corpus, tmp_path, "all"), tmp_path / "last.pt")
