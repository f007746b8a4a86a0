"""Ops that make NaN or inf (log of a negative number, x / 0, sin(inf), exp past the range, NaN
cast to an integer) give it without NumPy's RuntimeWarning, forward and backward, as PyTorch and
CuPy do: the NaN or inf is the answer (detect_anomaly() names the op that made one). The caller's
NumPy error settings are theirs: minitx sets its own only around its own work."""
import math
import warnings

import numpy as np
import pytest

import minitx
import minitx.functional as F

inf, nan = np.inf, np.nan


def const(values, dtype="float64"):
    return minitx.tensor(values, dtype=dtype)


# name: (fn, inputs (each requires grad), forward, the inputs' gradients for dy = 1), values as PyTorch's
DIFFERENTIABLE = {
    "log": (F.log, [[-1.0, 0.0, 1.0]], [nan, -inf, 0.0], [[-1.0, inf, 1.0]]),
    "log1p": (F.log1p, [[-2.0, -1.0, 0.0]], [nan, -inf, 0.0], [[-1.0, inf, 1.0]]),
    "sqrt": (F.sqrt, [[-1.0, 0.0, 4.0]], [nan, 0.0, 2.0], [[nan, inf, 0.25]]),
    "rsqrt": (F.rsqrt, [[-1.0, 0.0, 4.0]], [nan, inf, 0.5], [[nan, -inf, -0.0625]]),
    "reciprocal": (F.reciprocal, [[0.0, 2.0]], [inf, 0.5], [[-inf, -0.25]]),
    "div by 0": (lambda a, b: a / b, [[1.0, -1.0, 0.0], [0.0, 0.0, 0.0]], [inf, -inf, nan],
                 [[inf, inf, inf], [-inf, inf, nan]]),
    "sin(inf)": (F.sin, [[inf, -inf, 0.0]], [nan, nan, 0.0], [[nan, nan, 1.0]]),
    "cos(inf)": (F.cos, [[inf, nan, 0.0]], [nan, nan, 1.0], [[nan, nan, 0.0]]),
    "exp overflow": (F.exp, [[1000.0, 0.0]], [inf, 1.0], [[inf, 1.0]]),
    "acos(2)": (F.acos, [[2.0, 1.0, 0.0]], [nan, 0.0, math.pi / 2], [[nan, -inf, -1.0]]),
    "atanh(1)": (F.atanh, [[1.0, 2.0, 0.0]], [inf, nan, 0.0], [[inf, -1 / 3, 1.0]]),
    "negative ** 0.5": (lambda x: x ** 0.5, [[-4.0, 4.0]], [nan, 2.0], [[nan, 0.25]]),
    "prod of inf and 0": (lambda x: F.prod(x, axis=0), [[inf, 0.0, 2.0]], nan, [[0.0, inf, nan]]),
    "silu(-inf)": (F.silu, [[-inf, 0.0]], [nan, 0.0], [[nan, 0.5]]),
    "std with inf": (F.std, [[inf, 1.0]], nan, [[nan, nan]]),
    "lgamma at its poles": (F.lgamma, [[0.0, -1.0, inf]], [inf, inf, inf], [[-inf, nan, inf]]),
    "digamma at its poles": (F.digamma, [[0.0, -1.0, -inf]], [-inf, nan, nan], [[inf, inf, nan]]),
    "erfinv at 1 and past it": (F.erfinv, [[1.0, -1.0, 2.0, 0.0]], [inf, -inf, nan, 0.0],
                                [[inf, inf, nan, math.sqrt(math.pi) / 2]]),
    "xlogy of 0 and ln 0": (F.xlogy, [[0.0, 1.0], [0.0, 0.0]], [0.0, -inf], [[0.0, -inf], [nan, inf]]),
    "logit at 0, 1 and past": (F.logit, [[0.0, 1.0, 2.0]], [-inf, inf, nan], [[inf, inf, nan]]),
    "sinc(inf)": (F.sinc, [[inf, 0.0]], [nan, 1.0], [[nan, 0.0]]),
    "logaddexp of infinities": (F.logaddexp, [[inf, -inf], [inf, -inf]], [inf, -inf], [[nan, nan], [nan, nan]]),
    # the engine's own sums: inf + -inf into one input, and over a broadcast axis (unbroadcast)
    "gradients summing to inf - inf": (lambda x: F.log(x) - F.log(x), [[0.0, 1.0]], [nan, 0.0], [[nan, 0.0]]),
    "broadcast gradient inf - inf": (lambda x: x * const([inf, -inf]), [[1.0]], [inf, -inf], [[nan]]),
    "float16 past 65504": (lambda x: x.to(dtype="float16") * 1000.0, [[100.0, 1.0]], [inf, 1000.0],
                           [[1000.0, 1000.0]]),
}


@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
def test_ops_make_nan_and_inf_forward_and_backward_without_a_numpy_warning(name):
    fn, inputs, forward, grads = DIFFERENTIABLE[name]
    xs = [minitx.tensor(values, dtype="float64", requires_grad=True) for values in inputs]
    with warnings.catch_warnings(), np.errstate(all="warn"):  # every condition NumPy can warn of, as errors
        warnings.simplefilter("error")
        y = fn(*xs)
        y.backward(np.ones(y.shape, y.dtype))
    assert not all(np.isfinite(a).all() for a in [y.numpy(), *(x.grad.numpy() for x in xs)])  # an edge indeed
    np.testing.assert_array_equal(y.numpy(), forward)
    for x, expected in zip(xs, grads):
        np.testing.assert_array_equal(x.grad.numpy(), expected)


