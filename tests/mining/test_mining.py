"""Bitext mining and semantic search (bridgeembed/mining): the FAISS path agrees exactly with a brute-force
numpy margin on small random data, planted translations are found among distractors, approximate
indexes come close to exact search, and bad arguments are errors that name them."""

import numpy as np
import pytest

pytest.importorskip("faiss", reason="faiss-cpu is not installed (pip install 'bridgeembed[mining]')")

from bridgeembed.crosslingual.margin import knn_mean  # noqa: E402
from bridgeembed.errors import ConfigError, DataError  # noqa: E402
from bridgeembed.mining import IndexConfig, Vectors, mine, semantic_search  # noqa: E402
from bridgeembed.mining.knn import knn  # noqa: E402
from bridgeembed.mining.mine import neighbourhood_mean  # noqa: E402


def unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def brute_force(src, tgt, k, scoring, retrieval):
    """The paper's mining written out on the full N x M matrix (what the library must never build)."""
    x, y = unit(src.astype(np.float64)), unit(tgt.astype(np.float64))
    cos = x @ y.T  # (N, M)
    kx, ky = min(k, len(y)), min(k, len(x))
    mx = np.sort(cos, axis=1)[:, -kx:].mean(axis=1)  # (N,) mean of each source's k nearest targets
    my = np.sort(cos, axis=0)[-ky:, :].mean(axis=0)  # (M,) mean of each target's k nearest sources
    denom = (mx[:, None] + my[None, :]) / 2
    score = {"ratio": cos / denom, "distance": cos - denom, "absolute": cos}[scoring]
    fwd, bwd = [], []
    for i in range(len(x)):
        candidates = np.argsort(-cos[i])[:kx]  # NN_k(x) by cosine, then the best margin among them
        j = candidates[np.argmax(score[i, candidates])]
        fwd.append((score[i, j], i, j))
    for j in range(len(y)):
        candidates = np.argsort(-cos[:, j])[:ky]
        i = candidates[np.argmax(score[candidates, j])]
        bwd.append((score[i, j], i, j))
    if retrieval == "fwd":
        pairs = fwd
    elif retrieval == "bwd":
        pairs = bwd
    elif retrieval == "intersect":
        pairs = [p for p in fwd if p in bwd]
    else:
        pairs, used_s, used_t = [], set(), set()
        for s, i, j in sorted(fwd + bwd, key=lambda p: (-p[0], p[1])):
            if i not in used_s and j not in used_t:
                pairs.append((s, i, j))
                used_s.add(i)
                used_t.add(j)
    return sorted(pairs, key=lambda p: (-p[0], p[1])), mx, my


@pytest.fixture(scope="module")
def random_pool():
    rng = np.random.default_rng(0)
    return rng.standard_normal((37, 16)).astype(np.float32), rng.standard_normal((53, 16)).astype(np.float32)


@pytest.mark.parametrize("scoring", ["ratio", "distance", "absolute"])
@pytest.mark.parametrize("retrieval", ["max", "fwd", "bwd", "intersect"])
def test_faiss_mining_equals_brute_force(random_pool, scoring, retrieval):
    src, tgt = random_pool
    expected, _, _ = brute_force(src, tgt, 4, scoring, retrieval)
    got = mine(src, tgt, k=4, scoring=scoring, retrieval=retrieval, index="flat")
    assert [(i, j) for _, i, j in got] == [(i, j) for _, i, j in expected]
    np.testing.assert_allclose(got.score, [s for s, _, _ in expected], rtol=1e-5, atol=1e-6)


def test_neighbourhood_means_equal_the_retrieval_benchmarks_knn_mean(random_pool):
    src, tgt = random_pool
    x, y = Vectors(src), Vectors(tgt)
    np.testing.assert_allclose(neighbourhood_mean(knn(x, y, 4, IndexConfig("flat"))), knn_mean(unit(src), unit(tgt)),
                               rtol=1e-5)
    _, mx, my = brute_force(src, tgt, 4, "ratio", "max")
    np.testing.assert_allclose(neighbourhood_mean(knn(y, x, 4, IndexConfig("flat"))), my, rtol=1e-5)


