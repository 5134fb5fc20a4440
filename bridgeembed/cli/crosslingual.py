"""`bridgeembed-bench xnli | sentiment | retrieval`: the crosslingual benchmarks on the command line.

    bridgeembed-bench xnli --model general-m2m --train-langs en,en+de,en+de+fr --test-langs en,de,fr
    bridgeembed-bench sentiment --model general-m2m --train-langs en --test-langs en,de,fr,es
    bridgeembed-bench retrieval --model general-m2m --langs en,de,fr,cs --scoring both
    bridgeembed-bench neutrality --model general-m2m --langs en,de,fr,cs

`--model majority` scores the majority-class baseline (no encoder); `--model untrained:NAME` the same
architecture with random weights. Each run writes JSON, CSV, Markdown and PNG under `--out`.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bridgeembed.cli.options import add_options, bench_heads
from bridgeembed.crosslingual.classifier import MAJORITY, ClassifierConfig, encoder_and_classifier
from bridgeembed.crosslingual.margin import CHOICES, K, parse_scoring
from bridgeembed.crosslingual.readers import find_bitext, read_bitext
from bridgeembed.crosslingual.report import retrieval_table, to_markdown, transfer_table, views_markdown
from bridgeembed.crosslingual.retrieval import RetrievalEvaluator
from bridgeembed.crosslingual.sources import (
    BITEXT_FETCH,
    BITEXT_SETS,
    NliTemplates,
    TsvTemplates,
    XlmtTweets,
    XnliXtreme,
    bitext_set,
)
from bridgeembed.crosslingual.transfer import TransferEvaluator, parse_langs, parse_train_sets
from bridgeembed.errors import ConfigError, DataError, positive_int
from bridgeembed.paths import check_output, data_root, default_out, missing_data

if TYPE_CHECKING:  # for annotations only
    from bridgeembed.crosslingual.sources import Source

logger = logging.getLogger(__name__)
DEFAULT_SET = "test_2016"  # retrieval's and neutrality's set without --set or --template


def parse_floats(value: str, what: str) -> tuple:
    try:
        return tuple(float(v) for v in value.split(","))
    except ValueError:
        raise ConfigError(f"{what} must be comma-separated numbers, got {value!r}") from None


def add_task_options(parser: argparse.ArgumentParser, task: str) -> None:
    """What every crosslingual command takes (--model also takes `majority`, the majority-class baseline;
    several --heads views write one set of files each)."""
    add_options(parser, "--model", "--data", "--heads", "--batch-size", "--device", bench=True)
    parser.add_argument("--out", help=f"output folder (default: results/{task}/MODEL)")
    parser.add_argument("--limit", type=int, help="use only the first N examples of every file (quick checks)")


def add_classifier(parser: argparse.ArgumentParser, train_default: list[str]) -> None:
    parser.add_argument("--train-langs", nargs="+", default=train_default,
                        help="comma-separated training-language sets, e.g. en,en+de,en+de+fr (one row each; "
                             "the old space-separated form still works; default: en)")
    parser.add_argument("--test-langs", default="en,de,fr,es",
                        help="comma-separated test languages (default: en,de,fr,es)")
    parser.add_argument("--c-grid", default="0.001,0.01,0.1,1,10",
                        help="L2 strengths C tried on the held-out part (default: 0.001,0.01,0.1,1,10)")
    parser.add_argument("--heldout", type=float, default=0.1,
                        help="fraction of training examples held out to pick C (default: 0.1)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the random held-out split that picks C (default: 0)")


def _out(args: argparse.Namespace, task: str) -> Path:
    """The output folder, checked (callers check it before loading anything). Retrieval and neutrality on a
    named set, the default test_2016 included, write to a folder of the set's name below the model's
    (results/retrieval/MODEL/test_2016, .../pud): every set has its own, none inside another's."""
    folder = default_out(task, args.model)
    if hasattr(args, "set") and not getattr(args, "template", None):
        folder = Path(folder) / (args.set or DEFAULT_SET)
    return check_output(args.out if args.out else folder, "--out", "folder")


def _check_common(args: argparse.Namespace, task: str) -> Path:
    """What every crosslingual command checks before reading data or loading a model: -> the output folder."""
    if args.limit is not None:
        positive_int(args.limit, "--limit", "the first N examples of every file")
    return _out(args, task)


