"""PyTorch's runtime and dtype helpers (minitx.finfo, iinfo, result_type, promote_types, can_cast,
...) answer as torch's do, for every dtype both hold; where minitx's promotion departs from
PyTorch's (docs/ops.md), the pairs are listed here and checked to be exactly those.

Run without PyTorch, these are skipped (torch_reference.import_torch); tests/test_runtime.py
checks the same functions against what minitx's own ops do.
"""
import itertools

import numpy as np
import pytest

from torch_reference import import_torch

torch = import_torch()

import minitx  # noqa: E402

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTEGERS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
ALL = ["bool"] + INTEGERS + FLOATS


def torch_dtype(name):
    return getattr(torch, name)


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_is_torchs(name):
    ours, theirs = minitx.finfo(getattr(minitx, name)), torch.finfo(torch_dtype(name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, field) == getattr(theirs, field), field
        assert type(getattr(ours, field)) is type(getattr(theirs, field)), field
    assert ours.dtype == str(theirs.dtype) == name


@pytest.mark.parametrize("name", INTEGERS)
def test_iinfo_is_torchs(name):
    ours, theirs = minitx.iinfo(name), torch.iinfo(torch_dtype(name))
    assert (ours.bits, ours.max, ours.min, ours.dtype) == (theirs.bits, theirs.max, theirs.min, str(theirs.dtype))


def test_finfo_without_a_dtype_is_the_default_floats():
    assert minitx.finfo().eps == torch.finfo().eps


WIDE_UNSIGNED = ("uint16", "uint32", "uint64")  # PyTorch stores them, and promotes them only to floats


def torch_refuses(a, b):
    """Whether PyTorch refuses to promote a with b (minitx promotes as NumPy: uint16 with int8 is int32)."""
    return a != b and (a in WIDE_UNSIGNED or b in WIDE_UNSIGNED) and a not in FLOATS and b not in FLOATS


def torch_promotes(a, b):
    try:
        return str(torch.promote_types(torch_dtype(a), torch_dtype(b))).removeprefix("torch.")
    except RuntimeError:
        return None


@pytest.mark.parametrize("a", ALL)
def test_promote_types_is_torchs_but_where_torch_refuses(a):
    for b in ALL:
        theirs = torch_promotes(a, b)
        assert (theirs is None) == torch_refuses(a, b), (a, b, theirs)
        if theirs is not None:
            assert minitx.promote_types(a, b).name == theirs, (a, b)


@pytest.mark.parametrize("a", ALL)
def test_result_type_of_a_tensor_and_a_number_is_torchs(a):
    for number in (True, 3, 2.5):
        if a in WIDE_UNSIGNED:
            continue  # (PyTorch computes with none of these)
        ours = minitx.result_type(minitx.zeros(2, dtype=a), number)
        theirs = torch.result_type(torch.zeros(2, dtype=torch_dtype(a)), number)
        assert ours.name == str(theirs).removeprefix("torch."), (a, number)


@pytest.mark.parametrize("a", FLOATS + ["int32", "int64", "uint8", "bool"])
def test_result_type_of_a_tensor_and_a_0d_tensor(a):
    """A 0-d float tensor is a scalar beside floats with dimensions, as in PyTorch; a 0-d integer one
    promotes as one with dimensions would (minitx departs here: PyTorch keeps int32 beside a 0-d int64)."""
    for b in FLOATS + ["int32", "int64", "uint8", "bool"]:
        ours = minitx.result_type(minitx.zeros(2, dtype=a), minitx.zeros((), dtype=b)).name
        theirs = str(torch.result_type(torch.zeros(2, dtype=torch_dtype(a)), torch.zeros((), dtype=torch_dtype(b))))
        theirs = theirs.removeprefix("torch.")
        if a not in FLOATS and b not in FLOATS and a != b and "bool" not in (a, b):
            assert ours == minitx.promote_types(a, b).name, (a, b)
        elif a in ("float16", "bfloat16") and b in FLOATS and a != b:
            assert ours == minitx.promote_types(a, b).name, (a, b)  # (beside 16 bits NumPy's promotion, see promote)
        else:
            assert ours == theirs, (a, b)


def test_can_cast_is_torchs_but_signed_into_unsigned():
    for a, b in itertools.product(ALL, ALL):
        theirs = torch.can_cast(torch_dtype(a), torch_dtype(b))
        signed_into_unsigned = a.startswith("int") and b.startswith("uint")
        assert minitx.can_cast(a, b) == (theirs and not signed_into_unsigned), (a, b)


@pytest.fixture
def printoptions():
    """Each library's print options back to its defaults after the test."""
    try:
        yield
    finally:
        minitx.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


@pytest.mark.parametrize("options, values", [
    (dict(precision=2), [1.12345, 3.25]),
    (dict(sci_mode=True), [1.5, 2.0, -3e-7]),
    (dict(linewidth=20), [float(v) for v in range(12)]),
    (dict(threshold=5, edgeitems=2), [float(v) for v in range(10)]),
    (dict(profile="short", threshold=3), [float(v) for v in range(6)]),
    (dict(profile="full"), [float(v) for v in range(1001)]),
    (dict(), [float(v) for v in range(1001)]),
])
def test_set_printoptions_as_torchs(printoptions, options, values):
    """The same options give the same elements, lines and ``...`` as PyTorch's (the columns are
    NumPy's, so spaces may differ: compared without them)."""
    minitx.set_printoptions(**options)
    torch.set_printoptions(**options)
    ours, theirs = repr(minitx.tensor(values)), repr(torch.tensor(values))
    assert ours.replace(" ", "") == theirs.replace(" ", "")
    assert ours.count("\n") == theirs.count("\n")


def test_anomaly_flags_as_torchs():
    """The same sequence of switches and blocks reads back the same flags."""
    def flags():
        ours = (minitx.is_anomaly_enabled(), minitx.is_anomaly_check_nan_enabled())
        theirs = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        assert ours == theirs
        return ours

    assert flags() == (False, True)
    try:
        for library in (minitx, torch):
            library.set_anomaly_enabled(True, check_nan=False)
        assert flags() == (True, False)
        with minitx.autograd.detect_anomaly(check_nan=True), torch.autograd.detect_anomaly(check_nan=True):
            assert flags() == (True, True)
        assert flags() == (True, False)
    finally:
        for library in (minitx, torch):
            library.set_anomaly_enabled(False)
    assert flags() == (False, True)


def test_inference_mode_flag_as_torchs():
    def same():
        assert minitx.is_inference_mode_enabled() == torch.is_inference_mode_enabled()
        return minitx.is_inference_mode_enabled()

    assert not same()
    with minitx.inference_mode(), torch.inference_mode():
        assert same()
        with minitx.no_grad(), torch.no_grad(), minitx.enable_grad(), torch.enable_grad():
            assert same()
        with minitx.inference_mode(False), torch.inference_mode(False):
            assert not same()
        assert same()
    with minitx.no_grad(), torch.no_grad():
        assert not same()


@pytest.mark.parametrize("device_type", ["cpu", "cuda"])
def test_autocast_dtype_as_torchs(device_type):
    assert minitx.get_autocast_dtype(device_type).name == str(torch.get_autocast_dtype(device_type)).removeprefix("torch.")
    assert minitx.is_autocast_enabled(device_type) is torch.is_autocast_enabled(device_type) is False
    with minitx.autocast(device_type), torch.autocast("cpu"):  # (torch's "cuda" autocast wants a GPU)
        assert minitx.is_autocast_enabled(device_type) and torch.is_autocast_enabled("cpu")
        if device_type == "cpu":
            assert minitx.get_autocast_dtype("cpu").name == str(torch.get_autocast_dtype("cpu")).removeprefix("torch.")
    with minitx.autocast("cpu", dtype="float16"), torch.autocast("cpu", dtype=torch.float16):
        assert minitx.get_autocast_dtype("cpu").name == str(torch.get_autocast_dtype("cpu")).removeprefix("torch.")


def test_deterministic_flags_as_torchs():
    try:
        for mode, warn_only in ((True, False), (True, True), (False, True), (False, False)):
            for library in (minitx, torch):
                library.use_deterministic_algorithms(mode, warn_only=warn_only)
            assert minitx.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled()
            assert (minitx.is_deterministic_algorithms_warn_only_enabled()
                    == torch.is_deterministic_algorithms_warn_only_enabled()), (mode, warn_only)
    finally:
        for library in (minitx, torch):
            library.use_deterministic_algorithms(False)


# ---------------------------------------------------------------- Tensor methods
def test_data_ptr_and_storage_offset_of_views_as_torchs():
    """Where both libraries view, the same entry offsets, and the same byte distances between first entries."""
    values = np.arange(24.0).reshape(2, 3, 4)
    views = [lambda t: t, lambda t: t[1], lambda t: t[:, 1], lambda t: t[1, 2:, 1:3], lambda t: t.permute(2, 0, 1),
             lambda t: t.reshape(6, 4)[3:], lambda t: t.detach()[0, 1], lambda t: t.unsqueeze(0)[0, 1],
             lambda t: t[..., 3], lambda t: t.flatten()[5:]]
    ours, theirs = minitx.tensor(values), torch.tensor(values)
    for view in views:
        assert view(ours).storage_offset() == view(theirs).storage_offset()
        assert view(ours).data_ptr() - ours.data_ptr() == view(theirs).data_ptr() - theirs.data_ptr()
    assert minitx.zeros(0, 3).data_ptr() == torch.zeros(0, 3).data_ptr() == 0
    assert minitx.tensor(values).data_ptr() != ours.data_ptr()  # a copy: memory of its own
    # where they differ (docs/ops.md): NumPy points an empty view at its base's start, so its offset is 0
    assert ours.flatten()[5:5].storage_offset() == 0 and theirs.flatten()[5:5].storage_offset() == 5


def test_post_accumulate_grad_hooks_run_as_torchs():
    def run(lib):
        w, b = lib.ones(3, requires_grad=True, dtype=lib.float64), lib.ones(3, requires_grad=True, dtype=lib.float64)
        seen = []
        w.register_hook(lambda g: g * 10)  # (a tensor hook first: the .grad the post hook sees has it)
        handle = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        def halve(t):  # each hook sees the .grad the one before left
            t.grad.mul_(0.5)

        w.register_post_accumulate_grad_hook(halve)
        (w * b * 2).sum().backward()
        (w * w).sum().backward()
        lib.autograd.grad((w * 3).sum(), w)  # no .grad accumulated: no call
        (w * b).sum().backward(inputs=[b])  # nor here
        handle.remove()
        (w * 2).sum().backward()
        return seen, w.grad.tolist()

    assert run(minitx) == run(torch)


def test_post_accumulate_grad_hook_steps_an_optimizer_inside_backward_as_torchs():
    """The pattern the hook is for: each parameter updated as soon as its gradient is whole."""
    def run(lib, optim):
        weights = [lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True), lib.tensor([1.0, -2.0],
                                                                                          requires_grad=True)]
        optimizers = {id(p): optim.SGD([p], lr=0.1, momentum=0.9) for p in weights}

        def step(p):
            optimizers[id(p)].step()
            optimizers[id(p)].zero_grad()

        for p in weights:
            p.register_post_accumulate_grad_hook(step)
        x = lib.tensor([[1.0, 2.0], [3.0, -1.0]])
        for _ in range(3):
            ((x @ weights[0] + weights[1]) ** 2).mean().backward()
        return [p.detach().numpy() for p in weights]

    for ours, theirs in zip(run(minitx, minitx.optim), run(torch, torch.optim)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_post_accumulate_grad_hook_refuses_as_torchs():
    w = minitx.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="register_post_accumulate_grad_hook: this tensor was computed by the op "
                                           "'mul'; only a leaf"):
        (w * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="register_post_accumulate_grad_hook: this tensor does not require grad"):
        minitx.ones(2).register_post_accumulate_grad_hook(lambda t: None)
    w.register_post_accumulate_grad_hook(lambda t: t.grad * 0)
    with pytest.raises(RuntimeError, match="returned a Tensor; it must return None"):
        (w * 2).sum().backward()
    t = torch.ones(2, requires_grad=True)
    t.register_post_accumulate_grad_hook(lambda t: t.grad * 0)
    with pytest.raises(RuntimeError, match="should return None"):
        (t * 2).sum().backward()


