"""Creation functions: the dtypes they choose (PyTorch's rules), the *_like forms, the
constructors over existing memory (from_numpy, as_tensor) and PyTorch's dtype names."""
import re
import warnings

import numpy as np
import pytest

import minitx
from torch_reference import import_torch

# (function, arguments, keywords): each called on minitx and on torch alike
DTYPE_CASES = [
    ("full", ((2,), 7), {}),
    ("full", ((2,), True), {}),
    ("full", ((2,), 7.5), {}),
    ("full", ((2,), np.float64(1.5)), {}),  # a NumPy scalar counts as a Python number
    ("full", ((2,), np.int32(3)), {}),
    ("full", ((2,), 7), {"dtype": "float64"}),
    ("full", ((2,), -1.5), {"dtype": "int64"}),
    ("arange", (5,), {}),
    ("arange", (2, 10, 3), {}),
    ("arange", (0, 5, 0.5), {}),
    ("arange", (0.0, 5), {}),
    ("arange", (np.int64(4),), {}),
    ("arange", (5,), {"dtype": "float64"}),
    ("linspace", (0, 10, 5), {}),
    ("linspace", (-10, 10, 7), {"dtype": "int64"}),  # truncated toward 0
    ("linspace", (0, 1, 4), {"dtype": "float64"}),
    ("eye", (3,), {}),
    ("eye", (2, 3), {"dtype": "int64"}),
    ("zeros", (2, 3), {}),
    ("ones", (2,), {"dtype": "bool"}),
    ("empty", (2,), {}),
    ("zeros", (2,), {"dtype": "int32"}),
]


def _torch_kwargs(torch, kwargs):
    return {k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}


@pytest.mark.parametrize("name, args, kwargs", DTYPE_CASES, ids=lambda v: repr(v)[:30])
def test_creation_dtypes_and_values_match_pytorch(name, args, kwargs):
    torch = import_torch()
    ours = getattr(minitx, name)(*args, **kwargs)
    theirs = getattr(torch, name)(*args, **_torch_kwargs(torch, kwargs))
    assert ours.dtype == str(theirs.dtype).removeprefix("torch.")
    if name != "empty":
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_full_infers_the_dtype_as_tensor_does():
    for value in (7, True, 7.5, -(2 ** 40)):
        assert minitx.full((3,), value).dtype == minitx.tensor(value).dtype
        assert minitx.full((3,), value).tolist() == [value] * 3
    assert minitx.full((3,), 7.5).dtype == minitx.get_default_dtype()


SIZE_CASES = [("zeros", {"size": (2, 3)}), ("ones", {"size": [4]}), ("empty", {"size": ()}), ("rand", {"size": (2, 3)}),
              ("randn", {"size": (3,)}), ("full", {"size": (2, 3), "fill_value": 1.5}),
              ("full", {"size": (2,), "fill_value": 7}), ("full", {"fill_value": True, "size": (1, 2)})]


@pytest.mark.parametrize("name, kwargs", SIZE_CASES, ids=lambda v: str(v))
def test_pytorchs_size_and_fill_value_keywords(name, kwargs):
    """zeros(size=(2, 3)) is zeros(2, 3), full(size=, fill_value=) full(shape, value), as PyTorch's."""
    torch = import_torch()
    minitx.manual_seed(3)
    ours = getattr(minitx, name)(**kwargs)
    theirs = getattr(torch, name)(**kwargs)
    assert ours.shape == tuple(theirs.shape) and ours.dtype == str(theirs.dtype).removeprefix("torch.")
    minitx.manual_seed(3)
    positional = (kwargs["size"],) + ((kwargs["fill_value"],) if "fill_value" in kwargs else ())
    again = getattr(minitx, name)(*positional)
    if name != "empty":
        np.testing.assert_array_equal(ours.numpy(), again.numpy())
    if name in ("zeros", "ones", "full"):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_full_like_takes_fill_value_and_the_shape_is_given_once():
    assert minitx.full_like(minitx.zeros(2, dtype="int64"), fill_value=3).tolist() == [3, 3]
    assert minitx.full((2,), fill_value=0.5).tolist() == [0.5, 0.5]
    for call, message in ((lambda: minitx.zeros(2, size=(3,)), r"^zeros: got the shape twice, \(2,\) and size=\(3,\)"),
                          (lambda: minitx.rand((2,), size=(3,)), r"^rand: got the shape twice"),
                          (lambda: minitx.full((2,), 1, size=(2,)), r"^full: expected shape \(or PyTorch's size=\) once, "
                                                                    r"got both"),
                          (lambda: minitx.full((2,), 1, fill_value=1), r"^full: expected value .* got both"),
                          (lambda: minitx.full(size=(2,)), r"^full: expected value \(or PyTorch's fill_value=\) once, "
                                                           r"got neither")):
        with pytest.raises(TypeError, match=message):
            call()


