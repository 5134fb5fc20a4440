"""The harness against a sequential reading of SentEval, seed by seed, on TREC and MRPC (docs/senteval.md).

For each seed: the test accuracy of the stacked harness (`protocols.kfold`) and of the sequential
reference (`senteval.reference.sequential_kfold`, one nn.Linear at a time, as SentEval trains),
the L2 strength each chose, and where the reference's final fit stopped (the check whose dev
accuracy won, the last check, and the test accuracy at both).

    python docs/history/studies/senteval_fidelity.py --model general-m2m --data ../shared/data --seeds 5 --threads 1
"""

import logging

from bridgeembed.cli.scripts import parse_script, script_parser, write_json
from bridgeembed.evaluation.encoding import EncodingCache
from bridgeembed.evaluation.models import load_encoder
from bridgeembed.senteval import protocols
from bridgeembed.senteval.config import get_config, seeds
from bridgeembed.senteval.encoding import encode_task
from bridgeembed.senteval.reference import sequential_kfold
from bridgeembed.senteval.tasks import TASKS, Dirs, stack


def features(encoder, name: str, dirs: Dirs):
    """Task `name` -> (X (1, N, F) tensor, y (N,), train rows, test rows, classes)."""
    task = TASKS[name]
    loaded = task.load(dirs)
    emb = encode_task(EncodingCache(encoder), list(task.sentences(loaded)), "en", name, "cpu")
    X, y, rows = stack(emb, loaded, ["train", "test"], task.pair)
    return X, y, rows["train"], rows["test"], task.nclasses


def main(argv=None) -> int:
    parser = script_parser(__doc__, "--model", "--data")
    parser.add_argument("--tasks", default="TREC,MRPC")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", help="write every figure here as JSON")
    args = parse_script(parser, argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    encoder, spec, out = load_encoder(args.model, device="cpu"), get_config("default").classifier, {}
    for name in args.tasks.split(","):
        X, y, train, test, nclasses = features(encoder, name, Dirs.under(args.data))
        print(f"\n{name}\n\n| seed | harness | L2 | reference | L2 | best check | last check | test at best / last |")
        print("|---|---|---|---|---|---|---|---|")
        for seed in seeds(args.seeds):
            ours = protocols.kfold(X, y, train, test, nclasses, spec, 10, seed, range(1))[0]
            x = X[0].numpy()
            ref = sequential_kfold(x[train], y[train], x[test], y[test], nclasses, spec, 10, seed)
            trace = ref.final.trace  # (passes, dev, test)
            best = max(range(len(trace)), key=lambda i: (trace[i][1], -i))  # the first check with the best dev
            print(f"| {seed} | {ours.acc:.2f} | {ours.l2reg:g} | {ref.acc:.2f} | "
                  f"{ref.l2reg:g} | {trace[best][0]} | {trace[-1][0]} | "
                  f"{100 * trace[best][2]:.1f} / {100 * trace[-1][2]:.1f} |", flush=True)
            out.setdefault(name, []).append({"seed": seed, "harness": ours.acc, "reference": ref.acc,
                                             "reference_dev_by_reg": ref.devacc_by_reg, "trace": trace})
    write_json(args.out, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
