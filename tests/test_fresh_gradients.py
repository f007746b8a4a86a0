"""Function.fresh_gradients is a promise the engine builds on: it adds an input's other gradients
into such a gradient in place, and a leaf keeps one as its ``.grad`` without a copy. So every
gradient the op's backward returns must be a new array that shares memory with nothing else: not
dy, not what the op saved, not an input, not another of its gradients. Checked here for every op
of minitx that makes the promise, on the reference path and through the kernels (their CPU
emulation), in each dtype the kernels take."""
import numpy as np
import pytest

import minitx
import minitx.functional as F
from minitx import kernels
from minitx.kernels import cpu_harness
from minitx.autograd.function import Function
from minitx.ops.activation import LogSoftmax, Softmax
from minitx.ops.attention import PackedHeadsAttention, ScaledDotProductAttention, attention_on_packed_heads
from minitx.ops.ctc import CtcLoss
from minitx.ops.dropout import BiasActDropout
from minitx.ops.indexing import DiagEmbed, Embedding, GetItem, Scatter, SetItem, TakeAlongDim, WriteThroughView
from minitx.ops.linalg import Linear
from minitx.ops.loss import CrossEntropy
from minitx.ops.norm import LayerNorm
from minitx.ops.scan import Kthvalue, Median, Mode, Quantile
from minitx.ops.shape import SlidingWindows

RNG = np.random.default_rng(0)
X, W, B = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((5, 4)), RNG.standard_normal(5)
NORM_W, NORM_B, TABLE = RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal((7, 4))
IDS = np.array([[1, 0, 6], [2, 2, 0]])
LOGITS, TARGETS = RNG.standard_normal((2, 3, 5)), np.array([[4, 0, 2], [-100, 1, 4]])  # one row ignored
Q, KV = RNG.standard_normal((2, 4, 3, 8)), RNG.standard_normal((2, 2, 5, 8))  # [B, H, L, d]: 4 query heads, 2 kv
KEEP = np.array([[True, True, False, True, True], [True, False, True, True, True]])[:, None, None, :]
PACKED = RNG.standard_normal((2, 5, 3 * 2 * 8))  # [B, L, (q, k, v) x 2 heads x 8]

#: name -> (an op that promises new gradients, a function of ``t`` (an array -> a leaf) that applies
#: it): each op's paths through backward, backward_adding included
CASES = {
    "linear": (Linear, lambda t: F.linear(t(X), t(W), t(B))),
    "layer_norm": (LayerNorm, lambda t: F.layer_norm(t(X), t(NORM_W), t(NORM_B))),
    "layer_norm of one row": (LayerNorm, lambda t: F.layer_norm(t(X[0, 0]), t(NORM_W), t(NORM_B))),
    "layer_norm on a residual stream": (LayerNorm, lambda t: _residual(t(X), lambda h: F.layer_norm(h, t(NORM_W),
                                                                                                    t(NORM_B)))),
    "bias_act_dropout": (BiasActDropout, lambda t: F.bias_act_dropout(t(X), t(NORM_B), "relu", p=0.25, seed=3)),
    "bias_act_dropout, identity": (BiasActDropout, lambda t: F.bias_act_dropout(t(X[0]), t(NORM_B), "identity")),
    "bias_act_dropout of one row": (BiasActDropout, lambda t: F.bias_act_dropout(t(X[:1, :1]), t(NORM_B), "relu")),
    "bias_act_dropout, no bias": (BiasActDropout, lambda t: F.bias_act_dropout(t(X), None, "gelu_tanh", p=0.5,
                                                                              seed=1)),
    "embedding": (Embedding, lambda t: F.embedding(minitx.tensor(IDS), t(TABLE), padding_idx=0)),
    "attention": (ScaledDotProductAttention, lambda t: F.scaled_dot_product_attention(
        t(Q), t(KV[:, :1].repeat(4, 1)), t(KV[:, 1:].repeat(4, 1)), mask=minitx.tensor(KEEP), dropout_p=0.3, seed=2)),
    "attention, grouped heads and a float mask": (ScaledDotProductAttention, lambda t: F.scaled_dot_product_attention(
        t(Q), t(KV), t(KV[::-1]), mask=t(np.where(KEEP, 0.0, -5.0)), causal=True, enable_gqa=True)),
    "attention on packed heads": (PackedHeadsAttention, lambda t: attention_on_packed_heads(
        (t(PACKED),), (2, 2), 8, mask=minitx.tensor(KEEP), causal=True)),
    "softmax": (Softmax, lambda t: F.softmax(t(X), -1)),
    "softmax over a middle axis": (Softmax, lambda t: F.softmax(t(X), 1)),
    "log_softmax": (LogSoftmax, lambda t: F.log_softmax(t(X), -1)),
    "cross_entropy": (CrossEntropy, lambda t: F.cross_entropy(t(LOGITS), minitx.tensor(TARGETS), label_smoothing=0.1)),
    "getitem": (GetItem, lambda t: t(X)[1, ::-1]),
    "getitem, a repeated index": (GetItem, lambda t: t(X)[[1, 0, 1], 2]),
    "setitem": (SetItem, lambda t: _written(t(X), (0, slice(1, None)), t(X[1, 1:]))),
    "setitem, a repeated index": (SetItem, lambda t: _written(t(X), ([1, 0, 1], 2), t(NORM_W))),
    "a write through a view": (WriteThroughView, lambda t: _written_through(t(X), t(NORM_W[:3]))),
    "median": (Median, lambda t: F.median(t(X), 1).values),
    "kthvalue": (Kthvalue, lambda t: F.kthvalue(t(X), 2, 1).values),
    "mode": (Mode, lambda t: F.mode(t(np.round(X)), 1).values),
    "quantile": (Quantile, lambda t: F.quantile(t(X), [0.25, 0.5], 1)),
    "diag": (DiagEmbed, lambda t: F.diag(t(NORM_W), -1)),
    "take_along_dim, a repeated pick": (TakeAlongDim, lambda t: F.take_along_dim(t(X), minitx.tensor(IDS[:, :, None] % 3),
                                                                              1)),
    "take_along_dim, flattened": (TakeAlongDim, lambda t: F.take_along_dim(t(X), minitx.tensor(IDS))),
    "sliding windows, overlapping": (SlidingWindows, lambda t: t(X).unfold(2, 3, 1)),
    "scatter, a repeated target": (Scatter, lambda t: F.scatter(t(X), 1, minitx.tensor(IDS[:, None, :2] % 3), t(X))),
    "ctc_loss": (CtcLoss, lambda t: F.ctc_loss(F.log_softmax(t(LOGITS.transpose(1, 0, 2)), -1),
                                             minitx.tensor([[1, 2, 0], [3, 0, 0]]), (3, 2), (2, 1))),
    "cross_entropy, summed": (CrossEntropy, lambda t: F.cross_entropy(t(LOGITS[0]), minitx.tensor(TARGETS[0]),
                                                                     reduction="sum")),
}


