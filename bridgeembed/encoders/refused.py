"""The sentence-transformers names that have no meaning for `BridgeEncoder`, each with the reason it is refused
(issue 41): the one table that `BridgeEncoder` raises from and docs/sentence_transformers.md ("Refused, with the
reason") is tested against (tests/encoders/test_st_habits.py).

- an attribute or method (`encoder.half()`): an AttributeError naming the reason, so `hasattr` stays False;
- `encode_query` and `encode_document`: methods that raise NotImplementedError with it;
- a keyword of `encode` (`KEYWORDS`): a TypeError with it.
"""

from __future__ import annotations

_NO_ROLES = ("this model has no query and document roles. It was trained on translation, not on query-document "
             "pairs, and has no prompts: a query and a document are encoded the same way. Use encode(sentences, "
             "lang=...) for both (semantic search: bridgeembed.mining.semantic_search)")
_NO_POOL = ("there is no pool to start or stop: encoder.encode_multi_process(sentences, lang, processes=N) starts "
            "its worker processes on every call and stops them when it returns")
_NO_PROMPTS = ("this model has no prompts (it was trained on translation, without instructions): encode the "
               "sentences as they are")

REFUSED = {
    "start_multi_process_pool": _NO_POOL,
    "stop_multi_process_pool": _NO_POOL,
    "encode_query": _NO_ROLES,
    "encode_document": _NO_ROLES,
    "prompt_name": _NO_PROMPTS,
    "prompt": _NO_PROMPTS,
    "output_value": "there are no token embeddings: the vectors under a sentence's are the bridge's k heads, "
                    "which encode(..., heads='each') gives, (N, k, d), or heads=[0, 5] some of; "
                    "output_value='sentence_embedding' (their mean, the default) is the one value taken",
    "tokenizer": "each language has its own tokenizer: encoder.tokenizers[lang] (its .encode(text) gives a "
                 "sentence's subword ids, .pieces(text) its pieces), and encode() runs it",
    "tokenize": "each language has its own tokenizer, and encode() runs it: encoder.tokenizers[lang].encode(text) "
                "gives a sentence's subword ids, encoder.tokenizers[lang].pieces(text) its pieces",
    "similarity_fn_name": "similarity is always the cosine (on packed binary codes, 1 - Hamming distance / bits, "
                          "with precision=): there is no function to choose",
    "half": "the encoder keeps its weights in float32: for a smaller model on disk, save(path, half=True) or "
            "save_pretrained(folder, int8=True); for faster inference on the CPU, BridgeEncoder(..., "
            "quantize='int8' or 'bf16'), on a GPU torch.autocast; for smaller vectors, encode(..., "
            "precision='float16')",
}
KEYWORDS = ("prompt_name", "prompt", "output_value")  # keywords of encode(); the other names are attributes or methods
