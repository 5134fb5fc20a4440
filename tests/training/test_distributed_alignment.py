"""The alignment loss under DistributedDataParallel: both encoders it uses get their gradients
synchronised (the partner is encoded inside the DDP forward), so the ranks stay identical.

Two processes do not equal one process here, by design: each rank's contrastive loss takes its
negatives from its own half of the batch."""

import json
import os
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

from tests.training.test_distributed import _free_port

pytestmark = pytest.mark.distributed


def _worker(rank, corpus, out, port, extra=None):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    from bridgeembed.training.distributed import World, shutdown
    from bridgeembed.training.trainer import Trainer
    from tests.helpers.toy import toy_config

    config = toy_config(corpus, out, max_steps=8, valid_every=100, save_every=100, batch_size=64, threads=1,
                        align_weight=1.0, log_every=4, **(extra or {}))
    trainer = Trainer.from_config(config, world=World(rank, 2, rank), show_progress=False)
    trainer.train()
    torch.save(trainer.model.state_dict(), Path(out) / f"rank{rank}.pt")
    shutdown()  # as bridgeembed-train ends: a barrier, then the groups destroyed


@pytest.mark.parametrize("extra", [{}, {"hard_negatives": 2, "align_pool": 2, "translate_share": 0.5}],
                         ids=["plain", "hard-negatives-and-pool"])
def test_alignment_trains_under_ddp_and_ranks_agree(toy_corpus, tmp_path, extra):
    """With train.hard_negatives, rank 0 mines each step's batch and every rank trains on its part of it: the ranks
    must agree on the batch, or their weights part."""
    mp.spawn(_worker, args=(str(toy_corpus), str(tmp_path), _free_port(), extra), nprocs=2, join=True)
    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in (0, 1)]
    for name, value in ranks[0].items():
        assert torch.equal(value, ranks[1][name]), name  # gradients were averaged over both ranks
        assert torch.isfinite(value).all(), name
    train = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines() if '"train"' in line]
    assert train and all(r["align"] > 0 for r in train)
