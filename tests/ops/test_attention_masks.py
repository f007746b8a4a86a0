"""scaled_dot_product_attention's float masks and grouped-query heads (minitx/ops/attention.py):
forward against a NumPy attention written here, float64 gradients of q, k, v and the float mask
by finite differences (check_gradients), and PyTorch's
torch.nn.functional.scaled_dot_product_attention(attn_mask=..., enable_gqa=...) on the same values.

ops.ScaledDotProductAttention is the op under test (tests/test_meta.py looks for the name).
"""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx import nn, ops
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst

from _torch_kit import parity

TIGHT = dict(rtol=1e-10, atol=1e-12)
KINDS = ["none", "bool", "float", "causal", "float+causal"]


def np_attention(q, k, v, mask=None, causal=False, groups=1, scale=None):
    """softmax(scale q k^T + float mask, disallowed keys removed) @ v, with k and v's heads each
    repeated ``groups`` times in a row; a query that sees no key gets zeros. Returns (o, P)."""
    k, v = np.repeat(k, groups, axis=-3), np.repeat(v, groups, axis=-3)
    if scale is None:  # at d = 0 the scores are empty sums, 0 whatever the scale
        scale = 1 / math.sqrt(q.shape[-1]) if q.shape[-1] else 1.0
    scores = q @ np.swapaxes(k, -1, -2) * scale
    allowed = np.ones(scores.shape, bool)
    if mask is not None and mask.dtype == bool:
        allowed = allowed & mask
    elif mask is not None:
        scores = scores + mask
    if causal:
        lq, lk = scores.shape[-2:]
        allowed = allowed & (np.arange(lk)[None, :] <= np.arange(lq)[:, None] + lk - lq)
    scores = np.where(allowed, scores, -np.inf)
    sees = (scores > -np.inf).any(-1, keepdims=True) | np.isnan(scores).any(-1, keepdims=True)
    top = np.where(sees, scores.max(-1, keepdims=True), 0)
    e = np.exp(scores - top)
    weights = np.where(sees, e / np.where(sees, e.sum(-1, keepdims=True), 1), 0)
    return weights @ v, weights


def torch_attention(q, k, v, mask, causal, groups, scale=None):
    """PyTorch's attention with minitx's conventions: a bottom-right causal mask (query i sees
    keys j <= i + Lk - Lq) folded into attn_mask, and a query that sees no key given 0 (PyTorch:
    NaN): its mask row is replaced by zeros, its output by 0."""
    import torch

    lq, lk = q.shape[-2], k.shape[-2]
    causal_ok = torch.ones(lq, lk, dtype=torch.bool).tril(lk - lq) if causal else torch.ones(lq, lk, dtype=torch.bool)
    if mask is None or mask.dtype == torch.bool:
        allowed = causal_ok if mask is None else mask & causal_ok
        sees = allowed.any(-1, keepdim=True)
        attn_mask = allowed | ~sees
    else:
        attn_mask = mask.masked_fill(~causal_ok, -math.inf)
        sees = (attn_mask > -math.inf).any(-1, keepdim=True)
        attn_mask = torch.where(sees, attn_mask, 0.0)
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, scale=scale,
                                                           enable_gqa=groups > 1)
    return torch.where(sees, out, 0.0)


@st.composite
def float_masks(draw, shape, requires_grad):
    """A float mask of ``shape``: values in [-3, 3], some -inf, every row keeping a finite entry."""
    values = draw(mst.float_arrays(shape))
    if values.size:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        values = np.where(rng.random(shape) < 0.3, -np.inf, values)
        keep = rng.integers(0, shape[-1], shape[:-1])
        np.put_along_axis(values, keep[..., None], 0.5, axis=-1)
    return minitx.tensor(values, requires_grad=requires_grad)


