"""Tensor: creation and dtypes, operators, indexing, conversions, repr, creation functions."""
import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F


@pytest.mark.parametrize("data, kwargs, dtype", [
    (1.5, {}, "float32"),
    ([[1.0, 2.0]], {}, "float32"),
    (3, {}, "int64"),
    ([1, 2, 3], {}, "int64"),
    (np.array([1, 2], np.int32), {}, "int32"),  # arrays keep their dtype, as torch.tensor
    (np.array([1, 2], np.int8), {}, "int8"),
    ([True, False], {}, "bool"),
    (np.array([1.0, 2.0]), {}, "float64"),
    (np.array([1.0], np.float32), {}, "float32"),
    (np.array([1.0], np.float16), {}, "float16"),
    (np.float16(1.5), {}, "float16"),
    ([1, 2], {"dtype": "float64"}, "float64"),
    ([1.7, 2.2], {"dtype": minitx.int32}, "int32"),
    ([1, 0], {"dtype": np.bool_}, "bool"),
    ([1, 2], {"dtype": np.dtype("uint8")}, "uint8"),
])
def test_tensor_dtypes(data, kwargs, dtype):
    t = minitx.tensor(data, **kwargs)
    assert t.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(t.numpy(), np.asarray(data).astype(dtype))


def test_tensor_copies_its_data():
    source = np.array([1.0, 2.0])
    t = minitx.tensor(source)
    source[0] = 9
    assert t.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("dtype", ["complex64", "bogus", object, np.longdouble])
def test_unknown_dtype_lists_the_valid_ones(dtype):
    with pytest.raises(TypeError, match=r"unknown dtype .*expected one of float16, float32, float64, int8"):
        minitx.tensor([1.0], dtype=dtype)


@pytest.mark.parametrize("array", [np.ones(2, np.longdouble), np.ones(2, np.complex64), np.complex128(1)])
def test_an_array_of_a_dtype_minitx_lacks_is_refused_not_converted(array):
    """float128 to float32 would lose digits silently: tensor() and Tensor() ask for dtype= instead."""
    with pytest.raises(TypeError, match=f"tensor: cannot hold an array of dtype {array.dtype}; expected one of"):
        minitx.tensor(array)
    with pytest.raises(TypeError, match=f"Tensor: cannot hold an array of dtype {array.dtype}"):
        minitx.Tensor(array)
    if array.dtype.kind == "f":
        assert minitx.tensor(array, dtype="float64").dtype == np.float64


@pytest.mark.parametrize("dtype", [">f4", ">f8", ">i8", ">u2"])
def test_an_array_in_the_other_byte_order_is_copied_into_this_machines_or_refused_by_name(dtype):
    """Data read from a big-endian file: kept as it was, its tensor's dtype was not float32 to ==
    and DLPack refused to export it (PyTorch refuses the array itself); tensor() and as_tensor()
    copy it into this machine's order, and the wrappers, which cannot copy, say how."""
    array = np.arange(3).astype(dtype)
    native = np.dtype(dtype).newbyteorder("=")
    for t in (minitx.tensor(array), minitx.as_tensor(array), minitx.tensor([1, 2], dtype=dtype),
              minitx.ones(2).to(dtype)):
        assert t.dtype == native.name and t.dtype.isnative
    assert minitx.tensor(array).tolist() == [0, 1, 2]
    np.testing.assert_array_equal(np.from_dlpack(minitx.tensor(array)), array)  # (DLPack takes native order only)
    for wrap in (minitx.from_numpy, minitx.Tensor):
        with pytest.raises(TypeError, match=rf"cannot hold an array of dtype {dtype}.* is {native.name} in the other "
                                            r"byte order: minitx.tensor\(array\) copies it"):
            wrap(array)


def test_tensor_from_unsupported_data():
    with pytest.raises(TypeError, match="cannot make a tensor"):
        minitx.tensor(["a", "b"])


# ---------------------------------------------------------------- operators

A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
B = np.array([[0.5, -1.0, 2.0], [1.5, 2.5, -0.5]])

BINARY = [operator.add, operator.sub, operator.mul, operator.truediv]


