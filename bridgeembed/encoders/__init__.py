"""Sentence encoders: the trained bridge (`bridge.BridgeEncoder`), the shipped models (`pretrained`),
the reference encoders (`baselines`) and what every benchmark asks of an encoder (`protocol`)."""
