"""More elementwise math (minitx/ops/elementwise.py; erf in minitx/ops/special.py): forward against
independent NumPy/Python computations, float64 gradients (check_gradients: gradcheck + backward
hygiene) on hypothesis-drawn shapes, and PyTorch parity including the edge values 0, -0, ±inf and NaN.

The ops: Sin, Cos, Erf, Sign, Floor, Ceil, Round, Trunc, Log2, Exp2, Log1p, Expm1, Rsqrt,
Reciprocal, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Log10 (and the boolean isnan,
isinf, isfinite, which record nothing).
"""
import math

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
INTEGERS = tuple(float(k) for k in range(-4, 5))
HALVES = tuple(k + 0.5 for k in range(-4, 4))


def _elementwise(fn, otype=np.float64):
    """A per-element Python function as a NumPy reference (math.erf, round, ...)."""
    return lambda a: np.vectorize(fn, otypes=[otype])(a) if a.size else a.astype(otype)


def _finite_only(fn, outside=None):
    """fn for finite values; ±inf and NaN pass through (math.ceil(inf) raises), or become
    ``outside`` when given (tan(inf) is NaN)."""
    return lambda v: float(fn(v)) if math.isfinite(v) else (v if outside is None or math.isnan(v) else outside)


def _within(fn, low, high):
    """fn on [low, high], NaN outside it (math raises there; NumPy and PyTorch give NaN)."""
    return lambda v: fn(v) if low <= v <= high else math.nan


def _overflowing(fn):
    """fn, and ±inf where it overflows (math.sinh(710) raises OverflowError)."""
    def value(v):
        try:
            return fn(v)
        except OverflowError:
            return math.copysign(math.inf, v) if fn is math.sinh else math.inf
    return value


def _atanh(v):
    return math.atanh(v) if -1 < v < 1 else math.copysign(math.inf, v) if abs(v) == 1 else math.nan


def _log10(v):
    return math.log10(v) if v > 0 else -math.inf if v == 0 else math.nan


def _log1p(v):
    return math.log1p(v) if v > -1 else -math.inf if v == -1 else math.nan


def _expm1(v):
    return math.inf if v >= 709.0 else math.expm1(v)  # math.expm1 raises where it overflows


# op class -> (minitx function, independent reference, value options for the input, torch name)
UNARY = {
    "Sin": (F.sin, lambda a: np.exp(1j * a).imag, {}, "sin"),
    "Cos": (lambda x: x.cos(), lambda a: np.exp(1j * a).real, {}, "cos"),
    "Erf": (F.erf, _elementwise(math.erf), {}, "erf"),
    "Sign": (F.sign, lambda a: np.where(np.isnan(a), a, (a > 0).astype(float) - (a < 0)), {"away_from": (0.0,)},
             "sign"),
    "Floor": (F.floor, lambda a: np.where(np.isfinite(a), a - np.mod(a, 1.0), a), {"away_from": INTEGERS}, "floor"),
    "Ceil": (lambda x: x.ceil(), _elementwise(_finite_only(math.ceil)), {"away_from": INTEGERS}, "ceil"),
    "Round": (lambda x: F.round(x), _elementwise(_finite_only(round)), {"away_from": HALVES}, "round"),
    "Trunc": (F.trunc, _elementwise(_finite_only(math.trunc)), {"away_from": INTEGERS}, "trunc"),
    "Log2": (F.log2, lambda a: np.log(a) / np.log(2.0), {"min_value": 0.2}, "log2"),
    "Exp2": (lambda x: x.exp2(), lambda a: np.exp(a * np.log(2.0)), {}, "exp2"),
    "Log1p": (F.log1p, _elementwise(_log1p), {"min_value": -0.8}, "log1p"),
    "Expm1": (F.expm1, _elementwise(_expm1), {}, "expm1"),
    # IEEE pow(-0, -1/2) is +inf and pow(-inf, -1/2) is 0; 1/sqrt(x) gives -inf and NaN, as PyTorch
    "Rsqrt": (F.rsqrt, lambda a: np.where(a == 0, np.copysign(np.inf, a), np.where(a < 0, np.nan, a ** -0.5)),
              {"min_value": 0.2}, "rsqrt"),
    "Reciprocal": (lambda x: x.reciprocal(), lambda a: a ** -1.0, {"away_from": (0.0,), "margin": 0.3},
                   "reciprocal"),
    # the inverse and hyperbolic functions, against Python's math (each outside its domain: NaN)
    "Tan": (F.tan, _elementwise(_finite_only(math.tan, outside=math.nan)), {"min_value": -1.2, "max_value": 1.2},
            "tan"),
    "Asin": (F.asin, _elementwise(_within(math.asin, -1, 1)), {"min_value": -0.9, "max_value": 0.9}, "asin"),
    "Acos": (F.acos, _elementwise(_within(math.acos, -1, 1)), {"min_value": -0.9, "max_value": 0.9}, "acos"),
    "Atan": (F.atan, _elementwise(math.atan), {}, "atan"),
    "Sinh": (F.sinh, _elementwise(_overflowing(math.sinh)), {}, "sinh"),
    "Cosh": (F.cosh, _elementwise(_overflowing(math.cosh)), {}, "cosh"),
    "Asinh": (F.asinh, _elementwise(math.asinh), {}, "asinh"),
    "Acosh": (F.acosh, _elementwise(_within(math.acosh, 1, math.inf)), {"min_value": 1.2}, "acosh"),
    "Atanh": (F.atanh, _elementwise(_atanh), {"min_value": -0.9, "max_value": 0.9}, "atanh"),
    "Log10": (F.log10, _elementwise(_log10), {"min_value": 0.2}, "log10"),
}
EDGES = np.array([0.0, -0.0, 1e-300, -1e-8, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, -1.0, 3.7, -30.0, 710.0,
                  np.inf, -np.inf, np.nan])


