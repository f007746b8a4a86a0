"""PyTorch's in-place methods in minitx (``x.exp_()``, ``x.scatter_(dim, index, src)`` ...: each
the out-of-place op written into x by ``Tensor._in_place``) against PyTorch's same call on the same
values, from one table of (method, arguments):

* the values and dtype written, and the tensor itself returned;
* on a computed tensor that requires grad, the write is recorded: the gradients (of the tensor's
  leaf and of the arguments) are PyTorch's;
* on a leaf that requires grad, refused as PyTorch refuses it;
* under no_grad, a value a graph saved, overwritten: that graph's backward raises, as PyTorch's;
* an integer tensor refuses what would not stay an integer (``exp_``), keeps what does.

Then the random fills (bernoulli_, exponential_, random_, cauchy_, log_normal_, geometric_: seeded,
repeatable, PyTorch's distributions), the Tensor.bernoulli and Tensor.multinomial methods, detach_, the
shape changes minitx refuses (t_, transpose_, unsqueeze_, squeeze_), and the functional forms
(F.relu_, torch.exp_, F.relu(x, inplace=True), nn.ReLU(inplace=True)).
"""
import math

import numpy as np
import pytest

from torch_reference import import_torch

torch = import_torch()

import minitx  # noqa: E402
import minitx.functional as F  # noqa: E402
from minitx import nn  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter"),  # (scatter_'s reduce=)
              pytest.mark.filterwarnings(r"ignore:index_reduce\(\) is in beta")]

RNG = np.random.default_rng(0)
A = RNG.uniform(0.5, 2.0, (3, 4)) * RNG.choice([-1.0, 1.0], (3, 4))  # float64, away from 0
P = np.abs(A)  # positive: log_, sqrt_ ...
B = RNG.standard_normal((3, 4))
ROW = RNG.standard_normal(4)  # an argument that broadcasts
NONFINITE = np.where(RNG.random((3, 4)) < 0.3, np.array([np.nan, np.inf, -np.inf])[RNG.integers(0, 3, (3, 4))], A)
MASK = RNG.random((3, 4)) < 0.5
INDEX = np.argsort(RNG.random((3, 4)), axis=0)[:2]  # (2, 4): distinct rows in each column
REPEATS = np.array([[0, 2, 2, 1], [0, 0, 2, 1]])  # targets named twice (the reductions)
COLUMNS = np.array([3, 0, 2])  # along axis 1
SRC = RNG.standard_normal((2, 4))
SOURCE = RNG.standard_normal((3, 3))
COMPARISONS = ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "not_equal_", "less_", "less_equal_", "greater_",
               "greater_equal_")
LOGIC = ("logical_not_", "logical_and_", "logical_or_", "logical_xor_")


def row(name, *args, values=A, gradient=True, **kwargs):
    """(label, (name, args, kwargs, values, gradient)): ``x.name(*args, **kwargs)`` for x holding
    ``values``; NumPy arrays among the arguments become tensors of each library (float arrays
    float64, the others their dtype). ``gradient``: PyTorch has one to compare."""
    shown = ", ".join([f"array{a.shape}" if isinstance(a, np.ndarray) else repr(a) for a in args]
                      + [f"{k}={v!r}" for k, v in kwargs.items()])
    return f"{name}({shown})", (name, args, kwargs, values, gradient)