LIKE = [
    (minitx.zeros_like, (), "zeros_like"),
    (minitx.ones_like, (), "ones_like"),
    (minitx.empty_like, (), "empty_like"),
    (minitx.full_like, (2.7,), "full_like"),
    (minitx.randint_like, (10,), "randint_like"),
]


@pytest.mark.parametrize("make, args, name", LIKE, ids=[case[2] for case in LIKE])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_like_forms_keep_the_tensors_dtype_unless_given_one_as_pytorch(make, args, name, dtype):
    torch = import_torch()
    t = minitx.zeros((2, 3), dtype=dtype)
    ours, theirs = make(t, *args), getattr(torch, name)(torch.zeros((2, 3), dtype=getattr(torch, dtype)), *args)
    assert ours.shape == (2, 3) and ours.dtype == str(theirs.dtype).removeprefix("torch.") == dtype
    if name in ("zeros_like", "ones_like", "full_like"):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    given = make(t, *args, dtype="float64", device="cpu", requires_grad=name != "randint_like")
    assert given.dtype == np.float64 and given.device == "cpu"


@pytest.mark.parametrize("make", [minitx.rand_like, minitx.randn_like])
def test_rand_like_and_randn_like_keep_a_float_dtype_and_refuse_integers(make):
    assert make(minitx.zeros(2, dtype="float64")).dtype == np.float64
    assert make(minitx.zeros(2, dtype="int64"), dtype="float16").dtype == np.float16
    with pytest.raises(TypeError, match=f"{make.__name__}: needs a floating dtype, got int64"):
        make(minitx.zeros(2, dtype="int64"))


# ---------------------------------------------------------------- over existing memory


def test_from_numpy_shares_memory_both_ways_and_keeps_the_dtype():
    a = np.arange(4, dtype=np.int16)
    t = minitx.from_numpy(a)
    assert t.dtype == np.int16 and t.data is a
    a[0] = 9
    t.data[1] = 7
    assert t.tolist() == [9, 7, 2, 3] and a.tolist() == [9, 7, 2, 3]


@pytest.mark.parametrize("data, message", [
    (np.ones(2, np.complex64), "from_numpy: cannot hold an array of dtype complex64; expected one of float16"),
    (np.ones(2, np.longdouble), "from_numpy: cannot hold an array of dtype float128"),
    ([1, 2], "from_numpy: expected a numpy.ndarray, got list"),
    (np.float32(1), "from_numpy: expected a numpy.ndarray, got float32"),
])
def test_from_numpy_refuses_what_it_cannot_share(data, message):
    if np.dtype(np.longdouble).itemsize == 8 and "float128" in message:
        pytest.skip("longdouble is float64 here")
    with pytest.raises(TypeError, match=message):
        minitx.from_numpy(data)