@pytest.mark.parametrize("op", BINARY + [operator.pow], ids=lambda op: op.__name__)
def test_binary_operators_between_tensors(op):
    a, b = minitx.tensor(A, requires_grad=True), minitx.tensor(np.abs(B))
    np.testing.assert_allclose(op(a, b).numpy(), op(A, np.abs(B)))
    assert op(a, b).requires_grad


@pytest.mark.parametrize("op", BINARY + [operator.pow], ids=lambda op: op.__name__)
@pytest.mark.parametrize("other", [2.0, 3, np.array([1.0, 2.0, 4.0])], ids=["float", "int", "ndarray"])
def test_operators_with_numbers_and_arrays_on_either_side(op, other):
    t = minitx.tensor(A)
    for result, expected in ((op(t, other), op(A, other)), (op(other, t), op(other, A))):
        assert isinstance(result, minitx.Tensor)
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)


def test_a_python_number_keeps_the_tensor_dtype():
    t = minitx.tensor([1.0, 2.0])
    assert (t * 2).dtype == np.float32 and (2.5 + t).dtype == np.float32
    assert (minitx.tensor([1, 2]) + 1).dtype == np.int64


@pytest.mark.parametrize("make_int", [lambda: minitx.tensor([1, 2, 3]), lambda: minitx.tensor([True, False, True])])
def test_integers_meeting_floats_take_the_float_dtype(make_int):
    """As in PyTorch: int * 0.5 is float32, int + a float64 tensor is float64, int / int is
    float32, int + int stays int."""
    ints = make_int()
    assert (ints * 0.5).dtype == np.float32 and (0.5 + ints).dtype == np.float32
    if ints.dtype == np.bool_:  # subtracting booleans: refused, as by NumPy and PyTorch
        with pytest.raises(TypeError, match="sub: not defined for boolean tensors"):
            0.5 - ints
    else:
        assert (0.5 - ints).dtype == np.float32
    np.testing.assert_allclose((ints * 0.5).numpy(), ints.numpy() * 0.5)
    for float_dtype in ("float32", "float64"):
        floats = minitx.tensor([1.5, 2.5, 3.5], dtype=float_dtype)
        assert (ints + floats).dtype == float_dtype and (floats / (ints.astype("int64") + 1)).dtype == float_dtype
    assert (ints.astype("int64") * 3).dtype == np.int64
    assert (ints / 2).dtype == np.float32 and (ints ** 0.5).dtype == np.float32
    np.testing.assert_allclose((ints / 2).numpy(), ints.numpy() / 2)


def test_numbers_beside_bool_tensors_count_as_integers():
    flags = minitx.tensor([True, False])
    assert (flags + 1).numpy().tolist() == [2, 1] and (flags * 3).dtype == np.int64


def test_matmul_and_unary_operators():
    a, b = minitx.tensor(A), minitx.tensor(B.T)
    np.testing.assert_allclose((a @ b).numpy(), A @ B.T, rtol=1e-6)
    np.testing.assert_allclose((A @ minitx.tensor(B.T)).numpy(), A @ B.T, rtol=1e-6)
    np.testing.assert_array_equal((-a).numpy(), -A)
    np.testing.assert_array_equal(abs(minitx.tensor(B)).numpy(), np.abs(B))


@pytest.mark.parametrize("op", [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge],
                         ids=lambda op: op.__name__)
@pytest.mark.parametrize("other", [2.0, B], ids=["number", "array"])
def test_comparisons_give_bool_tensors_without_grad(op, other):
    a = minitx.tensor(A, requires_grad=True)
    result = op(a, minitx.tensor(other) if isinstance(other, np.ndarray) else other)
    assert result.dtype == np.bool_ and not result.requires_grad
    np.testing.assert_array_equal(result.numpy(), op(A, other))
    np.testing.assert_array_equal((~result).numpy(), ~op(A, other))


@pytest.mark.parametrize("scalar", [np.float64(1.5), np.float32(1.5), np.int32(2), np.bool_(True)],
                         ids=lambda s: type(s).__name__)
