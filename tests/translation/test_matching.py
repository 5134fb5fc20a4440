"""The mixed-pool rule (translation/matching.py) that dev retrieval and the neutrality benchmark share."""

import numpy as np

from bridgeembed.translation.matching import pool_hits


def test_hits_are_translations_by_row_or_by_text():
    # two languages, three rows: pool indices 0-2 are "a" sentences, 3-5 "b" sentences
    texts = [np.array(["dog", "cat", "cat"], dtype=object), np.array(["Hund", "Katze", "Katze"], dtype=object)]
    nearest = np.array([3, 5, 0, 0, 4, 2])
    hit, same = pool_hits(nearest, texts)
    # 0 -> 3: same row; 1 -> 5: row 2, but its text is row 1's translation; 2 -> 0: own language;
    # 3 -> 0: same row; 4 -> 4 is never asked for by a real pool, here a same-language miss; 5 -> 2: same row
    assert hit.tolist() == [True, True, False, True, False, True]
    assert same.tolist() == [False, False, True, False, True, False]
