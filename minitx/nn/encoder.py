"""Encoder-only Transformers (BERT, Devlin et al., 2019): the encoder stack on its own, BERT's
masking, a masked-language-model head and loss, and pooled or per-token classification heads.

    ids [B, L] -> h0 = embed(ids) * sqrt(d) + positions -> N encoder layers -> H [B, L, d]
    masked LM:         logits = LN(act(H W_t^T + b_t)) E^T + b_o        over the vocabulary (E: the
                       input embedding matrix, tied)
    pooled classifier: logits = W_c pool(H) + b_c,  pool = H[:, 0] (the [CLS] row) or the mean of
                       H over the real (non-pad) positions
    token classifier:  logits = H W_c^T + b_c                             one row per position

The layers are the translation model's (``EncoderLayer``, embeddings, positions): nothing new
is computed here, only put together. Padding is never attended to: every layer gets the key
mask ``ids != pad_id``.

BERT's masking (:func:`mask_tokens`): each maskable token (not padding, not a special such
as [CLS] / [SEP]) is chosen with probability 15%; a chosen token is replaced by [MASK] with
probability 80%, by a uniformly random ordinary token with 10%, and kept with 10%. The
target is the original token at chosen positions and ``IGNORE_INDEX`` elsewhere, so the
loss (:meth:`MaskedLanguageModel.loss`)

    L = -(1/|M|) sum_{(b,i) in M} log softmax(logits[b, i])[ids[b, i]]    M = chosen positions

sees only the chosen positions; the logits are computed only there (the vocabulary
projection is the costly part, and 85% of it would be thrown away).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from minitx import backend
from minitx import functional as F
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.nn import init
from minitx.nn.attention import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from minitx.nn.layers import Dropout, Embedding, LayerNorm, Linear, ModuleList, _new_parameter, token_ids
from minitx.nn.module import Module
from minitx.nn.transformer import EncoderLayer

_LINEAR_ACTIVATIONS = {"relu": "relu", "gelu": "gelu_tanh"}  # our name -> Linear's

#: the target of positions that are not predicted (F.cross_entropy's default ignore_index)
IGNORE_INDEX = -100


class EncoderModel(Module):
    """The encoder stack alone: token ids [B, L] -> hidden states [B, L, d_model].

    Options as in :class:`~minitx.nn.Transformer` (positional, norm_first, activation); a
    pre-norm stack ends with a LayerNorm. ``pool(hidden, ids, how)`` turns the hidden states
    into one vector per sequence.
    """

    def __init__(self, vocab_size, d_model=256, num_heads=4, num_layers=4, d_ff=1024, dropout=0.1,
                 attention_dropout=None, max_len=128, positional="sinusoidal", norm_first=True,
                 activation="gelu", pad_id=0, device=None):
        super().__init__()
        if positional not in ("sinusoidal", "learned"):
            raise ValueError(f"EncoderModel: positional must be 'sinusoidal' or 'learned', got {positional!r}")
        if not 0 <= pad_id < vocab_size:
            raise ValueError(f"EncoderModel: pad_id {pad_id} is not an id of a vocabulary of {vocab_size}")
        device = backend.check_device(device)
        attention_dropout = dropout if attention_dropout is None else attention_dropout
        self.config = dict(vocab_size=vocab_size, d_model=d_model, num_heads=num_heads, num_layers=num_layers,
                           d_ff=d_ff, dropout=dropout, attention_dropout=attention_dropout, max_len=max_len,
                           positional=positional, norm_first=norm_first, activation=activation, pad_id=pad_id)
        self.vocab_size, self.d_model, self.pad_id, self.max_len = vocab_size, d_model, pad_id, max_len
        self.embed_scale = math.sqrt(d_model)
        self.embed = Embedding(vocab_size, d_model, device=device)
        position = SinusoidalPositionalEncoding if positional == "sinusoidal" else LearnedPositionalEmbedding
        self.pos = position(d_model, max_len, device=device)
        self.dropout = Dropout(dropout)
        self.layers = ModuleList(EncoderLayer(d_model, num_heads, d_ff, dropout, attention_dropout, norm_first,
                                              activation, device) for _ in range(num_layers))
        if norm_first:
            self.norm = LayerNorm(d_model, device=device)
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def check_ids(self, ids) -> Tensor:
        """ids as an integer Tensor [B, L] on the model's device; a clear error otherwise."""
        return token_ids("EncoderModel", ids, self.device)

    def padding_mask(self, ids) -> Tensor:
        """[B, 1, 1, L] boolean, True at real tokens: the keys that may be attended to."""
        return Tensor((ids.data != self.pad_id)[:, None, None, :])

    def forward(self, ids):
        ids = self.check_ids(ids)
        mask = self.padding_mask(ids)
        x = self.dropout(self.pos(self.embed(ids) * self.embed_scale))
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x) if self.config["norm_first"] else x

    def pool(self, hidden, ids, how="cls"):
        """One vector per sequence [B, d]: the first position's hidden state ('cls'), or the
        mean over the real positions ('mean': sum_i m_i H_i / sum_i m_i, m = ids != pad)."""
        if how == "cls":
            return hidden[:, 0]
        if how == "mean":
            ids = self.check_ids(ids)
            real = Tensor((ids.data != self.pad_id).astype(hidden.dtype)[:, :, None])
            return (hidden * real).sum(axis=1) / real.sum(axis=1)
        raise ValueError(f"EncoderModel.pool: how must be 'cls' or 'mean', got {how!r}")


