"""Mixed precision (minitx.amp): inside autocast("bfloat16") the products compute in bfloat16 and
the reductions in float32, each as PRECISION says; parameters and their gradients stay float32.
autocast("float16") likewise in float16, its backward under a GradScaler's loss scale.

Tolerances, in bfloat16 ulps: bfloat16 has 8 mantissa bits, so one rounding moves a value by at
most 2^-9 of itself (half an ulp, 2^-8 relative). A product rounds each input once and its result
once, and adds in float32: within 3 * 2^-8 of sum |a_i b_i|. A whole network's loss, after a few
dozen such roundings, agrees with float32 to about 1%, and each gradient points the same way
(cosine above 0.97).

float16 has 11 mantissa bits (an ulp of 2^-11 relative, half that by rounding) and 5 exponent
bits: below 2^-14 its values are subnormal, spaced 2^-24 apart, so the bounds add 2^-24 per
input rounded.
"""
import contextlib
import math
import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ml_dtypes = pytest.importorskip("ml_dtypes")

import minitx  # noqa: E402
import minitx.functional as F  # noqa: E402
from minitx import amp, kernels, nn, optim, sync  # noqa: E402
from minitx.nn import Transformer  # noqa: E402
from minitx.train import train_step  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
ULP = 2.0 ** -8  # bfloat16's relative spacing
LOW = {"bfloat16": (BF16, ULP, 0.0), "float16": (np.dtype(np.float16), 2.0 ** -11, 2.0 ** -24)}  # dtype, ulp, tiny


def rounded(a, dtype=BF16):
    """a rounded to ``dtype`` (nearest even) and back to float32: what a bfloat16 (or float16)
    input holds."""
    return np.asarray(a, np.float32).astype(dtype).astype(np.float32)


def test_every_row_of_the_table_names_a_real_op_and_gives_its_reason():
    from minitx import ops

    for name, (where, why) in amp.PRECISION.items():
        assert hasattr(ops, name), name
        assert where in ("low", "float32") and len(why) > 20, name


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(LOW)), n=st.integers(1, 6), k=st.integers(1, 40), m=st.integers(1, 6),
       seed=st.integers(0, 10**6))
def test_a_product_is_low_precision_storage_with_float32_sums(name, n, k, m, seed):
    dtype, ulp, tiny = LOW[name]
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(n, k)).astype(np.float32), rng.normal(size=(k, m)).astype(np.float32)
    with minitx.autocast(name):
        y = F.matmul(minitx.tensor(a), minitx.tensor(b))
    assert y.dtype == dtype
    # exactly: the low inputs multiplied and added in float32 (or better), then rounded once
    exact = rounded(a, dtype).astype(np.float64) @ rounded(b, dtype).astype(np.float64)
    np.testing.assert_allclose(y.numpy().astype(np.float64), exact, rtol=ulp,
                               atol=1e-6 * np.abs(exact).max() + tiny)
    # against float32: within 3 ulps of the sum of |a_i b_i|, plus each input's subnormal rounding
    bound = 3 * ulp * (np.abs(a) @ np.abs(b)) + tiny * (np.abs(a).sum(1, keepdims=True) + np.abs(b).sum(0) + 1)
    assert np.all(np.abs(y.numpy().astype(np.float64) - a.astype(np.float64) @ b) <= bound + 1e-30)


@pytest.mark.parametrize("name", sorted(LOW))
def test_reductions_and_normalizations_compute_in_float32(name):
    dtype = LOW[name][0]
    x = minitx.tensor(np.random.default_rng(1).normal(size=(4, 9)).astype(np.float32))
    with minitx.autocast(name):
        low = F.linear(x, minitx.tensor(np.eye(9, dtype=np.float32)))
        assert low.dtype == dtype
        for out in (F.softmax(low), F.log_softmax(low), F.layer_norm(low), F.sum(low), F.mean(low),
                    F.cross_entropy(low, minitx.tensor([0, 1, 2, 3]))):
            assert out.dtype == np.float32
        np.testing.assert_allclose(F.softmax(low).numpy(),
                                   F.softmax(minitx.tensor(rounded(x.numpy(), dtype))).numpy(), rtol=1e-6)
    assert F.matmul(x, x.T).dtype == np.float32  # outside: nothing is cast


