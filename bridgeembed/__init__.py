"""bridgeembed: sentence embeddings learned through multilingual NMT with an attention bridge.

Vázquez, Raganato, Creutz, Tiedemann (2020), "A Systematic Study of Inner-Attention-Based
Sentence Representations in Multilingual Neural Machine Translation", Computational Linguistics 46(2).
"""

__version__ = "0.1.0"


def __getattr__(name: str) -> type:
    # Lazy so that `import bridgeembed` stays cheap for the CLI tools that do not need torch.
    if name == "BridgeEncoder":
        try:
            from bridgeembed.encoders.bridge import BridgeEncoder
        except ModuleNotFoundError as err:  # no torch: ONNX exports only (`pip install "bridgeembed[onnx]"`)
            if err.name != "torch":
                raise
            from bridgeembed.encoders.onnx_encoder import OnnxEncoder

            return OnnxEncoder
        return BridgeEncoder
    raise AttributeError(f"module 'bridgeembed' has no attribute {name!r}")


__all__ = ["BridgeEncoder", "__version__"]