def test_as_tensor_copies_only_when_it_must():
    a = np.ones(3, np.float64)
    assert minitx.as_tensor(a).data is a                    # same dtype and device: a view
    assert minitx.as_tensor(a, device="cpu").data is a
    t = minitx.tensor([1.0, 2.0])
    assert minitx.as_tensor(t) is t and minitx.as_tensor(t, dtype=minitx.float) is t
    converted = minitx.as_tensor(a, dtype="float32")        # another dtype: a copy
    assert converted.dtype == np.float32 and converted.data is not a
    assert minitx.as_tensor([1, 2]).dtype == np.int64 and minitx.as_tensor(2.5).dtype == np.float32
    assert minitx.as_tensor(np.float64(2.5)).dtype == np.float64


def test_as_tensor_keeps_a_gradient_through_a_conversion_and_matches_pytorch():
    torch = import_torch()
    x = minitx.tensor([1.0, 2.0], requires_grad=True)
    minitx.as_tensor(x, dtype="float64").sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    a = np.arange(3)
    assert minitx.as_tensor(a).dtype == str(torch.as_tensor(a).dtype).removeprefix("torch.")
    assert minitx.as_tensor(torch.arange(3.0)).tolist() == [0.0, 1.0, 2.0]


def test_is_tensor_and_get_default_dtype():
    assert minitx.is_tensor(minitx.zeros(1)) and not minitx.is_tensor(np.zeros(1)) and not minitx.is_tensor(1.0)
    assert minitx.get_default_dtype() == minitx.float32 == minitx.zeros(1).dtype


# ---------------------------------------------------------------- PyTorch's dtype names


@pytest.mark.parametrize("alias, dtype", [("long", "int64"), ("int", "int32"), ("short", "int16"),
                                          ("float", "float32"), ("double", "float64"), ("half", "float16"),
                                          ("bool", "bool")])
def test_pytorch_dtype_names(alias, dtype):
    name = getattr(minitx, alias)
    x = minitx.tensor([1, 0], dtype=name)
    assert x.dtype == name and x.dtype == dtype and x.dtype == np.dtype(dtype)  # the comparisons that work
    assert minitx.zeros(2).to(name).dtype == dtype and minitx.zeros(2).to(dtype=name).dtype == dtype
    assert x.dtype != ("float64" if dtype != "float64" else "int64")


def test_pytorch_dtype_names_leave_the_builtins_alone():
    import builtins

    namespace = {}
    exec("from minitx import *", namespace)
    assert not {"float", "int", "bool", "long"} & set(namespace)
    assert builtins.float is not minitx.float and builtins.bool(minitx.bool)


def test_tensor_of_a_tensor_that_requires_grad_copies_it_detached_with_a_warning():
    """minitx.tensor(w) copies w's values into a new leaf, as torch.tensor(w) does, and says (as
    PyTorch says) that the copy leaves w's graph: a gradient through the copy never reaches w."""
    w = minitx.tensor([1.5, -2.0], requires_grad=True)
    with pytest.warns(UserWarning, match=r"^tensor: copying a minitx Tensor that requires grad: the copy is "
                                         r"detached") as caught:
        copied = minitx.tensor(w)
    assert caught[0].filename == __file__  # the user's line
    assert copied.tolist() == [1.5, -2.0] and not copied.requires_grad
    assert not np.shares_memory(copied.data, w.data)
    with pytest.warns(UserWarning, match=r"^tensor: copying a minitx Tensor"):
        minitx.tensor(w * 2)  # an op's result that requires grad: the same
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert minitx.tensor(w.detach()).tolist() == [1.5, -2.0]  # said so: no warning
        assert minitx.tensor(minitx.tensor([1, 2])).tolist() == [1, 2]  # nothing to lose: no warning


# ---------------------------------------------------------------- logspace, scalar_tensor, the triangles' indices, windows

NUMPY_WINDOWS = {"hann_window": np.hanning, "hamming_window": np.hamming, "blackman_window": np.blackman,
                 "bartlett_window": np.bartlett, "kaiser_window": lambda n: np.kaiser(n, 12.0)}