class MaskedLMHead(Module):
    """logits = LN(act(h W_t^T + b_t)) E^T + b_o: BERT's transform (act = GELU in BERT; ReLU is
    cheaper on a CPU), then the embedding matrix E [V, d] of the encoder (tied) as the output
    projection, with its own bias b_o [V]."""

    def __init__(self, embedding: Embedding, activation="gelu", device=None):
        super().__init__()
        if activation not in _LINEAR_ACTIVATIONS:
            raise ValueError(f"MaskedLMHead: activation must be 'relu' or 'gelu', got {activation!r}")
        d_model = embedding.weight.shape[1]
        self.transform = Linear(d_model, d_model, activation=_LINEAR_ACTIVATIONS[activation], device=device)
        self.norm = LayerNorm(d_model, device=device)
        self.embedding = [embedding]  # a list: the tied table stays the encoder's parameter, not a second one
        self.bias = _new_parameter((embedding.weight.shape[0],), device)

    def forward(self, hidden):
        return F.linear(self.norm(self.transform(hidden)), self.embedding[0].weight, self.bias)


class MaskedLanguageModel(Module):
    """An EncoderModel with a masked-language-model head (tied to its embedding).

    ``forward(ids)`` gives logits [B, L, V] at every position; ``loss(inputs, targets)`` the
    mean cross-entropy over the positions whose target is not IGNORE_INDEX, computing the
    vocabulary projection only there.
    """

    def __init__(self, encoder: EncoderModel):
        super().__init__()
        self.encoder = encoder
        self.head = MaskedLMHead(encoder.embed, encoder.config["activation"], device=encoder.device)
        self.head.to(dtype=encoder.embed.weight.dtype)  # a head added to a float64 encoder is float64 too

    def forward(self, ids):
        return self.head(self.encoder(ids))

    def loss(self, inputs, targets):
        targets = np.asarray(backend.to_numpy(as_tensor(targets).data))
        if targets.shape != tuple(as_tensor(inputs).shape):
            raise ValueError(f"MaskedLanguageModel.loss: targets of shape {targets.shape} do not match the inputs' "
                             f"{tuple(as_tensor(inputs).shape)}")
        hidden = self.encoder(inputs)
        rows, cols = np.nonzero(targets != IGNORE_INDEX)
        if rows.size == 0:
            raise ValueError("MaskedLanguageModel.loss: no position is masked (every target is IGNORE_INDEX)")
        picked = hidden[backend.to_device(rows, hidden.device), backend.to_device(cols, hidden.device)]
        return F.cross_entropy(self.head(picked), targets[rows, cols])


