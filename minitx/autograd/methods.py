"""PyTorch's method names on ``Tensor``: ``x.exp()`` is ``minitx.functional.exp(x)``.

``tensor.py`` holds what a tensor is: its array, gradient and graph, its operators, its in-place
writes. This file holds the methods code written for PyTorch calls on it: most are one line, a
call into ``minitx.functional`` (or ``minitx.ops.matrix`` for the matrix functions), and a few
are small compositions of ops (``narrow``, ``split``, ``chunk``: views cut along an axis). Each
op itself, its backward and its math, is in ``minitx/ops``.

They are written as the body of a class, for reading; after it, every method with an axis learns
PyTorch's keywords (``dim=``, ``keepdim=``, ...) and every op that has one gets its in-place form
(``x.exp_()``). The end of tensor.py makes them all Tensor's own, once Tensor exists. (The class is
no base class of Tensor: this file imports minitx.functional, whose ops need Tensor first.)
"""
from __future__ import annotations

import functools
import math
import numbers
import types

import numpy as np

from minitx import backend, creation, functional as F
from minitx.autograd.tensor import Tensor, _method_axis, _names_a_dtype, bits_as, lengths, tensor
from minitx.keywords import takes_torch_keywords
from minitx.ops import matrix
from minitx.ops._args import flag, operands, type_name, whole
from minitx.ops.reduction import normalize_axes


