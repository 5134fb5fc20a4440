"""Text as the models see it: subword tokenizers per language (`tokenization`) and parallel corpora,
their ids and batches (`parallel`)."""
