"""minitx.nn.init: the statistics of each initializer on large seeded tensors (so the tolerances,
many standard errors wide, cannot flake), and PyTorch's gains, fans, bounds and stds exactly: the
numbers each initializer hands to its uniform or normal draw are recorded on both sides and
compared. Then the deterministic ones (eye_, dirac_, orthogonal_ from a given Gaussian matrix)
entry by entry against PyTorch, reproducibility under manual_seed, and the errors."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import minitx
from minitx import nn
from minitx.nn import init

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from torch_reference import import_torch  # noqa: E402


@pytest.fixture
def torch():
    return import_torch()


def _draw(initializer, shape=(300, 200), seed=0, dtype="float64", **kwargs):
    minitx.manual_seed(seed)
    return initializer(minitx.zeros(*shape, dtype=dtype), **kwargs).numpy()


# ---------------------------------------------------------------- statistics
@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_xavier_uniform_bounds_and_std(gain):
    w = _draw(init.xavier_uniform_, gain=gain)
    bound = gain * math.sqrt(6 / (300 + 200))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert w.std() == pytest.approx(bound / math.sqrt(3), rel=0.02)
    assert abs(w.mean()) < 0.02 * bound


@pytest.mark.parametrize("gain", [1.0, 0.5])
def test_xavier_normal_std(gain):
    w = _draw(init.xavier_normal_, gain=gain)
    assert w.std() == pytest.approx(gain * math.sqrt(2 / (300 + 200)), rel=0.02)
    assert abs(w.mean()) < 0.02 * w.std()


def test_xavier_fans_include_the_receptive_field_and_need_two_axes():
    w = _draw(init.xavier_uniform_, shape=(20, 10, 3, 3))
    assert np.abs(w).max() <= math.sqrt(6 / (10 * 9 + 20 * 9))
    with pytest.raises(ValueError, match=r"xavier_uniform_: .* at least 2 dimensions, got shape \(5,\)"):
        init.xavier_uniform_(minitx.zeros(5))


@pytest.mark.parametrize("shape", [(3, 4), (6, 2, 3), (5, 4, 3, 2), (2, 3, 1, 2, 2), (4, 0, 3), (0, 3)])
def test_calculate_fan_in_and_fan_out_is_pytorchs(torch, shape):
    """PyTorch's private name, which ported code calls."""
    assert init._calculate_fan_in_and_fan_out(minitx.zeros(*shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(*shape))
    with pytest.raises(ValueError, match=r"^_calculate_fan_in_and_fan_out: fan in and fan out need a tensor with at "
                                         r"least 2 dimensions, got shape \(5,\)"):
        init._calculate_fan_in_and_fan_out(minitx.zeros(5))
    with pytest.raises(ValueError):
        torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(5))


@pytest.mark.parametrize("shape", [(3, 4), (6, 2, 3), (5, 4, 3, 2), (4, 0, 3)])
@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "FAN_OUT"])
def test_calculate_correct_fan_is_pytorchs(torch, shape, mode):
    """PyTorch's private name, which ported code calls: the fan the mode names."""
    assert init._calculate_correct_fan(minitx.zeros(*shape), mode) == \
        torch.nn.init._calculate_correct_fan(torch.zeros(*shape), mode)
    with pytest.raises(ValueError, match=r"^_calculate_correct_fan: mode 'fan_avg' not supported; use 'fan_in' or "
                                         r"'fan_out'"):
        init._calculate_correct_fan(minitx.zeros(*shape), "fan_avg")
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        torch.nn.init._calculate_correct_fan(torch.zeros(*shape), "fan_avg")
    with pytest.raises(ValueError, match=r"^_calculate_correct_fan: fan in and fan out need a tensor with at least 2"):
        init._calculate_correct_fan(minitx.zeros(5), mode)


