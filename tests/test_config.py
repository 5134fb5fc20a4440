"""Configs: unknown keys are errors, overrides work, a config round-trips."""

import pytest

from bridgeembed.config import Config
from bridgeembed.errors import ConfigError


def test_yaml_with_overrides_round_trips(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("model:\n  heads: 5\ntrain:\n  lr: 1\n")
    config = Config.from_yaml(path, ["train.batch_size=32", "data.languages=[en, de]", "train.optimizer=sgd"])
    assert config.model.heads == 5 and config.train.lr == 1.0 and config.train.batch_size == 32
    assert config.data.languages == ["en", "de"] and config.train.optimizer == "sgd"
    assert Config.from_dict(config.to_dict()) == config


@pytest.mark.parametrize("raw, message", [
    ({"model": {"head": 5}}, "unknown key.*head.*valid keys"),
    ({"modle": {}}, "unknown section"),
    ({"model": {"heads": "ten"}}, "heads: expected int"),
    ({"model": {"encoder": "gru"}}, "bilstm"),
    ({"model": {"enc_hidden": 511}}, "even"),
    ({"train": {"optimizer": "adagrad"}}, "adam or sgd"),
    ({"data": {"languages": ["en", "en"]}}, "distinct"),
    ({"data": {"languages": ["en-gb", "de"]}}, "language code"),
])
def test_bad_configs_are_named(raw, message):
    with pytest.raises(ConfigError, match=message):
        Config.from_dict(raw)


def test_bad_override_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="section.key=value"):
        Config.from_yaml(_write(tmp_path, "{}"), ["lr=3"])
    with pytest.raises(ConfigError, match="does not exist"):
        Config.from_yaml(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        Config.from_yaml(_write(tmp_path, "model: [unclosed"))


def _write(folder, text):
    path = folder / "x.yaml"
    path.write_text(text)
    return path
