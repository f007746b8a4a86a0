"""PyTorch's names for minitx's ops and the small ops composed of them: the aliases of
minitx/ops/elementwise.py's last lines (and ger, moveaxis) are the ops themselves; divide,
subtract, square, positive, ravel, swapdims, movedim, fliplr, flipud, rot90 (shape.py), select,
take, diagflat (indexing.py), msort (scan.py), aminmax, nansum, nanmean, sum_to_size
(reduction.py), dist (norm.py), mv, addmm, addmv, addbmm, baddbmm and addr (linalg.py).

Each composed op: its forward against an independent NumPy computation and a float64 gradient
check on hypothesis-drawn shapes and arguments (the op-test factory); PyTorch parity with edge
values is tests/test_torch_op_parity.py's, the Tensor methods' tests/test_torch_method_parity.py's.
Then the errors, which name the op, what it got and what it expected.
"""
import numpy as np
import pytest
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.testing import arg, op_test
from minitx.testing import strategies as mst
from _torch_kit import import_torch

NONEMPTY = mst.shapes(min_dims=1, max_dims=3, max_side=4)
TWO_AXES = mst.shapes(min_dims=2, max_dims=4, max_side=4)

# minitx.functional's second names: each is the op itself (PyTorch's and NumPy's names for it)
ALIASES = {"absolute": "abs", "negative": "neg", "multiply": "mul", "true_divide": "div", "clamp": "clip",
           "fix": "trunc", "sgn": "sign", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin",
           "arcsinh": "asinh", "arctan": "atan", "arctanh": "atanh", "arctan2": "atan2", "eq": "equal",
           "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
           "ger": "outer", "moveaxis": "movedim"}


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_an_alias_is_the_op_itself_and_pytorchs_namesake_agrees(alias):
    assert getattr(F, alias) is getattr(F, ALIASES[alias])
    torch = import_torch()
    a = np.random.default_rng(1).uniform(-0.9, 0.9, (3, 4))
    args = {"ger": (a[0], a[1]), "moveaxis": (a, 0, 1), "arccosh": (a + 2,)}.get(
        alias, (a, a[::-1].copy()) if alias in ("multiply", "true_divide", "arctan2", "eq", "ne", "lt", "le", "gt", "ge")
        else (a, -0.5, 0.5) if alias == "clamp" else (a,))
    ours = getattr(F, alias)(*[minitx.tensor(v) if isinstance(v, np.ndarray) else v for v in args])
    theirs = getattr(torch, alias)(*[torch.tensor(v) if isinstance(v, np.ndarray) else v for v in args])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-15, atol=0)  # (libm's last bit may differ)


def np_trunc_divide(a, b):
    return np.trunc(a / b)


# ---------------------------------------------------------------- elementwise
test_subtract = op_test(lambda a, b, alpha: F.subtract(a, b, alpha=alpha), arg(), arg(), broadcast=True,
                        kwargs={"alpha": st.sampled_from([1, -2, 0.5])}, numpy=lambda a, b, alpha: a - alpha * b)
test_square = op_test(F.square, arg(edges=(0.0, np.inf, np.nan)), numpy=np.square)
test_divide = op_test(lambda a, b, rounding_mode: F.divide(a, b, rounding_mode=rounding_mode), arg(),
                      arg(away_from=(0.0,), margin=0.2), broadcast=True, gradcheck=False,
                      kwargs={"rounding_mode": st.sampled_from([None, "trunc", "floor"])},
                      numpy=lambda a, b, rounding_mode: {None: np.divide, "trunc": np_trunc_divide,
                                                         "floor": np.floor_divide}[rounding_mode](a, b))


