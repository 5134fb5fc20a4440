"""Language-specific decoders: an LSTM with global attention over the k columns of M.

Vázquez et al. (2020), Section 2.2: the decoder attends over the bridge's fixed-size matrix M
instead of the encoder states, and starts from the mean of M. The attention is Luong et al.'s (2015)
"general" score with an attentional hidden state h~_t = tanh(W_c [c_t; h_t]). All k columns are
always visible: heads are never masked by source length.

With `states_dim` > 0 (model.decoder_states) the decoder also attends over the encoder states H themselves, token
by token with padding masked (Luong et al.'s "general" score again, a second one): h~_t = tanh(W_c [c_t; h_t; s_t])
with s_t that context. The columns of M still give the starting state, and the sentence vectors never see this
attention, so decoders trained with it on frozen encoders and bridge leave every vector as it was
(`recipes.add_decoder_states` adds it to a trained model, W_c's new columns at zero: the same translations).

With tied embeddings the output layer is the embedding table, so h~ has the embeddings' size, which the LSTM
need not have: W_c maps [c_t; h_t] to emb_dim. A decoder wider than its embeddings (dec_hidden > emb_dim)
stays tied at no cost in vocabulary weights, the largest tables of a model (`recipes.widen_decoders`).

`step` is the one-step function that teacher forcing, greedy decoding and beam search all use.
"""

from typing import NamedTuple

import torch
from torch import nn

from bridgeembed.model.dropout import Dropout
from bridgeembed.text.tokenization import PAD


class DecoderState(NamedTuple):
    h: torch.Tensor  # (layers, B, H)
    c: torch.Tensor  # (layers, B, H)
    feed: torch.Tensor  # (B, O): last attentional state (used with input feeding)

    def index_select(self, index: torch.Tensor) -> "DecoderState":
        """Reorder/expand the batch (beam search)."""
        return DecoderState(self.h[:, index], self.c[:, index], self.feed[index])


class Source(NamedTuple):
    """The encoder states a decoder with model.decoder_states attends over, beside the columns of M."""

    states: torch.Tensor  # H: (B, T_src, d_h)
    mask: torch.Tensor  # (B, T_src), True on real tokens

    def repeat_interleave(self, times: int) -> "Source":
        """Each sentence `times` times in a row (beam search's hypotheses)."""
        return Source(self.states.repeat_interleave(times, dim=0), self.mask.repeat_interleave(times, dim=0))


class StepOutput(NamedTuple):
    logits: torch.Tensor  # (B, t, V)
    attention: torch.Tensor  # (B, t, k): weights over the columns of M
    state: DecoderState


