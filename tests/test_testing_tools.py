"""minitx.testing is a product feature: gradcheck must catch wrong backwards, the hygiene check
must catch backwards that touch what they should not, check_forward must point at the worst
element, and the strategies must deliver what their docstrings promise."""
import importlib
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx import Function
import minitx.testing
from minitx.testing import (GradcheckError, arg, check_backward_hygiene, check_forward, check_gradient_subsets,
                            check_gradients, check_low_precision, gradcheck, leaf, op_case, op_test)
from minitx.testing import strategies as mst
from torch_reference import import_torch


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


def uniform_leaf(shape, seed=0, dtype=np.float64):
    return minitx.tensor(np.random.default_rng(seed).uniform(0.5, 2.0, shape).astype(dtype), requires_grad=True)


# ---------------------------------------------------------------- gradcheck


@pytest.mark.parametrize("fn", [
    lambda x: Square()(x),
    lambda x: F.tanh(x) * x,
    lambda x: F.softmax(x @ x.T).sum(),
], ids=["Square", "tanh-mul", "softmax-matmul-sum"])
@pytest.mark.parametrize("shape", [(3, 3), (40, 40)], ids=["full-jacobian", "random-directions"])
def test_gradcheck_passes_on_correct_ops(fn, shape):
    x = uniform_leaf(shape)
    x.grad = minitx.tensor(np.ones(shape))
    assert gradcheck(fn, x) is True
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(shape))  # the caller's .grad is left alone


@pytest.mark.parametrize("shape, where", [
    ((2, 3), r"element \(\d, \d\) \(output element \(\d, \d\)\)"),  # 6 x 6 Jacobian: computed in full
    ((100,), r"random direction 0 \(products with a random output cotangent\)"),  # 100 x 100 > 4096
], ids=["full-jacobian", "random-directions"])
def test_gradcheck_catches_a_wrong_backward(shape, where):
    a, b = uniform_leaf(shape, seed=1), uniform_leaf(shape, seed=2)
    with pytest.raises(GradcheckError, match=f"gradient of input 2 is wrong at {where}: analytic [-0-9.e]+, "
                                             "numeric [-0-9.e]+, difference"):
        gradcheck(lambda scale, a, b: a * scale + Square(factor=2.5)(b), 3.0, a, b)


def test_gradcheck_reports_the_numbers():
    x = minitx.tensor([1.5], dtype="float64", requires_grad=True)
    with pytest.raises(GradcheckError, match=r"input 0 is wrong at element \(0,\).*analytic 4\.5, numeric 3"):
        gradcheck(lambda x: Square(factor=3.0)(x), x)


@pytest.mark.parametrize("inputs, error, message", [
    ((uniform_leaf((2,), dtype=np.float32),), TypeError, "input 0 has dtype float32; finite differences need float64"),
    ((minitx.tensor([1.0, 2.0], dtype="float64"),), ValueError, "no input requires grad"),
    ((2.0,), ValueError, "no input requires grad"),
])
def test_gradcheck_rejects_unusable_inputs(inputs, error, message):
    with pytest.raises(error, match=message):
        gradcheck(lambda x: x * 2.0, *inputs)


@pytest.mark.parametrize("fn, error, message", [
    (lambda x: x.numpy(), TypeError, "fn must return a Tensor, got ndarray"),
    (lambda x: x.detach() * 2.0, GradcheckError, "does not depend on any input"),
    (lambda x: x.argmax(), TypeError, "^gradcheck: fn's output is int64, not a floating tensor: nothing to check$"),
])
def test_gradcheck_rejects_bad_functions(fn, error, message):
    with pytest.raises(error, match=message):
        gradcheck(fn, uniform_leaf((2,)))


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
    a, b = uniform_leaf((3,)), minitx.tensor([1.0, 2.0, 3.0], dtype="float64")
    assert gradcheck(lambda a, b: a * b, a, b)
    with pytest.raises(GradcheckError, match="input 1"):
        gradcheck(lambda a, b: a * 2.0 + Square(factor=1.0)(b), a, uniform_leaf((3,), seed=4))


class CubeZeroingItsInput(Function):
    """y = x^3 whose forward then zeroes x, and whose backward is right only at x = 0."""

    def forward(self, x):
        y = x ** 3
        x[...] = 0
        return y

    def backward(self, dy):
        return (dy * 0,)


class SinWrongTwice(Function):
    """y = sin(x), with a backward twice the true one: wrong, inside a tuple of outputs."""

    def forward(self, x):
        self.save_for_backward(x)
        return np.sin(x)

    def backward(self, dy):
        (x,) = self.saved
        return (2 * np.cos(x) * dy,)


def test_gradcheck_takes_several_outputs_as_pytorchs():
    """A tuple of outputs is checked as one (its floating outputs flattened, concatenated): right
    ones pass as in torch.autograd.gradcheck, sort's indices are left out, a wrong one is caught."""
    torch = import_torch()
    values = np.random.default_rng(0).standard_normal(5)
    for ours, theirs in ((lambda t: (t.sin(), t * 2), lambda t: (t.sin(), t * 2)),
                         (lambda t: F.sort(t), lambda t: torch.sort(t)),
                         (lambda t: [t.exp(), (t * 3).sum()], lambda t: [t.exp(), (t * 3).sum()])):
        assert gradcheck(ours, leaf(values))
        assert torch.autograd.gradcheck(theirs, (torch.tensor(values, requires_grad=True),))
    with pytest.raises(GradcheckError, match=r"gradcheck: gradient of input 0 is wrong at element \(\d,\) \(output "
                                             r"element \((5|6|7|8|9),\)\).*fn's last op: mul, sin_wrong_twice\)"):
        gradcheck(lambda t: (t * 2, SinWrongTwice()(t)), leaf(values))
    with pytest.raises(TypeError, match="none of fn's 1 outputs is a floating tensor"):
        gradcheck(lambda t: (t.argmax(),), leaf(values))
    # a nested output (an LSTM's (y, (h, c))) is refused: its tensors would go unchecked
    for check in (gradcheck, check_gradients):
        with pytest.raises(TypeError, match="gradcheck: fn's outputs must be a flat tuple of tensors; output 1 is a "
                                            "tuple"):
            check(lambda t: (t * 2, (SinWrongTwice()(t), t)), leaf(values))


def test_gradcheck_refuses_a_forward_that_writes_its_input():
    x = leaf([0.5, -1.0, 2.0])
    with pytest.raises(GradcheckError, match=r"gradcheck: fn's forward wrote into input 0 \(fn's last op: "
                                             r"cube_zeroing_its_input\): element \(0,\) was 0.5, is now 0"):
        check_gradients(lambda t: CubeZeroingItsInput()(t), x)


def test_a_buffer_an_op_updates_may_change_as_pytorchs_gradcheck_lets_it():
    """Batch norm in training updates its running statistics (inputs that require no grad): a
    correct op, which gradcheck and check_forward pass; only an input that requires grad is guarded."""
    from minitx.testing import check_forward

    rng = np.random.default_rng(0)
    x = leaf(rng.standard_normal((6, 3)))
    mean, var = minitx.tensor(np.zeros(3)), minitx.tensor(np.ones(3))

    def fn(t, m, v):
        return F.batch_norm(t, m, v, training=True)

    assert gradcheck(fn, x, mean, var)
    before = mean.numpy().copy()
    check_forward(fn, lambda a, m, v: (a - a.mean(0)) / np.sqrt(a.var(0) + 1e-5), x, mean, var)
    assert not np.array_equal(mean.numpy(), before)  # (it did update them)


class CubeWrongWhenEmpty(Function):
    """y = x^3 whose backward returns a gradient of shape (1,) for an empty x."""

    def forward(self, x):
        self.save_for_backward(x)
        return x ** 3

    def backward(self, dy):
        (x,) = self.saved
        return (np.ones((1,)),) if x.size == 0 else (3 * x * x * dy,)


class FirstRowsWrongWhenEmpty(Function):
    """y = x[:n] whose backward, for n = 0 (an empty y), gives ones instead of zeros."""

    def __init__(self, n):
        self.n = n

    def forward(self, x):
        self.shape = x.shape
        return x[:self.n].copy()

    def backward(self, dy):
        if dy.size == 0:
            return (np.ones(self.shape),)
        dx = np.zeros(self.shape)
        dx[:self.n] = dy
        return (dx,)


