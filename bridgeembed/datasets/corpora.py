"""The crosslingual sets (`bridgeembed-data multi30k|xnli|reviews`, cli/downloads.py) fetched into the data-root layout
(`multi30k/`, `xnli/xtreme/`, `xnli/xglue-de/`, `reviews/...`; see docs/data.md).

Each file comes from a public repository pinned at the commit the project's checksums were taken
from (`checksums.SHA256`). `--mirror URL` fetches `URL/<path in the data-root layout>` instead, e.g.
`URL/multi30k/train.en.gz`, so a copy of a data root serves as a mirror.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from bridgeembed.atomic import write_text_atomic
from bridgeembed.datasets.checksums import SHA256
from bridgeembed.datasets.download import fetch
from bridgeembed.text.parallel import read_lines

logger = logging.getLogger(__name__)

MULTI30K = "https://raw.githubusercontent.com/multi30k/dataset/a3d2e0d/data/task1/raw"
XTREME_XNLI = "https://raw.githubusercontent.com/GautamGupta17/MESH/68f82e2/data/xnli"
XGLUE_DE = "https://raw.githubusercontent.com/LSX-UniWue/SuperGLEBer/5d3c59a/data/XGlue/NLI"
XLM_T = "https://raw.githubusercontent.com/cardiffnlp/xlm-t/874214d/data/sentiment"
ABSA = "https://raw.githubusercontent.com/yangheng95/ABSADatasets/676bcd3/datasets/apc_datasets/120.SemEval2016Task5"

XNLI_LANGS = "ar bg de el en es fr hi ru sw th tr ur vi zh".split()
TWEET_LANGS = ("english", "german", "french", "spanish")
ABSA_LANGS = ("english", "french", "spanish", "dutch", "russian", "turkish")


def _multi30k() -> list[tuple[str, str]]:
    return [(f"multi30k/{split}.{lang}.gz", f"{MULTI30K}/{split}.{lang}.gz")
            for split in ("train", "val", "test_2016_flickr") for lang in ("en", "de", "fr", "cs")]


def _xnli() -> list[tuple[str, str]]:
    files = [(f"xnli/xtreme/{split}-{lang}.tsv", f"{XTREME_XNLI}/{split}-{lang}.tsv")
             for split in ("dev", "test") for lang in XNLI_LANGS]
    return files + [(f"xnli/xglue-de/{split}.txt", f"{XGLUE_DE}/{split}.txt") for split in ("train", "dev", "test")]


def _reviews() -> list[tuple[str, str]]:
    files = [(f"reviews/xlm-t-umsab-tweets/{lang}/{split}_{kind}.txt", f"{XLM_T}/{lang}/{split}_{kind}.txt")
             for lang in TWEET_LANGS for split in ("train", "val", "test") for kind in ("text", "labels")]
    return files + [(f"reviews/semeval2016-absa-restaurants/restaurants_{split}_{lang}.xml.dat",
                     f"{ABSA}/{split}/restaurants_{split}_{lang}.xml.dat")
                    for lang in ABSA_LANGS for split in ("train", "test")]


def xnli_test_labels(root: Path) -> None:
    """xnli/xtreme/test.labels: XNLI rows are in the same order in every language, so the label column of
    the German XGLUE test set labels row i of every test-{lang}.tsv."""
    rows = read_lines(root / "xnli/xglue-de/test.txt")
    write_text_atomic(root / "xnli/xtreme/test.labels", "".join(r.rsplit("\t", 1)[-1] + "\n" for r in rows))


@dataclass
class CorpusDownload:
    """One corpus of `bridgeembed-data`: a list of (path in the data root, upstream URL) and a last step."""

    name: str
    files: Callable[[], list]
    finish: Optional[Callable[[Path], None]] = None

    def download(self, root: Path, files: list | None = None, mirror: str | None = None) -> None:
        """Fetch `files` ((path in the data root, URL) pairs; default: every file of the corpus) into `root`,
        from `mirror`/<path> instead of the URLs where given. The last step runs after a whole corpus only."""
        whole = files is None
        files = self.files() if whole else files
        for rel, url in files:
            source = f"{mirror.rstrip('/')}/{rel}" if mirror else url
            fetch(source, root / rel, SHA256.get(rel))
        if self.finish and whole:
            self.finish(root)
        logger.info("%s: %d file(s) in %s", self.name, len(files), root)


multi30k = CorpusDownload("multi30k", _multi30k)
xnli = CorpusDownload("xnli", _xnli, xnli_test_labels)
reviews = CorpusDownload("reviews", _reviews)
