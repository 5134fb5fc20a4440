"""Bitext mining and semantic search at scale (issue 17): what LASER and sentence-transformers users come for.

    from bridgeembed.mining import mine, semantic_search, encode_to_shards, encode_options, Shards
    pairs = mine(de_vectors, en_vectors, k=4, scoring="ratio")      # MinedPairs: score, src, tgt, best first
    hits = semantic_search(queries, corpus, top_k=5)                 # [[{"corpus_id": 3, "score": 0.81}, ...], ...]
    shards = encode_to_shards(encoder, "news.de.txt", "de", "shards/", encode_options(processes=4))  # resumable
    mined = mine_files(Mining(...))                                  # two files to pairs.tsv: bridgeembed-mine

Modules: `vectors` (arrays or shard folders read a block at a time as unit rows), `index` (FAISS:
flat, ivf, hnsw), `mine` (margin-based mining, Artetxe & Schwenk 2019), `search` (semantic search),
`shards` (a large file encoded to resumable `.npy` shards, by one process or by a pool of them:
`bridgeembed.encoders.pool`, which also gives `encode_multi_process` for a list of sentences), `files` (two files
to their pairs: the pipeline bridgeembed-mine runs, `mine_files`). FAISS
(`pip install faiss-cpu`) is imported only when an index is built.
"""

from bridgeembed.encoders.options import EncodeOptions, encode_options
from bridgeembed.encoders.pool import encode_multi_process
from bridgeembed.mining.files import MinedFiles, Mining, mine_files
from bridgeembed.mining.index import IndexConfig
from bridgeembed.mining.mine import MinedPairs, mine
from bridgeembed.mining.search import semantic_search
from bridgeembed.mining.shards import Shards, encode_to_shards
from bridgeembed.mining.vectors import Vectors

__all__ = ["EncodeOptions", "IndexConfig", "MinedFiles", "MinedPairs", "Mining", "Shards", "Vectors",
           "encode_multi_process", "encode_options", "encode_to_shards", "mine", "mine_files", "semantic_search"]