CASES = dict([
    # unary math
    *(row(name) for name in ("abs_", "neg_", "exp_", "expm1_", "reciprocal_", "square_", "sign_", "sin_", "cos_",
                             "tanh_", "sigmoid_", "relu_", "floor_", "ceil_", "trunc_", "round_", "zero_")),
    *(row(name, values=P) for name in ("log_", "log1p_", "sqrt_", "rsqrt_")),
    row("round_", decimals=1, values=A * 3),
    row("nan_to_num_", nan=0.5, posinf=9.0, values=NONFINITE),
    # bounds
    row("clamp_", -1.0, 1.0), row("clamp_", min=0.7), row("clip_", -1.0, 1.0), row("clamp_min_", 0.7),
    row("clamp_max_", -0.7),
    # binary and ternary
    row("add_", B, alpha=-0.5), row("sub_", ROW), row("mul_", 2.5), row("mul_", B), row("div_", P), row("pow_", 2),
    row("pow_", B, values=P), row("fmod_", 1.5), row("remainder_", 1.5), row("remainder_", P), row("lerp_", B, 0.3),
    row("lerp_", B, P / 2), row("addcmul_", B, ROW, value=0.5), row("addcdiv_", B, P, value=-2),
    row("fill_", 2.5), row("copy_", ROW), row("fill_diagonal_", 2.5),
    # indexed writes
    row("masked_fill_", MASK, -1.0), row("masked_scatter_", MASK, B),
    row("scatter_", 0, INDEX, SRC), row("scatter_", 0, INDEX, 2.0), row("scatter_", 0, INDEX, value=2.0),
    row("scatter_", 0, REPEATS, SRC, reduce="add", gradient=False),  # (PyTorch's has no gradient with reduce)
    row("scatter_", 0, REPEATS, SRC, reduce="multiply", gradient=False),
    row("scatter_add_", 0, REPEATS, SRC), row("scatter_reduce_", 0, REPEATS, SRC, "amax", include_self=False),
    row("scatter_reduce_", 0, REPEATS, SRC, "mean"),
    row("index_add_", 1, COLUMNS, SOURCE, alpha=0.5), row("index_fill_", 1, COLUMNS, -1.0),
    row("index_copy_", 1, COLUMNS, SOURCE),
    row("index_put_", (np.array([2, 0]), np.array([1, -1])), np.array([0.5, -1.5])),
    row("index_put_", (np.array([0, 2, 0]),), ROW, accumulate=True),
    row("index_reduce_", 1, COLUMNS[:2], SOURCE[:, :2], "amax"), row("index_reduce_", 1, COLUMNS, SOURCE, "prod"),
    row("index_reduce_", 1, np.array([1, 1, 0]), SOURCE, "mean", include_self=False),
    # more math, and PyTorch's second names
    *(row(name) for name in ("tan_", "atan_", "arctan_", "sinh_", "cosh_", "erf_", "exp2_", "fix_", "absolute_",
                             "negative_")),
    *(row(name, values=A / 2.5) for name in ("asin_", "arcsin_", "acos_", "arccos_")),
    # (PyTorch has no gradient for asinh_, acosh_, atanh_ in place, nor for floor_divide_)
    *(row(name, gradient=False) for name in ("asinh_", "arcsinh_")),
    *(row(name, values=A / 2.5, gradient=False) for name in ("atanh_", "arctanh_")),
    *(row(name, values=P + 1, gradient=False) for name in ("acosh_", "arccosh_")),
    *(row(name, values=P) for name in ("log2_", "log10_")),
    *(row(name, B) for name in ("atan2_", "arctan2_", "hypot_", "copysign_", "multiply_")),
    # (PyTorch has no gradient of igamma and igammac in their first argument, nor minitx's gammainc)
    *(row(name, P + ROW ** 2, values=P, gradient=False) for name in ("igamma_", "igammac_")),
    row("mvlgamma_", 3, values=P + 1.5),
    row("subtract_", ROW, alpha=0.5), row("divide_", P), row("divide_", P, rounding_mode="floor"),
    row("true_divide_", P), row("floor_divide_", 0.75, gradient=False), row("float_power_", 2.5, values=P),
    # comparisons and logic: 1 or 0 written in x's dtype (ties and zeros drawn); their gradients
    # (none to the arguments) are test_a_comparison_or_logic_in_place_writes_a_constant's
    *(row(name, np.where(MASK, A, B), gradient=False) for name in COMPARISONS),
    *(row(name, np.where(MASK, B, 0.0), values=np.where(MASK.T.reshape(3, 4), A, 0.0), gradient=False)
      for name in LOGIC[1:]),
    row("logical_not_", values=np.where(MASK, A, 0.0), gradient=False),
    # along an axis
    row("cumsum_", 1), row("cumsum_", dim=0), row("cumprod_", 0), row("tril_"), row("triu_", 1),
])


def arguments(lib, args, kwargs, dtype="float64"):
    """The case's arguments for ``lib``: arrays as its tensors (float ones as ``dtype``: index_add_
    and the scatters take x's), the rest as they are."""
    def convert(a):
        if isinstance(a, tuple):  # (index_put_'s indices)
            return tuple(map(convert, a))
        if not isinstance(a, np.ndarray):
            return a
        return lib.tensor(a, dtype=getattr(lib, dtype)) if a.dtype.kind == "f" else lib.tensor(a)

    return [convert(a) for a in args], {k: convert(v) for k, v in kwargs.items()}


def call(x, lib, name, args, kwargs, dtype="float64"):
    """x.name(*args, **kwargs) with the arguments as ``lib``'s."""
    call_args, call_kwargs = arguments(lib, args, kwargs, dtype)
    return getattr(x, name)(*call_args, **call_kwargs)


def same(ours, theirs, rtol=1e-13):
    assert ours.shape == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=rtol, atol=1e-14, equal_nan=True)


@pytest.mark.parametrize("label, dtype", [(label, dtype) for dtype in ("float64", "float32") for label in sorted(CASES)
                                          if dtype == "float64" or not label.startswith("float_power_")])
