"""Training an attention-bridge model: the configuration (`config`), the direction schedule
(`schedule`), dev-set validation (`validation`), checkpoints (`checkpoint`), several processes
(`distributed`) and the loop (`trainer`). `bridgeembed-train` runs it."""