def _torch_op(torch_name):
    """PyTorch's op; its sign(NaN) is 0, minitx keeps NumPy's NaN (a NaN should not vanish).
    sinh and cosh element by element: PyTorch's vectorised CPU kernel overflows from |x| = 709.8
    where the value (up to 710.47) is still a float64, as its scalar path (C's sinh) and minitx
    compute it."""
    if torch_name == "sign":
        return lambda t: t.sign().where(~t.isnan(), t.detach())
    if torch_name in ("sinh", "cosh"):
        return lambda t: _one_by_one(t, torch_name)
    return lambda t: getattr(t, torch_name)()


def _one_by_one(t, torch_name):
    """PyTorch's op applied to each element alone (its scalar path), stacked back to t's shape."""
    import torch

    if not t.numel():
        return getattr(t, torch_name)()
    return torch.stack([getattr(element, torch_name)() for element in t.reshape(-1).unbind()]).reshape(t.shape)


def _input(name, data):
    return data.draw(mst.tensors(SHAPES, **UNARY[name][2]), label="x")


@pytest.mark.parametrize("name", list(UNARY))
@given(data=st.data())
def test_unary_forward_matches_an_independent_reference(name, data):
    fn, reference = UNARY[name][:2]
    x = _input(name, data)
    out = check_forward(fn, reference, x, rtol=1e-13, atol=1e-15)
    assert out.dtype == np.float64 and out.shape == x.shape


@pytest.mark.parametrize("name", list(UNARY))
@given(data=st.data())
def test_unary_gradients(name, data):
    assert check_gradients(UNARY[name][0], _input(name, data))


@pytest.mark.parametrize("name", list(UNARY))
@given(data=st.data())
def test_unary_matches_pytorch(name, data):
    fn, _, _, torch_name = UNARY[name]
    parity(fn, _torch_op(torch_name), _input(name, data))


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_edge_values_match_the_reference_and_pytorch(name):
    """0, -0, tiny, halves (rounding ties), huge, ±inf and NaN: values and gradients as PyTorch's."""
    fn, reference, _, torch_name = UNARY[name]
    with np.errstate(all="ignore"):
        check_forward(fn, reference, leaf(EDGES), rtol=1e-13, atol=1e-300)
        parity(fn, _torch_op(torch_name), leaf(EDGES))


