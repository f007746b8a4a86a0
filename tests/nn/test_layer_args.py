"""Layer arguments as PyTorch's: MultiHeadAttention refuses sizes no attention has (naming the
argument, not a ZeroDivisionError), and the conv layers take padding_mode, checked at
construction, their errors naming the layer."""
import sys
from pathlib import Path

import numpy as np
import pytest

import minitx
from minitx import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from torch_reference import import_torch  # noqa: E402


@pytest.mark.parametrize("args, kwargs, message", [
    ((8, 0), {}, "num_heads must be a positive int, got 0"),
    ((0, 2), {}, "d_model must be a positive int, got 0"),
    ((-8, 2), {}, "d_model must be a positive int, got -8"),
    ((8.0, 2), {}, "d_model must be a positive int, got 8.0"),
    ((8, 2), {"num_kv_heads": 0}, "num_kv_heads must be a positive int, got 0"),
    ((8, 2), {"num_kv_heads": 3}, "num_kv_heads must divide num_heads 2, got 3"),
    ((8, 3), {}, "d_model 8 is not divisible by num_heads 3"),
])
def test_multi_head_attention_refuses_sizes_no_attention_has(args, kwargs, message):
    with pytest.raises(ValueError, match=f"MultiHeadAttention: {message}"):
        nn.MultiHeadAttention(*args, **kwargs)


@pytest.mark.parametrize("layer", ["Conv1d", "Conv2d", "Conv3d"])
@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding, stride, dilation", [(1, 1, 1), (2, 2, 1), ("same", 1, 2), ("valid", 1, 1)])
def test_conv_padding_modes_match_pytorch(layer, padding_mode, padding, stride, dilation):
    torch = import_torch()
    dims = int(layer[-2])
    options = dict(stride=stride, padding=padding, dilation=dilation, padding_mode=padding_mode)
    theirs = getattr(torch.nn, layer)(2, 3, 3, **options).double()
    ours = getattr(nn, layer)(2, 3, 3, **options, dtype="float64")
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 2) + (5, 4, 6)[:dims])
    x_ours, x_theirs = minitx.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, y_t = ours(x_ours), theirs(x_theirs)
    dy = np.random.default_rng(1).standard_normal(y.shape)
    y.backward(dy)
    y_t.backward(torch.tensor(dy))
    np.testing.assert_allclose(y.numpy(), y_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(x_ours.grad.numpy(), x_theirs.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_conv_arguments_are_checked_at_construction_naming_the_layer():
    with pytest.raises(ValueError, match="Conv2d: padding_mode must be one of 'zeros', 'reflect', 'replicate', "
                                         "'circular', got 'bad'"):
        nn.Conv2d(2, 3, 3, padding_mode="bad")
    with pytest.raises(ValueError, match="Conv1d: padding must be 'valid', 'same' or ints, got 'bad'"):
        nn.Conv1d(2, 3, 3, padding="bad")
    with pytest.raises(ValueError, match="Conv2d: padding='same' needs stride 1"):
        nn.Conv2d(2, 3, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="ConvTranspose2d: padding_mode must be 'zeros' .*got 'reflect'"):
        nn.ConvTranspose2d(2, 3, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match=r"pad: circular padding \(4, 4\) of axis 2 can wrap around once at most: "
                                         r"each side must not exceed its size 3"):
        nn.Conv1d(2, 3, 3, padding=4, padding_mode="circular")(minitx.zeros(1, 2, 3))
    # Python's own argument errors name the layer, not the base class they share
    with pytest.raises(TypeError, match=r"^Conv2d.__init__\(\) got an unexpected keyword argument 'foo'"):
        nn.Conv2d(2, 3, 3, foo=1)
    with pytest.raises(TypeError, match=r"^Conv3d.__init__\(\) missing 2 required positional arguments"):
        nn.Conv3d(2)
    with pytest.raises(TypeError, match=r"^ConvTranspose1d.__init__\(\) got an unexpected keyword argument 'foo'"):
        nn.ConvTranspose1d(2, 3, 3, foo=1)


def test_padding_mode_is_pytorchs_ninth_argument_and_shows_in_the_repr():
    layer = nn.Conv2d(2, 3, 3, 1, 1, 1, 1, True, "reflect")
    assert layer.padding_mode == "reflect" and "padding_mode='reflect'" in repr(layer)
    assert "padding_mode" not in repr(nn.Conv2d(2, 3, 3))
    assert nn.ConvTranspose2d(2, 3, 3, 1, 0, 0, 1, True, 1, "zeros").padding_mode == "zeros"


@pytest.mark.parametrize("layer", ["Conv1d", "Conv2d", "ConvTranspose3d"])
def test_conv_sizes_may_be_numpy_integers_as_linears(layer):
    """(Refused before as 'in_channels must be a positive int, got np.int64(3)'; PyTorch takes them.)"""
    dims = int(layer[-2])
    conv = getattr(nn, layer)(np.int64(3), np.int32(4), np.int64(2), groups=np.int64(1))
    assert (conv.in_channels, conv.out_channels, conv.groups) == (3, 4, 1) and type(conv.in_channels) is int
    assert conv(minitx.zeros(1, 3, *(3,) * dims)).shape[:2] == (1, 4)
    getattr(import_torch().nn, layer)(np.int64(3), np.int32(4), np.int64(2), groups=np.int64(1))
