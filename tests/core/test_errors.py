"""errors.positive_int, the one check of a count, a size or a number of workers (issue 48: it was written 13 times,
raising three exception types): the command lines' options and the public calls' arguments get the same rule and
the same ConfigError, which is a BridgeembedError (one line from a command) and a ValueError (a Python caller)."""

import numpy as np
import pytest

from bridgeembed.errors import BridgeembedError, ConfigError, positive_int


def test_a_positive_integer_comes_back_as_an_int():
    assert positive_int(3, "--k") == 3
    assert positive_int(np.int64(7), "top_k") == 7 and type(positive_int(np.int64(7), "top_k")) is int


@pytest.mark.parametrize("value", [0, -1, None, True, False, np.bool_(True), 2.0, "3", np.float32(1)])
def test_anything_else_is_one_config_error_naming_the_option(value):
    with pytest.raises(ConfigError, match=rf"^--batch-size must be a positive integer, got {value!r}$".replace(
            "(", r"\(").replace(")", r"\)")) as err:
        positive_int(value, "--batch-size")
    assert isinstance(err.value, BridgeembedError) and isinstance(err.value, ValueError)


def test_a_meaning_is_said_in_brackets():
    with pytest.raises(ConfigError, match=r"^--limit must be a positive integer \(the first N examples of every "
                                          r"file\), got -5$"):
        positive_int(-5, "--limit", "the first N examples of every file")
