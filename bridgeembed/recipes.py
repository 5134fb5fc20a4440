"""The recipes that made the shipped weights from other trained models (issue 29): `bridgeembed-recipe`.

- Weight-space interpolation of two checkpoints of one model (WiSE-FT, Wortsman et al. 2022): a model
  fine-tuned on new text forgets some of what it knew; theta = (1 - alpha) * start + alpha * tuned often keeps
  most of both, since both lie in one basin. Choose alpha on dev sets, never on test sets.
- Checkpoint averaging (Vaswani et al. 2017; Marian's and fairseq's average-checkpoints): the element-wise mean of
  several checkpoints of one run, a few hundred steps apart, lands nearer the middle of the region the run hovers
  in than any one of them. A tensor that is the same in every input (one a run kept frozen) stays the same bytes.
- Decoder grafting: an encoder-only model (exported with --no-decoders) gets the decoders of another, so that
  training can go on from it (a translation loss needs decoders).
- Wider decoders (Net2Net's aim, Chen et al. 2016, by zero padding): each decoder LSTM gets more units, whose
  weights into the rest of the network start at zero, so the wider model translates exactly as the narrow one did
  and training starts from its loss; the new units' own inputs start small and random, so that they learn.
- Decoder-only heads: a second bridge over the encoder states that only the decoders read (model.decoder_heads),
  started as a copy of the shared bridge, so that the model translates as before; trained with the encoders and
  the shared bridge frozen, it lets translation choose what to read of a sentence while every vector stays.
- Attention over the encoder states: each decoder also attends over the encoder states token by token
  (model.decoder_states), its W_c's new columns at zero, so that the model translates as before; trained with
  the encoders and the bridge frozen, translation reads every source token while every vector stays.
- A trained model under new tokenizers: every weight is kept except the rows of the vocabulary tables, rebuilt
  for the new pieces. A piece the old tokenizer also has (the same string) keeps its row; any other piece gets
  the mean of the rows of the pieces the old tokenizer splits its text into (the "fast vocabulary transfer" of
  Gee et al. 2022), a piece inside a word as a piece inside a word; PAD, UNK, BOS and EOS keep theirs.

Each function takes checkpoint payloads (`checkpoint.load_checkpoint`) and returns one, for `train.init_from`
(or `bridgeembed-export`); a mismatch between the models is a CheckpointError or a ConfigError naming it.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

import torch

from bridgeembed.checkpoint import DECODER_WEIGHTS
from bridgeembed.config import DECODER_KEYS, Config, with_defaults
from bridgeembed.errors import CheckpointError, ConfigError
from bridgeembed.text.tokenization import EOS, LanguageTokenizer

if TYPE_CHECKING:  # for annotations only
    from sentencepiece import SentencePieceProcessor

WORD = "\u2581"  # sentencepiece's word-start mark
SPECIAL = EOS + 1  # ids below this are PAD, UNK, BOS, EOS in every tokenizer we train


def _vocabulary(tok: dict) -> tuple:
    """What makes two stored tokenizers one (a checkpoint from before issue 31 records no sha256)."""
    return tok["spm_model"], tok["lowercase"], tok["moses"]


# --- interpolation --------------------------------------------------------------------------------
def check_same_model(start: dict, tuned: dict) -> None:
    """Refuse two checkpoints that are not one model: other shapes, other tokenizers."""
    for section in ("model", "tokenizer"):
        if start["config"][section] != tuned["config"][section]:
            raise CheckpointError(f"the two checkpoints differ in their {section} configuration: "
                                  f"{start['config'][section]} against {tuned['config'][section]}")

    def vocabularies(payload: dict) -> dict:
        return {lang: _vocabulary(tok) for lang, tok in payload["tokenizers"].items()}

    if vocabularies(start) != vocabularies(tuned):
        raise CheckpointError("the two checkpoints have different tokenizers: interpolation needs one vocabulary")
    a, b = start["model"], tuned["model"]
    if a.keys() != b.keys() or any(a[k].shape != b[k].shape for k in a):
        raise CheckpointError("the two checkpoints' weights differ in names or shapes")


def interpolate(start: dict, tuned: dict, alpha: float) -> dict:
    """A payload with tuned's metadata and (1 - alpha) * start + alpha * tuned, in float32 (a trainer-kind
    checkpoint without its optimizer and trainer state)."""
    weights = {k: v if not v.is_floating_point()
               else torch.lerp(v.float(), tuned["model"][k].float(), alpha) for k, v in start["model"].items()}
    return _with_weights(tuned, weights)


def _with_weights(payload: dict, weights: dict) -> dict:
    """PAYLOAD's metadata (config, tokenizers, kind) with new weights: a checkpoint to start from or export, so
    without the optimizer and trainer state of the run it came from."""
    return {**{k: v for k, v in payload.items() if k not in ("model", "trainer", "optimizer")}, "model": weights}


# --- checkpoint averaging ------------------------------------------------------------------------
def average(payloads: list) -> dict:
    """A payload with the last one's metadata and the element-wise mean of every floating-point weight, in its own
    dtype (a trainer-kind checkpoint without optimizer and trainer state); other weights are the first's. The sum
    is taken in float64, so that a tensor equal in every input comes out the same bytes (k copies of a float32
    value sum exactly, and dividing by k gives it back): encoders a decoders-only run kept frozen stay bit-identical.
    """
    if len(payloads) < 2:
        raise ConfigError(f"averaging needs two checkpoints or more, got {len(payloads)}")
    for i, other in enumerate(payloads[1:], start=2):
        try:
            check_same_model(payloads[0], other)
        except CheckpointError as err:
            raise CheckpointError(f"checkpoint {i} is not the first's model: {err}") from None
    weights = {}
    for key, value in payloads[0]["model"].items():
        if value.is_floating_point():
            total = sum(p["model"][key].double() for p in payloads)
            weights[key] = (total / len(payloads)).to(value.dtype)
        else:
            weights[key] = value
    return _with_weights(payloads[-1], weights)


# --- decoder grafting -----------------------------------------------------------------------------
def with_decoders(encoder: dict, decoders: dict) -> dict:
    """ENCODER's payload with DECODERS' decoders (not a run to resume: a model to start from): ENCODER's
    encoders and bridge, DECODERS' decoder weights in place of ENCODER's own where it has some, and any other
    weight ENCODER lacks from DECODERS. Both must share the model and tokenizer config and the tokenizers."""
    for section in ("model", "tokenizer"):
        if _section(encoder, section) != _section(decoders, section):
            raise CheckpointError(f"the two models have different {section} configs")
    if not decoders["decoder_languages"]:
        raise CheckpointError("DECODERS has no decoders (an encoder-only model): give a trainer checkpoint or a "
                              "model exported with its decoders")
    for lang, state in encoder["tokenizers"].items():
        theirs = decoders["tokenizers"].get(lang)
        if theirs is None or _vocabulary(theirs) != _vocabulary(state):
            raise CheckpointError(f"ENCODER's {lang} tokenizer is not DECODERS' ({_differ(state, theirs)}): "
                                  f"decoders fit only the tokenizers they were trained with; give as DECODERS a "
                                  f"model with ENCODER's tokenizers, such as the one ENCODER was fine-tuned from "
                                  f"(a model retokenized since has others)")
    shapes = {k: v.shape for k, v in decoders["model"].items()}
    odd = [k for k, v in encoder["model"].items()  # ENCODER's own decoders are replaced: whatever their shape
           if k in shapes and shapes[k] != v.shape and not k.startswith(DECODER_WEIGHTS)]
    if odd:
        raise CheckpointError(f"the weights differ in shape, e.g. {odd[0]}")
    payload = {**encoder, "kind": "trainer" if decoders["kind"] == "trainer" else encoder["kind"],
               "decoder_languages": list(decoders["decoder_languages"]),
               "model": {**decoders["model"], **{k: v for k, v in encoder["model"].items()
                                                  if not k.startswith(DECODER_WEIGHTS)}}}
    theirs = with_defaults("model", decoders["config"]["model"])
    carried = {key: theirs[key] for key in DECODER_KEYS}  # decoder-only heads, attention over the states: DECODERS'
    payload["config"] = {**encoder["config"], "model": {**encoder["config"]["model"], **carried}}
    payload.pop("trainer", None)
    return payload


def _section(payload: dict, section: str) -> dict:
    """A payload's config section with the defaults of keys newer than it; for the model, what the encoders and
    the bridge are (the keys of DECODER_KEYS go with the decoders)."""
    values = with_defaults(section, payload["config"].get(section))
    if section == "model":
        for key in DECODER_KEYS:
            values.pop(key)
    return values


def _differ(ours: dict, theirs: dict | None) -> str:
    """How two stored tokenizers of one language differ, in a few words."""
    if theirs is None:
        return "DECODERS has none"
    if ours["spm_model"] != theirs["spm_model"]:
        mine, other = ({sp.id_to_piece(i) for i in range(sp.get_piece_size())} for sp in (
            LanguageTokenizer.from_state({**tok, "sha256": None}).sp for tok in (ours, theirs)))
        return f"another vocabulary: {len(mine - other):,} of ENCODER's {len(mine):,} pieces are not DECODERS'"
    return ", ".join(f"{key} {ours[key]} against {theirs[key]}" for key in ("lowercase", "moses")
                     if ours[key] != theirs[key])


# --- wider decoders ------------------------------------------------------------------------------
def widen_decoders(payload: dict, hidden: int, seed: int = 0) -> dict:
    """PAYLOAD with every decoder LSTM HIDDEN units wide, translating as before (not a run to resume: a model to
    start from, with model.dec_hidden = HIDDEN in its config). For each of the H old units every weight is kept;
    the new units' weights into the old ones, into the attention and into W_c are zero, so they change no output
    until training moves them, and their incoming weights (gates, recurrence, initial state) are drawn as PyTorch
    draws an LSTM's, U(-1/sqrt(HIDDEN), 1/sqrt(HIDDEN)), so that they do not stay at zero. Encoders, bridge and
    vocabulary tables stay the same bytes. Needs tied embeddings, whose output layer stays emb_dim wide."""
    model = dict(payload["config"]["model"])
    old = model["dec_hidden"]
    if model.get("decoder_states", False):
        raise ConfigError("widen-decoders does not widen decoders that attend over the encoder states "
                          "(model.decoder_states): widen before add-decoder-states")
    if not model.get("tie_embeddings", True):
        raise ConfigError("widen-decoders needs decoders with tied embeddings (model.tie_embeddings): untied, the "
                          "output layer would have to grow too")
    if hidden <= old:
        raise ConfigError(f"--dec-hidden {hidden}: the decoders are already {old} wide; give a larger size")
    if not payload.get("decoder_languages"):
        raise CheckpointError("the model has no decoders (an encoder-only model): give a trainer checkpoint or a "
                              "model exported with its decoders")
    generator = torch.Generator().manual_seed(seed)
    bound = hidden ** -0.5

    def draw(*shape: int) -> torch.Tensor:
        return (torch.rand(*shape, generator=generator) * 2 - 1) * bound

    def grown(value: torch.Tensor, axes: tuple, new_rows: bool) -> torch.Tensor:
        """VALUE (blocks of OLD along each axis in AXES) as blocks of HIDDEN: old entries kept, entries of a new
        row drawn (new_rows) or zero, entries of a new column in an old row zero."""
        value = value.float()
        keep = [torch.arange(n) for n in value.shape]
        shape = list(value.shape)
        for axis in axes:
            blocks = value.shape[axis] // old
            keep[axis] = (torch.arange(blocks)[:, None] * hidden + torch.arange(old)).reshape(-1)
            shape[axis] = blocks * hidden
        out = torch.zeros(shape)
        if new_rows and 0 in axes:
            fresh = torch.ones(shape[0], dtype=torch.bool)
            fresh[keep[0]] = False
            out[fresh] = draw(int(fresh.sum()), *shape[1:])
        out[torch.meshgrid(*keep, indexing="ij")] = value
        return out

    weights = {}
    for key, value in sorted(payload["model"].items()):  # by name: the draws follow --seed, not the load's order
        name = key.split(".", 2)[-1] if key.startswith("decoders.") else None  # decoder heads: as they were
        if name is None or name.startswith(("embed.", "out.")):
            weights[key] = value
            continue
        if name.startswith("rnn.weight_ih_l"):  # (4H, input): layer 0's input is the embedding (and h~ fed back)
            weights[key] = grown(value, (0,) if name.endswith("l0") else (0, 1), new_rows=True)
        elif name.startswith("rnn.weight_hh_l"):  # (4H, H)
            weights[key] = grown(value, (0, 1), new_rows=True)
        elif name.startswith("rnn.bias_"):  # (4H,): new units' biases start at zero
            weights[key] = grown(value, (0,), new_rows=False)
        elif name == "init_state.weight":  # (2 * layers * H, memory): h_0 and c_0 of every layer
            weights[key] = grown(value, (0,), new_rows=True)
        elif name == "init_state.bias":
            weights[key] = grown(value, (0,), new_rows=False)
        elif name == "attn_score.weight":  # (memory, H): the new units' say in the attention starts at zero
            weights[key] = grown(value, (1,), new_rows=False)
        elif name == "attn_out.weight":  # W_c (O, memory + H) over [context; h_t]: new columns zero
            memory = value.shape[1] - old
            kept = torch.zeros(value.shape[0], memory + hidden)
            kept[:, :memory], kept[:, memory:memory + old] = value[:, :memory].float(), value[:, memory:].float()
            weights[key] = kept
        else:
            raise CheckpointError(f"widen-decoders does not know the decoder weight {key}")
    config = {**payload["config"], "model": {**model, "dec_hidden": hidden}}
    return {**_with_weights(payload, weights), "config": config}


# --- decoder-only heads ----------------------------------------------------------------------------
def add_decoder_heads(payload: dict, heads: int) -> dict:
    """PAYLOAD with HEADS decoder-only heads (model.decoder_heads; not a run to resume: a model to start from).
    Their W1 is the shared bridge's and head i's W2 row is shared head i mod k's: a multiple of k (k itself, say)
    repeats every shared column of M equally often, which leaves each decoder's attention context and its
    starting state (the mean of the columns) as they were, so the model translates exactly as before; any other
    count weighs some columns more. Everything else keeps its bytes."""
    model = dict(payload["config"]["model"])
    if model.get("decoder_heads", 0):
        raise ConfigError(f"the model already has {model['decoder_heads']} decoder-only heads")
    if heads < 1:
        raise ConfigError(f"--decoder-heads {heads}: give at least 1 decoder-only head")
    if not payload.get("decoder_languages"):
        raise CheckpointError("the model has no decoders (an encoder-only model): give a trainer checkpoint or a "
                              "model exported with its decoders")
    w1, w2 = (payload["model"][f"bridge.{name}.weight"].float() for name in ("w1", "w2"))
    rows = torch.arange(heads) % w2.shape[0]
    weights = {**payload["model"], "decoder_bridge.w1.weight": w1.clone(), "decoder_bridge.w2.weight": w2[rows]}
    config = {**payload["config"], "model": {**model, "decoder_heads": heads}}
    return {**_with_weights(payload, weights), "config": config}


# --- attention over the encoder states ------------------------------------------------------------
def add_decoder_states(payload: dict, seed: int = 0) -> dict:
    """PAYLOAD with decoders that also attend over the encoder states (model.decoder_states; not a run to resume: a
    model to start from). Each decoder gets the score W_s of that attention, drawn as PyTorch draws a Linear's,
    U(-1/sqrt(H), 1/sqrt(H)) for an LSTM of H units, and W_c columns for its context at zero: the model translates
    exactly as before, and the first steps move those columns. Everything else keeps its bytes."""
    model = dict(payload["config"]["model"])
    if not payload.get("decoder_languages"):
        raise CheckpointError("the model has no decoders (an encoder-only model): give a trainer checkpoint or a "
                              "model exported with its decoders")
    if model.get("decoder_states", False):
        raise ConfigError("the model's decoders already attend over the encoder states (model.decoder_states)")
    generator = torch.Generator().manual_seed(seed)
    hidden, weights = model["dec_hidden"], dict(payload["model"])
    d_h = payload["model"]["bridge.w1.weight"].shape[1]
    for lang in payload["decoder_languages"]:  # in the stored order: the draws follow --seed
        w_c = weights[f"decoders.{lang}.attn_out.weight"]  # (O, memory + H) over [c_t; h_t]; stored as it is
        weights[f"decoders.{lang}.attn_out.weight"] = torch.cat([w_c, w_c.new_zeros(w_c.shape[0], d_h)], dim=1)
        drawn = (torch.rand(d_h, hidden, generator=generator) * 2 - 1) * hidden ** -0.5
        weights[f"decoders.{lang}.states_score.weight"] = drawn.to(w_c.dtype)
    config = {**payload["config"], "model": {**model, "decoder_states": True}}
    return {**_with_weights(payload, weights), "config": config}


# --- new tokenizers -------------------------------------------------------------------------------
def run_tokenizers(config: Config, data: str | None = None) -> dict:
    """{lang: LanguageTokenizer}: CONFIG's tokenizers, trained (or found in the cache) as its run would."""
    from bridgeembed.text.parallel import corpus_dir
    from bridgeembed.training.data import prepare_main_corpus

    tokenizers, _ = prepare_main_corpus(config, corpus_dir(config.data.path, data), data, None)
    return tokenizers