@pytest.mark.parametrize("scoring", ["ratio", "distance", "absolute"])
def test_align_mode_scores_line_i_with_line_i_like_brute_force(random_pool, scoring):
    src, tgt = random_pool
    tgt = tgt[:37]
    x, y = unit(src.astype(np.float64)), unit(tgt.astype(np.float64))
    cos = x @ y.T
    mx, my = np.sort(cos, 1)[:, -4:].mean(1), np.sort(cos, 0)[-4:, :].mean(0)
    diag = np.diag(cos)
    expected = {"ratio": diag / ((mx + my) / 2), "distance": diag - (mx + my) / 2, "absolute": diag}[scoring]
    got = mine(src, tgt, scoring=scoring, mode="align", index="flat")
    assert len(got) == 37 and (got.src == got.tgt).all() and (np.diff(got.score) <= 0).all()
    np.testing.assert_allclose(got.score, expected[got.src], rtol=1e-5, atol=1e-6)
    cut = float(np.sort(expected)[17:19].mean())  # between two scores: float32 rounding cannot move a pair across
    assert len(mine(src, tgt, scoring=scoring, mode="align", threshold=cut)) == 19


def planted(n_pairs=150, n_src_extra=300, n_tgt_extra=400, d=48, noise=0.6, seed=1):
    """Targets: random sentences; sources: noisy copies of some targets ("translations") plus distractors
    that have no counterpart. Returns src, tgt and the gold pairs {(source row, target row)}."""
    rng = np.random.default_rng(seed)
    tgt = rng.standard_normal((n_pairs + n_tgt_extra, d)).astype(np.float32)
    which = rng.permutation(len(tgt))[:n_pairs]
    translations = tgt[which] + noise * rng.standard_normal((n_pairs, d))
    src = np.concatenate([rng.standard_normal((n_src_extra, d)), translations]).astype(np.float32)
    order = rng.permutation(len(src))
    src = src[order]
    gold = {(int(np.flatnonzero(order == n_src_extra + p)[0]), int(which[p])) for p in range(n_pairs)}
    return src, tgt, gold


@pytest.mark.parametrize("scoring", ["ratio", "distance", "absolute"])
def test_mining_finds_planted_translations_among_distractors(scoring):
    src, tgt, gold = planted()
    pairs = mine(src, tgt, scoring=scoring)
    top = {(i, j) for _, i, j in list(pairs)[:len(gold)]}
    assert top == gold  # the translations score above every distractor pair
    threshold = float(pairs.score[len(gold) - 1])
    kept = mine(src, tgt, scoring=scoring, threshold=threshold)
    assert {(i, j) for _, i, j in kept} == gold
    assert len(set(pairs.src.tolist())) == len(pairs) and len(set(pairs.tgt.tolist())) == len(pairs)  # 1:1


def test_margin_beats_cosine_when_a_hub_is_present():
    """As in tests/crosslingual/test_margin.py: every sentence shares a direction u (weight 2), a translation adds its own
    noise (weight 1.5), and the target u itself is a hub: cos(x, u) = 0.89 beats cos(x, y) = 0.83 for every
    source, so cosine pairs the hub; its neighbourhood is close to everything, so the margin does not."""
    rng = np.random.default_rng(5)
    n, d = 40, 512
    u = np.zeros(d)
    u[0] = 1
    own, noise = rng.standard_normal((2, n, d)) / np.sqrt(d)
    own[:, 0] = noise[:, 0] = 0
    src = 2 * u + own
    tgt = np.concatenate([2 * u + own + 1.5 * noise, u[None, :]])  # targets 0..n-1 translate sources, n is the hub
    gold = {(i, i) for i in range(n)}
    cosine = {(i, j) for _, i, j in mine(src, tgt, scoring="absolute", retrieval="fwd")}
    margin = {(i, j) for _, i, j in mine(src, tgt, scoring="ratio", retrieval="fwd")}
    assert len(cosine & gold) == 0 and len(margin & gold) == n


def test_document_aligned_mining_stays_within_documents():
    src, tgt, gold = planted(n_pairs=40, n_src_extra=0, n_tgt_extra=0, noise=0.3)
    src_docs = np.arange(len(src)) % 4
    tgt_of = dict((i, j) for i, j in gold)
    tgt_docs = np.empty(len(tgt), dtype=int)
    for i, j in gold:
        tgt_docs[j] = src_docs[i]
    tgt_docs[tgt_of[0]] = -1  # left out: source 0 must pair with nothing outside its document
    pairs = mine(src, tgt, mode="align", src_docs=src_docs, tgt_docs=tgt_docs)
    assert all(src_docs[i] == tgt_docs[j] for _, i, j in pairs)
    assert {(i, j) for _, i, j in pairs} >= gold - {(0, tgt_of[0])}