@pytest.mark.parametrize("name", sorted(LOW))
def test_float64_is_left_alone_and_so_are_integers(name):
    x = minitx.tensor(np.ones((2, 3)), dtype="float64")
    with minitx.autocast(name):
        assert F.matmul(x, x.T).dtype == np.float64
        assert F.embedding(minitx.tensor([1, 0]), x).dtype == np.float64


def test_autocast_refuses_an_unknown_dtype():
    with pytest.raises(ValueError, match="autocast: unknown dtype 'float8'; expected one of bfloat16, float16"):
        minitx.autocast("float8")


def test_autocast_takes_pytorchs_arguments_and_numpy_types():
    """A ported loop's torch.autocast("cuda", dtype=..., enabled=...) runs unchanged: the device
    name first or as device_type (its PyTorch default dtype when none is given), enabled=False
    (off inside, an outer block's too), and np.float16 / ml_dtypes.bfloat16 as the dtype."""
    x, w = minitx.ones(2, 3), minitx.ones(4, 3)

    def dtype_in(context):
        with context:
            return F.linear(x, w).dtype

    assert dtype_in(minitx.autocast("cuda", dtype=np.float16)) == np.float16
    assert dtype_in(minitx.autocast(device_type="cuda")) == np.float16  # PyTorch's default on "cuda"
    assert dtype_in(minitx.autocast("cpu")) == BF16  # and on "cpu"
    assert dtype_in(minitx.autocast(ml_dtypes.bfloat16)) == BF16
    assert dtype_in(minitx.autocast(dtype="float16", cache_enabled=False)) == np.float16
    assert dtype_in(minitx.autocast("cuda", minitx.float16, False)) == np.float32
    with minitx.autocast("float16"):
        assert dtype_in(minitx.autocast(enabled=False)) == np.float32  # a float32 region inside
        assert F.linear(x, w).dtype == np.float16  # and back after it
    with pytest.raises(ValueError, match="autocast: unknown device_type 'tpu'; expected 'cpu' or 'cuda'"):
        minitx.autocast("tpu", dtype="float16")
    with pytest.raises(ValueError, match=r"unknown dtype 'tpu'; expected one of bfloat16, float16 \(or a "
                                         r"device_type: cpu, cuda\)"):
        minitx.autocast("tpu")
    with pytest.raises(TypeError, match="autocast: enabled must be True or False, got 'no'"):
        minitx.autocast(enabled="no")


def _transformer_step(dtype=None, seed=0, scaler=None, loss_factor=1.0):
    """A small Transformer's loss and its parameters, their gradients filled (by backward on the
    loss scaled by ``scaler``, then unscaled, when one is given); the forward in ``dtype``."""
    src = np.array([[3, 4, 5, 6, 2], [7, 8, 2, 0, 0]])
    tgt = np.array([[1, 5, 6, 7, 2], [1, 9, 10, 2, 0]])
    minitx.manual_seed(seed)
    model = Transformer(12, 12, d_model=32, num_heads=4, num_encoder_layers=2, num_decoder_layers=2, d_ff=64,
                        max_len=8, dropout=0.1)
    with minitx.autocast(dtype) if dtype else contextlib.nullcontext():
        loss = F.cross_entropy(model(src, tgt[:, :-1]), minitx.tensor(tgt[:, 1:]), ignore_index=0,
                               label_smoothing=0.1) * loss_factor
    params = list(model.parameters())
    if scaler is None:
        loss.backward()
    else:
        scaler.scale(loss).backward()
        scaler.unscale_(optim.SGD(params, lr=0.1))
    return loss, params