def test_divide_rounded_has_gradient_0_and_integers_round_toward_0_as_pytorchs():
    torch = import_torch()
    a, b = np.array([7.5, -7.5, 3.0]), np.array([2.0, 2.0, -0.7])
    for mode in ("trunc", "floor"):
        x = minitx.tensor(a, requires_grad=True)
        F.divide(x, minitx.tensor(b), rounding_mode=mode).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))
    # where b = 0 (a / b inf or NaN) too, for a and b: trunc's 0 sent back through a / b would be NaN there
    a0, b0 = np.array([1.0, 0.0, -2.0]), np.array([0.0, 0.0, 4.0])
    x, y = minitx.tensor(a0, requires_grad=True), minitx.tensor(b0, requires_grad=True)
    tx, ty = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    F.divide(x, y, rounding_mode="trunc").sum().backward()
    torch.div(tx, ty, rounding_mode="trunc").sum().backward()
    for ours, theirs in ((x, tx), (y, ty)):
        np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
        np.testing.assert_array_equal(ours.grad.numpy(), np.zeros(3))
    ints = np.array([7, -7, 7, -7, 0, -1]), np.array([2, 2, -2, -2, 3, 5])
    for mode in ("trunc", "floor"):
        ours = F.divide(*map(minitx.tensor, ints), rounding_mode=mode)
        theirs = torch.div(*map(torch.tensor, ints), rounding_mode=mode)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert ours.dtype == np.int64
    with pytest.raises(ZeroDivisionError, match=r"^divide: integer division by zero"):
        F.divide(minitx.tensor([1, 2]), minitx.tensor([1, 0]), rounding_mode="trunc")
    with pytest.raises(ValueError, match=r"^divide: rounding_mode must be one of None, 'trunc' or 'floor', got 'round'"):
        F.divide(minitx.tensor([1.0]), 2.0, rounding_mode="round")
    with pytest.raises(TypeError, match=r"^divide: not defined for two boolean tensors"):
        F.divide(minitx.tensor([True]), minitx.tensor([True]), rounding_mode="trunc")


def test_square_of_booleans_is_int64_and_positive_is_the_tensor_as_pytorchs():
    b = minitx.tensor([True, False])
    assert F.square(b).dtype == np.int64 and F.square(b).tolist() == [1, 0]
    x = minitx.tensor([1.0, -2.0])
    assert F.positive(x) is x and x.positive() is x
    with pytest.raises(TypeError, match=r"positive\): not defined for boolean tensors"):
        F.positive(b)


# ---------------------------------------------------------------- shape
@st.composite
def two_distinct_axes(draw, shape):
    first = draw(st.integers(-len(shape), len(shape) - 1))
    second = draw(st.integers(-len(shape), len(shape) - 1).filter(lambda a: a % len(shape) != first % len(shape)))
    return first, second


test_rot90 = op_test(lambda x, k, axes: F.rot90(x, k, axes), arg(edges=(np.nan,)), shapes=TWO_AXES,
                     kwargs={"k": st.integers(-5, 5), "axes": two_distinct_axes},
                     numpy=lambda a, k, axes: np.rot90(a, k, axes))
test_ravel = op_test(F.ravel, arg(transposed=True), numpy=np.ravel)
test_swapdims = op_test(lambda x, axes: F.swapdims(x, *axes), arg(), shapes=TWO_AXES, kwargs={"axes": two_distinct_axes},
                        numpy=lambda a, axes: np.swapaxes(a, *axes))
test_movedim = op_test(lambda x, moves: F.movedim(x, *moves), arg(), shapes=TWO_AXES,
                       kwargs={"moves": lambda s: st.tuples(st.permutations(range(len(s))), st.permutations(range(len(s))))
                               .map(lambda m: (m[0][:-1], m[1][:-1]))},  # (several axes moved at once)
                       numpy=lambda a, moves: np.moveaxis(a, *moves))
test_fliplr = op_test(F.fliplr, arg(), shapes=TWO_AXES, numpy=np.fliplr)
test_flipud = op_test(F.flipud, arg(), shapes=NONEMPTY, numpy=np.flipud)


# ---------------------------------------------------------------- indexing
def an_index(shape, extra=0):
    return st.integers(-shape[0] - extra, shape[0] - 1 + extra)


