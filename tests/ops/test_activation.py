"""Activations (minitx/ops/activation.py): Silu, LeakyRelu, Elu, Softplus, LogSigmoid, Hardtanh,
Hardsigmoid, Hardswish, Hardshrink, Softshrink, Tanhshrink, and those composed of them (relu6, selu,
celu, softsign, mish, threshold, glu, prelu, softmin); the random ones, Rrelu and gumbel_softmax, at
a seed and by their statistics beside PyTorch's.

Forward against independent NumPy formulas, float64 gradients (check_gradients) on
hypothesis-drawn shapes, PyTorch parity (values and gradients) on drawn inputs and on edge
values (0, the kinks, ±inf, NaN, huge |x| where a naive formula overflows).
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity

SHAPES = mst.shapes(max_dims=3, max_side=4)


def _tf(name, **kwargs):
    """torch.nn.functional.<name>(t, **kwargs), looked up when called (torch is optional)."""
    def call(t):
        import torch.nn.functional as TF

        return getattr(TF, name)(t, **kwargs)
    return call


# op class -> (minitx function, independent NumPy reference, value options, PyTorch function)
ACTIVATIONS = {
    "Silu": (F.silu, lambda a: a / (1 + np.exp(-a)), {"min_value": -30.0, "max_value": 30.0}, _tf("silu")),
    "LeakyRelu": (F.leaky_relu, lambda a: np.maximum(a, 0) + 0.01 * np.minimum(a, 0), {"away_from": (0.0,)},
                  _tf("leaky_relu")),
    "LeakyRelu-0.2": (lambda x: x.leaky_relu(0.2), lambda a: np.maximum(a, 0) + 0.2 * np.minimum(a, 0),
                      {"away_from": (0.0,)}, _tf("leaky_relu", negative_slope=0.2)),
    "Elu": (F.elu, lambda a: np.where(a > 0, a, np.exp(a) - 1), {"away_from": (0.0,)}, _tf("elu")),
    "Elu-alpha": (lambda x: x.elu(alpha=0.5), lambda a: np.where(a > 0, a, 0.5 * (np.exp(a) - 1)),
                  {"away_from": (0.0,)}, _tf("elu", alpha=0.5)),
    "Softplus": (F.softplus, lambda a: np.logaddexp(0, a), {"min_value": -30.0, "max_value": 19.0},
                 _tf("softplus")),
    "Softplus-beta": (lambda x: x.softplus(beta=2.0, threshold=5.0),
                      lambda a: np.where(2 * a > 5, a, np.logaddexp(0, 2 * a) / 2), {"away_from": (2.5,)},
                      _tf("softplus", beta=2.0, threshold=5.0)),
    "LogSigmoid": (F.logsigmoid, lambda a: -np.logaddexp(0, -a), {"min_value": -30.0, "max_value": 30.0},
                   _tf("logsigmoid")),
    "Hardtanh": (F.hardtanh, lambda a: np.minimum(np.maximum(a, -1), 1), {"away_from": (-1.0, 1.0)},
                 _tf("hardtanh")),
    "Hardtanh-bounds": (lambda x: x.hardtanh(-0.5, 2.0), lambda a: np.minimum(np.maximum(a, -0.5), 2.0),
                        {"away_from": (-0.5, 2.0)}, _tf("hardtanh", min_val=-0.5, max_val=2.0)),
    "Hardsigmoid": (F.hardsigmoid, lambda a: np.clip(a / 6 + 0.5, 0, 1), {"min_value": -5.0, "max_value": 5.0,
                                                                           "away_from": (-3.0, 3.0)},
                    _tf("hardsigmoid")),
    "Hardswish": (F.hardswish, lambda a: a * np.clip(a / 6 + 0.5, 0, 1), {"min_value": -5.0, "max_value": 5.0,
                                                                           "away_from": (-3.0, 3.0)},
                  _tf("hardswish")),
    # composed of the ops above: relu6, selu, celu, softsign, mish, threshold
    "relu6": (F.relu6, lambda a: np.clip(a, 0, 6), {"min_value": -8.0, "max_value": 8.0, "away_from": (0.0, 6.0)},
              _tf("relu6")),
    "selu": (F.selu, lambda a: 1.0507009873554805 * np.where(a > 0, a, 1.6732632423543772 * np.expm1(a)),
             {"away_from": (0.0,)}, _tf("selu")),
    "celu": (lambda x: F.celu(x, 0.5), lambda a: np.maximum(a, 0) + np.minimum(0, 0.5 * np.expm1(a / 0.5)),
             {"away_from": (0.0,)}, _tf("celu", alpha=0.5)),
    "celu-negative": (lambda x: F.celu(x, -0.5), lambda a: np.maximum(a, 0) + np.minimum(0, -0.5 * np.expm1(a / -0.5)),
                      {"away_from": (0.0,), "min_value": -2.0, "max_value": 2.0}, _tf("celu", alpha=-0.5)),
    "softsign": (F.softsign, lambda a: a / (1 + np.abs(a)), {"away_from": (0.0,)}, _tf("softsign")),
    "mish": (F.mish, lambda a: a * np.tanh(np.logaddexp(0, a)), {"min_value": -20.0, "max_value": 19.0}, _tf("mish")),
    "threshold": (lambda x: F.threshold(x, 0.5, -2.0), lambda a: np.where(a > 0.5, a, -2.0), {"away_from": (0.5,)},
                  _tf("threshold", threshold=0.5, value=-2.0)),
    "Hardshrink": (F.hardshrink, lambda a: a * (np.abs(a) > 0.5), {"away_from": (-0.5, 0.5)}, _tf("hardshrink")),
    "Hardshrink-method": (lambda x: x.hardshrink(2.0), lambda a: a * (np.abs(a) > 2.0), {"away_from": (-2.0, 2.0)},
                          _tf("hardshrink", lambd=2.0)),
    "Softshrink": (F.softshrink, lambda a: np.sign(a) * np.maximum(np.abs(a) - 0.5, 0), {"away_from": (-0.5, 0.5)},
                   _tf("softshrink")),
    "Tanhshrink": (F.tanhshrink, lambda a: a - np.tanh(a), {"min_value": -30.0, "max_value": 30.0}, _tf("tanhshrink")),
}
EDGES = np.array([0.0, -0.0, 1e-300, -1e-9, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 2.5, 3.0, -3.0, 5.0, 19.9, 20.1, 50.0,
                  -50.0, 800.0, -800.0, 1e10, -1e10, np.inf, -np.inf, np.nan])


def _input(name, data):
    return data.draw(mst.tensors(SHAPES, **ACTIVATIONS[name][2]), label="x")


@pytest.mark.parametrize("name", list(ACTIVATIONS))
@given(data=st.data())
def test_activation_forward_matches_numpy(name, data):
    fn, reference = ACTIVATIONS[name][:2]
    x = _input(name, data)
    out = check_forward(fn, reference, x, rtol=1e-12, atol=1e-14)
    assert out.dtype == np.float64 and out.shape == x.shape


@pytest.mark.parametrize("name", list(ACTIVATIONS))
@given(data=st.data())
def test_activation_gradients(name, data):
    assert check_gradients(ACTIVATIONS[name][0], _input(name, data))


# PyTorch's CPU kernels take 1/6 as a float32 constant (1.0f / 6.0f) whatever the dtype: their
# float64 gradients are off by up to 3e-8, relatively; minitx's 1/6 is float64's
_ONE_SIXTH_IN_FLOAT32 = {"Hardsigmoid": dict(rtol=1e-7), "Hardswish": dict(rtol=1e-7)}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
@given(data=st.data())
def test_activation_matches_pytorch(name, data):
    fn, _, _, torch_fn = ACTIVATIONS[name]
    parity(fn, torch_fn, _input(name, data), **_ONE_SIXTH_IN_FLOAT32.get(name, {}))


# celu with a negative alpha (PyTorch takes one) is matched away from 0 only: at 0, NaN and inf its
# gradient follows the formula's relu pieces here, PyTorch's elu kernel there
@pytest.mark.parametrize("name", [name for name in ACTIVATIONS if name != "celu-negative"])
def test_activation_edge_values_match_pytorch(name):
    """Kinks (the subgradient PyTorch takes), the softplus threshold, huge |x|, ±inf and NaN."""
    fn, _, _, torch_fn = ACTIVATIONS[name]
    parity(fn, torch_fn, leaf(EDGES), **_ONE_SIXTH_IN_FLOAT32.get(name, {}))


@pytest.mark.parametrize("fn", [F.softplus, F.logsigmoid, F.silu])
def test_large_inputs_stay_finite_and_exact_in_float32(fn):
    """The stable forms: no overflow at |x| = 1e4 in float32, where exp(x) is inf, and the tiny
    values (e^-50) keep their digits."""
    x = minitx.tensor([-1e4, -50.0, 50.0, 1e4], requires_grad=True)
    y = fn(x)
    expected = {F.softplus: [0.0, np.exp(-50.0), 50.0, 1e4], F.logsigmoid: [-1e4, -50.0, -np.exp(-50.0), 0.0],
                F.silu: [-0.0, -50 * np.exp(-50.0), 50.0, 1e4]}[fn]
    np.testing.assert_allclose(y.numpy(), np.array(expected, dtype=np.float32), rtol=1e-6)
    y.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_bad_parameters_name_the_op():
    x = minitx.tensor([1.0])
    with pytest.raises(ValueError, match="softplus: beta must be positive, got 0"):
        F.softplus(x, beta=0)
    with pytest.raises(ValueError, match="hardtanh: min_val 1.0 is greater than max_val -1.0"):
        F.hardtanh(x, 1.0, -1.0)


def test_hardtanh_passes_dy_at_nan():
    """A NaN is on neither side of a bound, so dx = dy there; 0 at and beyond the bounds (PyTorch's
    CPU kernel gives dy or 0 at a NaN, by where it lies in the array)."""
    x = leaf([np.nan, -2.0, -1.0, 0.5, 1.0, np.inf])
    F.hardtanh(x).backward(np.full(6, 3.0))
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 0.0, 3.0, 0.0, 0.0])


def test_sigmoid_keeps_the_digits_of_tiny_values():
    """The one sigmoid is the stable one: sigmoid(-50) = 1 / (1 + e^50) = 1.9287e-22 in float64
    (the tanh form (1 + tanh(x / 2)) / 2 rounds it to 0), and its gradient y (1 - y) too."""
    x = minitx.tensor([-50.0, -745.0, 0.0, 50.0], dtype="float64", requires_grad=True)
    y = F.sigmoid(x)
    expected = 1 / (1 + np.exp(np.float64(50.0)))
    assert y.data[0] == pytest.approx(expected, rel=1e-15) and expected > 1e-22
    assert y.data[1] > 0 and y.data[2] == 0.5 and y.data[3] == 1.0
    y.sum().backward()
    assert x.grad.data[0] == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("fn", [F.hardtanh, F.leaky_relu, lambda t: t.hardtanh(-2, 2), lambda t: t.leaky_relu(0.5)],
                         ids=["hardtanh", "leaky_relu", "Tensor.hardtanh", "Tensor.leaky_relu"])
def test_hardtanh_and_leaky_relu_compute_integers_in_float32(fn, dtype):
    """The rule of every op on real numbers (docs/ops.md, "More accepted"): integers and booleans
    are computed in float32, the values those of float32 inputs. PyTorch keeps int64 in hardtanh
    and refuses leaky_relu of integers; the rule wins."""
    values = np.array([-3, 0, 1, 3]) if dtype != "uint8" else np.array([0, 1, 3, 200])
    x = minitx.tensor(values.astype(dtype) if dtype != "bool" else values > 0)
    y = fn(x)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), fn(x.to(dtype="float32")).numpy())



@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=4)), data=st.data())
def test_glu_prelu_and_softmin(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    check_forward(lambda t: F.softmin(t, axis), lambda a: np.exp(-a) / np.exp(-a).sum(axis=axis, keepdims=True), x,
                  rtol=1e-12, atol=1e-14)
    assert check_gradients(lambda t: F.softmin(t, axis), x)
    parity(lambda t: F.softmin(t, axis), _tf("softmin", dim=axis), leaf(x.numpy()))
    doubled = leaf(np.concatenate([x.numpy(), -x.numpy() / 2], axis=axis))

    def np_glu(a):
        first, second = np.split(a, 2, axis=axis)
        return first / (1 + np.exp(-second))

    check_forward(lambda t: F.glu(t, axis), np_glu, doubled, rtol=1e-12, atol=1e-14)
    assert check_gradients(lambda t: F.glu(t, axis), doubled)
    parity(lambda t: F.glu(t, axis), _tf("glu", dim=axis), leaf(doubled.numpy()))
    channels = x.shape[1] if x.ndim >= 2 else 1
    weight = data.draw(mst.tensors((data.draw(st.sampled_from([1, channels]), label="weights"),)), label="weight")
    away = leaf(np.where(np.abs(x.numpy()) < 0.05, 0.5, x.numpy()))  # (the kink at 0)

    def np_prelu(a, w):
        w = w.reshape((w.size,) + (1,) * (a.ndim - 2)) if w.size > 1 else w
        return np.where(a > 0, a, w * a)

    check_forward(F.prelu, np_prelu, away, weight, rtol=1e-12, atol=1e-14)
    assert check_gradients(F.prelu, away, weight)
    parity(F.prelu, lambda a, w: __import__("torch").nn.functional.prelu(a, w), leaf(away.numpy()),
           leaf(weight.numpy()))


def test_composed_activations_refuse_what_they_cannot_take():
    with pytest.raises(ValueError, match=r"glu: the axis -1 of x \(2, 3\) must have an even length"):
        F.glu(leaf(np.ones((2, 3))))
    with pytest.raises(ValueError, match=r"prelu: weight of 2 values needs one per channel \(axis 1\) of x"):
        F.prelu(leaf(np.ones((2, 3))), leaf(np.ones(2)))
    with pytest.raises(ValueError, match="celu: alpha must not be 0"):
        F.celu(leaf(np.ones(2)), 0.0)


def test_celu_with_a_negative_alpha_has_pytorchs_slope_at_0_and_stays_finite():
    parity(lambda t: F.celu(t, -1.5), _tf("celu", alpha=-1.5), leaf(np.array([0.0, -1.0, 2.0, 800.0, -0.5])))


# ---------------------------------------------------------------- the shrinks at drawn lambdas

SHRINKS = {"hardshrink": (F.hardshrink, lambda a, lam: np.where(np.abs(a) > lam, a, 0.0)),
           "softshrink": (F.softshrink, lambda a, lam: np.sign(a) * np.maximum(np.abs(a) - lam, 0.0))}


@pytest.mark.parametrize("name", list(SHRINKS))
@given(x=mst.tensors(SHAPES, min_value=-4.0, max_value=4.0), lambd=st.floats(0.0, 3.0), data=st.data())
def test_shrinks_at_drawn_lambdas(name, x, lambd, data):
    """Hardshrink and Softshrink: the forward against NumPy, the gradient by finite differences off
    the kinks +-lambd, and PyTorch's values and gradients with entries exactly at +-lambd (0 there,
    the band's side, as PyTorch's), at 0 and +-inf (NaN: test_shrinks_pass_dy_at_nan)."""
    fn, reference = SHRINKS[name]
    check_forward(lambda t: fn(t, lambd), lambda a: reference(a, lambd), x, rtol=1e-12, atol=1e-14)
    off_kinks = leaf(np.where(np.abs(np.abs(x.numpy()) - lambd) < 0.01, lambd + 0.5, x.numpy()))
    assert check_gradients(lambda t: fn(t, lambd), off_kinks)
    ties = x.numpy().copy().reshape(-1)
    picks = data.draw(st.lists(st.sampled_from([lambd, -lambd, 0.0, np.inf, -np.inf]), min_size=ties.size,
                               max_size=ties.size), label="edges")
    keep = data.draw(st.lists(st.booleans(), min_size=ties.size, max_size=ties.size), label="kept")
    ties = np.where(keep, ties, picks).reshape(x.shape)
    parity(lambda t: fn(t, lambd), _tf(name, lambd=lambd), leaf(ties))


@pytest.mark.parametrize("name", list(SHRINKS))
def test_shrinks_pass_dy_at_nan(name):
    """A NaN is inside no band: it stays NaN and passes dy, as hardtanh's (PyTorch's CPU kernels give
    dy or 0 there, by the NaN's position: 0 in their vectorized blocks of 8, dy in the tail)."""
    x = leaf([np.nan, -2.0, -0.5, 0.2, 0.5, np.inf])
    y = SHRINKS[name][0](x)
    y.backward(np.full(6, 3.0))
    assert np.isnan(y.numpy()[0])
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 0.0, 0.0, 0.0, 3.0])