def test_writes_pytorchs_values_and_returns_the_tensor(label, dtype):  # (float_power_ float64 only: its own test)
    name, args, kwargs, values, _ = CASES[label]
    results = []
    for lib in (minitx, torch):
        x = lib.tensor(values, dtype=getattr(lib, dtype))
        memory = x.data if lib is minitx else x.data_ptr()
        assert call(x, lib, name, args, kwargs, dtype) is x
        assert (x.data is memory) if lib is minitx else x.data_ptr() == memory  # written into its own memory
        results.append(x)
    same(*results, rtol=1e-13 if dtype == "float64" else 1e-6)


def float_tensors(args, kwargs, lib):
    return [a for a in [*args, *kwargs.values()] if isinstance(a, lib.Tensor) and a.is_floating_point()]


@pytest.mark.parametrize("label", sorted(label for label, case in CASES.items() if case[4]))
def test_a_computed_tensor_records_the_write_with_pytorchs_gradients(label):
    """x = leaf * 1, then x.name_(args): x keeps requiring grad, and its gradient reaches the leaf
    and the float arguments through the recorded write (a write of constants, fill_ or zero_, or
    of a result that takes no gradient, floor_, gives the leaf a zero gradient, as PyTorch's)."""
    name, args, kwargs, values, _ = CASES[label]
    weights = RNG.standard_normal(values.shape)
    gradients = []
    for lib in (minitx, torch):
        leaf = lib.tensor(values, requires_grad=True)
        x = leaf * 1
        call_args, call_kwargs = arguments(lib, args, kwargs)
        taking = [t.requires_grad_() for t in float_tensors(call_args, call_kwargs, lib)]
        assert getattr(x, name)(*call_args, **call_kwargs) is x and x.requires_grad and not x.is_leaf
        (x * lib.tensor(weights)).sum().backward()
        gradients.append([leaf.grad] + [t.grad for t in taking])
    for ours, theirs in zip(*gradients, strict=True):
        if theirs is None:  # (PyTorch: an argument the write did not reach, e.g. nothing masked)
            assert ours is None or not ours.numpy().any()
        else:
            same(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("label", sorted(label for label, (_, args, kwargs, _, gradient) in CASES.items() if gradient
                                   and any(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in args)))
def test_an_argument_that_requires_grad_makes_a_plain_tensors_write_recorded(label):
    """x needs no gradient, an argument does: x becomes the write's output, as in PyTorch."""
    name, args, kwargs, values, _ = CASES[label]
    weights = RNG.standard_normal(values.shape)
    gradients = []
    for lib in (minitx, torch):
        x = lib.tensor(values)
        call_args, call_kwargs = arguments(lib, args, kwargs)
        taking = [t.requires_grad_() for t in float_tensors(call_args, call_kwargs, lib)]
        assert getattr(x, name)(*call_args, **call_kwargs) is x and x.requires_grad and not x.is_leaf
        (x * lib.tensor(weights)).sum().backward()
        gradients.append([t.grad for t in taking])
    for ours, theirs in zip(*gradients, strict=True):
        same(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("label", sorted(label for label in CASES if not label.startswith(LOGIC)))
def test_a_leaf_that_requires_grad_is_refused_as_pytorch_refuses_it(label):
    name, args, kwargs, values, _ = CASES[label]
    x = minitx.tensor(values, requires_grad=True)
    with pytest.raises(RuntimeError, match=rf"^{name}: a leaf tensor that requires grad cannot be changed in place "
                                           rf"while a graph is recorded .*minitx.no_grad\(\)"):
        call(x, minitx, name, args, kwargs)
    np.testing.assert_array_equal(x.numpy(), values)  # nothing written
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        call(torch.tensor(values, requires_grad=True), torch, name, args, kwargs)


@pytest.mark.parametrize("label", sorted(CASES))
def test_a_saved_value_overwritten_then_backward_raises_as_pytorchs(label):
    """mul saved x for w's gradient; x.name_() under no_grad writes into x: the gradient would be
    wrong, so backward refuses (the version counter, minitx.autograd.inplace), as PyTorch's."""
    name, args, kwargs, values, _ = CASES[label]
    for lib, message in ((minitx, "modified in place after the forward pass"),
                         (torch, "modified by an inplace operation")):
        x, w = lib.tensor(values), lib.tensor(B, requires_grad=True)
        y = (x * w).sum()
        with lib.no_grad():
            call(x, lib, name, args, kwargs)
        with pytest.raises(RuntimeError, match=message):
            y.backward()


@pytest.mark.parametrize("name", COMPARISONS + LOGIC)
def test_a_comparison_or_logic_in_place_writes_a_constant(name):
    """x.eq_(y) on a computed tensor: x's new values take no gradient, so what x was gets 0, as
    PyTorch gives it from eq_ and the other comparisons. PyTorch records no logical_*_ at all (x keeps
    its old grad_fn, and the leaf gets the gradient of the values overwritten), and takes a leaf that
    requires grad; minitx records these as the comparisons (docs/ops.md)."""
    args = () if name == "logical_not_" else (B,)
    weights = RNG.standard_normal(A.shape)
    gradients = []
    for lib in (minitx, torch):
        leaf = lib.tensor(A, requires_grad=True)
        x = leaf * 1
        call(x, lib, name, args, {})
        (x * lib.tensor(weights)).sum().backward()
        gradients.append(leaf.grad.numpy())
    assert not gradients[0].any()
    if name in LOGIC:
        np.testing.assert_array_equal(gradients[1], weights)  # (PyTorch's, through the values overwritten)
        with pytest.raises(RuntimeError, match=f"^{name}: a leaf tensor that requires grad cannot be changed"):
            call(minitx.tensor(A, requires_grad=True), minitx, name, args, {})
    else:
        assert not gradients[1].any()


def test_float_power_in_place_keeps_float64_only_as_pytorch():
    """float_power computes in float64; PyTorch's float_power_ refuses any other dtype rather than round it."""
    for dtype in ("float32", "int64"):
        x = minitx.tensor([1, 2, 3], dtype=dtype)
        with pytest.raises(TypeError, match=rf"^float_power_: the result is float64, and the tensor's dtype is "
                                            rf"{dtype} .*write x = x.float_power\(exponent\)"):
            x.float_power_(2)
        assert x.dtype == dtype and x.tolist() == [1, 2, 3]
        with pytest.raises(RuntimeError, match="the base given to float_power_ has dtype"):
            torch.tensor([1, 2, 3], dtype=getattr(torch, dtype)).float_power_(2)


def test_a_recorded_write_of_another_tensors_values_gives_x_an_array_of_its_own():
    """copy_ of a tensor of x's shape while recording: x takes a copy, not src's array (a later
    write into x would change src)."""
    src = minitx.tensor(B)
    x = minitx.tensor(A, requires_grad=True) * 1
    x.copy_(src)
    with minitx.no_grad():
        x.add_(1.0)
    np.testing.assert_array_equal(src.numpy(), B)
    np.testing.assert_array_equal(x.numpy(), B + 1)


# ---------------------------------------------------------------------- integer and float dtypes
INTEGERS = np.array([[-3, 0, 2, 7], [5, -1, 4, 9], [1, 6, -8, 3]])


@pytest.mark.parametrize("name, args", [("exp_", ()), ("log_", ()), ("sqrt_", ()), ("sigmoid_", ()), ("tanh_", ()),
                                        ("sin_", ()), ("reciprocal_", ()), ("rsqrt_", ()), ("div_", (2,)),
                                        ("mul_", (0.5,)), ("lerp_", (INTEGERS * 2.0, 0.5)), ("true_divide_", (2,)),
                                        ("divide_", (2,)), ("atan2_", (INTEGERS,)), ("hypot_", (INTEGERS,)),
                                        ("acos_", ()), ("erf_", ()), ("exp2_", ()), ("log2_", ())])
def test_an_integer_tensor_refuses_a_result_that_is_no_integer_as_pytorch(name, args):
    x = minitx.tensor(INTEGERS)
    with pytest.raises(TypeError, match=rf"^{name}: the result has dtype float\d+, which cannot be stored in the "
                                        rf"tensor's dtype int64 \(same-kind casting\); write x = x\.{name[:-1]}"):
        call(x, minitx, name, args, {})
    assert x.tolist() == INTEGERS.tolist()  # nothing written
    with pytest.raises(RuntimeError):
        call(torch.tensor(INTEGERS), torch, name, args, {})


@pytest.mark.parametrize("name, args", [("abs_", ()), ("neg_", ()), ("square_", ()), ("sign_", ()), ("relu_", ()),
                                        ("clamp_", (-2, 5)), ("pow_", (2,)), ("fmod_", (3,)), ("remainder_", (3,)),
                                        ("mul_", (INTEGERS,)), ("index_fill_", (1, COLUMNS, -4)),
                                        ("scatter_add_", (0, REPEATS, INTEGERS[:2])), ("absolute_", ()),
                                        ("negative_", ()), ("fix_", ()), ("floor_divide_", (3,)),
                                        ("divide_", (3, "floor")), ("divide_", (-3, "trunc")),
                                        ("bitwise_not_", ()), ("bitwise_and_", (INTEGERS.T.reshape(3, 4),)),
                                        ("bitwise_or_", (6,)), ("bitwise_xor_", (INTEGERS[0],)),
                                        ("bitwise_left_shift_", (2,)), ("bitwise_right_shift_", (1,)),
                                        ("cumsum_", (1,)), ("cumprod_", (0,)), ("eq_", (INTEGERS.T.reshape(3, 4),)),
                                        ("ge_", (2,)), ("logical_xor_", (INTEGERS[0],)), ("fill_diagonal_", (-4,))])
def test_an_integer_tensor_keeps_an_integer_result_as_pytorch(name, args):
    if name == "divide_" and len(args) == 2:  # (its rounding_mode= a keyword)
        args, kwargs = args[:1], {"rounding_mode": args[1]}
    else:
        kwargs = {}
    results = [call(lib.tensor(INTEGERS), lib, name, args, kwargs) for lib in (minitx, torch)]
    same(*results, rtol=0)


def test_a_float32_tensor_stays_float32_beside_float64_arguments():
    results = []
    for lib in (minitx, torch):
        x = lib.tensor(A, dtype=lib.float32)
        x.mul_(lib.tensor(B)).addcmul_(lib.tensor(B), lib.tensor(ROW)).sub_(lib.tensor(B), alpha=2).clamp_(-1.0, 1.0)
        results.append(x)
    same(*results, rtol=1e-6)


# ---------------------------------------------------------------------- random fills
FILLS = {"bernoulli_": (0.3,), "exponential_": (2.0,), "random_": (), "random_(10)": (10,), "random_(-5, 5)": (-5, 5),
         "cauchy_": (0.5, 2.0), "log_normal_": (0.5, 0.25), "geometric_": (0.3,)}


@pytest.mark.parametrize("label", sorted(FILLS))
def test_a_random_fill_is_seeded_and_repeatable(label):
    name = label.split("(")[0]
    draws = []
    for seed in (0, 0, 1):
        minitx.manual_seed(seed)
        x = minitx.zeros(2000, dtype="float64")
        assert getattr(x, name)(*FILLS[label]) is x and x.dtype == np.float64
        draws.append(x.numpy().copy())
    np.testing.assert_array_equal(draws[0], draws[1])
    assert not np.array_equal(draws[0], draws[2])
    generator = minitx.Generator().manual_seed(5)
    once = getattr(minitx.zeros(50), name)(*FILLS[label], generator=generator).numpy()
    again = getattr(minitx.zeros(50), name)(*FILLS[label], generator=generator.manual_seed(5)).numpy()
    np.testing.assert_array_equal(once, again)


def test_the_random_fills_draw_pytorchs_distributions():
    """Not PyTorch's numbers (another generator), but its distributions and ranges, dtype by dtype."""
    minitx.manual_seed(0)
    n = 20000
    x = minitx.zeros(n).bernoulli_(0.3)
    assert set(np.unique(x.numpy())) == {0.0, 1.0} and abs(x.numpy().mean() - 0.3) < 0.02
    p = minitx.tensor(np.tile([0.0, 1.0], n // 2))
    np.testing.assert_array_equal(minitx.zeros(n, dtype="int32").bernoulli_(p).numpy(), p.numpy())  # p a tensor
    assert abs(minitx.zeros(n).exponential_(4.0).numpy().mean() - 0.25) < 0.01
    for dtype, top in (("float32", 2 ** 24), ("float16", 2 ** 11), ("uint8", 255), ("bool", 1)):
        drawn = minitx.zeros(n, dtype=dtype).random_().numpy().astype(np.float64)
        theirs = torch.zeros(n, dtype=getattr(torch, dtype)).random_().double().numpy()
        assert 0 <= drawn.min() and drawn.max() <= top and theirs.max() <= top
        assert drawn.max() > top * 0.99 and drawn.dtype  # the whole range is drawn
    drawn = minitx.zeros(n, dtype="int64").random_(-5, 5).numpy()
    assert drawn.dtype == np.int64 and set(np.unique(drawn)) == set(range(-5, 5))
    assert set(np.unique(minitx.zeros(n).random_(to=3).numpy())) == {0.0, 1.0, 2.0}


def _normal_cdf(z):
    return 0.5 * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))


# fill -> (arguments, the CDF of its distribution with them): PyTorch's parameters (log_normal_'s mean
# and std are its log's)
CONTINUOUS = {"cauchy_": ((1.5, 0.5), lambda x: 0.5 + np.arctan((x - 1.5) / 0.5) / np.pi),
              "log_normal_": ((0.5, 0.75), lambda x: _normal_cdf((np.log(x) - 0.5) / 0.75)),
              "exponential_": ((4.0,), lambda x: 1 - np.exp(-4.0 * x))}


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_the_continuous_fills_draw_their_distribution_as_pytorchs_do(name):
    """Kolmogorov-Smirnov: the largest gap D between the samples' empirical CDF and the distribution's.
    For the right distribution sqrt(n) D passes 2.6 with chance 2 exp(-2 * 2.6^2) < 3e-6 (the seed is
    fixed besides); a scale or a centre off by a tenth moves it past 4.8. PyTorch's samples pass the
    same test, so the parameters mean what PyTorch's mean."""
    args, cdf = CONTINUOUS[name]
    n = 100_000
    minitx.manual_seed(0)
    torch.manual_seed(0)
    for drawn in (getattr(minitx.zeros(n, dtype="float64"), name)(*args).numpy(),
                  getattr(torch.zeros(n, dtype=torch.float64), name)(*args).numpy()):
        x = np.sort(drawn)
        expected = cdf(x)
        gap = max(np.max(np.arange(1, n + 1) / n - expected), np.max(expected - np.arange(n) / n))
        assert math.sqrt(n) * gap < 2.6


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8"])
def test_geometric_counts_the_trials_to_the_first_success_as_pytorchs(dtype):
    """P(k) = (1 - p)^(k - 1) p for k = 1, 2, ...: each k's share within 5 standard errors, in both
    libraries; past what the dtype holds, a float's inf (as PyTorch's), an integer's largest value."""
    n, p = 20_000, 0.3
    minitx.manual_seed(1)
    torch.manual_seed(1)
    for drawn in (minitx.zeros(n, dtype=dtype).geometric_(p).numpy(),
                  torch.zeros(n, dtype=getattr(torch, dtype)).geometric_(p).numpy()):
        assert drawn.dtype == dtype and drawn.min() == 1
        k = np.arange(1, 16)
        pmf = (1 - p) ** (k - 1) * p
        share = (drawn[:, None] == k).mean(axis=0)
        np.testing.assert_array_less(np.abs(share - pmf), 5 * np.sqrt(pmf * (1 - pmf) / n))
    assert minitx.zeros(3, dtype="float16").geometric_(1e-9).numpy().tolist() == [np.inf] * 3
    assert minitx.zeros(3, dtype="uint8").geometric_(1e-9).numpy().tolist() == [255] * 3


def test_bernoulli_and_multinomial_methods_are_the_functions_on_the_tensor():
    """x.bernoulli() draws 1 with x's probabilities (or p for all), x.multinomial(k) indices by x's weights,
    as PyTorch's methods; from a generator= the draws repeat."""
    probs = minitx.tensor([0.0, 1.0, 0.0, 1.0])
    assert probs.bernoulli().tolist() == [0.0, 1.0, 0.0, 1.0] and probs.bernoulli(1.0).tolist() == [1.0] * 4
    assert probs.bernoulli().dtype == np.float32 and probs.double().bernoulli().dtype == np.float64
    weights = minitx.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]])
    assert weights.multinomial(1).tolist() == [[1], [0]] == torch.tensor(weights.numpy()).multinomial(1).tolist()
    assert weights.multinomial(3, replacement=True).tolist() == [[1, 1, 1], [0, 0, 0]]
    once = minitx.full((50,), 0.5).bernoulli(generator=minitx.Generator().manual_seed(2)).numpy()
    again = minitx.full((50,), 0.5).bernoulli(generator=minitx.Generator().manual_seed(2)).numpy()
    np.testing.assert_array_equal(once, again)
    minitx.manual_seed(7)
    one = minitx.ones(20).multinomial(5).numpy()
    minitx.manual_seed(7)
    np.testing.assert_array_equal(one, minitx.multinomial(minitx.ones(20), 5).numpy())
    with pytest.raises(ValueError, match="^multinomial: cannot draw 4 samples from 3 categories without replacement"):
        weights.multinomial(4)


