"""Attention on the heads of packed projections (minitx/ops/attention.py, PackedHeadsAttention):
the op nn.MultiHeadAttention runs, reading q, k, v where one projection (or two, for
cross-attention) left them and writing their gradients back there in one array.

Checked against scaled_dot_product_attention on the heads split out (the path it replaces):
forward and every gradient, on the reference path in float64 and through the fused kernels'
CPU build in float32, bit for bit; float64 gradients by finite differences (check_gradients)
on drawn shapes; PyTorch's attention on head views of the same arrays; and the kernels' ``out``
argument on its own.
"""
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
import minitx.kernels as K
from minitx import nn
from minitx.kernels import cpu_harness
from minitx.ops.attention import PackedHeadsAttention, attention_on_packed_heads
from minitx.testing import check_gradients
from minitx.testing import strategies as mst

from _torch_kit import parity


def split_path(packed, heads, d, **options):
    """scaled_dot_product_attention on the heads split out of the packed inputs, as
    nn.MultiHeadAttention did it before the packed op (a reshape, a permute, a slice per part)."""
    hq, hkv = heads
    parts = ((hq, hkv, hkv),) if len(packed) == 1 else ((hq,), (hkv, hkv))
    views = []
    for x, counts in zip(packed, parts):
        b, length, _ = x.shape
        x = x.reshape(b, length, sum(counts), d).permute(0, 2, 1, 3)
        start = 0
        for c in counts:
            views.append(x[:, start:start + c])
            start += c
    return F.scaled_dot_product_attention(*views, enable_gqa=hkv != hq, **options)


def problem(rng, self_attention, heads, d, b=2, lq=5, lk=7, dtype=np.float64):
    hq, hkv = heads
    if self_attention:
        shapes = [(b, lq, (hq + 2 * hkv) * d)]
    else:
        shapes = [(b, lq, hq * d), (b, lk, 2 * hkv * d)]
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def outputs_and_grads(fn, arrays, seed=0):
    minitx.manual_seed(seed)
    inputs = [minitx.tensor(a, requires_grad=True) for a in arrays]
    out = fn(inputs)
    out.backward(minitx.tensor(np.random.default_rng(5).standard_normal(out.shape).astype(out.dtype)))
    return out.numpy(), [t.grad.numpy() for t in inputs]


@pytest.fixture
def launched(monkeypatch):
    """The names of the kernels the CPU build runs during the test."""
    names, backend = [], cpu_harness.cpu_backend()
    original = backend.launch

    def launch(filename, kernel, *args, **kwargs):
        names.append(kernel)
        return original(filename, kernel, *args, **kwargs)

    monkeypatch.setattr(backend, "launch", launch)
    return names


CASES = [  # (self-attention, (Hq, Hkv), causal, key-padding mask, dropout)
    (True, (3, 3), False, False, 0.0),
    (True, (3, 3), True, True, 0.0),
    (True, (4, 2), True, False, 0.0),
    (False, (3, 3), False, True, 0.0),
    (False, (4, 1), False, True, 0.0),
    (True, (2, 2), True, True, 0.3),
    (False, (2, 2), False, True, 0.3),
]


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("self_attention, heads, causal, padded, dropout", CASES)
def test_the_packed_heads_give_the_split_paths_output_and_gradients_bit_for_bit(launched, fused, self_attention,
                                                                                heads, causal, padded, dropout):
    """The reference path in float64, or the fused kernels (their CPU build) in float32: the
    same numbers as attention on the split heads, bit for bit, and the same dropout draws."""
    rng = np.random.default_rng(3)
    d, b, lq, lk = 4, 2, 5, 7
    lk = lq if self_attention else lk
    arrays = problem(rng, self_attention, heads, d, b, lq, lk, np.float32 if fused else np.float64)
    mask = None
    if padded:
        keep = rng.random((b, lk)) < 0.7
        keep[:, 0] = True
        mask = minitx.tensor(keep[:, None, None, :])
    options = dict(mask=mask, causal=causal, dropout_p=dropout)
    def path():
        return K.emulate_on_cpu() if fused else K.use_fused(False)

    with path():
        got = outputs_and_grads(lambda t: attention_on_packed_heads(t, heads, d, **options), arrays)
    with path():
        want = outputs_and_grads(lambda t: split_path(t, heads, d, **options), arrays)
    assert ("attention_backward_delta" in launched) == fused
    np.testing.assert_array_equal(got[0], want[0])
    for g, w in zip(got[1], want[1]):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