def _cosines(params32, params16):
    """Per parameter with a float32 gradient: the cosine between its two gradients."""
    found = []
    for p32, p16 in zip(params32, params16):
        g32, g16 = p32.grad.numpy().ravel(), p16.grad.numpy().ravel()
        if np.linalg.norm(g32) > 0:
            found.append(g32 @ g16 / (np.linalg.norm(g32) * np.linalg.norm(g16) + 1e-30))
    return np.array(found)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_transformer_step_in_bfloat16_follows_float32(seed):
    """The master weights and their gradients stay float32; the loss agrees to 1%, and each
    parameter's gradient points where the float32 one does (cosine > 0.97: most are above 0.995,
    the feed-forward layers' lowest, where bfloat16's rounding flips a few ReLU gates)."""
    loss32, params32 = _transformer_step(None, seed)
    loss16, params16 = _transformer_step("bfloat16", seed)
    assert loss16.dtype == np.float32
    assert loss16.item() == pytest.approx(loss32.item(), rel=1e-2)
    for p32, p16 in zip(params32, params16):
        assert p16.dtype == p16.grad.dtype == np.float32
        g32, g16 = p32.grad.numpy().ravel(), p16.grad.numpy().ravel()
        if np.linalg.norm(g32) > 1e-6:
            assert g32 @ g16 / (np.linalg.norm(g32) * np.linalg.norm(g16)) > 0.97


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_transformer_step_in_float16_follows_float32(seed):
    """Under a GradScaler (2^16): float16's three more mantissa bits bring the loss within 0.1%,
    every gradient's cosine above 0.98 (the feed-forward layers' lowest, from ReLU gates that
    rounding flips, as in bfloat16) and their median above 0.998; the weights and gradients
    float32."""
    loss32, params32 = _transformer_step(None, seed)
    loss16, params16 = _transformer_step("float16", seed, optim.GradScaler())
    assert loss16.dtype == np.float32
    assert loss16.item() == pytest.approx(loss32.item(), rel=1e-3)
    assert all(p.dtype == p.grad.dtype == np.float32 for p in params16)
    cosines = _cosines(params32, params16)
    assert cosines.min() > 0.98 and np.median(cosines) > 0.998


def test_without_the_loss_scale_small_float16_gradients_vanish():
    """A loss times 2^-20 (exact: the float32 gradients are the same, times 2^-20): in float16
    most gradients of the backward pass fall below 2^-24 and are 0; the loss scale lifts them
    back, and they follow float32 as closely as at the loss's own size. The zeros are counted
    against the float16 step at the loss's own size: float16's forward (the same whatever the
    loss's factor) closes a few ReLU gates float32's keeps open, whose weights' gradients are 0
    for that reason, not by underflow."""
    loss32, params32 = _transformer_step(None, 0, loss_factor=2.0 ** -20)
    total = sum(p.size for p in params32)

    def zeros(params):
        return sum(int((p.grad.numpy() == 0).sum()) for p in params)

    at_own_size = zeros(_transformer_step("float16", 0, optim.GradScaler())[1])
    unscaled = _transformer_step("float16", 0, loss_factor=2.0 ** -20)[1]
    scaled = _transformer_step("float16", 0, optim.GradScaler(), loss_factor=2.0 ** -20)[1]
    assert zeros(unscaled) - at_own_size > total // 4 and np.median(_cosines(params32, unscaled)) < 0.9
    assert zeros(scaled) - at_own_size < total // 500
    assert _cosines(params32, scaled).min() > 0.98