@pytest.mark.parametrize("mode, fan", [("fan_in", 200 * 9), ("fan_out", 100 * 9)])
def test_kaiming_uniform_and_normal_statistics(mode, fan):
    """Defaults as PyTorch's: leaky_relu with a = 0, that is relu's gain sqrt(2)."""
    std = math.sqrt(2.0) / math.sqrt(fan)
    w = _draw(init.kaiming_uniform_, shape=(100, 200, 3, 3), mode=mode)
    assert math.sqrt(3) * std * 0.999 < np.abs(w).max() <= math.sqrt(3) * std
    assert w.std() == pytest.approx(std, rel=0.01) and abs(w.mean()) < 0.01 * std
    w = _draw(init.kaiming_normal_, shape=(100, 200, 3, 3), mode=mode)
    assert w.std() == pytest.approx(std, rel=0.01) and abs(w.mean()) < 0.01 * std


def test_normal_uniform_and_the_constants():
    w = _draw(init.normal_, mean=1.5, std=0.5)
    assert w.mean() == pytest.approx(1.5, abs=0.01) and w.std() == pytest.approx(0.5, rel=0.02)
    w = _draw(init.uniform_, a=-3.0, b=-1.0)  # PyTorch's names for the bounds
    assert -3 <= w.min() < -2.99 and -1.01 < w.max() < -1
    assert np.all(init.zeros_(minitx.ones(3, 2)).numpy() == 0)
    assert np.all(init.ones_(minitx.zeros(3, 2)).numpy() == 1)
    assert np.all(init.constant_(minitx.zeros(3, 2, dtype="int64"), 7).numpy() == 7)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_uniform_stays_below_high_in_a_narrow_dtype(dtype):
    """Draws just below high rounded up to it (1,969 of 10**6 U(0, 1) draws were 1.0 in bfloat16;
    PyTorch's none), and a bound with no exact form let Kaiming's weights past it: they are kept
    at the last value inside, [low, high) as PyTorch's and minitx.rand's."""
    as_dtype = minitx.backend.resolve_dtype(dtype)
    below_one = float(np.nextafter(np.ones((), as_dtype), np.zeros((), as_dtype)))
    w = _draw(init.uniform_, shape=(10 ** 6,), dtype=dtype).astype(np.float64)
    assert 0 <= w.min() and w.max() == below_one
    w = _draw(init.uniform_, shape=(10 ** 5,), dtype=dtype, low=-3.0, high=-1.0).astype(np.float64)
    assert -3 <= w.min() and w.max() < -1
    bound = 1 / math.sqrt(1000)  # what nn.Linear(1000, ...) draws from: not exact in either dtype
    w = _draw(init.kaiming_uniform_, shape=(1000, 1000), dtype=dtype, a=math.sqrt(5)).astype(np.float64)
    assert np.abs(w).max() <= bound and w.std() == pytest.approx(bound / math.sqrt(3), rel=0.01)
    assert np.all(_draw(init.uniform_, shape=(4,), dtype=dtype, low=0.5, high=0.5) == 0.5)


def _truncated_normal_moments(mean, std, a, b):
    """Mean and std of N(mean, std) conditioned on [a, b]: with alpha, beta the bounds in stds,
    phi the density and Z = Phi(beta) - Phi(alpha) the mass kept,
    mean + std (phi(alpha) - phi(beta)) / Z, and the variance below."""
    alpha, beta = (a - mean) / std, (b - mean) / std
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    shift = (phi(alpha) - phi(beta)) / z
    variance = 1 + (alpha * phi(alpha) - beta * phi(beta)) / z - shift ** 2
    return mean + std * shift, std * math.sqrt(variance)


@pytest.mark.parametrize("mean, std, a, b", [(0.0, 1.0, -2.0, 2.0), (1.0, 2.0, -1.0, 4.0), (0.0, 0.02, -0.04, 0.04),
                                             (0.0, 1.0, 0.5, 6.0)])
def test_trunc_normal_stays_in_its_bounds_with_the_truncated_moments(mean, std, a, b):
    w = _draw(init.trunc_normal_, shape=(1000, 1000), mean=mean, std=std, a=a, b=b)
    expected_mean, expected_std = _truncated_normal_moments(mean, std, a, b)
    assert a <= w.min() and w.max() <= b
    assert w.mean() == pytest.approx(expected_mean, abs=0.005 * expected_std)
    assert w.std() == pytest.approx(expected_std, rel=0.005)