@pytest.mark.parametrize("call, error, match", [
    (lambda t: t.bernoulli_(1.5), ValueError, r"^bernoulli_: p must be in \[0, 1\], got 1.5"),
    (lambda t: t.exponential_(0.0), ValueError, r"^exponential_: lambd \(the rate\) must be > 0, got 0.0"),
    (lambda t: t.long().exponential_(), TypeError, "^exponential_: needs a floating dtype, got int64"),
    (lambda t: t.random_(5, 2), ValueError, r"^random_: \[from, to\) = \[5, 2\) must hold a number"),
    (lambda t: t.bool().random_(5), ValueError, r"^random_: \[from, to\) = \[0, 5\) must hold a number and fit the "
                                                r"tensor's bool \(whole numbers from 0 to 1\)"),
    (lambda t: t.random_(0.5), TypeError, r"^random_: expected random_\(\), random_\(to\) or random_\(from, to\)"),
    (lambda t: t.cauchy_(0.0, 0.0), ValueError, r"^cauchy_: sigma \(the scale\) must be > 0, got 0.0"),
    (lambda t: t.long().cauchy_(), TypeError, "^cauchy_: needs a floating dtype, got int64"),
    (lambda t: t.log_normal_(1.0, -1.0), ValueError, "^log_normal_: std must be > 0, got -1.0"),
    (lambda t: t.long().log_normal_(), TypeError, "^log_normal_: needs a floating dtype, got int64"),
    (lambda t: t.geometric_(1.0), ValueError, r"^geometric_: p must be in \(0, 1\), got 1.0"),
    (lambda t: t.geometric_(0), ValueError, r"^geometric_: p must be in \(0, 1\), got 0"),
    (lambda t: t.bool().geometric_(0.5), TypeError, "^geometric_: needs a number dtype, got bool"),
])
def test_random_fills_refuse_what_pytorch_refuses(call, error, match):
    with pytest.raises(error, match=match):
        call(minitx.zeros(3))
    with pytest.raises((RuntimeError, TypeError)):
        call(torch.zeros(3))