test_select = op_test(lambda x, axis, index: F.select(x, axis, index), arg(), shapes=NONEMPTY,
                      kwargs={"axis": lambda s: st.integers(-len(s), len(s) - 1),
                              "index": lambda s: st.integers(-min(s), min(s) - 1)},
                      numpy=lambda a, axis, index: np.take(a, index, axis))
test_take = op_test(F.take, arg(), arg(strategy=lambda x: mst.index_arrays(mst.shapes(max_dims=2, max_side=4),
                                                                         int(np.prod(x)), allow_negative=True)),
                    numpy=lambda a, index: np.take(a.ravel(), index))
test_diagflat = op_test(lambda x, offset: F.diagflat(x, offset), arg(), shapes=mst.shapes(max_dims=2, max_side=3),
                        kwargs={"offset": st.integers(-3, 3)}, numpy=lambda a, offset: np.diagflat(a, offset))


# ---------------------------------------------------------------- scan and reductions
test_msort = op_test(F.msort, arg(distinct=True), shapes=NONEMPTY, numpy=lambda a: np.sort(a, axis=0))
test_aminmax = op_test(lambda x, axis, keepdims: F.stack(list(F.aminmax(x, axis=axis, keepdims=keepdims))),
                       arg(distinct=True), shapes=NONEMPTY,
                       kwargs={"axis": lambda s: st.none() | st.integers(-len(s), len(s) - 1), "keepdims": st.booleans()},
                       numpy=lambda a, axis, keepdims: np.stack([a.min(axis, keepdims=keepdims),
                                                                 a.max(axis, keepdims=keepdims)]))


def np_nanmean(a, axis, keepdims):
    with np.errstate(invalid="ignore"):  # (an all-NaN slice: 0 / 0)
        return np.nansum(a, axis, keepdims=keepdims) / (~np.isnan(a)).sum(axis, keepdims=keepdims)


REDUCE_KWARGS = {"axis": lambda s: mst.axes_for(len(s)), "keepdims": st.booleans()}
test_nansum = op_test(lambda x, axis, keepdims: F.nansum(x, axis, keepdims), arg(edges=(np.nan,), edge_probability=0.4),
                      kwargs=REDUCE_KWARGS, numpy=lambda a, axis, keepdims: np.nansum(a, axis, keepdims=keepdims))
test_nanmean = op_test(lambda x, axis, keepdims: F.nanmean(x, axis, keepdims), arg(edges=(np.nan,), edge_probability=0.4),
                       kwargs=REDUCE_KWARGS, numpy=np_nanmean)


@st.composite
def smaller_sizes(draw, shape):
    """A size that broadcasts to ``shape`` and is not it: some leading axes dropped, others kept or
    made 1 (to its own shape, sum_to_size gives x itself, as PyTorch's: nothing is summed)."""
    lead = draw(st.integers(0, len(shape)))
    return tuple(draw(st.sampled_from([1, n])) for n in shape[lead:])


def np_sum_to_size(a, size):
    lead = a.ndim - len(size)
    summed = a.sum(axis=tuple(range(lead)))
    return summed.sum(axis=tuple(i for i, n in enumerate(size) if n == 1), keepdims=True)


test_sum_to_size = op_test(lambda x, size: F.sum_to_size(x, size), arg(), shapes=NONEMPTY,
                           kwargs={"size": lambda s: smaller_sizes(s).filter(lambda size: size != s)},
                           numpy=np_sum_to_size)


def test_sum_to_size_of_its_own_shape_is_the_tensor_and_takes_pytorchs_spellings():
    torch = import_torch()
    x, tx = minitx.ones(2, 3), torch.ones(2, 3)
    assert x.sum_to_size(2, 3) is x and tx.sum_to_size(2, 3) is tx
    for ours, theirs in ((x.sum_to_size((1, 3)), tx.sum_to_size((1, 3))), (x.sum_to_size(size=(3,)), tx.sum_to_size(size=(3,))),
                         (x.sum_to_size(2, 1), tx.sum_to_size(2, 1))):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