class TensorMethods:
    """The methods, gathered for reading; each becomes ``Tensor``'s own (at the end of tensor.py)."""

    # ---------------------------------------------------------------- reductions, shapes, the common math
    # (those with an axis also take PyTorch's dim=, keepdim=, ...: the loop after the class)
    def sum(self, axis=None, keepdims=False): return F.sum(self, axis, keepdims)
    def mean(self, axis=None, keepdims=False): return F.mean(self, axis, keepdims)
    def max(self, axis=None, keepdims=False): return F.max(self, axis, keepdims)
    def min(self, axis=None, keepdims=False): return F.min(self, axis, keepdims)
    def var(self, axis=None, ddof=0, keepdims=False): return F.var(self, axis, ddof, keepdims)
    def logsumexp(self, axis=None, keepdims=False): return F.logsumexp(self, axis, keepdims)
    def norm(self, p=2, axis=None, keepdims=False): return F.norm(self, p, axis, keepdims)
    def argmax(self, axis=None, keepdims=False): return F.argmax(self, axis, keepdims)
    def any(self, axis=None, keepdims=False):
        return Tensor(self.data.any(axis=normalize_axes(axis, self.ndim, "any"), keepdims=keepdims))

    def all(self, axis=None, keepdims=False):
        return Tensor(self.data.all(axis=normalize_axes(axis, self.ndim, "all"), keepdims=keepdims))

    def reshape(self, *shape): return F.reshape(self, _shape_args(shape))
    def view(self, *shape, dtype=None):
        """The tensor with another shape (``x.view(2, -1)``: a reshape), or, given a dtype, its bytes
        read as that dtype (``x.view(minitx.int32)``, PyTorch's view(dtype): tensor.py's bits_as)."""
        shape = _shape_args(shape)
        if dtype is None and len(shape) == 1 and isinstance(shape[0], (str, np.dtype, type)) \
                and _names_a_dtype(shape[0]):
            shape, dtype = (), shape[0]
        if dtype is not None:
            if shape:
                raise TypeError(f"view: takes a shape or a dtype, got both: {shape!r} and dtype={dtype!r}")
            return bits_as(self, dtype)
        return F.reshape(self, lengths("view", shape))

    def transpose(self, *axes): return F.transpose(self, _shape_args(axes) or None)
    def permute(self, *axes): return F.permute(self, _shape_args(axes))
    def swapaxes(self, axis1, axis2): return F.swapaxes(self, axis1, axis2)
    def squeeze(self, axis=None): return F.squeeze(self, axis)
    def unsqueeze(self, axis): return F.unsqueeze(self, axis)
    def broadcast_to(self, shape): return F.broadcast_to(self, shape)
    def exp(self): return F.exp(self)
    def log(self): return F.log(self)
    def sqrt(self): return F.sqrt(self)
    def tanh(self): return F.tanh(self)
    def sigmoid(self): return F.sigmoid(self)
    def relu(self): return F.relu(self)
    def abs(self): return F.abs(self)
    def clip(self, min=None, max=None): return F.clip(self, min, max)
    def clamp(self, min=None, max=None): return F.clip(self, min, max)  # noqa: A002 (PyTorch's names)
    def pow(self, exponent): return F.pow(self, exponent)
    def matmul(self, other): return F.matmul(self, other)
    def flatten(self, start_axis=0, end_axis=-1): return F.reshape(self, _flattened(self.shape, start_axis, end_axis))
    def expand(self, *sizes): return F.broadcast_to(self, _expanded(self.shape, _shape_args(sizes)))
    def masked_fill(self, mask, value): return F.masked_fill(self, mask, value)
    def softmax(self, axis=-1): return F.softmax(self, axis)
    def log_softmax(self, axis=-1): return F.log_softmax(self, axis)

    # PyTorch's names for what the operators and functions above do (axis for PyTorch's dim)
    # (the functions, not the operators: x == "a" is False, Python's answer, where x.eq("a") is refused)
    def eq(self, other): return F.equal(self, other)
    def ne(self, other): return F.not_equal(self, other)
    def gt(self, other): return F.greater(self, other)
    def ge(self, other): return F.greater_equal(self, other)
    def lt(self, other): return F.less(self, other)
    def le(self, other): return F.less_equal(self, other)
    def neg(self): return -self
    def square(self): return F.square(self)
    def maximum(self, other): return F.maximum(self, other)
    def minimum(self, other): return F.minimum(self, other)
    def amax(self, axis=None, keepdims=False): return F.max(self, axis, keepdims)  # (ties share dy: as PyTorch's amax)
    def amin(self, axis=None, keepdims=False): return F.min(self, axis, keepdims)
    def expand_as(self, other): return F.broadcast_to(self, _shape_of("expand_as", other))
    def view_as(self, other): return F.reshape(self, _shape_of("view_as", other))
    def reshape_as(self, other): return F.reshape(self, _shape_of("reshape_as", other))
    def narrow(self, axis, start, length):
        """Entries start .. start + length - 1 along ``axis`` (a view), as PyTorch's narrow: a negative
        start counts from the end, and the span must lie inside the axis (a slice would cut it short)."""
        axis = _method_axis("narrow", axis, self.shape)
        n = self.shape[axis]
        start, length = whole("narrow", "start", start), whole("narrow", "length", length)  # (a 0-d int tensor too)
        if not -n <= start <= n:
            raise IndexError(f"narrow: start {start} is out of range for axis {axis} of length {n}; expected an "
                             f"int in [{-n}, {n}]")
        start = start % n if start < 0 else start  # (before the slice: -1 + 1 would be the empty slice -1:0)
        if length < 0 or start + length > n:
            raise ValueError(f"narrow: start {start} and length {length} do not fit axis {axis} of length {n}; "
                             f"expected 0 <= length <= {n - start}")
        return self._along(axis, slice(start, start + length))

    def movedim(self, source, destination): return F.movedim(self, source, destination)

    def split(self, split_size_or_sections, dim=0):
        """Pieces along axis ``dim``, as PyTorch's Tensor.split (NumPy arrays have no split method;
        F.split is NumPy's function: a number of equal parts, or cut points). An int cuts pieces of
        that size, the last one smaller where it does not divide; a list gives each piece's size."""
        dim = _method_axis("split", dim, self.shape)
        n = self.shape[dim]
        if not isinstance(split_size_or_sections, (tuple, list)):
            try:
                size = whole("split", "split_size_or_sections", split_size_or_sections)
            except TypeError:
                raise TypeError(f"split: split_size_or_sections must be an int or a list of ints, got "
                                f"{split_size_or_sections!r}") from None
            if size <= 0:
                raise ValueError(f"split: the piece size must be >= 1, got {size}")
            sizes = [min(size, n - start) for start in range(0, n, size)] or [0]
        else:
            sizes = [whole("split", "a piece size", s) for s in split_size_or_sections]
            if sum(sizes) != n or min(sizes, default=0) < 0:
                raise ValueError(f"split: sizes {sizes} do not add up to the {n} entries of axis {dim}")
        starts = np.cumsum([0] + sizes[:-1])
        return tuple(self.narrow(dim, int(start), size) for start, size in zip(starts, sizes))

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        """Fill with U(a, b) samples, in place: nn.init.uniform_'s draws (minitx's seeded generator,
        or generator=), written as any in-place op's result (refused into a parameter while a
        graph is recorded, as PyTorch's; nn.init writes there, as PyTorch's does under no_grad)."""
        from minitx.nn import init  # noqa: PLC0415  (nn builds on tensors)
        return self._in_place("uniform_", lambda x: init.uniform_(x.new_zeros(x.shape), a, b, generator=generator))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill with N(mean, std^2) samples, in place: nn.init.normal_'s draws (see uniform_)."""
        from minitx.nn import init  # noqa: PLC0415
        return self._in_place("normal_", lambda x: init.normal_(x.new_zeros(x.shape), mean, std, generator=generator))

    # random fills: samples drawn as minitx.creation's samplers draw them (the seeded generator of
    # the tensor's device, or generator=), written in as any in-place op's result
    def bernoulli_(self, p=0.5, *, generator=None):
        return self._in_place("bernoulli_", creation.bernoulli_fill, p, generator)

    def exponential_(self, lambd=1.0, *, generator=None):
        return self._in_place("exponential_", creation.exponential_fill, lambd, generator)

    def random_(self, *bounds, to=None, generator=None):
        """Whole numbers drawn uniformly from [from, to), PyTorch's random_(from, to), random_(to) or
        random_() (from 0 to the largest of the dtype, or for floats to 2**mantissa bits, inclusive)."""
        return self._in_place("random_", creation.random_fill, bounds + (() if to is None else (to,)), generator)

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        return self._in_place("cauchy_", creation.cauchy_fill, median, sigma, generator)

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        return self._in_place("log_normal_", creation.log_normal_fill, mean, std, generator)

    def geometric_(self, p, *, generator=None):
        return self._in_place("geometric_", creation.geometric_fill, p, generator)

    # minitx.bernoulli and minitx.multinomial drawn from this tensor's probabilities or weights
    def bernoulli(self, p=None, *, generator=None): return creation.bernoulli(self, p, generator=generator)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        return creation.multinomial(self, num_samples, replacement, generator=generator)

    def unflatten(self, axis, sizes):
        """Axis ``axis`` split into ``sizes`` (one of them may be -1), as PyTorch's unflatten."""
        return F.reshape(self, _unflattened(self.shape, axis, sizes))
    def repeat_interleave(self, repeats, axis=None): return F.repeat(self, repeats, axis)  # (PyTorch's repeat is tile)
    def masked_select(self, mask): return F.masked_select(self, mask)
    def where(self, condition, other): return F.where(condition, self, other)  # (PyTorch's x.where(c, y))
    def logical_not(self): return F.logical_not(self)
    def logical_and(self, other): return (self != 0) & (operands("logical_and", self, other)[1] != 0)
    def logical_or(self, other): return (self != 0) | (operands("logical_or", self, other)[1] != 0)
    def logical_xor(self, other): return (self != 0) ^ (operands("logical_xor", self, other)[1] != 0)
    def add(self, other, *, alpha=1): return F.add(self, other, alpha=alpha)
    def sub(self, other, *, alpha=1): return F.sub(self, other, alpha=alpha)
    def mul(self, other): return self * other
    def div(self, other, *, rounding_mode=None): return F.divide(self, other, rounding_mode=rounding_mode)
    def clamp_min(self, min): return F.clip(self, min, None)  # noqa: A002
    def clamp_max(self, max): return F.clip(self, None, max)  # noqa: A002
    def log10(self): return F.log10(self)

    def t(self):
        """A matrix transposed; a vector or a 0-d tensor as it is (PyTorch's t)."""
        if self.ndim > 2:
            raise ValueError(f"t: expects a tensor with at most 2 axes, got shape {self.shape}; for more, "
                             "swapaxes(-2, -1) or mT")
        return F.transpose(self) if self.ndim == 2 else self

    def dot(self, other): return _product("dot", self, other, 1)
    def mm(self, other): return _product("mm", self, other, 2)
    def bmm(self, other): return _product("bmm", self, other, 3)

    def nonzero(self, *, as_tuple=False):
        """The positions of the entries that are not 0: one row per entry, one column per axis
        (int64); with ``as_tuple``, one 1-d tensor per axis, as NumPy's nonzero (and PyTorch's)."""
        found = F.nonzero(self)
        return tuple(found[:, k] for k in range(found.shape[1])) if as_tuple else found

    def _along(self, axis, index):
        """self[..., index, ...] with ``index`` (an int, slice or index tensor) on axis ``axis``."""
        return self[(slice(None),) * (axis % max(self.ndim, 1)) + (index,)]

    def count_nonzero(self, axis=None):
        """How many entries are not 0 (over ``axis``), an int64 tensor."""
        return F.sum((self != 0).to(dtype="int64"), axis)

    def index_select(self, axis, index):
        """The entries at the integer positions ``index`` (1-d) along ``axis``, as PyTorch's."""
        index = index if isinstance(index, Tensor) else tensor(index)
        if index.ndim != 1:
            raise ValueError(f"index_select: index must be 1-d, got shape {index.shape}")
        axis = _method_axis("index_select", axis, self.shape, takes_0d=True)
        return self._along(axis, index).contiguous()  # (NumPy lays a middle axis's pick out of order)

    def chunk(self, chunks, axis=0):
        """At most ``chunks`` pieces along ``axis``, each of ceil(n / chunks) entries but the last,
        as PyTorch's chunk (views; fewer pieces where n is small)."""
        if isinstance(chunks, bool) or not isinstance(chunks, numbers.Integral) or chunks < 1:
            raise ValueError(f"chunk: chunks must be an int >= 1, got {chunks!r}")
        axis = _method_axis("chunk", axis, self.shape)
        n = self.shape[axis]
        if n == 0:  # nothing to share out: ``chunks`` empty pieces, as PyTorch's
            return tuple(self._along(axis, slice(0, 0)) for _ in range(chunks))
        size = -(-n // chunks)
        return tuple(self._along(axis, slice(start, start + size)) for start in range(0, n, size))

    def tensor_split(self, indices_or_sections, axis=0):
        """Pieces as equal as can be, or cut at the given points (PyTorch's; F.tensor_split)."""
        return F.tensor_split(self, indices_or_sections, axis)

    def hsplit(self, indices_or_sections): return F.hsplit(self, indices_or_sections)
    def vsplit(self, indices_or_sections): return F.vsplit(self, indices_or_sections)
    def dsplit(self, indices_or_sections): return F.dsplit(self, indices_or_sections)

    def unfold(self, dimension, size, step):
        """Windows of ``size`` entries along ``dimension``, one every ``step``, on a new last axis:
        PyTorch's Tensor.unfold, a sliding window (F.sliding_windows; a copy). F.unfold is im2col."""
        return F.sliding_windows(self, dimension, size, step)

    def unbind(self, axis=0):
        """The slices along ``axis``, each without it (views)."""
        axis = _method_axis("unbind", axis, self.shape)
        return tuple(self._along(axis, k) for k in range(self.shape[axis]))

    # ---------------------------------------------------------------- more math, activations, scans, indexing
    def sin(self): return F.sin(self)
    def cos(self): return F.cos(self)
    def erf(self): return F.erf(self)
    def sign(self): return F.sign(self)
    def floor(self): return F.floor(self)

    def sort(self, axis=-1, descending=False, *, stable=False): return F.sort(self, axis, descending, stable=stable)

    def argsort(self, axis=-1, descending=False, *, stable=False):
        return F.argsort(self, axis, descending, stable=stable)

    def topk(self, k, axis=-1, largest=True, sorted=True): return F.topk(self, k, axis, largest, sorted)  # noqa: A002
    def ceil(self): return F.ceil(self)
    def round(self, decimals=0): return F.round(self, decimals)
    def trunc(self): return F.trunc(self)
    def log2(self): return F.log2(self)
    def exp2(self): return F.exp2(self)
    def log1p(self): return F.log1p(self)
    def expm1(self): return F.expm1(self)
    def rsqrt(self): return F.rsqrt(self)
    def reciprocal(self): return F.reciprocal(self)
    def isnan(self): return F.isnan(self)
    def isinf(self): return F.isinf(self)
    def isfinite(self): return F.isfinite(self)
    # PyTorch's further elementwise math (minitx/ops/elementwise.py; the special functions special.py's, i0 bessel.py's)
    def erfc(self): return F.erfc(self)
    def erfinv(self): return F.erfinv(self)
    def lgamma(self): return F.lgamma(self)
    def digamma(self): return F.digamma(self)
    def polygamma(self, n): return F.polygamma(n, self)
    def i0(self): return F.i0(self)
    def igamma(self, other): return F.igamma(self, other)
    def igammac(self, other): return F.igammac(self, other)
    def mvlgamma(self, p): return F.mvlgamma(self, p)
    def sinc(self): return F.sinc(self)
    def logit(self, eps=None): return F.logit(self, eps)
    def frac(self): return F.frac(self)
    def deg2rad(self): return F.deg2rad(self)
    def rad2deg(self): return F.rad2deg(self)
    def signbit(self): return F.signbit(self)
    def isposinf(self): return F.isposinf(self)
    def isneginf(self): return F.isneginf(self)
    def isreal(self): return F.isreal(self)
    def logaddexp(self, other): return F.logaddexp(self, other)
    def logaddexp2(self, other): return F.logaddexp2(self, other)
    def xlogy(self, other): return F.xlogy(self, other)
    def heaviside(self, values): return F.heaviside(self, values)
    def fmax(self, other): return F.fmax(self, other)
    def fmin(self, other): return F.fmin(self, other)
    def float_power(self, exponent): return F.float_power(self, exponent)
    def ldexp(self, other): return F.ldexp(self, other)
    def frexp(self): return F.frexp(self)  # (mantissa, exponent), as PyTorch's
    def renorm(self, p, dim, maxnorm): return F.renorm(self, p, dim, maxnorm)
    def gcd(self, other): return F.gcd(self, other)
    def lcm(self, other): return F.lcm(self, other)
    def nextafter(self, other): return F.nextafter(self, other)
    def silu(self): return F.silu(self)
    def leaky_relu(self, negative_slope=0.01): return F.leaky_relu(self, negative_slope)
    def elu(self, alpha=1.0): return F.elu(self, alpha)
    def softplus(self, beta=1.0, threshold=20.0): return F.softplus(self, beta, threshold)
    def logsigmoid(self): return F.logsigmoid(self)
    def hardtanh(self, min_val=-1.0, max_val=1.0): return F.hardtanh(self, min_val, max_val)
    def hardshrink(self, lambd=0.5): return F.hardshrink(self, lambd)
    def std(self, axis=None, ddof=0, keepdims=False): return F.std(self, axis, ddof, keepdims)
    def prod(self, axis=None, keepdims=False): return F.prod(self, axis, keepdims)
    def cov(self, *, correction=1, fweights=None, aweights=None):
        return F.cov(self, correction=correction, fweights=fweights, aweights=aweights)
    def corrcoef(self): return F.corrcoef(self)
    def cumsum(self, axis, dtype=None): return F.cumsum(self, axis, dtype)
    def cumprod(self, axis, dtype=None): return F.cumprod(self, axis, dtype)
    def cummax(self, axis): return F.cummax(self, axis)  # (values, indices), as PyTorch's
    def cummin(self, axis): return F.cummin(self, axis)
    def logcumsumexp(self, axis): return F.logcumsumexp(self, axis)
    def argmin(self, axis=None, keepdims=False): return F.argmin(self, axis, keepdims)
    def flip(self, axis=None): return F.flip(self, axis)
    def roll(self, shift, axis=None): return F.roll(self, shift, axis)
    def tril(self, k=0): return F.tril(self, k)
    def triu(self, k=0): return F.triu(self, k)
    def diagonal(self, offset=0, axis1=0, axis2=1): return F.diagonal(self, offset, axis1, axis2)
    def trace(self): return F.trace(self)
    def gather(self, axis, index): return F.gather(self, axis, index)
    def take_along_dim(self, index, axis=None): return F.take_along_dim(self, index, axis)
    def scatter_add(self, axis, index, src): return F.scatter_add(self, axis, index, src)
    def repeat(self, repeats, axis=None): return F.repeat(self, repeats, axis)
    def tile(self, reps): return F.tile(self, reps)
    def median(self, axis=None, keepdims=False): return F.median(self, axis, keepdims)
    def nanmedian(self, axis=None, keepdims=False): return F.nanmedian(self, axis, keepdims)
    def kthvalue(self, k, axis=-1, keepdims=False): return F.kthvalue(self, k, axis, keepdims)
    def mode(self, axis=-1, keepdims=False): return F.mode(self, axis, keepdims)

    def quantile(self, q, axis=None, keepdims=False, interpolation="linear"):
        return F.quantile(self, q, axis, keepdims, interpolation)

    def nanquantile(self, q, axis=None, keepdims=False, interpolation="linear"):
        return F.nanquantile(self, q, axis, keepdims, interpolation)

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None): return F.nan_to_num(self, nan, posinf, neginf)
    def lerp(self, end, weight): return F.lerp(self, end, weight)
    def diff(self, n=1, axis=-1, prepend=None, append=None): return F.diff(self, n, axis, prepend, append)
    def cross(self, other, axis=-1): return F.cross(self, other, axis)
    def outer(self, other): return F.outer(self, other)
    def inner(self, other): return F.inner(self, other)
    def vdot(self, other): return F.vdot(self, other)
    def kron(self, other): return F.kron(self, other)
    def diag(self, diagonal=0): return F.diag(self, diagonal)
    def diag_embed(self, offset=0, axis1=-2, axis2=-1): return F.diag_embed(self, offset, axis1, axis2)
    def bincount(self, weights=None, minlength=0): return F.bincount(self, weights, minlength)
    def histc(self, bins=100, min=0, max=0): return F.histc(self, bins, min, max)  # noqa: A002
    def histogram(self, bins=100, *, range=None, weight=None, density=False):  # noqa: A002 (PyTorch's names)
        return F.histogram(self, bins, range=range, weight=weight, density=density)
    def index_add(self, axis, index, source, *, alpha=1): return F.index_add(self, axis, index, source, alpha)
    def index_fill(self, axis, index, value): return F.index_fill(self, axis, index, value)
    def index_copy(self, axis, index, source): return F.index_copy(self, axis, index, source)
    def slice_scatter(self, src, axis=0, start=None, end=None, step=1):
        return F.slice_scatter(self, src, axis, start, end, step)

    def select_scatter(self, src, axis, index): return F.select_scatter(self, src, axis, index)
    def index_put(self, indices, values, accumulate=False): return F.index_put(self, indices, values, accumulate)

    def index_reduce(self, axis, index, source, reduce, *, include_self=True):
        return F.index_reduce(self, axis, index, source, reduce, include_self)

    def diagonal_scatter(self, src, offset=0, axis1=0, axis2=1): return F.diagonal_scatter(self, src, offset, axis1, axis2)
    def masked_scatter(self, mask, source): return F.masked_scatter(self, mask, source)
    def fmod(self, other): return F.fmod(self, other)
    def remainder(self, other): return F.remainder(self, other)
    def addcmul(self, tensor1, tensor2, *, value=1): return F.addcmul(self, tensor1, tensor2, value=value)
    def addcdiv(self, tensor1, tensor2, *, value=1): return F.addcdiv(self, tensor1, tensor2, value=value)

    def scatter(self, axis, index, src=None, *, value=None, reduce=None):
        return F.scatter(self, axis, index, src, value=value, reduce=reduce)

    def scatter_reduce(self, axis, index, src, reduce, *, include_self=True):
        return F.scatter_reduce(self, axis, index, src, reduce, include_self)

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
        return F.unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse=False, return_counts=False, axis=None):
        return F.unique_consecutive(self, return_inverse, return_counts, axis)

    # ---------------------------------------------------------------- matrix functions (minitx.linalg's)
    def det(self): return matrix.det(self)
    def logdet(self): return matrix.logdet(self)
    def slogdet(self): return matrix.slogdet(self)
    def inverse(self): return matrix.inv(self)
    def cholesky(self, upper=False): return matrix.cholesky(self, upper=upper)
    def matrix_power(self, n): return matrix.matrix_power(self, n)
    def matrix_exp(self): return matrix.matrix_exp(self)

    def svd(self, some=True):
        """(U, S, V) with self = U diag(S) V^T: PyTorch's Tensor.svd, the older API, which returns V,
        not linalg.svd's Vh, and the thin SVD unless some=False."""
        U, S, Vh = matrix.svd(self, full_matrices=not flag("svd", "some", some))
        return U, S, Vh.mT

    def qr(self, some=True):
        """(Q, R): PyTorch's Tensor.qr, linalg.qr's mode 'reduced' (some=True) or 'complete'."""
        return matrix.qr(self, "reduced" if flag("qr", "some", some) else "complete")

    def pinverse(self, rcond=1e-15): return matrix.pinverse(self, rcond)
    def cholesky_solve(self, L, upper=False): return matrix.cholesky_solve(self, L, upper)
    def cholesky_inverse(self, upper=False): return matrix.cholesky_inverse(self, upper)

    def lu(self, pivot=True, get_infos=False): return matrix.lu_with_info(self, pivot, get_infos)
    def lu_solve(self, LU_data, LU_pivots): return matrix.lu_solve_b_first(self, LU_data, LU_pivots)  # noqa: N803
    def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
        return matrix.triangular_solve(self, A, upper, transpose, unitriangular)

    # ---------------------------------------------------------------- PyTorch's names and compositions
    # methods of ops minitx.functional has (PyTorch's names for them), and small compositions
    def acos(self): return F.acos(self)
    def acosh(self): return F.acosh(self)
    def asin(self): return F.asin(self)
    def asinh(self): return F.asinh(self)
    def atan(self): return F.atan(self)
    def atanh(self): return F.atanh(self)
    def cosh(self): return F.cosh(self)
    def sinh(self): return F.sinh(self)
    def tan(self): return F.tan(self)
    def atan2(self, other): return F.atan2(self, other)
    def hypot(self, other): return F.hypot(self, other)
    def copysign(self, other): return F.copysign(self, other)
    def floor_divide(self, other): return F.floor_divide(self, other)
    def bitwise_and(self, other): return F.bitwise_and(self, other)
    def bitwise_or(self, other): return F.bitwise_or(self, other)
    def bitwise_xor(self, other): return F.bitwise_xor(self, other)
    def bitwise_not(self): return F.bitwise_not(self)
    def bitwise_left_shift(self, other): return F.bitwise_left_shift(self, other)
    def bitwise_right_shift(self, other): return F.bitwise_right_shift(self, other)
    def greater(self, other): return F.greater(self, other)
    def greater_equal(self, other): return F.greater_equal(self, other)
    def less(self, other): return F.less(self, other)
    def less_equal(self, other): return F.less_equal(self, other)
    def not_equal(self, other): return F.not_equal(self, other)
    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False): return F.isclose(self, other, rtol, atol, equal_nan)
    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False): return F.allclose(self, other, rtol, atol, equal_nan)
    def argwhere(self): return F.argwhere(self)
    def prelu(self, weight): return F.prelu(self, weight)
    def subtract(self, other, *, alpha=1): return F.subtract(self, other, alpha=alpha)
    def positive(self): return F.positive(self)
    def swapdims(self, dim0, dim1): return F.swapdims(self, dim0, dim1)
    def ravel(self): return F.ravel(self)
    def fliplr(self): return F.fliplr(self)
    def flipud(self): return F.flipud(self)
    def rot90(self, k=1, axes=(0, 1)): return F.rot90(self, k, axes)
    def select(self, axis, index): return F.select(self, axis, index)
    def take(self, index): return F.take(self, index)
    def msort(self): return F.msort(self)
    def diagflat(self, offset=0): return F.diagflat(self, offset)
    def aminmax(self, *, axis=None, keepdims=False): return F.aminmax(self, axis=axis, keepdims=keepdims)
    def nansum(self, axis=None, keepdims=False): return F.nansum(self, axis, keepdims)
    def nanmean(self, axis=None, keepdims=False): return F.nanmean(self, axis, keepdims)
    def sum_to_size(self, *shape, size=None): return F.sum_to_size(self, *shape, size=size)
    def dist(self, other, p=2): return F.dist(self, other, p)
    def mv(self, vec): return F.mv(self, vec)
    def ger(self, vec2): return F.ger(self, vec2)
    def addmm(self, mat1, mat2, *, beta=1, alpha=1): return F.addmm(self, mat1, mat2, beta=beta, alpha=alpha)
    def addmv(self, mat, vec, *, beta=1, alpha=1): return F.addmv(self, mat, vec, beta=beta, alpha=alpha)
    def addbmm(self, batch1, batch2, *, beta=1, alpha=1): return F.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1): return F.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    def addr(self, vec1, vec2, *, beta=1, alpha=1): return F.addr(self, vec1, vec2, beta=beta, alpha=alpha)
    # the same methods under PyTorch's other names (as minitx.functional's, elementwise.py's last lines)
    absolute, negative, multiply, true_divide, divide, moveaxis, fix, sgn = abs, neg, mul, div, div, movedim, trunc, sign
    arccos, arccosh, arcsin, arcsinh, arctan, arctanh, arctan2 = acos, acosh, asin, asinh, atan, atanh, atan2

    def equal(self, other) -> bool:
        """PyTorch's Tensor.equal: one bool, whether the two have one shape and equal entries (NaN is
        equal to nothing). minitx.functional.equal is NumPy's ==, entry by entry (docs/ops.md)."""
        other = operands("equal", self, other)[1]
        return self.shape == other.shape and bool((self == other).all())

    def split_with_sizes(self, split_sizes, dim=0):
        """PyTorch's split_with_sizes: split(sizes, dim) given a list of sizes only."""
        if isinstance(split_sizes, numbers.Integral):
            raise TypeError(f"split_with_sizes: split_sizes must be a list of sizes, got {split_sizes!r}; "
                            "split(size, dim) cuts pieces of one size")
        if isinstance(split_sizes, (str, bytes)) or not hasattr(split_sizes, "__iter__"):
            raise TypeError(f"split_with_sizes: split_sizes must be a list of sizes, got {split_sizes!r}")
        return self.split(list(split_sizes), dim)

    def char(self) -> "Tensor": return self.astype("int8")
    def is_signed(self) -> bool: return backend.is_floating(self.dtype) or self.dtype.kind == "i"
    def is_nonzero(self) -> bool: return bool(self)  # (one entry, else the ValueError of bool(x))
    def is_same_size(self, other) -> bool: return self.shape == _shape_of("is_same_size", other)
    def ndimension(self) -> int: return self.ndim
    def get_device(self) -> int: return -1 if self.device == "cpu" else self.data.device.id  # (PyTorch's -1: the CPU)

    @property
    def is_cpu(self) -> bool:
        return self.device == "cpu"

    def is_inference(self) -> bool:
        """False: minitx's inference_mode is no_grad, and makes ordinary tensors (PyTorch's makes
        inference tensors, and answers True for them)."""
        return False

