"""mining.mine_files: the files-to-pairs pipeline bridgeembed-mine runs, called as a library (issue 48)."""

import pytest

from bridgeembed.mining import MinedFiles, Mining, mine_files


def test_mine_files_mines_two_text_files_into_pairs_without_the_command(tmp_path):
    pytest.importorskip("faiss", reason="faiss-cpu is not installed (pip install 'bridgeembed[mining]')")
    from bridgeembed.cli.mine import check_options, parse_args

    for side in ("src", "tgt"):
        lines = [f"sentence number {i}" for i in range(30)]
        (tmp_path / f"{side}.txt").write_text("\n".join(lines[:10] + [""] + lines[10:]) + "\n", encoding="utf-8")
    out = tmp_path / "pairs.tsv"
    m = check_options(parse_args(["--src", str(tmp_path / "src.txt"), "--src-lang", "en", "--tgt",
                                  str(tmp_path / "tgt.txt"), "--tgt-lang", "en", "--model", "bow", "--threads", "1",
                                  "--threshold", "all", "--shards", str(tmp_path / "shards"), "--out", str(out)]))
    assert isinstance(m, Mining) and m.threshold is None
    mined = mine_files(m)
    assert isinstance(mined, MinedFiles) and (mined.src_sentences, mined.tgt_sentences, mined.documents) == (30, 30, 0)
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(mined.pairs) > 0 and all(len(row) == 3 and row[1] and row[2] for row in rows)
    scores = [float(row[0]) for row in rows]
    assert scores == sorted(scores, reverse=True)  # best first
    assert sorted(p.name for p in (tmp_path / "shards").iterdir()) == ["src.txt.en", "tgt.txt.en"]  # kept for reuse