def test_a_numpy_scalar_keeps_its_dtype(scalar):
    """A NumPy scalar is an array value, not Python data (where 1.5 would become float32): it
    gives the tensor its 0-d array gives."""
    for make in (minitx.Tensor, minitx.tensor):
        made, from_array = make(scalar), make(np.asarray(scalar))
        assert made.dtype == from_array.dtype and made.shape == () and made.item() == scalar.item()
    assert minitx.tensor(np.float64(1.5)).dtype == minitx.Tensor(np.float64(1.5)).dtype == np.float64


@pytest.mark.parametrize("data", [[1, 0, 2], [True, False, True], [1.5, 0.0, -0.0, np.nan, np.inf]],
                         ids=["int", "bool", "float"])
def test_logical_not_is_the_not_of_truthiness_as_numpy(data):
    x = minitx.tensor(data)
    for out in (F.logical_not(x), F.logical_not(data)):
        assert out.dtype == np.bool_
        np.testing.assert_array_equal(out.numpy(), np.logical_not(np.array(data)))
    np.testing.assert_array_equal((~minitx.tensor([True, False])).numpy(), [False, True])


def test_ops_on_real_numbers_make_integers_float32_as_pytorch():
    """exp, log, sqrt, tanh, sigmoid, gelu, logsumexp, softmax, log_softmax and layer_norm of an
    integer tensor are float32 (PyTorch's default float; numpy would give float64), and
    int @ float32 is float32, as int * float32 is."""
    ints = minitx.tensor([[1, 2], [3, 4]])
    ops_on_reals = [F.exp, F.log, F.sqrt, F.tanh, F.sigmoid, F.gelu, F.logsumexp, F.softmax, F.log_softmax,
                    F.layer_norm, lambda t: t.exp()]
    for fn in ops_on_reals:
        out = fn(ints)
        assert out.dtype == np.float32, fn
        np.testing.assert_allclose(out.numpy(), fn(ints.astype("float32")).numpy())
    for float_dtype in ("float32", "float64"):
        floats = minitx.tensor([[0.5], [1.5]], dtype=float_dtype)
        for product in (ints @ floats, floats.T @ ints, ints * floats.T):
            assert product.dtype == float_dtype
        np.testing.assert_allclose((ints @ floats).numpy(), ints.numpy() @ floats.numpy())
    assert (ints @ ints).dtype == np.int64


def test_tensors_stay_hashable():
    t = minitx.tensor([1.0])
    assert {t: 1}[t] == 1


# ---------------------------------------------------------------- indexing and conversions


@pytest.mark.parametrize("index", [
    0, -1, (1, 2), (slice(None), 1), (Ellipsis, slice(0, 2)), (None, 1), [1, 0, 1],
    (np.array([0, 1]), np.array([2, 2])), A > 2,
], ids=repr)
def test_indexing_matches_numpy(index):
    t = minitx.tensor(A, requires_grad=True)
    np.testing.assert_array_equal(t[index].numpy(), A[index])
    t[index].sum().backward()
    expected = np.zeros_like(A)
    np.add.at(expected, index, 1.0)
    np.testing.assert_array_equal(t.grad.numpy(), expected)


def test_indexing_with_a_tensor_and_bad_index_types():
    t = minitx.tensor(A)
    np.testing.assert_array_equal(t[minitx.tensor([1, 1])].numpy(), A[[1, 1]])
    with pytest.raises(TypeError, match="getitem: index arrays must be integer or boolean"):
        t[minitx.tensor([0.0])]
    with pytest.raises(IndexError, match="getitem"):
        t[5]


def test_conversions():
    t = minitx.tensor(A)
    assert isinstance(t.numpy(), np.ndarray) and t.tolist() == A.tolist()
    assert minitx.tensor([[2.5]]).item() == 2.5 and isinstance(minitx.tensor(3).item(), int)
    assert float(minitx.tensor(1.5)) == 1.5 and int(minitx.tensor(7)) == 7
    assert np.asarray(t).shape == (2, 3) and len(t) == 2
    assert t.shape == (2, 3) and t.ndim == 2 and t.size == 6 and t.device == "cpu"
    np.testing.assert_array_equal(t.T.numpy(), A.T)
    with pytest.raises(ValueError, match=r"item: only a one-element tensor.*\(2, 3\)"):
        t.item()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(t)
    with pytest.raises(TypeError, match="0-d"):
        len(minitx.tensor(1.0))