def test_the_shrinks_refuse_a_negative_lambda_by_name():
    """PyTorch's softshrink refuses lambd < 0 too; its hardshrink takes one (and then passes every
    x, the band being empty): refused here, as a band of negative width means nothing."""
    x = leaf([1.0])
    for fn, name in ((F.hardshrink, "hardshrink"), (F.softshrink, "softshrink"), (minitx.nn.Hardshrink(-1.0), "hardshrink")):
        with pytest.raises(ValueError, match=f"{name}: lambd must be >= 0, got -1"):
            fn(x, -1.0) if not isinstance(fn, minitx.nn.Module) else fn(x)
    with pytest.raises(ValueError, match="softshrink: lambd must be >= 0, got nan"):
        F.softshrink(x, float("nan"))


def test_tanhshrink_keeps_the_digits_of_its_gradient_near_0():
    """dx = dy * tanh(x)^2, not dy * (1 - (1 - tanh(x)^2)), which rounds to 0 for |x| < 1e-8."""
    x = leaf([1e-9, -3e-5, 0.0])
    F.tanhshrink(x).backward(np.ones(3))
    np.testing.assert_allclose(x.grad.numpy(), np.tanh(x.numpy()) ** 2, rtol=1e-15, atol=0)
    assert x.grad.numpy()[0] > 0