@given(data=st.data(), self_attention=st.booleans(), heads=st.sampled_from([(1, 1), (2, 2), (2, 1), (3, 1)]),
       causal=st.booleans(), masked=st.booleans(), scale=st.sampled_from([None, 0.7]),
       dropout=st.sampled_from([0.0, 0.3]), seed=st.integers(0, 9))
def test_packed_heads_gradients_match_finite_differences(data, self_attention, heads, causal, masked, scale, dropout,
                                                         seed):
    """With a seed, dropout draws one mask from it for every call, so finite differences see
    one function."""
    d = data.draw(st.integers(1, 3))
    b, lq = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 3))
    lk = lq if self_attention else data.draw(st.integers(1, 4))
    hq, hkv = heads
    shapes = [(b, lq, (hq + 2 * hkv) * d)] if self_attention else [(b, lq, hq * d), (b, lk, 2 * hkv * d)]
    inputs = [data.draw(mst.tensors(s, transposed=False)) for s in shapes]
    mask = minitx.tensor(data.draw(mst.attention_masks((b, 1), lq, lk))) if masked else None
    with K.use_fused(False):
        assert check_gradients(lambda *t: PackedHeadsAttention(heads, d, len(t), causal, dropout, scale, seed)(*t, *(
            [] if mask is None else [mask])), *inputs)


@pytest.mark.parametrize("self_attention, heads, causal", [(True, (2, 2), True), (False, (4, 2), False)])
def test_packed_heads_match_pytorchs_attention_on_the_same_heads(self_attention, heads, causal):
    """PyTorch's scaled_dot_product_attention on head views of the same packed arrays (its
    autograd sums the heads' gradients back into each packed input), float64."""
    hq, hkv = heads
    d = 3
    rng = np.random.default_rng(11)
    arrays = problem(rng, self_attention, heads, d, b=2, lq=4, lk=4 if self_attention else 5)
    parts = ((hq, hkv, hkv),) if self_attention else ((hq,), (hkv, hkv))

    def torch_attention(*packed):
        import torch

        views = []
        for x, counts in zip(packed, parts):
            b, length, _ = x.shape
            x = x.reshape(b, length, sum(counts), d).permute(0, 2, 1, 3)
            views += list(torch.split(x, list(counts), dim=1))
        return torch.nn.functional.scaled_dot_product_attention(*views, is_causal=causal, enable_gqa=hkv != hq)

    inputs = [minitx.tensor(a, requires_grad=True) for a in arrays]
    with K.use_fused(False):
        parity(lambda *t: attention_on_packed_heads(t, heads, d, causal=causal), torch_attention, *inputs)


def test_a_float_mask_gets_the_split_paths_gradient():
    rng = np.random.default_rng(4)
    arrays = problem(rng, True, (2, 2), 3)
    values = rng.standard_normal((2, 2, 5, 5))
    grads = []
    for fn in (attention_on_packed_heads, split_path):
        mask = minitx.tensor(values, requires_grad=True)
        x = minitx.tensor(arrays[0], requires_grad=True)
        fn((x,), (2, 2), 3, mask=mask).sum().backward()
        grads.append((x.grad.numpy(), mask.grad.numpy()))
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("packed, message", [
    ([(2, 5, 11)], "an input of shape (2, 5, 11), expected [B, L, 9 heads * 4]"),
    ([(2, 5, 12), (2, 7, 8)], "an input of shape (2, 7, 8), expected [B, L, 6 heads * 4]"),
    ([(2, 5, 12), (2, 7, 16), (2, 7, 16)], "expected (x,) or (xq, xkv), got 3 inputs"),
])
def test_packed_inputs_of_the_wrong_width_are_named(packed, message):
    inputs = [minitx.tensor(np.zeros(s)) for s in packed]
    with pytest.raises(ValueError, match=re.escape(message)):
        attention_on_packed_heads(inputs, (3, 3), 4)


