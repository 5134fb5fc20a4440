"""Keep general-m2m's tokenizers for the new training text, or learn new ones from all of it? (issue 47)

For every training folder of the data root (the 12 new ones included; PUD, an evaluation set, never), per
language, on its first --lines lines: the subword pieces a whitespace word and the share of unknown pieces,
under the shipped model's tokenizers and under tokenizers of the same size learnt from every training folder's
text (up to --sample lines a language, the new folders included). New tokenizers would mean new ids, so
the trained weights could not be kept as they are: they pay only where the shipped ones fit the new text badly.

    BRIDGEEMBED_DATA=../shared/data python docs/history/studies/tokenizer_fit.py \\
        --json docs/results/new-text/tokenizer-fit.json

--lines 50 --sample 2000 is the test's mode (small tokenizers, a few lines a folder).
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

from bridgeembed.cli.scripts import parse_script, script_parser, write_json

NEW = ("django-l10n", "europarl-v7-en-de", "mlqe-pe-en-de", "mozilla-www", "python-docs-en-fr", "tico19-en-fr",
       "tldr-en-cs", "tldr-en-de", "tldr-en-fr", "wmt15-sample-en-de", "wmt20-chat-en-de", "xquad-en-de")
OLD = ("multi30k", "newstest-4way", "newstest-en-de", "newstest-en-fr", "newstest-en-cs", "tatoeba-en-de",
       "tatoeba-en-fr", "tatoeba-en-cs", "europarl-comtrans", "gnome-help")
LANGUAGES = ("en", "de", "fr", "cs")


def read(path: Path, limit: int) -> list:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        out = []
        for line in handle:
            if limit and len(out) >= limit:
                break
            out.append(line.rstrip("\n"))
    return out


def fit(tokenizer: object, lines: list) -> dict:
    """Pieces a whitespace word and unknown pieces (%) of `tokenizer` on `lines`."""
    from bridgeembed.text.tokenization import UNK

    ids = tokenizer.encode_many(lines)
    pieces, words = sum(map(len, ids)), sum(len(line.split()) for line in lines)
    return {"pieces_a_word": round(pieces / max(words, 1), 3),
            "unknown_percent": round(100 * sum(x.count(UNK) for x in ids) / max(pieces, 1), 3)}


def main(argv: list | None = None) -> int:
    parser = script_parser(__doc__, "--data", first_paragraph=True, json_out=True)
    parser.add_argument("--model", default="general-m2m")
    parser.add_argument("--lines", type=int, default=2000, help="lines of each folder measured (default 2,000)")
    parser.add_argument("--sample", type=int, default=300000, help="lines a language the new tokenizers learn from")
    args = parse_script(parser, argv)
    from bridgeembed import BridgeEncoder
    from bridgeembed.paths import data_root
    from bridgeembed.text.tokenization import LanguageTokenizer

    root, encoder = data_root(args.data), BridgeEncoder(args.model)
    size = encoder.tokenizers["en"].vocab_size
    folders = {name: [lang for lang in LANGUAGES if (root / name / f"train.{lang}.gz").exists()]
               for name in (*OLD, *NEW) if (root / name).is_dir()}
    text = {lang: [] for lang in LANGUAGES}  # every folder's training text, for the new tokenizers
    for name, langs in folders.items():
        for lang in langs:
            text[lang] += read(root / name / f"train.{lang}.gz", args.sample)
    learnt = {lang: LanguageTokenizer.train(lang, lines[:: max(1, len(lines) // args.sample)], size)
              for lang, lines in text.items() if lines}
    rows = []
    for name, langs in folders.items():
        for lang in langs:
            lines = read(root / name / f"train.{lang}.gz", args.lines)
            rows.append({"folder": name, "new": name in NEW, "lang": lang, "lines": len(lines),
                         "shipped": fit(encoder.tokenizers[lang], lines), "learnt": fit(learnt[lang], lines)})
    print("| folder | lang | new | pieces a word: shipped / learnt | unknown %: shipped / learnt |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['folder']} | {r['lang']} | {'yes' if r['new'] else ''} | {r['shipped']['pieces_a_word']:.2f} / "
              f"{r['learnt']['pieces_a_word']:.2f} | {r['shipped']['unknown_percent']:.2f} / "
              f"{r['learnt']['unknown_percent']:.2f} |")
    write_json(args.json, {"model": args.model, "vocab_size": size, "lines": args.lines, "sample": args.sample,
                           "rows": rows,
                           "command": "python docs/history/studies/tokenizer_fit.py " + " ".join(sys.argv[1:])})
    return 0


if __name__ == "__main__":
    sys.exit(main())