@pytest.mark.parametrize("method", ["reshape", "view", "transpose", "permute"])
def test_shape_methods_take_varargs_or_a_tuple(method):
    t = minitx.tensor(np.arange(6.0))
    if method in ("transpose", "permute"):
        t, args = t.reshape(2, 3), (1, 0)
    else:
        args = (3, 2)
    np.testing.assert_array_equal(getattr(t, method)(*args).numpy(), getattr(t, method)(args).numpy())
    assert getattr(t, method)(*args).shape == (3, 2)


def test_repr():
    assert repr(minitx.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(minitx.tensor([1, 2])) == "tensor([1, 2], dtype=int64)"
    assert repr(minitx.tensor([1.0], requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert "grad_fn=mul" in repr(minitx.tensor([1.0], requires_grad=True) * 2)


def test_the_repr_of_an_empty_tensor_says_its_shape_as_pytorchs():
    torch = pytest.importorskip("torch")
    for shape in [(2, 0), (0, 5), (1, 0, 3)]:
        assert repr(minitx.zeros(*shape)) == repr(torch.zeros(*shape)) == f"tensor([], size={shape})"
    assert repr(minitx.zeros(0)) == repr(torch.zeros(0)) == "tensor([])"
    assert repr(minitx.zeros(3, 0, dtype="int64")) == "tensor([], size=(3, 0), dtype=int64)"


def test_a_bfloat16_tensor_prints_as_floats():
    """ml_dtypes' bfloat16 has no NumPy float format: 1.0 printed as 1, an integer tensor's look.
    It prints as the float16 and float32 ones do (and as PyTorch's: 1.0000e+00 beside 1e-08)."""
    pytest.importorskip("ml_dtypes")
    assert repr(minitx.tensor([1.0, 2.0]).bfloat16()) == "tensor([1., 2.], dtype=bfloat16)"
    assert repr(minitx.tensor([1.0, 1e-8, -2.5]).bfloat16()) == (
        "tensor([ 1.0000e+00,  1.0012e-08, -2.5000e+00], dtype=bfloat16)")


@pytest.mark.parametrize("convert, dtype", [
    (lambda t: t.to(dtype="float32"), "float32"),
    (lambda t: t.astype(minitx.float32), "float32"),
    (lambda t: t.float(), "float32"),
    (lambda t: t.double(), "float64"),
])
def test_dtype_change_carries_the_gradient_back(convert, dtype):
    x = minitx.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    y = convert(x)
    assert y.dtype == np.dtype(dtype)
    (y * y).sum().backward()
    assert x.grad.dtype == np.float64
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_to_same_dtype_and_device_is_a_no_op_and_long_drops_the_graph():
    x = minitx.tensor([1.5, 2.5], requires_grad=True)
    assert x.to("cpu") is x and x.cpu() is x and x.to(dtype="float32") is x
    assert x.long().tolist() == [1, 2] and x.long().dtype == np.int64
    (x.long().astype("float32") + x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


# ---------------------------------------------------------------- creation functions


@pytest.mark.parametrize("make, expected", [
    (lambda: minitx.zeros(2, 3), np.zeros((2, 3), np.float32)),
    (lambda: minitx.zeros((2, 3), dtype="int64"), np.zeros((2, 3), np.int64)),
    (lambda: minitx.ones(4), np.ones(4, np.float32)),
    (lambda: minitx.ones((1, 2), dtype="float64"), np.ones((1, 2))),
    (lambda: minitx.full((2, 2), 7.5), np.full((2, 2), 7.5, np.float32)),
    (lambda: minitx.full(3, 1, dtype="int32"), np.full(3, 1, np.int32)),
    (lambda: minitx.arange(5), np.arange(5)),
    (lambda: minitx.arange(2, 10, 3), np.arange(2, 10, 3)),
    (lambda: minitx.arange(0, 1, 0.25, dtype="float32"), np.arange(0, 1, 0.25, dtype=np.float32)),
    (lambda: minitx.zeros_like(minitx.tensor([1, 2])), np.zeros(2, np.int64)),
    (lambda: minitx.ones_like(minitx.tensor([[1.0]], dtype="float64")), np.ones((1, 1))),
    (lambda: minitx.eye(3), np.eye(3, dtype=np.float32)),
    (lambda: minitx.eye(2, 4, dtype="int64"), np.eye(2, 4, dtype=np.int64)),
    (lambda: minitx.linspace(-1, 1, 5), np.linspace(-1, 1, 5, dtype=np.float32)),
    (lambda: minitx.linspace(0, 1, 0, dtype="float64"), np.linspace(0, 1, 0)),
    (lambda: minitx.full_like(minitx.tensor([1.0, 2.0]), 3.5), np.full(2, 3.5, np.float32)),
])
def test_creation_functions(make, expected):
    t = make()
    assert t.dtype == expected.dtype
    np.testing.assert_array_equal(t.numpy(), expected)


def test_creation_with_requires_grad():
    assert minitx.zeros(2, requires_grad=True).requires_grad
    assert minitx.randn(2, dtype="float64", requires_grad=True).requires_grad


@pytest.mark.parametrize("sample", [minitx.randn, minitx.rand])
def test_random_tensors_are_reproducible_under_manual_seed(sample):
    minitx.manual_seed(123)
    first, second = sample(3, 4), sample(3, 4)
    minitx.manual_seed(123)
    np.testing.assert_array_equal(sample(3, 4).numpy(), first.numpy())
    np.testing.assert_array_equal(sample((3, 4)).numpy(), second.numpy())
    assert first.dtype == np.float32 and not np.array_equal(first.numpy(), second.numpy())


def test_rand_is_in_unit_interval_and_randn_looks_normal():
    minitx.manual_seed(0)
    u, z = minitx.rand(10_000).numpy(), minitx.randn(10_000, dtype="float64").numpy()
    assert u.min() >= 0 and u.max() < 1
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05


@pytest.mark.parametrize("seed", [-1, 1.5, "3"])
def test_manual_seed_rejects_bad_seeds(seed):
    with pytest.raises(ValueError, match="manual_seed"):
        minitx.manual_seed(seed)


@pytest.mark.parametrize("data, dtype", [([1.0, 2.0], "float32"), (3.5, "float32"), ([1, 2], "int64"),
                                         ([True], "bool")])
def test_Tensor_and_tensor_infer_the_same_dtype_from_python_data(data, dtype):
    assert minitx.Tensor(data).dtype == minitx.tensor(data).dtype == np.dtype(dtype)


def test_invert_is_bitwise_on_integers_and_logical_on_booleans():
    """~ as NumPy and PyTorch have it: bits flipped in integers (~1 == -2), not a logical not."""
    import numpy as np

    assert (~minitx.tensor([1, 0, -3])).tolist() == [-2, -1, 2]
    assert (~minitx.Tensor(np.array([5], dtype=np.uint8))).tolist() == [250]
    assert (~minitx.tensor([True, False])).tolist() == [False, True]
    with pytest.raises(TypeError, match="~ \\(invert\\): defined for boolean and integer tensors, got dtype float32"):
        ~minitx.tensor([1.0])


def test_empty_has_the_shape_and_dtype_asked_and_creation_matches_pytorch():
    torch = pytest.importorskip("torch")
    t = minitx.empty(2, 3, dtype="float64")
    assert t.shape == (2, 3) and t.dtype == np.float64
    np.testing.assert_array_equal(minitx.eye(3, 2).numpy(), torch.eye(3, 2).numpy())
    np.testing.assert_allclose(minitx.linspace(-2.5, 4, 7).numpy(), torch.linspace(-2.5, 4, 7).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="linspace: steps must be a whole number >= 0, got -1"):
        minitx.linspace(0, 1, -1)


@given(shape=st.lists(st.integers(0, 3), max_size=3).map(tuple),
       dtype=st.sampled_from(["float32", "float64", "int32", "int64", "bool"]))
def test_full_like_keeps_the_tensors_dtype_and_empty_takes_its_shape_either_way(shape, dtype):
    """full_like as NumPy's and PyTorch's: the tensor's dtype unless one is given; empty(2, 3) and
    empty((2, 3)) are one shape, as zeros'."""
    t = minitx.zeros(shape, dtype=dtype)
    like = minitx.full_like(t, 1)
    assert like.dtype == np.dtype(dtype) and like.shape == shape
    np.testing.assert_array_equal(like.numpy(), np.full(shape, 1, dtype))
    assert minitx.full_like(t, 2, dtype="float64").dtype == np.float64
    for made in (minitx.empty(shape, dtype=dtype), minitx.empty(*shape, dtype=dtype)):
        assert made.shape == shape and made.dtype == np.dtype(dtype)


def _copied(lib, kind, how):
    """What copy.copy or copy.deepcopy keeps of a tensor or parameter with a .grad and a hook:
    (type, requires_grad, .grad's values or None, .grad shared, data shared, hook kept)."""
    import copy

    data = lib.tensor([1.0, 2.0], requires_grad=True) if kind == "tensor" else lib.nn.Parameter(lib.tensor([1.0, 2.0]))
    (data * 3.0).sum().backward()
    data.register_hook(lambda g: g * 10.0)
    twin = getattr(copy, how)(data)
    grad = None if twin.grad is None else twin.grad.detach().numpy().tolist()
    shared_grad = twin.grad is not None and np.shares_memory(twin.grad.detach().numpy(), data.grad.detach().numpy())
    shared_data = np.shares_memory(twin.detach().numpy(), data.detach().numpy())
    before = grad
    (twin * 1.0).sum().backward()
    hooked = twin.grad.detach().numpy().tolist()[0] - (before[0] if before else 0.0) == 10.0
    return type(twin).__name__, twin.requires_grad, grad, shared_grad, shared_data, hooked, data.grad.numpy().tolist()


@pytest.mark.parametrize("how", ["copy", "deepcopy"])
@pytest.mark.parametrize("kind", ["tensor", "parameter"])
def test_copies_keep_of_grad_and_hooks_what_pytorchs_keep(kind, how):
    """copy.copy shares the data but not .grad (a shared .grad would take the copy's gradients too)
    nor the hooks; copy.deepcopy copies a tensor's .grad and hooks but gives a parameter neither, as
    PyTorch's Parameter.__deepcopy__ (a model copied starts without gradients)."""
    import warnings

    from torch_reference import import_torch

    torch = import_torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's copy.copy warns that the hook is not copied)
        theirs = _copied(torch, kind, how)
    assert _copied(minitx, kind, how) == theirs


@pytest.mark.parametrize("kind", ["tensor", "parameter"])
def test_a_pickle_written_before_the_requires_grad_property_loads(kind, monkeypatch):
    """Tensors pickled when requires_grad was itself a slot (their state's key 'requires_grad', not
    '_requires_grad') load with their flag, values and .grad; saved in the old slots' order, the flag
    came before _ctx, which the property's setter reads."""
    import pickle

    t = minitx.nn.Parameter(minitx.tensor([1.0, 2.0])) if kind == "parameter" else minitx.tensor([1.0, 2.0])
    grad = minitx.tensor([0.5, -0.5])
    old = {"data": t.data, "_grad": grad, "requires_grad": True, "_ctx": None, "_retains_grad": False,
           "_hooks": None, "_cell": None, "_views": None, "_base": None}
    with monkeypatch.context() as patched:
        new = minitx.Tensor.__getstate__  # (for the .grad inside)
        patched.setattr(type(t), "__getstate__", lambda self: old if self is t else new(self))
        written = pickle.dumps(t)
    loaded = pickle.loads(written)
    assert type(loaded) is type(t) and loaded.requires_grad and loaded.is_leaf
    np.testing.assert_array_equal(loaded.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(loaded.grad.numpy(), [0.5, -0.5])
    (loaded * loaded).sum().backward()
    np.testing.assert_array_equal(loaded.grad.numpy(), [2.5, 3.5])
