"""Where data lives: `--data DIR` beats `$BRIDGEEMBED_DATA` beats `~/.cache/bridgeembed/data`.

Every data set keeps the layout of `bridgeembed-data` downloads (and of the project's shared
folder): `multi30k/`, `senteval/downstream/`, `senteval/probing/`, `xnli/xtreme/`, `reviews/...`.
"""

import os
from pathlib import Path

ENV_VAR = "BRIDGEEMBED_DATA"
DEFAULT_ROOT = Path("~/.cache/bridgeembed/data")


def data_root(explicit=None) -> Path:
    """The data root: `explicit` if given, else `$BRIDGEEMBED_DATA`, else `~/.cache/bridgeembed/data`."""
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser()
    return DEFAULT_ROOT.expanduser()
