"""The encoder-decoder Transformer of "Attention Is All You Need" (Vaswani et al., 2017).

    src ids -> embed * sqrt(d_model) + positions -> N encoder layers        -> memory
    tgt ids -> embed * sqrt(d_model) + positions -> N decoder layers(memory) -> linear -> logits

Encoder layer (post-norm, as in the paper):  x = LN(x + Dropout(SelfAttn(x)));  x = LN(x + Dropout(FF(x)))
Decoder layer adds cross-attention over the memory between the two, and its self-attention
is causal. With ``norm_first=True`` (pre-norm) each sublayer is x = x + Dropout(Sub(LN(x))),
and a final LayerNorm closes each stack; it trains more stably without warm-up.
"""
from __future__ import annotations

import math
import numbers

from minitx import backend
from minitx import functional as F
from minitx.autograd.tensor import Tensor
from minitx.nn import init
from minitx.nn.attention import LearnedPositionalEmbedding, MultiHeadAttention, SinusoidalPositionalEncoding
from minitx.nn.layers import Dropout, Embedding, LayerNorm, Linear, ModuleList, _new_parameter, token_ids
from minitx.nn.module import Module
from minitx.nn.torch_transformer import generate_square_subsequent_mask

# for a PyTorch user whose nn.Transformer(d_model, nhead) reached this one
_NOT_PYTORCHS = ("minitx's Transformer is a whole translation model over token ids, Transformer(src_vocab, tgt_vocab, "
                 "d_model=512, num_heads=8, ...); PyTorch's nn.Transformer(d_model, nhead), over embeddings, is "
                 "built here from minitx.nn.TransformerEncoder and TransformerDecoder (and their layers)")

# Configurations matching well-known tutorials and the paper (vocabulary sizes come from data).
PRESETS = {
    # the PyTorch seq2seq tutorial's Transformer: 9,038,853 parameters with vocabularies 7,855 / 5,893
    "seed004-small": dict(d_model=256, num_heads=8, num_encoder_layers=3, num_decoder_layers=3, d_ff=512,
                          dropout=0.1, max_len=100, positional="learned", share_embeddings=False,
                          tie_output=False, output_bias=True),
    # the paper's base model
    "base": dict(d_model=512, num_heads=8, num_encoder_layers=6, num_decoder_layers=6, d_ff=2048,
                 dropout=0.1, max_len=256, positional="sinusoidal"),
}


class FeedForward(Module):
    """Position-wise feed-forward: y = W2 Dropout(act(W1 x + b1)) + b2, d_model -> d_ff -> d_model.

    act is ReLU or GELU (tanh form). The first Linear adds b1, applies act and Dropout as
    one op (F.bias_act_dropout), one pass over the [rows, d_ff] activations, fused into one
    kernel on the GPU.
    """

    _ACTIVATIONS = {"relu": "relu", "gelu": "gelu_tanh"}  # our name -> F.bias_act_dropout's

    def __init__(self, d_model, d_ff, dropout=0.1, activation="relu", device=None):
        super().__init__()
        if activation not in self._ACTIVATIONS:
            raise ValueError(f"FeedForward: activation must be 'relu' or 'gelu', got {activation!r}")
        self.activation = activation
        self.linear1 = Linear(d_model, d_ff, device=device, activation=self._ACTIVATIONS[activation],
                              dropout=dropout)
        self.linear2 = Linear(d_ff, d_model, device=device)

    def forward(self, x):
        return self.linear2(self.linear1(x))

    def extra_repr(self):
        return f"activation={self.activation!r}"


def _or(value, default):
    """A dropout rate left None takes the layer's ``dropout``."""
    return default if value is None else value


class _Sublayers(Module):
    """Shared residual wiring: ``residual(i, x, f)`` applies sublayer f with norm i,
    post-norm LN(x + Dropout(f(x))) or pre-norm x + Dropout(f(LN(x))). The dropout and the
    residual add are one op (F.dropout_add), one kernel on the GPU."""

    def __init__(self, d_model, count, dropout, norm_first, device):
        super().__init__()
        self.norm_first = norm_first
        self.norms = ModuleList(LayerNorm(d_model, device=device) for _ in range(count))
        self.dropout = Dropout(dropout)

    def residual(self, i, x, sublayer):
        norm = self.norms[i]
        p = self.dropout.p
        if self.norm_first:
            return F.dropout_add(sublayer(norm(x)), x, p, self.training)
        return norm(F.dropout_add(sublayer(x), x, p, self.training))