class LSTMDecoder(nn.Module):
    def __init__(self, vocab_size: int, emb_dim: int, hidden: int, layers: int, memory_dim: int,
                 dropout: float, input_feed: bool = False, tie_embeddings: bool = True, states_dim: int = 0) -> None:
        """states_dim: the size of the encoder states to attend over too (0: only the columns of M)."""
        super().__init__()
        self.layers, self.hidden, self.input_feed = layers, hidden, input_feed
        self.out_dim = emb_dim if tie_embeddings else hidden  # O: the size of h~, the output layer's input
        self.embed = nn.Embedding(vocab_size, emb_dim, padding_idx=PAD)
        self.rnn = nn.LSTM(emb_dim + (self.out_dim if input_feed else 0), hidden, layers, batch_first=True,
                           dropout=dropout if layers > 1 else 0.0)
        self.init_state = nn.Linear(memory_dim, 2 * layers * hidden)  # mean(M) -> (h_0, c_0) of every layer
        self.attn_score = nn.Linear(hidden, memory_dim, bias=False)  # Luong "general": h_t^T W_a m_j
        # over the encoder states (states_dim > 0): h_t^T W_s h_j, token by token
        self.states_score = nn.Linear(hidden, states_dim, bias=False) if states_dim else None
        self.attn_out = nn.Linear(memory_dim + hidden + states_dim, self.out_dim, bias=False)  # W_c
        self.out = nn.Linear(self.out_dim, vocab_size)
        if tie_embeddings:
            self.out.weight = self.embed.weight
        self.dropout = Dropout(dropout)

    def init(self, memory: torch.Tensor) -> DecoderState:
        """memory M: (B, k, d_h) -> the state before the first target token."""
        B = memory.size(0)
        hc = torch.tanh(self.init_state(memory.mean(dim=1)))  # (B, 2 * layers * H)
        hc = hc.view(B, 2, self.layers, self.hidden).permute(1, 2, 0, 3)  # (2, layers, B, H)
        return DecoderState(hc[0].contiguous(), hc[1].contiguous(), memory.new_zeros(B, self.out_dim))

    def step(self, tokens: torch.Tensor, memory: torch.Tensor, state: DecoderState,
             source: Source | None = None) -> StepOutput:
        """tokens: (B, t) previous target ids; memory: (B, k, d_h). t must be 1 with input feeding. `source`: the
        encoder states, for a decoder that attends over them (states_dim > 0)."""
        attentional, alpha, state = self.attentional(tokens, memory, state, source)
        logits = self.out(self.dropout(attentional))  # (B, t, V)
        return StepOutput(logits, alpha, state)

    def attentional(self, tokens: torch.Tensor, memory: torch.Tensor, state: DecoderState,
                    source: Source | None = None) -> tuple[torch.Tensor, torch.Tensor, DecoderState]:
        """h~ before the output layer: (B, t, O), with the attention (B, t, k) and the new state."""
        x = self.dropout(self.embed(tokens))  # (B, t, E)
        if self.input_feed:
            x = torch.cat([x, state.feed.unsqueeze(1)], dim=-1)  # (B, 1, E + O)
        out, (h, c) = self.rnn(x, (state.h, state.c))  # out: (B, t, H)
        scores = self.attn_score(out) @ memory.transpose(1, 2)  # (B, t, k)
        alpha = scores.softmax(dim=-1)  # (B, t, k)
        parts = [alpha @ memory, out]  # the context c_t (B, t, d_h) and h_t
        if self.states_score is not None:
            if source is None:
                raise ValueError("this decoder attends over the encoder states (model.decoder_states): give them")
            scores = self.states_score(out) @ source.states.transpose(1, 2)  # (B, t, T_src)
            beta = scores.masked_fill(~source.mask[:, None, :], float("-inf")).softmax(dim=-1)
            parts.append(beta @ source.states)  # s_t: (B, t, d_h)
        attentional = torch.tanh(self.attn_out(torch.cat(parts, dim=-1)))  # h~: (B, t, O)
        return attentional, alpha, DecoderState(h, c, attentional[:, -1])

    def forward(self, tokens: torch.Tensor, memory: torch.Tensor, real: torch.Tensor = None,
                source: Source | None = None) -> torch.Tensor:
        """Teacher forcing. tokens: (B, T) = BOS + target; returns logits (B, T, V), or (N, V) for
        the N real target tokens that `real` names: the output layer and its softmax then run on
        them only, not on padding (about 15% of a CPU training step). `real`: the (N,) flat indices
        of the real tokens in (B, T), row-major (`nmt.real_tokens`), which a GPU can use without
        first copying the count N back to the host."""
        state = self.init(memory)
        if not self.input_feed:
            states = self.attentional(tokens, memory, state, source)[0]  # the LSTM runs over the whole sentence at once
        else:
            steps = []
            for t in range(tokens.size(1)):
                att, _, state = self.attentional(tokens[:, t : t + 1], memory, state, source)
                steps.append(att)
            states = torch.cat(steps, dim=1)  # (B, T, O)
        if real is not None:
            states = states.reshape(-1, states.size(-1)).index_select(0, real)  # (N, O)
        return self.out(self.dropout(states))  # (B, T, V) or (N, V)