@pytest.mark.parametrize("name, args", [("uniform_", (-1.0, 1.0)), ("normal_", (0.0, 2.0)), ("bernoulli_", (0.5,)),
                                        ("exponential_", (2.0,)), ("random_", (5,)), ("cauchy_", ()),
                                        ("log_normal_", ()), ("geometric_", (0.5,))])
def test_random_fills_are_in_place_writes_as_pytorchs(name, args):
    """Refused into a leaf that requires grad while a graph is recorded, allowed under no_grad; a
    computed tensor keeps requiring grad, with gradient 0 to what it was."""
    for lib in (minitx, torch):
        w = lib.tensor(A, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf" if lib is torch else f"^{name}: a leaf tensor that requires"):
            getattr(w, name)(*args)
        with lib.no_grad():
            assert getattr(w, name)(*args) is w
        h = w * 2
        assert getattr(h, name)(*args) is h and h.requires_grad
        (h * 3).sum().backward()
        assert w.grad is not None and not w.grad.numpy().any()


# ---------------------------------------------------------------------- detach_ and the shape changes
def test_detach_cuts_the_tensor_from_the_graph_in_place_as_pytorchs():
    """Ops that used it before still send their gradient back; it becomes a leaf needing none."""
    grads = []
    for lib in (minitx, torch):
        a = lib.tensor(A, requires_grad=True)
        d = a * 2
        e = d * 3  # before the detach: its gradient still reaches a through d
        array = d.data if lib is minitx else None
        assert d.detach_() is d
        assert not d.requires_grad and d.is_leaf and d.grad_fn is None
        assert lib is torch or d.data is array  # the same array
        (e.sum() + (d * a).sum()).backward()  # after it: d is a constant
        grads.append(a.grad)
        leaf = lib.tensor(A, requires_grad=True)
        assert not leaf.detach_().requires_grad and leaf.is_leaf
    same(*grads)


@pytest.mark.parametrize("name, args, rewrite", [("t_", (), r"x\.t\(\)"),
                                                 ("transpose_", (0, 1), r"x\.swapaxes\(dim0, dim1\)"),
                                                 ("unsqueeze_", (0,), r"x\.unsqueeze\(dim\)"),
                                                 ("squeeze_", (), r"x\.squeeze\(dim\)"),
                                                 ("swapaxes_", (0, 1), r"x\.swapaxes\(dim0, dim1\)"),
                                                 ("swapdims_", (1, 0), r"x\.swapdims\(dim0, dim1\)")])
def test_a_shape_change_in_place_is_refused_with_what_to_write(name, args, rewrite):
    """docs/ops.md says why: a tensor's shape is its array's, made by the op its graph records."""
    x = minitx.tensor(A)
    with pytest.raises(TypeError, match=rf"^{name}: minitx changes no tensor's shape in place .*write x = {rewrite}"):
        getattr(x, name)(*args)
    assert x.shape == A.shape
    assert getattr(torch.tensor(A), name)(*args).shape != A.shape or name == "squeeze_"  # (PyTorch's: in place)


# ---------------------------------------------------------------------- functional forms and layers
@pytest.mark.parametrize("ours, theirs", [
    (lambda x: F.relu_(x), lambda x: torch.nn.functional.relu_(x)),
    (lambda x: minitx.relu_(x), lambda x: torch.relu_(x)),
    (lambda x: minitx.exp_(x), lambda x: torch.exp_(x)),
    (lambda x: minitx.clamp_(x, -0.5, 0.5), lambda x: torch.clamp_(x, -0.5, 0.5)),
    (lambda x: F.leaky_relu_(x, 0.2), lambda x: torch.nn.functional.leaky_relu_(x, 0.2)),
    (lambda x: F.hardtanh_(x, -0.5, 1.0), lambda x: torch.nn.functional.hardtanh_(x, -0.5, 1.0)),
    (lambda x: F.elu(x, 0.5, inplace=True), lambda x: torch.nn.functional.elu(x, 0.5, inplace=True)),
    (lambda x: F.threshold(x, 0.1, 2.0, inplace=True), lambda x: torch.nn.functional.threshold(x, 0.1, 2.0, True)),
    (lambda x: F.dropout(x, 0.4, training=False, inplace=True), lambda x: torch.nn.functional.dropout(
        x, 0.4, training=False, inplace=True)),
    (lambda x: nn.ReLU(inplace=True)(x), lambda x: torch.nn.ReLU(inplace=True)(x)),
    (lambda x: nn.Hardswish(inplace=True)(x), lambda x: torch.nn.Hardswish(inplace=True)(x)),
])
def test_functional_forms_and_layers_write_into_their_input_as_pytorchs(ours, theirs):
    gradients = []
    for lib, call in ((minitx, ours), (torch, theirs)):
        leaf = lib.tensor(A, requires_grad=True)
        x = leaf * 1
        assert call(x) is x
        x.sum().backward()
        gradients.append((x, leaf.grad))
    for a, b in zip(*gradients, strict=True):
        same(a, b)


def test_dropout_in_place_while_training_drops_what_it_writes():
    minitx.manual_seed(0)
    x = minitx.ones(1000, dtype="float64")
    kept = nn.Dropout(0.25, inplace=True)(x)
    assert kept is x and set(np.unique(x.numpy())) == {0.0, 1 / 0.75}


def test_in_place_through_a_view_writes_into_the_tensor_it_views_as_pytorch():
    """No gradient involved: the write goes through the view (v = y[0]: y changes)."""
    results = []
    for lib in (minitx, torch):
        y = lib.tensor(A)
        y[0].exp_()
        y[:, 1].scatter_(0, lib.tensor([2]), 5.0)
        results.append(y)
    same(*results)


def test_a_write_through_a_view_while_recording_goes_into_the_tensor_it_views_as_pytorch():
    """y[0].sigmoid_() while y is in the graph: y's row is written, with its gradient."""
    results = []
    for lib in (minitx, torch):
        w = lib.tensor(A, requires_grad=True)
        y = w * 1
        y.T[1].mul_(w[1, 1])
        y[0].sigmoid_()  # (last: PyTorch's sigmoid saved its output, which a later write would change)
        (y * y).sum().backward()
        results.append([y, w.grad])
    for ours, theirs in zip(*results):
        same(ours, theirs, rtol=1e-12)


def test_a_write_through_a_view_of_a_leaf_that_requires_grad_is_refused_naming_the_method():
    w = minitx.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^sigmoid_: the tensor is a view of a leaf that requires grad, whose "
                                           r"gradient would not see the write; .*under minitx.no_grad\(\).*x\.sigmoid"):
        w[0].sigmoid_()
    with pytest.raises(RuntimeError):
        torch.tensor(A, requires_grad=True)[0].sigmoid_()


