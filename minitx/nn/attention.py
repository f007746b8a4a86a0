"""Multi-head attention and positional encodings."""
from __future__ import annotations

import math
import numbers

import numpy as np

from minitx import backend
from minitx import functional as F
from minitx.autograd.tensor import Tensor
from minitx.nn.layers import Linear, _new_parameter
from minitx.nn import init
from minitx.nn.module import Module
from minitx.ops.attention import attention_on_packed_heads


class MultiHeadAttention(Module):
    """Attention with ``num_heads`` heads of size dh = d_model / num_heads:

        q = x Wq,  k = m Wk,  v = m Wv        (m = x for self-attention, the memory for cross)
        head_i = softmax(q_i k_j^T / sqrt(dh), masked) v_j      j = i // (num_heads / num_kv_heads)
        y = concat(head_1, ..., head_h) Wo

    ``num_kv_heads`` (default num_heads) key/value heads, each shared by num_heads / num_kv_heads
    consecutive query heads (grouped-query attention; 1 is multi-query): Wk and Wv have
    num_kv_heads * dh outputs, and a decoding cache holds that many heads.
    Self-attention computes q, k, v with one fused [d_model -> (num_heads + 2 num_kv_heads) dh]
    projection; cross-attention has a q projection and a fused k, v projection of the memory.

    Incremental decoding: pass the same ``cache`` dict at every step. Self-attention appends
    this step's keys and values to it; cross-attention computes the memory's keys and values
    once and reuses them.
    """

    def __init__(self, d_model, num_heads, dropout=0.0, self_attention=True, bias=True, device=None,
                 num_kv_heads=None):
        super().__init__()
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        for what, value in (("d_model", d_model), ("num_heads", num_heads), ("num_kv_heads", num_kv_heads)):
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
                raise ValueError(f"MultiHeadAttention: {what} must be a positive int, got {value!r}")
        if d_model % num_heads:
            raise ValueError(f"MultiHeadAttention: d_model {d_model} is not divisible by num_heads {num_heads}")
        if num_kv_heads > num_heads or num_heads % num_kv_heads:
            raise ValueError(f"MultiHeadAttention: num_kv_heads must divide num_heads {num_heads}, "
                             f"got {num_kv_heads}")
        self.d_model, self.num_heads, self.head_dim = d_model, num_heads, d_model // num_heads
        self.num_kv_heads = num_kv_heads
        self.dropout, self.self_attention = dropout, self_attention
        kv_dim = num_kv_heads * self.head_dim
        if self_attention:
            self.qkv = Linear(d_model, d_model + 2 * kv_dim, bias=bias, device=device)
        else:
            self.q = Linear(d_model, d_model, bias=bias, device=device)
            self.kv = Linear(d_model, 2 * kv_dim, bias=bias, device=device)
        self.out = Linear(d_model, d_model, bias=bias, device=device)

    def _split_heads(self, x, *heads):
        """[B, L, sum(heads) * head_dim] -> tensors [B, h, L, head_dim], one for each h in ``heads``
        (the projection's outputs in that order: q's heads, then k's, then v's)."""
        b, length, _ = x.shape
        x = x.reshape(b, length, sum(heads), self.head_dim).permute(0, 2, 1, 3)
        starts = np.cumsum((0,) + heads)
        return [x[:, start:end] for start, end in zip(starts[:-1], starts[1:])]

    def forward(self, x, memory=None, mask=None, causal=False, cache=None, return_weights=False):
        """x [B, Lq, d_model]; memory [B, Lk, d_model] for cross-attention; mask broadcastable to
        [B, heads, Lq, Lk], boolean (True = may attend) or floating (added to the scores). Returns
        y [B, Lq, d_model] (and the attention weights [B, heads, Lq, Lk] when return_weights)."""
        h, hkv = self.num_heads, self.num_kv_heads
        dropout_p = self.dropout if self.training else 0.0
        if cache is None and not return_weights:  # the heads attended where the projections left them
            if not self.self_attention and memory is None:
                raise ValueError("MultiHeadAttention: cross-attention needs memory")
            packed = (self.qkv(x),) if self.self_attention else (self.q(x), self.kv(memory))
            out = attention_on_packed_heads(packed, (h, hkv), self.head_dim, mask=mask, causal=causal,
                                            dropout_p=dropout_p)
            return self._merge_heads(out)
        if self.self_attention:
            q, k, v = self._split_heads(self.qkv(x), h, hkv, hkv)
            if cache is not None:
                if "k" in cache:
                    k = F.concatenate([cache["k"], k], axis=2)
                    v = F.concatenate([cache["v"], v], axis=2)
                cache["k"], cache["v"] = k, v
        else:
            if memory is None:
                raise ValueError("MultiHeadAttention: cross-attention needs memory")
            (q,) = self._split_heads(self.q(x), h)
            if cache is not None and "k" in cache:
                k, v = cache["k"], cache["v"]
            else:
                k, v = self._split_heads(self.kv(memory), hkv, hkv)
                if cache is not None:
                    cache["k"], cache["v"] = k, v
        result = F.scaled_dot_product_attention(q, k, v, mask=mask, causal=causal, dropout_p=dropout_p,
                                                return_weights=return_weights, enable_gqa=hkv != h)
        out, weights = result if return_weights else (result, None)
        y = self._merge_heads(out)
        return (y, weights) if return_weights else y

    def _merge_heads(self, out):
        """o [B, H, L, head_dim] -> the output projection of [B, L, H * head_dim]."""
        b, heads, length, dh = out.shape
        return self.out(out.permute(0, 2, 1, 3).reshape(b, length, heads * dh))

    def extra_repr(self):
        kind = "self" if self.self_attention else "cross"
        kv = f", num_kv_heads={self.num_kv_heads}" if self.num_kv_heads != self.num_heads else ""
        return f"{kind}, d_model={self.d_model}, num_heads={self.num_heads}{kv}, dropout={self.dropout}"