@pytest.mark.parametrize("shape, wrap", [((3, 4), False), ((7, 3), False), ((7, 3), True), ((9, 2), True),
                                         ((3, 3, 3), False), ((4, 4, 4, 4), True), ((0, 3), False), ((3, 1), True)])
def test_fill_diagonal_as_torchs_values_and_gradients(shape, wrap):
    values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) / 7
    results = []
    for lib in (minitx, torch):
        w = lib.tensor(values, requires_grad=True)
        x = w * 1.5
        out = x.fill_diagonal_(-2.5, wrap=wrap)
        assert out is x
        (x * lib.tensor(values + 1)).sum().backward()
        results.append((x.detach().numpy(), w.grad.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_fill_diagonal_refuses_by_name():
    for shape in ((3,), (2, 3, 3), ()):
        with pytest.raises(ValueError, match=r"fill_diagonal_: expected a tensor of 2 dimensions, or more all of one "
                                             r"length, got shape"):
            minitx.zeros(shape).fill_diagonal_(1.0)
        with pytest.raises(RuntimeError):
            torch.zeros(shape).fill_diagonal_(1.0)
    with pytest.raises(TypeError, match="fill_diagonal_: fill_value must be a number, got Tensor"):
        minitx.zeros(2, 2).fill_diagonal_(minitx.tensor(1.0))
    with pytest.raises(TypeError, match="fill_diagonal_: wrap must be True or False, got 1"):
        minitx.zeros(2, 2).fill_diagonal_(1.0, wrap=1)
    # (PyTorch's cuts 2.7 to 2 in an integer tensor: minitx refuses it, as its masked_fill_)
    with pytest.raises(ValueError, match="fill_diagonal_: fill_value 2.7 does not fit the tensor's int64"):
        minitx.zeros(2, 2, dtype="int64").fill_diagonal_(2.7)
