"""PyTorch's attention and Transformer layers under PyTorch's names, arguments and parameter
names: code written for torch.nn ports by renaming, and a PyTorch state_dict loads as it is.

    MultiheadAttention         q = query Wq^T + bq,   k = key Wk^T + bk,   v = value Wv^T + bv
                               head_i = softmax(q_i k_i^T / sqrt(E / h) + M) v_i      (h heads)
                               out = concat(head_1, ..., head_h) Wo^T + bo
    TransformerEncoderLayer    post-norm:  x = norm1(x + SA(x));      x = norm2(x + FF(x))
                               pre-norm:   x = x + SA(norm1(x));      x = x + FF(norm2(x))
                               FF(x) = linear2(dropout(act(linear1(x)))), each sublayer's output
                               through its own dropout (dropout1, dropout2) before the sum
    TransformerDecoderLayer    the same with cross-attention over the memory (CA, norm2)
                               between SA and FF (whose norm is then norm3)
    TransformerEncoder/Decoder num_layers deep copies of one layer, then an optional final norm

They are composed of minitx's ops and layers (F.scaled_dot_product_attention, Linear,
LayerNorm, Dropout). minitx's own models are elsewhere: nn.MultiHeadAttention (fused
projections, a decoding cache), nn.Transformer and nn.EncoderModel (token ids in, logits out).

PyTorch's conventions are kept: sequences are [L, N, E] unless batch_first=True ([N, L, E]),
or [L, E] unbatched; attn_mask is [L, S] or [N * h, L, S], key_padding_mask [N, S]. A
boolean mask is True where attention is NOT allowed (the opposite of
F.scaled_dot_product_attention's, where True = may attend); a float mask is added to the
scores. M above is the sum of the two masks.
"""
from __future__ import annotations

import copy
import functools
import operator

import numpy as np

from minitx import backend
from minitx import functional as F
from minitx.autograd.tensor import Tensor, as_tensor
from minitx.nn import init
from minitx.nn.layers import Dropout, LayerNorm, Linear, ModuleList, _count, _new_parameter, _probability
from minitx.nn.module import Module, layer_input


