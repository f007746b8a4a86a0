"""PyTorch parity for the op tests: the same float64 inputs through a minitx function and its
PyTorch counterpart, then the outputs and every input's gradient compared.

PyTorch is a test-only extra (installed here as torch 2.13.0 CPU): ``parity`` skips the test
when it is missing, and fails it in CI (tests/torch_reference.py). Inside a hypothesis example it
does not skip: a skip there would stop hypothesis after its first, smallest example and report the
whole test as skipped, so the NumPy, finite-difference and hygiene checks beside the comparison
would run once. There the comparison is left out, counted in ``MISSED``, and the summary line
says how many were (tests/conftest.py).
"""
import os
import sys
from pathlib import Path

import hypothesis
import numpy as np

import minitx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from torch_reference import import_torch  # noqa: E402

MISSED = [0]  # comparisons left out inside hypothesis examples, PyTorch missing


def _as_torch(torch, value):
    """minitx tensors become torch tensors with the same values (and requires_grad); others pass."""
    if not isinstance(value, minitx.Tensor):
        return value
    array = np.array(value.numpy(), order="C")  # ascontiguousarray would make a 0-d array 1-d
    return torch.tensor(array, requires_grad=value.requires_grad)


def torch_in_example():
    """PyTorch for a comparison inside a test: the module; where it is missing, None inside a
    hypothesis example (the comparison is left out and counted, the example's other checks go on),
    a skip outside one (and an error in CI, tests/torch_reference.py)."""
    if not os.environ.get("CI") and hypothesis.currently_in_test_context():
        try:
            import torch
        except ImportError:
            MISSED[0] += 1
            return None
        return torch
    return import_torch()


def parity(fn, torch_fn, *inputs, seed=0, rtol=1e-10, atol=1e-12):
    """Check fn(*inputs) == torch_fn(*torch inputs) and, when the output needs a gradient, that
    backward of both with the same random dy gives every input the same gradient. NaN must
    match NaN and inf must match inf. Returns minitx's output."""
    torch = torch_in_example()
    if torch is None:
        return fn(*inputs)
    theirs_inputs = [_as_torch(torch, v) for v in inputs]
    ours, theirs = fn(*inputs), torch_fn(*theirs_inputs)
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True,
                               err_msg="forward differs from PyTorch")
    if not ours.requires_grad:
        return ours
    dy = np.asarray(np.random.default_rng(seed).standard_normal(ours.shape))
    ours.backward(dy.astype(ours.dtype))
    theirs.backward(torch.from_numpy(dy).to(theirs.dtype))
    for position, (mine, other) in enumerate(zip(inputs, theirs_inputs)):
        if isinstance(mine, minitx.Tensor) and mine.requires_grad:
            got = mine.grad.numpy() if mine.grad is not None else np.zeros(mine.shape)
            expected = other.grad.numpy() if other.grad is not None else np.zeros(mine.shape)
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"gradient of input {position} differs from PyTorch")
    return ours
