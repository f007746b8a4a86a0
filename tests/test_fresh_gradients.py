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
from minitx.ops.dropout import BiasActDropout
from minitx.ops.indexing import Embedding
from minitx.ops.linalg import Linear
from minitx.ops.norm import LayerNorm

RNG = np.random.default_rng(0)
X, W, B = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((5, 4)), RNG.standard_normal(5)
NORM_W, NORM_B, TABLE = RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal((7, 4))
IDS = np.array([[1, 0, 6], [2, 2, 0]])

#: each op that promises new gradients, applied to leaves made by ``t`` (an array -> a leaf)
CASES = {
    Linear: lambda t: F.linear(t(X), t(W), t(B)),
    LayerNorm: lambda t: F.layer_norm(t(X), t(NORM_W), t(NORM_B)),
    BiasActDropout: lambda t: F.bias_act_dropout(t(X), t(NORM_B), "relu", p=0.25, seed=3),
    Embedding: lambda t: F.embedding(minitx.tensor(IDS), t(TABLE), padding_idx=0),
}


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
    assert promising_ops() == set(CASES)


def arrays_of(values):
    """The arrays among values (tuples and Nones skipped)."""
    return [v for v in values if isinstance(v, np.ndarray)]


@pytest.mark.parametrize("fused", [False, True], ids=["reference", "kernels"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("op", CASES, ids=lambda cls: cls.__name__)
def test_an_op_that_promises_new_gradients_returns_arrays_nothing_else_holds(op, dtype, fused, monkeypatch):
    seen, original = [], op.backward

    def backward(self, dy, *args, **kwargs):
        grads = original(self, dy, *args, **kwargs)
        grads = grads if isinstance(grads, tuple) else (grads,)
        seen.append((dy, [x.data for x in self.inputs], list(self.saved), grads))
        return grads

    monkeypatch.setattr(op, "backward", backward)
    launched, cpu = [], cpu_harness.cpu_backend()
    monkeypatch.setattr(cpu, "launch", lambda file, kernel, *a, _launch=cpu.launch, **k: (launched.append(kernel),
                                                                                          _launch(file, kernel, *a, **k))[1])
    resolved = minitx.backend.resolve_dtype(dtype)
    with kernels.emulate_on_cpu() if fused else kernels.use_fused(False):
        y = CASES[op](lambda a: minitx.tensor(a.astype(resolved), requires_grad=True))
        (y * minitx.tensor(RNG.standard_normal(y.shape).astype(resolved))).sum().backward()
    assert len(seen) == 1
    assert any("backward" in name for name in launched) == (fused and op is not Linear)  # (its products are cuBLAS's)
    dy, inputs, saved, grads = seen[0]
    grads = arrays_of(grads)
    assert grads, "the op returned no gradient to check"
    for i, g in enumerate(grads):
        for other in [dy] + arrays_of(inputs) + arrays_of(saved) + grads[:i]:
            assert not np.shares_memory(g, other), f"{op.__name__}: gradient {i} shares memory"
