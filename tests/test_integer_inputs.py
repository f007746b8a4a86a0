"""Every op of the PyTorch parity table on integer and boolean inputs, beside PyTorch on the same
values (issue 26: every dtype an op accepts, integers included).

The drawn float inputs are rounded to whole numbers (NaN to 0, inf to +-3; uint8 takes their
absolute values) and cast. Then, per op and dtype:
* both compute: the same dtype and the same values;
* PyTorch refuses and minitx computes: an op on real numbers computes integers in float32
  (PyTorch's default float), a logical one keeps booleans (relu, matmul): the README's
  departures;
* both refuse: minitx's error names the op (never NumPy's bare message);
* minitx refuses and PyTorch computes: only where REFUSED says why; IN_FLOAT32 and NOT_COMPARED
  name the rest, each with its reason.
"""
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitx
from minitx.autograd.tensor import Tensor
from test_torch_op_parity import CASES, torch  # noqa: E402  (the same ops, inputs and arguments)

DTYPES = ["int64", "int32", "uint8", "bool"]
#: (op, dtype) minitx refuses where PyTorch computes, and why
REFUSED = {
    ("masked_fill", "int64"): "a fill value the integer tensor cannot hold (-inf, 1e9 into uint8): PyTorch casts it",
    ("masked_fill", "int32"): "the same",
    ("masked_fill", "uint8"): "the same",
    ("pad", "int64"): "a pad value the integer tensor cannot hold (-1.5): PyTorch truncates it to -1",
    ("pad", "int32"): "the same",
    ("pad", "uint8"): "the same",
    ("pow", "int64"): "integers to negative integer powers (both refuse: PyTorch only for the scalar power)",
    ("pow", "int32"): "the same",
    ("masked_fill", "bool"): "a fill value other than 0 or 1 into a boolean tensor: PyTorch makes it True",
    ("pad", "bool"): "the same",
    ("index_add", "bool"): "an alpha other than 0 or 1 for a boolean tensor: PyTorch makes it True",
}
#: ops whose PyTorch reference is not PyTorch's own behaviour on integers
NOT_COMPARED = {
    "pow_scalar": "its reference adds 0.0 first (PyTorch's gradient at -0.0), which makes integers float",
}
#: (op, dtype) where both compute and minitx answers otherwise on purpose (docs/ops.md), and why: its dtype is checked
DEPARTS = {
    ("trapezoid_x", "uint8"): "x's differences as numbers, 0 - 1 = -1, where PyTorch's wrap in uint8 (255)",
    ("cumulative_trapezoid", "uint8"): "the same",
}
#: ops that compute integers in float32 where PyTorch's reference composition keeps them
IN_FLOAT32 = {
    "bias_act": "the fused bias + activation + dropout op (minitx's own) is for float training: relu of integers is "
                "float32 there, int64 in the composition the reference uses",
}
OWN_MESSAGE = re.compile(r"^[\w .~()/'-]+: ")  # "pad: value ..." names the op; NumPy's messages do not


def _as_integers(x, dtype):
    a = np.nan_to_num(x.numpy(), nan=0.0, posinf=3.0, neginf=-3.0).round()
    if dtype == "bool":
        return minitx.tensor(a > 0)
    return minitx.tensor((np.abs(a) if dtype == "uint8" else a).astype(dtype))


def _run(fn):
    try:
        return fn(), None
    except Exception as error:  # noqa: BLE001 (what each library raises is the point)
        return None, error


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(set(CASES) - set(NOT_COMPARED)))
@settings(max_examples=min(settings.default.max_examples, 10), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_op_on_integers_as_pytorch(name, dtype, data):
    case = CASES[name]
    inputs, kwargs, _ = case.draw(data)
    inputs = [_as_integers(x, dtype) if isinstance(x, Tensor) and x.dtype.kind == "f" else x for x in inputs]
    reference = case.torch if callable(case.torch) else None
    torch_kwargs = case.torch_kwargs(kwargs) if case.torch_kwargs else kwargs
    ours, our_error = _run(lambda: case.op(*inputs, **kwargs))
    theirs, their_error = _run(lambda: reference(*(torch.from_numpy(np.array(x.numpy())) if isinstance(x, Tensor)
                                                     else x for x in inputs), **torch_kwargs))
    if our_error is not None:
        assert OWN_MESSAGE.match(str(our_error)), f"{name}: a bare error, not naming the op: {our_error!r}"
        assert their_error is not None or (name, dtype) in REFUSED, \
            f"{name} on {dtype}: minitx refuses ({our_error}), PyTorch computes {theirs.dtype}"
        return
    if their_error is not None:  # minitx computes what PyTorch refuses: integers as real numbers, or logic
        allowed = {np.dtype(np.float32)} | ({np.dtype(np.bool_)} if dtype == "bool" else set())
        assert ours.dtype in allowed, f"{name} on {dtype}: {ours.dtype} where PyTorch refuses ({their_error})"
        return
    if (name, dtype) in DEPARTS:
        assert ours.dtype == np.float32, f"{name} on {dtype}: {ours.dtype}"
        return
    if name in IN_FLOAT32:
        assert ours.dtype == np.float32, f"{name} on {dtype}: {ours.dtype}"
        if dtype == "bool":
            return  # booleans are the numbers 0 and 1 there: True + True is 2 (PyTorch's bool + bool is True)
    several = isinstance(ours, tuple)  # (tensor_split's pieces: each compared)
    assert several == isinstance(theirs, tuple) and (not several or len(ours) == len(theirs)), name
    for mine, other in zip(*((ours, theirs) if several else ((ours,), (theirs,)))):
        if name not in IN_FLOAT32:
            assert str(other.dtype) == f"torch.{mine.dtype}", f"{name} on {dtype}: {mine.dtype}, PyTorch {other.dtype}"
        np.testing.assert_allclose(mine.numpy().astype(np.float64), other.numpy().astype(np.float64), rtol=1e-5,
                                   atol=1e-6, equal_nan=True, err_msg=f"{name} on {dtype}")


def _on(device, value):
    return value.to(device) if isinstance(value, Tensor) else value


@pytest.mark.gpu
@pytest.mark.gpu_ops
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=min(settings.default.max_examples, 5), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_op_on_integers_on_the_gpu_as_on_the_cpu(name, dtype, data):
    """The same integer inputs on CuPy: the op refuses there as here (the same error type), or
    gives the same dtype and values on the GPU (CuPy's integer arithmetic is not NumPy's code)."""
    case = CASES[name]
    inputs, kwargs, _ = case.draw(data)
    inputs = [_as_integers(x, dtype) if isinstance(x, Tensor) and x.dtype.kind == "f" else x for x in inputs]
    ours, our_error = _run(lambda: case.op(*inputs, **kwargs))
    there, error_there = _run(lambda: case.op(*(_on("cuda", x) for x in inputs),
                                              **{k: _on("cuda", v) for k, v in kwargs.items()}))
    if our_error is not None or error_there is not None:
        assert type(our_error) is type(error_there), f"{name} on {dtype}: {our_error!r} here, {error_there!r} there"
        return
    several = isinstance(ours, tuple)
    for mine, other in zip(*((ours, there) if several else ((ours,), (there,)))):
        assert (other.dtype, other.device) == (mine.dtype, "cuda"), f"{name} on {dtype}: {other.dtype} on {other.device}"
        np.testing.assert_allclose(other.numpy().astype(np.float64), mine.numpy().astype(np.float64), rtol=1e-6,
                                   atol=1e-6, equal_nan=True, err_msg=f"{name} on {dtype}")