#: the cases whose backward runs no kernel of minitx's (a product is cuBLAS's, log_softmax's backward
#: is element-wise, the softmax kernels take the last axis, and a float mask that learns takes the
#: reference path; getitem, setitem, median, kthvalue, mode, quantile, diag, take_along_dim, the sliding
#: windows, scatter and ctc_loss have no kernel)
NO_BACKWARD_KERNEL = {"linear", "log_softmax", "softmax over a middle axis", "attention, grouped heads and a float mask",
                      "setitem", "setitem, a repeated index", "a write through a view", "getitem", "getitem, a repeated index", "median",
                      "kthvalue", "mode", "quantile", "diag", "take_along_dim, a repeated pick", "take_along_dim, flattened",
                      "sliding windows, overlapping", "scatter, a repeated target", "ctc_loss"}


def _written(x, index, v):
    """A copy of x with v written at index (SetItem's input x is the copy's old values)."""
    y = x * 1.0
    y[index] = v
    return y


def _written_through(x, v):
    """A copy of x with v written through a view of it (y.transpose(...)[1, 1] = v)."""
    y = x * 1.0
    y.transpose(2, 0, 1)[1, 1] = v
    return y


def _residual(x, layer):
    """x + layer(x * 1): the layer's input also feeds the add, so its gradient is pending when the
    layer's backward runs (Function.backward_adding, which gets it as ``plus``)."""
    h = x * 1.0
    return h + layer(h)


def promising_ops():
    """minitx's Function classes whose fresh_gradients is True."""
    found, stack = set(), [Function]
    while stack:
        for cls in stack.pop().__subclasses__():
            stack.append(cls)
            if cls.__module__.startswith("minitx.") and cls.fresh_gradients:
                found.add(cls)
    return found


def test_every_op_that_promises_new_gradients_is_checked_here():
    assert promising_ops() == {op for op, _ in CASES.values()}


def arrays_of(values):
    """The arrays among values (tuples and Nones skipped)."""
    return [v for v in values if isinstance(v, np.ndarray)]


@pytest.mark.parametrize("fused", [False, True], ids=["reference", "kernels"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("case", CASES)
def test_an_op_that_promises_new_gradients_returns_arrays_nothing_else_holds(case, dtype, fused, monkeypatch):
    op, apply = CASES[case]
    seen, original = [], op.backward

    def backward(self, dy, *args, **kwargs):
        grads = original(self, dy, *args, **kwargs)
        grads = grads if isinstance(grads, tuple) else (grads,)
        seen.append((dy, [x.data for x in self.inputs], list(self.saved), list(kwargs.values()), grads))
        return grads

    monkeypatch.setattr(op, "backward", backward)
    launched, cpu = [], cpu_harness.cpu_backend()
    monkeypatch.setattr(cpu, "launch", lambda file, kernel, *a, _launch=cpu.launch, **k: (launched.append(kernel),
                                                                                          _launch(file, kernel, *a, **k))[1])
    resolved = minitx.backend.resolve_dtype(dtype)
    with kernels.emulate_on_cpu() if fused else kernels.use_fused(False):
        y = apply(lambda a: minitx.tensor(a.astype(resolved), requires_grad=True))
        (y * minitx.tensor(RNG.standard_normal(y.shape).astype(resolved))).sum().backward()
    assert len(seen) == 1
    assert any("backward" in name for name in launched) == (fused and case not in NO_BACKWARD_KERNEL)
    dy, inputs, saved, pending, grads = seen[0]
    if case.endswith("residual stream") and dtype != "bfloat16":  # (16 bits: the engine adds, see backward_adding)
        assert arrays_of(pending), "backward_adding did not run"
    grads = arrays_of(grads)
    assert grads, "the op returned no gradient to check"
    for i, g in enumerate(grads):
        for other in [dy] + arrays_of(inputs) + arrays_of(saved) + arrays_of(pending) + grads[:i]:
            assert not np.shares_memory(g, other), f"{case}: gradient {i} shares memory"