@pytest.mark.parametrize("name", sorted(LOW))
@pytest.mark.parametrize("op", ["conv1d", "conv2d", "conv_transpose2d"])
def test_a_convolution_is_a_product_and_computes_in_16_bits_as_pytorchs(name, op):
    """Convolutions are in PyTorch's autocast lists (CPU and GPU) beside linear and matmul: their
    output is the 16-bit dtype, each input rounded once, the sums in float32 (they stayed
    float32). The weights' gradients come back float32."""
    torch = pytest.importorskip("torch")
    dtype, ulp, tiny = LOW[name]
    rng = np.random.default_rng(4)
    dims = 1 if op == "conv1d" else 2
    x = rng.normal(size=(2, 3) + (7,) * dims).astype(np.float32)
    shape = (3, 4) if op == "conv_transpose2d" else (4, 3)  # [in, out] for the transposed, [out, in] else
    w = rng.normal(size=shape + (3,) * dims).astype(np.float32)
    b = rng.normal(size=4).astype(np.float32)
    weight = minitx.tensor(w, requires_grad=True)
    with minitx.autocast(name):
        y = getattr(F, op)(minitx.tensor(x), weight, minitx.tensor(b))
    with torch.autocast("cpu", dtype=getattr(torch, name)):
        expected = getattr(torch.nn.functional, op)(torch.tensor(x), torch.tensor(w), torch.tensor(b))
    assert y.dtype == dtype and str(expected.dtype) == f"torch.{name}"
    exact = getattr(torch.nn.functional, op)(*(torch.tensor(rounded(a, dtype)).double() for a in (x, w, b)))
    np.testing.assert_allclose(y.numpy().astype(np.float64), exact.numpy(), rtol=ulp, atol=1e-5)  # (float32 sums)
    y.astype("float32").sum().backward()
    assert weight.grad.dtype == np.float32


ADD_PRODUCTS = {"addmm": ((6, 5), (6, 9), (9, 5)), "baddbmm": ((3, 6, 5), (3, 6, 9), (3, 9, 5)),
                "addbmm": ((6, 5), (3, 6, 9), (3, 9, 5)), "addmv": ((6,), (6, 9), (9,)), "addr": ((6, 5), (6,), (5,))}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("op", sorted(ADD_PRODUCTS))
def test_the_addmm_family_under_autocast_rounds_once_as_pytorchs(op, seed):
    """beta * input + alpha * product under autocast("bfloat16"): each float32 tensor rounded to
    bfloat16, the sum in float32, rounded once (PyTorch's fused epilogue), not the product rounded
    to 16 bits and then added. PyTorch's CPU autocast lists addmm and baddbmm (the same bits here);
    addbmm there rounds after each batch's product (so it is held to the NumPy sum rounded once),
    and addmv and addr are in its CUDA list alone. The gradients come back float32."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=s).astype(np.float32) for s in ADD_PRODUCTS[op]]
    beta, alpha = 0.7, -1.3
    tensors = [minitx.tensor(a, requires_grad=True) for a in arrays]
    with minitx.autocast("bfloat16"):
        y = getattr(F, op)(*tensors, beta=beta, alpha=alpha)
    i, a, b = (rounded(x) for x in arrays)
    product = {"addbmm": lambda: (a @ b).sum(axis=0), "addr": lambda: np.outer(a, b)}.get(op, lambda: a @ b)()
    expected = (np.float32(beta) * i + np.float32(alpha) * product).astype(BF16)
    assert y.dtype == BF16
    np.testing.assert_array_equal(y.numpy(), expected)
    if op in ("addmm", "baddbmm"):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            theirs = getattr(torch, op)(*map(torch.tensor, arrays), beta=beta, alpha=alpha)
        np.testing.assert_array_equal(y.numpy().astype(np.float32), theirs.float().numpy())
    y.astype("float32").sum().backward()
    assert all(t.grad.dtype == np.float32 for t in tensors)


@pytest.mark.parametrize("name", sorted(LOW))
def test_the_same_layer_under_pytorchs_autocast(name):
    """nn.Linear, then cross-entropy, under both frameworks' bfloat16 (or float16) autocast on the CPU."""
    torch = pytest.importorskip("torch")
    dtype, ulp, _ = LOW[name]
    rng = np.random.default_rng(3)
    x, w, b = (rng.normal(size=s).astype(np.float32) for s in ((16, 32), (10, 32), (10,)))
    targets = rng.integers(0, 10, 16)
    layer = nn.Linear(32, 10)
    layer.weight.data[...], layer.bias.data[...] = w, b
    with minitx.autocast(name):
        logits = layer(minitx.tensor(x))
        loss = F.cross_entropy(logits, minitx.tensor(targets))
    loss.backward()
    tw, tb = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
    with torch.autocast("cpu", dtype=getattr(torch, name)):
        t_logits = torch.nn.functional.linear(torch.tensor(x), tw, tb)
        t_loss = torch.nn.functional.cross_entropy(t_logits.float(), torch.tensor(targets))
    t_loss.backward()
    assert str(t_logits.dtype) == f"torch.{name}" and logits.dtype == dtype
    np.testing.assert_allclose(logits.numpy().astype(np.float32), t_logits.float().detach().numpy(), rtol=2 * ulp,
                               atol=1e-2)
    assert loss.item() == pytest.approx(t_loss.item(), rel=5e-3)
    np.testing.assert_allclose(layer.weight.grad.numpy(), tw.grad.detach().numpy(), rtol=0.05, atol=5e-3)
    assert layer.weight.grad.dtype == np.float32 and tw.grad.dtype == torch.float32