def test_trunc_normal_defaults_as_pytorch_and_its_errors():
    w = _draw(init.trunc_normal_, shape=(1000, 1000))
    assert -2 <= w.min() < -1.99 and 1.99 < w.max() <= 2  # mean 0, std 1, [-2, 2]
    with pytest.warns(UserWarning, match="trunc_normal_: mean is more than 2 std from"):
        init.trunc_normal_(minitx.zeros(3), mean=5.0, a=0.0, b=1.0)
    for kwargs in ({"std": 0.0}, {"a": 1.0, "b": 1.0}):
        with pytest.raises(ValueError, match="trunc_normal_: expected std > 0 and a < b"):
            init.trunc_normal_(minitx.zeros(3), **kwargs)


# ---------------------------------------------------------------- as PyTorch's
NONLINEARITIES = [("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None), ("conv_transpose1d", None),
                  ("conv_transpose2d", None), ("conv_transpose3d", None), ("sigmoid", None), ("tanh", None),
                  ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 0), ("selu", None)]


@pytest.mark.parametrize("nonlinearity, param", NONLINEARITIES)
def test_calculate_gain_is_pytorchs(torch, nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(nonlinearity, param)


def _recorded(monkeypatch, owner, names):
    """Make each method ``names`` of ``owner`` record its arguments after the tensor and return
    the tensor, so an initializer's bounds or std can be read exactly."""
    calls = []
    for name in names:
        monkeypatch.setattr(owner, name, lambda t, *args, _name=name, **kwargs: calls.append((_name, *args)) or t)
    return calls


@pytest.mark.parametrize("shape", [(30, 20), (8, 4, 3, 3), (5, 2, 7)])
@pytest.mark.parametrize("name, kwargs", [
    ("xavier_uniform_", {}), ("xavier_normal_", {"gain": 0.5}), ("kaiming_uniform_", {}), ("kaiming_normal_", {}),
    ("kaiming_uniform_", {"a": math.sqrt(5)}),  # what torch.nn.Linear uses
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "tanh"}),
    ("kaiming_normal_", {"a": 0.2, "mode": "FAN_IN"}),
])
def test_fans_bounds_and_stds_are_pytorchs_exactly(torch, monkeypatch, shape, name, kwargs):
    ours = _recorded(monkeypatch, init, ["uniform_", "normal_"])
    getattr(init, name)(minitx.zeros(*shape), **kwargs)
    theirs = _recorded(monkeypatch, torch.Tensor, ["uniform_", "normal_"])
    getattr(torch.nn.init, name)(torch.zeros(*shape), **kwargs)
    assert ours == theirs and len(ours) == 1


def test_eye_and_dirac_are_pytorchs(torch):
    for shape in [(3, 5), (4, 4), (5, 2)]:
        np.testing.assert_array_equal(init.eye_(minitx.zeros(*shape)).numpy(), torch.nn.init.eye_(torch.zeros(*shape)))
    for shape, groups in [((4, 3, 3), 1), ((6, 2, 3, 3), 2), ((2, 5, 2, 3), 1), ((6, 1, 3, 3, 3), 3)]:
        np.testing.assert_array_equal(init.dirac_(minitx.ones(*shape), groups).numpy(),
                                      torch.nn.init.dirac_(torch.ones(*shape), groups))


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (6, 2, 3), (1, 4)])
def test_orthogonal_is_pytorchs_from_the_same_gaussian_matrix(torch, monkeypatch, shape):
    """PyTorch's QR and sign fix, given the matrix minitx draws; then W W^T (rows <= cols) or
    W^T W is gain^2 I."""
    rows, cols = shape[0], math.prod(shape[1:])
    minitx.manual_seed(3)
    gaussian = minitx.random.generator("cpu").normal(0.0, 1.0, (rows, cols))
    minitx.manual_seed(3)
    ours = init.orthogonal_(minitx.zeros(*shape, dtype="float64"), gain=2.0).numpy()
    monkeypatch.setattr(torch.Tensor, "normal_", lambda t, *args, **kwargs: t.copy_(torch.from_numpy(gaussian)))
    theirs = torch.nn.init.orthogonal_(torch.zeros(*shape, dtype=torch.float64), gain=2.0).numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-12)
    w = ours.reshape(rows, cols)
    product = w @ w.T if rows <= cols else w.T @ w
    np.testing.assert_allclose(product, 4 * np.eye(min(rows, cols)), atol=1e-12)