# PyTorch's keywords (dim=, keepdim=, dims=, start_dim=, correction=, ...) for every method that
# takes an axis; minitx.keywords says which mean the same and which are refused
for _name in ("sum", "mean", "max", "min", "var", "std", "logsumexp", "norm", "argmax", "argmin", "any", "all",
              "prod", "amax", "amin", "count_nonzero", "softmax", "log_softmax", "squeeze", "unsqueeze",
              "flatten", "flip", "roll", "repeat", "repeat_interleave", "cumsum", "cumprod", "cummax", "cummin",
              "logcumsumexp", "sort", "argsort", "topk", "diagonal", "gather", "scatter_add", "index_select", "chunk",
              "unbind", "median", "nanmedian", "index_add", "index_fill", "index_copy", "scatter", "scatter_reduce",
              "tril", "triu", "narrow", "unflatten", "kthvalue", "mode", "quantile", "nanquantile", "diff", "cross",
              "tensor_split", "take_along_dim", "diag_embed", "unique_consecutive", "rot90", "select", "aminmax",
              "nansum", "nanmean", "slice_scatter", "select_scatter", "diagonal_scatter", "index_reduce"):
    setattr(TensorMethods, _name, takes_torch_keywords(getattr(TensorMethods, _name)))


def _in_place_form(name: str):
    """Tensor.<name>_: ``x.<name>(...)`` written into x (Tensor._in_place), taking its arguments."""
    out_of_place = getattr(TensorMethods, name)

    @functools.wraps(out_of_place)  # (its signature: help() and the keyword check see the arguments)
    def in_place(self, *args, **kwargs):
        return self._in_place(name + "_", out_of_place, *args, **kwargs)

    in_place.__name__, in_place.__qualname__ = name + "_", f"Tensor.{name}_"
    in_place.__doc__ = f"``x.{name}(...)`` written into x in place, as PyTorch's {name}_ (see Tensor._in_place)."
    return in_place


