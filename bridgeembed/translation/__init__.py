"""Translating with a trained model: beam search (`search`), the `Translator` (`translator`), BLEU
(`bleu`) and the test-set scores of every direction (`scoring`). `bridgeembed-translate` runs it."""