def _transfer(args: argparse.Namespace, task: str, source: Source, fetched: tuple | None = None) -> int:
    """`fetched`: (what, bridgeembed-data command) of a source below the data root: when its folder is not
    there at all, one line says so, with --data and the command (some files missing: those are skipped)."""
    _check_common(args, task)
    if fetched and not Path(source.folder).is_dir():
        raise DataError(missing_data(f"{task}: {fetched[0]}", data_root(args.data), f"{source.location}/",
                                     fetched[1]))
    heads, mean_row = bench_heads(args.heads)
    encoder, classifier = encoder_and_classifier(args.model, args.device)
    config = ClassifierConfig(parse_floats(args.c_grid, "--c-grid"), args.heldout, args.seed)
    evaluator = TransferEvaluator(source, parse_train_sets(args.train_langs), parse_langs(args.test_langs),
                                  classifier=classifier, config=config, heads=heads, batch_size=args.batch_size,
                                  limit=args.limit, task=task, model=args.model, mean_row=mean_row)
    results = evaluator(encoder, output_path=_out(args, task))
    print(views_markdown(results) if len(results) > 1 else to_markdown(transfer_table(results[0])))
    logger.info("results in %s", _out(args, task))
    return 0


class Xnli:
    """Crosslingual NLI (Table 6): logistic regression on [u, v, |u-v|, u*v]."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_task_options(parser, "xnli")
        add_classifier(parser, ["en"])
        parser.add_argument("--train-split", default="dev", help="XTREME split to train on (default: dev)")
        parser.add_argument("--test-split", default="test", help="XTREME split to test on (default: test)")
        parser.add_argument("--train-template",
                            help="premise<TAB>hypothesis<TAB>label files instead, e.g. 'mnli/train-{lang}.tsv' "
                                 "(MultiNLI, XNLI-MT); needs --test-template")
        parser.add_argument("--test-template", help="labelled test files with {lang}, used with --train-template")

    def run(self, args: argparse.Namespace) -> int:
        if bool(args.train_template) != bool(args.test_template):
            raise ConfigError("--train-template and --test-template go together")
        if args.train_template:
            source = NliTemplates(args.train_template, args.test_template)
        else:
            source = XnliXtreme.under(data_root(args.data), train_split=args.train_split, test_split=args.test_split)
            return _transfer(args, "xnli", source, fetched=("XNLI", "xnli"))
        return _transfer(args, "xnli", source)


class Sentiment:
    """Crosslingual sentiment (Table 7): logistic regression on sentence vectors, trained on English."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_task_options(parser, "sentiment")
        add_classifier(parser, ["en"])
        parser.add_argument("--dir", help="xlm-t layout folder (default: DATA/reviews/xlm-t-umsab-tweets)")
        parser.add_argument("--train-split", default="train", help="xlm-t split to train on (default: train)")
        parser.add_argument("--test-split", default="test", help="xlm-t split to test on (default: test)")
        parser.add_argument("--train-template", help="text<TAB>label files instead, e.g. 'yelp/{lang}.train.tsv'; "
                                                     "needs --test-template")
        parser.add_argument("--test-template", help="labelled test files with {lang}, used with --train-template")
        parser.add_argument("--labels", help="comma-separated label set of the template files "
                                             "(default: the labels of the first training file)")

    def run(self, args: argparse.Namespace) -> int:
        if bool(args.train_template) != bool(args.test_template):
            raise ConfigError("--train-template and --test-template go together")
        if args.train_template:
            labels = [v.strip() for v in args.labels.split(",") if v.strip()] if args.labels else None
            source = TsvTemplates(args.train_template, args.test_template, labels)
        elif args.dir:
            source = XlmtTweets(Path(args.dir), args.train_split, args.test_split)
        else:
            source = XlmtTweets.under(data_root(args.data), train_split=args.train_split, test_split=args.test_split)
            return _transfer(args, "sentiment", source, fetched=("the xlm-t tweet sentiment sets", "reviews"))
        return _transfer(args, "sentiment", source)