# PyTorch's in-place methods: x.exp_() is x.exp() written into x, x.scatter_(dim, index, src) is
# x.scatter(dim, index, src), each with its out-of-place form's arguments (PyTorch's dim= too)
for _name in (
        "abs", "neg", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "square", "sign",  # unary
        "sin", "cos", "tanh", "sigmoid", "relu", "floor", "ceil", "round", "trunc", "nan_to_num",
        "clamp", "clip", "clamp_min", "clamp_max",                                                      # bounds
        "mul", "div", "pow", "fmod", "remainder", "lerp", "addcmul", "addcdiv",                         # binary
        "masked_fill", "masked_scatter", "scatter", "scatter_add", "scatter_reduce", "index_add",       # indexed
        "index_fill", "index_copy", "index_put", "index_reduce",
        "erfc", "erfinv", "lgamma", "digamma", "sinc", "logit", "frac", "sgn", "deg2rad", "rad2deg",    # more math
        "xlogy", "heaviside", "ldexp", "gcd", "lcm", "nextafter", "igamma", "igammac", "mvlgamma",
        "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "exp2", "log2",  # and more
        "log10", "fix", "atan2", "hypot", "copysign",
        "absolute", "negative", "multiply", "divide", "true_divide", "arcsin", "arccos",                 # second names
        "arctan", "arcsinh", "arccosh", "arctanh", "arctan2",
        "floor_divide", "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",  # integer
        "bitwise_right_shift",
        "eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater", "greater_equal",  # tests:
        "logical_not", "logical_and", "logical_or", "logical_xor",                                   # 1 or 0 written
        "cumsum", "cumprod", "tril", "triu"):                                                        # along an axis
    setattr(TensorMethods, _name + "_", _in_place_form(_name))


