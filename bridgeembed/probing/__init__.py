"""Probing tasks in SentEval's file format, built from raw text in any language.

Conneau et al. (2018), "What you can cram into a single $&!#* vector: Probing sentence
embeddings for linguistic properties", ACL. SentEval ships the ten tasks for English only
(BookCorpus); this package rebuilds them from any corpus, one sentence per line:

- `corpus`: read, clean, tokenise (Moses) and deduplicate the raw text;
- `names`: one name per task (SentEval's), its file and the paper's abbreviation;
- `surface`: the tasks that need no parser (Length, WordContent, BigramShift);
- `parse` and `syntax`: the tasks that need a tagger and dependency parser (spaCy);
- `sampling`: balanced classes and the tr/va/te split shared by every task;
- `writer`: the task files, the folder's README.md and the `REBUILT` marker;
- `cli`: `bridgeembed-data probing`.
"""