def _check_length(module, length, offset):
    if offset + length > module.max_len:
        raise ValueError(f"{type(module).__name__}: positions {offset}..{offset + length - 1} exceed the model's "
                         f"max_len {module.max_len}; shorten the sequence or build the model with a larger max_len")


class SinusoidalPositionalEncoding(Module):
    """Adds fixed position signals (Vaswani et al., 2017):

        PE[pos, 2i] = sin(pos / 10000^(2i / d)),   PE[pos, 2i + 1] = cos(pos / 10000^(2i / d))

    Each dimension pair is a sinusoid of a different wavelength, so relative offsets are
    linear functions of the encodings. No parameters; the table is a buffer.
    """

    def __init__(self, d_model, max_len=512, device=None):
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        position = np.arange(max_len)[:, None]
        frequency = np.exp(-math.log(10000.0) * np.arange(0, d_model, 2) / d_model)
        table = np.zeros((max_len, d_model), dtype=np.float32)
        table[:, 0::2] = np.sin(position * frequency)
        table[:, 1::2] = np.cos(position * frequency[: d_model // 2])
        self.register_buffer("table", Tensor(backend.to_device(table, backend.check_device(device))))

    def forward(self, x, offset=0):
        """x [B, L, d] -> x + PE[offset : offset + L]."""
        _check_length(self, x.shape[1], offset)
        return x + self.table[offset: offset + x.shape[1]].astype(x.dtype)

    def extra_repr(self):
        return f"{self.d_model}, max_len={self.max_len}"


class LearnedPositionalEmbedding(Module):
    """Adds a learned vector per position: x + P[offset : offset + L], P [max_len, d]."""

    def __init__(self, d_model, max_len=512, device=None):
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.weight = init.normal_(_new_parameter((max_len, d_model), device))

    def forward(self, x, offset=0):
        _check_length(self, x.shape[1], offset)
        return x + self.weight[offset: offset + x.shape[1]]

    def extra_repr(self):
        return f"{self.d_model}, max_len={self.max_len}"
