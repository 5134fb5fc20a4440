"""The Moses + sentencepiece pipeline."""

from bridgeembed.text.tokenization import EOS, LanguageTokenizer, Pretokenizer


def test_moses_pretokenization_and_lowercasing():
    pre = Pretokenizer("en", lowercase=True, moses=True)
    assert pre("A dog, running  fast.\n") == "a dog , running fast ."
    assert Pretokenizer("en", lowercase=False)("Hello, World!") == "Hello , World !"
    assert pre.detokenize("a dog , running fast .") == "a dog, running fast."


def test_train_encode_decode_round_trip():
    texts = ["Two dogs play in the snow.", "A man rides a bike.", "Children are playing, laughing."] * 30
    tok = LanguageTokenizer.train("en", texts, vocab_size=80)
    ids = tok.encode("A man plays in the snow.")
    assert ids and EOS not in ids and all(isinstance(i, int) for i in ids)
    assert tok.decode(ids) == "a man plays in the snow."
    again = LanguageTokenizer.from_state(tok.state())
    assert again.encode("Two dogs ride.") == tok.encode("Two dogs ride.")


def test_training_is_deterministic():
    texts = ["the quick brown fox jumps over the lazy dog"] * 5 + ["pack my box with five dozen liquor jugs"] * 5
    a = LanguageTokenizer.train("en", texts, vocab_size=50, seed=2)
    b = LanguageTokenizer.train("en", texts, vocab_size=50, seed=2)
    assert a.spm_model == b.spm_model