@pytest.mark.parametrize("name", sorted(NUMPY_WINDOWS))
@pytest.mark.parametrize("length", [0, 1, 2, 5, 16])
def test_windows_as_numpys_symmetric_ones_and_pytorchs(name, length):
    """periodic=False is NumPy's window; periodic=True (the default) NumPy's of length + 1 less its last entry."""
    torch = import_torch()
    make, numpy_window = getattr(minitx, name), NUMPY_WINDOWS[name]
    np.testing.assert_allclose(make(length, periodic=False, dtype="float64").numpy(), numpy_window(length),
                               rtol=1e-12, atol=1e-15)
    periodic = make(length, dtype="float64").numpy()
    np.testing.assert_allclose(periodic, numpy_window(length + 1)[:-1] if length > 1 else np.ones(length),
                               rtol=1e-12, atol=1e-15)
    for periodic_flag in (True, False):
        ours = make(length, periodic_flag)
        assert ours.dtype == np.float32 and ours.shape == (length,)
        np.testing.assert_allclose(make(length, periodic_flag, dtype="float64").numpy(),
                                   getattr(torch, name)(length, periodic_flag, dtype=torch.float64).numpy(),
                                   rtol=1e-12, atol=1e-14)


def test_window_options_as_pytorchs():
    torch = import_torch()
    np.testing.assert_allclose(minitx.hamming_window(6, False, alpha=0.5, beta=0.5, dtype="float64").numpy(),
                               torch.hamming_window(6, False, alpha=0.5, beta=0.5, dtype=torch.float64).numpy(), rtol=1e-12)
    np.testing.assert_allclose(minitx.kaiser_window(7, beta=3.5, dtype="float64").numpy(),
                               torch.kaiser_window(7, True, 3.5, dtype=torch.float64).numpy(), rtol=1e-12)
    assert minitx.hann_window(4, requires_grad=True).requires_grad


@pytest.mark.parametrize("name", sorted(NUMPY_WINDOWS))
@pytest.mark.parametrize("periodic", ["yes", 1, 0, None, 1.0])
def test_a_window_refuses_a_periodic_that_is_not_a_bool_as_pytorchs(name, periodic):
    """PyTorch's windows take periodic as a bool only (1, "yes" and None are a TypeError there)."""
    torch = import_torch()
    with pytest.raises(TypeError, match=rf"^{name}: periodic must be True or False, got {re.escape(repr(periodic))}"):
        getattr(minitx, name)(4, periodic=periodic)
    with pytest.raises(TypeError):
        getattr(torch, name)(4, periodic=periodic)


@pytest.mark.parametrize("row, col, offset", [(3, 3, 0), (3, 4, 1), (4, 3, -1), (0, 3, 0), (3, 2, -5), (2, 3, 10),
                                              (1, 1, 0), (5, 2, 3)])
def test_tril_and_triu_indices_as_numpys_and_pytorchs(row, col, offset):
    torch = import_torch()
    for name in ("tril_indices", "triu_indices"):
        ours = getattr(minitx, name)(row, col, offset)
        assert ours.dtype == np.int64 and ours.shape[0] == 2
        np.testing.assert_array_equal(ours.numpy(), np.stack(getattr(np, name)(row, offset, col)).reshape(2, -1))
        np.testing.assert_array_equal(ours.numpy(), getattr(torch, name)(row, col, offset).numpy())
    assert minitx.tril_indices(3, 3, dtype="int32").dtype == np.int32


@pytest.mark.parametrize("args, kwargs", [((0, 2, 3), {}), ((0, 3, 4), {"base": 2}), ((0, 2, 3), {"dtype": "int64"}),
                                          ((-1, 1, 5), {"dtype": "float64"}), ((2, 2, 1), {}), ((0, 1, 0), {})])