class EncoderLayer(_Sublayers):
    """Self-attention then the feed-forward, each a residual sublayer. ``dropout`` is on the
    residual branches; ``activation_dropout`` (None: the same) on the feed-forward's hidden
    activations, ``attention_dropout`` on the attention weights."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, attention_dropout=0.1, norm_first=False,
                 activation="relu", device=None, activation_dropout=None):
        super().__init__(d_model, 2, dropout, norm_first, device)
        self.self_attn = MultiHeadAttention(d_model, num_heads, attention_dropout, device=device)
        self.feed_forward = FeedForward(d_model, d_ff, _or(activation_dropout, dropout), activation, device)

    def forward(self, x, src_mask=None):
        x = self.residual(0, x, lambda h: self.self_attn(h, mask=src_mask))
        return self.residual(1, x, self.feed_forward)


class DecoderLayer(_Sublayers):
    """Causal self-attention, cross-attention over the encoder's output, then the feed-forward;
    the dropouts as in EncoderLayer."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1, attention_dropout=0.1, norm_first=False,
                 activation="relu", device=None, activation_dropout=None):
        super().__init__(d_model, 3, dropout, norm_first, device)
        self.self_attn = MultiHeadAttention(d_model, num_heads, attention_dropout, device=device)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, attention_dropout, self_attention=False,
                                             device=device)
        self.feed_forward = FeedForward(d_model, d_ff, _or(activation_dropout, dropout), activation, device)

    def forward(self, x, memory, src_mask=None, tgt_mask=None, cache=None, weights=None):
        """cache: {'self': {}, 'cross': {}} for incremental decoding; weights: a list that
        receives this layer's cross-attention weights when given."""
        self_cache = cache["self"] if cache is not None else None
        cross_cache = cache["cross"] if cache is not None else None
        x = self.residual(0, x, lambda h: self.self_attn(h, mask=tgt_mask, causal=True, cache=self_cache))

        def cross(h):
            out = self.cross_attn(h, memory, mask=src_mask, cache=cross_cache, return_weights=weights is not None)
            if weights is None:
                return out
            weights.append(out[1])
            return out[0]

        x = self.residual(1, x, cross)
        return self.residual(2, x, self.feed_forward)


class DecoderCache:
    """Keys and values of every decoder layer from earlier steps, for incremental decoding.

    ``length`` counts the target positions already decoded (the next position's offset).
    ``reorder(rows)`` keeps batch rows ``rows`` (repeated, in that order) of everything cached.
    Its two halves can go apart: ``reorder_decoded`` keeps rows of the decoded positions'
    keys and values (self-attention), ``reorder_memory`` of the source's (cross-attention).
    Beam search regroups the hypotheses of a sentence every step, but they share one source,
    so it reorders the memory's rows only when whole sentences leave the batch.
    """

    def __init__(self, num_layers):
        self.layers = [{"self": {}, "cross": {}} for _ in range(num_layers)]
        self.length = 0

    def reorder(self, rows):
        self.reorder_decoded(rows)
        self.reorder_memory(rows)

    def reorder_decoded(self, rows):
        self._keep("self", rows)

    def reorder_memory(self, rows):
        self._keep("cross", rows)

    def _keep(self, part, rows):
        for layer in self.layers:
            cached = layer[part]
            for key in cached:
                cached[key] = cached[key][rows]