test_dist = op_test(lambda a, b, p: F.dist(a, b + 10.0, p), arg(), arg(), broadcast=True,  # (no difference at 0)
                    kwargs={"p": st.sampled_from([0, 1, 1.5, 2, 3])},
                    numpy=lambda a, b, p: np.linalg.norm(np.ravel(a - b - 10.0), p))


# ---------------------------------------------------------------- linear algebra
def beta_alpha():
    return {"beta": st.sampled_from([0, 0.5, 1, -2]), "alpha": st.sampled_from([1, 2.5, -1])}


def input_shape(shape):
    """An input that broadcasts to ``shape``: that shape, its last axis, or 0-d."""
    return st.sampled_from([shape, shape[-1:], (1,) * len(shape), ()])


def np_scaled(i, product, beta, alpha):
    return alpha * product if beta == 0 else beta * i + alpha * product


test_mv = op_test(F.mv, arg(shape=mst.shapes(min_dims=2, max_dims=2)), arg(shape=lambda m: m[1:]),
                  numpy=lambda m, v: m @ v)
test_addmm = op_test(lambda i, a, b, beta, alpha: F.addmm(i, a, b, beta=beta, alpha=alpha),
                     arg(shape=lambda: st.sampled_from([(2, 3), (3,), (1, 1), ()])), arg(shape=(2, 4)), arg(shape=(4, 3)),
                     kwargs=beta_alpha(), numpy=lambda i, a, b, beta, alpha: np_scaled(i, a @ b, beta, alpha))
test_addmv = op_test(lambda i, m, v, beta, alpha: F.addmv(i, m, v, beta=beta, alpha=alpha),
                     arg(shape=lambda: st.sampled_from([(3,), (1,), ()])), arg(shape=(3, 2)), arg(shape=(2,)),
                     kwargs=beta_alpha(), numpy=lambda i, m, v, beta, alpha: np_scaled(i, m @ v, beta, alpha))
test_baddbmm = op_test(lambda i, a, b, beta, alpha: F.baddbmm(i, a, b, beta=beta, alpha=alpha),
                       arg(shape=lambda: input_shape((2, 3, 4))), arg(shape=(2, 3, 2)), arg(shape=(2, 2, 4)),
                       kwargs=beta_alpha(), numpy=lambda i, a, b, beta, alpha: np_scaled(i, a @ b, beta, alpha))
test_addbmm = op_test(lambda i, a, b, beta, alpha: F.addbmm(i, a, b, beta=beta, alpha=alpha),
                      arg(shape=lambda: input_shape((3, 4))), arg(shape=(2, 3, 2)), arg(shape=(2, 2, 4)),
                      kwargs=beta_alpha(), numpy=lambda i, a, b, beta, alpha: np_scaled(i, (a @ b).sum(0), beta, alpha))
test_addr = op_test(lambda i, u, v, beta, alpha: F.addr(i, u, v, beta=beta, alpha=alpha),
                    arg(shape=lambda: input_shape((3, 2))), arg(shape=(3,)), arg(shape=(2,)),
                    kwargs=beta_alpha(), numpy=lambda i, u, v, beta, alpha: np_scaled(i, np.outer(u, v), beta, alpha))


def test_beta_0_ignores_nan_and_inf_in_the_input_as_pytorch_documents():
    torch = import_torch()
    bad = np.array([[np.nan, np.inf], [-np.inf, 1.0]])
    a, b = np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(3, 2)
    ours = F.addmm(minitx.tensor(bad), minitx.tensor(a), minitx.tensor(b), beta=0, alpha=2)
    theirs = torch.addmm(torch.tensor(bad), torch.tensor(a), torch.tensor(b), beta=0, alpha=2)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert np.isfinite(ours.numpy()).all()
    assert np.isnan(F.addmm(minitx.tensor(bad), minitx.tensor(a), minitx.tensor(b), beta=0.5).numpy()[0, 0])