@pytest.mark.parametrize("name", sorted(LOW))
@pytest.mark.parametrize("norm_first, dropout, training", [(False, 0.1, True), (True, 0.1, True), (True, 0.0, True),
                                                           (False, 0.1, False)])
def test_no_fused_op_of_a_transformer_step_sees_two_floating_dtypes(name, norm_first, dropout, training):
    """Under autocast every op that has fused kernels gets its floating inputs in one dtype. Given
    two (a bfloat16 activation beside a float32 parameter or residual) it would compute in the
    promoted float32 through its reference code, since the kernels take one storage dtype: slow,
    and twice the bytes. (Ops without kernels, such as the plain add a residual connection is
    without dropout, promote in their one elementwise pass, as NumPy and CuPy do.) Post-norm and
    pre-norm, with and without dropout, training and evaluating."""
    from minitx.autograd import function

    mixed = []

    def look(fn, inputs, output):
        floating = {t.dtype for t in inputs if t.dtype.kind == "f" or t.dtype == BF16}
        if len(floating) > 1 and fn.low_precision == "kernels":
            mixed.append((type(fn).__name__, sorted(d.name for d in floating)))

    src = np.array([[3, 4, 5, 6, 2], [7, 8, 2, 0, 0]])
    tgt = np.array([[1, 5, 6, 7, 2], [1, 9, 10, 2, 0]])
    minitx.manual_seed(0)
    model = Transformer(12, 12, d_model=32, num_heads=4, num_encoder_layers=1, num_decoder_layers=1, d_ff=64,
                        max_len=8, dropout=dropout, norm_first=norm_first)
    model.train(training)
    function.forward_hooks.append(look)
    try:
        with minitx.autocast(name):
            F.cross_entropy(model(src, tgt[:, :-1]), minitx.tensor(tgt[:, 1:]), ignore_index=0)
    finally:
        function.forward_hooks.remove(look)
    assert not mixed


