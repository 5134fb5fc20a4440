"""The vocabulary size of a recipe, chosen by measurement (issue 42): pieces a word and dev retrieval.

For each size in --sizes, trains CONFIG from scratch with `tokenizer.vocab_size` set to it (tokenizers learnt as
the recipe learns them, `data.tokenizer_text` included) for --steps steps in OUT/vocab-SIZE, through
`bridgeembed-train`, so that a stopped measurement resumes where it was: run the same command again. Then scores
the run's last.pt on the recipe's dev sets as `benchmarks/dev_retrieval.py` does (their mean chooses; PUD and test_2016
are reported beside, never chosen by) and counts the pieces a word of its tokenizers on each dev set. Every
size gets the same steps, batches and seed: the sizes differ in their tokenizers alone. A short run favours a
small vocabulary (fewer embeddings to learn), so the table says which size learns fastest at this budget, not
which ends best; the seconds a size took are reported too.

    BRIDGEEMBED_DATA=../shared/data BRIDGEEMBED_CACHE=... python docs/history/studies/vocab_size.py \\
        configs/general-m2m.yaml \\
        --sizes 4000,8000,16000 --steps 1500 --out runs/vocab --set train.translate_share=0.5 \\
        --json docs/results/vocab/vocab-size.json

`--dry` trains the tests' toy corpus for a few steps (no data needed).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from bridgeembed import BridgeEncoder
from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from bridgeembed.config import Config
from bridgeembed.crosslingual.dev_retrieval import REPORT_SETS, evaluation_sets, score_sets

REPO = Path(__file__).resolve().parents[3]


def train(config: str, size: int, out: Path, steps: int, threads: int, data: str | None, extra: list) -> float:
    """Seconds `bridgeembed-train` took to bring OUT to `steps` steps at vocabulary `size` (a run already
    there resumes, or ends at once)."""
    overrides = [f"tokenizer.vocab_size={size}", f"train.out_dir={out}", f"train.max_steps={steps}",
                 f"train.threads={threads}", f"train.valid_every={10 * steps}", f"train.save_every={min(250, steps)}",
                 "train.patience=0", "train.valid_sentences=20", "train.init_from=''", *extra]
    env = {**os.environ, **({"BRIDGEEMBED_DATA": data} if data else {})}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "bridgeembed.cli.train", config, *overrides], env=env)
    if done.returncode != 0:
        raise SystemExit(f"error: training vocabulary {size} failed (exit {done.returncode}); its run is in {out}: "
                         f"run the same command again to resume")
    return time.perf_counter() - start


def pieces_a_word(encoder: BridgeEncoder, sets: dict) -> dict:
    """{set: {lang: pieces a whitespace word}} of the encoder's tokenizers on each set."""
    found = {}
    for name, lines in sets.items():
        found[name] = {}
        for lang, text in lines.items():
            words = sum(len(line.split()) for line in text)
            pieces = sum(len(encoder.tokenizers[lang].encode(line)) for line in text)
            found[name][lang] = pieces / max(words, 1)
    return found


def measure(run: Path, sets: dict, lines: int) -> dict:
    """Dev retrieval of the run's last.pt as `benchmarks/dev_retrieval.py` scores it, and its tokenizers' pieces a
    word."""
    encoder = BridgeEncoder(str(run / "last.pt"))
    sets = {name: {lang: text[:lines] for lang, text in by_lang.items() if lang in encoder.languages}
            for name, by_lang in sets.items()}
    row, ppw = score_sets(encoder, sets, lines), pieces_a_word(encoder, sets)
    return {**row, "pieces_a_word": {name: float(np.mean(list(v.values()))) for name, v in ppw.items()},
            "pieces_a_word_by_lang": ppw}


def dry_config(folder: Path) -> str:
    """The tests' toy recipe as a YAML file (two made-up languages, a few hundred lines)."""
    sys.path.insert(0, str(REPO))
    from tests.helpers.toy import toy_config, write_toy_corpus

    config = toy_config(write_toy_corpus(folder / "corpus", n_train=300), folder / "run")
    path = folder / "toy.yaml"
    path.write_text(yaml.safe_dump(config.to_dict()), encoding="utf-8")
    return str(path)


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--data", first_paragraph=True,
                           dry="the tests' toy corpus for a few steps, no data", json_out=True)
    parser.add_argument("config", nargs="?", help="the recipe (YAML)")
    parser.add_argument("--sizes", default="4000,8000,16000", help="vocabulary sizes a language (default: "
                                                                   "4000,8000,16000)")
    parser.add_argument("--steps", type=int, default=1500, help="training steps a size (default: 1500)")
    parser.add_argument("--out", help="the runs' folder (a size's run in OUT/vocab-SIZE)")
    parser.add_argument("--lines", type=int, default=1000, help="dev sentences a set and language (default: 1000)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="another override for every size's training (repeatable)")
    args = parse_script(parser, argv)
    command = shlex.join(["python", "docs/history/studies/vocab_size.py", *(sys.argv[1:] if argv is None else argv)])
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes {args.sizes!r}: expected sizes separated by commas, e.g. 4000,8000,16000")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        if args.dry:  # the toy corpus beside the runs, so that a second call resumes them
            args.config = dry_config(out / "toy")
            args.set.append(f"train.cache_dir={out / 'toy' / 'cache'}")
        elif not args.config or not args.out:
            parser.error("give a CONFIG and --out (or --dry)")
        sets = evaluation_sets(Config.from_yaml(args.config), args.data, report=not args.dry)
        rows = []
        print("| vocabulary | " + " | ".join(sets) + " | dev mean | pieces a word (dev sets) | seconds |")
        print("|---" * (len(sets) + 4) + "|")
        for size in sizes:
            run = out / f"vocab-{size}"
            seconds = train(args.config, size, run, args.steps, args.threads, args.data, args.set)
            row = {"vocab_size": size, "steps": args.steps, "seconds": seconds,
                   **measure(run, sets, args.lines)}
            rows.append(row)
            dev_ppw = np.mean([v for name, v in row["pieces_a_word"].items() if name not in REPORT_SETS])
            print(f"| {size} | " + " | ".join(f"{v:.1f}" for v in row["sets"].values())
                  + f" | {row['dev_mean']:.2f} | {dev_ppw:.3f} | {seconds:.0f} |", flush=True)
            write_json(args.json, {"command": command, "config": args.config, "steps": args.steps,
                                   "overrides": args.set, "sizes": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
