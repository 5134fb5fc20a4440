"""The evaluation core every benchmark stands on (SentEval, crosslingual transfer and retrieval, MTEB).

- `languages`: the one check that an encoder knows a language;
- `models`: `--model SPEC` -> an encoder (shipped, checkpoint, `untrained:`, `bow`, `minilm`, `use-m`);
- `encoding`: the encoding cache (each distinct sentence once, every view of `--heads` in one pass, checked
  output; `--heads` itself is `encoders.protocol.HeadSpec`);
- `results`: typed results (a task's metrics per view with its primary metric, a table of tasks);
- `writer`: the one JSON / CSV / Markdown writer;
- `evaluator`: the `Evaluator` base class (`evaluator(encoder, output_path=None) -> result`).

Importing this package imports none of its modules (and no torch).
"""
