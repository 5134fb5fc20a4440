"""Translating with a trained model: which directions it has (`directions`), beam search (`search`),
the `Translator` (`translator`), BLEU (`bleu`) and the test-set scores of every direction
(`scoring`). `bridgeembed-translate` runs it."""