# ---------------------------------------------------------------- rrelu: slopes drawn while training


def np_rrelu(a, lower, upper, seed):
    """The slopes Rrelu draws at ``seed`` (minitx's generator, minitx.random.uniform), applied where a <= 0."""
    slope = lower + (upper - lower) * np.random.default_rng(seed).random(a.shape)
    return np.where(a <= 0, slope * a, a)


@given(x=mst.tensors(SHAPES, away_from=(0.0,)), bounds=st.tuples(st.floats(-0.5, 1.5), st.floats(0.0, 1.0)),
       seed=st.integers(0, 2**32 - 1))
def test_rrelu_while_training_at_a_seed(x, bounds, seed):
    """Rrelu: the forward against the slopes drawn in NumPy from the same seed, the gradient (the
    drawn slopes) by finite differences, and the same slopes at each call with the seed."""
    lower, upper = bounds[0], bounds[0] + bounds[1]
    fn = lambda t: F.rrelu(t, lower, upper, training=True, seed=seed)  # noqa: E731
    y = check_forward(fn, lambda a: np_rrelu(a, lower, upper, seed), x, rtol=1e-12, atol=1e-14)
    assert type(y._ctx).__name__ == "Rrelu"
    assert check_gradients(fn, x)


def test_rrelu_gradient_is_the_drawn_slopes_and_the_generator_repeats_from_manual_seed():
    x = leaf(np.concatenate([-np.linspace(0.1, 5, 500), [0.0, 2.0, np.nan, np.inf, -np.inf]]))
    minitx.manual_seed(3)
    y = F.rrelu(x, 0.1, 0.4, training=True)
    y.backward(np.ones(x.shape))
    slopes = y.numpy()[:500] / x.numpy()[:500]
    np.testing.assert_allclose(x.grad.numpy()[:500], slopes, rtol=1e-12)
    assert ((slopes >= 0.1) & (slopes <= 0.4)).all() and len(np.unique(slopes)) == 500
    # x = 0 draws a slope (its gradient), x > 0 and NaN pass dy, as PyTorch's
    assert 0.1 <= x.grad.numpy()[500] <= 0.4 and list(x.grad.numpy()[501:503]) == [1.0, 1.0]
    assert y.numpy()[503] == np.inf and y.numpy()[504] == -np.inf and np.isnan(y.numpy()[502])
    again = F.rrelu(x, 0.1, 0.4, training=True).numpy()
    assert not np.array_equal(again[:500], y.numpy()[:500])  # the generator moved on
    minitx.manual_seed(3)
    np.testing.assert_array_equal(F.rrelu(x, 0.1, 0.4, training=True).numpy(), y.numpy())


