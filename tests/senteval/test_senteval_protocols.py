"""SentEval protocols on synthetic features: separable classes score ~100%, random labels score
chance, k-fold splits are disjoint and cover the data, the stacked optimizers match torch.optim,
and Tai et al.'s label encoding."""

import numpy as np
import pytest
import torch

from bridgeembed.senteval import protocols, similarity
from bridgeembed.senteval.classifiers import ClassificationObjective, Job, fit_many
from bridgeembed.senteval.config import RELATEDNESS, TrainSpec, get_config
from bridgeembed.senteval.optim import make_optimizer
from bridgeembed.senteval.reference import REGS, sequential_fit, sequential_kfold

FAST = TrainSpec(nhid=0, optim="rmsprop", batch_size=32, tenacity=3, epoch_size=2, max_epoch=30)


def _data(n=400, d=8, separable=True, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    x = rng.standard_normal((n, d)).astype(np.float32)
    if separable:
        x[:, 0] += np.where(y == 1, 4.0, -4.0)
    else:
        y = rng.integers(0, 2, n)  # labels independent of x
    return torch.from_numpy(x)[None], y  # (1, N, d)


def test_stratified_folds_are_disjoint_and_cover():
    y = np.array([0, 1] * 50 + [1] * 7)
    folds = protocols.stratified_folds(y, 5, 1111)
    tests = np.concatenate([te for _, te in folds])
    assert sorted(tests) == list(range(len(y)))  # every row is tested exactly once
    for tr, te in folds:
        assert not set(tr) & set(te)
        assert len(tr) + len(te) == len(y)


def test_separable_classes_score_about_100():
    X, y = _data()
    res = protocols.inner_kfold(X, y, 2, FAST, 3, 1111, range(1))[0]
    assert res.acc > 97 and res.devacc > 97


def test_random_labels_score_chance():
    X, y = _data(n=600, separable=False)
    res = protocols.kfold(X, y, np.arange(400), np.arange(400, 600), 2, FAST, 3, 1111, range(1))[0]
    assert 35 < res.acc < 65


def test_split_protocol_scores_each_group_separately():
    X, y = _data()
    noise = torch.randn_like(X)
    both = torch.cat([X, noise])  # group 0 carries the signal, group 1 does not
    res = protocols.split(both, y, np.arange(200), np.arange(200, 300), np.arange(300, 400), 2, FAST, 1111, range(2))
    assert res[0].acc > 95
    assert res[1].acc < 75


def test_same_seed_same_result_and_mlp_trains():
    X, y = _data()
    spec = FAST.replace(nhid=16, dropout=0.1)
    a = protocols.split(X, y, np.arange(200), np.arange(200, 300), np.arange(300, 400), 2, spec, 7, range(1))
    b = protocols.split(X, y, np.arange(200), np.arange(200, 300), np.arange(300, 400), 2, spec, 7, range(1))
    assert a[0].acc == b[0].acc and a[0].acc > 95


def test_stacked_models_reproduce_sentevals_sequential_training():
    """Every model of a stack gets SentEval's initial weights and batches, so it ends where SentEval's
    classifier ends: folds of different sizes (a model waits while others finish their pass), L2
    strengths sharing a cell, a validation split, two feature groups."""
    X, y = _data(n=300, d=6)
    X = torch.cat([X, X + 0.5 * torch.randn_like(X)])  # (2, N, d)
    spec = TrainSpec(nhid=0, optim="adam", batch_size=16, tenacity=2, epoch_size=1, max_epoch=12)
    jobs = [Job(0, np.arange(150), np.arange(150, 200), 1e-3), Job(0, np.arange(150), np.arange(150, 200), 1e-2),
            Job(1, np.arange(170), np.arange(170, 220), 1e-4), Job(0, np.arange(250), None, 1e-3, 0.1)]
    fitted = fit_many(X, jobs, ClassificationObjective(y, 2), spec, 1234)
    for j, job in enumerate(jobs):
        x = X[job.group].numpy()
        dev = None if job.dev is None else (x[job.dev], y[job.dev])
        alone = sequential_fit(x[job.train], y[job.train], 2, job.l2reg, spec, 1234, dev, job.validation_split)
        assert fitted.best_metric[j] == pytest.approx(alone.best)
        torch.testing.assert_close(fitted.params[j][0], alone.model.weight.detach().T, rtol=1e-4, atol=1e-5)


def test_sequential_kfold_on_separable_data():
    X, y = _data(n=240, d=4)
    spec = TrainSpec(nhid=0, optim="adam", batch_size=32, tenacity=1, epoch_size=1, max_epoch=6)
    res = sequential_kfold(X[0, :200].numpy(), y[:200], X[0, 200:].numpy(), y[200:], 2, spec, 3, 1111)
    assert len(res.devacc_by_reg) == 4 and res.l2reg in REGS and res.acc > 90
    assert [p for p, _, _ in res.final.trace] == list(range(1, len(res.final.trace) + 1))  # a check per pass


@pytest.mark.parametrize("name,cls,kwargs", [("adam", torch.optim.Adam, {}), ("rmsprop", torch.optim.RMSprop, {"lr": 0.01}),
                                             ("sgd,lr=0.1", torch.optim.SGD, {"lr": 0.1})])
def test_stacked_optimizer_matches_torch(name, cls, kwargs):
    torch.manual_seed(0)
    w0 = torch.randn(3, 4)
    ref = w0.clone().requires_grad_()
    ref_opt = cls([ref], weight_decay=1e-2, **kwargs)
    stacked = w0[None].repeat(2, 1, 1).requires_grad_()  # two models, model axis 0
    opt = make_optimizer(name, [stacked], [0], torch.tensor([1e-2, 0.0]))
    for step in range(5):
        g = torch.randn(3, 4)
        ref.grad = g.clone()
        ref_opt.step()
        stacked.grad = g[None].repeat(2, 1, 1)
        opt.step(torch.tensor([True, step % 2 == 0]))
    torch.testing.assert_close(stacked[0].detach(), ref.detach())
    assert opt.steps.tolist() == [5.0, 3.0]  # the second model sat out two steps


def test_tai_labels():
    y = np.array([1.0, 2.5, 3.3, 5.0, 4.0])
    t = similarity.tai_labels(y)
    np.testing.assert_allclose(t.sum(1), 1.0, atol=1e-6)  # a distribution over the 5 bins
    np.testing.assert_allclose(t @ np.arange(1, 6), y, atol=1e-6)  # whose mean is the score
    np.testing.assert_allclose(t[1], [0, 0.5, 0.5, 0, 0])
    np.testing.assert_allclose(t[2], [0, 0, 0.7, 0.3, 0], atol=1e-6)
    np.testing.assert_allclose(t[3], [0, 0, 0, 0, 1])


def test_relatedness_learns_scores():
    rng = np.random.default_rng(0)
    n = 300
    scores = rng.uniform(1, 5, n).astype(np.float32)
    X = torch.from_numpy(np.c_[scores, rng.standard_normal((n, 3))].astype(np.float32))[None]
    spec = RELATEDNESS.replace(epoch_size=5, max_epoch=100, optim="adam,lr=0.01")  # SentEval: 50 and 1000, lr 1e-3
    res = similarity.relatedness(X, scores, np.arange(200), np.arange(200, 250), np.arange(250, 300), 1111, range(1), spec)[0]
    assert res["pearson"] > 0.9 and res["devpearson"] > 0.9


def test_identical_sts_pairs_correlate_at_one():
    """Pairs built so that cosine(u, v) = gold / 5 exactly: Pearson and Spearman must be 1, not just > 0.5."""
    torch.manual_seed(0)
    n, d = 50, 6
    u = torch.randn(1, n, d, dtype=torch.float64)
    w = torch.randn(1, n, d, dtype=torch.float64)
    w = w - (w * u).sum(-1, keepdim=True) / (u * u).sum(-1, keepdim=True) * u  # orthogonal to u
    gold = np.linspace(0.2, 5, n)
    angle = torch.as_tensor(np.arccos(gold / 5))[None, :, None]
    v = torch.cos(angle) * u / u.norm(dim=-1, keepdim=True) + torch.sin(angle) * w / w.norm(dim=-1, keepdim=True)
    result = similarity.sts({"linear": (u, v, gold), "reversed": (u, v, gold[::-1].copy()),
                             "constant": (u, u.clone(), np.full(n, 5.0))}, 1)[0]
    assert result["linear.pearson"] == pytest.approx(1.0, abs=1e-9)
    assert result["linear.spearman"] == pytest.approx(1.0, abs=1e-9)
    assert result["reversed.pearson"] < -0.9 and result["reversed.spearman"] == pytest.approx(-1.0, abs=1e-9)
    assert result["constant.pearson"] == 0.0  # undefined correlation -> 0, as SentEval's nan_to_num
    assert result["pearson"] == pytest.approx((1.0 + result["reversed.pearson"]) / 3, abs=1e-9)
    same = similarity.cosine(u, u.clone())
    torch.testing.assert_close(same, torch.ones_like(same))


def test_configs():
    assert get_config("default").kfold == 10 and get_config("default").classifier.optim == "adam"
    proto = get_config("prototype")
    assert (proto.kfold, proto.classifier.batch_size, proto.classifier.tenacity, proto.classifier.epoch_size) == (5, 128, 3, 2)
    assert proto.probing.nhid == 200 and proto.probing.dropout == 0.1


def test_a_task_too_small_for_its_folds_is_one_line():
    """Issue 31: a subset (BRIDGEEMBED_SENTEVAL_ANY_SIZE=1) smaller than its folds was a traceback of sklearn."""
    from bridgeembed.errors import DataError

    with pytest.raises(DataError, match=r"^6 examples \(at most 3 of a class\): too few for 10-fold cross-validation"):
        protocols.stratified_folds(np.array([0, 1, 0, 1, 0, 1]), 10, 1111)
    assert len(protocols.stratified_folds(np.array([0, 1] * 5), 5, 1111)) == 5
