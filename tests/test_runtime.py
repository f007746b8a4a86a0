"""minitx's runtime and dtype helpers against minitx itself: result_type and promote_types say the
dtype that ``a + b`` and ``a * b`` compute in, can_cast what an in-place write accepts, and
set_default_dtype reaches what makes new float tensors. (tests/test_torch_runtime.py compares
them with PyTorch's.)"""
import itertools

import numpy as np
import pytest

import minitx
import minitx.nn as nn

FLOATS = ["float16", "bfloat16", "float32", "float64"]
ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"] + FLOATS


def operand(kind, dtype):
    return {"tensor": lambda: minitx.ones(2, dtype=dtype), "0-d": lambda: minitx.ones((), dtype=dtype),
            "int": lambda: 3, "float": lambda: 2.5, "bool": lambda: True}[kind]()


@pytest.mark.parametrize("a", ALL)
def test_result_type_is_the_dtype_of_a_sum_and_a_product(a):
    for b, kind in itertools.product(ALL, ("tensor", "0-d", "int", "float", "bool")):
        x, y = minitx.ones(2, dtype=a), operand(kind, b)
        expected = minitx.result_type(x, y)
        assert (x + y).dtype == expected and (x * y).dtype == expected and (y * x).dtype == expected, (a, b, kind)
        if kind == "tensor":
            assert minitx.promote_types(a, b) == expected


def test_can_cast_is_what_an_in_place_add_accepts():
    for a, b in itertools.product(ALL, ALL):
        x, y = minitx.zeros(2, dtype=a), minitx.zeros(2, dtype=b)
        try:
            x += y
            accepted = True
        except TypeError:
            accepted = False
        assert accepted == minitx.can_cast(minitx.result_type(x, y), a), (a, b)


@pytest.mark.parametrize("call, message", [
    (lambda: minitx.finfo("int32"), "finfo: expected a floating dtype"),
    (lambda: minitx.finfo("float8"), "finfo: unknown dtype 'float8'"),
    (lambda: minitx.iinfo("bool"), "iinfo: expected an integer dtype"),
    (lambda: minitx.iinfo("float32"), "iinfo: expected an integer dtype"),
    (lambda: minitx.promote_types("float32", None), "promote_types: expected a dtype, got None"),
    (lambda: minitx.can_cast("int3", "float32"), "can_cast: unknown dtype 'int3'"),
    (lambda: minitx.set_default_dtype("float16"), "set_default_dtype: expected float32 or float64"),
])
def test_bad_dtypes_are_named(call, message):
    with pytest.raises(TypeError, match=message):
        call()


@pytest.fixture
def float64_default():
    minitx.set_default_dtype(minitx.float64)
    try:
        yield
    finally:
        minitx.set_default_dtype(minitx.float32)


def test_set_default_dtype_reaches_what_makes_float_tensors(float64_default):
    ints = minitx.tensor([1, 2])
    made = [minitx.tensor(1.5), minitx.tensor([0.5]), minitx.zeros(2), minitx.ones(2), minitx.rand(2), minitx.randn(2),
            minitx.full((2,), 0.5), minitx.arange(0.0, 1.0, 0.5), minitx.linspace(0, 1, 3), minitx.empty(2),
            ints * 0.5, ints / 2, ints.exp(), nn.Linear(2, 3).weight]
    for t in made:
        assert t.dtype == np.float64, t
    assert minitx.get_default_dtype() == np.float64 and minitx.finfo().bits == 64
    assert ints.dtype == np.int64 and minitx.tensor([1.5], dtype="float32").dtype == np.float32


@pytest.mark.parametrize("options, message", [
    (dict(profile="long"), "set_printoptions: profile must be one of"),
    (dict(precision=-1), "set_printoptions: precision must be a number >= 0, got -1"),
    (dict(threshold="all"), "set_printoptions: threshold must be a number >= 0, got 'all'"),
    (dict(sci_mode="on"), "set_printoptions: sci_mode must be True, False or None"),
    (dict(precision=2, threshold="all"), "set_printoptions: threshold must be a number >= 0, got 'all'"),
    (dict(profile="short", sci_mode="on"), "set_printoptions: sci_mode must be True, False or None"),
])
def test_bad_printoptions_are_named_and_change_nothing(options, message):
    x = minitx.tensor([1.12345, 2.0] * 600)
    before = repr(x)
    try:
        with pytest.raises(ValueError, match=message):
            minitx.set_printoptions(**options)
        assert repr(x) == before  # (not the good options before the bad one)
    finally:
        minitx.set_printoptions(profile="default")