def test_logspace_as_pytorch(args, kwargs):
    torch = import_torch()
    ours = minitx.logspace(*args, **kwargs)
    theirs = torch.logspace(*args, **_torch_kwargs(torch, kwargs))
    assert ours.dtype == np.dtype(str(theirs.dtype).removeprefix("torch."))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    np.testing.assert_allclose(minitx.logspace(*args, base=kwargs.get("base", 10.0), dtype="float64").numpy(),
                               kwargs.get("base", 10.0) ** np.linspace(*args), rtol=1e-15)


def test_scalar_tensor_is_float32_whatever_the_number_as_pytorch():
    for s in (3, True, 2.5, np.int8(4)):
        t = minitx.scalar_tensor(s)
        assert t.shape == () and t.dtype == np.float32 and float(t) == float(s)
    assert minitx.scalar_tensor(3, dtype="int64").dtype == np.int64
    assert minitx.scalar_tensor(1.5, requires_grad=True).requires_grad


@pytest.mark.parametrize("call, error, message", [
    (lambda: minitx.hann_window(-1), ValueError, r"hann_window: window_length must be a whole number >= 0, got -1"),
    (lambda: minitx.kaiser_window(2.0), TypeError, r"kaiser_window: window_length must be an int, got 2.0"),
    (lambda: minitx.bartlett_window(3, dtype="int64"), TypeError, r"bartlett_window: needs a floating dtype, got int64"),
    (lambda: minitx.tril_indices(-1, 3), ValueError, r"tril_indices: row must be a whole number >= 0, got -1"),
    (lambda: minitx.triu_indices(3, 3, 0.5), TypeError, r"triu_indices: offset must be an int, got 0.5"),
    (lambda: minitx.triu_indices(3, 3, dtype="float32"), TypeError, r"triu_indices: dtype must be an integer one"),
    (lambda: minitx.logspace(0, 1, -2), ValueError, r"logspace: steps must be a whole number >= 0, got -2"),
    (lambda: minitx.scalar_tensor([1.0]), TypeError, r"scalar_tensor: expected a number, got list"),
    (lambda: minitx.eye(2, -1), ValueError, r"^eye: m must be a whole number >= 0, got -1"),
    (lambda: minitx.eye(2.0), TypeError, r"^eye: n must be an int, got 2.0"),
    (lambda: minitx.linspace(0, 1, True), TypeError, r"^linspace: steps must be an int, got True"),
    (lambda: minitx.randperm(None), TypeError, r"^randperm: n must be an int, got None"),
])
def test_new_creation_errors_name_the_function(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---------------------------------------------------------------- asarray


@pytest.mark.parametrize("data", [[1, 2], [1.5, 2.0], 3.5, np.float64(2.0), np.arange(3, dtype=np.int16), True,
                                  np.ones((2, 2), dtype=np.float32)], ids=repr)
def test_asarray_infers_pytorchs_dtypes(data):
    torch = import_torch()
    ours, theirs = minitx.asarray(data), torch.asarray(data)
    assert ours.dtype == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_asarray_shares_copies_or_refuses_as_its_copy_says():
    a = np.ones(3)
    shared = minitx.asarray(a)
    shared[0] = 5.0
    assert a[0] == 5.0  # copy=None: the array's own memory
    assert minitx.asarray(a, copy=False).data is a
    copied = minitx.asarray(a, copy=True)
    copied[1] = 7.0
    assert a[1] == 1.0
    assert minitx.asarray(a, dtype="float32").dtype == np.float32  # a copy where the dtype differs
    t = minitx.tensor([1.0, 2.0])
    assert minitx.asarray(t) is t and minitx.asarray(t, copy=False) is t
    assert minitx.asarray(t, copy=True) is not t and minitx.asarray(t, copy=True).data is not t.data
    with pytest.raises(ValueError, match="asarray: copy=False, but an array of dtype float64 needs a copy to become "
                                         "a tensor of dtype float32 on cpu"):
        minitx.asarray(a, dtype="float32", copy=False)
    with pytest.raises(ValueError, match="asarray: copy=False, but a list needs a copy"):
        minitx.asarray([1.0], copy=False)
    with pytest.raises(TypeError, match="asarray: copy must be None, True or False, got 'yes'"):
        minitx.asarray(a, copy="yes")


@pytest.mark.filterwarnings("ignore:torch.asarray. unspecified requires_grad")  # (PyTorch's, for None)
def test_asarray_requires_grad_as_pytorchs():
    """None keeps a tensor's flag, True sets it (on obj itself where the result is obj), False
    detaches; a copy of a tensor keeps its gradient (a clone), as PyTorch's."""
    torch = import_torch()
    for lib in (minitx, torch):
        leaf = lib.ones(2, requires_grad=True)
        x = leaf * 2
        assert lib.asarray(x, requires_grad=None) is x
        assert not lib.asarray(x, requires_grad=False).requires_grad
        (lib.asarray(x, copy=True) * 3).sum().backward()
        assert leaf.grad.numpy().tolist() == [6.0, 6.0]
        u = lib.ones(2)
        assert lib.asarray(u, requires_grad=True) is u and u.requires_grad
        assert lib.asarray(np.ones(2), requires_grad=True).requires_grad


SHAPED = {"zeros": lambda *s, **k: minitx.zeros(*s, **k), "ones": lambda *s, **k: minitx.ones(*s, **k),
          "empty": lambda *s, **k: minitx.empty(*s, **k), "rand": lambda *s, **k: minitx.rand(*s, **k),
          "randn": lambda *s, **k: minitx.randn(*s, **k),
          "full": lambda *s, **k: minitx.full(s[0] if len(s) == 1 else s, 1.5, **k),
          "randint": lambda *s, **k: minitx.randint(0, 5, s[0] if len(s) == 1 else s, **k),
          "normal": lambda *s, **k: minitx.normal(0.0, 1.0, size=s[0] if len(s) == 1 else s, **k),
          "new_zeros": lambda *s, **k: minitx.ones(1).new_zeros(*s, **k),
          "new_ones": lambda *s, **k: minitx.ones(1).new_ones(*s, **k),
          "new_empty": lambda *s, **k: minitx.ones(1).new_empty(*s, **k),
          "new_full": lambda *s, **k: minitx.ones(1).new_full(s[0] if len(s) == 1 else s, 1.5, **k)}


@pytest.mark.parametrize("name", sorted(SHAPED))
@pytest.mark.parametrize("length", [2.0, True, None, "2", np.float32(2)], ids=repr)
def test_a_shape_of_other_than_ints_is_refused_by_name(name, length):
    """NumPy would say "an integer is required" (naming no function), or take True as 1."""
    with pytest.raises(TypeError, match=rf"^{name}: expected a shape \(ints\), got \(3, {re.escape(repr(length))}\)"):
        SHAPED[name](3, length)


@pytest.mark.parametrize("name", sorted(SHAPED))
def test_a_negative_length_is_refused_by_name(name):
    with pytest.raises(ValueError, match=rf"^{name}: a shape's lengths must be >= 0, got \(2, -1\)"):
        SHAPED[name]((2, -1))


@pytest.mark.parametrize("name", sorted(SHAPED))
def test_a_shape_is_taken_as_ints_a_tuple_or_integer_tensors(name):
    """zeros(2, 3), zeros((2, 3)), NumPy ints and 0-d integer tensors (as PyTorch's size arguments)."""
    for shape in ((2, 3), ((2, 3),), ([2, 3],), (np.int64(2), minitx.tensor(3))):
        assert SHAPED[name](*shape).shape == (2, 3)


def test_counts_take_a_0d_integer_tensor_as_pytorch():
    """eye, linspace, randperm and the windows read a 0-d integer tensor as its value, as zeros does."""
    n = minitx.tensor(3)
    assert minitx.eye(n).shape == (3, 3) and minitx.linspace(0, 1, n).shape == (3,)
    assert minitx.randperm(n).shape == (3,) and minitx.hann_window(n).shape == (3,)