@pytest.mark.parametrize("shape, sparsity", [((400, 300), 0.1), ((7, 500), 0.5), ((5, 3), 0.0), ((5, 3), 1.0)])
def test_sparse_zeroes_pytorchs_count_in_each_column(torch, shape, sparsity):
    """ceil(sparsity * rows) zeros in every column, as PyTorch's, at rows that differ from column
    to column, and N(0, std) elsewhere; generator= repeats both; the signature is PyTorch's."""
    import inspect  # noqa: PLC0415
    ours = _draw(init.sparse_, shape=shape, sparsity=sparsity, std=0.5)
    theirs = torch.nn.init.sparse_(torch.zeros(*shape, dtype=torch.float64), sparsity, std=0.5).numpy()
    np.testing.assert_array_equal((ours == 0).sum(axis=0), (theirs == 0).sum(axis=0))
    assert np.all((ours == 0).sum(axis=0) == math.ceil(sparsity * shape[0]))
    if shape == (400, 300):
        assert len({tuple(np.flatnonzero(column == 0)) for column in ours.T}) > 290
        assert ours[ours != 0].std() == pytest.approx(0.5, rel=0.02) and abs(ours[ours != 0].mean()) < 0.01
    first = init.sparse_(minitx.zeros(*shape), sparsity, 0.5, minitx.Generator().manual_seed(3)).numpy()
    again = init.sparse_(minitx.zeros(*shape), sparsity, std=0.5, generator=minitx.Generator().manual_seed(3)).numpy()
    np.testing.assert_array_equal(first, again)
    ours_sig, theirs_sig = inspect.signature(init.sparse_), inspect.signature(torch.nn.init.sparse_)
    assert [(p.name, p.default) for p in list(ours_sig.parameters.values())[1:]] == \
        [(p.name, p.default) for p in list(theirs_sig.parameters.values())[1:]]
    p = nn.Parameter(minitx.zeros(*shape))
    assert init.sparse_(p, sparsity) is p and p.is_leaf and p.requires_grad and p.grad_fn is None


def test_an_empty_tensor_is_left_as_it_is():
    for initializer in (init.kaiming_uniform_, init.kaiming_normal_, init.orthogonal_):
        assert initializer(minitx.zeros(4, 0)).shape == (4, 0)


# ---------------------------------------------------------------- seeds, graphs and errors
RANDOM = [init.uniform_, init.normal_, init.xavier_uniform_, init.xavier_normal_, init.kaiming_uniform_,
          init.kaiming_normal_, init.trunc_normal_, init.orthogonal_]


@pytest.mark.parametrize("initializer", RANDOM, ids=lambda f: f.__name__)
def test_same_seed_same_values_and_no_graph(initializer):
    first, again, other = _draw(initializer, (6, 4), seed=7), _draw(initializer, (6, 4), seed=7), \
        _draw(initializer, (6, 4), seed=8)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    p = nn.Parameter(minitx.zeros(6, 4))
    assert initializer(p) is p and p.is_leaf and p.requires_grad and p.grad_fn is None and p.dtype == np.float32


def test_an_initializer_after_forward_stops_the_stale_backward():
    """Writing into a weight a graph saved makes its backward refuse, as any in-place write."""
    w = nn.Parameter(minitx.ones(3, 2))
    loss = (w * w).sum()
    init.normal_(w)
    with pytest.raises(RuntimeError):
        loss.backward()


