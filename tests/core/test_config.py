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


@pytest.mark.parametrize("raw, message", [
    ({"train": {"batch_size": True}}, "train.batch_size: expected int, got True"),
    ({"model": {"heads": False}}, "model.heads: expected int, got False"),
    ({"train": {"max_steps": -5}}, "train.max_steps must be at least 1, got -5"),
    ({"train": {"max_steps": 0}}, "train.max_steps must be at least 1, got 0"),
    ({"train": {"lr": 0}}, r"train.lr must be a positive number, got 0.0"),
    ({"train": {"lr": -0.1}}, r"train.lr must be a positive number, got -0.1"),
    ({"train": {"lr": float("nan")}}, r"train.lr must be a positive number, got nan"),
    ({"model": {"dropout": 1.0}}, r"model.dropout must be in \[0, 1\), got 1.0"),
    ({"model": {"dropout": -0.1}}, r"model.dropout must be in \[0, 1\)"),
    ({"tokenizer": {"vocab_size": 0}}, "tokenizer.vocab_size must be larger than the 4 special pieces"),
    ({"tokenizer": {"vocab_size": -100}}, "tokenizer.vocab_size must be larger"),
    ({"train": {"lr_decay": 0}}, r"train.lr_decay must be in \(0, 1\]"),
    ({"train": {"valid_beam": 0}}, "train.valid_beam must be at least 1"),
    ({"model": {"bridge_dim": 0}}, "model.bridge_dim must be at least 1"),
    ({"model": {"heads": 0}}, "model.heads must be at least 1, got 0"),
    ({"train": {"log_every": 0}}, "train.log_every must be at least 1, got 0"),
    ({"tokenizer": {"max_len": 1}}, "tokenizer.max_len must be at least 2, got 1"),
    ({"data": {"languages": "en"}}, "data.languages: expected list, got 'en'"),
    ({"data": {"directions": 5}}, "data.directions must be a preset name"),
    ({"train": {"precision": "fp16"}}, "train.precision must be auto, fp32 or bf16, got 'fp16'"),
])
def test_out_of_range_values_are_refused_at_config_time(raw, message):
    with pytest.raises(ConfigError, match=message):
        Config.from_dict(raw)


def test_yaml_that_is_not_a_mapping(tmp_path):
    for text in ("- model\n- train\n", "42\n", "just text\n"):
        for overrides in ((), ["train.lr=0.1"]):
            with pytest.raises(ConfigError, match="expected a mapping with sections model, tokenizer, data, train"):
                Config.from_yaml(_write(tmp_path, text), overrides)


def test_a_vocabulary_smaller_than_the_alphabet_is_named():
    from bridgeembed.text.tokenization import LanguageTokenizer

    text = ["apple banana cherry dog", "eagle fish grape"] * 20  # 16 letters and the space
    with pytest.raises(ConfigError, match="vocab_size 12 is too small for the 'en' training text: "
                                          "its 17 distinct characters and 4 special pieces need at least 21"):
        LanguageTokenizer.train("en", text, 12, moses=False)


def test_lr_batch_scales_the_learning_rate():
    from bridgeembed.config import TrainConfig, scaled_lr

    assert scaled_lr(TrainConfig(lr=1e-3, batch_size=256)) == 1e-3  # lr_batch 0: as given
    assert scaled_lr(TrainConfig(lr=1e-3, batch_size=256, lr_batch=64)) == pytest.approx(2e-3)  # Adam: sqrt
    assert scaled_lr(TrainConfig(lr=0.5, batch_size=256, lr_batch=64, optimizer="sgd")) == pytest.approx(2.0)
    with pytest.raises(ConfigError, match="lr_batch must be 0"):
        Config.from_dict({"train": {"lr_batch": -1}})