class MultiheadAttention(Module):
    """torch.nn.MultiheadAttention: attention of ``num_heads`` heads of size E / num_heads
    (math in the module docstring). The query, key and value projections are one
    ``in_proj_weight`` [3E, E] (rows: Wq, then Wk, then Wv) when keys and values have E
    features; with ``kdim`` or ``vdim`` set they are ``q_proj_weight`` [E, E],
    ``k_proj_weight`` [E, kdim] and ``v_proj_weight`` [E, vdim]. ``in_proj_bias`` [3E] and the
    Linear ``out_proj`` as in PyTorch, initialized as PyTorch's: xavier-uniform projections,
    zero biases. ``dropout`` drops attention weights while training.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported (they "
                                      "append a learned or zero key and value to every sequence)")
        self.embed_dim = _count("MultiheadAttention", "embed_dim", embed_dim, 1)
        self.num_heads = _count("MultiheadAttention", "num_heads", num_heads, 1)
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} is not divisible by num_heads {num_heads}")
        self.head_dim = embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else _count("MultiheadAttention", "kdim", kdim, 1)
        self.vdim = embed_dim if vdim is None else _count("MultiheadAttention", "vdim", vdim, 1)
        self.dropout = _probability("MultiheadAttention", "dropout", dropout)
        self.batch_first = batch_first
        self._qkv_same_embed_dim = self.kdim == self.vdim == embed_dim  # (PyTorch's name for it)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = _new_parameter((3 * embed_dim, embed_dim), device, dtype)
        else:
            for name, features in (("q", embed_dim), ("k", self.kdim), ("v", self.vdim)):
                setattr(self, f"{name}_proj_weight", _new_parameter((embed_dim, features), device, dtype))
        self.register_parameter("in_proj_bias", _new_parameter((3 * embed_dim,), device, dtype) if bias else None)
        self._draw_projections()  # (before out_proj's own draws: the order a seed has always given)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        self._zero_biases()

    def _reset_parameters(self):
        """PyTorch's (a private name ported code calls): the projections drawn xavier-uniform again and
        the biases zeros; out_proj's weight is left as it is, as PyTorch's leaves it."""
        self._draw_projections()
        self._zero_biases()

    def _draw_projections(self):
        for weight in ((self.in_proj_weight,) if self._qkv_same_embed_dim else
                       (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)):
            init.xavier_uniform_(weight)

    def _zero_biases(self):
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def _projection_weights(self):
        """(Wq, Wk, Wv) and (bq, bk, bv), each bias None without one."""
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            weights = (w[:e], w[e:2 * e], w[2 * e:])
        else:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        b = self.in_proj_bias
        return weights, (None,) * 3 if b is None else (b[:e], b[e:2 * e], b[2 * e:])

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """query [L, N, E], key [S, N, kdim], value [S, N, vdim] (batch first: [N, L, E], ...;
        unbatched: [L, E], ...) -> (output like query, weights or None). The weights are P =
        softmax(...) [N, L, S] averaged over the heads, or [N, h, L, S] with
        average_attn_weights=False. ``is_causal`` is PyTorch's hint that attn_mask is the
        causal mask; the mask is what is applied, so it needs attn_mask, as PyTorch does."""
        if is_causal and attn_mask is None:
            raise ValueError("MultiheadAttention: is_causal=True needs the causal attn_mask itself (as in PyTorch); "
                             "make one with nn.Transformer.generate_square_subsequent_mask(L)")
        query, key, value = (as_tensor(t) for t in (query, key, value))
        unbatched = query.ndim == 2
        if unbatched:  # one sequence: a batch of one
            query, key, value = query[None], key[None], value[None]
            key_padding_mask = None if key_padding_mask is None else as_tensor(key_padding_mask)[None]
        elif not self.batch_first:  # [L, N, E] -> [N, L, E], the layout attention takes
            query, key, value = query.swapaxes(0, 1), key.swapaxes(0, 1), value.swapaxes(0, 1)
        self._check_inputs(query, key, value)
        (n, lq, _), lk = query.shape, key.shape[1]
        (wq, wk, wv), (bq, bk, bv) = self._projection_weights()
        q, k, v = (self._split_heads(F.linear(x, w, b)) for x, w, b in ((query, wq, bq), (key, wk, bk),
                                                                         (value, wv, bv)))
        mask = _merged_mask(attn_mask, key_padding_mask, (n, self.num_heads, lq, lk), q.device)
        result = F.scaled_dot_product_attention(q, k, v, mask=mask, dropout_p=self.dropout if self.training else 0.0,
                                                return_weights=need_weights)
        heads, weights = result if need_weights else (result, None)
        out = self.out_proj(heads.permute(0, 2, 1, 3).reshape(n, lq, self.embed_dim))
        if weights is not None and average_attn_weights:
            weights = weights.mean(axis=1)
        if unbatched:
            return out[0], None if weights is None else weights[0]
        return (out if self.batch_first else out.swapaxes(0, 1)), weights

    def _split_heads(self, x):
        """[N, L, E] -> [N, h, L, E / h]."""
        n, length, _ = x.shape
        return x.reshape(n, length, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def _check_inputs(self, query, key, value):
        """query [N, L, E], key [N, S, kdim] and value [N, S, vdim], or a ValueError naming them."""
        expected = ((query, self.embed_dim), (key, self.kdim), (value, self.vdim))
        if (any(x.ndim != 3 or x.shape[-1] != features for x, features in expected)
                or key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]):
            layout = "[N, L, E]" if self.batch_first else "[L, N, E]"
            raise ValueError(f"MultiheadAttention: query, key and value must be {layout} (or [L, E] unbatched) "
                             f"with E = {self.embed_dim}, kdim = {self.kdim}, vdim = {self.vdim} features and "
                             f"one batch and key length, got (batch first) {query.shape}, {key.shape}, "
                             f"{value.shape}")

    def extra_repr(self):
        kv = "" if self._qkv_same_embed_dim else f", kdim={self.kdim}, vdim={self.vdim}"
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}{kv}, "
                f"batch_first={self.batch_first}")


def _merged_mask(attn_mask, key_padding_mask, scores_shape, device):
    """PyTorch's attn_mask and key_padding_mask as one mask on ``device`` for
    F.scaled_dot_product_attention, broadcastable to the scores [N, h, L, S], or None.
    Boolean masks (True = not allowed) are combined and inverted into minitx's (True = may
    attend); where either mask is floating, each boolean one becomes 0 / -inf and the masks
    are added."""
    n, heads, lq, lk = scores_shape
    masks = []
    if attn_mask is not None:
        attn_mask = _mask_of_a_kind("attn_mask", attn_mask, device)
        if attn_mask.shape not in ((lq, lk), (n * heads, lq, lk)):
            raise ValueError(f"MultiheadAttention: attn_mask must be [L, S] = {(lq, lk)} or [N * num_heads, L, S] "
                             f"= {(n * heads, lq, lk)}, got {attn_mask.shape}")
        masks.append(attn_mask.reshape(-1, heads, lq, lk) if attn_mask.ndim == 3 else attn_mask)
    if key_padding_mask is not None:
        key_padding_mask = _mask_of_a_kind("key_padding_mask", key_padding_mask, device)
        if key_padding_mask.shape != (n, lk):
            raise ValueError(f"MultiheadAttention: key_padding_mask must be [N, S] = {(n, lk)} (or [S] unbatched), "
                             f"got {key_padding_mask.shape}")
        masks.append(key_padding_mask.reshape(n, 1, 1, lk))
    if not masks:
        return None
    if all(m.dtype == np.bool_ for m in masks):
        return ~functools.reduce(operator.or_, masks)  # allowed where no mask blocks
    return sum(F.where(m, float("-inf"), 0.0) if m.dtype == np.bool_ else m for m in masks)


def _mask_of_a_kind(name, mask, device):
    """The mask argument ``name`` as a tensor on ``device``, or a TypeError naming it where it is
    neither boolean nor floating (PyTorch's old byte masks included): which of the two masks is
    wrong, and this module's boolean convention, which is not scaled_dot_product_attention's."""
    mask = as_tensor(mask).to(device)
    if mask.dtype != np.bool_ and not backend.is_floating(mask.dtype):
        raise TypeError(f"MultiheadAttention: {name} must be boolean (True = not allowed) or floating (added to "
                        f"the scores), got dtype {mask.dtype.name}")
    return mask


def generate_square_subsequent_mask(sz, device=None, dtype=None) -> Tensor:
    """The causal mask [sz, sz] as PyTorch makes it: 0 where key j <= query i, -inf above the
    diagonal (float, added to the scores)."""
    mask = np.triu(np.full((sz, sz), -np.inf), k=1).astype(backend.resolve_dtype(dtype))
    return Tensor(backend.to_device(mask, backend.check_device(device)))


def _activation(owner, activation):
    """PyTorch's activation argument: 'relu', 'gelu' (exact, erf) or a callable (a layer, say)."""
    functions = {"relu": F.relu, "gelu": F.gelu}
    if isinstance(activation, str) and activation in functions:
        return functions[activation]
    if not isinstance(activation, str) and callable(activation):
        return activation
    raise ValueError(f"{owner}: activation must be 'relu', 'gelu' or a callable, got {activation!r}")


class _Layer(Module):
    """What the two layer kinds share: their attention, feed-forward block, norms and dropouts
    under PyTorch's names, and the residual wiring of sublayer i (1, 2, ...):

        pre-norm (norm_first):  x + dropout_i(f(norm_i(x)))
        post-norm:              norm_i(x + dropout_i(f(x)))
    """

    def __init__(self, d_model, nhead, cross_attention, dim_feedforward, dropout, activation, layer_norm_eps,
                 batch_first, norm_first, bias, device, dtype):
        super().__init__()
        sublayers = 3 if cross_attention else 2

        def attention():
            return MultiheadAttention(d_model, nhead, dropout, bias=bias, batch_first=batch_first, device=device,
                                      dtype=dtype)

        self.self_attn = attention()
        if cross_attention:
            self.multihead_attn = attention()
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device, dtype=dtype)
        self.norm_first = norm_first
        for i in range(1, sublayers + 1):  # norm1, norm2, ..., then dropout1, dropout2, ... as PyTorch's
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype))
        for i in range(1, sublayers + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation(type(self).__name__, activation)

    def _residual(self, i, x, sublayer):
        norm, dropout = getattr(self, f"norm{i}"), getattr(self, f"dropout{i}")
        if self.norm_first:
            return x + dropout(sublayer(norm(x)))
        return norm(x + dropout(sublayer(x)))

    def _feed_forward(self, x):
        return self.linear2(self.dropout(self.activation(self.linear1(x))))

    @staticmethod
    def _attend(attention, memory, attn_mask, key_padding_mask, is_causal):
        """The sublayer that attends from its input over ``memory`` (None: over the input itself)."""
        def sublayer(x):
            kv = x if memory is None else memory
            return attention(x, kv, kv, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                             is_causal=is_causal)[0]
        return sublayer


class TransformerEncoderLayer(_Layer):
    """torch.nn.TransformerEncoderLayer: self-attention, then the feed-forward block (math in
    the module docstring); forward(src, src_mask, src_key_padding_mask, is_causal) takes
    MultiheadAttention's attn_mask, key_padding_mask and is_causal."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__(d_model, nhead, False, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                         norm_first, bias, device, dtype)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src = layer_input("TransformerEncoderLayer", src, "src")
        x = self._residual(1, src, self._attend(self.self_attn, None, src_mask, src_key_padding_mask, is_causal))
        return self._residual(2, x, self._feed_forward)


class TransformerDecoderLayer(_Layer):
    """torch.nn.TransformerDecoderLayer: self-attention over the target, cross-attention
    (``multihead_attn``) over the memory, then the feed-forward block. The tgt_ and memory_
    masks are MultiheadAttention's masks of the two attentions."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__(d_model, nhead, True, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                         norm_first, bias, device, dtype)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        tgt = layer_input("TransformerDecoderLayer", tgt, "tgt")
        memory = layer_input("TransformerDecoderLayer", memory, "memory")
        x = self._residual(1, tgt, self._attend(self.self_attn, None, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self._residual(2, x, self._attend(self.multihead_attn, memory, memory_mask, memory_key_padding_mask,
                                              memory_is_causal))
        return self._residual(3, x, self._feed_forward)


class _Stack(Module):
    """``num_layers`` deep copies of ``layer`` (independent parameters, PyTorch's ``layers.0``,
    ``layers.1``, ...), then ``norm`` on the output when one is given."""

    def __init__(self, layer, num_layers, norm):
        super().__init__()
        owner = type(self).__name__
        if not isinstance(layer, Module):
            raise TypeError(f"{owner}: the first argument is the layer to copy (a Module), got "
                            f"{type(layer).__name__}; the arguments are (layer, num_layers, norm=None)")
        self.num_layers = _count(owner, "num_layers", num_layers)
        self.layers = ModuleList(copy.deepcopy(layer) for _ in range(self.num_layers))
        self.norm = norm

    def _finish(self, x):
        return x if self.norm is None else self.norm(x)


class TransformerEncoder(_Stack):
    """torch.nn.TransformerEncoder(encoder_layer, num_layers, norm=None). ``enable_nested_tensor``
    and ``mask_check`` choose PyTorch's inference fast path and are accepted for its code; here
    every position is computed, padded ones included (PyTorch's fast path leaves them 0)."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__(encoder_layer, num_layers, norm)

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return self._finish(x)


class TransformerDecoder(_Stack):
    """torch.nn.TransformerDecoder(decoder_layer, num_layers, norm=None); each layer attends over
    the same memory."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__(decoder_layer, num_layers, norm)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal),
                      memory_is_causal=memory_is_causal)
        return self._finish(x)
