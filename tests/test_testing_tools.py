"""minitx.testing is a product feature: gradcheck must catch wrong backwards, the hygiene check
must catch backwards that touch what they should not, and the strategies must deliver what
their docstrings promise."""
import numpy as np
import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx import Function
from minitx.testing import GradcheckError, check_backward_hygiene, gradcheck
from minitx.testing import strategies as mst


class Square(Function):
    """y = x^2,  dx = 2 x dy   (``factor`` replaces the 2, to make a wrong backward)."""

    def __init__(self, factor=2.0):
        self.factor = factor

    def forward(self, x):
        self.save_for_backward(x)
        return x * x

    def backward(self, dy):
        (x,) = self.saved
        return (self.factor * x * dy,)


class ScaleDyInPlace(Function):
    """y = 2x with a backward that scribbles on dy."""

    def forward(self, x):
        return 2 * x

    def backward(self, dy):
        dy *= 2
        return (dy,)


class ReturnsSaved(Function):
    """y = 3x whose backward hands out its saved array (right only because dy is ignored)."""

    def forward(self, x):
        self.save_for_backward(np.full_like(x, 3.0))
        return 3 * x

    def backward(self, dy):
        return (self.saved[0],)


class ScalesInputInPlace(Function):
    """y = x^2 / 2 with a backward that scales its input in place."""

    def forward(self, x):
        self.save_for_backward(x)
        return x * x / 2

    def backward(self, dy):
        (x,) = self.saved
        x *= dy
        return (x.copy(),)


def first(strategy, condition=lambda value: True):
    """Some value the strategy draws that satisfies ``condition`` (no shrinking: fast)."""
    return find(strategy, condition, settings=settings(phases=[Phase.generate], database=None, max_examples=200))


class NanAboveOne(Function):
    """y = x for x <= 1 and NaN above: no derivative at 1, yet backward claims dy."""

    def forward(self, x):
        return np.where(x > 1.0, np.nan, x)

    def backward(self, dy):
        return (dy.copy(),)


def leaf(shape, seed=0, dtype=np.float64):
    return minitx.tensor(np.random.default_rng(seed).uniform(0.5, 2.0, shape).astype(dtype), requires_grad=True)


# ---------------------------------------------------------------- gradcheck


@pytest.mark.parametrize("fn", [
    lambda x: Square()(x),
    lambda x: F.tanh(x) * x,
    lambda x: F.softmax(x @ x.T).sum(),
], ids=["Square", "tanh-mul", "softmax-matmul-sum"])
@pytest.mark.parametrize("shape", [(3, 3), (40, 40)], ids=["full-jacobian", "random-directions"])
def test_gradcheck_passes_on_correct_ops(fn, shape):
    x = leaf(shape)
    x.grad = minitx.tensor(np.ones(shape))
    assert gradcheck(fn, x) is True
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(shape))  # the caller's .grad is left alone


@pytest.mark.parametrize("shape, where", [
    ((2, 3), r"element \(\d, \d\) \(output element \(\d, \d\)\)"),  # 6 x 6 Jacobian: computed in full
    ((100,), r"random direction 0 \(products with a random output cotangent\)"),  # 100 x 100 > 4096
], ids=["full-jacobian", "random-directions"])
def test_gradcheck_catches_a_wrong_backward(shape, where):
    a, b = leaf(shape, seed=1), leaf(shape, seed=2)
    with pytest.raises(GradcheckError, match=f"gradient of input 2 is wrong at {where}: analytic [-0-9.e]+, "
                                             "numeric [-0-9.e]+, difference"):
        gradcheck(lambda scale, a, b: a * scale + Square(factor=2.5)(b), 3.0, a, b)


def test_gradcheck_reports_the_numbers():
    x = minitx.tensor([1.5], dtype="float64", requires_grad=True)
    with pytest.raises(GradcheckError, match=r"input 0 is wrong at element \(0,\).*analytic 4\.5, numeric 3"):
        gradcheck(lambda x: Square(factor=3.0)(x), x)


@pytest.mark.parametrize("inputs, error, message", [
    ((leaf((2,), dtype=np.float32),), TypeError, "input 0 has dtype float32; finite differences need float64"),
    ((minitx.tensor([1.0, 2.0], dtype="float64"),), ValueError, "no input requires grad"),
    ((2.0,), ValueError, "no input requires grad"),
])
def test_gradcheck_rejects_unusable_inputs(inputs, error, message):
    with pytest.raises(error, match=message):
        gradcheck(lambda x: x * 2.0, *inputs)


@pytest.mark.parametrize("fn, error, message", [
    (lambda x: x.numpy(), TypeError, "fn must return a Tensor, got ndarray"),
    (lambda x: x.detach() * 2.0, GradcheckError, "does not depend on any input"),
])
def test_gradcheck_rejects_bad_functions(fn, error, message):
    with pytest.raises(error, match=message):
        gradcheck(fn, leaf((2,)))


@pytest.mark.parametrize("size", [1, 100], ids=["full-jacobian", "random-directions"])
def test_gradcheck_fails_on_nan_finite_differences(size):
    x = minitx.tensor(np.ones(size), requires_grad=True)
    with pytest.raises(GradcheckError, match="numeric nan"):
        gradcheck(lambda x: NanAboveOne()(x), x)