@st.composite
def attention_problems(draw, kind):
    """q [B, Hq, Lq, d], k [B, Hkv, Lk, d], v [B, Hkv, Lk, dv], Hq = groups * Hkv, a mask of the
    given kind and a drawn shape, and the flags; groups > 1 needs enable_gqa, groups = 1 draws it.
    d may be 0 (every score 0)."""
    b, hkv, groups = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 3))
    lq, lk, d, dv = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(0, 3)), draw(st.integers(1, 3))
    hq = hkv * groups
    q, k, v = (draw(mst.tensors(s)) for s in ((b, hq, lq, d), (b, hkv, lk, d), (b, hkv, lk, dv)))
    mask_shape = draw(st.sampled_from([(b, 1, lq, lk), (lq, lk), (b, hq, lq, lk), (1, 1, 1, lk)]))
    mask = None
    if kind == "bool":
        mask = minitx.tensor(draw(mst.attention_masks(mask_shape[:-2], mask_shape[-2], lk)))
    elif kind.startswith("float"):
        mask = draw(float_masks(mask_shape, draw(st.booleans())))
    enable_gqa = groups > 1 or draw(st.booleans())
    return q, k, v, mask, kind.endswith("causal"), groups, enable_gqa


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data(), return_weights=st.booleans(), scale=st.sampled_from([None, 0.7]))
def test_masks_and_groups_forward_gradients_and_torch(kind, data, return_weights, scale):
    """Every mask kind in every run (drawn, a float mask needing a gradient came up in one
    example of five: a slip in its gradient could pass a short run)."""
    problem = data.draw(attention_problems(kind), label="problem")
    q, k, v, mask, causal, groups, enable_gqa = problem
    with_mask = (q, k, v) if mask is None else (q, k, v, mask)
    differentiable = with_mask if mask is not None and mask.requires_grad else (q, k, v)

    def attend(q, k, v, m=mask, weights=False):
        return F.scaled_dot_product_attention(q, k, v, mask=m, causal=causal, enable_gqa=enable_gqa,
                                              return_weights=weights, scale=scale)

    def reference(q, k, v, m=None):
        o, p = np_attention(q, k, v, None if mask is None else mask.numpy(), causal, groups, scale)
        return (o, p) if return_weights else o

    out = check_forward(lambda *ts: attend(*ts, weights=return_weights), reference, *differentiable, **TIGHT)
    assert isinstance((out[0] if return_weights else out)._ctx, ops.ScaledDotProductAttention)
    check_gradients(attend, *differentiable)
    parity(attend, lambda q, k, v, m=None: torch_attention(q, k, v, m, causal, groups, scale), *with_mask, **TIGHT)


def qkv(seed, lq, lk, hq=1, hkv=1, d=2, dv=2, batch=1):
    """float64 leaves q [batch, hq, lq, d], k [batch, hkv, lk, d], v [batch, hkv, lk, dv]."""
    rng = np.random.default_rng(seed)
    return tuple(leaf(rng.standard_normal(s)) for s in ((batch, hq, lq, d), (batch, hkv, lk, d), (batch, hkv, lk, dv)))


def test_a_float_mask_of_zeros_and_minus_inf_is_the_boolean_mask():
    q, k, v = qkv(0, 3, 4, hq=2)
    allowed = np.array([[True, False, True, True], [False, False, True, False], [True] * 4])
    as_float = leaf(np.where(allowed, 0.0, -np.inf))
    by_bool = F.scaled_dot_product_attention(q, k, v, mask=allowed)
    by_float = F.scaled_dot_product_attention(q, k, v, mask=as_float)
    np.testing.assert_array_equal(by_float.numpy(), by_bool.numpy())
    dy = np.random.default_rng(1).standard_normal(by_bool.shape)
    grads = []
    for out in (by_bool, by_float):
        for t in (q, k, v):
            t.grad = None
        out.backward(dy)
        grads.append([t.grad.numpy() for t in (q, k, v)])
    for mine, other in zip(*grads):
        np.testing.assert_allclose(mine, other, **TIGHT)
    assert np.isfinite(as_float.grad.numpy()).all()
    np.testing.assert_array_equal(as_float.grad.numpy()[~allowed], 0)  # a masked score moves nothing


def test_a_fully_minus_inf_float_row_gives_zeros_and_zero_gradients_as_a_false_row():
    q, k, v = qkv(2, 3, 4, hq=2)
    mask = leaf(np.array([[0.5, -np.inf, 1.0, 0.0], [-np.inf] * 4, [0.0, 0.0, 2.0, -1.0]]))
    out, weights = F.scaled_dot_product_attention(q, k, v, mask=mask, return_weights=True)
    np.testing.assert_array_equal(out.numpy()[:, :, 1], 0)
    np.testing.assert_array_equal(weights.numpy()[:, :, 1], 0)
    np.testing.assert_allclose(out.numpy(), np_attention(q.numpy(), k.numpy(), v.numpy(), mask.numpy())[0], **TIGHT)
    out.backward(np.ones(out.shape))
    for t in (q, k, v, mask):
        assert np.isfinite(t.grad.numpy()).all()
    np.testing.assert_array_equal(q.grad.numpy()[:, :, 1], 0)
    np.testing.assert_array_equal(mask.grad.numpy()[1], 0)