def old_pieces(old: SentencePieceProcessor, piece: str) -> list:
    """The ids of `old` (a SentencePieceProcessor) that spell `piece` (a string of another vocabulary).

    sentencepiece marks a word start itself, so a piece from inside a word ("ment") would come back as a
    word's start ("\u2581ment"); its first id is then swapped for the same string without the mark where `old`
    has one."""
    text = piece.replace(WORD, " ")
    ids = old.encode(text, out_type=int) if text.strip() else []
    if not ids:
        return []
    if not piece.startswith(WORD):
        first = old.id_to_piece(ids[0])
        if first == WORD:
            ids = ids[1:]
        elif first.startswith(WORD) and old.piece_to_id(first[1:]) != old.unk_id():
            ids = [old.piece_to_id(first[1:]), *ids[1:]]
    return [i for i in ids if i >= SPECIAL] or ids


def transfer(old: SentencePieceProcessor, new: SentencePieceProcessor) -> tuple[list, int]:
    """For each id of `new`: the ids of `old` whose mean row it takes; and how many pieces kept their own row."""
    sources, same = [], 0
    for i in range(new.get_piece_size()):
        piece = new.id_to_piece(i)
        if i < SPECIAL:
            sources.append([i])
            continue
        j = old.piece_to_id(piece)
        if j != old.unk_id() and old.id_to_piece(j) == piece:
            sources.append([j])
            same += 1
        else:
            sources.append(old_pieces(old, piece) or [old.unk_id()])
    return sources, same


