"""The attention-bridge NMT model (Vázquez et al. 2020, Section 2.2; RepL4NLP 2019, Section 2)."""

from bridgeembed.model.bridge import AttentionBridge, BridgeOutput, attention_penalty
from bridgeembed.model.nmt import BridgeModel, ModelOutput

__all__ = ["AttentionBridge", "BridgeOutput", "attention_penalty", "BridgeModel", "ModelOutput"]