def read_parallel(args: argparse.Namespace) -> tuple:
    """--langs/--template/--limit -> ({lang: lines}, {lang: path}, {lang: why skipped})."""
    if args.template and args.set:
        raise ConfigError("give --set (a named set) or --template (your own files), not both")
    name, langs = args.set or DEFAULT_SET, parse_langs(args.langs)
    template = args.template or bitext_set(data_root(args.data), name)
    paths, skipped = find_bitext(template, langs)
    if len(paths) < 2 and not args.template and len(langs) >= 2:  # a named set not there: one line, with the way
        found = f"; found only {', '.join(paths)}" if paths else ""
        raise DataError(missing_data(f"{args.command}: the {name} set", data_root(args.data),
                                     f"{BITEXT_SETS[name]} for {', '.join(skipped)}{found}", BITEXT_FETCH[name]))
    if len(paths) < 2:  # say what was found too: `--langs en` alone had an empty reason
        found = [f"found only {', '.join(paths)}"] if paths else []
        raise DataError(f"{args.command} needs files in two languages: "
                        + "; ".join([*skipped.values(), *found]) + ("; give two or more with --langs, e.g. en,de"
                                                                     if len(langs) < 2 else ""))
    if skipped:  # one line for the languages left out
        logger.warning("skipping %s: %s", ", ".join(skipped), "; ".join(skipped.values()))
    lines = read_bitext(paths)
    if args.limit:
        lines = {lang: rows[: args.limit] for lang, rows in lines.items()}
    return lines, paths, skipped


def add_parallel(parser: argparse.ArgumentParser, task: str) -> None:
    add_task_options(parser, task)
    parser.add_argument("--langs", default="en,de,fr,cs", help="comma-separated languages (default: en,de,fr,cs)")
    parser.add_argument("--set", choices=sorted(BITEXT_SETS),
                        help="a named set under the data root: " + ", ".join(f"{k} ({v})" for k, v in
                                                                         BITEXT_SETS.items())
                             + f"; results go to results/{task}/MODEL/SET unless --out (default: {DEFAULT_SET})")
    parser.add_argument("--template", help="line-aligned (multi-way parallel) files with {lang}, instead of a --set; "
                                           f"results go to results/{task}/MODEL unless --out "
                                           "(default: --set's, DATA/multi30k/test_2016_flickr.{lang}.gz)")
    parser.add_argument("--scoring", default="cosine",
                        help=f"how the nearest neighbour is picked: {', '.join(CHOICES)} (cosine; the ratio margin "
                             f"of Artetxe & Schwenk 2019 with k = {K}, as in LASER; both: one set of files each, "
                             "margin ones named *_margin.*; default: cosine)")
    parser.set_defaults(command=task)


def _parallel_bench(args: argparse.Namespace, task: str, evaluator_class: type, render: Callable[[object], str]) -> int:
    """The shared run of retrieval and neutrality: read the files, load the encoder, score every view, write."""
    if args.model == MAJORITY:
        raise ConfigError(f"'majority' is a classifier baseline; {task} needs an encoder")
    _check_common(args, task)
    heads, mean_row = bench_heads(args.heads)
    scoring = parse_scoring(args.scoring, what="--scoring")
    lines, paths, skipped = read_parallel(args)
    encoder, _ = encoder_and_classifier(args.model, args.device)
    evaluator = evaluator_class(lines, files=paths, heads=heads, batch_size=args.batch_size, model=args.model,
                                skipped=skipped, scoring=scoring, mean_row=mean_row)
    for result in evaluator(encoder, output_path=_out(args, task)):
        print(render(result))
    logger.info("results in %s", _out(args, task))
    return 0


class Retrieval:
    """Bitext retrieval: nearest neighbour by cosine or margin, both directions of every language pair."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_parallel(parser, "retrieval")

    def run(self, args: argparse.Namespace) -> int:
        return _parallel_bench(args, "retrieval", RetrievalEvaluator, lambda r: to_markdown(retrieval_table(r)))


class Neutrality:
    """Language neutrality: pair and mixed-pool retrieval, cosines, a language-ID probe; raw and centred."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_parallel(parser, "neutrality")

    def run(self, args: argparse.Namespace) -> int:
        from bridgeembed.crosslingual.neutrality import NeutralityEvaluator, markdown

        return _parallel_bench(args, "neutrality", NeutralityEvaluator, markdown)


xnli = Xnli()
sentiment = Sentiment()
retrieval = Retrieval()
neutrality = Neutrality()