@pytest.mark.parametrize("raw, message", [({"encoder": "gru"}, "bilstm"), ({"enc_hidden": 511}, "even")])
def test_the_model_checks_its_encoder_type_itself(raw, message):
    from bridgeembed.model.encoder import check_encoder_config

    with pytest.raises(ConfigError, match=message):
        check_encoder_config(Config.from_dict({"model": raw}).model)


def test_every_single_field_rule_is_in_the_table():
    """One table for the rules of one field (config_checks.FIELDS); validate() keeps only the rules across fields."""
    import dataclasses
    import inspect

    from bridgeembed import config, config_checks

    keys = {f"{name}.{f.name}" for name, kind in config.SECTIONS.items() for f in dataclasses.fields(kind)}
    assert set(config_checks.FIELDS) <= keys
    assert {f.type for kind in config.SECTIONS.values() for f in dataclasses.fields(kind)} <= set(config_checks.TYPES)
    cross = inspect.getsource(config.validate)
    assert "must be" not in cross and "at least 1" not in cross


def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path):
    """Issue 31: nested aliases ("billion laughs") expand exponentially; bounded before loading."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\ntrain: {lr: 0.1}\n")
    with pytest.raises(ConfigError, match="expands to more than 100,000 values"):  # not 10^9 values expanded
        Config.from_yaml(path)
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * (1 << 20) + "\n")
    with pytest.raises(ConfigError, match=r"big.yaml is 1,048,5\d\d bytes: a config is at most 1,048,576"):
        Config.from_yaml(big)


def test_every_float_spelling_reads_alike_in_the_file_and_in_overrides(tmp_path):
    """Issue 40: YAML 1.1 reads 1e-3 and 1.0e9 (no dot, or no sign in the exponent) as strings, so `weight: 1.0e9`
    was "expected float, got '1.0e9'" and `train.lr=1e-3` (config.py's own example) "expected float, got '1e-3'".
    One reading for both: whatever Python's float() takes; nan and inf meet each field's rule."""
    path = _write(tmp_path, "train:\n  lr: 1e-3\n  clip_norm: 1_0.5\ndata:\n  weight: 2E+1\n  corpora:\n"
                            "    - {path: p, languages: [en], weight: 1.0e9}\n")
    config = Config.from_yaml(path)
    assert config.train.lr == 0.001 and config.train.clip_norm == 10.5 and config.data.weight == 20.0
    from bridgeembed.config import corpus_configs

    assert corpus_configs(config.data)[0].weight == 1e9
    for value, expected in (("1e-3", 1e-3), ("5E-4", 5e-4), (".5e-2", 0.005), ("1.", 1.0), ("-0e0", None)):
        if expected is None:
            with pytest.raises(ConfigError, match=r"train.lr must be a positive number, got -0.0"):
                Config.from_yaml(_write(tmp_path, "{}"), [f"train.lr={value}"])
            continue
        assert Config.from_yaml(_write(tmp_path, "{}"), [f"train.lr={value}"]).train.lr == expected
    for value in ("nan", "inf", "-inf", "infinity", "1e999"):
        with pytest.raises(ConfigError, match=r"train.lr must be a positive number, got (nan|inf|-inf)$"):
            Config.from_yaml(_write(tmp_path, "{}"), [f"train.lr={value}"])
    with pytest.raises(ConfigError, match=r"data.corpora\[0\]: weight must be a positive number, got nan"):
        Config.from_yaml(_write(tmp_path, "data:\n  corpora: [{path: p, languages: [en], weight: nan}]\n"))
    with pytest.raises(ConfigError, match=r"train.lr: expected float, got 'fast'"):
        Config.from_yaml(_write(tmp_path, "{}"), ["train.lr=fast"])
    with pytest.raises(ConfigError, match=r"train.max_steps: expected int, got '1e5'"):  # ints stay ints
        Config.from_yaml(_write(tmp_path, "{}"), ["train.max_steps=1e5"])
    huge = Config.from_dict({"train": {"clip_norm": 10**400}})  # past float's range: inf, not an OverflowError
    assert huge.train.clip_norm == float("inf")
