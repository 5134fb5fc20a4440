"""Sentence encoders: the trained bridge (`bridge.BridgeEncoder`), the shipped models (`pretrained`),
the reference encoders (`baselines`), what every benchmark asks of an encoder (`protocol`) and a pool of
worker processes that encode at once (`pool`: the shards of `bridgeembed.mining.encode_to_shards`)."""