def test_rrelu_slopes_are_uniform_as_pytorchs():
    """At fixed seeds the drawn slopes of 200 000 negative entries: within [lower, upper], their mean
    and variance those of U[lower, upper] ((l + u) / 2 and (u - l)^2 / 12), in both libraries. The
    bounds are 7 and 5 standard errors wide, and the seeds fixed: the check cannot flake."""
    torch = import_torch()
    lower, upper, n = 0.125, 1 / 3, 200_000
    minitx.manual_seed(0)
    torch.manual_seed(0)
    ours = F.rrelu(-minitx.ones(n, dtype="float64"), lower, upper, training=True).numpy() / -1
    theirs = torch.nn.functional.rrelu(-torch.ones(n, dtype=torch.float64), lower, upper, training=True).numpy() / -1
    for slopes in (ours, theirs):
        assert slopes.min() >= lower and slopes.max() <= upper
        assert abs(slopes.mean() - (lower + upper) / 2) < 0.001
        assert abs(slopes.var() / ((upper - lower) ** 2 / 12) - 1) < 0.01


def test_rrelu_outside_training_is_pytorchs_exactly():
    """Eval mode (the default, as PyTorch's) is leaky_relu with the mean slope: values and gradients
    as PyTorch's, at 0, NaN and infinities too; nn.RReLU in eval mode the same."""
    parity(lambda t: F.rrelu(t, 0.1, 0.3), _tf("rrelu", lower=0.1, upper=0.3), leaf(EDGES))
    parity(F.rrelu, _tf("rrelu"), leaf(EDGES))
    layer = minitx.nn.RReLU(0.2, 0.5).eval()
    parity(layer, lambda t: __import__("torch").nn.RReLU(0.2, 0.5).eval()(t), leaf(EDGES))