def test_erf_is_exact_to_rounding_across_its_two_formulas():
    """erf_values switches from its series to erfc's continued fraction at |x| = 1.5."""
    values = np.concatenate([np.linspace(-7, 7, 20001), [1.4999999999, 1.5, -1.5, 26.0, 1e-12]])
    expected = np.array([math.erf(v) for v in values])
    got = F.erf(leaf(values)).numpy()
    np.testing.assert_allclose(got, expected, rtol=4e-15, atol=1e-300)
    assert F.erf(minitx.tensor([0.5, -1.0])).dtype == np.float32


@pytest.mark.parametrize("fn", [F.sin, F.cos, F.erf, F.log2, F.exp2, F.log1p, F.expm1, F.rsqrt, F.reciprocal,
                                F.silu, F.elu, F.softplus, F.logsigmoid, F.std,
                                lambda x: F.logcumsumexp(x, 0)])
def test_math_on_integers_gives_float32_as_in_pytorch(fn):
    """The dtype rule of exp and softmax: an integer tensor is computed in the default float32."""
    x = minitx.tensor([1, 2, 3])
    out = fn(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), fn(minitx.tensor([1.0, 2.0, 3.0], dtype="float64")).numpy(), rtol=1e-6)


def test_round_halves_to_even_and_takes_decimals():
    x = leaf([0.5, 1.5, 2.5, -0.5, -2.5, 1.25, 0.125])
    np.testing.assert_array_equal(F.round(x).numpy(), [0.0, 2.0, 2.0, -0.0, -2.0, 1.0, 0.0])
    np.testing.assert_allclose(x.round(decimals=1).numpy(), [0.5, 1.5, 2.5, -0.5, -2.5, 1.2, 0.1])


@pytest.mark.parametrize("name", ["Sign", "Floor", "Ceil", "Round", "Trunc"])
def test_rounding_ops_pass_back_a_zero_gradient(name):
    x = leaf([-1.5, 0.0, 0.5, 2.0])
    UNARY[name][0](x).backward(np.ones(4))
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(4))


@pytest.mark.parametrize("fn, reference, torch_name", [(F.isnan, np.isnan, "isnan"), (F.isinf, np.isinf, "isinf"),
                                                       (F.isfinite, np.isfinite, "isfinite")])
def test_value_tests_are_boolean_and_record_nothing(fn, reference, torch_name):
    x = leaf(EDGES)
    out = getattr(x, torch_name)()
    assert out.dtype == np.bool_ and not out.requires_grad
    np.testing.assert_array_equal(fn(x).numpy(), reference(EDGES))
    torch = import_torch()
    np.testing.assert_array_equal(out.numpy(), getattr(torch, torch_name)(torch.from_numpy(EDGES)).numpy())


@given(x=mst.tensors(mst.shapes(max_dims=2), min_value=-300.0, max_value=300.0), decimals=st.integers(-2, 3))
def test_round_to_any_number_of_decimals(x, decimals):
    """round(x, decimals) is NumPy's (halves to even at that place); its gradient is 0."""
    check_forward(lambda t: F.round(t, decimals), lambda a: np.round(a, decimals), x)
    F.round(x, decimals).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 0.0)


@given(a=mst.tensors(SHAPES, away_from=(0.0,), margin=0.1), data=st.data())
def test_copysign_takes_the_sign_bit_of_a_zero_b_forward_and_backward(a, data):
    """b = -0 gives a's magnitude the minus sign and da = -dy * sign(a), b = +0 the plus sign, as
    PyTorch (a gradient through sign(b) would be 0 there)."""
    negative = data.draw(st.lists(st.booleans(), min_size=a.size, max_size=a.size), label="b is -0")
    b = leaf(np.where(np.reshape(negative, a.shape), -0.0, 0.0), requires_grad=False)
    minus = np.signbit(b.numpy())
    out = check_forward(F.copysign, lambda u, v: np.where(minus, -np.abs(u), np.abs(u)), a, b)
    dy = np.random.default_rng(0).standard_normal(a.shape)
    out.backward(dy)
    np.testing.assert_array_equal(a.grad.numpy(), np.where(minus, -dy, dy) * np.sign(a.numpy()))
    parity(F.copysign, lambda u, v: u.copysign(v), leaf(a.numpy()), b)