def _shape_not_changed_in_place(name: str, rewrite: str):
    """Tensor.<name>: PyTorch's in-place shape change, refused with what to write (docs/ops.md says why)."""
    def refused(self, *args, **kwargs):
        raise TypeError(f"{name}: minitx changes no tensor's shape in place (a tensor's shape is its array's, made "
                        f"by the op it records); write x = {rewrite}, a view of the same memory with its gradient")

    refused.__name__, refused.__qualname__ = name, f"Tensor.{name}"
    return refused


for _name, _rewrite in (("t_", "x.t()"), ("transpose_", "x.swapaxes(dim0, dim1)"), ("unsqueeze_", "x.unsqueeze(dim)"),
                        ("squeeze_", "x.squeeze(dim)"), ("swapaxes_", "x.swapaxes(dim0, dim1)"),
                        ("swapdims_", "x.swapdims(dim0, dim1)")):
    setattr(TensorMethods, _name, _shape_not_changed_in_place(_name, _rewrite))
del _name, _rewrite


def _shape_of(op, other) -> tuple:
    """The shape of ``other`` (a tensor or an array), whose shape the method takes; anything else
    refused by name (Python would say only that it has no attribute shape)."""
    if not hasattr(other, "shape"):
        raise TypeError(f"{op}: other must be a tensor, got {type_name(other)}")
    return tuple(other.shape)