def test_views_report_rows_of_their_data():
    src, tgt, gold = planted(n_pairs=30, n_src_extra=30, n_tgt_extra=30)
    keep = np.arange(0, len(src), 2)
    pairs = mine(Vectors(src, subset=keep), tgt)
    assert set(pairs.src.tolist()) <= set(keep.tolist())
    assert {(i, j) for _, i, j in list(pairs)[:len([g for g in gold if g[0] % 2 == 0])]} <= gold


def clustered(n=6000, d=32, centres=60, seed=2):
    rng = np.random.default_rng(seed)
    c = rng.standard_normal((centres, d)) * 3
    return (c[rng.integers(0, centres, n)] + rng.standard_normal((n, d))).astype(np.float32)


@pytest.mark.parametrize("kind", ["ivf", "hnsw"])
def test_approximate_indexes_come_close_to_exact_search(kind):
    corpus, queries = clustered(), clustered(500, seed=3)
    exact = semantic_search(queries, corpus, top_k=4, index="flat")
    approx = semantic_search(queries, corpus, top_k=4, index=IndexConfig(kind, nprobe=8))
    found = np.mean([len({h["corpus_id"] for h in a} & {h["corpus_id"] for h in e}) / 4
                     for a, e in zip(approx, exact)])
    assert found > 0.9, found


def test_semantic_search_is_sentence_transformers_shaped_and_exact():
    rng = np.random.default_rng(4)
    corpus, queries = rng.standard_normal((50, 8)).astype(np.float32), rng.standard_normal((3, 8)).astype(np.float32)
    hits = semantic_search(queries, corpus, top_k=5)
    cos = unit(queries) @ unit(corpus).T
    assert len(hits) == 3 and all(len(h) == 5 for h in hits)
    for q, found in enumerate(hits):
        assert [h["corpus_id"] for h in found] == np.argsort(-cos[q])[:5].tolist()
        np.testing.assert_allclose([h["score"] for h in found], np.sort(cos[q])[::-1][:5], rtol=1e-5)
    assert len(semantic_search(queries[0], corpus, top_k=100)) == 1  # one query vector; top_k cut to the corpus
    assert len(semantic_search(queries[0], corpus, top_k=100)[0]) == 50


def test_a_zero_vector_does_not_break_mining():
    src, tgt, _ = planted(n_pairs=20, n_src_extra=5, n_tgt_extra=5)
    src[3] = 0
    assert np.isfinite(mine(src, tgt).score).all()


