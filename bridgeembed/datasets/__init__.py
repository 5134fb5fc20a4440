"""`bridgeembed-data senteval|multi30k|xnli|reviews`: fetch public data into the data-root layout.

`download` is the generic resumable, checksummed downloader; `senteval` rebuilds SentEval's
`data/downstream` layout and preprocessing; `corpora` fetches Multi30k, XNLI and the review sets.
"""
