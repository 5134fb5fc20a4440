"""What int8 storage (`bridgeembed-export --int8`, bridgeembed/storage.py) costs a model: the figures of the
model as it is and of its int8 export, side by side, and the largest change. The rule for storing a shipped
model smaller (issue 29): every retrieval figure within 0.1 point and test BLEU within 0.1.

    BRIDGEEMBED_DATA=../shared/data python benchmarks/int8_storage.py general-m2m --out results/int8 \\
        --dev 'europarl=dev/europarl.{lang}' --dev 'gnome=dev/gnome.{lang}' --bleu

Retrieval: `bridgeembed-bench domains` (`crosslingual.domains`) on test_2016, val, PUD and the dev sets (mean and
worst of the ordered pairs). `--bleu`: `bridgeembed-translate --evaluate --beam 5` on test_2016_flickr, every
direction, for both (about 25 minutes a model on one thread); a model without decoders is compared on retrieval only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bridgeembed.cli.scripts import parse_script, script_parser
from bridgeembed.crosslingual.domains import SETS, figures, label, model_results, parse_dev, templates
from bridgeembed.paths import data_root


def bleu(model: str, out: Path, threads: int) -> dict:
    """{direction: BLEU} of test_2016_flickr, beam 5 (reused when out holds it)."""
    found = out / "bleu.json"
    if not found.is_file():
        subprocess.run([sys.executable, "-m", "bridgeembed.cli.translate", "--model", model, "--evaluate",
                        "--corpus", "multi30k", "--split", "test_2016_flickr", "--beam", "5", "--threads",
                        str(threads), "--quiet", "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    return {name: entry["bleu"] for name, entry in json.loads(found.read_text())["directions"].items()}


def main(argv: list | None = None) -> int:
    parser = script_parser(__doc__, first_paragraph=True)
    parser.add_argument("model", help="a model name, checkpoint or folder")
    parser.add_argument("--out", default="results/int8", help="results folder (default: results/int8)")
    parser.add_argument("--dev", action="append", default=[], metavar="NAME=TEMPLATE",
                        help="a dev set of line-aligned files with {lang}, as benchmarks/domains.py takes")
    parser.add_argument("--bleu", action="store_true", help="also test BLEU, beam 5 (slow)")
    args = parse_script(parser, argv)
    out = Path(args.out)
    small = out / f"{label(args.model)}-int8"
    if not (small / "config.json").is_file():
        subprocess.run([sys.executable, "-m", "bridgeembed.cli.export", args.model, str(small), "--int8"], check=True)
    dev = parse_dev(args.dev)
    sets, rows = templates(dev, data_root(None)), []
    results = {name: model_results(model, out / "retrieval", sets)
               for name, model in (("as it is", args.model), ("int8", str(small)))}
    for split in SETS + tuple(dev):
        a, b = figures(results["as it is"][split]), figures(results["int8"][split])
        for kind in ("mean", "worst"):
            rows.append((f"{split} {kind}", a[kind], b[kind]))
        if split == "pud":
            rows += [(f"pud {pair}", a["pairs"][pair], b["pairs"][pair]) for pair in ("en-de", "de-en")]
    if args.bleu:
        with_decoders = json.loads((small / "config.json").read_text())["decoder_languages"]
        if with_decoders:
            a, b = bleu(args.model, out / "bleu" / label(args.model), args.threads), bleu(
                str(small), out / "bleu" / small.name, args.threads)
            shared = sorted(set(a) & set(b))
            pairs = [d for d in shared if d.split("-")[0] != d.split("-")[1]]  # translations, not copies
            rows.append(("test BLEU, mean of the pairs", *(sum(x[d] for d in pairs) / len(pairs) for x in (a, b))))
            rows += [(f"test BLEU {d}", a[d], b[d]) for d in shared]
    size = (small / "model.safetensors").stat().st_size / 1e6
    print(f"| figure | {label(args.model)} | int8 | change |\n|---|---|---|---|")
    for name, a, b in rows:
        print(f"| {name} | {a:.2f} | {b:.2f} | {b - a:+.2f}{' **' if abs(round(b - a, 1)) > 0.1 else ''} |")
    print(f"\nint8 weights: {size:.1f} MB ({small}). ** : a change over 0.1 (the issue's rule)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