def test_nan_in_a_float_mask_makes_its_row_nan_as_in_pytorch():
    q, k, v = qkv(3, 2, 3)
    mask = leaf(np.array([[0.0, np.nan, 1.0], [0.0, -1.0, 2.0]]))
    out = parity(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, mask=m),
                 lambda q, k, v, m: torch_attention(q, k, v, m, False, 1), q, k, v, mask, **TIGHT)
    assert np.isnan(out.numpy()[0, 0, 0]).all() and np.isfinite(out.numpy()[0, 0, 1]).all()
    assert np.isnan(mask.grad.numpy()[0]).all() and np.isfinite(mask.grad.numpy()[1]).all()


@pytest.mark.parametrize("mask_dtype", ["float32", "bfloat16"])
def test_a_float_mask_of_another_dtype_is_added_in_the_scores_dtype_and_gets_its_own_dtype_back(mask_dtype):
    q, k, v = qkv(4, 2, 3)
    mask = minitx.tensor(np.array([[0.25, -np.inf, 1.0], [0.0, -1.0, 2.0]]), dtype=mask_dtype, requires_grad=True)
    out = F.scaled_dot_product_attention(q, k, v, mask=mask)
    assert out.dtype == np.float64
    expected = np_attention(q.numpy(), k.numpy(), v.numpy(), mask.numpy().astype(np.float64))[0]
    np.testing.assert_allclose(out.numpy(), expected, **TIGHT)
    out.sum().backward()
    assert mask.grad.dtype == mask.dtype and mask.grad.shape == mask.shape


@pytest.mark.parametrize("lq, lk", [(0, 3), (2, 0), (0, 0)])
def test_empty_queries_or_keys(lq, lk):
    """No query: an empty output. No key: every query sees nothing and gets 0."""
    q, k, v = qkv(5, lq, lk, hq=4, hkv=2)
    mask = leaf(np.zeros((lq, lk)))
    out = F.scaled_dot_product_attention(q, k, v, mask=mask, enable_gqa=True)
    assert out.shape == (1, 4, lq, 2)
    np.testing.assert_array_equal(out.numpy(), 0)
    out.backward(np.ones(out.shape))
    for t in (q, k, v, mask):
        assert t.grad.shape == t.shape
        np.testing.assert_array_equal(t.grad.numpy(), 0)


@pytest.mark.parametrize("scale", [None, 0.5])
@pytest.mark.parametrize("causal", [False, True])
def test_a_head_dim_of_0_weighs_the_keys_alike_as_pytorch(scale, causal):
    """d = 0: every score q k^T is an empty sum, 0, whatever the scale (PyTorch scales q and k before
    their product; its default 1 / sqrt(0) is never used): a query averages the values it may see."""
    q, k, v = qkv(3, 3, 3, d=0, dv=2)
    out = parity(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, causal=causal, scale=scale),
                 lambda q, k, v: torch_attention(q, k, v, None, causal, 1, scale), q, k, v, **TIGHT)
    values = v.numpy()[0, 0]
    means = np.cumsum(values, 0) / np.arange(1, 4)[:, None] if causal else np.broadcast_to(values.mean(0), (3, 2))
    np.testing.assert_allclose(out.numpy()[0, 0], means, **TIGHT)
    check_gradients(lambda v: F.scaled_dot_product_attention(q, k, v, causal=causal, scale=scale), leaf(v.numpy()))


