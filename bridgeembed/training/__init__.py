"""Training an attention-bridge model: the parts a run starts with (`setup`), what it reads (`data`), what each
step trains on (`schedule`), dev-set validation (`validation`), several processes (`distributed`), the log
(`log`) and the loop (`trainer`). `bridgeembed-train` runs it."""