def test_printoptions_reach_every_repr():
    x = minitx.tensor([[1e-9, 2.0]], dtype="float64", requires_grad=True)
    try:
        minitx.set_printoptions(sci_mode=False, precision=3)
        assert repr(x) == "tensor([[0., 2.]], dtype=float64, requires_grad=True)"
        assert repr(x.bfloat16()).startswith("tensor([[0., 2.]]")
        minitx.set_printoptions(sci_mode=True, precision=3)
        assert repr(x).startswith("tensor([[1.000e-09, 2.000e+00]]")
    finally:
        minitx.set_printoptions(profile="default")
    assert repr(x).startswith("tensor([[1.e-09, 2.e+00]]")


def nan_backward():
    x = minitx.tensor([-1.0, 4.0], requires_grad=True)
    x.sqrt().sum().backward()  # sqrt(-1) is NaN: the forward's output holds it


def test_set_anomaly_enabled_checks_as_detect_anomaly_does():
    nan_backward()  # off: no check
    try:
        minitx.set_anomaly_enabled(True)
        with pytest.raises(FloatingPointError, match="the forward of 'sqrt' produced NaN"):
            nan_backward()
        minitx.set_anomaly_enabled(True, check_nan=False)  # on, checking nothing
        assert minitx.is_anomaly_enabled() and not minitx.is_anomaly_check_nan_enabled()
        nan_backward()
    finally:
        minitx.set_anomaly_enabled(False)
    assert not minitx.is_anomaly_enabled()
    nan_backward()
    with pytest.raises(TypeError, match="set_anomaly_enabled: enabled must be True or False, got 1"):
        minitx.set_anomaly_enabled(1)


def test_detect_anomaly_without_check_nan_raises_nothing_of_its_own():
    with minitx.autograd.detect_anomaly(check_nan=False):
        nan_backward()
        y = minitx.tensor([1e38], requires_grad=True)
        (y * 10).sum().backward()  # (an inf gradient too)
    with minitx.autograd.detect_anomaly(), pytest.raises(FloatingPointError):
        nan_backward()


def test_a_float_scatter_add_on_the_gpu_is_refused_when_asked_for_determinism(monkeypatch):
    """ops/indexing.ufunc_at's GPU branch, reached on the CPU with stand-ins for CuPy's modules: a
    floating-point sum is refused (cupyx.scatter_add adds by atomics), an integer one is not."""
    import sys
    from types import SimpleNamespace

    from minitx.ops import indexing

    added = []
    monkeypatch.setattr(indexing, "get_array_module", lambda a: SimpleNamespace(__name__="cupy"))
    monkeypatch.setitem(sys.modules, "cupyx", SimpleNamespace(scatter_add=lambda *args: added.append(args),
                                                              scatter_max=None, scatter_min=None))
    target, index = np.zeros(3), (np.array([0, 0]),)
    try:
        minitx.use_deterministic_algorithms(True)
        with pytest.raises(RuntimeError, match="a floating-point scatter-add on the GPU .* does not compute "
                                               "deterministically"):
            indexing.add_at(target, index, np.ones(2))
        assert not added
        indexing.add_at(np.zeros(3, dtype=np.int64), index, np.ones(2, dtype=np.int64))  # (any order: one sum)
        minitx.use_deterministic_algorithms(True, warn_only=True)
        with pytest.warns(UserWarning, match="does not compute deterministically"):
            indexing.add_at(target, index, np.ones(2))
    finally:
        minitx.use_deterministic_algorithms(False)
    indexing.add_at(target, index, np.ones(2))
    assert len(added) == 3
    with pytest.raises(TypeError, match="use_deterministic_algorithms: mode must be True or False, got 1"):
        minitx.use_deterministic_algorithms(1)


def test_autocast_helpers_refuse_an_unknown_device_type():
    for call in (lambda: minitx.is_autocast_enabled("tpu"), lambda: minitx.get_autocast_dtype("tpu")):
        with pytest.raises(ValueError, match="unknown device_type 'tpu'; expected 'cpu' or 'cuda'"):
            call()