def test_inplace_true_on_a_view_while_recording_writes_into_the_tensor_as_pytorch():
    """inplace=True on a view of a tensor in the graph (as Flatten's output is) writes through it."""
    results = []
    for lib, tf in ((minitx, F), (torch, torch.nn.functional)):
        w = lib.tensor(A, requires_grad=True)
        y = w * 1
        out = lib.nn.ReLU(inplace=True)(y.reshape(12))
        dropped = tf.dropout(y.T, 0.5, inplace=True, training=False)
        (out.sum() + (y * dropped.T).sum()).backward()
        results.append([out, y, dropped, w.grad])
    for ours, theirs in zip(*results):
        same(ours, theirs)


def test_inplace_true_where_the_write_is_refused_computes_out_of_place():
    """inplace=True saves memory; where the write is refused (a view of a leaf that requires grad)
    the layer gives a new tensor, with the gradient PyTorch's out-of-place layer would have."""
    w = minitx.tensor(A, requires_grad=True)
    out = nn.ReLU(inplace=True)(w.reshape(12))
    np.testing.assert_array_equal(out.numpy(), np.maximum(A.reshape(12), 0))
    np.testing.assert_array_equal(w.numpy(), A)  # not written
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), (A > 0).astype(w.dtype))


def test_an_augmented_operator_on_a_leaf_view_is_written_back_by_python():
    """x[0] += w is Python's x[0] = x[0] + w: the view's new values are assigned back (recorded)."""
    w = minitx.tensor([1.0, 2.0], requires_grad=True)
    x = minitx.tensor([[3.0, 4.0], [5.0, 6.0]])
    x[0] += w
    x.sum().backward()
    np.testing.assert_array_equal(x.numpy(), [[4.0, 6.0], [5.0, 6.0]])
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])


def test_an_empty_tensor_takes_an_in_place_write_as_pytorchs():
    """No elements, none that share memory (NumPy gives an empty array strides of 0): a write is a no-op."""
    for lib in (minitx, torch):
        assert lib.zeros(3, 0).fill_(7).shape == (3, 0) and lib.zeros(0, 2).add_(1).shape == (0, 2)
        h = lib.zeros(3, 0, requires_grad=True) * 2
        assert h.fill_(1) is h and h.requires_grad
    assert minitx.zeros(3, 0).data.strides == (0, 0)  # (why the broadcast check must count elements)