# name: (fn, the result, or a function of NumPy giving it): no gradient
WITHOUT_GRADIENT = {
    "NaN and inf cast to int64": (lambda: const([nan, inf, 1.0]).to(dtype="int64"),
                                  lambda: np.array([nan, inf, 1.0]).astype(np.int64)),
    "int64 / 0": (lambda: const([1, 0], "int64") / 0, [inf, nan]),
    "int32 ** 0.5 of a negative": (lambda: const([-4, 4], "int32") ** 0.5, [nan, 2.0]),
    "float16 * 1e6": (lambda: const([1.0, -1.0], "float16") * 1e6, [inf, -inf]),
    "float16 == 1e6": (lambda: const([inf, 1.0], "float16") == 1e6, [True, False]),
    "tensor(1e300, float32)": (lambda: minitx.tensor([1e300, -1e300], dtype="float32"), [inf, -inf]),
}


def _add_in_place():
    x = const([1.0, 2.0], "float32")
    x += const([1e300, 1.0])  # float64 into float32: inf
    return x


WITHOUT_GRADIENT["x += y past x's dtype"] = (_add_in_place, [inf, 3.0])


def _backward_given_1e300():
    x = minitx.tensor([1.0, 2.0], dtype="float32", requires_grad=True)
    (x * 1.0).backward(grad=np.array([1e300, 1.0]))  # cast to the output's float32: inf
    return x.grad


def _load_past_float32():
    layer = minitx.nn.Linear(2, 1)
    state = {**layer.state_dict(), "bias": np.array([1e300])}
    layer.load_state_dict(state)
    return layer.bias


def _step_on_huge_gradients(optimizer):
    def step():
        p = minitx.nn.Parameter(minitx.tensor([1.0, 1.0], dtype="float32"))
        p.grad = minitx.tensor([3e38, 0.0], dtype="float32")  # finite; its square is not
        norm = minitx.optim.clip_grad_norm_([p], 1.0)  # inf, as PyTorch's
        p.grad = minitx.tensor([3e38, 0.0], dtype="float32")
        optimizer([p], lr=0.1).step()
        return minitx.tensor([float(norm), float(p.data[1])])
    return step


def _batch_norm_running_var_past_float16():
    x = const(np.full((2, 3, 8), 1000.0) + np.arange(8) * 300, "float16")  # variance 210,000
    running_mean, running_var = minitx.zeros(3, dtype="float16"), minitx.ones(3, dtype="float16")
    F.batch_norm(x, running_mean, running_var, training=True, momentum=1.0)
    return running_var


WITHOUT_GRADIENT.update({
    "batch_norm's running variance past float16": (_batch_norm_running_var_past_float16, [inf, inf, inf]),
    "isclose at float16's limits": (lambda: F.isclose(const([65504.0, 6e-8], "float16"),
                                                      const([65504.0, 0.0], "float16")), [True, False]),
    "masked_fill of 1e-42 into bfloat16": (lambda: F.masked_fill(const([1.0, 2.0], "bfloat16"),
                                                                 minitx.tensor([True, False]), 1e-42), [0.0, 2.0]),
    "backward(grad=1e300) into float32": (_backward_given_1e300, [inf, 1.0]),
    "load_state_dict of 1e300 into float32": (_load_past_float32, [inf]),
    "clip_grad_norm_ and AdamW on gradients squaring past float32": (_step_on_huge_gradients(minitx.optim.AdamW),
                                                                     [inf, np.float32(0.999)]),
})


@pytest.mark.parametrize("name", list(WITHOUT_GRADIENT))
def test_casts_and_results_without_a_gradient_make_nan_and_inf_without_a_numpy_warning(name):
    fn, expected = WITHOUT_GRADIENT[name]
    if callable(expected):
        with np.errstate(all="ignore"):
            expected = expected()
    with warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        got = fn()
    np.testing.assert_array_equal(got.numpy(), expected)


def test_the_callers_numpy_error_settings_are_left_as_they_were():
    x = minitx.tensor([0.0, -1.0], dtype="float64", requires_grad=True)
    seen = []
    with np.errstate(all="raise", under="warn"):
        settings = np.geterr()
        y = F.log(x) * 2.0
        assert np.geterr() == settings
        y.register_hook(lambda g: seen.append(np.geterr()))  # a hook is the caller's code: their settings
        y.sum().backward()
        assert np.geterr() == settings and seen == [settings]
        with pytest.raises(FloatingPointError):
            np.log(np.array(-1.0))  # the caller's own NumPy still raises
    np.testing.assert_array_equal(y.numpy(), [-inf, nan])
    np.testing.assert_array_equal(x.grad.numpy(), [inf, -2.0])


def test_minitx_own_warnings_still_come():
    """var and std with too few degrees of freedom warn by design (warnings.warn, not NumPy's)."""
    with warnings.catch_warnings(), pytest.raises(RuntimeWarning, match="no degrees of freedom"):
        warnings.simplefilter("error")
        F.var(const([1.0]), ddof=1)