def test_gradcheck_leaves_the_input_array_as_it_was():
    array = np.random.default_rng(0).standard_normal((3, 4)).T
    x = minitx.Tensor(array).requires_grad_()
    gradcheck(lambda x: F.softmax(x) * x, x)
    assert x.data is array and not x.data.flags.c_contiguous


def test_gradcheck_checks_every_input_that_requires_grad():
    a, b = leaf((3,)), minitx.tensor([1.0, 2.0, 3.0], dtype="float64")
    assert gradcheck(lambda a, b: a * b, a, b)
    with pytest.raises(GradcheckError, match="input 1"):
        gradcheck(lambda a, b: a * 2.0 + Square(factor=1.0)(b), a, leaf((3,), seed=4))


# ---------------------------------------------------------------- check_backward_hygiene


def test_hygiene_passes_on_a_clean_op():
    assert check_backward_hygiene(lambda x: Square()(x), leaf((3, 2)))


@pytest.mark.parametrize("op, message", [
    (ScaleDyInPlace, "modified an input, a saved array or dy in place"),
    (ScalesInputInPlace, "modified an input, a saved array or dy in place"),
    (ReturnsSaved, "gradient 0 shares memory with a saved array or input"),
])
def test_hygiene_catches_misbehaving_backwards(op, message):
    with pytest.raises(GradcheckError, match=f"{op().name}.backward.*{message}"):
        check_backward_hygiene(lambda x: op()(x), leaf((4,)))


def test_hygiene_needs_a_recorded_op():
    with pytest.raises(ValueError, match="not produced by an op that records a graph"):
        check_backward_hygiene(lambda x: x.detach() * 2.0, leaf((2,)))


# ---------------------------------------------------------------- strategies


@given(data=st.data())
def test_attention_masks_allow_a_key_in_every_row(data):
    batch = data.draw(mst.shapes(max_dims=2, max_side=3))
    lq, lk = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
    mask = data.draw(mst.attention_masks(batch, lq, lk))
    assert mask.dtype == np.bool_ and mask.shape == batch + (lq, lk)
    assert mask.any(axis=-1).all()


@pytest.mark.parametrize("ignore_index", [-100, None])
@given(data=st.data())
def test_class_targets_are_classes_or_ignored(ignore_index, data):
    targets = data.draw(mst.class_targets(mst.shapes(max_dims=3), 4, ignore_index=ignore_index))
    assert targets.dtype == np.int64
    assert np.isin(targets, [0, 1, 2, 3] + ([] if ignore_index is None else [ignore_index])).all()


def test_class_targets_contain_ignore_index_sometimes_not_always():
    assert (first(mst.class_targets((8,), 3, ignore_index=-1), lambda t: (t == -1).any()) == -1).any()
    assert first(mst.class_targets((8,), 3, ignore_index=-1), lambda t: (t >= 0).all()).min() >= 0


@given(shape=mst.shapes(max_dims=3), data=st.data())
def test_float_arrays_keep_away_from_points(shape, data):
    point, margin = data.draw(st.sampled_from([0.0, 1.0, -0.5])), data.draw(st.sampled_from([0.05, 0.2]))
    array = data.draw(mst.float_arrays(shape, away_from=(point,), margin=margin))
    assert array.shape == shape and array.dtype == np.float64
    assert (np.abs(array - point) >= margin - 1e-12).all()


@given(shape=mst.shapes(max_dims=3), bounds=st.sampled_from([(-3.0, 3.0), (0.5, 1.0)]), data=st.data())
def test_float_arrays_distinct_values_are_spaced(shape, bounds, data):
    array = data.draw(mst.float_arrays(shape, min_value=bounds[0], max_value=bounds[1], distinct=True))
    values = np.sort(array.reshape(-1))
    assert values.min() >= bounds[0] and values.max() <= bounds[1]
    assert (np.diff(values) >= (bounds[1] - bounds[0]) / 2000 * (1 - 1e-9)).all()


def test_float_arrays_distinct_refuses_too_many_elements():
    with pytest.raises(ValueError, match="at most 2000 elements"):
        first(mst.float_arrays((50, 50), distinct=True))


@given(shapes=mst.broadcastable_shapes(num_shapes=3, max_dims=4))
def test_broadcastable_shapes_broadcast(shapes):
    assert len(shapes) == 3
    np.broadcast_shapes(*shapes)


@given(shape=mst.shapes(min_dims=1, max_dims=3, min_side=2, max_side=4))
def test_shapes_respect_their_bounds(shape):
    assert 1 <= len(shape) <= 3 and all(2 <= n <= 4 for n in shape)


@given(t=mst.tensors(mst.shapes(max_dims=3)))
def test_tensors_are_float64_leaves_that_require_grad(t):
    assert isinstance(t, minitx.Tensor) and t.dtype == np.float64 and t.requires_grad and t.is_leaf


def test_tensors_are_sometimes_transposed_views():
    t = first(mst.tensors((2, 3)), lambda t: not t.data.flags.c_contiguous)
    assert t.shape == (2, 3) and t.data.base is not None
    assert first(mst.tensors((2, 3), transposed=False, requires_grad=False)).data.flags.c_contiguous


@given(data=st.data(), ndim=st.integers(0, 4))
def test_axes_for_gives_valid_axes(data, ndim):
    axis = data.draw(mst.axes_for(ndim))
    np.zeros((2,) * ndim).sum(axis=axis)  # numpy accepts it
