"""The download commands of `bridgeembed-data` (dispatched by cli/data.py): senteval, multi30k, xnli, reviews,
recipe, pud and newstest2013. Their options turned into the calls of `datasets.senteval.download`,
`datasets.corpora.CorpusDownload.download` and `datasets.origins.fetch_folders`. The corpora (whose module imports
torch) are imported only when one runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from bridgeembed.cli.options import add_options
from bridgeembed.datasets.senteval import TASKS, download
from bridgeembed.errors import ConfigError
from bridgeembed.paths import data_root, senteval_dir


class SentEval:
    """`bridgeembed-data senteval`: SentEval's data, downloaded and preprocessed (datasets/senteval.py)."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_options(parser, "--data")  # the data land in DATA/senteval, where bridgeembed-bench senteval reads them
        parser.add_argument("--out", "--dest", dest="dest", type=Path,
                            help="the senteval folder itself (instead of DATA/senteval; --dest: the old spelling)")
        parser.add_argument("--tasks", default="all",
                            help=f"comma-separated subset of: {','.join(TASKS)} (default: all)")
        parser.add_argument("--mirror", help="fetch every file from MIRROR/<upstream file name> instead")
        parser.add_argument("--keep-downloads", action="store_true", help="keep the archives in OUT/downloads")

    def run(self, args: argparse.Namespace) -> int:
        names = list(TASKS) if args.tasks == "all" else [t.strip() for t in args.tasks.split(",") if t.strip()]
        download(args.dest or senteval_dir(args.data), names, args.mirror, args.keep_downloads)
        return 0


class Corpus:
    """`bridgeembed-data multi30k|xnli|reviews`: one corpus of datasets/corpora.py into the data root."""

    def __init__(self, name: str) -> None:
        self.name = name  # a CorpusDownload of datasets/corpora.py

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_options(parser, "--data")
        parser.add_argument("--mirror", help="fetch MIRROR/<path in the data root> instead of the upstream URLs")
        parser.add_argument("--only", help="comma-separated substrings: fetch only the files whose path contains one")

    def run(self, args: argparse.Namespace) -> int:
        from bridgeembed.datasets import corpora

        corpus = getattr(corpora, self.name)
        root = data_root(args.data)
        files = None
        if args.only:
            wanted = [w.strip() for w in args.only.split(",") if w.strip()]
            files = [(rel, url) for rel, url in corpus.files() if any(w in rel for w in wanted)]
            if not files:
                raise ConfigError(f"--only {args.only!r} matches none of the {self.name} files")
        corpus.download(root, files, args.mirror)
        return 0


senteval = SentEval()
multi30k = Corpus("multi30k")
xnli = Corpus("xnli")
reviews = Corpus("reviews")


class Origins:
    """`bridgeembed-data recipe|pud|newstest2013`: folders fetched from their origins at pinned commits and derived
    into the data root (datasets/origins.py)."""

    def __init__(self, what: str) -> None:
        self.what = what  # "recipe", or an evaluation set of origins.EVALUATION

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        if self.what == "recipe":
            parser.add_argument("recipe", help="a shipped recipe (general-m2m, general-m2m-all-text) or a training "
                                               "config's path: every folder it trains on, and the evaluation sets "
                                               "PUD and newstest2013")
        add_options(parser, "--data")
        parser.add_argument("--mirror", help="fetch MIRROR/OWNER/REPO/COMMIT/PATH instead of "
                                             "https://raw.githubusercontent.com/OWNER/REPO/COMMIT/PATH, and a "
                                             "repository's archive as MIRROR/OWNER/REPO/archive/COMMIT.tar.gz "
                                             "instead of https://github.com/OWNER/REPO/archive/COMMIT.tar.gz")
        parser.add_argument("--print-manifest", action="store_true",
                            help="then print the sha256 of every source file fetched (and the members digest of "
                                 "every archive read), as datasets/source_checksums.py holds them")

    def run(self, args: argparse.Namespace) -> int:
        from bridgeembed.datasets import origins

        if self.what == "recipe":
            names = origins.recipe_folders(args.recipe) + [f for e in origins.EVALUATION.values() for f in e]
        else:
            names = origins.EVALUATION[self.what]
        root = data_root(args.data)
        done = origins.fetch_folders(root, list(dict.fromkeys(names)), args.mirror)
        for name, rows in done.items():
            print(f"{name}: {'already there' if rows is None else f'{rows:,} rows'}")
        if args.print_manifest:
            sources = origins.Sources(root, args.mirror, progress=False)
            for key, digest in sorted(sources.recorded.items()):
                print(f'    "{key}":\n        "{digest}",')
            if sources.recorded_members:
                print("# MEMBERS (archives: the digest of the files read)")
                for key, digest in sorted(sources.recorded_members.items()):
                    print(f'    "{key}":\n        "{digest}",')
        return 0


recipe = Origins("recipe")
pud = Origins("pud")
newstest2013 = Origins("newstest2013")