class Transformer(Module):
    """Encoder-decoder Transformer for sequence-to-sequence tasks.

    src and tgt are integer arrays [B, S] and [B, T] padded with ``pad_id``; the model makes
    the source padding mask and the causal target mask itself. ``forward(src, tgt_in)``
    returns logits [B, T, tgt_vocab]. Options: positional='sinusoidal' or 'learned';
    share_embeddings (one table for both languages, needs one joint vocabulary); tie_output
    (the output projection reuses the target embedding matrix); norm_first (pre-norm);
    dropout (on the embeddings and the residual branches), attention_dropout and
    activation_dropout (on the attention weights and the feed-forward's hidden activations;
    None: dropout). All matrices are xavier-uniform initialized, as in the tutorials; with
    embed_init='normal' the embedding tables are drawn from N(0, 1/d_model) instead, their
    padding row 0, as fairseq's Transformer draws them (times sqrt(d_model) on the way in, a
    token's embedding then has entries of about 1, the size of the sinusoidal positions'; xavier's
    table, 10,000 x 128, has about a sixth of that).
    """

    #: keywords of PyTorch's nn.Transformer that minitx's does not take
    _PYTORCHS_KEYWORDS = ("nhead", "dim_feedforward", "custom_encoder", "custom_decoder", "layer_norm_eps",
                          "batch_first", "bias", "dtype")

    def __new__(cls, *args, **kwargs):
        """A call that can only be PyTorch's nn.Transformer(d_model=..., nhead=...) is refused here,
        before __init__ would name one keyword alone: one of PyTorch's own keywords (nhead=, ...),
        or d_model= without the two vocabularies. By position no rule is safe: PyTorch's
        nn.Transformer(512, 8) is a pair of vocabularies here (a test's toy model has 5 to 11
        words), refused only when one is too small for the special tokens (__init__), else built,
        its forward then refusing embeddings where it takes token ids."""
        given = [name for name in cls._PYTORCHS_KEYWORDS if name in kwargs]
        if "d_model" in kwargs and len(args) < 2 and not {"src_vocab", "tgt_vocab"} & set(kwargs):
            given.insert(0, "d_model")
        if given:
            raise TypeError(f"Transformer: {', '.join(name + '=' for name in given)} make this PyTorch's "
                            f"nn.Transformer call, not minitx's. " + _NOT_PYTORCHS)
        return super().__new__(cls)

    def __init__(self, src_vocab, tgt_vocab, d_model=512, num_heads=8, num_encoder_layers=6,
                 num_decoder_layers=6, d_ff=2048, dropout=0.1, attention_dropout=None, max_len=256,
                 positional="sinusoidal", share_embeddings=False, tie_output=False, output_bias=True,
                 norm_first=False, activation="relu", pad_id=0, device=None, activation_dropout=None,
                 embed_init="xavier"):
        super().__init__()
        from minitx.data.vocab import SPECIAL_TOKENS  # noqa: PLC0415 (import minitx loads no data module)

        # a vocabulary too small for the special tokens and a word is most likely PyTorch's nn.Transformer(d_model,
        # nhead): refused before a d_model=512 model is built for nothing (what is no number, Embedding refuses)
        smallest = len(SPECIAL_TOKENS) + 1
        if any(isinstance(n, numbers.Real) and n < smallest for n in (src_vocab, tgt_vocab)):
            raise ValueError(f"Transformer: src_vocab {src_vocab} and tgt_vocab {tgt_vocab} are vocabulary sizes, each "
                             f"at least {smallest}: the special tokens {' '.join(SPECIAL_TOKENS)} and a word. "
                             + _NOT_PYTORCHS)
        if positional not in ("sinusoidal", "learned"):
            raise ValueError(f"Transformer: positional must be 'sinusoidal' or 'learned', got {positional!r}")
        if embed_init not in ("xavier", "normal"):
            raise ValueError(f"Transformer: embed_init must be 'xavier' or 'normal', got {embed_init!r}")
        if share_embeddings and src_vocab != tgt_vocab:
            raise ValueError(f"Transformer: share_embeddings needs one joint vocabulary, got source {src_vocab} "
                             f"and target {tgt_vocab}")
        device = backend.check_device(device)
        attention_dropout, activation_dropout = _or(attention_dropout, dropout), _or(activation_dropout, dropout)
        self.config = dict(src_vocab=src_vocab, tgt_vocab=tgt_vocab, d_model=d_model, num_heads=num_heads,
                           num_encoder_layers=num_encoder_layers, num_decoder_layers=num_decoder_layers,
                           d_ff=d_ff, dropout=dropout, attention_dropout=attention_dropout,
                           activation_dropout=activation_dropout, max_len=max_len,
                           positional=positional, share_embeddings=share_embeddings, tie_output=tie_output,
                           output_bias=output_bias, norm_first=norm_first, activation=activation, pad_id=pad_id,
                           embed_init=embed_init)
        self.d_model, self.pad_id, self.max_len = d_model, pad_id, max_len
        self.embed_scale = math.sqrt(d_model)

        self.src_embed = Embedding(src_vocab, d_model, device=device)
        self.tgt_embed = self.src_embed if share_embeddings else Embedding(tgt_vocab, d_model, device=device)
        position = SinusoidalPositionalEncoding if positional == "sinusoidal" else LearnedPositionalEmbedding
        self.src_pos = position(d_model, max_len, device=device)
        self.tgt_pos = position(d_model, max_len, device=device)
        self.dropout = Dropout(dropout)
        layer_args = (d_model, num_heads, d_ff, dropout, attention_dropout, norm_first, activation, device)
        self.encoder_layers = ModuleList(EncoderLayer(*layer_args, activation_dropout=activation_dropout)
                                         for _ in range(num_encoder_layers))
        self.decoder_layers = ModuleList(DecoderLayer(*layer_args, activation_dropout=activation_dropout)
                                         for _ in range(num_decoder_layers))
        if norm_first:
            self.encoder_norm = LayerNorm(d_model, device=device)
            self.decoder_norm = LayerNorm(d_model, device=device)
        if tie_output:
            self.output_bias = _new_parameter((tgt_vocab,), device) if output_bias else None
        else:
            self.output = Linear(d_model, tgt_vocab, bias=output_bias, device=device)
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        if embed_init == "normal":
            for embedding in {id(e): e for e in (self.src_embed, self.tgt_embed)}.values():  # (one, when shared)
                init.normal_(embedding.weight, 0.0, d_model ** -0.5)
                embedding.weight.data[pad_id] = 0.0

    # PyTorch's causal mask for its attention layers (nn.MultiheadAttention's attn_mask), where
    # PyTorch code asks for it; this model makes its own masks
    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)

    @classmethod
    def from_preset(cls, name, src_vocab, tgt_vocab, **overrides):
        """A model from PRESETS[name] with the given vocabulary sizes; keywords override."""
        if name not in PRESETS:
            raise ValueError(f"Transformer: unknown preset {name!r}; choose from {sorted(PRESETS)}")
        return cls(src_vocab, tgt_vocab, **{**PRESETS[name], **overrides})

    def _ids(self, ids):
        try:
            return token_ids("Transformer", ids, self.device)
        except ValueError as error:
            raise ValueError(f"{error}. {_NOT_PYTORCHS}") from None

    def _embed(self, embedding, position, ids, offset=0):
        return self.dropout(position(embedding(ids) * self.embed_scale, offset))

    def padding_mask(self, ids):
        """[B, 1, 1, L] boolean, True at real tokens: keys that may be attended to."""
        return Tensor((ids.data != self.pad_id)[:, None, None, :])

    def encode(self, src):
        """Encode source ids [B, S]; returns (memory [B, S, d_model], src_mask [B, 1, 1, S])."""
        src = self._ids(src)
        src_mask = self.padding_mask(src)
        x = self._embed(self.src_embed, self.src_pos, src)
        for layer in self.encoder_layers:
            x = layer(x, src_mask)
        if self.config["norm_first"]:
            x = self.encoder_norm(x)
        return x, src_mask

    def decode(self, tgt_in, memory, src_mask, cache=None, attention_weights=None):
        """Logits [B, T, tgt_vocab] for target inputs [B, T] given the encoded source.

        With a ``DecoderCache``, tgt_in holds only the new positions (usually one) and the
        earlier ones come from the cache; decoded tokens are then assumed not to be padding.
        ``attention_weights``: a list that receives each layer's cross-attention weights.
        """
        tgt_in = self._ids(tgt_in)
        # attention would broadcast a batch of 1 against the source's batch and return
        # logits for sentences that were never given: refuse it instead
        if tgt_in.shape[0] != memory.shape[0] or src_mask.shape[0] != memory.shape[0]:
            raise ValueError(f"Transformer: the target batch has {tgt_in.shape[0]} sentences but the "
                             f"source batch (memory) has {memory.shape[0]} and its mask "
                             f"{src_mask.shape[0]}; they must match")
        offset = cache.length if cache is not None else 0
        tgt_mask = None if cache is not None else self.padding_mask(tgt_in)
        x = self._embed(self.tgt_embed, self.tgt_pos, tgt_in, offset)
        for i, layer in enumerate(self.decoder_layers):
            layer_cache = cache.layers[i] if cache is not None else None
            x = layer(x, memory, src_mask, tgt_mask, layer_cache, attention_weights)
        if cache is not None:
            cache.length += tgt_in.shape[1]
        if self.config["norm_first"]:
            x = self.decoder_norm(x)
        if self.config["tie_output"]:
            return F.linear(x, self.tgt_embed.weight, self.output_bias)
        return self.output(x)

    def forward(self, src, tgt_in):
        memory, src_mask = self.encode(src)
        return self.decode(tgt_in, memory, src_mask)

    def new_cache(self):
        return DecoderCache(len(self.decoder_layers))
