"""Crosslingual transfer: XNLI and sentiment classifiers trained on some languages and tested on others
(Vázquez et al. 2020, Tables 6 and 7), and bitext retrieval. Any encoder with `encode(sentences, lang)`.

    from bridgeembed.crosslingual import TransferEvaluator, XnliXtreme
    evaluator = TransferEvaluator(XnliXtreme.under(root), [("en",), ("en", "de")], ["en", "de", "fr"], task="xnli")
    results = evaluator(encoder, output_path="results/xnli")    # one TransferResult per view of `heads`

Modules: `readers` (the file formats), `sources` (where a language's examples come from),
`encoding` (labelled sets as vectors), `classifier`, `transfer` and `retrieval` (the evaluators),
`margin` (nearest neighbours by cosine or by the ratio margin of Artetxe & Schwenk 2019),
`results` (typed results), `report` (tables and heat maps), `cli` (`bridgeembed-bench`).
"""

from bridgeembed.crosslingual.classifier import CLASSIFIERS, ClassifierConfig
from bridgeembed.crosslingual.report import write_retrieval, write_transfer
from bridgeembed.crosslingual.results import RetrievalResult, TransferResult
from bridgeembed.crosslingual.retrieval import RetrievalEvaluator, retrieval_matrix
from bridgeembed.crosslingual.sources import NliTemplates, TsvTemplates, XlmtTweets, XnliXtreme, multi30k_test
from bridgeembed.crosslingual.transfer import TransferEvaluator, parse_langs, parse_train_sets, transfer_matrix

__all__ = ["CLASSIFIERS", "ClassifierConfig", "NliTemplates", "RetrievalEvaluator", "RetrievalResult",
           "TransferEvaluator", "TransferResult", "TsvTemplates", "XlmtTweets", "XnliXtreme", "multi30k_test",
           "parse_langs", "parse_train_sets", "retrieval_matrix", "transfer_matrix", "write_retrieval",
           "write_transfer"]