@pytest.mark.parametrize("kwargs, error, message", [
    ({"scoring": "cosine"}, ConfigError, "scoring 'cosine': expected one of ratio, distance, absolute"),
    ({"mode": "search"}, ConfigError, "mode 'search': expected one of mine, align"),
    ({"retrieval": "both"}, ConfigError, "retrieval 'both': expected one of max, fwd, bwd, intersect"),
    ({"k": 0}, ConfigError, "k must be a positive integer, got 0"),
    ({"threshold": 1.5, "scoring": "absolute"}, ConfigError,
     "threshold 1.5 is out of range for absolute scores: expected a number in [-1, 1]"),
    ({"threshold": -0.5}, ConfigError, "threshold -0.5 is out of range for ratio scores: expected a number >= 0"),
    ({"threshold": float("nan")}, ConfigError, "threshold nan is out of range"),
    ({"index": "lsh"}, ConfigError, "index 'lsh': expected one of auto, flat, ivf, hnsw"),
    ({"src_docs": [0] * 4}, ConfigError, "src_docs and tgt_docs go together"),
    ({"src_docs": [0] * 4, "tgt_docs": [0] * 5}, ConfigError, "src_docs/tgt_docs are for mode='align'"),
])
def test_bad_arguments_name_themselves(kwargs, error, message):
    rng = np.random.default_rng(0)
    with pytest.raises(error, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        mine(rng.standard_normal((4, 8)), rng.standard_normal((5, 8)), **kwargs)


def test_bad_vectors_are_data_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(DataError, match="src_vecs have 8 dimensions and tgt_vecs 6"):
        mine(rng.standard_normal((4, 8)), rng.standard_normal((5, 6)))
    with pytest.raises(DataError, match=r"src_vecs: expected a 2-D array of sentence vectors \(N, d\), got shape \(4,\)"):
        mine(rng.standard_normal(4), rng.standard_normal((5, 6)))
    with pytest.raises(DataError, match="row i with row i, but there are 4 source rows and 5 target rows"):
        mine(rng.standard_normal((4, 8)), rng.standard_normal((5, 8)), mode="align")
    bad = rng.standard_normal((4, 8))
    bad[2, 1] = np.nan
    with pytest.raises(DataError, match="src_vecs: vector 2 is not finite"):
        mine(bad, rng.standard_normal((5, 8)))


def test_vectors_scaled_by_1e30_or_1e_40_mine_as_the_unscaled_ones():
    """Issue 31: the norm of such rows overflowed (inf) or underflowed (0), and every cosine became 0."""
    rng = np.random.default_rng(0)
    src = rng.standard_normal((20, 16)).astype(np.float32)
    tgt = src + 0.1 * rng.standard_normal((20, 16)).astype(np.float32)
    expected = mine(src, tgt, k=3)
    for scale in (1e30, 1e-40):
        got = mine((src * scale).astype(np.float32), tgt, k=3)
        assert list(got.src) == list(expected.src) and list(got.tgt) == list(expected.tgt), scale
        np.testing.assert_allclose(got.score, expected.score, rtol=1e-4)


def test_k_is_bounded_by_both_sides(caplog):
    """Issue 31: k >= a side's size made the neighbourhood a whole side and ratios of 1e11."""
    rng = np.random.default_rng(1)
    src, tgt = rng.random((3, 16)).astype(np.float32), rng.random((40, 16)).astype(np.float32)
    bounded = mine(src, tgt, k=1)
    for k in (2, 3, 4, 100):
        got = mine(src, tgt, k=k)
        np.testing.assert_array_equal(got.score, bounded.score)
        assert (got.score < 2).all() and got.k == 1
    assert "k = 100 neighbours is too many for 3 x 40 sentences: the margin uses k = 1" in caplog.text
    unit = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    assert mine(src, src, k=100, mode="align").score.tolist() == pytest.approx([1.0] * 3, abs=0.2)
    assert np.isfinite(mine(unit(src), unit(tgt[:1]), k=4).score).all()


def test_a_k_past_half_the_smaller_side_is_clamped_there_and_reported(caplog):
    """Issue 40: --k 1000 on 300 x 300 sentences became k = 299 ("fewer than either side holds"): a neighbourhood
    of all but one sentence averages about every cosine, near 0 for centred vectors, and scores reached 9.5e11
    (a third of the pairs kept), while the summary said k = 1000. Half the smaller side keeps them ratios."""
    rng = np.random.default_rng(1)
    src = rng.standard_normal((300, 32)).astype(np.float32)  # centred, as the shipped model's vectors are
    tgt = src + 0.5 * rng.standard_normal((300, 32)).astype(np.float32)  # each source's translation
    asked = mine(src, tgt, k=1000)
    assert asked.k == 150 and mine(src, tgt, k=4).k == 4 and mine(src, tgt, k=4, scoring="absolute").k is None
    assert "k = 1000 neighbours is too many for 300 x 300 sentences: the margin uses k = 150" in caplog.text
    np.testing.assert_array_equal(asked.score, mine(src, tgt, k=150).score)
    assert len(asked) == 300 and asked.score.max() < 20  # k = 4 gives up to 1.9
    assert (asked.src == asked.tgt).mean() > 0.95


def test_a_threshold_past_float32_or_given_as_all():
    """Issue 40: threshold=1e308 printed numpy's "overflow encountered in cast" with a source line (the float32
    scores were compared with it cast to float32); mine(threshold="all") said "'all' is out of range", though
    the command line takes all."""
    import warnings

    rng = np.random.default_rng(2)
    src, tgt = rng.standard_normal((20, 8)).astype(np.float32), rng.standard_normal((30, 8)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(mine(src, tgt, threshold=1e308)) == 0
        assert len(mine(src, tgt, threshold=1e308, retrieval="fwd")) == 0
    every = mine(src, tgt, threshold="all")
    np.testing.assert_array_equal(every.score, mine(src, tgt).score)
    assert len(mine(src, tgt, threshold=" ALL ")) == len(every) > 0
    with pytest.raises(ConfigError, match="threshold 'most' is out of range"):
        mine(src, tgt, threshold="most")