def test_gradcheck_runs_backward_on_empty_inputs_and_outputs():
    # torch's gradcheck runs backward on an empty input and refuses a gradient of the wrong shape
    torch = import_torch()

    class TorchWrongWhenEmpty(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x ** 3

        @staticmethod
        def backward(ctx, dy):
            return torch.ones(1, dtype=dy.dtype)

    with pytest.raises(RuntimeError, match="invalid gradient"):
        torch.autograd.gradcheck(TorchWrongWhenEmpty.apply, (torch.zeros(0, 3, dtype=torch.float64,
                                                                         requires_grad=True),))
    empty = leaf(np.zeros((0, 3)))
    assert check_gradients(lambda t: Square()(t), empty) and gradcheck(lambda t: t.sum(axis=0), empty)
    with pytest.raises(GradcheckError, match=r"gradcheck: backward failed for input 0 of shape \(0, 3\).*fn's last "
                                             r"op: cube_wrong_when_empty.*cannot be reduced"):
        gradcheck(lambda t: CubeWrongWhenEmpty()(t), empty)
    with pytest.raises(GradcheckError, match=r"input 0 is wrong at element \(0, 0\) \(the output is empty\): "
                                             "analytic 1, numeric 0"):
        gradcheck(lambda t: FirstRowsWrongWhenEmpty(0)(t), leaf(np.ones((2, 3))))
    assert gradcheck(lambda t: FirstRowsWrongWhenEmpty(1)(t), leaf(np.ones((2, 3))))


@pytest.mark.parametrize("options, message", [
    ({"directions": 0, "full_jacobian_limit": 0}, "directions must be an int >= 1, got 0"),
    ({"full_jacobian_limit": -1}, "full_jacobian_limit must be an int >= 0, got -1"),
    ({"directions": 2.0}, "directions must be an int >= 1, got 2.0"),
    ({"atol": True}, "atol must be a finite number >= 0, got True"),
])
def test_gradcheck_refuses_options_that_check_nothing(options, message):
    with pytest.raises(ValueError, match=f"gradcheck: {message}"):
        gradcheck(lambda t: Square()(t), uniform_leaf((3,)), **options)


@pytest.mark.parametrize("ulps", [-1, np.nan, True])
def test_check_low_precision_refuses_a_tolerance_below_zero(ulps):
    with pytest.raises(ValueError, match=f"check_low_precision: ulps must be a finite number >= 0, got {ulps!r}"):
        check_low_precision(F.exp, leaf(np.linspace(-3, 3, 7)), ulps=ulps)


def test_gradcheck_says_where_an_input_holds_nan_when_it_fails_and_passes_an_op_that_replaces_it():
    """x * y at a NaN y: x's gradient is NaN there, its difference too; the failure blames the
    gradient, so its message says where the NaN is. nan_to_num replaces the NaN: both sides 0."""
    x, y = leaf([1.0, 2.0]), leaf([[1.0, 2.0], [3.0, np.nan]])
    with pytest.raises(GradcheckError, match=r"input 0 is wrong .*; input 1 holds NaN at element \(1, 1\): "
                                             r"differences through it are NaN"):
        gradcheck(lambda x, y: x * y, x, y)
    assert gradcheck(lambda y: F.nan_to_num(y) * 2.0, leaf([[1.0, 2.0], [3.0, np.nan]]))


def test_gradcheck_takes_an_infinite_input_where_the_function_saturates():
    """A float attention mask's -inf, exp at -inf: f does not move there, and both sides are 0. At
    +inf exp does not saturate (its gradient there is inf: inf * 0 is NaN beside it, and the
    difference inf - inf), and the check fails at that element."""
    assert gradcheck(F.exp, leaf([0.5, -np.inf]))
    with pytest.raises(GradcheckError, match=r"input 0 is wrong at element \(1,\)"):
        gradcheck(F.exp, leaf([0.5, np.inf]))


def test_gradcheck_takes_numpy_numbers_and_keeps_numpy_quiet_on_inf(recwarn):
    assert gradcheck(lambda t: Square()(t), uniform_leaf((3,)), eps=np.float32(1e-6), atol=np.float64(1e-5))
    for size in (2, 100):  # full Jacobian and random directions
        x = leaf(np.r_[np.ones(size - 1), 800.0])  # exp overflows there: inf - inf
        with np.errstate(all="raise"), pytest.raises(GradcheckError, match="gradient of input 0 is wrong"):
            gradcheck(F.exp, x)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_gradcheck_says_a_float32_output_swamps_the_finite_differences():
    with pytest.raises(GradcheckError, match="fn's output is float32: its rounding swamps a finite difference, so "
                                             "compute it in float64"):
        gradcheck(lambda t: (t * t).float(), uniform_leaf((3,)))


def test_op_case_low_precision_returns_none_as_a_hypothesis_test_must():
    case = op_case(F.tanh, arg(), numpy=np.tanh)
    run_case(lambda data: case.low_precision(data, "bfloat16", device="cpu"), examples=3)


def test_gradcheck_failure_names_the_op_and_the_tolerances():
    with pytest.raises(GradcheckError, match=r"difference 1\.5 \(atol=1e-05, rtol=0\.0001; fn's last op: square\)"):
        gradcheck(lambda x: Square(factor=3.0)(x), leaf([1.5]))


# ---------------------------------------------------------------- check_backward_hygiene


def test_hygiene_passes_on_a_clean_op():
    assert check_backward_hygiene(lambda x: Square()(x), uniform_leaf((3, 2)))


@pytest.mark.parametrize("op, message", [
    (ScaleDyInPlace, "modified an input, a saved array or dy in place"),
    (ScalesInputInPlace, "modified an input, a saved array or dy in place"),
    (ReturnsSaved, "gradient 0 shares memory with a saved array or input"),
])
def test_hygiene_catches_misbehaving_backwards(op, message):
    with pytest.raises(GradcheckError, match=f"{op().name}.backward.*{message}"):
        check_backward_hygiene(lambda x: op()(x), uniform_leaf((4,)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_hygiene_passes_nan_in_every_float_dtype(dtype):
    # NaN != NaN: bfloat16 (NumPy kind 'V', not 'f') once looked written in place
    x = minitx.tensor(np.array([1.0, np.nan, 2.0]), dtype=dtype, requires_grad=True)
    assert check_backward_hygiene(F.exp, x)


def test_hygiene_names_the_array_that_changed():
    with pytest.raises(GradcheckError, match=r"scale_dy_in_place.backward modified .* in place: dy changed at \(0,\)"):
        check_backward_hygiene(lambda x: ScaleDyInPlace()(x), uniform_leaf((4,)))


class Identity(Function):
    """y = x whose backward hands dy on: right, unless it also declares ``fresh_gradients``."""

    def forward(self, x):
        return x.copy()

    def backward(self, dy):
        return (dy,)


class FreshIdentity(Identity):
    fresh_gradients = True  # a false promise: dy is not a new array


class FreshTwins(Function):
    """y = a + b that declares fresh_gradients and hands both inputs one array."""

    fresh_gradients = True

    def forward(self, a, b):
        return a + b

    def backward(self, dy):
        g = dy.copy()
        return g, g


def test_hygiene_holds_fresh_gradients_to_their_promise():
    x, c = uniform_leaf((2,)), uniform_leaf((2,), seed=1)
    assert check_backward_hygiene(lambda t: Identity()(t), x)  # passing dy on is fine without the promise
    # with the promise, the engine adds x's second gradient into dy in place, and c's gradient is that dy
    with pytest.raises(GradcheckError, match="fresh_identity.backward: gradient 0 shares memory with dy, but "
                                             "fresh_identity declares fresh_gradients"):
        check_gradients(lambda t: FreshIdentity()(t), x)
    with pytest.raises(GradcheckError, match="fresh_twins.backward: gradient 1 shares memory with gradient 0"):
        check_backward_hygiene(lambda a, b: FreshTwins()(a, b), x, c)


def test_hygiene_needs_a_recorded_op():
    with pytest.raises(ValueError, match="not produced by an op that records a graph"):
        check_backward_hygiene(lambda x: x.detach() * 2.0, uniform_leaf((2,)))


# ---------------------------------------------------------------- check_gradients, check_forward, leaf


def test_check_gradients_passes_a_correct_op():
    assert check_gradients(lambda x: Square()(x), uniform_leaf((2, 3)), seed=3) is True


@pytest.mark.parametrize("op, message", [
    (lambda: Square(factor=2.5), "gradient of input 0 is wrong"),  # gradcheck's part
    (ScaleDyInPlace, "modified an input, a saved array or dy in place"),  # right numbers, bad hygiene
])
def test_check_gradients_runs_both_checks(op, message):
    x = uniform_leaf((3,))
    if op is ScaleDyInPlace:
        assert gradcheck(lambda x: op()(x), x)  # only the hygiene check can catch this one
    with pytest.raises(GradcheckError, match=message):
        check_gradients(lambda x: op()(x), x)


class ExpWritesSaved(Function):
    """y = e^x whose backward multiplies its saved output by dy in place (the graph holds it read-only)."""

    def forward(self, x):
        y = np.exp(x)
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved
        y *= dy
        return (y,)


def test_a_backward_writing_what_the_graph_holds_is_named_by_the_engine_and_the_checks():
    """NumPy's "output array is read-only" names no op: the engine names it, and check_gradients raises
    its GradcheckError, from hygiene where the op is fn's last, from the engine's words where it is not."""
    x = uniform_leaf((2,))
    with pytest.raises(ValueError, match=r"^exp_writes_saved\.backward wrote into an array the graph holds "
                                         r"read-only .* \(y \*= dy\); NumPy said: output array is read-only$"):
        ExpWritesSaved()(x).sum().backward()
    with pytest.raises(GradcheckError, match=r"^exp_writes_saved\.backward modified an input, a saved array or dy "
                                             r"in place \(output array is read-only\)"):
        check_gradients(lambda t: ExpWritesSaved()(t), x)
    with pytest.raises(GradcheckError, match=r"^check_gradients: exp_writes_saved\.backward wrote into an array"):
        check_gradients(lambda t: ExpWritesSaved()(t) * 2, x)


@pytest.mark.parametrize("second", [ScaleDyInPlace, lambda: MulSkippingWrongly("tie")],
                         ids=["bad-hygiene", "skips-a-needed-gradient"])
def test_check_gradients_takes_several_outputs_and_checks_each(second):
    """fn returning a tuple: the sorted values with their int64 indices pass; a second output
    made by a misbehaving op is caught by the hygiene check or the subsets', as it would be alone."""
    a, b = uniform_leaf((2, 3), seed=1), uniform_leaf((2, 3), seed=2)
    assert check_gradients(lambda a: minitx.sort(a, axis=1), a)
    assert check_gradients(lambda a, b: (a * b, (a - b).exp(), minitx.argmax(a, axis=0)), a, b)
    bad = (lambda a, b: (a * b, ScaleDyInPlace()(b))) if second is ScaleDyInPlace else \
        (lambda a, b: (Square()(a), second()(a, b)))
    assert gradcheck(bad, a, b)  # the right numbers
    with pytest.raises(GradcheckError, match="modified an input, a saved array or dy in place"
                       if second is ScaleDyInPlace else r"with only input\(s\) \[0\] requiring grad, input 0's gradient "
                                                        "differs"):
        check_gradients(bad, a, b)


class MulSkippingWrongly(Function):
    """y = a * b whose backward asks needs_input_grad about the wrong input (``swap``), or
    computes da only when b needs a gradient (``tie``): right whenever both need one."""

    def __init__(self, mistake):
        self.mistake = mistake

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, dy):
        a, b = self.saved
        need_a, need_b = self.needs_input_grad
        if self.mistake == "swap":
            need_a, need_b = need_b, need_a
        elif self.mistake == "tie":
            need_a = need_b
        return (dy * b if need_a else None), (dy * a if need_b else None)


@pytest.mark.parametrize("mistake, message", [
    ("swap", r"with only input\(s\) \[0\] requiring grad, input 0 received no gradient"),
    ("tie", r"with only input\(s\) \[0\] requiring grad, input 0 received no gradient"),
])
def test_check_gradients_tries_subsets_of_the_inputs(mistake, message):
    a, b = uniform_leaf((2, 3), seed=1), uniform_leaf((3,), seed=2)
    assert gradcheck(lambda a, b: MulSkippingWrongly(mistake)(a, b), a, b)  # all inputs need grad: fine
    with pytest.raises(GradcheckError, match=message):
        check_gradients(lambda a, b: MulSkippingWrongly(mistake)(a, b), a, b)
    assert a.requires_grad and b.requires_grad and a.grad is None and b.grad is None  # left as they were


def test_check_gradient_subsets_passes_correct_ops_and_catches_a_leaking_or_wrong_gradient():
    a, b, c = (uniform_leaf((2, 2), seed=k) for k in range(3))
    assert check_gradient_subsets(lambda a, b, c: F.layer_norm(a, b[0], c[1]) * a, a, b, c)
    assert check_gradient_subsets(lambda a, b: a.detach() * b, a, b)  # no gradient for a, ever

    def drifts(a, b):  # a different result once fewer inputs need grad
        return a * b * (1.0 if a.requires_grad and b.requires_grad else 1.5)

    with pytest.raises(GradcheckError, match=r"input 0's gradient differs from the one with all inputs requiring "
                                             r"grad at \(\d, \d\)"):
        check_gradient_subsets(drifts, a, b)


def test_check_gradient_subsets_counts_a_tensor_passed_twice_once():
    x = uniform_leaf((2, 3))
    assert torch_gradcheck_passes(lambda torch: torch.mul, x, x)
    assert check_gradients(F.mul, x, x)  # x requires grad at both positions, or at neither
    y = uniform_leaf((3,), seed=1)
    assert check_gradient_subsets(lambda a, b, c: a * b + c, x, y, x)
    with pytest.raises(GradcheckError, match=r"with only input\(s\) \[0, 2\] requiring grad, input 0"):
        check_gradient_subsets(lambda a, b, c: MulSkippingWrongly("swap")(a, b) + c, x, y, x)


def torch_gradcheck_passes(make, *inputs):
    """torch.autograd.gradcheck of make(torch) on torch copies of ``inputs`` (one copy per tensor)."""
    torch = import_torch()
    copies = {}
    theirs = [copies.setdefault(id(t), torch.tensor(t.numpy(), requires_grad=t.requires_grad)) for t in inputs]
    return torch.autograd.gradcheck(make(torch), tuple(theirs))


class Doubled(Function):
    """y = 2x, as a recorded op, so that the input below is not a leaf."""

    def forward(self, x):
        return 2 * x

    def backward(self, dy):
        return (2 * dy,)


def test_gradient_checks_fill_no_grad_of_tensors_that_are_not_inputs():
    # PyTorch's gradcheck takes autograd.grad with respect to the inputs: a captured weight's .grad stays None
    torch = import_torch()
    weight = torch.tensor(np.ones((2, 3)), requires_grad=True)
    torch.autograd.gradcheck(lambda z: z @ weight.T, (torch.ones(4, 3, dtype=torch.float64, requires_grad=True),))
    assert weight.grad is None
    lin = minitx.nn.Linear(3, 2)
    for p in lin.parameters():
        p.data = p.data.astype(np.float64)
    z = uniform_leaf((4, 3))
    z.grad = minitx.tensor(np.ones((4, 3)))
    assert check_gradients(lambda t: lin(t), z)
    assert lin.weight.grad is None and lin.bias.grad is None
    np.testing.assert_array_equal(z.grad.numpy(), np.ones((4, 3)))  # the input's own .grad is left alone too
    a, b = uniform_leaf((2,)), uniform_leaf((2,), seed=1)
    assert check_gradient_subsets(lambda a, b, w: a * b + w, a, b, lin.bias[:2])
    assert lin.bias.grad is None


def test_gradcheck_takes_an_input_that_is_not_a_leaf():
    x = uniform_leaf((3,))
    assert torch_gradcheck_passes(lambda torch: lambda t: torch.exp(2 * t), x)  # torch's gradcheck on exp(2 x)
    y = Doubled()(x)
    assert gradcheck(F.exp, y) and check_gradients(F.exp, y)
    assert x.grad is None and y.grad_fn is not None  # nothing written into x, y still in its graph
    with pytest.raises(GradcheckError, match="gradient of input 0 is wrong"):
        gradcheck(lambda t: Square(factor=3.0)(t), y)


def test_leaf_is_a_float64_copy_that_requires_grad():
    array = np.arange(3, dtype=np.int64)
    t = leaf(array)
    assert t.dtype == np.float64 and t.requires_grad and t.is_leaf and t.tolist() == [0.0, 1.0, 2.0]
    array[0] = 7
    assert t.tolist()[0] == 0.0
    assert not leaf([[1.5]], requires_grad=False).requires_grad


def test_check_forward_returns_the_output_and_passes_other_inputs_as_they_are():
    x = leaf([1.0, -2.0, np.nan])
    y = check_forward(lambda t, k: t * k, lambda a, k: a * k, x, 3.0)
    assert isinstance(y, minitx.Tensor) and y.shape == (3,)  # NaN matches NaN


def test_check_forward_names_the_worst_element():
    x = leaf(np.zeros((2, 3)))
    off = np.zeros((2, 3))
    off[0, 1], off[1, 2] = 1e-6, 0.5
    with pytest.raises(AssertionError, match=r"differs from the reference at 2 of 6 elements \(rtol=1e-07, "
                                             r"atol=1e-08\); worst at \(1, 2\): got 0, expected 0\.5, difference 0\.5"):
        check_forward(lambda t: t * 1.0, lambda a: a + off, x, atol=1e-8)
    with pytest.raises(AssertionError, match=r"worst at \(0,\): got nan, expected 1"):
        check_forward(lambda t: t * np.nan, lambda a: a, leaf([1.0, 2.0]), rtol=1e-3)


def test_check_forward_checks_shapes_and_tuples():
    x = leaf(np.ones((2, 2)))
    with pytest.raises(AssertionError, match=r"the output has shape \(2, 2\), the reference \(4,\)"):
        check_forward(lambda t: t * 2.0, lambda a: (a * 2).reshape(-1), x)
    pair = check_forward(lambda t: (t * 2.0, t.sum()), lambda a: (a * 2, a.sum()), x)
    assert len(pair) == 2
    with pytest.raises(AssertionError, match=r"output 1 differs .* got 4, expected 5"):
        check_forward(lambda t: (t * 2.0, t.sum()), lambda a: (a * 2, a.sum() + 1), x)
    with pytest.raises(AssertionError, match="fn returned 2 outputs, the reference 1"):
        check_forward(lambda t: (t, t), lambda a: (a,), x)


def test_check_forward_gives_the_reference_copies():
    x = leaf([1.0, 2.0])

    def scribbling_reference(a):
        a += 1  # must not reach the tensor
        return a - 1

    check_forward(lambda t: t * 1.0, scribbling_reference, x)
    assert x.tolist() == [1.0, 2.0]


class DoubleInPlace(Function):
    """Meant to be y = x, but its forward doubles x in place first."""

    def forward(self, x):
        x *= 2
        return x.copy()

    def backward(self, dy):
        return (dy.copy(),)


def test_check_forward_refuses_a_forward_that_writes_its_input():
    x = leaf([1.0, 2.0, 3.0])
    # the reference once got copies taken after fn ran, so the identity agreed with the doubled values
    with pytest.raises(AssertionError, match=r"check_forward: fn wrote into input 0: element \(0,\) was 1, is now 2"):
        check_forward(lambda t: DoubleInPlace()(t), lambda a: a, x)


def test_the_documented_arg_signature_says_what_is_keyword_only():
    import inspect

    doc = " ".join(minitx.testing.__doc__.split())
    documented = doc[doc.index("``arg(") + len("``arg("):].split(",")
    params = list(inspect.signature(arg).parameters.values())
    positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert [part.strip().split("=")[0] for part in documented[:len(positional) + 1]] == positional + ["*"]


def test_the_documented_example_runs():
    """The example in minitx.testing's docstring is code a tester copies: it must work."""
    doc = minitx.testing.__doc__
    start = doc.index("Example (a test of your own Function; tests/test_testing_tools.py runs it)::")
    code = textwrap.dedent(doc[start:].split("::", 1)[1])
    namespace = {"__name__": "example"}
    exec(compile(code, "minitx.testing example", "exec"), namespace)  # noqa: S102
    namespace["test_leaky_relu"]()  # hypothesis runs it on drawn tensors
    wrong = namespace["LeakyRelu"]
    wrong.backward = lambda self, dy: (dy * 1.0,)  # the example's checks must catch a wrong backward
    with pytest.raises(GradcheckError):
        namespace["test_leaky_relu"]()


# ---------------------------------------------------------------- the op-test factory


def test_the_documented_op_test_example_runs_and_catches_a_wrong_reference():
    doc = minitx.testing.__doc__
    start = doc.index("Op-test example (tests/test_testing_tools.py runs it)::")
    code = textwrap.dedent(doc[start:doc.index("Example (a test of your own Function")].split("::", 1)[1])
    namespace = {"__name__": "example"}
    exec(compile(code, "minitx.testing op-test example", "exec"), namespace)  # noqa: S102
    namespace["test_linear"]()
    namespace["test_sum"]()
    wrong = op_test(F.linear, arg(), arg(shape=lambda x: (2, x[-1])), arg(shape=lambda x, w: w[:1]),
                    numpy=lambda x, w, b: x @ w.T - b, shapes=mst.shapes(min_dims=1, max_dims=3),
                    settings=settings(phases=[Phase.generate], database=None))  # no shrinking: only failing matters
    with pytest.raises(AssertionError, match="check_forward: the output differs from the reference"):
        wrong()


def run_case(case, examples=None):
    """Run an op_case as hypothesis runs an op_test (without shrinking: only whether it fails matters),
    with the profile's number of examples or ``examples``."""
    chosen = {} if examples is None else {"max_examples": examples}
    settings(phases=[Phase.generate], database=None, **chosen)(given(data=st.data())(lambda data: case(data)))()


@pytest.mark.parametrize("op, reference, error, message", [
    (lambda a, b: a * b, np.multiply, None, None),
    (lambda a, b: Square(factor=2.5)(a) * b, lambda a, b: a * a * b, GradcheckError, "gradient of input 0 is wrong"),
    (lambda a, b: MulSkippingWrongly("tie")(a, b), np.multiply, GradcheckError, "input 0 received no gradient"),
    (lambda a, b: a * b + 1e-3, np.multiply, AssertionError, "the output differs from the reference"),
], ids=["correct", "backward", "subsets", "forward"])
def test_op_case_catches_planted_bugs(op, reference, error, message):
    case = op_case(op, arg(), arg(), broadcast=True, numpy=reference)
    if error is None:
        run_case(case)
    else:
        with pytest.raises(error, match=message):
            run_case(case)


def test_op_case_gives_the_references_copies_of_the_keyword_tensors():
    """A tensor among the keyword arguments reaches the NumPy reference as an array and PyTorch's as a
    torch tensor: a minitx Tensor there would compute minitx against itself (NumPy's side), or drop
    the gradient (torch * Tensor is a minitx Tensor, torch's gradient none)."""
    weights = st.builds(lambda v: minitx.tensor(np.full(1, v)), st.floats(1.0, 2.0))
    received = []

    def reference(x, w):
        received.append(type(w))
        return x * w

    run_case(op_case(lambda x, w: x * w, arg(), kwargs={"w": weights}, numpy=reference), examples=5)
    assert received and set(received) == {np.ndarray}
    torch = import_torch()
    run_case(op_case(lambda x, w: x * w, arg(), kwargs={"w": weights}, torch=lambda t, w: t * w, gradcheck=False),
             examples=5)
    wrong = op_case(lambda x, w: x * w, arg(), kwargs={"w": weights}, torch=lambda t, w: t * w * 1.5,
                    gradcheck=False)
    with pytest.raises(AssertionError, match="against torch"):
        run_case(wrong, examples=5)
    assert torch is not None


def test_op_case_checks_each_output_of_a_tuple():
    """The dtypes output by output, and no gradient check where no output is floating."""
    run_case(op_case(lambda x: (x.argmax(), x.argmin()), arg(),
                     numpy=lambda a: (np.argmax(a), np.argmin(a))), examples=5)
    with pytest.raises(AssertionError, match=r"output 0 dtype float32 from float64 inputs, expected float64"):
        run_case(op_case(lambda x: (F.sign(x).float(), x * 1.0), arg(), numpy=lambda a: (np.sign(a), a),
                         gradcheck=False), examples=5)
    with pytest.raises(AssertionError, match=r"output 1 dtype int64, but the reference returns float64"):
        run_case(op_case(lambda x: (x * 1.0, x.argmax()), arg(), numpy=lambda a: (a, np.float64(np.argmax(a))),
                         gradcheck=False), examples=5)


def test_op_test_runs_without_a_deadline_under_settings_that_give_none():
    """settings= with no deadline of its own keeps op_test's None (a PyTorch reference's first call takes
    a second); a deadline the settings give is kept."""
    active = settings.get_current_profile_name()
    settings.load_profile("default")  # hypothesis' own, with its 200 ms deadline, as a tester's project has it
    try:
        quiet = settings(max_examples=2, database=None)
        assert quiet.deadline is not None
        assert op_test(F.tanh, arg(), numpy=np.tanh, settings=quiet)._hypothesis_internal_use_settings.deadline is None
        assert op_test(F.tanh, arg(), numpy=np.tanh)._hypothesis_internal_use_settings.deadline is None
        given_one = settings(quiet, deadline=1234)
        kept = op_test(F.tanh, arg(), numpy=np.tanh, settings=given_one)._hypothesis_internal_use_settings.deadline
        assert kept is not None and kept.total_seconds() == 1.234
    finally:
        settings.load_profile(active)


def test_each_op_test_has_its_own_database_key():
    """Every op_test wraps one inner function: its digest must come from the op and its references, or one
    op_test's saved failure is replayed in all the others (and all draw alike under derandomize)."""
    from hypothesis.internal.reflection import function_digest

    def key(test):
        return function_digest(test.hypothesis.inner_test)

    exp, tanh = op_test(F.exp, arg(), numpy=np.exp), op_test(F.tanh, arg(), numpy=np.tanh)
    assert key(exp) != key(tanh)
    assert key(exp) == key(op_test(F.exp, arg(), numpy=np.exp))  # the same in every process and run
    assert key(op_test(lambda x: x * 2, arg(), numpy=lambda a: a * 2)) != key(op_test(lambda x: x * 3, arg(),
                                                                                        numpy=lambda a: a * 3))


def test_op_case_draws_what_its_args_say():
    seen = []

    def record(x, w, targets, scale):
        seen.append((x.shape, w.shape, targets, scale, x.requires_grad, w.requires_grad))
        return x * scale

    case = op_case(record, arg(min_value=1.0, max_value=2.0), arg(shape=lambda x: x[-1:], requires_grad=False),
                   arg(strategy=lambda x, w: mst.class_targets(x[:-1], w[0])), shapes=mst.shapes(min_dims=1),
                   kwargs={"scale": st.sampled_from([2.0, 3.0])}, gradcheck=False,
                   numpy=lambda x, w, t, scale: x * scale)
    run_case(case)
    assert seen
    for x_shape, w_shape, targets, scale, x_grad, w_grad in seen:
        assert w_shape == x_shape[-1:] and targets.shape == x_shape[:-1] and targets.dtype == np.int64
        assert scale in (2.0, 3.0) and x_grad and not w_grad


def test_op_case_on_device_compares_outputs_and_gradients_with_the_cpus():
    """on_device runs the op twice on the same drawn inputs (here both on the CPU): a second run
    that differs in a value, in a gradient or in its dtype is caught and named."""
    calls = []

    def drifting(shift=0.0, dtype=None):
        def op(x, w, scale):  # the second call of each pair (on_device's "device" run) drifts
            calls.append(1)
            second = len(calls) % 2 == 0
            y = x * w * scale + (shift if second else 0.0)
            return y.to(dtype=dtype) if second and dtype else y
        return op

    def run(op):
        case = op_case(op, arg(), arg(), broadcast=True, kwargs={"scale": st.sampled_from([2.0])}, numpy=None,
                       gradcheck=True)
        settings(phases=[Phase.generate], database=None, max_examples=5)(
            given(data=st.data())(lambda data: case.on_device(data, "cpu")))()

    run(drifting())
    with pytest.raises(AssertionError, match="on cpu, against the CPU: the output differs"):
        run(drifting(shift=1e-6))
    with pytest.raises(AssertionError, match="the output is float32 on cpu, expected float64"):
        run(drifting(dtype="float32"))

    class WrongGradientOnSecondCall(Function):
        def forward(self, x):
            return x * 3.0

        def backward(self, dy):
            calls.append(1)
            return (dy * (3.0 if len(calls) % 2 else 3.0 + 1e-6),)

    calls.clear()
    case = op_case(lambda x: WrongGradientOnSecondCall()(x), arg(), numpy=lambda x: x * 3.0)
    with pytest.raises(AssertionError, match="against the CPU, backward: the gradient of argument 0 differs"):
        settings(phases=[Phase.generate], database=None, max_examples=5)(
            given(data=st.data())(lambda data: case.on_device(data, "cpu")))()


def test_op_case_on_device_casts_and_moves_the_keyword_tensors_too():
    seen = []

    def op(x, w):
        seen.append((x.dtype.name, w.dtype.name, x.requires_grad, w.requires_grad))
        return x * w

    weights = st.builds(lambda v: minitx.tensor(np.full(1, v)), st.floats(1.0, 2.0))
    case = op_case(op, arg(), kwargs={"w": weights}, numpy=lambda x, w: x * w)
    settings(phases=[Phase.generate], database=None, max_examples=3)(
        given(data=st.data())(lambda data: case.on_device(data, "cpu", "float32")))()
    assert seen and set(seen) == {("float32", "float32", True, False)}


@pytest.mark.parametrize("spec", [arg(transposed=True), arg(transposed=True, edges=(np.nan,), edge_probability=0.0),
                                  arg(transposed=True, edges=(np.nan,)), arg(transposed=True, ties=True),
                                  arg(transposed=True, ties=True, edges=(np.nan,))],
                         ids=["plain", "edges-never", "edges", "ties", "ties-and-edges"])
def test_arg_keeps_a_transposed_view_with_edges_and_ties(spec):
    # np.where made edges' arrays C-contiguous: a backward wrong only on views went unseen
    from minitx.testing.factory import _values

    t, _ = first(_values(spec, (3, 4)))
    assert t.shape == (3, 4) and not t.data.flags.c_contiguous
    assert first(_values(spec, ()))[0].shape == ()  # ties and edges on a 0-d argument


def test_op_case_edges_ties_and_its_argument_checks():
    drawn = []
    case = op_case(lambda x: drawn.append(x.numpy().copy()) or x * 1.0, arg(edges=(np.nan,), edge_probability=0.5),
                   numpy=lambda x: x, shapes=st.just((40,)))
    run_case(case)
    assert any(np.isnan(a).any() for a in drawn) and any(np.isfinite(a).any() for a in drawn)
    drawn.clear()
    case = op_case(lambda x: drawn.append(x.numpy().copy()) or x * 1.0, arg(ties=True), numpy=lambda x: x,
                   shapes=st.just((40,)))
    run_case(case, examples=40)  # (a coin per example picks ties: the dev profile's 8 drew none one run in many)
    assert any((a * 2 == np.round(a * 2)).all() and len(np.unique(a)) < a.size for a in drawn)
    assert any(not (a * 2 == np.round(a * 2)).all() for a in drawn)  # plain draws too, which check_gradients runs on

    class SquareZeroGradient(Function):
        def forward(self, x):
            return x * x

        def backward(self, dy):
            return (dy * 0.0,)

    # ties=True skipped check_gradients on every example: this wrong backward passed
    with pytest.raises(GradcheckError):
        run_case(op_case(lambda x: SquareZeroGradient()(x), arg(ties=True), numpy=lambda x: x * x))
    # with no reference, an edge or tie example checked nothing: the op was not even called
    with pytest.raises(ValueError, match="examples with edges or ties skip the gradient checks"):
        op_case(F.exp, arg(edges=(np.nan,)))
    with pytest.raises(ValueError, match="op_case: give a numpy or torch reference, or gradcheck=True"):
        op_case(F.exp, arg(), gradcheck=False)
    with pytest.raises(ValueError, match=r"edge_probability must be in \[0, 1\]"):
        arg(edge_probability=2)
    with pytest.raises(ValueError, match="^arg: need finite min_value <= max_value"):
        arg(min_value=1.0, max_value=0.0)


@pytest.mark.parametrize("make, error, message", [
    (lambda: arg(away_from=0.0), ValueError, r"^arg: away_from must be a tuple of points, got 0.0; for one point "
                                             r"write \(0.0,\)$"),
    (lambda: mst.float_arrays(3, margin="x"), ValueError, r"^float_arrays: margin must be a number, got 'x'$"),
    (lambda: mst.tensors(3, min_value=None), ValueError, r"^tensors: min_value must be a number, got None$"),
    (lambda: arg(shape=2.5), ValueError, r"^arg: shape must be None, a shape \(an int or a tuple of ints >= 0\), "),
    (lambda: arg(shape=(2, -1)), ValueError, r"^arg: shape must be None, a shape"),
    (lambda: op_case(42, arg(), numpy=np.exp), TypeError, r"^op_case: op must be a callable of tensors, got int$"),
    (lambda: op_case(F.exp, arg(), numpy="np.exp"), TypeError, r"^op_case: numpy must be a callable of NumPy arrays"),
    (lambda: op_case(F.exp, arg(), torch=3), TypeError, r"^op_case: torch must be a callable of torch tensors or a "),
    (lambda: op_case(F.exp, arg(), torch="torch.exp", torch_kwargs={"a": 1}), TypeError,
     r"^op_case: torch_kwargs must be a callable"),
    (lambda: op_case(F.exp, arg(), numpy=np.exp, kwargs=[1]), TypeError, r"^op_case: kwargs must be a dict"),
    (lambda: op_case(F.mul, arg(), arg(shape=lambda x, w: x), numpy=np.multiply), TypeError,
     r"^op_case: the shape of argument 1 is a callable of the shapes of the 1 argument\(s\) before it, so it must "
     r"take 1 positional argument\(s\); <lambda>\(x, w\) does not$"),
    (lambda: op_case(F.mul, arg(), arg(strategy=lambda: st.just(2.0)), numpy=np.multiply), TypeError,
     r"^op_case: the strategy of argument 1 is a callable of the shapes of the 1 argument"),
])
def test_op_case_and_the_strategies_refuse_what_they_cannot_use_when_made(make, error, message):
    """A wrong argument is named when the case or strategy is made, not at the first draw inside hypothesis."""
    with pytest.raises(error, match=message):
        make()


def test_arg_draws_float32_and_float16_with_edges_and_ties():
    """dtype: the values drawn as for float64, then rounded; the output's dtype must follow; a wrong
    backward is still caught against torch."""
    import_torch()
    seen = set()

    def tanh(x):
        seen.add(x.dtype.name)
        return F.tanh(x)

    f32 = {"gradcheck": False, "rtol": 1e-6, "atol": 1e-7, "grad_rtol": 1e-5, "grad_atol": 1e-6}
    run_case(op_case(tanh, arg(dtype="float32", edges=(0.0, np.inf, np.nan)), numpy=np.tanh, torch="torch.tanh", **f32),
             examples=10)
    run_case(op_case(F.maximum, arg(dtype="float16", ties=True), arg(dtype="float16", ties=True), numpy=np.maximum,
                     torch="torch.maximum", gradcheck=False, rtol=1e-3, grad_rtol=1e-3, grad_atol=1e-3), examples=10)
    assert seen == {"float32"}
    with pytest.raises(AssertionError, match="output dtype float64 from float32 inputs, expected float32"):
        run_case(op_case(lambda x: F.tanh(x).double(), arg(dtype="float32"), numpy=np.tanh, **f32), examples=5)
    with pytest.raises(AssertionError, match="backward against torch"):
        run_case(op_case(lambda x: Square(factor=2.5)(x), arg(dtype="float32"), torch=lambda t: t * t, **f32),
                 examples=5)
    with pytest.raises(ValueError, match=r"^op_case: argument 0 is float32, and finite differences need float64: "
                                         r"give gradcheck=False"):
        op_case(F.tanh, arg(dtype="float32"), numpy=np.tanh)
    with pytest.raises(ValueError, match=r"^arg: dtype must be 'float64', 'float32' or 'float16', got 'bfloat16'"):
        arg(dtype="bfloat16")


@pytest.mark.parametrize("case, message", [
    (lambda: op_case(F.mul, arg(), arg(shape=lambda x: 2.5), numpy=np.multiply),
     r"^op_case: the shape of argument 1 must be an int or a tuple of ints >= 0, got 2.5"),
    (lambda: op_case(F.mul, arg(), arg(), broadcast=True, shapes=mst.broadcastable_shapes(1), numpy=np.multiply),
     r"^op_case: with broadcast=True, shapes must draw a tuple of 2 shapes \(one per argument without its own "),
    (lambda: op_case(F.mul, arg(), arg(), broadcast=True, shapes=st.just((2, 3)), numpy=np.multiply),
     r"^op_case: with broadcast=True, shapes must draw a tuple of 2 shapes .*, got \(2, 3\)"),
])
def test_op_case_names_a_shape_it_drew_that_is_not_one(case, message):
    with pytest.raises(ValueError, match=message):
        run_case(case(), examples=3)


def test_op_case_skips_the_gradient_checks_on_ties_hypothesis_draws_unrounded():
    # hypothesis draws a = 0 and b = 1.4e-178 in ties' plain half, and a step of eps crossed that tie:
    # gradcheck failed minitx's own maximum (half each at a == b) on every run
    run_case(op_case(F.maximum, arg(ties=True), arg(ties=True), numpy=np.maximum))

    class MaximumFirstWins(Function):
        """At a tie all of dy goes to a: a subgradient too (max pooling's rule)."""

        def forward(self, a, b):
            self.save_for_backward(a >= b)
            return np.maximum(a, b)

        def backward(self, dy):
            (first,) = self.saved
            return np.where(first, dy, 0.0), np.where(first, 0.0, dy)

    run_case(op_case(lambda a, b: MaximumFirstWins()(a, b), arg(ties=True), arg(ties=True), numpy=np.maximum))
    # uniform draws in a range narrower than a few eps hold near-ties every time: skipped, not failed
    narrow = dict(ties=True, min_value=0.0, max_value=1e-5)
    run_case(op_case(F.maximum, arg(**narrow), arg(**narrow), numpy=np.maximum))
    # the examples far from a tie are still gradient-checked
    with pytest.raises(GradcheckError, match="gradient of input 1 is wrong"):
        run_case(op_case(lambda a, b: F.maximum(a, Square(factor=2.5)(b)), arg(ties=True), arg(ties=True),
                         numpy=lambda a, b: np.maximum(a, b * b)))


def test_op_case_compares_with_torch():
    pytest.importorskip("torch")
    case = op_case(F.tanh, arg(edges=(np.inf, np.nan)), torch="torch.tanh", gradcheck=False)
    run_case(case)
    wrong = op_case(lambda x: F.tanh(x) + 1e-6 * F.sigmoid(x), arg(), torch="torch.tanh", gradcheck=False)
    with pytest.raises(AssertionError, match=r"op_case of <lambda> \(last op: add\), against torch: the output "
                                             "differs"):
        run_case(wrong)

    class TanhWrongGradient(Function):
        def forward(self, x):
            self.save_for_backward(np.tanh(x))
            return np.tanh(x)

        def backward(self, dy):
            (y,) = self.saved
            return (dy * (1 - y),)

    bad = op_case(lambda x: TanhWrongGradient()(x), arg(), torch="torch.tanh", gradcheck=False, shapes=st.just((3,)))
    # a gradient against torch once failed as "check_forward: ..."
    with pytest.raises(AssertionError, match=r"^op_case of <lambda> \(last op: tanh_wrong_gradient\), backward "
                                             "against torch: the gradient of argument 0 differs"):
        run_case(bad)


def test_op_case_compares_an_op_returning_several_tensors_with_torch():
    torch = import_torch()
    # (this once raised AttributeError: 'tuple' object has no attribute '_ctx')
    run_case(op_case(lambda x: (F.tanh(x), x.sum(axis=-1)), arg(), shapes=mst.shapes(min_dims=1, max_dims=2),
                     torch=lambda t: (torch.tanh(t), t.sum(dim=-1)), gradcheck=False))
    run_case(op_case(lambda x: (F.exp(x), x.argmax()), arg(), torch=lambda t: (torch.exp(t), t.argmax()),
                     gradcheck=False))
    # a wrong gradient through the second output only is caught, naming its op
    bad = op_case(lambda x: (F.tanh(x), Square(factor=2.5)(x)), arg(), torch=lambda t: (torch.tanh(t), t * t),
                  gradcheck=False, shapes=st.just((3,)))
    with pytest.raises(AssertionError, match=r"^op_case of <lambda> \(last op: tanh, square\), backward against "
                                             "torch: the gradient of argument 0 differs"):
        run_case(bad)
    with pytest.raises(AssertionError, match="against torch: output 1 differs"):
        run_case(op_case(lambda x: (F.tanh(x), x + 1), arg(), torch=lambda t: (torch.tanh(t), t + 2),
                         gradcheck=False))
    with pytest.raises(AssertionError, match="against torch: fn returned 2 outputs, the reference 1"):
        run_case(op_case(lambda x: (F.tanh(x), x * 2), arg(), torch=lambda t: (torch.tanh(t),), gradcheck=False))


def test_op_case_takes_integer_and_bool_outputs_its_references_return():
    import_torch()
    # argmax and comparisons return int64 and bool in NumPy and PyTorch; no gradient to check
    for gradcheck_too in (False, True):
        run_case(op_case(lambda x: x.argmax(), arg(), numpy=np.argmax, torch=lambda t: t.argmax(),
                         gradcheck=gradcheck_too))
    run_case(op_case(lambda x, y: x > y, arg(), arg(), numpy=np.greater, torch="torch.gt"))
    run_case(op_case(lambda x: F.isnan(x), arg(edges=(np.nan,)), numpy=np.isnan))
    with pytest.raises(AssertionError, match="op_case of <lambda>: output dtype int64, but the reference returns "
                                             "float64"):
        run_case(op_case(lambda x: x.argmax(), arg(), numpy=lambda a: np.argmax(a).astype(np.float64)))
    with pytest.raises(AssertionError, match="op_case of <lambda>: output dtype bool, but the reference returns int64"):
        run_case(op_case(lambda x: x > 0, arg(), torch=lambda t: (t > 0).long()))
    with pytest.raises(AssertionError, match="op_case of <lambda>: output dtype float32 from float64 inputs"):
        run_case(op_case(lambda x: x.float(), arg(), numpy=lambda a: a, gradcheck=False))
    with pytest.raises(AssertionError, match="op_case of <lambda>: output dtype float64, but the reference returns bool"):
        run_case(op_case(lambda x, y: (x > y).double(), arg(), arg(), numpy=np.greater, gradcheck=False))


def test_strategies_without_hypothesis_say_how_to_install_it(monkeypatch):
    for name in [m for m in sys.modules if m == "hypothesis" or m.startswith("hypothesis.")]:
        monkeypatch.setitem(sys.modules, name, None)  # None in sys.modules: importing it fails, as if missing
    monkeypatch.delitem(sys.modules, "minitx.testing.strategies")
    monkeypatch.delattr(minitx.testing, "strategies")
    with pytest.raises(ImportError, match=r'pip install "minitx\[test\]"'):
        from minitx.testing import strategies  # noqa: F401
    with pytest.raises(ImportError, match=r'pip install "minitx\[test\]"'):
        importlib.import_module("minitx.testing.strategies")


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


@settings(max_examples=3)
@given(array=mst.float_arrays((40, 50), distinct=True))
def test_float_arrays_draw_distinct_values_at_the_documented_most(array):
    # 2000 elements once failed hypothesis' large_base_example health check
    assert array.shape == (40, 50) and len(np.unique(array)) == array.size
    assert np.diff(np.sort(array.reshape(-1))).min() >= 6.0 / 2000 * (1 - 1e-9)


def test_float_arrays_distinct_values_come_one_grid_step_apart():
    # hypothesis finds the tightest packing: every neighbour one step of (max - min) / 2000 apart
    tight = find(mst.float_arrays(20, distinct=True), lambda a: np.ptp(a) < 20 * 6.0 / 2000,
                 settings=settings(database=None, max_examples=500))
    assert np.allclose(np.diff(np.sort(tight)), 6.0 / 2000)


@pytest.mark.parametrize("dtype", [np.int64, "int32", bool])
@pytest.mark.parametrize("make", [mst.float_arrays, mst.tensors])
def test_float_strategies_refuse_a_dtype_that_is_not_floating_when_built(make, dtype):
    # a cast to int broke the range, away_from and margin; tensors failed only when drawn, with a TypeError
    with pytest.raises(ValueError, match=f"{make.__name__}: dtype must be a floating dtype .*got {np.dtype(dtype).name}"):
        make(5, dtype=dtype, min_value=-0.4, max_value=0.4, away_from=(0.0,), margin=0.1)


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


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_tensors_take_every_floating_dtype_by_name(dtype):
    """A tester checking an op in 16 bits draws its inputs in them (bfloat16 is ml_dtypes')."""
    t = first(mst.tensors((2, 3), dtype=dtype, min_value=-2.0, max_value=2.0))
    assert t.dtype.name == dtype and np.all(np.abs(t.numpy().astype(np.float64)) <= 2.0)
    with pytest.raises(TypeError, match="tensors: unknown dtype 'float8'; expected one of"):
        mst.tensors((2,), dtype="float8")


def test_distinct_draws_refuse_a_dtype_whose_rounding_would_tie_them():
    """bfloat16 keeps 8 significant bits: values (max - min) / 2000 apart would round onto each other."""
    with pytest.raises(ValueError, match="float_arrays: distinct=True .* bfloat16 cannot keep apart near 3.0"):
        mst.float_arrays((4,), dtype="bfloat16", distinct=True)
    a = first(mst.float_arrays((64,), dtype="float16", distinct=True))
    assert len(np.unique(a)) == a.size  # float16 keeps them apart over the default range


def test_tensors_are_sometimes_transposed_views():
    t = first(mst.tensors((2, 3)), lambda t: not t.data.flags.c_contiguous)
    assert t.shape == (2, 3) and t.data.base is not None
    assert first(mst.tensors((2, 3), transposed=False, requires_grad=False)).data.flags.c_contiguous


@given(data=st.data(), ndim=st.integers(0, 4))
def test_axes_for_gives_valid_axes(data, ndim):
    axis = data.draw(mst.axes_for(ndim))
    np.zeros((2,) * ndim).sum(axis=axis)  # numpy accepts it


# ---------------------------------------------------------------- strategies: promises kept


@pytest.mark.parametrize("probability", [0.0, 0.2, 0.7, 1.0])
@given(data=st.data())
def test_class_targets_and_ids_replace_at_the_given_rate(probability, data):
    # every draw holds: 500 independent choices stay within 0.1 of the rate (over 5 standard deviations)
    targets = data.draw(mst.class_targets((500,), 3, ignore_index=-1, ignore_probability=probability))
    assert abs((targets == -1).mean() - probability) < 0.1
    ids = data.draw(mst.ids((500,), 10, padding_idx=9, padding_probability=probability))
    assert ((0 <= ids) & (ids < 10)).all()
    assert (ids == 9).mean() >= probability - 0.1  # 9 is also drawn as an ordinary id


@given(data=st.data(), point=st.sampled_from([1.0, -1.0, 0.98, -0.5, 0.0]), margin=st.sampled_from([0.05, 0.2]))
def test_float_arrays_stay_in_range_away_from_points_near_the_bounds(data, point, margin):
    array = data.draw(mst.float_arrays(mst.shapes(max_dims=2), min_value=-1.0, max_value=1.0, away_from=(point,),
                                       margin=margin))
    assert ((-1.0 <= array) & (array <= 1.0)).all()
    assert (np.abs(array - point) >= margin).all()


@given(array=mst.float_arrays((30,), away_from=(0.0, 0.1), margin=0.08))
def test_float_arrays_keep_away_from_close_points_together(array):
    # moving a value away from 0 must not put it near 0.1, nor the other way round
    assert (np.abs(array) >= 0.08).all() and (np.abs(array - 0.1) >= 0.08).all()


@pytest.mark.parametrize("kwargs, message", [
    ({"away_from": (0.0,), "margin": 1.5}, r"float_arrays: no value in \[-1.0, 1.0\] is at least 1.5 away"),
    ({"away_from": (-0.5, 0.5), "margin": 0.6}, "the margins cover the whole range"),
    ({"distinct": True, "away_from": (0.0,), "margin": 2.0}, r"float_arrays: no value in \[-1.0, 1.0\]"),
])
def test_float_arrays_refuse_impossible_margins_when_built(kwargs, message):
    with pytest.raises(ValueError, match=message):
        mst.float_arrays((3,), min_value=-1.0, max_value=1.0, **kwargs)  # no draw needed


@pytest.mark.parametrize("build, message", [
    (lambda: mst.attention_masks((2,), 3, 0), "attention_masks: lk must be at least 1, got 0"),
    (lambda: mst.attention_masks((2,), -1, 2), "attention_masks: lq must be at least 0"),
    (lambda: mst.attention_masks("ab", 1, 2), "attention_masks: batch_shape must be a tuple or list"),
    (lambda: mst.tensors("2x3"), "tensors: shape must be a tuple or list of non-negative ints"),
    (lambda: mst.tensors((2, -1)), "tensors: shape must be"),
    (lambda: mst.tensors((60, 60), distinct=True), "tensors: distinct=True supports at most 2000 elements"),
    (lambda: mst.tensors((2,), min_value=1.0, max_value=0.0), r"tensors: need finite min_value <= max_value"),
    (lambda: mst.float_arrays((2,), distinct=True, min_value=1.0, max_value=1.0), "needs min_value < max_value"),
    (lambda: mst.class_targets((3,), 0), "class_targets: num_classes must be at least 1, got 0"),
    (lambda: mst.class_targets((3,), 2, -1, ignore_probability=1.5), r"ignore_probability must be in \[0, 1\]"),
    (lambda: mst.ids((3,), 4, padding_idx=4), r"ids: padding_idx must be in \[0, 4\), got 4"),
    (lambda: mst.index_arrays((3,), 0), "index_arrays: size must be at least 1"),
    (lambda: mst.getitem_indices((2, 0)), r"getitem_indices: needs a shape .* each of length 1 or more, got \(2, 0\)"),
    (lambda: mst.getitem_indices(()), r"getitem_indices: needs a shape of at least one axis"),
    (lambda: mst.getitem_indices((2,), "slices"), r"getitem_indices: kinds must be some of \('basic'"),
    (lambda: mst.bool_masks((2, 0), at_least_one_true=True), r"bool_masks: a mask of shape \(2, 0\) has no element"),
    (lambda: mst.shapes(min_dims=3, max_dims=2), "shapes: max_dims must be at least 3, got 2"),
    (lambda: mst.broadcastable_shapes(0), "broadcastable_shapes: num_shapes must be at least 1"),
    (lambda: mst.broadcastable_tensors(2, distinct=True, min_value=0.0, max_value=0.0), "tensors: distinct=True"),
    (lambda: mst.axes_for(-1), "axes_for: ndim must be at least 0"),
])
def test_strategies_check_their_arguments_when_built(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_shapes_may_be_lists_tuples_or_ints():
    assert first(mst.tensors([2, 3])).shape == (2, 3)
    assert first(mst.float_arrays([4], distinct=True)).shape == (4,)
    assert first(mst.float_arrays(5)).shape == (5,)
    assert first(mst.class_targets([2, 2], 3)).shape == (2, 2)
    assert first(mst.attention_masks([2], 3, 4)).shape == (2, 3, 4)
    assert first(mst.index_arrays([3], 4)).shape == (3,)
    assert first(mst.bool_masks([1, 2])).shape == (1, 2)


@pytest.mark.parametrize("allow_negative", [False, True])
@given(data=st.data())
def test_index_arrays_index_an_axis(allow_negative, data):
    size = data.draw(st.integers(1, 5))
    index = data.draw(mst.index_arrays(mst.shapes(max_dims=2), size, allow_negative=allow_negative))
    assert index.dtype == np.int64
    assert ((-size if allow_negative else 0) <= index).all() and (index < size).all()
    np.arange(size)[index]  # numpy accepts it


def test_index_arrays_draw_negative_indices_only_when_allowed():
    assert first(mst.index_arrays((6,), 3, allow_negative=True), lambda i: (i < 0).any()).min() >= -3


@given(data=st.data())
def test_getitem_indices_index_an_array_of_their_shape(data):
    shape = data.draw(mst.shapes(min_dims=1, max_dims=4, max_side=4))
    kinds = data.draw(st.lists(st.sampled_from(mst.INDEX_KINDS), min_size=1, unique=True))
    index = data.draw(mst.getitem_indices(shape, kinds))
    np.zeros(shape)[index]  # numpy accepts it
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [p for p in parts if isinstance(p, np.ndarray)]
    kind = ("basic" if not arrays else "integer arrays" if arrays[0].dtype == np.int64
            else "last-axis mask" if parts[0] is Ellipsis else "mask")
    assert kind in kinds


@pytest.mark.parametrize("kind", mst.INDEX_KINDS)
def test_getitem_indices_draw_every_kind_and_their_edges(kind):
    shape = (3, 4, 5)
    if kind == "basic":
        first(mst.getitem_indices(shape, kind), lambda i: any(isinstance(p, slice) and (p.step or 1) < 0 for p in i))
        first(mst.getitem_indices(shape, kind), lambda i: Ellipsis in i and None in i)
    elif kind == "integer arrays":
        repeated = first(mst.getitem_indices(shape, kind), lambda i: isinstance(i, tuple) and len(i) == 3)
        assert repeated[0].shape == repeated[2].shape
        first(mst.getitem_indices(shape, kind), lambda i: isinstance(i, np.ndarray) and len(set(i % 3)) < len(i))
    else:
        first(mst.getitem_indices(mst.shapes(min_dims=1, max_dims=2), kind), lambda i: np.asarray(i[-1]).any())


@given(data=st.data(), at_least_one_true=st.booleans())
def test_bool_masks(data, at_least_one_true):
    mask = data.draw(mst.bool_masks(mst.shapes(max_dims=3), at_least_one_true=at_least_one_true))
    assert mask.dtype == np.bool_
    assert mask.any() or not at_least_one_true


def test_bool_masks_are_sometimes_all_false():
    assert not first(mst.bool_masks((3,)), lambda m: not m.any()).any()


@given(ts=mst.broadcastable_tensors(3, max_dims=3, requires_grad=False, away_from=(0.0,)))
def test_broadcastable_tensors(ts):
    assert len(ts) == 3 and all(isinstance(t, minitx.Tensor) and not t.requires_grad for t in ts)
    np.broadcast_shapes(*(t.shape for t in ts))
    assert all((np.abs(t.numpy()) >= 0.05).all() for t in ts)


@given(data=st.data(), ndim=st.integers(0, 4))
def test_axes_and_keepdims(data, ndim):
    axis, keepdims = data.draw(mst.axes_and_keepdims(ndim))
    assert isinstance(keepdims, bool)
    np.zeros((2,) * ndim).sum(axis=axis, keepdims=keepdims)


def test_gradcheck_random_directions_fail_where_finite_differences_overflow():
    # rtol * |numeric| was inf when f(x + eps u) overflowed: any finite analytic passed
    class ExpZeroGradient(Function):
        def forward(self, x):
            return np.exp(x)

        def backward(self, dy):
            return (np.zeros_like(dy),)

    x = np.zeros(5000)
    x[0] = 709.7827128933  # exp(x) is finite, exp(x + 1e-6) is not
    with pytest.raises(GradcheckError, match="random direction 0.*numeric -?inf"):
        gradcheck(lambda t: ExpZeroGradient()(t), leaf(x))
