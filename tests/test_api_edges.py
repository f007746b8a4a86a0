"""Bad arguments at the API's edges get a clear error naming the op, what it got and what it
expected (issue 25's list), and valid edge inputs work (a convolution of an empty batch)."""
import numpy as np
import pytest
from numpy.exceptions import AxisError

import minitx
import minitx.functional as F
from minitx import nn
from minitx.testing import gradcheck


@pytest.mark.parametrize("call, error, message", [
    (lambda: nn.Conv2d(3, 4, 0), ValueError, r"Conv2d: kernel_size\[0\] must be a positive int, got 0"),
    (lambda: nn.Conv2d(0, 4, 3), ValueError, "Conv2d: in_channels must be a positive int, got 0"),
    (lambda: F.einsum(5, minitx.tensor([1.0])), TypeError, "einsum: subscripts must be a string such as 'ij,jk->ik', got 5"),
    (lambda: F.stack([minitx.tensor([1.0]), minitx.tensor([2.0])], axis=3), AxisError,
     r"stack: axis 3 is out of range for stacking tensors of shape \(1,\); expected an int in \[-2, 2\)"),
    (lambda: F.one_hot(minitx.tensor([0, 1]), 2.5), TypeError,
     r"one_hot: num_classes must be an int \(or -1 to infer it\), got 2.5"),
])
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_convolution_of_an_empty_batch_is_empty_and_so_are_its_gradients():
    x = minitx.tensor(np.zeros((0, 3, 5, 5)), dtype="float64", requires_grad=True)
    w = minitx.tensor(np.ones((4, 3, 3, 3)), dtype="float64", requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    assert y.shape == (0, 4, 5, 5)
    y.sum().backward()
    assert x.grad.shape == (0, 3, 5, 5) and not w.grad.numpy().any()


@pytest.mark.parametrize("option, value, expected", [("eps", 0, "> 0"), ("eps", -1e-6, "> 0"), ("atol", -1, ">= 0"),
                                                      ("rtol", float("nan"), ">= 0")])
def test_gradcheck_refuses_options_that_would_call_a_correct_gradient_wrong(option, value, expected):
    x = minitx.tensor(np.ones(3), dtype="float64", requires_grad=True)
    with pytest.raises(ValueError, match=f"gradcheck: {option} must be a finite number {expected}"):
        gradcheck(lambda a: a * 2, x, **{option: value})
