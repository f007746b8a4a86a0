"""nn.CrossMapLRN2d, PyTorch's legacy local response norm: the forward against PyTorch's running-sum
loop written out in NumPy and against PyTorch's layer, float64 gradients on hypothesis-drawn shapes
and sizes, PyTorch's gradient where its backward is its forward's (the channels before its
running sum's quirk), and the errors."""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
from minitx import nn
from minitx.testing import check_forward, check_gradients
from minitx.testing import strategies as mst

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from torch_reference import import_torch  # noqa: E402

torch = import_torch()


def np_cross_map_lrn2d(x, size, alpha, beta, k):
    """PyTorch's loop: the first channel's sum of squares over channels 0 .. p - 1, then each next
    one's: the previous plus channel c + p - 1 (while there is one), minus channel c - p while c > p."""
    square, channels, p = x * x, x.shape[1], int((size - 1) / 2 + 1)
    scale = np.zeros_like(x)
    scale[:, 0] = square[:, :min(p, channels)].sum(axis=1)
    for c in range(1, channels):
        scale[:, c] = scale[:, c - 1]
        if c < channels - p + 1:
            scale[:, c] += square[:, c + p - 1]
        if c > p:
            scale[:, c] -= square[:, c - p]
    return x * (k + alpha / size * scale) ** -beta


@given(x=mst.tensors(st.tuples(st.integers(1, 2), st.integers(1, 7), st.integers(1, 3), st.integers(1, 3)),
                     min_value=-2, max_value=2), size=st.integers(1, 6), alpha=st.sampled_from([1e-4, 0.5, 2.0]),
       beta=st.sampled_from([0.75, 0.5, 1.5]), k=st.sampled_from([1, 2.0]))
def test_cross_map_lrn2d_is_pytorchs_forward_with_its_derivative(x, size, alpha, beta, k):
    layer = nn.CrossMapLRN2d(size, alpha, beta, k)
    check_forward(layer, lambda a: np_cross_map_lrn2d(a, size, alpha, beta, k), x, rtol=1e-12)
    assert check_gradients(layer, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's legacy autograd Function warns of its own form)
        theirs = torch.nn.CrossMapLRN2d(size, alpha, beta, k)(torch.tensor(x.numpy()))
    np.testing.assert_allclose(layer(x).numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("size, channels", [(4, 2), (6, 3), (2, 1), (3, 1)])
def test_gradients_match_pytorchs_where_its_backward_is_its_forwards(size, channels):
    """Where PyTorch's backward passes its gradcheck (an even size and channels below p = int((size
    - 1) / 2 + 1), whose windows do not reach the quirk; one channel), ours, the derivative of the
    forward, is the same. Elsewhere (an odd size, or more channels) PyTorch's backward is not its
    forward's derivative."""
    x = np.random.default_rng(1).standard_normal((2, channels, 3, 2))
    ours, theirs = minitx.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    dy = np.random.default_rng(2).standard_normal(x.shape)
    nn.CrossMapLRN2d(size, 0.5, 0.75, 1)(ours).backward(minitx.tensor(dy))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.nn.CrossMapLRN2d(size, 0.5, 0.75, 1)(theirs).backward(torch.tensor(dy))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10, atol=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.autograd.gradcheck(lambda t: torch.nn.CrossMapLRN2d(size, 0.5, 0.75, 1)(t),
                                        (torch.tensor(x, requires_grad=True),))
        assert not torch.autograd.gradcheck(lambda t: torch.nn.CrossMapLRN2d(size + 1, 0.5, 0.75, 1)(t),
                                            (torch.tensor(x[:, :1].repeat(5, axis=1), requires_grad=True),),
                                            raise_exception=False)  # (5 channels, size + 1: beyond)


def test_repr_and_errors_as_pytorchs():
    assert repr(nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3)) == "CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)"
    with pytest.raises(ValueError, match=r"CrossMapLRN2d: expected a 4-D input \[N, C, H, W\], got shape \(2, 3, 4\)"):
        nn.CrossMapLRN2d(3)(minitx.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="CrossMapLRN2d: size must be a whole number >= 1, got 0"):
        nn.CrossMapLRN2d(0)