def mean_rows(table: torch.Tensor, sources: list) -> torch.Tensor:
    """(len(sources), *table.shape[1:]): row i the mean of table's rows sources[i]."""
    return torch.stack([table[ids].float().mean(dim=0) for ids in sources]).to(table.dtype)


def check_languages(payload: dict, config: Config) -> None:
    """CONFIG's data.languages must be the model's: each language's rows are carried over to its new tokenizer,
    so a language the model lacks has nothing to start from, and one CONFIG leaves out would keep its weights
    without a tokenizer (a model that does not load)."""
    have, want = list(payload["tokenizers"]), list(config.data.languages)
    added, left = [g for g in want if g not in have], [g for g in have if g not in want]
    if added:
        raise ConfigError(f"CONFIG's data.languages ({', '.join(want)}) add {', '.join(added)}, a language the model "
                          f"does not have (it has {', '.join(have)}): retokenize carries a model's own languages over "
                          f"to new tokenizers; take {', '.join(added)} out of data.languages, or train a model with it")
    if left:
        raise ConfigError(f"CONFIG's data.languages ({', '.join(want)}) leave out {', '.join(left)}, which the model "
                          f"has (it has {', '.join(have)}): its weights would stay without a tokenizer; give every "
                          f"language of the model in data.languages")