@pytest.mark.parametrize("self_attention", [True, False])
def test_multi_head_attention_backward_splits_nothing(self_attention):
    """Training MultiHeadAttention records no slice of the projection: the packed op reads the
    heads in place and writes their gradient as one array, so no GetItem backward runs."""
    layer = nn.MultiHeadAttention(8, 2, dropout=0.0, self_attention=self_attention)
    x = minitx.tensor(np.random.default_rng(1).standard_normal((2, 5, 8)), dtype="float32", requires_grad=True)
    y = layer(x) if self_attention else layer(x, memory=x)
    ops, stack = {}, [y.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is not None and id(fn) not in ops:
            ops[id(fn)] = type(fn).__name__
            stack.extend(t.grad_fn for t in fn.inputs)
    assert "PackedHeadsAttention" in ops.values() and "GetItem" not in ops.values()
    y.sum().backward()
    assert x.grad is not None and layer.out.weight.grad is not None


def test_the_kernels_write_the_gradients_into_given_views():
    """attention_backward(out=...) writes dq, dk, dv into the heads of one packed [B, L, 3H, d]
    array: the same bits it returns without out, nothing else of the array touched."""
    rng = np.random.default_rng(6)
    B, H, L, d = 2, 3, 6, 4
    qkv = rng.standard_normal((B, L, 3 * H, d)).astype(np.float32).transpose(0, 2, 1, 3)
    q, k, v = qkv[:, :H], qkv[:, H:2 * H], qkv[:, 2 * H:]
    with K.emulate_on_cpu():
        o, lse = K.attention_forward(q, k, v, causal=True)
        do = rng.standard_normal(o.shape).astype(np.float32)
        want = K.attention_backward(q, k, v, o, lse, do, causal=True)
        packed = np.full((B, L, 3 * H + 1, d), 7.0, np.float32)  # one head more, left alone
        heads = packed.transpose(0, 2, 1, 3)
        out = (heads[:, :H], heads[:, H:2 * H], heads[:, 2 * H:3 * H])
        got = K.attention_backward(q, k, v, o, lse, do, causal=True, out=out)
    for g, w, into in zip(got, want, out):
        assert np.shares_memory(g, into)
        np.testing.assert_array_equal(into, w)
    assert np.all(heads[:, 3 * H:] == 7.0)


def test_an_out_the_kernels_cannot_write_is_refused():
    rng = np.random.default_rng(7)
    q = rng.standard_normal((2, 3, 4))
    o, lse = K.attention_forward(q, q, q)
    bad = np.zeros((2, 3, 8))[..., ::2]  # its head dim not contiguous
    with pytest.raises(ValueError, match=r"out's dk must be \(2, 3, 4\) float64 with its last axis contiguous"):
        K.attention_backward(q, q, q, o, lse, np.ones_like(o), out=(np.zeros_like(q), bad, np.zeros_like(q)))
    with pytest.raises(ValueError, match="out must be three arrays"):
        K.attention_backward(q, q, q, o, lse, np.ones_like(o), out=(np.zeros_like(q),))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_under_autocast_the_packed_op_computes_as_the_split_path(dtype):
    """The autocast table's ScaledDotProductAttention row holds for its packed subclass: the
    same output dtype and values as the split path, a float32 float mask cast down with the rest
    (large scores under float16 stay finite, as they do split)."""
    pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 5, 3 * 2 * 4)) * 30  # scores in the hundreds
    mask = np.zeros((2, 2, 5, 5), np.float32)
    results = []
    for fn in (attention_on_packed_heads, split_path):
        with minitx.autocast(dtype), K.use_fused(False):
            out = fn((minitx.tensor(x, dtype="float32"),), (2, 2), 4, mask=minitx.tensor(mask))
        results.append(out)
    assert results[0].dtype == results[1].dtype == minitx.backend.resolve_dtype(dtype)
    assert np.isfinite(results[0].numpy().astype(np.float32)).all()
    np.testing.assert_array_equal(results[0].numpy(), results[1].numpy())


def test_cross_attention_over_a_memory_batch_of_one_sums_its_gradient():
    """Memory [1, Lk, d] serving every query row of a batch of 3 (broadcast): its gradient is
    the sum over the batch, as the split path gives it."""
    layer = nn.MultiHeadAttention(8, 2, dropout=0.0, self_attention=False)
    rng = np.random.default_rng(9)
    x_values, memory_values = (rng.standard_normal(shape).astype(np.float32) for shape in ((3, 4, 8), (1, 5, 8)))
    grads = []
    for weights in (False, True):  # return_weights takes the split path
        x = minitx.tensor(x_values, requires_grad=True)
        memory = minitx.tensor(memory_values, requires_grad=True)
        out = layer(x, memory=memory, return_weights=weights)
        (out[0] if weights else out).sum().backward()
        grads.append((x.grad.numpy(), memory.grad.numpy()))
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_each_packed_input_gets_its_gradient_in_its_own_dtype():
    rng = np.random.default_rng(10)
    xq = minitx.tensor(rng.standard_normal((2, 3, 8)).astype(np.float32), requires_grad=True)
    xkv = minitx.tensor(rng.standard_normal((2, 4, 16)), requires_grad=True)
    attention_on_packed_heads((xq, xkv), (2, 2), 4).sum().backward()
    assert xq.grad.dtype == np.float32 and xkv.grad.dtype == np.float64