def _shape_args(args):
    """Accept both t.reshape(2, 3) and t.reshape((2, 3))."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _flattened(shape, start_axis, end_axis, op="flatten"):
    """flatten's shape: axes start_axis..end_axis (both included) as one; a 0-d tensor's is (1,),
    as PyTorch's. ``op`` names the caller in the errors (nn.Flatten's too)."""
    start, end = (_method_axis(op, axis, shape, takes_0d=True) for axis in (start_axis, end_axis))
    if start > end:
        raise ValueError(f"{op}: start axis {start_axis} comes after end axis {end_axis} for shape {shape}")
    # the length counted, not left to a -1: NumPy cannot infer one beside a length-0 axis
    return shape[:start] + (int(np.prod(shape[start:end + 1])),) + shape[end + 1:]


def _split_sizes(op, sizes) -> tuple:
    """unflatten's sizes, checked: a sequence of whole numbers >= 0, of which one may be -1."""
    if not isinstance(sizes, (tuple, list, range)) and getattr(sizes, "ndim", None) != 1:
        raise TypeError(f"{op}: sizes must be a tuple or list of ints, got {sizes!r}")
    sizes = tuple(sizes)
    if any(isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < -1 for s in sizes):
        raise ValueError(f"{op}: sizes must be whole numbers >= 0 (one may be -1), got {sizes!r}")
    return sizes