def test_rrelu_refuses_lower_above_upper_by_name():
    for training in (True, False):
        with pytest.raises(ValueError, match="rrelu: lower must be at most upper, got lower=0.5 and upper=0.1"):
            F.rrelu(leaf([-1.0]), 0.5, 0.1, training=training)


# ---------------------------------------------------------------- gumbel_softmax


def np_gumbel_noise(shape, seed):
    """g = -log E, E = -log(1 - U) ~ Exponential(1), U drawn at ``seed`` (minitx.random.uniform)."""
    e = -np.log1p(-np.random.default_rng(seed).random(shape))
    return -np.log(np.maximum(e, np.finfo(np.float64).tiny)), e


@given(x=mst.tensors(mst.shapes(min_dims=1, max_dims=3, max_side=4)), tau=st.floats(0.1, 5.0),
       seed=st.integers(0, 2**32 - 1), data=st.data())
def test_gumbel_softmax_at_a_seed(x, tau, seed, data):
    """The soft sample against NumPy's softmax((x + g) / tau) with the same noise, and its gradient;
    hard=True: the one-hot of the soft sample's argmax forward, the soft sample's gradient backward."""
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    g, _ = np_gumbel_noise(x.shape, seed)

    def np_soft(a):
        z = (a + g) / tau
        e = np.exp(z - z.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    soft = check_forward(lambda t: F.gumbel_softmax(t, tau, axis=axis, seed=seed), np_soft, x, rtol=1e-10, atol=1e-12)
    assert check_gradients(lambda t: F.gumbel_softmax(t, tau, dim=axis, seed=seed), x)
    hard = F.gumbel_softmax(x, tau, hard=True, dim=axis, seed=seed)
    one_hot = np.moveaxis(np.eye(x.shape[axis])[soft.numpy().argmax(axis=axis)], -1, axis)
    np.testing.assert_allclose(hard.numpy(), one_hot, rtol=0, atol=1e-15)
    dy = np.random.default_rng(1).standard_normal(x.shape)
    x.grad = None
    hard.backward(dy)
    hard_grad, x.grad = x.grad.numpy(), None
    F.gumbel_softmax(x, tau, dim=axis, seed=seed).backward(dy)
    np.testing.assert_array_equal(hard_grad, x.grad.numpy())


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_is_pytorchs_given_the_same_noise(monkeypatch, hard):
    """PyTorch's own F.gumbel_softmax, its Exponential(1) draws replaced by minitx's at the same seed:
    values and gradients (the straight-through estimator y_hard - y_soft.detach() + y_soft) agree."""
    torch = import_torch()
    logits = np.random.default_rng(2).standard_normal((3, 5, 4))
    _, e = np_gumbel_noise(logits.shape, 7)
    monkeypatch.setattr(torch.Tensor, "exponential_", lambda self, *a, **k: self.copy_(torch.from_numpy(e)))
    parity(lambda t: F.gumbel_softmax(t, 0.7, hard, dim=1, seed=7),
           lambda t: torch.nn.functional.gumbel_softmax(t, 0.7, hard, dim=1), leaf(logits))


def test_gumbel_softmax_samples_the_categorical_of_softmax_as_pytorchs():
    """The Gumbel-max trick: the hard sample's class is drawn with probability softmax(logits), in
    both libraries. 200 000 rows at fixed seeds; each frequency within 0.006 (5 standard errors)."""
    torch = import_torch()
    logits = np.log(np.array([0.1, 0.2, 0.3, 0.4]))
    rows = np.broadcast_to(logits, (200_000, 4))
    minitx.manual_seed(0)
    torch.manual_seed(0)
    ours = F.gumbel_softmax(minitx.tensor(rows), tau=0.5, hard=True).numpy()
    theirs = torch.nn.functional.gumbel_softmax(torch.tensor(rows), tau=0.5, hard=True).numpy()
    for sample in (ours, theirs):
        assert set(np.unique(sample)) == {0.0, 1.0} and (sample.sum(axis=1) == 1).all()
        np.testing.assert_allclose(sample.mean(axis=0), [0.1, 0.2, 0.3, 0.4], atol=0.006)


def test_gumbel_softmax_edges_and_errors():
    assert F.gumbel_softmax(minitx.tensor(2.0), hard=True).numpy() == 1.0  # a 0-d sample: one class
    assert F.gumbel_softmax(leaf(np.ones((0, 3))), hard=True).shape == (0, 3)
    with pytest.raises(ValueError, match="gumbel_softmax: tau must be positive, got 0"):
        F.gumbel_softmax(leaf(np.ones(3)), tau=0)
    with pytest.raises(ValueError, match="softmax: .*no classes"):
        F.gumbel_softmax(leaf(np.ones((3, 0))))