@given(hkv=st.integers(1, 3), groups=st.integers(1, 3), causal=st.booleans(), seed=st.integers(0, 99))
def test_grouped_query_heads_share_key_value_heads_in_repeat_interleave_order(hkv, groups, causal, seed):
    """Query head i attends with key/value head i // groups: the same as repeating k and v by
    hand; k's batch axis broadcasts; dk and dv sum each group's gradients."""
    q, k, v = qkv(seed, 3, 3, hq=hkv * groups, hkv=hkv, d=3, dv=3, batch=2)
    k1, v1 = leaf(k.numpy()[:1]), leaf(v.numpy()[:1])

    def grouped(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, causal=causal, enable_gqa=True)

    def repeated(q, k, v):
        return F.scaled_dot_product_attention(q, F.repeat(k, groups, axis=1),
                                              F.repeat(v, groups, axis=1), causal=causal)
    for args in ((q, k, v), (q, k1, v1)):
        check_forward(grouped, lambda q, k, v: np_attention(q, k, v, causal=causal, groups=groups)[0], *args, **TIGHT)
        dy = np.random.default_rng(seed).standard_normal(grouped(*args).shape)
        grads = []
        for fn in (grouped, repeated):
            for t in args:
                t.grad = None
            fn(*args).backward(dy)
            grads.append([t.grad.numpy() for t in args])
        for mine, other in zip(*grads):
            np.testing.assert_allclose(mine, other, **TIGHT)


@pytest.mark.parametrize("call, error, message", [
    (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask=np.zeros((3, 3), np.int64)),
     TypeError, r"mask must be boolean .* or floating .*, got dtype int64"),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask=np.zeros((2, 3))),
     ValueError, r"mask of shape \(2, 3\) does not broadcast"),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k[:, :2], v[:, :2]),
     ValueError, r"have \(4, 2, 2\) heads .* or enable_gqa=True"),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k[:, :3], v[:, :3]),
     ValueError, r"have \(4, 3, 3\) heads \(axis -3\): expected the same number \(or 1\)$"),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k[:, :3], v[:, :3], enable_gqa=True),
     ValueError, r"enable_gqa needs the query heads Hq = 4 to be a multiple of the key/value heads Hkv = 3"),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k[:, :2], v[:, :1], enable_gqa=True),
     ValueError, r"must have the same number of heads"),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k[:, :0], v[:, :0], enable_gqa=True),
     ValueError, r"Hkv = 0"),
    (lambda q, k, v: F.scaled_dot_product_attention(q[:, :0], k[:, :2], v[:, :2], enable_gqa=True),
     ValueError, r"Hq = 0 to be a multiple of the key/value heads Hkv = 2"),
])
def test_bad_masks_and_heads_are_named(call, error, message):
    q, k, v = qkv(6, 3, 3, hq=4, hkv=4)
    with pytest.raises(error, match=message):
        call(q, k, v)


def test_one_key_value_head_broadcasts_without_enable_gqa_as_in_pytorch():
    q, k, v = qkv(7, 2, 3, hq=3, hkv=1)
    parity(lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
           lambda q, k, v: torch_attention(q, k, v, None, False, 1), q, k, v, **TIGHT)


@pytest.mark.parametrize("mask_shape", [(7, 1, 4, 3, 3), (1, 1, 4, 3, 3), (2, 4, 3, 3)])
def test_a_mask_that_would_grow_the_output_is_refused_as_in_pytorch(mask_shape):
    """A mask of more axes, or a longer batch, than the scores [B, H, Lq, Lk] would broadcast the
    result to its own shape (seven copies of it, a new axis of 1, two copies); PyTorch refuses it."""
    q, k, v = qkv(8, 3, 3, hq=4, hkv=4)
    with pytest.raises(ValueError, match=r"mask of shape .* does not broadcast to the scores \[\.\.\., Lq, Lk\] "
                                         r"= \(1, 4, 3, 3\)"):
        F.scaled_dot_product_attention(q, k, v, mask=np.ones(mask_shape, bool))


def test_a_mask_may_take_the_batch_of_k_where_q_has_a_batch_of_1_as_in_pytorch():
    """The scores' batch is q's and k's broadcast: a mask of k's batch fits it."""
    q, _, _ = qkv(9, 3, 4, hq=2, hkv=2)
    _, k, v = qkv(10, 3, 4, hq=2, hkv=2, batch=3)
    mask = minitx.tensor(np.random.default_rng(0).random((3, 1, 3, 4)) < 0.7)
    parity(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, mask=m),
           lambda q, k, v, m: torch_attention(q, k, v, m, False, 1), q, k, v, mask, **TIGHT)


# ---------------------------------------------------------------- nn.MultiHeadAttention(num_kv_heads)


