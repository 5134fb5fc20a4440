"""Which language identifier `encode(sentences)` without `lang` uses (issue 51): py3langid against lingua.

Both restricted to the shipped model's languages (en, de, fr, cs), scored per language on the first --limit lines
of Multi30k test_2016_flickr and PUD: whole sentences and their first 1, 2 and 3 words, with seconds per set.
py3langid is scored as the package runs it (bridgeembed.encoders.langid: a tie to the model's first language);
lingua (pip install lingua-language-detector; 96 MB installed) in its default, high-accuracy mode and in its
low-accuracy mode, each when installed (a missing one is reported, not scored).

    BRIDGEEMBED_DATA=../shared/data python docs/history/studies/langid_choice.py --limit 1000 --json choice.json
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Callable

from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from bridgeembed.crosslingual.language_id import first_words
from bridgeembed.encoders.langid import identify
from bridgeembed.paths import data_root

LANGS = ["en", "de", "fr", "cs"]
SETS = {"test_2016": "multi30k/test_2016_flickr.{}.gz", "pud": "pud/test.{}.gz"}
INPUTS = {"sentence": None, "1 word": 1, "2 words": 2, "3 words": 3}


def lingua_identifiers() -> dict:
    """{name: sentences -> codes} for lingua's two modes, or {} when lingua is not installed."""
    try:
        from lingua import Language, LanguageDetectorBuilder
    except ImportError:
        return {}
    codes = {Language.ENGLISH: "en", Language.GERMAN: "de", Language.FRENCH: "fr", Language.CZECH: "cs"}
    high = LanguageDetectorBuilder.from_languages(*codes).build()
    low = LanguageDetectorBuilder.from_languages(*codes).with_low_accuracy_mode().build()
    return {name: (lambda texts, d=detector: [codes.get(d.detect_language_of(t)) for t in texts])
            for name, detector in (("lingua", high), ("lingua-low", low))}


def score(identifier: Callable, lines: dict) -> dict:
    """{input: {lang: accuracy}, "seconds": {input: s}} of one identifier on {lang: sentences}."""
    out, seconds = {}, {}
    for name, words in INPUTS.items():
        start, out[name] = time.perf_counter(), {}
        for lang, rows in lines.items():
            texts = rows if words is None else [first_words(s, words) for s in rows]
            out[name][lang] = sum(code == lang for code in identifier(texts)) / len(texts)
        seconds[name] = time.perf_counter() - start
    return {**out, "seconds": seconds}


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--data", first_paragraph=True, threads=False, json_out=True)
    parser.add_argument("--limit", type=int, default=1000, help="lines of every file (default: 1000)")
    args = parse_script(parser, argv, libraries=())
    root = data_root(args.data)
    identifiers = {"py3langid": lambda texts: identify(texts, LANGS), **lingua_identifiers()}
    if "lingua" not in identifiers:
        print("lingua is not installed (pip install lingua-language-detector): py3langid alone")
    results = {}
    for set_name, template in SETS.items():
        lines = {}
        for lang in LANGS:
            with gzip.open(root / template.format(lang), "rt", encoding="utf-8") as f:
                lines[lang] = [line.rstrip("\n") for _, line in zip(range(args.limit), f)]
        for identifier in identifiers.values():  # loaded before the clock starts (py3langid: 2.5 s)
            identifier(["warm up", "Aufwärmen"])
        results[set_name] = {name: score(identifier, lines) for name, identifier in identifiers.items()}
        for name, table in results[set_name].items():
            for input_name in INPUTS:
                cells = " ".join(f"{lang} {100 * table[input_name][lang]:5.1f}" for lang in LANGS)
                print(f"{set_name:9} {name:10} {input_name:8} {cells}  ({table['seconds'][input_name]:.2f} s)")
    write_json(args.json, {"limit": args.limit, "results": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
