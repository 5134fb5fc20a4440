"""The rules of translation/matching.py: "is the nearest sentence its translation" for line-aligned sentences
(training's dev retrieval and the retrieval benchmarks) and the mixed pool (dev retrieval and neutrality)."""

import numpy as np

from bridgeembed.translation.matching import pool_hits, translation_found


def test_a_copy_of_the_translation_counts_as_found():
    texts = np.array(["a dog", "a cat", "a dog", "two men"], dtype=object)  # rows 0 and 2: one text twice
    assert translation_found(np.arange(4), texts) == 1.0
    # row 0 finds row 2, the same text: found; row 1 finds row 0: missed; row 2 finds row 0, its copy: found
    assert translation_found(np.array([2, 0, 0, 3]), texts) == 0.75
    assert translation_found(np.array([1, 0, 3, 2]), texts) == 0.0


def test_hits_are_translations_by_row_or_by_text():
    # two languages, three rows: pool indices 0-2 are "a" sentences, 3-5 "b" sentences
    texts = [np.array(["dog", "cat", "cat"], dtype=object), np.array(["Hund", "Katze", "Katze"], dtype=object)]
    nearest = np.array([3, 5, 0, 0, 4, 2])
    hit, same = pool_hits(nearest, texts)
    # 0 -> 3: same row; 1 -> 5: row 2, but its text is row 1's translation; 2 -> 0: own language;
    # 3 -> 0: same row; 4 -> 4 is never asked for by a real pool, here a same-language miss; 5 -> 2: same row
    assert hit.tolist() == [True, True, False, True, False, True]
    assert same.tolist() == [False, False, True, False, True, False]