def np_multi_head_attention(layer, x, memory, mask, causal):
    """The layer's attention in NumPy from its weights: q's heads, then k's, then v's in the fused
    projections' outputs, each k/v head shared by num_heads / num_kv_heads query heads."""
    d, h, hkv, dh = layer.d_model, layer.num_heads, layer.num_kv_heads, layer.head_dim
    w = {name: p.numpy() for name, p in layer.named_parameters()}
    if layer.self_attention:
        q, kv = np.split(x @ w["qkv.weight"].T + w["qkv.bias"], [d], axis=-1)
    else:
        q, kv = x @ w["q.weight"].T + w["q.bias"], memory @ w["kv.weight"].T + w["kv.bias"]
    k, v = np.split(kv, 2, axis=-1)

    def heads(t, n):
        return t.reshape(t.shape[0], t.shape[1], n, dh).transpose(0, 2, 1, 3)

    out, p = np_attention(heads(q, h), heads(k, hkv), heads(v, hkv), mask, causal, groups=h // hkv)
    return out.transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[1], d) @ w["out.weight"].T + w["out.bias"], p


def nn_layer(h, hkv, self_attention=True):
    """A float64 MultiHeadAttention of d_model 8 with h query heads and hkv key/value heads."""
    return nn.MultiHeadAttention(8, h, self_attention=self_attention, num_kv_heads=hkv).to(dtype="float64")


def rand_input(b, length, seed=0):
    return minitx.tensor(np.random.default_rng(seed).standard_normal((b, length, 8)))


@given(data=st.data(), heads=st.sampled_from([(4, 4), (4, 2), (4, 1), (2, None)]), self_attention=st.booleans(),
       kind=st.sampled_from(KINDS))
def test_multi_head_attention_with_fewer_key_value_heads(data, heads, self_attention, kind):
    h, hkv = heads
    minitx.manual_seed(data.draw(st.integers(0, 9)))
    layer = nn_layer(h, hkv, self_attention)
    b, lq = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 3))
    lk = lq if self_attention else data.draw(st.integers(1, 3))
    x, memory = (minitx.tensor(data.draw(mst.float_arrays((b, n, 8))), requires_grad=True) for n in (lq, lk))
    mask = None
    if kind == "bool":
        mask = data.draw(mst.attention_masks((b, 1), lq, lk))
    elif kind.startswith("float"):
        mask = data.draw(float_masks((b, 1, lq, lk), False)).numpy()
    causal = kind.endswith("causal")
    y, weights = layer(x, None if self_attention else memory, mask=mask, causal=causal, return_weights=True)
    expected, p = np_multi_head_attention(layer, x.numpy(), memory.numpy(), mask, causal)
    np.testing.assert_allclose(y.numpy(), expected, **TIGHT)
    np.testing.assert_allclose(weights.numpy(), p, **TIGHT)
    assert weights.shape == (b, h, lq, lk)
    inputs = (x,) if self_attention else (x, memory)
    check_gradients(lambda *ts: layer(*ts, mask=mask, causal=causal), *inputs)


@pytest.mark.parametrize("self_attention", [True, False])
def test_num_kv_heads_shrinks_the_key_value_projection_and_keeps_the_parameter_names(self_attention):
    default, same, grouped = nn_layer(4, None, self_attention), nn_layer(4, 4, self_attention), \
        nn_layer(4, 1, self_attention)
    shapes = [{name: t.shape for name, t in layer.state_dict().items()} for layer in (default, same, grouped)]
    assert shapes[0] == shapes[1] and shapes[0].keys() == shapes[2].keys()
    fused = "qkv" if self_attention else "kv"
    assert shapes[2][f"{fused}.weight"] == ((8 if self_attention else 0) + 2 * 2, 8)  # head_dim 2, one k/v head
    same.load_state_dict(default.state_dict())  # a checkpoint of num_kv_heads=None loads
    x = rand_input(2, 3)
    np.testing.assert_array_equal(same(x, None if self_attention else x).numpy(),
                                  default(x, None if self_attention else x).numpy())
    assert "num_kv_heads=1" in repr(grouped) and "num_kv_heads" not in repr(default)


def test_grouped_self_attention_decodes_step_by_step_with_a_cache_of_the_key_value_heads():
    layer = nn_layer(4, 2)
    x = rand_input(2, 4, seed=1)
    whole = layer(x, causal=True).numpy()
    cache = {}
    steps = [layer(x[:, i:i + 1], causal=True, cache=cache).numpy() for i in range(4)]
    np.testing.assert_allclose(np.concatenate(steps, axis=1), whole, **TIGHT)
    assert cache["k"].shape == cache["v"].shape == (2, 2, 4, 2)