def _unflattened(shape, axis, sizes, op="unflatten"):
    """unflatten's shape: axis ``axis`` split into ``sizes``, a -1 among them worked out from the
    axis' own length, as PyTorch's (a reshape's -1 would be inferred from the whole size, which
    says nothing when it is 0). ``op`` names the caller in the errors (nn.Unflatten's too)."""
    sizes = _split_sizes(op, sizes)
    axis = _method_axis(op, axis, shape)
    length, known, unknown = shape[axis], math.prod(s for s in sizes if s != -1), sizes.count(-1)
    fits = known == length if not unknown else unknown == 1 and known > 0 and length % known == 0
    if not fits:
        raise ValueError(f"{op}: sizes {sizes} do not split axis {axis} of length {length} (input shape {shape}); "
                         f"expected sizes whose product is {length}, with at most one -1")
    return shape[:axis] + tuple(length // known if s == -1 else int(s) for s in sizes) + shape[axis + 1:]


def _expanded(shape, sizes):
    """expand's sizes as a shape for broadcast_to: -1 keeps the tensor's length on that axis (its
    axes align with the last sizes; a new leading axis needs a length)."""
    sizes = lengths("expand", sizes)
    lead = len(sizes) - len(shape)
    if lead < 0 or -1 in sizes[:lead]:
        raise ValueError(f"expand: sizes {sizes} for shape {shape}: give a length for each axis (-1 keeps "
                         "one), and for each new leading axis a length that is not -1")
    return tuple(shape[i - lead] if size == -1 and i >= lead else size for i, size in enumerate(sizes))


def _product(op, a, b, ndim):
    """dot, mm and bmm: see minitx.ops.linalg.fixed_rank_matmul."""
    from minitx.ops.linalg import fixed_rank_matmul  # (minitx.ops imports this module)

    return fixed_rank_matmul(op, a, b, ndim)


# Tensor.<name> for each function defined above (and the keyword wrappers around them), as help(),
# reprs and tracebacks show it once Tensor has them; an alias keeps the name it was defined under
for _method in vars(TensorMethods).values():
    for _function in (_method, getattr(_method, "__wrapped__", None), getattr(_method, "fget", None)):
        if isinstance(_function, types.FunctionType) and _function.__qualname__.startswith("TensorMethods."):
            _function.__qualname__ = "Tensor." + _function.__qualname__.removeprefix("TensorMethods.")
del _method, _function
