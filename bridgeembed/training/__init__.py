"""Training an attention-bridge model: the configuration (`config`), the order of directions
(`schedule`), dev-set validation (`validation`), checkpoints (`checkpoint`), several processes
(`distributed`) and the loop (`trainer`). `bridgeembed-train` runs it."""