@pytest.mark.parametrize("p", [0.0, 0.3])
def test_bias_act_dropout_under_autocast_adds_the_bias_in_the_products_dtype(p):
    """As Linear's own bias: the feed-forward's first Linear leaves its bias to bias_act_dropout,
    which casts it down beside the product's output and returns that dtype (under the kernels'
    CPU emulation: the fused kernel, as on the GPU); its gradient comes back in float32."""
    rng = np.random.default_rng(5)
    x = minitx.tensor(rng.normal(size=(6, 8)).astype(np.float32), requires_grad=True)
    b = minitx.tensor(rng.normal(size=8).astype(np.float32), requires_grad=True)
    with kernels.emulate_on_cpu():
        if not kernels.enabled(np.ones(1, BF16)):
            pytest.skip("the kernels' CPU emulation needs g++")
        with minitx.autocast("bfloat16"):
            y = F.bias_act_dropout(x, b, "relu", p=p, seed=7)
        assert y.grad_fn.philox is not None  # the op ran its kernel (the reference path keeps no Philox pair)
        y.sum().backward()
        expected = F.bias_act_dropout(minitx.tensor(x.numpy().astype(BF16)), minitx.tensor(b.numpy().astype(BF16)),
                                      "relu", p=p, seed=7)
    assert y.dtype == BF16 and b.grad.dtype == x.grad.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), expected.numpy())


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_under_autocast_reads_bfloat16_logits_as_they_are(smoothing):
    """Its kernels read bfloat16 logits and return a float32 loss (the sums in float32), so
    autocast hands them the logits uncast: no [rows, classes] float32 copy forward, and none of
    the gradient backward. The loss and the logits' gradient have the bytes of the cast path
    (a bfloat16 value is exact in float32; the gradient is rounded once either way)."""
    from minitx.autograd import function

    rng = np.random.default_rng(8)
    logits = rng.normal(size=(12, 40)).astype(BF16)
    targets = minitx.tensor(np.where(rng.random(12) < 0.2, 0, rng.integers(1, 40, 12)))
    ops = []
    function.forward_hooks.append(lambda fn, inputs, output: ops.append(type(fn).__name__))
    try:
        results = []
        with kernels.emulate_on_cpu():
            if not kernels.enabled(logits):
                pytest.skip("the kernels' CPU emulation needs g++")
            for cast_first in (False, True):
                x = minitx.tensor(logits, requires_grad=True)
                ops.clear()
                with minitx.autocast("bfloat16"):
                    loss = F.cross_entropy(x.astype("float32") if cast_first else x, targets, ignore_index=0,
                                           label_smoothing=smoothing)
                loss.backward()
                results.append((loss.numpy(), x.grad.numpy(), list(ops)))
    finally:
        function.forward_hooks.pop()
    (direct_loss, direct_grad, direct_ops), (cast_loss, cast_grad, _) = results
    assert direct_ops == ["CrossEntropy"] and direct_loss.dtype == np.float32 and direct_grad.dtype == BF16
    np.testing.assert_array_equal(direct_loss.view(np.uint32), cast_loss.view(np.uint32))
    np.testing.assert_array_equal(direct_grad.view(np.uint16), cast_grad.view(np.uint16))


def test_an_op_instance_called_again_outside_autocast_rounds_its_loss_as_before():
    """keeps_float32 holds for the autocast call only: the same CrossEntropy instance (callable
    again under no_grad) then returns bfloat16 logits' loss in bfloat16, as a new one does."""
    from minitx.ops import CrossEntropy

    logits = minitx.tensor(np.random.default_rng(9).normal(size=(5, 16)).astype(BF16))
    targets = minitx.tensor(np.arange(5))
    op = CrossEntropy()
    with kernels.emulate_on_cpu(), minitx.no_grad():
        if not kernels.enabled(logits.data):
            pytest.skip("the kernels' CPU emulation needs g++")
        with minitx.autocast("bfloat16"):
            assert op(logits, targets).dtype == np.float32
        assert op(logits, targets).dtype == BF16 == CrossEntropy()(logits, targets).dtype


BFLOAT16_OPS = {  # outside autocast: each op of bfloat16 tensors, as PyTorch's, returns bfloat16
    "log_softmax": lambda x, w: F.log_softmax(x, -1),
    "layer_norm": lambda x, w: F.layer_norm(x, w, w),
    "cross_entropy": lambda x, w: F.cross_entropy(x, minitx.tensor(np.array([1, 2, 3]))),
    "gelu": lambda x, w: F.gelu(x),
    "matmul": lambda x, w: x @ w[:, None],
    "scaled": lambda x, w: x * 0.5 + 1.0,
    "softmax": lambda x, w: F.softmax(x, -1),
    "mean": lambda x, w: x.mean(),
}


