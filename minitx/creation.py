"""Factories for new tensors.

* filled: zeros, ones, full, empty, eye, arange, linspace, logspace, scalar_tensor, and their
  ``*_like`` forms, which take a tensor's shape, dtype and device; tril_indices and triu_indices; the
  windows hann, hamming, blackman, bartlett and kaiser;
* drawn at random from minitx's seeded generators (``minitx.random``, so ``manual_seed`` makes a
  run repeat): rand, randn, randint, randperm, normal, bernoulli, multinomial, poisson, binomial,
  and rand_like, randn_like, randint_like; all but the ``*_like`` forms (which take none in
  PyTorch either) also draw from a ``generator=`` of their own (a ``minitx.Generator``,
  keyword-only but for poisson's and binomial's), as PyTorch's do;
* over memory that exists: from_numpy, as_tensor, asarray and from_dlpack, which copy nothing they need not.

dtypes are PyTorch's: float32 (``get_default_dtype()``) unless the arguments say otherwise, so
``full(shape, 7)`` is int64 and ``full(shape, True)`` bool, as ``tensor(7)`` and ``tensor(True)``
are; ``arange`` of whole numbers is int64; randint, randperm and multinomial give int64 indices.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from minitx import backend, interop
from minitx import random as mrandom
from minitx.autograd.tensor import Tensor, _infer_dtype, lengths, named, tensor
from minitx.dtypes import numpy_finfo, result_type
from minitx.ops._args import number, whole
from minitx.ops.bessel import bessel_i_values


def _make(fill, shape, dtype, device, requires_grad):
    device = backend.check_device(device)
    xp = backend.xp_for(device)
    dtype = backend.resolve_dtype(dtype)
    return Tensor(fill(xp, shape, dtype), requires_grad=requires_grad)


def get_default_dtype() -> np.dtype:
    """The dtype of new float tensors (PyTorch's ``get_default_dtype``): float32, unless
    minitx.set_default_dtype chose float64."""
    return backend.DEFAULT_FLOAT


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a minitx Tensor."""
    return isinstance(obj, Tensor)


# ---------------------------------------------------------------- filled


def zeros(*shape, size=None, dtype=None, device=None, requires_grad=False):
    shape = shape_arguments("zeros", shape, size)
    return _make(lambda xp, s, d: xp.zeros(s, dtype=d), shape, dtype, device, requires_grad)


def ones(*shape, size=None, dtype=None, device=None, requires_grad=False):
    shape = shape_arguments("ones", shape, size)
    return _make(lambda xp, s, d: xp.ones(s, dtype=d), shape, dtype, device, requires_grad)


def full(shape=None, value=None, dtype=None, device=None, requires_grad=False, *, size=None, fill_value=None):
    """``value`` everywhere; without ``dtype``, the value's as ``tensor(value)`` infers it (int64
    for 7, bool for True, float32 for 7.5), as PyTorch's and NumPy's full. PyTorch's names
    ``size=`` and ``fill_value=`` work too."""
    shape = one_of("full", "shape", shape, "size", size)
    value = one_of("full", "value", value, "fill_value", fill_value)
    if not isinstance(value, (bool, np.bool_)) and getattr(value, "dtype", None) != np.bool_:
        number("full", "value", value)  # one number (NumPy would spread a list), kept as given: a NumPy
                                        # float64 makes float64, as in tensor(); a 0-d bool is one too
    dtype = _infer_dtype(value) if dtype is None else dtype
    return _make(lambda xp, s, d: xp.full(s, value, dtype=d), new_shape("full", shape), dtype, device, requires_grad)


def empty(*shape, size=None, dtype=None, device=None, requires_grad=False):
    """A tensor whose values are whatever the memory held (NumPy's and PyTorch's empty): fill it
    before reading it."""
    shape = shape_arguments("empty", shape, size)
    return _make(lambda xp, s, d: xp.empty(s, dtype=d), shape, dtype, device, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    """The n x m identity (m = n by default): ones on the diagonal."""
    n, m = _count("eye", "n", n), _count("eye", "m", n if m is None else m)
    return _make(lambda xp, s, d: xp.eye(n, m, dtype=d), (), dtype, device, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from start to end, both included (PyTorch's linspace). Computed
    in float64 and cast, so an integer dtype truncates toward 0 as PyTorch's does (NumPy 2 floors)."""
    steps = _count("linspace", "steps", steps)
    return _make(lambda xp, s, d: xp.linspace(start, end, steps).astype(d), (), dtype, device, requires_grad)


def arange(start, stop=None, step=1, dtype=None, device=None, requires_grad=False):
    """Evenly spaced values in [start, stop); int64 when all three are whole numbers (NumPy's
    too: np.int64(5)), else float32."""
    if stop is None:
        start, stop = 0, start
    dtype = _infer_dtype([start, stop, step]) if dtype is None else dtype
    return _make(lambda xp, s, d: xp.arange(start, stop, step, dtype=d), (), dtype, device, requires_grad)


def logspace(start, end, steps, base=10.0, dtype=None, device=None, requires_grad=False):
    """base ** v for the ``steps`` values v of linspace(start, end, steps) (PyTorch's logspace):
    computed in float64 and cast, as linspace is."""
    steps = _count("logspace", "steps", steps)
    return _make(lambda xp, s, d: (float(base) ** xp.linspace(start, end, steps)).astype(d), (), dtype, device,
                 requires_grad)


def scalar_tensor(s, dtype=None, device=None, requires_grad=False):
    """The number ``s`` as a 0-d tensor of ``dtype``, float32 by default whatever s is (PyTorch's
    scalar_tensor; ``tensor(s)`` would infer int64 or bool)."""
    if not isinstance(s, (numbers.Number, np.generic)):
        raise TypeError(f"scalar_tensor: expected a number, got {type(s).__name__}")
    return _make(lambda xp, shape, d: xp.asarray(s).astype(d), (), dtype, device, requires_grad)


def tril_indices(row, col, offset=0, dtype="int64", device=None):
    """The (row, column) positions on and below diagonal ``offset`` of a row x col matrix, a 2 x N
    int64 tensor in row-major order (PyTorch's tril_indices; NumPy's gives the same two rows)."""
    return _triangle("tril_indices", row, col, offset, dtype, device, lambda xp: xp.tri(row, col, offset, dtype=bool))


def triu_indices(row, col, offset=0, dtype="int64", device=None):
    """The (row, column) positions on and above diagonal ``offset`` of a row x col matrix (see tril_indices)."""
    return _triangle("triu_indices", row, col, offset, dtype, device,
                     lambda xp: ~xp.tri(row, col, offset - 1, dtype=bool))


def _triangle(op, row, col, offset, dtype, device, inside):
    row, col, offset = _count(op, "row", row), _count(op, "col", col), whole(op, "offset", offset)
    dtype = backend.resolve_dtype(dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"{op}: dtype must be an integer one, got {dtype}")
    return _make(lambda xp, s, d: xp.stack(xp.nonzero(inside(xp))).astype(d).reshape(2, -1), (), dtype, device, False)


# ---------------------------------------------------------------- windows for spectral analysis
# Each is w[n] for n = 0 .. N - 1 over a window of length M: M = N - 1 symmetric (periodic=False, the
# first and last entries equal), M = N when periodic (PyTorch's default: the symmetric window of N + 1
# entries without its last one, which a DFT of length N takes as one period). N = 1 gives [1].


def hann_window(window_length, periodic=True, dtype=None, device=None, requires_grad=False):
    """w[n] = 0.5 - 0.5 cos(2 pi n / M) (PyTorch's hann_window)."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda xp, n, M: 0.5 - 0.5 * xp.cos(2 * math.pi * n / M))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, dtype=None, device=None,
                   requires_grad=False):
    """w[n] = alpha - beta cos(2 pi n / M) (PyTorch's hamming_window)."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda xp, n, M: alpha - beta * xp.cos(2 * math.pi * n / M))


def blackman_window(window_length, periodic=True, dtype=None, device=None, requires_grad=False):
    """w[n] = 0.42 - 0.5 cos(2 pi n / M) + 0.08 cos(4 pi n / M) (PyTorch's blackman_window)."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda xp, n, M: 0.42 - 0.5 * xp.cos(2 * math.pi * n / M) + 0.08 * xp.cos(4 * math.pi * n / M))


def bartlett_window(window_length, periodic=True, dtype=None, device=None, requires_grad=False):
    """w[n] = 1 - |2 n / M - 1|, a triangle (PyTorch's bartlett_window)."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda xp, n, M: 1 - xp.abs(2 * n / M - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, dtype=None, device=None, requires_grad=False):
    """w[n] = I_0(beta sqrt(1 - (2 n / M - 1)^2)) / I_0(beta), I_0 the modified Bessel function
    (minitx's i0; PyTorch's kaiser_window)."""
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda xp, n, M: bessel_i_values(0, beta * xp.sqrt(1 - (2 * n / M - 1) ** 2))
                   / bessel_i_values(0, xp.asarray(float(beta))))


def _window(op, N, periodic, dtype, device, requires_grad, w):
    """The window ``w(xp, n, M)``, computed in float64 and cast to ``dtype`` (a float one)."""
    N = _count(op, "window_length", N)
    if not isinstance(periodic, bool):  # (PyTorch's refuses 1 and None too)
        raise TypeError(f"{op}: periodic must be True or False, got {periodic!r}")
    dtype = _floating(op, dtype)

    def fill(xp, shape, d):
        if N <= 1:
            return xp.ones(N, dtype=d)
        return w(xp, xp.arange(N, dtype=np.float64), N if periodic else N - 1).astype(d)

    return _make(fill, (), dtype, device, requires_grad)


def zeros_like(t, dtype=None, device=None, requires_grad=False):
    t, like = _like("zeros_like", t, dtype, device)
    return zeros(t.shape, **like, requires_grad=requires_grad)


def ones_like(t, dtype=None, device=None, requires_grad=False):
    t, like = _like("ones_like", t, dtype, device)
    return ones(t.shape, **like, requires_grad=requires_grad)


def full_like(t, value=None, dtype=None, device=None, requires_grad=False, *, fill_value=None):
    """``value`` (PyTorch's ``fill_value=``) in ``t``'s shape and dtype, as PyTorch's:
    ``full_like(int_tensor, 2.7)`` holds 2."""
    value = one_of("full_like", "value", value, "fill_value", fill_value)
    t, like = _like("full_like", t, dtype, device)
    return full(t.shape, value, **like, requires_grad=requires_grad)


def empty_like(t, dtype=None, device=None, requires_grad=False):
    t, like = _like("empty_like", t, dtype, device)
    return empty(t.shape, **like, requires_grad=requires_grad)


# ---------------------------------------------------------------- drawn at random


def rand(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1)."""
    return _uniform(shape_arguments("rand", shape, size), _floating("rand", dtype), device, requires_grad, generator)


def randn(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples (mean 0, standard deviation 1)."""
    return _drawn(lambda rng, s: rng.standard_normal(s), shape_arguments("randn", shape, size), _floating("randn", dtype),
                  device, requires_grad, generator)


def randint(low=0, high=None, size=None, dtype=None, device=None, requires_grad=False, *, generator=None):
    """Whole numbers drawn uniformly from [low, high), int64 unless ``dtype`` says otherwise.
    PyTorch's forms: ``randint(high, size)``, ``randint(low, high, size)``, ``size=`` by name."""
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=...)
        low, high = 0, low
    if size is None:
        raise TypeError("randint: missing the size, e.g. randint(10, (3,)) or randint(0, 10, size=(3,))")
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in (low, high)):
        raise TypeError(f"randint: low and high must be whole numbers, got low={low!r}, high={high!r}")
    if low >= high:
        raise ValueError(f"randint: low must be less than high, got low={low}, high={high}")
    dtype = "int64" if dtype is None else dtype
    _check_holds("randint", f"[low, high) = [{low}, {high})", low, high - 1, dtype, exact=False)
    return _drawn(lambda rng, s: rng.integers(int(low), int(high), size=s, dtype=np.int64),
                  new_shape("randint", size), dtype, device, requires_grad, generator)


def randperm(n, dtype=None, device=None, requires_grad=False, *, generator=None):
    """The numbers 0 .. n-1 in a random order (int64): where uniform draws would put them
    sorted, so every order is equally likely."""
    n = _count("randperm", "n", n)
    dtype = "int64" if dtype is None else dtype
    _check_holds("randperm", f"n = {n}", 0, n - 1, dtype, exact=True)
    return _drawn(lambda rng, s: rng.random(s).argsort(), (int(n),), dtype, device, requires_grad, generator)


def rand_like(t, dtype=None, device=None, requires_grad=False):
    """rand in ``t``'s shape, dtype and device (unless others are given)."""
    t, like = _like("rand_like", t, dtype, device)
    return _uniform(t.shape, _floating("rand_like", like["dtype"]), like["device"], requires_grad)


def randn_like(t, dtype=None, device=None, requires_grad=False):
    """randn in ``t``'s shape, dtype and device (unless others are given)."""
    t, like = _like("randn_like", t, dtype, device)
    return _drawn(lambda rng, s: rng.standard_normal(s), t.shape,
                  _floating("randn_like", like["dtype"]), like["device"], requires_grad)


def randint_like(t, low=0, high=None, dtype=None, device=None, requires_grad=False):
    """randint in ``t``'s shape, dtype and device: ``randint_like(t, high)`` or
    ``randint_like(t, low, high)``; a float tensor gets whole numbers as floats, as in PyTorch."""
    t, like = _like("randint_like", t, dtype, device)
    return randint(low, high, t.shape, **like, requires_grad=requires_grad)


def normal(mean=0.0, std=1.0, size=None, dtype=None, device=None, requires_grad=False, *, generator=None):
    """Normal samples ``mean + std * randn``. ``mean`` and ``std`` are numbers (then ``size`` gives
    the shape) or tensors (the samples take their broadcast shape, device and dtype), as in
    PyTorch's normal. The samples are constants: no gradient flows back to mean or std (PyTorch's
    gives them a zero one). Checking a tensor std reads one flag back from the device."""
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if tensors:
        device = tensors[0].device if device is None else device
        dtype = np.result_type(*(t.dtype for t in tensors)) if dtype is None else dtype
    device = backend.check_device(device)
    mean, std = (backend.to_device(v.data, device) if isinstance(v, Tensor) else v for v in (mean, std))
    if not backend.to_host(std >= 0).all():  # NaN fails too: its samples would all be NaN (PyTorch refuses it)
        raise ValueError(f"normal: std must be >= 0, got {std!r:.60}")
    if size is None:
        try:
            size = np.broadcast_shapes(np.shape(mean), np.shape(std))
        except ValueError:
            raise ValueError(f"normal: mean of shape {np.shape(mean)} and std of shape {np.shape(std)} do not "
                             "broadcast") from None
    else:
        size = new_shape("normal", size)
    return _drawn(lambda rng, s: mean + std * rng.standard_normal(s), size, _floating("normal", dtype), device,
                  requires_grad, generator)


def bernoulli(input, p=None, *, generator=None):
    """0s and 1s in ``input``'s shape and dtype, each 1 with the probability ``input`` holds there
    (or ``p``, a number, for all), as PyTorch's bernoulli. Checking the probabilities reads one
    flag back from the device."""
    input = _tensor_of("bernoulli", input)  # noqa: A001
    _floating("bernoulli", input.dtype)
    probs = input.data if p is None else number("bernoulli", "p", p)
    if not backend.to_host((probs >= 0) & (probs <= 1)).all():  # NaN fails both
        raise ValueError(f"bernoulli: probabilities must be in [0, 1], got {probs!r:.60}")
    return _drawn(lambda rng, s: rng.random(s) < probs, input.shape, input.dtype, input.device, False, generator)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Category indices (int64) drawn with chances proportional to the weights of ``input``: a 1-d
    tensor of weights gives ``num_samples`` indices, a 2-d one that many per row. The weights need
    not sum to 1. Without replacement each category is drawn at most once (when the categories
    of weight > 0 run out, those of weight 0 follow, as in PyTorch). Checking the weights reads
    one flag back from the device."""
    _floating("multinomial", input.dtype)
    if input.ndim not in (1, 2):
        raise ValueError(f"multinomial: input must be 1-d or 2-d (rows of weights), got shape {input.shape}")
    n = input.shape[-1]
    if isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral) or num_samples <= 0:
        raise ValueError(f"multinomial: num_samples must be a whole number > 0, got {num_samples!r}")
    if not replacement and num_samples > n:
        raise ValueError(f"multinomial: cannot draw {num_samples} samples from {n} categories without "
                         "replacement; pass replacement=True")
    xp = backend.get_array_module(input.data)
    weights = (input.data[None] if input.ndim == 1 else input.data).astype(np.float64)  # rows
    bad, empty_row = backend.host_ints(xp.any(~xp.isfinite(weights) | (weights < 0)),
                                       xp.any(weights.sum(axis=1) <= 0))
    if bad:
        raise ValueError("multinomial: the weights must be finite and >= 0")
    if empty_row:
        raise ValueError("multinomial: every row of weights needs a sum > 0")
    rng = mrandom.drawing_from(generator, input.device)
    draw = _with_replacement if replacement else _without_replacement
    picks = draw(rng, xp, weights, int(num_samples)).astype(np.int64)
    return Tensor(picks.reshape(input.shape[:-1] + (int(num_samples),)))


def _with_replacement(rng, xp, weights, k):
    """k independent draws per row: u uniform in [0, 1), the category is the first whose share
    of the row's cumulative sum passes u. searchsorted takes one sorted array, so row r is
    shifted to [r, r + 1] and all rows are searched at once."""
    rows, n = weights.shape
    shares = xp.cumsum(weights, axis=1)
    shares /= shares[:, -1:]  # each row ends at exactly 1
    offsets = xp.arange(rows)[:, None]
    found = xp.searchsorted((shares + offsets).ravel(), (rng.random((rows, k)) + offsets).ravel(), side="right")
    # r + u can round up to r + 1 (u within r * 2**-53 of 1): keep it on the row's last category of weight > 0
    last = n - 1 - xp.argmax(weights[:, ::-1] > 0, axis=1)
    return xp.minimum(found.reshape(rows, k) - offsets * n, last[:, None])


def _without_replacement(rng, xp, weights, k):
    """k distinct categories per row, in the order drawn. Drawing one at a time, each with its
    weight's share of what is left, is the same as a race: category i arrives at an exponential
    time of rate w_i, -log(1 - u) / w_i, and the first k to arrive are the draws (Efraimidis and
    Spirakis). Weight 0 never arrives: its time is inf."""
    arrivals = -xp.log1p(-rng.random(weights.shape))
    with np.errstate(divide="ignore", invalid="ignore"):
        times = xp.where(weights > 0, arrivals / weights, xp.inf)
    return xp.argsort(times, axis=1)[:, :k]


# ---------------------------------------------------------------- the values of Tensor's random fills
# (t.bernoulli_(p) writes bernoulli_fill(t, p) into t): samples in t's shape, dtype and device


def poisson(input, generator=None):  # noqa: A002  (PyTorch's argument name)
    """Counts drawn from Poisson distributions, one per entry of ``input``, whose value there is
    the rate (the mean): k with probability rate^k e^-rate / k! (PyTorch's poisson), in input's
    shape and floating dtype. The rates must be finite and >= 0 (PyTorch's refuses a negative or
    NaN one too, and gives a meaningless count for inf); checking them reads one flag back from
    the device."""
    input = _tensor_of("poisson", input)  # noqa: A001
    _floating("poisson", input.dtype)
    rates = input.data.astype(np.float64)
    if not backend.to_host(backend.get_array_module(rates).isfinite(rates) & (rates >= 0)).all():
        raise ValueError(f"poisson: the rates must be finite and >= 0, got {input.data!r:.60}")
    return _drawn(lambda rng, s: rng.poisson(rates, s), input.shape, input.dtype, input.device, False, generator)


def binomial(count, prob, generator=None):
    """Numbers of successes in ``count`` trials that each succeed with chance ``prob`` (PyTorch's
    binomial): one draw per entry of count and prob broadcast together, as floats of their
    common dtype (count + prob's; PyTorch asks for one dtype). count must hold whole numbers >= 0
    and prob numbers in [0, 1] (PyTorch's draws from any, meaninglessly: 5 successes of 5 for
    prob 1.5, 0 for count 5.5); checking them reads one flag back from the device."""
    count, prob = as_tensor(count), as_tensor(prob)
    dtype = result_type(count, prob)
    _floating("binomial", dtype)
    xp = backend.get_array_module(count.data)
    try:
        n, p = xp.broadcast_arrays(count.data.astype(np.float64), prob.data.astype(np.float64))
    except ValueError:
        raise ValueError(f"binomial: count of shape {count.shape} and prob of shape {prob.shape} do not "
                         "broadcast") from None
    bad_n, bad_p = backend.host_ints(xp.any(~xp.isfinite(n) | (n < 0) | (n != xp.floor(n))),
                                     xp.any(~((p >= 0) & (p <= 1))))  # (NaN fails both)
    if bad_n:
        raise ValueError(f"binomial: count must hold whole numbers >= 0, got {count.data!r:.60}")
    if bad_p:
        raise ValueError(f"binomial: prob must hold numbers in [0, 1], got {prob.data!r:.60}")
    trials = n.astype(np.int64)
    return _drawn(lambda rng, s: rng.binomial(trials, p, s), n.shape, dtype, count.device, False, generator)


def bernoulli_fill(t, p, generator=None) -> Tensor:
    """0s and 1s, each 1 with the probability ``p`` (a number, or a tensor that broadcasts to t's
    shape), in any dtype (t.bernoulli_(p); PyTorch's fills integers and booleans too)."""
    probs = p.data if isinstance(p, Tensor) else p if getattr(p, "ndim", 0) else number("bernoulli_", "p", p)
    if getattr(probs, "ndim", 0) and not _broadcasts_to(probs.shape, t.shape):
        raise ValueError(f"bernoulli_: p of shape {probs.shape} does not broadcast to the tensor's shape {t.shape}")
    if not backend.to_host((probs >= 0) & (probs <= 1)).all():  # NaN fails both
        raise ValueError(f"bernoulli_: p must be in [0, 1], got {probs!r:.60}")
    return _drawn(lambda rng, s: rng.random(s) < probs, t.shape, t.dtype, t.device, False, generator)


def _broadcasts_to(shape, target) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def exponential_fill(t, lambd, generator=None) -> Tensor:
    """Exponential samples of rate ``lambd`` (mean 1 / lambd), by inversion: -log(1 - u) / lambd
    for u uniform in [0, 1), which is finite (t.exponential_(lambd)); floating dtypes only."""
    _floating("exponential_", t.dtype)
    lambd = number("exponential_", "lambd", lambd)
    if not lambd > 0:
        raise ValueError(f"exponential_: lambd (the rate) must be > 0, got {lambd!r}")

    def draw(rng, shape):
        u = rng.random(shape)
        return -backend.get_array_module(u).log1p(-u) / lambd

    return _drawn(draw, t.shape, t.dtype, t.device, False, generator)


def cauchy_fill(t, median, sigma, generator=None) -> Tensor:
    """Cauchy samples, density sigma / (pi ((x - median)^2 + sigma^2)), by inverting its CDF
    1/2 + atan((x - median) / sigma) / pi: median + sigma * tan(pi (u - 1/2)) for u uniform in [0, 1)
    (t.cauchy_(median, sigma)); floating dtypes only."""
    _floating("cauchy_", t.dtype)
    median, sigma = number("cauchy_", "median", median), number("cauchy_", "sigma", sigma)
    if not sigma > 0:
        raise ValueError(f"cauchy_: sigma (the scale) must be > 0, got {sigma!r}")

    def draw(rng, shape):
        u = rng.random(shape)
        return median + sigma * backend.get_array_module(u).tan(np.pi * (u - 0.5))

    return _drawn(draw, t.shape, t.dtype, t.device, False, generator)


def log_normal_fill(t, mean, std, generator=None) -> Tensor:
    """exp(mean + std * z) for z standard normal: samples whose log is N(mean, std^2), as PyTorch's
    ``mean`` and ``std`` are the log's (t.log_normal_(mean, std)); floating dtypes only."""
    _floating("log_normal_", t.dtype)
    mean, std = number("log_normal_", "mean", mean), number("log_normal_", "std", std)
    if not std > 0:
        raise ValueError(f"log_normal_: std must be > 0, got {std!r}")

    def draw(rng, shape):
        z = rng.standard_normal(shape)
        return backend.get_array_module(z).exp(mean + std * z)

    return _drawn(draw, t.shape, t.dtype, t.device, False, generator)


def geometric_fill(t, p, generator=None) -> Tensor:
    """The number k = 1, 2, ... of Bernoulli(p) trials up to the first success, P(k) = (1 - p)^(k - 1) p
    (t.geometric_(p)), by inversion: for u uniform in (0, 1],

        k = floor(log(u) / log(1 - p)) + 1,   so  P(k > j) = P(u <= (1 - p)^j) = (1 - p)^j

    In any number dtype; a k past what it holds is inf in a float dtype (as PyTorch's) and the largest
    it holds in an integer one (int64: 2**63 - 1024, the float64 below 2**63), where PyTorch's wraps around."""
    if t.dtype.kind == "b":
        raise TypeError("geometric_: needs a number dtype, got bool")
    p = number("geometric_", "p", p)
    if not 0 < p < 1:
        raise ValueError(f"geometric_: p must be in (0, 1), got {p!r}")
    floating = backend.is_floating(t.dtype)
    top = float(numpy_finfo(t.dtype).max) if floating else float(_whole_numbers(t.dtype)[1])
    if not floating and int(top) > _whole_numbers(t.dtype)[1]:  # (int64's largest rounds up to 2**63 as a float)
        top = float(np.nextafter(top, 0.0))

    def draw(rng, shape):
        u = 1 - rng.random(shape)
        xp = backend.get_array_module(u)
        with np.errstate(over="ignore"):  # (p below 1e-300: the quotient passes float64's largest, inf)
            k = xp.floor(xp.log(u) / math.log1p(-p)) + 1
        return xp.where(k <= top, k, xp.inf if floating else top)

    return _drawn(draw, t.shape, t.dtype, t.device, False, generator)


def random_fill(t, bounds, generator=None) -> Tensor:
    """Whole numbers drawn uniformly from [low, high) for ``bounds`` (low, high), (high,) (low 0)
    or () (from 0 to the largest whole number of t's dtype, included: its maximum for integers,
    2**digits for floats, past which not every whole number is there), as PyTorch's random_."""
    if len(bounds) > 2 or not all(isinstance(b, numbers.Integral) and not isinstance(b, bool) for b in bounds):
        raise TypeError(f"random_: expected random_(), random_(to) or random_(from, to) with whole numbers, "
                        f"got {bounds!r}")
    smallest, largest = _whole_numbers(t.dtype)
    if bounds:
        low, high = (0, bounds[0] - 1) if len(bounds) == 1 else (bounds[0], bounds[1] - 1)
    else:
        low, high = 0, 2 ** (numpy_finfo(t.dtype).nmant + 1) if backend.is_floating(t.dtype) else largest
    if not smallest <= low <= high <= largest:
        raise ValueError(f"random_: [from, to) = [{low}, {high + 1}) must hold a number and fit the tensor's "
                         f"{t.dtype.name} (whole numbers from {smallest} to {largest})")
    return _drawn(lambda rng, s: rng.integers(low, high, size=s, dtype=np.int64, endpoint=True), t.shape, t.dtype,
                  t.device, False, generator)


def _check_holds(op, asked, low, high, dtype, exact):
    """Refuse draws from [low, high] (both included) that ``dtype`` cannot hold: cast, they would
    wrap (randint(0, 300, dtype=uint8) drawing 44 for 300) or saturate, no longer uniform, and a
    randperm no longer a permutation (PyTorch refuses them too). Floats hold whole numbers up to
    their largest finite value, and with ``exact`` only those up to 2**digits, past which some
    are missing (PyTorch's limit for randperm; its randint only warns there)."""
    dtype = backend.resolve_dtype(dtype)
    if backend.is_floating(dtype):
        info = numpy_finfo(dtype)
        largest = 2 ** (info.nmant + 1) if exact else int(info.max)
        smallest = -largest
    else:
        smallest, largest = _whole_numbers(dtype)
    if high >= low and not smallest <= low <= high <= largest:
        raise ValueError(f"{op}: {asked} draws whole numbers from {low} to {high}, which dtype {dtype.name} "
                         f"does not hold (it holds those from {smallest} to {largest})")


def _whole_numbers(dtype) -> tuple:
    """The smallest and largest whole numbers random_ draws for ``dtype``: those it holds, within
    int64 (what the draw gives)."""
    if dtype.kind == "b":
        return 0, 1
    int64 = np.iinfo(np.int64)
    if dtype.kind in "iu":
        return max(np.iinfo(dtype).min, int64.min), min(np.iinfo(dtype).max, int64.max)
    return int64.min, int64.max


# ---------------------------------------------------------------- over existing memory


def from_numpy(array) -> Tensor:
    """A Tensor on the memory of the NumPy array ``array``, as PyTorch's from_numpy: writes
    through either are seen by the other. dtypes a Tensor does not hold (complex, float128) are
    refused rather than converted."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    if not backend.holds(array.dtype):
        raise TypeError(f"from_numpy: cannot hold an array of dtype {array.dtype}; expected one of "
                        f"{backend.dtype_names()}{backend.byte_order_hint(array.dtype)}")
    return Tensor(array)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, copying only when it must (PyTorch's as_tensor): a Tensor already of
    ``dtype`` on ``device`` is returned itself, a NumPy or CuPy array (or any DLPack producer) of
    a dtype minitx holds is wrapped without a copy, and the rest is converted as ``tensor`` does.
    Without ``device`` a tensor or array stays where it is; Python data goes to the default device.

    (``minitx.autograd.as_tensor(value, like=...)`` is another function: how ops take numbers.)"""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    array = interop.as_array(data, "as_tensor")
    if isinstance(array, backend.get_array_module(array).ndarray) and backend.holds(array.dtype):
        return Tensor(array).to(device=device, dtype=dtype)
    return tensor(array, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None) -> Tensor:
    """``obj`` as a tensor, PyTorch's asarray: with copy=None it shares obj's memory where it can
    (as as_tensor: a tensor or a NumPy or CuPy array already of ``dtype`` on ``device``), else
    copies; copy=True always copies (a tensor's copy is a clone, which keeps its gradient);
    copy=False never does, and refuses what would need one. requires_grad=None keeps a tensor's
    own flag (PyTorch 2.13's default: obj.requires_grad); True sets it on the result (on obj itself
    where the result is obj, as PyTorch's); False detaches the result from the graph."""
    if copy not in (None, True, False):
        raise TypeError(f"asarray: copy must be None, True or False, got {copy!r}")
    if isinstance(obj, Tensor):
        source, out = obj.data, obj.to(device=device, dtype=dtype)
    else:
        source = interop.as_array(obj, "asarray")
        with named("asarray"):
            out = as_tensor(source, dtype=dtype, device=device)
    shared = out.data is source
    if copy is False and not shared:
        what = f"an array of dtype {source.dtype.name}" if hasattr(source, "dtype") else f"a {type(obj).__name__}"
        raise ValueError(f"asarray: copy=False, but {what} needs a copy to become a tensor of dtype {out.dtype.name} "
                         f"on {out.device}")
    if copy and shared:
        out = out.clone()
    if requires_grad is not None and requires_grad != out.requires_grad:
        out = out.requires_grad_() if requires_grad else out.detach()
    return out


def from_dlpack(x, requires_grad=False) -> Tensor:
    """A Tensor on the memory of ``x``, any DLPack producer (a PyTorch, CuPy, NumPy or JAX
    array), without a copy: on 'cpu' for CPU memory, on 'cuda' for GPU memory. Writes through
    either side are seen by the other, for every dtype a Tensor holds (float16, int8, uint16 ...
    included); another (complex) is refused by name (see minitx.interop). A PyTorch tensor that
    requires grad is refused, as PyTorch's own export refuses it: pass ``t.detach()``."""
    return Tensor(interop.array_from_dlpack(x), requires_grad=requires_grad)


# ---------------------------------------------------------------- helpers


def _drawn(draw, shape, dtype, device, requires_grad, generator=None):
    """The samples ``draw(rng, shape)`` from the seeded generator of ``device`` (or ``generator``,
    a minitx.Generator, where one is given), as ``dtype``. The generator is NumPy's or CuPy's, so
    ``draw`` keeps to what both have: random, integers, standard_normal (CuPy's has no
    permutation or choice)."""
    device = backend.check_device(device)
    samples = draw(mrandom.drawing_from(generator, device), shape)
    with np.errstate(over="ignore"):  # a draw past a narrow float dtype's largest value is inf there, as PyTorch's
        return Tensor(samples.astype(backend.resolve_dtype(dtype)), requires_grad=requires_grad)


def _uniform(shape, dtype, device, requires_grad, generator=None):
    """Uniform samples in [0, 1) as ``dtype``: drawn in float64, whose values just below 1 round to
    1 in a narrower dtype (one in 2,000 in float16), so they are kept at its largest value below 1."""
    out = _drawn(lambda rng, s: rng.random(s), shape, dtype, device, requires_grad, generator)
    below_one = float(np.nextafter(np.ones((), out.dtype), np.zeros((), out.dtype)))  # (exact as a Python float)
    backend.get_array_module(out.data).minimum(out.data, below_one, out=out.data)
    return out


def _floating(op, dtype):
    """``dtype`` (the default float for None), checked to be a float: samples of a continuous
    distribution have no integer form (PyTorch refuses them too)."""
    dtype = backend.resolve_dtype(dtype, op)
    if not backend.is_floating(dtype):
        raise TypeError(f"{op}: needs a floating dtype, got {dtype}")
    return dtype


def _tensor_of(op, data) -> Tensor:
    """``data`` as a tensor: itself, an array wrapped without a copy, or data one holds converted (a
    list), else a TypeError naming ``op``."""
    with named(op):
        return as_tensor(data)


def _like(op, t, dtype, device) -> tuple:
    """``t`` as a tensor (data one holds too, else an error naming ``op``), and the dtype and device of
    a ``*_like`` result: t's, unless others are given."""
    t = _tensor_of(op, t)
    return t, {"dtype": t.dtype if dtype is None else dtype, "device": t.device if device is None else device}


def new_shape(op, shape) -> tuple:
    """A new tensor's shape, given as a tuple, a list or one length: ints >= 0 (NumPy's and 0-d
    integer tensors too), else an error naming ``op`` (NumPy's "an integer is required" names none)."""
    shape = lengths(op, shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"{op}: a shape's lengths must be >= 0, got {shape}")
    return shape


def _count(op, what, n) -> int:
    """A number of things (a length, steps) as an int (_args.whole: a 0-d integer tensor too), >= 0;
    else a TypeError (not an int) or ValueError (below 0) naming ``op``."""
    n = whole(op, what, n)
    if n < 0:
        raise ValueError(f"{op}: {what} must be a whole number >= 0, got {n}")
    return n


def shape_arguments(op, shape, size=None):
    """zeros(2, 3), zeros((2, 3)) and PyTorch's zeros(size=(2, 3)) all mean shape (2, 3) (new_shape)."""
    if size is not None:
        if shape:
            raise TypeError(f"{op}: got the shape twice, {shape} and size={size!r}; give one")
        return new_shape(op, size)
    return new_shape(op, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)


def one_of(op, name, value, torch_name, torch_value):
    """An argument given under minitx's name or PyTorch's (``value`` or ``fill_value``): once."""
    if (value is None) == (torch_value is None):
        raise TypeError(f"{op}: expected {name} (or PyTorch's {torch_name}=) once, got "
                        f"{'both' if value is not None else 'neither'}")
    return value if torch_value is None else torch_value
