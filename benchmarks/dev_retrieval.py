"""Translation retrieval on a training config's own dev sets, for checkpoints of its run (issue 42): the same
as `bridgeembed-bench dev-retrieval` (bridgeembed/cli/dev_retrieval.py, on `bridgeembed.crosslingual.dev_retrieval`),
under the name the docs and the GPU plans call it by.

    BRIDGEEMBED_DATA=../shared/data python benchmarks/dev_retrieval.py configs/general-m2m.yaml \\
        runs/general-m2m/step1000.pt runs/other/step1000.pt --lines 1000 --json results/dev.json

`--dry` scores made-up sentences (the test's mode).
"""

import sys

from bridgeembed.cli.bench import main

if __name__ == "__main__":
    sys.exit(main(["dev-retrieval", *sys.argv[1:]]))
