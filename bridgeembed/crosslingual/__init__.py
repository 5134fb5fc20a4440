"""Crosslingual transfer: XNLI and sentiment classifiers trained on some languages and tested on others
(Vázquez et al. 2020, Tables 6 and 7), and bitext retrieval. Any encoder with `encode(sentences, lang)`.

    from bridgeembed.crosslingual import XnliXtreme, transfer_matrix, write_transfer
    result = transfer_matrix(encoder, XnliXtreme(root / "xnli/xtreme"), [("en",), ("en", "de")], ["en", "de", "fr"])
    write_transfer(result, "results/xnli")
"""

from bridgeembed.crosslingual.classifier import CLASSIFIERS, ClassifierConfig
from bridgeembed.crosslingual.report import write_retrieval, write_transfer
from bridgeembed.crosslingual.retrieval import RetrievalResult, retrieval_matrix
from bridgeembed.crosslingual.sources import NliTemplates, TsvTemplates, XlmtTweets, XnliXtreme
from bridgeembed.crosslingual.transfer import TransferResult, parse_langs, parse_train_sets, transfer_matrix

__all__ = ["CLASSIFIERS", "ClassifierConfig", "NliTemplates", "RetrievalResult", "TransferResult", "TsvTemplates",
           "XlmtTweets", "XnliXtreme", "parse_langs", "parse_train_sets", "retrieval_matrix", "transfer_matrix",
           "write_retrieval", "write_transfer"]