@pytest.mark.parametrize("hkv, message", [(3, "must divide num_heads 4, got 3"), (8, "must divide num_heads 4, got 8"),
                                          (0, "must be a positive int, got 0")])
def test_num_kv_heads_must_divide_num_heads(hkv, message):
    with pytest.raises(ValueError, match=f"num_kv_heads {message}"):
        nn_layer(4, hkv)


def test_a_numpy_scale_gives_the_bits_of_the_same_python_float():
    """scale=np.float64(s) beside float32 q, k, v: the scores stay float32, forward and backward
    (NumPy would promote them to float64 for a NumPy float64), the bits of scale=s."""
    import minitx
    from minitx.ops.attention import scaled_dot_product_attention

    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in [(2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8)]]
    results = []
    for scale in (0.3, np.float64(0.3)):
        q, k, v = (minitx.tensor(a, requires_grad=True) for a in arrays)
        o = scaled_dot_product_attention(q, k, v, scale=scale)
        o.sum().backward()
        results.append([o.numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy()])
    assert results[1][0].dtype == np.float32
    for got, want in zip(*results):
        np.testing.assert_array_equal(got, want)


def test_a_nan_stays_in_the_keys_a_query_sees_and_a_query_that_sees_none_gives_0():
    """Unfused path: a NaN in query 1 reaches the values' gradients of keys 0 and 1 only (causal),
    as the kernels and PyTorch give (dk = dS^T q reads the NaN query for every key, in PyTorch's too);
    a fully masked query's output is 0 even beside a NaN in v."""
    rng = np.random.default_rng(0)
    q, k, v = (leaf(rng.standard_normal((1, 1, 4, 2))) for _ in range(3))
    q.data[0, 0, 1, 0] = np.nan
    F.scaled_dot_product_attention(q, k, v, causal=True).sum().backward()
    np.testing.assert_array_equal(np.isnan(v.grad.numpy()[0, 0]).any(axis=-1), [True, True, False, False])
    v2 = rng.standard_normal((1, 1, 3, 2))
    v2[0, 0, 1, 0] = np.nan
    mask = np.array([[True, True, True], [False, False, False]])
    out = F.scaled_dot_product_attention(leaf(rng.standard_normal((1, 1, 2, 2))), leaf(rng.standard_normal((1, 1, 3, 2))),
                                         leaf(v2), mask)
    np.testing.assert_array_equal(out.numpy()[0, 0, 1], [0.0, 0.0])


def test_an_infinite_output_gradient_gives_the_kernels_delta_do_dot_o():
    """Unfused path: delta_i = sum_j P_ij dP_ij = do_i . o_i, taken as do_i . o_i, the kernels'
    (attention.cu's attention_backward_delta). Where do_i holds +inf and the values' column under
    it has both signs, sum_j P_ij dP_ij is +inf - inf = NaN, while do_i . o_i is the limit, +inf
    (o's entry is > 0): a key whose dP_ij is -inf then gets dS_ij = -inf, not NaN, as the kernels
    give (a key whose dP_ij is +inf gets inf - inf = NaN on both paths)."""
    q = np.array([[[[0.3, -0.2], [0.1, 0.4]]]])
    k = np.array([[[[0.5, 0.1], [-0.3, 0.2]]]])
    v = np.array([[[[2.0, 1.0], [-1.0, 0.5]]]])  # column 0: 2 and -1, so o[0, 0] > 0
    do = np.array([[[[np.inf, 0.3], [0.2, -0.1]]]])
    tq, tk, tv = leaf(q), leaf(k), leaf(v)
    with np.errstate(invalid="ignore"):
        F.scaled_dot_product_attention(tq, tk, tv).backward(minitx.tensor(do))
        o, p = np_attention(q, k, v)
        dp = do @ np.swapaxes(v, -1, -2)
        ds = p * (dp - (do * o).sum(-1, keepdims=True)) / math.sqrt(2)
        expected_dk = np.swapaxes(ds, -1, -2) @ q
    np.testing.assert_array_equal(tk.grad.numpy()[0, 0, 1], [-np.inf, np.inf])  # (the reference had NaN)
    np.testing.assert_allclose(tk.grad.numpy(), expected_dk, **TIGHT)
    np.testing.assert_allclose(tq.grad.numpy(), ds @ k, **TIGHT)