@pytest.mark.parametrize("name, dtype, beta, alpha", [
    ("addmm", "uint8", 2, -1),      # -1 is 255 in uint8: wraps, as PyTorch's
    ("addmm", "int64", 0.5, -2.5),  # floats truncated toward 0: beta 0, alpha -2
    ("addbmm", "int32", -1, 3),     # summed over the batch in int32, not widened to int64
    ("addr", "uint8", 1, -3),
    ("addr", "bool", 2, -1),        # logic: input or outer, beta and alpha as truth values
    ("addr", "bool", 0, 1),
])
def test_integer_and_boolean_tensors_as_pytorchs_kernels(name, dtype, beta, alpha):
    torch = import_torch()
    shapes = {"addmm": [(2, 3), (2, 4), (4, 3)], "addbmm": [(3, 4), (2, 3, 2), (2, 2, 4)], "addr": [(3, 2), (3,), (2,)]}
    rng = np.random.default_rng(0)
    arrays = [rng.integers(0, 3, shape).astype(dtype) for shape in shapes[name]]
    ours = getattr(F, name)(*map(minitx.tensor, arrays), beta=beta, alpha=alpha)
    theirs = getattr(torch, name)(*map(torch.from_numpy, arrays), beta=beta, alpha=alpha)
    assert str(theirs.dtype) == f"torch.{ours.dtype}"
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("call, error, message", [
    (lambda: F.rot90(minitx.zeros(2, 3), 1, (0, 0)), ValueError, r"^rot90: the two axes must differ, got \(0, 0\)"),
    (lambda: F.rot90(minitx.zeros(3), 1), ValueError, r"^rot90: needs two axes of a tensor with at least 2 axes, got "
                                                      r"axes \(0, 1\) of shape \(3,\)"),
    (lambda: F.rot90(minitx.zeros(2, 3), 1, (0, 2)), IndexError, r"^rot90: axis 2 is out of range"),
    (lambda: F.rot90(minitx.zeros(2, 3), 0.5), TypeError, r"^rot90: k must be an int, got 0.5"),
    (lambda: F.fliplr(minitx.zeros(3)), ValueError, r"^fliplr: needs a tensor with at least 2 axes, got shape \(3,\)"),
    (lambda: F.flipud(minitx.tensor(1.0)), ValueError, r"^flipud: needs a tensor with at least 1 axis"),
    (lambda: F.select(minitx.zeros(2, 3), 1, 3), IndexError, r"^select: index 3 is out of range for axis 1 of length "
                                                             r"3; expected an int in \[-3, 3\)"),
    (lambda: F.select(minitx.tensor(1.0), 0, 0), ValueError, r"^select: needs a tensor with at least 1 dimension"),
    (lambda: F.select(minitx.zeros(2, 3), 1, True), TypeError, r"^select: index must be an int, got True"),
    (lambda: F.select(minitx.zeros(2, 3), 1, 1.0), TypeError, r"^select: index must be an int, got 1.0"),
    (lambda: F.take(minitx.zeros(2, 2), minitx.tensor([4])), IndexError, r"^take: index 4 is out of range for the 4 "
                                                                         r"entries of x; expected \[-4, 4\)"),
    (lambda: F.take(minitx.zeros(2), minitx.tensor([0.0])), TypeError, r"^take: index must be an integer tensor"),
    (lambda: F.aminmax(minitx.zeros(0, 3), axis=0), ValueError, r"^aminmax: axis 0 of the input of shape \(0, 3\) "
                                                                r"has length 0"),
    (lambda: F.aminmax(minitx.zeros(0)), ValueError, r"^aminmax: axis 0 of the input of shape \(0,\) has length 0"),
    (lambda: F.nanmean(minitx.tensor([1, 2])), TypeError, r"^nanmean: expects a floating tensor, got dtype int64"),
    (lambda: F.sum_to_size(minitx.zeros(2, 3), 1, 2, 3), ValueError, r"^sum_to_size: size \(1, 2, 3\) does not "
                                                                     r"broadcast to the input's shape \(2, 3\)"),
    (lambda: F.sum_to_size(minitx.zeros(2, 3), 2, 0), ValueError, r"^sum_to_size: size \(2, 0\)"),
    (lambda: F.dist(minitx.zeros(2), minitx.zeros(2), -1), ValueError, r"^dist: p must be a number >= 0, inf or -inf"),
    (lambda: F.mv(minitx.zeros(2, 3), minitx.zeros(3, 1)), ValueError, r"^mv: expects a 2-d matrix and a 1-d vector, "
                                                                       r"got shapes \(2, 3\) and \(3, 1\)"),
    (lambda: F.addmm(minitx.zeros(2, 4), minitx.zeros(2, 3), minitx.zeros(3, 3)), ValueError,
     r"^addmm: input of shape \(2, 4\) does not broadcast to the product's shape \(2, 3\)"),
    (lambda: F.addmm(minitx.zeros(2, 2, 3), minitx.zeros(2, 4), minitx.zeros(4, 3)), ValueError,
     r"^addmm: input of shape \(2, 2, 3\) does not broadcast to the product's shape \(2, 3\)"),
    (lambda: F.addmm(minitx.zeros(2, 3), minitx.zeros(2, 3), minitx.zeros(3)), ValueError,
     r"^addmm: expects two tensors of 2 axes, got shapes \(2, 3\) and \(3,\)"),
    (lambda: F.baddbmm(minitx.zeros(2, 2, 2), minitx.zeros(2, 2, 3), minitx.zeros(1, 3, 2)), ValueError,
     r"^baddbmm: batch sizes differ"),
    (lambda: F.mv(minitx.zeros(2, 3), minitx.zeros(2)), ValueError,
     r"^mv: shapes \(2, 3\) and \(2,\) do not align: 3 != 2"),
    (lambda: F.addmm(minitx.zeros(2, 2), minitx.zeros(2, 3), minitx.zeros(2, 2)), ValueError,
     r"^addmm: shapes \(2, 3\) and \(2, 2\) do not align: 3 != 2"),
    (lambda: F.baddbmm(minitx.zeros(2, 2), minitx.zeros(1, 2, 3), minitx.zeros(1, 2, 2)), ValueError,
     r"^baddbmm: shapes \(1, 2, 3\) and \(1, 2, 2\) do not align: 3 != 2"),
    (lambda: F.addr(minitx.zeros(2, 2), minitx.zeros(2, 1), minitx.zeros(2)), ValueError,
     r"^addr: expects two 1-d vectors, got shapes \(2, 1\) and \(2,\)"),
    (lambda: F.addr(minitx.zeros(1, 1, dtype="int64"), minitx.ones(1, dtype="int64"), minitx.ones(1, dtype="int64"),
                    alpha=2.5), TypeError,
     r"^addr: beta and alpha must be whole numbers for integer tensors, as PyTorch's, got beta=1 and alpha=2.5"),
    (lambda: F.addmm(minitx.zeros(1, 1, dtype="uint8"), minitx.ones(1, 2, dtype="uint8"),
                     minitx.ones(2, 1, dtype="uint8"), alpha=-256), ValueError,
     r"^addmm: alpha -256 does not fit the tensor's uint8 \(from -255 to 255\), as PyTorch's"),
    (lambda: F.addmm(minitx.zeros(1, 1, dtype="uint8"), minitx.ones(1, 2, dtype="uint8"),
                     minitx.ones(2, 1, dtype="uint8"), beta=-0.5), ValueError,
     r"^addmm: beta -0.5 does not fit the tensor's uint8 \(from 0 to 255\)"),
    (lambda: F.baddbmm(minitx.zeros(1, 1, 1, dtype="bool"), minitx.ones(1, 1, 1, dtype="bool"),
                       minitx.ones(1, 1, 1, dtype="bool")), TypeError,
     r"^baddbmm: not defined for boolean tensors, as PyTorch's"),
    (lambda: minitx.zeros(5).split_with_sizes(2), TypeError, r"^split_with_sizes: split_sizes must be a list of sizes"),
])
def test_errors_name_the_op_what_it_got_and_what_it_expected(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool"])
@pytest.mark.parametrize("call", [
    lambda a, alpha: F.subtract(a, a, alpha=alpha), lambda a, alpha: a.sub(a, alpha=alpha),
    lambda a, alpha: a.add(a, alpha=alpha), lambda a, alpha: a.subtract(a, alpha=alpha),
    lambda a, alpha: a.clone().add_(a, alpha=alpha), lambda a, alpha: a.clone().sub_(a, alpha=alpha),
    lambda a, alpha: a.add(1, alpha=alpha)], ids=["subtract", "sub", "add", "Tensor.subtract", "add_", "sub_", "add number"])
def test_a_float_alpha_for_integral_tensors_is_refused_as_by_pytorch(call, dtype):
    """PyTorch refuses a float alpha where the result is integral (even 2.0) rather than compute in
    float32; an integer alpha, and a float alpha beside a float operand, are taken."""
    torch = import_torch()
    a = minitx.tensor(np.array([1, 0, 1]).astype(dtype))
    refusal = r"alpha .* float.*integral" + (r"|not defined for boolean tensors" if dtype == "bool" else "")
    for alpha in (0.5, 2.0, np.float32(0.5)):
        with pytest.raises(TypeError, match=refusal):  # (booleans are refused by sub first, as by PyTorch's)
            call(a, alpha)
        with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
            torch.sub(torch.tensor([1, 2]), torch.tensor([1, 2]), alpha=alpha)
    ints = minitx.tensor([1, 2, 3])
    np.testing.assert_array_equal(ints.add(ints, alpha=2).numpy(), [3, 6, 9])
    np.testing.assert_allclose(ints.sub(minitx.tensor([1.0, 2, 3]), alpha=0.5).numpy(), [0.5, 1, 1.5])


@pytest.mark.parametrize("alpha", [2, 0, -1, True, False])
def test_boolean_add_with_alpha_stays_boolean_as_pytorchs(alpha):
    """bool + alpha * bool is PyTorch's x or (alpha and y), a boolean tensor, in and out of place (an integer
    alpha 2 had made it int64)."""
    torch = import_torch()
    x, y = np.array([True, False, False]), np.array([True, True, False])
    theirs = torch.from_numpy(x).add(torch.from_numpy(y), alpha=alpha).numpy()
    for ours in (minitx.tensor(x).add(minitx.tensor(y), alpha=alpha),
                 minitx.tensor(x).add_(minitx.tensor(y), alpha=alpha), minitx.tensor(x).add(True, alpha=alpha)):
        assert ours.dtype.name == "bool"
    np.testing.assert_array_equal(minitx.tensor(x).add(minitx.tensor(y), alpha=alpha).numpy(), theirs)
    np.testing.assert_array_equal(minitx.tensor(x).add_(minitx.tensor(y), alpha=alpha).numpy(), theirs)


@pytest.mark.parametrize("call", [lambda a: a.add(a, alpha=True), lambda a: a.clone().add_(a, alpha=True),
                                  lambda a: a.sub(a, alpha=False), lambda a: F.subtract(a, 1, alpha=True)],
                         ids=["add", "add_", "sub", "subtract"])
@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_a_boolean_alpha_for_other_tensors_is_refused_as_by_pytorch(call, dtype):
    torch = import_torch()
    with pytest.raises(TypeError, match=rf"alpha True is a boolean, but the result is {dtype}, not boolean|"
                                        rf"alpha False is a boolean, but the result is {dtype}, not boolean"):
        call(minitx.tensor(np.array([1, 2]).astype(dtype)))
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
        torch.tensor([1, 2]).add(torch.tensor([1, 2]), alpha=True)