def retokenized(payload: dict, tokenizers: dict, config: Config) -> tuple[dict, dict]:
    """MODEL's payload with `tokenizers` ({lang: LanguageTokenizer}) and its vocabulary rows carried over; and
    {lang: pieces that kept their own row}. MODEL needs decoders and CONFIG's model section."""
    if with_defaults("model", payload["config"].get("model")) != asdict(config.model):
        raise ConfigError("the model has another model config than CONFIG's; copy its model section into CONFIG")
    missing = sorted(set(tokenizers) - set(payload.get("decoder_languages") or ()))
    if missing:
        raise CheckpointError(f"the model lacks the decoder of {', '.join(missing)} (an encoder-only model: give it "
                              f"decoders with `bridgeembed-recipe with-decoders` first)")
    state, kept = dict(payload["model"]), {}
    for lang, tokenizer in tokenizers.items():
        old = LanguageTokenizer.from_state(payload["tokenizers"][lang]).sp
        sources, kept[lang] = transfer(old, tokenizer.sp)
        for key in (f"encoders.{lang}.embed.weight", f"decoders.{lang}.embed.weight", f"decoders.{lang}.out.weight",
                    f"decoders.{lang}.out.bias"):
            if key in state:
                state[key] = mean_rows(state[key], sources)
    out = {**payload, "model": state, "tokenizers": {lang: tok.state() for lang, tok in tokenizers.items()},
           "config": {**payload["config"], "tokenizer": asdict(config.tokenizer), "data": asdict(config.data)}}
    out.pop("trainer", None)  # not a run to resume: a model to start from
    return out, kept