@pytest.mark.parametrize("name", sorted(BFLOAT16_OPS))
def test_an_op_of_bfloat16_tensors_returns_bfloat16_rounded_once(name):
    """NumPy computes some of these in float32 (a Python float or a product promotes bfloat16):
    the result comes back in bfloat16, equal to the float32 computation on the same values
    rounded once, and the gradient in bfloat16 too."""
    rng = np.random.default_rng(0)
    x32, w32 = rounded(rng.standard_normal((3, 4))), rounded(rng.standard_normal(4))
    low = [minitx.tensor(a.astype(BF16), requires_grad=True) for a in (x32, w32)]
    high = [minitx.tensor(a, requires_grad=True) for a in (x32, w32)]
    y, y32 = BFLOAT16_OPS[name](*low), BFLOAT16_OPS[name](*high)
    assert y.dtype == BF16
    np.testing.assert_allclose(y.numpy().astype(np.float32), y32.numpy(), rtol=4 * ULP,
                               atol=4 * ULP * np.abs(y32.numpy()).max())
    y.sum().backward()
    assert low[0].grad.dtype == BF16


def test_the_kernels_take_no_float16_and_a_float16_step_runs_the_reference_code():
    """kernels.enabled says no to float16 (alone or beside float32), so its products run the
    reference code, while the float32 ops of the same step (layer norm, softmax, the loss) may
    take the kernels: the step under the kernels' CPU emulation is finite and agrees with the
    reference step to float32's rounding."""
    f32, f16 = np.ones(3, np.float32), np.ones(3, np.float16)
    with kernels.emulate_on_cpu():
        if not kernels.enabled(f32):
            pytest.skip("the kernels' CPU emulation needs g++")
        assert not kernels.enabled(f16) and not kernels.enabled(f16, f32)

    def step():
        minitx.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 32), nn.LayerNorm(32), nn.ReLU(), nn.Linear(32, 10))
        x = minitx.tensor(np.random.default_rng(0).normal(size=(8, 16)).astype(np.float32))
        with minitx.autocast("float16"):
            loss = F.cross_entropy(F.log_softmax(model(x), -1), minitx.tensor(np.arange(8)))
        loss.backward()
        return loss.item(), [p.grad.numpy() for p in model.parameters()]

    with kernels.emulate_on_cpu():
        emulated = step()
    reference = step()
    assert np.isfinite(emulated[0]) and emulated[0] == pytest.approx(reference[0], rel=1e-6)
    for a, b in zip(emulated[1], reference[1]):
        assert np.isfinite(a).all()
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("deferred", [False, True])
def test_a_float16_forward_past_65504_is_a_non_finite_loss_not_a_silent_nan(deferred):
    """A product past float16's largest value is inf; the loss is then not finite, the scaler
    skips the step (every parameter as it was) and the loss check reports it: at once (the
    returned loss, which the Trainer refuses), or when the deferred checks are read."""
    layer = nn.Linear(64, 3)
    layer.weight.data[...] = 40.0  # 64 * 40 * 40 = 102400 > 65504
    before = [p.numpy().copy() for p in layer.parameters()]
    x = minitx.tensor(np.full((2, 64), 40.0, np.float32))
    opt, scaler = optim.Adam(layer.parameters(), lr=0.1), optim.GradScaler()
    checks = sync.DeferredChecks() if deferred else None

    def loss_fn(model, batch):
        with minitx.autocast("float16"):
            logits = model(batch)
            assert np.isinf(logits.numpy()).all()
            return F.cross_entropy(logits, minitx.tensor([0, 1])), 2

    loss, _ = train_step(layer, x, loss_fn, opt, checks=checks, scaler=scaler)
    for p, old in zip(layer.parameters(), before):
        np.testing.assert_array_equal(p.numpy(), old)
    assert scaler.get_scale() == 2.0 ** 15
    if deferred:
        with pytest.raises(FloatingPointError, match="training loss became nan"):
            checks.raise_first()
    else:
        assert math.isnan(loss)


@pytest.mark.parametrize("capability, expected", [("90", "tf32"), ("80", "tf32"), ("75", "fp32")])
def test_a_run_without_a_precision_takes_tf32_where_the_gpu_has_it(monkeypatch, capability, expected):
    """As PyTorch's set_float32_matmul_precision("high"): TF32 products on Ampere and later."""
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(
        Device=lambda: types.SimpleNamespace(compute_capability=capability)))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    assert amp.default_precision("cuda") == expected
    assert amp.default_precision("cpu") == "fp32"
