"""`--model SPEC` for every benchmark command: one place that turns a name into an encoder.

- a shipped model's name (`multi30k-m2m`) or a path to a checkpoint / encoder export -> `BridgeEncoder`;
- `untrained:NAME_OR_PATH` -> the same architecture and tokenizers with fresh random weights (a control);
- `minilm` -> all-MiniLM-L6-v2 through sentence-transformers (reference encoder; `pip install bridgeembed[bench]`);
- `bow` -> a bag of random word vectors (a cheap baseline that needs no model).
"""

BASELINES = {
    "minilm": "bridgeembed.baselines:MiniLMEncoder",
    "bow": "bridgeembed.baselines:HashBowEncoder",
}


def load_encoder(spec: str, device=None):
    """The encoder named by `spec` (see the module docstring)."""
    from bridgeembed.cli.registry import load

    if spec in BASELINES:
        return load(BASELINES[spec])()
    from bridgeembed.encoder_api import BridgeEncoder

    if spec.startswith("untrained:"):
        return BridgeEncoder.from_pretrained(spec.split(":", 1)[1], device=device).reinitialized(seed=0)
    return BridgeEncoder.from_pretrained(spec, device=device)