class EncoderClassifier(Module):
    """An EncoderModel with a classification head: logits [B, C] for pooling 'cls' or
    'mean' (one label per sequence), [B, L, C] for pooling None (one label per token).
    Dropout p is applied to the features before the head, as in BERT's fine-tuning."""

    def __init__(self, encoder: EncoderModel, num_classes, pooling="cls", dropout=0.1):
        super().__init__()
        if pooling not in ("cls", "mean", None):
            raise ValueError(f"EncoderClassifier: pooling must be 'cls', 'mean' or None, got {pooling!r}")
        self.encoder, self.pooling = encoder, pooling
        self.dropout = Dropout(dropout)
        self.head = Linear(encoder.d_model, num_classes, device=encoder.device, dtype=encoder.embed.weight.dtype)

    def forward(self, ids):
        hidden = self.encoder(ids)
        features = hidden if self.pooling is None else self.encoder.pool(hidden, ids, self.pooling)
        return self.head(self.dropout(features))

    def extra_repr(self):
        return f"pooling={self.pooling!r}"


@dataclass
class MaskedBatch:
    """inputs: the ids the model reads ([MASK] / random / kept at chosen positions);
    targets: the original id at chosen positions, IGNORE_INDEX elsewhere (both [B, L])."""

    inputs: np.ndarray
    targets: np.ndarray

    @property
    def n_masked(self) -> int:
        return int((self.targets != IGNORE_INDEX).sum())


def mask_tokens(ids, rng: np.random.Generator, mask_id: int, random_ids: tuple, special_ids=(),
                pad_id: int = 0, mask_prob=0.15, replace_prob=0.8, random_prob=0.1) -> MaskedBatch:
    """BERT's masking of an integer array ``ids`` [B, L] (NumPy, host side).

    Each token that is neither ``pad_id`` nor in ``special_ids`` is chosen with probability
    ``mask_prob``; a chosen token becomes ``mask_id`` with probability ``replace_prob``, a
    random id from ``range(*random_ids)`` with ``random_prob``, and stays as it is otherwise.
    All draws come from ``rng``, so the same generator state gives the same batch.

    A batch has at least one chosen position (when mask_prob > 0 and a token is maskable): the
    loss needs one, and a batch of a few short sentences often gets none (4 maskable tokens:
    0.85^4 = 52%). When the draws above choose none, one more maskable position is drawn,
    uniformly, from ``rng`` after them (its action is the one already drawn for it), so a batch
    that had a chosen position is masked exactly as without this rule. (BERT chooses at least
    one per *sequence*; per sequence would change most batches of a run made before the rule.)
    """
    ids = np.asarray(ids)
    if ids.ndim != 2 or ids.dtype.kind not in "iu":
        raise ValueError(f"mask_tokens: ids must be an integer array [batch, length], got shape {ids.shape} "
                         f"and dtype {ids.dtype.name}")
    if not (0 <= mask_prob <= 1 and replace_prob >= 0 and random_prob >= 0 and replace_prob + random_prob <= 1):
        raise ValueError(f"mask_tokens: need 0 <= mask_prob <= 1 and replace_prob + random_prob <= 1 (both >= 0), "
                         f"got {mask_prob}, {replace_prob}, {random_prob}")
    low, high = random_ids
    if not low < high:
        raise ValueError(f"mask_tokens: random_ids must be a non-empty range (low, high), got {random_ids}")
    maskable = ~np.isin(ids, [pad_id, mask_id, *special_ids])
    chosen = maskable & (rng.random(ids.shape) < mask_prob)
    action = rng.random(ids.shape)  # < replace_prob: [MASK]; then random_prob: a random token; else kept
    inputs = ids.copy()
    inputs[chosen & (action < replace_prob)] = mask_id
    randomized = chosen & (action >= replace_prob) & (action < replace_prob + random_prob)
    inputs[randomized] = rng.integers(low, high, int(randomized.sum()))
    if mask_prob > 0 and not chosen.any() and maskable.any():
        # drawn after every usual draw: batches that chose a position never reach here
        extra = np.unravel_index(rng.choice(np.flatnonzero(maskable)), ids.shape)
        chosen[extra] = True
        if action[extra] < replace_prob:
            inputs[extra] = mask_id
        elif action[extra] < replace_prob + random_prob:
            inputs[extra] = rng.integers(low, high)
    targets = np.where(chosen, ids, IGNORE_INDEX)
    return MaskedBatch(inputs.astype(np.int64), targets.astype(np.int64))