def _weights(seed):
    minitx.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 3), nn.Embedding(6, 2), nn.LearnedPositionalEmbedding(2, 5))
    return [p.numpy() for p in model.parameters()]


def test_same_seed_same_layer_weights():
    first, again, other = _weights(7), _weights(7), _weights(8)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not any(np.array_equal(a, c) for a, c in zip(first, other))


@pytest.mark.parametrize("call, error, message", [
    (lambda: init.kaiming_uniform_(minitx.zeros(5)), ValueError,
     r"kaiming_uniform_: fan in and fan out need a tensor with at least 2 dimensions, got shape \(5,\)"),
    (lambda: init.kaiming_normal_(minitx.zeros(3, 2), mode="fan_avg"), ValueError,
     "kaiming_normal_: mode 'fan_avg' not supported; use 'fan_in' or 'fan_out'"),
    (lambda: init.kaiming_normal_(minitx.zeros(3, 2), nonlinearity="swish"), ValueError,
     "calculate_gain: unsupported nonlinearity 'swish'"),
    (lambda: init.calculate_gain("leaky_relu", "0.1"), ValueError,
     "calculate_gain: the negative slope '0.1' of leaky_relu is not a number"),
    (lambda: init.uniform_(minitx.zeros(3), -1.0, a=-1.0), TypeError,
     r"uniform_: got both low= and a= \(PyTorch's name for it\); give one"),
    (lambda: init.orthogonal_(minitx.zeros(3)), ValueError, "orthogonal_: needs a tensor with at least 2 dimensions"),
    (lambda: init.eye_(minitx.zeros(2, 2, 2)), ValueError, r"eye_: needs a 2-D tensor, got shape \(2, 2, 2\)"),
    (lambda: init.dirac_(minitx.zeros(3, 3)), ValueError, "dirac_: needs a tensor with 3, 4 or 5 dimensions"),
    (lambda: init.sparse_(minitx.zeros(3, 2, 2), 0.5), ValueError, r"sparse_: needs a 2-D tensor, got shape \(3, 2, 2\)"),
    (lambda: init.sparse_(minitx.zeros(3, 2), 1.5), ValueError, r"sparse_: sparsity must be in \[0, 1\], got 1.5"),
    (lambda: init.sparse_(minitx.zeros(3, 2), 0.5, std=-1.0), ValueError, "sparse_: std must be >= 0, got -1.0"),
    (lambda: init.sparse_(minitx.zeros(3, 2, dtype="int64"), 0.5), TypeError,
     "sparse_: needs a floating-point tensor, got dtype int64"),
    (lambda: init.dirac_(minitx.zeros(3, 3, 3), groups=2), ValueError,
     r"dirac_: groups=2 must be a positive integer dividing dim 0 \(3\)"),
])
def test_bad_arguments_are_errors_naming_the_function(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("initializer", RANDOM, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool"])
def test_a_random_initializer_refuses_integer_and_bool_tensors(torch, initializer, dtype):
    """Its draws would be truncated into them (kaiming_uniform_ into int64 gave 0s and -1s); PyTorch
    refuses them too. The tensor is left as it was."""
    t = minitx.full((3, 2), 5, dtype=dtype)
    with pytest.raises(TypeError, match=f"{initializer.__name__}: needs a floating-point tensor, got dtype {dtype}"):
        initializer(t)
    np.testing.assert_array_equal(t.numpy(), np.full((3, 2), 5, dtype=dtype))
    with pytest.raises((NotImplementedError, RuntimeError)):
        getattr(torch.nn.init, initializer.__name__)(torch.zeros(3, 2, dtype=getattr(torch, dtype)))


# ---------------------------------------------------------------- generator=
# What each initializer drew into zeros(2, 2) from manual_seed(2024), one after another in RANDOM's
# order, before they took generator= (at ea0f6e3): without one they must draw the same, bit for bit.
BEFORE_GENERATOR = {
    "uniform_": [0.8749578595161438, 0.21315734088420868, 0.2742449939250946, 0.8071820139884949],
    "normal_": [-0.2522897720336914, -0.22186154127120972, 0.4181385636329651, -0.4312545359134674],
    "xavier_uniform_": [-0.5775763392448425, 0.9527095556259155, -0.5234110951423645, 0.67058926820755],
    "xavier_normal_": [1.1721596717834473, -0.4692898392677307, 0.8479533791542053, -0.2846899628639221],
    "kaiming_uniform_": [-1.4582679271697998, -0.8826382756233215, -1.09192955493927, 1.4046062231063843],
    "kaiming_normal_": [-1.3886836767196655, -2.0981967449188232, 0.634300947189331, -1.1652663946151733],
    "trunc_normal_": [0.4492899477481842, -0.7040182948112488, -1.6897674798965454, 0.4879165291786194],
    "orthogonal_": [0.8330331444740295, 0.5532230734825134, -0.5532230734825134, 0.8330331444740295],
}


def test_without_a_generator_the_global_draws_are_as_before():
    minitx.manual_seed(2024)
    minitx.rand(3), minitx.randn(3), minitx.normal(1.0, 2.0, (3,)), minitx.bernoulli(minitx.full((8,), 0.5))
    minitx.zeros(3).uniform_(-1, 1), minitx.zeros(3).normal_(0, 2)  # the draws taken before these, then
    for initializer in RANDOM:
        np.testing.assert_array_equal(initializer(minitx.zeros(2, 2)).numpy().ravel(),
                                      np.array(BEFORE_GENERATOR[initializer.__name__], dtype=np.float32),
                                      err_msg=initializer.__name__)


@pytest.mark.parametrize("initializer", RANDOM, ids=lambda f: f.__name__)
def test_a_generator_draws_apart_from_the_global_one(initializer):
    """Seeded alike, two Generators fill alike whatever the global generator drew, and leave it as
    it was; a saved state (through JSON) resumes the draws; another seed draws otherwise."""
    import json  # noqa: PLC0415
    minitx.manual_seed(0)
    first = initializer(minitx.zeros(6, 4), generator=minitx.Generator().manual_seed(5)).numpy()
    minitx.randn(7)
    before = minitx.random.get_state()
    g = minitx.Generator().manual_seed(5)
    np.testing.assert_array_equal(initializer(minitx.zeros(6, 4), generator=g).numpy(), first)
    assert minitx.random.get_state() == before
    state = json.loads(json.dumps(g.get_state()))
    second = initializer(minitx.zeros(6, 4), generator=g).numpy()
    assert not np.array_equal(first, second)
    resumed = minitx.Generator().set_state(state)
    np.testing.assert_array_equal(initializer(minitx.zeros(6, 4), generator=resumed).numpy(), second)
    other = initializer(minitx.zeros(6, 4), generator=minitx.Generator().manual_seed(6)).numpy()
    assert not np.array_equal(other, first)
    with pytest.raises(TypeError, match="generator: expected a minitx.Generator or None"):
        initializer(minitx.zeros(6, 4), generator=7)


@pytest.mark.parametrize("initializer", RANDOM, ids=lambda f: f.__name__)
def test_generator_is_where_pytorchs_is(torch, initializer):
    """generator= comes where torch.nn.init's does (by name or in its place), with default None."""
    import inspect  # noqa: PLC0415
    ours = list(inspect.signature(initializer).parameters.values())[1:]
    theirs = list(inspect.signature(getattr(torch.nn.init, initializer.__name__)).parameters.values())[1:]
    place = [p.name for p in theirs].index("generator")
    assert ours[place].name == "generator" and ours[place].default is None
    assert ours[place].kind is theirs[place].kind
    if initializer is not init.uniform_:  # uniform_'s low, high are PyTorch's a, b (both names work)
        assert [p.name for p in ours] == [p.name for p in theirs]
    g = minitx.Generator().manual_seed(1)
    args = [p.default for p in ours[:place]]
    positional = initializer(minitx.zeros(4, 3), *args, g).numpy()
    np.testing.assert_array_equal(positional, initializer(minitx.zeros(4, 3), generator=g.manual_seed(1)).numpy())
