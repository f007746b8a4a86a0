"""Every op with a PyTorch counterpart gives PyTorch's forward and gradients, in float64, on
hypothesis-drawn shapes and values, edge values included: 0, ±inf and NaN mixed into the
inputs, ties (values on a 0.5 grid) for max/min/maximum/minimum/clip, empty axes for the
reductions that define them.

Each case is one op_case (minitx.testing's op-test factory) with a torch reference; the
finite-difference checks live with each op's own tests (tests/ops), so these run none.
Where minitx deliberately differs from PyTorch, the case leaves that input out and says why:

* a fully masked row (all -inf) gives 0 from softmax and attention in minitx, NaN in PyTorch,
  and logsumexp's gradient there is 0 in minitx, NaN in PyTorch;
* +inf inside softmax, log_softmax and cross-entropy is not compared: logsumexp's rule takes an
  infinite max as 0, so minitx's softmax of [1, inf] is [0, NaN], PyTorch's [NaN, NaN]; these
  cases draw 0, -inf and NaN (log_softmax no -inf: its gradient on a masked row is dy in minitx),
  layer_norm NaN only;
* maximum/minimum at a NaN: PyTorch gives dy to both inputs, minitx to b alone (NaN compares false);
* abs at a NaN: the gradient is NaN in minitx (sign(NaN)), 0 in PyTorch;
* cross-entropy: the mean over no counted row (all ignored) is 0 in minitx, 0/0 = NaN in PyTorch,
  and an ignored row's NaN logits give it a NaN gradient in PyTorch, 0 in minitx;
* a / b for 0 < |b| < 1e-154: PyTorch's db = -dy a / b^2 underflows b^2 to 0 (inf), minitx's
  -(dy / b)(a / b) stays finite; the divisor is 0 itself or at least 1e-3 from it;
* x ** p at x = -inf with a fractional p: C's pow gives +inf, whose derivative PyTorch takes as NaN;
* copysign(a, b) at a = ±inf: PyTorch's gradient for a is dy * result / a, inf / inf = NaN; minitx's is
  dy * sign(a) * sign(b), ±dy; so a draws no infinity;
* median and nanmedian draw distinct values: among equal ones PyTorch does not say which it picks, and
  the gradient goes to the one picked; median without an axis draws no NaN: PyTorch shares its gradient
  among all entries equal to the median (all the NaNs), minitx gives it to the one it picks; nanmedian of an
  all-NaN slice picks the first entry (PyTorch's index there is unspecified);
* kthvalue draws distinct values (test_scan.py compares its NaN and infinities): among equal ones, repeated
  infinities included, PyTorch's pick varies and the gradient goes to the one picked; quantile and nanquantile
  take an axis, whose slices are short enough for PyTorch's sort to keep equal values (the infinities, the
  NaNs) in order, as minitx's stable one does;
* mode draws no NaN (test_scan.py shows where it departs: PyTorch's sort compares with <, which NaN
  defeats); its slices are short enough (at most 16 entries) for PyTorch's index among repeats to be
  the last one, as minitx's, so the gradient goes to the same entry;
* nanmean of a slice of NaNs alone: the gradient is 0 in minitx (the NaNs are left out), NaN in PyTorch;
* var_mean and std_mean draw no infinity: PyTorch's mean there is NaN (its one-pass update takes inf - inf),
  minitx's is mean's, ±inf (test_statistics.py shows it); var_mean's slices hold 2 entries or more: a lone NaN
  with correction 1 has var's gradient inf in PyTorch, NaN (2 / 0 times NaN) in minitx, as var's own;
* frexp draws no value within 1e-3 of 0 but 0 itself: PyTorch's gradient dy / 2^e takes 2^e in float32, inf or 0
  past its range (x below 1e-38 has gradient inf), minitx's is exact (test_statistics.py shows it);
* vector_norm and dist draw no NaN: at ord 1 and ±inf minitx's gradient there is NaN (as abs's), PyTorch's 0
  (tests/ops/test_linalg.py compares the other orders at NaN); below ord 1, vector_norm draws no infinity:
  an exact 0 beside one gets gradient 0 in minitx (as at every finite norm, in both), NaN (0 * inf) in PyTorch;
* cdist is compared for p < inf: at p = inf, entries tied for the largest |difference| share dy in
  minitx (as norm's), where PyTorch's cdist gives each all of it;
* block_diag draws no empty 1-d block: PyTorch's backward takes it as no row, so the blocks after it get
  the gradient of the row above theirs (tests/ops/test_shape.py shows it);
* attention draws no NaN (softmax's cases cover NaN scores): a NaN in q or v reaches a query that
  sees no key through 0 * NaN in minitx's matrix products, where the reference zeroes that query;
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitx.functional as F
import minitx.special as S
from minitx import linalg as LA
from minitx.testing import arg, op_case
from minitx.testing import strategies as mst
from torch_reference import import_torch

torch = import_torch()
tF = torch.nn.functional

INF, NAN = np.inf, np.nan
EDGES = (0.0, INF, -INF, NAN)
NO_POS_INF = (0.0, -INF, NAN)
EMPTY_OK = mst.shapes(max_dims=3, min_side=0, max_side=3)  # some axes of length 0
TIGHT = dict(rtol=1e-10, atol=1e-12)


def _u_slope(x, n):
    """U_n'(x) = 2 sum_j (n - 2j) U_(n-1-2j)(x), j = 0 .. (n-1)/2, in PyTorch's U."""
    return sum(2 * (n - 2 * j) * torch.special.chebyshev_polynomial_u(x, n - 1 - 2 * j) for j in range(max(n + 1, 0) // 2))


# the derivative identities of minitx.special's Bessel functions and polynomials, in PyTorch's functions
_SLOPES = {
    "bessel_j0": lambda x: -torch.special.bessel_j1(x),
    "bessel_j1": lambda x: torch.where(x == 0, 0.5, torch.special.bessel_j0(x) - torch.special.bessel_j1(x) / x),
    "bessel_y0": lambda x: -torch.special.bessel_y1(x),
    "bessel_y1": lambda x: torch.special.bessel_y0(x) - torch.special.bessel_y1(x) / x,
    "modified_bessel_k0": lambda x: -torch.special.modified_bessel_k1(x),
    "modified_bessel_k1": lambda x: -torch.special.modified_bessel_k0(x) - torch.special.modified_bessel_k1(x) / x,
    "scaled_modified_bessel_k0": lambda x: torch.special.scaled_modified_bessel_k0(x)
                                           - torch.special.scaled_modified_bessel_k1(x),
    "scaled_modified_bessel_k1": lambda x: torch.special.scaled_modified_bessel_k1(x) * (1 - 1 / x)
                                           - torch.special.scaled_modified_bessel_k0(x),
    # -j_1(x) = cos(x)/x - sin(x)/x^2, which cancels for small x: -x/3 + x^3/30 below 1e-3
    "spherical_bessel_j0": lambda x: torch.where(x.isinf(), 0.0, torch.where(
        x.abs() < 1e-3, -x / 3 + x ** 3 / 30, torch.cos(x) / x - torch.sin(x) / x ** 2)),
    "chebyshev_polynomial_t": lambda x, n: n * torch.special.chebyshev_polynomial_u(x, n - 1),
    "chebyshev_polynomial_u": _u_slope,
    "chebyshev_polynomial_v": lambda x, n: _u_slope(x, n) - _u_slope(x, n - 1),
    "chebyshev_polynomial_w": lambda x, n: _u_slope(x, n) + _u_slope(x, n - 1),
    "hermite_polynomial_h": lambda x, n: 2 * n * torch.special.hermite_polynomial_h(x, n - 1),
    "hermite_polynomial_he": lambda x, n: n * torch.special.hermite_polynomial_he(x, n - 1),
    "laguerre_polynomial_l": lambda x, n: -sum(torch.special.laguerre_polynomial_l(x, k) for k in range(n)),
    "legendre_polynomial_p": lambda x, n: sum((2 * k + 1) * torch.special.legendre_polynomial_p(x, k)
                                              for k in range(n - 1, -1, -2)),
}
for _kind in "tuvw":  # T*_n(x) = T_n(2x - 1): the slope 2 T_n'(2x - 1)
    _SLOPES[f"shifted_chebyshev_polynomial_{_kind}"] = (
        lambda x, n, slope=_SLOPES[f"chebyshev_polynomial_{_kind}"]: 2 * slope(2 * x - 1, n))


class _Sloped(torch.autograd.Function):
    """value, given as it is, whose backward sends dy * slope to x."""

    @staticmethod
    def forward(ctx, x, value, slope):
        ctx.save_for_backward(slope)
        return value

    @staticmethod
    def backward(ctx, dy):
        (slope,) = ctx.saved_tensors
        return dy * slope, None, None


def _with_slope(name):
    """PyTorch's torch.special.<name>, which has no gradient, given one: the slope's identity in PyTorch's
    functions (_SLOPES). Integer and boolean inputs (tests/test_integer_inputs.py) get the bare value."""
    value, slope = getattr(torch.special, name), _SLOPES[name]

    def reference(x, **n):
        if not x.requires_grad:
            return value(x, **n)
        plain = x.detach()
        return _Sloped.apply(x, value(plain, **n), torch.zeros_like(plain) + slope(plain, **n))  # (an empty sum is 0)

    return reference


def case(op, *args, reference, **options):
    return op_case(op, *args, torch=reference, gradcheck=False, **{**TIGHT, **options})


def dims(axis, ndim):
    """minitx's axis (None = all) as torch's dim."""
    return tuple(range(ndim)) if axis is None else axis


def reduction(op, reference, edges=EDGES, shapes=EMPTY_OK, ties=False):
    return case(op, arg(edges=edges, ties=ties), shapes=shapes,
                kwargs={"axis": lambda s: mst.axes_for(len(s)), "keepdims": st.booleans()},
                reference=lambda x, axis, keepdims: reference(x, dims(axis, x.ndim), keepdims))


def permutation(shape):
    return st.permutations(range(len(shape))).map(tuple)


def an_axis(shape, extra=0):
    return st.integers(-len(shape) - extra, len(shape) - 1 + extra) if len(shape) + extra else st.just(0)


@st.composite
def windows(draw, shape):
    """sliding_windows' (axis, size, step) for a tensor of ``shape``: any axis (negative too; 0 or
    -1 of a 0-d tensor), a size from 0 to the axis's length, a step from 1 to past the size (windows
    that overlap, touch, or skip entries)."""
    ndim = max(len(shape), 1)
    axis = draw(st.integers(-ndim, ndim - 1))
    size = draw(st.integers(0, shape[axis] if shape else 1))
    return axis, size, draw(st.integers(1, size + 2))


def pad_widths(shape):
    """A (before, after) pair per axis; negative ones crop, at most the whole axis."""
    return st.tuples(*[st.tuples(st.integers(-n, 2), st.integers(-n, 2)).filter(lambda w, n=n: n + min(w[0], 0) + min(w[1], 0) >= 0)
                       for n in shape])


def torch_pad(x, pad_width, value):
    flat = [n for pair in reversed(pad_width) for n in pair]  # torch: last axis first
    return tF.pad(x, flat, value=value)


def torch_softmax(x, axis):
    """torch.softmax, with minitx's rule for a fully masked slice (all -inf): zeros, not NaN."""
    masked = (x == -INF).all(axis, keepdim=True)
    # such a slice is given finite values first: else its NaN softmax would make its gradient NaN
    return torch.where(masked, 0.0, torch.softmax(torch.where(masked, 0.0, x), axis))


def torch_logsumexp(x, dim, keepdim):
    """torch.logsumexp with minitx's rule for an all -inf slice: -inf with a zero gradient, not NaN.
    Such slices are summed as zeros (finite gradient), then multiplied by 0 and set to -inf."""
    masked = torch.logsumexp(x.detach(), dim, keepdim=True) == -INF
    safe = torch.logsumexp(torch.where(masked, 0.0, x), dim, keepdim)
    masked_out = masked if keepdim else torch.logsumexp(x.detach(), dim, keepdim) == -INF
    return torch.where(masked_out, -INF, safe)


def torch_nanmean(x, dim, keepdim):
    """torch.nanmean's values, with minitx's gradient 0 at the NaNs of a slice of NaNs alone (PyTorch's
    is NaN there: its nansum's backward multiplies dy / 0 by 0): the NaNs picked out by where."""
    kept = ~torch.isnan(x)
    ours = torch.where(kept, x, 0.0).sum(dim, keepdim) / kept.sum(dim, keepdim)
    return torch.where(ours.isnan(), torch.nanmean(x.detach(), dim, keepdim), ours)


def torch_attention(q, k, v, mask, causal, scale):
    """PyTorch's attention with minitx's conventions: the causal mask is aligned bottom-right
    (query i sees keys j <= i + Lk - Lq; PyTorch's is_causal aligns top-left), and a query
    that sees no key gets 0 (PyTorch: NaN); such rows are given every key, then zeroed."""
    lq, lk = q.shape[-2], k.shape[-2]
    allowed = mask if mask is not None else torch.ones(lq, lk, dtype=torch.bool)
    if causal:
        allowed = allowed & torch.ones(lq, lk, dtype=torch.bool).tril(lk - lq)
    sees = allowed.any(-1, keepdim=True)
    out = tF.scaled_dot_product_attention(q, k, v, attn_mask=allowed | ~sees, scale=scale)
    return torch.where(sees, out, 0.0)


def attention_mask(q, k, v):
    """None or a key-padding / per-query mask [B, 1, Lq or 1, Lk]."""
    return st.one_of(st.none(), mst.bool_masks((q[0], 1, q[2], k[2])), mst.bool_masks((q[0], 1, 1, k[2])))


def torch_nanmedian(x, axis):
    """torch.nanmedian's values with minitx's rule for an all-NaN slice: NaN from its first entry,
    which gets the gradient (PyTorch's index there is unspecified: 0 in one slice, 2 in another)."""
    all_nan = x.isnan().all(axis)
    return torch.where(all_nan, x.select(axis, 0), torch.nanmedian(x, axis).values)


QUANTILE_LEVELS = st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0]),
                            st.lists(st.floats(0, 1), min_size=1, max_size=3))


def torch_quantile(name):
    """torch.quantile or torch.nanquantile with minitx's arguments (a list q as a tensor of x's dtype)."""
    def reference(x, q, axis, keepdims=False, interpolation="linear"):
        q = torch.tensor(q, dtype=x.dtype) if isinstance(q, list) else q
        return getattr(torch, name)(x, q, axis, keepdim=keepdims, interpolation=interpolation)
    return reference


three_along_an_axis = mst.shapes(min_dims=1, max_dims=3, max_side=3).filter(lambda s: 3 in s)


def distinct_targets(x, axis):
    """A scatter index for x along ``axis`` whose targets never repeat (PyTorch's scatter leaves a
    repeated one undefined): in each slice, the first entries of a permutation of the axis."""
    def build(rows, sides):
        shape = [min(side, n) for side, n in zip(sides, x)]
        shape[axis] = len(rows)
        column = np.array(rows, dtype=np.int64).reshape([-1 if d == axis else 1 for d in range(len(x))])
        return np.broadcast_to(column, shape).copy()

    return st.builds(build, st.permutations(range(x[axis])).flatmap(lambda p: st.integers(0, len(p)).map(lambda k: p[:k])),
                     st.tuples(*[st.integers(0, n) for n in x]))


@st.composite
def unfold_kwargs(draw, shape):
    """kernel_size, dilation, padding and stride (pairs) whose blocks fit the spatial sizes shape[-2:]."""
    kwargs = {"kernel_size": [], "dilation": [], "padding": [], "stride": []}
    for n in shape[-2:]:
        k, d, s = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 3))
        least = max(0, -(-(d * (k - 1) + 1 - n) // 2))  # the padding that makes room for the span
        for name, value in zip(kwargs, (k, d, draw(st.integers(least, least + 2)), s)):
            kwargs[name].append(value)
    return {name: tuple(values) for name, values in kwargs.items()}


@st.composite
def fold_kwargs(draw, shape):
    """fold's arguments for columns drawn as [N, C, kh, kw, bh, bw] (as_columns): the kernel and the
    blocks from the shape, an output_size that holds bh * bw blocks."""
    kwargs = {"output_size": [], "kernel_size": shape[2:4], "dilation": [], "padding": [], "stride": []}
    for k, b in zip(shape[2:4], shape[4:]):
        d, s = draw(st.integers(1, 2)), draw(st.integers(1, 3))
        p = draw(st.integers(0, min(2, (b * s + d * (k - 1) - 1) // 2)))  # (an output_size of at least 1 holds b)
        lowest = (b - 1) * s + d * (k - 1) + 1 - 2 * p  # the least size holding b blocks; s - 1 more still do
        for name, value in (("output_size", draw(st.integers(max(1, lowest), lowest + s - 1))), ("dilation", d),
                            ("padding", p), ("stride", s)):
            kwargs[name].append(value)
    return {name: tuple(values) for name, values in kwargs.items()}


def as_columns(cols):
    """[N, C, kh, kw, bh, bw] as fold takes it, [N, C * kh * kw, bh * bw]."""
    n, c, kh, kw, bh, bw = cols.shape
    return cols.reshape(n, c * kh * kw, bh * bw)


def along_indices(x):
    """A take_along_dim index that fits x along any of its axes: on an axis of length n it has
    length n or 1 (either side then broadcasts; on the taken axis any length would do), and any of
    1..3 where n is 1; its values in [-k, k), k the shortest axis (a negative counts from the end)."""
    sides = st.tuples(*[st.sampled_from([n, 1]) if n > 1 else st.integers(1, 3) for n in x])
    return sides.flatmap(lambda shape: mst.index_arrays(shape, min(x), allow_negative=True))


def two_axes(x):
    """axis1 and axis2 for diag_embed of a tensor of shape x: two different axes of its result."""
    ndim = len(x) + 1
    return st.tuples(*[st.integers(-ndim, ndim - 1)] * 2).filter(lambda pair: pair[0] % ndim != pair[1] % ndim)


def ce_case(reduction_kind):
    def ours(x, t, ignore_index, smoothing):
        return F.cross_entropy(x, t, ignore_index=ignore_index, label_smoothing=smoothing, reduction=reduction_kind)

    def theirs(x, t, ignore_index, smoothing):
        # an ignored row's logits never matter in minitx (its NaN neither leaks into the loss nor the gradient)
        x = torch.where((t != ignore_index)[..., None], x, 0.0)
        loss = tF.cross_entropy(x.reshape(-1, x.shape[-1]), t.reshape(-1), ignore_index=ignore_index,
                                label_smoothing=smoothing, reduction=reduction_kind)
        if reduction_kind == "none":
            return loss.reshape(t.shape)
        return torch.where((t != ignore_index).any(), loss, 0.0)  # minitx: no counted row is 0, PyTorch: 0/0

    return case(ours, arg(edges=NO_POS_INF, edge_probability=0.1),
                arg(strategy=lambda x: mst.class_targets(x[:-1], x[-1], ignore_index=-100)),
                shapes=mst.shapes(min_dims=1, max_dims=3, max_side=4),
                kwargs={"ignore_index": -100, "smoothing": st.sampled_from([0.0, 0.1, 0.4])}, reference=theirs)


CASES = {
    # ---------------------------------------------------------------- elementwise
    "add": case(lambda a, b, alpha: F.add(a, b, alpha=alpha), arg(edges=EDGES), arg(edges=EDGES), broadcast=True,
                kwargs={"alpha": st.sampled_from([1, -2, 0.5])}, reference=torch.add),
    "sub": case(lambda a, b, alpha: F.sub(a, b, alpha=alpha), arg(edges=EDGES), arg(edges=EDGES), broadcast=True,
                kwargs={"alpha": st.sampled_from([1, -2, 0.5])}, reference=torch.sub),
    "mul": case(F.mul, arg(edges=EDGES), arg(edges=EDGES), broadcast=True, reference=torch.mul),
    "div": case(F.div, arg(edges=EDGES), arg(edges=EDGES, away_from=(0.0,), margin=1e-3), broadcast=True,
                reference=torch.div),
    "pow": case(F.pow, arg(min_value=0.0, edges=(0.0, INF, NAN)), arg(edges=EDGES, ties=True), broadcast=True,
                reference=torch.pow),
    "pow_scalar": case(lambda x, p: F.pow(x, p), arg(edges=(0.0, INF, NAN)), kwargs={"p": st.sampled_from([-1.5, 0, 0.5, 1, 2, 3])},
                       # x + 0.0 turns -0.0 into +0.0: at -0.0 with p = 0.5 PyTorch's gradient is
                       # -inf (p * x^p / x), minitx's +inf (p * x^(p-1)), both on one side of a pole
                       reference=lambda x, p: torch.pow(x + 0.0, p)),
    "neg": case(F.neg, arg(edges=EDGES), reference=torch.neg),
    "exp": case(F.exp, arg(edges=EDGES), reference=torch.exp),
    "log": case(F.log, arg(min_value=-1.0, edges=EDGES), reference=torch.log),
    "sqrt": case(F.sqrt, arg(min_value=-1.0, edges=EDGES), reference=torch.sqrt),
    "tanh": case(F.tanh, arg(edges=EDGES), reference=torch.tanh),
    "sigmoid": case(F.sigmoid, arg(min_value=-40, max_value=40, edges=EDGES), reference=torch.sigmoid),
    "relu": case(F.relu, arg(edges=EDGES, ties=True), reference=torch.relu),
    "abs": case(F.abs, arg(edges=(0.0, INF, -INF), ties=True), reference=torch.abs),
    "gelu": case(F.gelu, arg(edges=EDGES), reference=tF.gelu),
    # the shrinks draw no NaN: PyTorch's gradient there is dy or 0 by its position (tests/ops/test_activation.py);
    # ties at +-0.5 and +-1.5 (the bands' edges)
    "hardshrink": case(lambda x, lambd: F.hardshrink(x, lambd), arg(edges=(0.0, INF, -INF), ties=True),
                       kwargs={"lambd": st.sampled_from([0.0, 0.5, 1.5])}, reference=tF.hardshrink),
    "softshrink": case(lambda x, lambd: F.softshrink(x, lambd), arg(edges=(0.0, INF, -INF), ties=True),
                       kwargs={"lambd": st.sampled_from([0.0, 0.5, 1.5])}, reference=tF.softshrink),
    "tanhshrink": case(F.tanhshrink, arg(edges=EDGES), reference=tF.tanhshrink),
    "rrelu_eval": case(lambda x, lower, upper: F.rrelu(x, lower, upper), arg(edges=EDGES, ties=True),
                       kwargs={"lower": st.sampled_from([0.0, 0.125, 0.3]), "upper": st.sampled_from([0.3, 0.5])},
                       reference=lambda x, lower, upper: tF.rrelu(x, lower, upper)),
    "gelu_tanh": case(lambda x: F.gelu(x, approximate="tanh"), arg(edges=EDGES),
                      reference=lambda x: tF.gelu(x, approximate="tanh")),
    "maximum": case(F.maximum, arg(ties=True, edges=(INF, -INF)), arg(ties=True, edges=(INF, -INF)), broadcast=True,
                    reference=torch.maximum),
    "minimum": case(F.minimum, arg(ties=True, edges=(INF, -INF)), arg(ties=True, edges=(INF, -INF)), broadcast=True,
                    reference=torch.minimum),
    "atan2": case(F.atan2, arg(edges=(0.0, INF, -INF, NAN)), arg(away_from=(0.0,), edges=(INF, -INF, NAN)),
                  broadcast=True, reference=torch.atan2),
    "hypot": case(F.hypot, arg(away_from=(0.0,), edges=(INF, -INF, NAN)), arg(edges=(0.0, NAN)), broadcast=True,
                  reference=torch.hypot),
    "copysign": case(F.copysign, arg(edges=(0.0, NAN)), arg(edges=(0.0, -0.0, INF, -INF)),
                     broadcast=True, reference=torch.copysign),
    "clip": case(lambda x, low, high: F.clip(x, low, high), arg(ties=True, edges=EDGES),
                 kwargs={"low": st.sampled_from([None, -1.0, 0.5]), "high": st.sampled_from([0.5, 1.0, -2.0])},
                 reference=lambda x, low, high: torch.clamp(x, low, high)),
    "where": case(lambda cond, a, b: F.where(cond, a, b), arg(strategy=lambda: mst.bool_masks(mst.shapes(max_dims=2))),
                  arg(shape=lambda c: c), arg(shape=lambda c, a: a[1:]),
                  reference=torch.where),
    "nan_to_num": case(lambda x, nan, posinf, neginf: F.nan_to_num(x, nan, posinf, neginf), arg(edges=EDGES),
                       kwargs={"nan": st.sampled_from([0.0, -2.5]), "posinf": st.sampled_from([1e3, 7.0]),
                               "neginf": st.sampled_from([-1e3, -7.0])},
                       reference=torch.nan_to_num),
    "lerp": case(F.lerp, arg(edges=EDGES), arg(edges=EDGES), arg(min_value=-0.5, max_value=1.5, edges=(0.5, NAN)),
                 broadcast=True, reference=torch.lerp),
    "masked_fill": case(lambda x, mask, value: F.masked_fill(x, mask, value), arg(edges=EDGES),
                        arg(strategy=lambda x: mst.bool_masks(x[1:])),
                        kwargs={"value": st.sampled_from([0.0, -1e9, -INF, 2.5])},
                        reference=lambda x, mask, value: x.masked_fill(mask, value)),
    "logaddexp": case(F.logaddexp, arg(edges=EDGES), arg(edges=EDGES), broadcast=True, reference=torch.logaddexp),
    "logaddexp2": case(F.logaddexp2, arg(edges=EDGES), arg(edges=EDGES), broadcast=True, reference=torch.logaddexp2),
    "xlogy": case(F.xlogy, arg(edges=EDGES), arg(edges=EDGES), broadcast=True, reference=torch.xlogy),
    "sinc": case(F.sinc, arg(away_from=(0.0,), edges=EDGES), reference=torch.sinc),  # (PyTorch's slope near 0: test_special)
    # (-0 taken as 0 by the reference: PyTorch's slope there is +inf in its scalar loop, -inf in its vectorized
    # one, 16 float64 entries and more; minitx's +inf, the slope from inside [0, 1])
    "logit": case(F.logit, arg(min_value=-0.2, max_value=1.2, edges=EDGES), reference=lambda x: torch.logit(x + 0.0)),
    # (no NaN with eps: PyTorch's gradient there is NaN in its scalar loop, 0 in its vectorized one; minitx's NaN)
    "logit_eps": case(lambda x, eps: F.logit(x, eps), arg(min_value=-0.2, max_value=1.2, edges=(0.0, INF, -INF)),
                      kwargs={"eps": st.sampled_from([0.0, 1e-6, 0.25])}, reference=torch.logit),
    "erfc": case(F.erfc, arg(min_value=-6.0, max_value=27.0, edges=EDGES), reference=torch.erfc),
    "erfinv": case(F.erfinv, arg(min_value=-1.1, max_value=1.1, edges=(1.0, -1.0, 0.0, NAN)), reference=torch.erfinv),
    # (away from the poles but at them exactly: beside one, digamma's 1 / (x + k) cancels in either library)
    "lgamma": case(F.lgamma, arg(min_value=-5.0, max_value=30.0, away_from=(-1.0, -2.0, -3.0, -4.0, -5.0),
                                 edges=EDGES + (-1.0, -2.0)), reference=torch.lgamma),
    # digamma's gradient at its poles -1, -2, ... is inf, PyTorch's finite; its trigamma is off by 1e-9 (test_special)
    "digamma": case(F.digamma, arg(min_value=-5.0, max_value=30.0, away_from=(-1.0, -2.0, -3.0, -4.0, -5.0), edges=EDGES),
                    reference=torch.digamma,
                    grad_rtol=1e-8),
    # polygamma(n >= 2, inf) is 0 and i0(±inf) inf, PyTorch's NaN (tests/ops/test_torch_special.py)
    "polygamma": case(lambda x, n: F.polygamma(n, x), arg(min_value=0.1, max_value=40.0, edges=(NAN,)),
                      kwargs={"n": st.sampled_from([0, 1, 2, 4])}, reference=lambda x, n: torch.polygamma(n, x),
                      rtol=1e-8, grad_rtol=1e-8),
    "i0": case(F.i0, arg(min_value=-50.0, max_value=50.0, edges=(0.0, NAN)), reference=torch.i0),
    # torch.special's second group (tests/ops/test_torch_special_second.py: the edges where minitx departs)
    "erfcx": case(S.erfcx, arg(min_value=-20.0, max_value=40.0, edges=(0.0, -INF, NAN)), reference=torch.special.erfcx),
    "ndtri": case(S.ndtri, arg(min_value=-0.1, max_value=1.1, edges=(0.0, 1.0, 0.5, NAN)), reference=torch.special.ndtri),
    "i0e": case(S.i0e, arg(min_value=-60.0, max_value=60.0, edges=EDGES), reference=torch.special.i0e),
    # i1e's gradient at NaN is NaN, PyTorch's a number (as i1's: tests/ops/test_torch_special.py)
    "i1e": case(S.i1e, arg(min_value=-60.0, max_value=60.0, edges=(0.0, INF, -INF)), reference=torch.special.i1e),
    # s draws no gradient: PyTorch has none (minitx's backward refuses it); no inf: zeta(s, inf) and zeta(inf, q > 1)
    # are 0 in minitx, NaN in PyTorch
    "zeta": case(S.zeta, arg(min_value=0.5, max_value=8.0, edges=(1.0, NAN), requires_grad=False),
                 arg(min_value=-3.0, max_value=30.0, edges=(0.0, -1.0, NAN)), broadcast=True,
                 reference=torch.special.zeta),
    # a draws no gradient: PyTorch has none (minitx's backward refuses it); no inf, no a < 0 and no x = 0: where P
    # is NaN or PyTorch's slope is, minitx's is NaN or its limit (tests/ops/test_torch_special_second.py)
    "gammainc": case(S.gammainc, arg(min_value=0.0, max_value=20.0, edges=(NAN,), requires_grad=False),
                     arg(min_value=-0.5, max_value=30.0, away_from=(0.0,), edges=(NAN,)), broadcast=True,
                     reference=torch.special.gammainc),
    "gammaincc": case(S.gammaincc, arg(min_value=0.0, max_value=20.0, edges=(NAN,), requires_grad=False),
                      arg(min_value=-0.5, max_value=30.0, away_from=(0.0,), edges=(NAN,)), broadcast=True,
                      reference=torch.special.gammaincc),
    "multigammaln": case(lambda x, p: S.multigammaln(x, p), arg(min_value=1.6, max_value=30.0, edges=(INF, NAN)),
                         kwargs={"p": st.sampled_from([1, 2, 4])}, reference=lambda x, p: torch.special.multigammaln(x, p)),
    # minitx.special's Bessel functions and polynomials (minitx/ops/bessel.py), their gradients against
    # identities in PyTorch's own functions (_with_slope); PyTorch's float64 J and Y are off by up to 9e-7
    # near x = 5 (tests/ops/test_bessel.py), hence their atol
    **{name: case(getattr(S, name), arg(min_value=low, max_value=high, edges=edges), reference=_with_slope(name),
                  atol=atol, grad_atol=2 * atol)
       for name, low, high, edges, atol in [
           ("bessel_j0", -30.0, 30.0, (0.0, NAN), 1e-6), ("bessel_j1", -30.0, 30.0, (NAN,), 1e-6),
           ("bessel_y0", 0.1, 30.0, (NAN,), 1e-6), ("bessel_y1", 0.1, 30.0, (NAN,), 1e-6),
           ("modified_bessel_k0", 0.05, 40.0, (NAN, INF), 1e-14), ("modified_bessel_k1", 0.05, 40.0, (NAN, INF), 1e-14),
           ("scaled_modified_bessel_k0", 0.05, 40.0, (NAN,), 1e-14),
           ("scaled_modified_bessel_k1", 0.05, 40.0, (NAN,), 1e-14),
           ("spherical_bessel_j0", -20.0, 20.0, (NAN, INF, -INF), 1e-14)]},
    # Ai without its gradient (PyTorch has no Ai'), to 3e-6: PyTorch's float64 Ai is off by 2.5e-6 near
    # x = -2.1 (tests/ops/test_bessel.py); its NaN at ±inf is a departure (minitx: 0)
    "airy_ai": case(S.airy_ai, arg(min_value=-20.0, max_value=20.0, edges=(0.0, NAN), requires_grad=False),
                    reference=torch.special.airy_ai, atol=3e-6),
    # (no NaN: PyTorch's polynomials at NaN give some other element's value; by their trigonometric forms its
    # V and W beside x = -1 for n > 8 lose half their digits (tests/ops/test_bessel.py), U there 1.3e-8 of
    # U_10 and the shifted U beside x = 0 (1e-16: 7e-9 of U_8), so U takes V's and W's tolerances)
    **{name: case(getattr(S, name), arg(min_value=low, max_value=high, edges=edges),
                  kwargs={"n": st.integers(-1, 10)}, reference=_with_slope(name), rtol=1e-9,
                  atol=1e-6 if name[-1] in "uvw" else 1e-12, grad_atol=1e-5 if name[-1] in "uvw" else 1e-12)
       for name, low, high, edges in [
           ("chebyshev_polynomial_t", -1.3, 1.3, (1.0, -1.0, 0.0)), ("chebyshev_polynomial_u", -1.3, 1.3, (1.0, -1.0)),
           ("chebyshev_polynomial_v", -1.3, 1.3, (1.0, -1.0)), ("chebyshev_polynomial_w", -1.3, 1.3, (1.0, -1.0)),
           ("shifted_chebyshev_polynomial_t", -0.1, 1.1, (0.0, 1.0)),
           ("shifted_chebyshev_polynomial_u", -0.1, 1.1, (0.0, 1.0)),
           ("shifted_chebyshev_polynomial_v", -0.1, 1.1, (0.0, 1.0)),
           ("shifted_chebyshev_polynomial_w", -0.1, 1.1, (0.0, 1.0)),
           ("hermite_polynomial_h", -3.0, 3.0, (0.0,)), ("hermite_polynomial_he", -3.0, 3.0, (0.0,)),
           ("laguerre_polynomial_l", -2.0, 8.0, (0.0,)), ("legendre_polynomial_p", -1.3, 1.3, (1.0, -1.0, 0.0))]},
    # heaviside at a NaN is NaN (PyTorch: 0); PyTorch has no gradient for it, its reference here is the
    # selection it makes, which gives values dy where x = 0 and x none
    "heaviside": case(F.heaviside, arg(edges=(0.0, -0.0, INF, -INF, NAN), edge_probability=0.5), arg(), broadcast=True,
                      reference=lambda x, values: torch.where(x.isnan(), x.detach(), torch.where(
                          x == 0, values, (x.detach() > 0).to(x.dtype)))),
    "fmax": case(F.fmax, arg(ties=True, edges=EDGES), arg(ties=True, edges=EDGES), broadcast=True, reference=torch.fmax),
    "fmin": case(F.fmin, arg(ties=True, edges=EDGES), arg(ties=True, edges=EDGES), broadcast=True, reference=torch.fmin),
    "frac": case(F.frac, arg(edges=EDGES + (-0.0,)), reference=torch.frac),
    "float_power": case(F.float_power, arg(min_value=0.0, edges=(0.0, INF, NAN)), arg(edges=EDGES, ties=True),
                        broadcast=True, reference=torch.float_power),
    "ldexp": case(F.ldexp, arg(edges=EDGES), arg(min_value=-8.0, max_value=8.0, edges=(0.0, NAN)), broadcast=True,
                  reference=torch.ldexp),
    "deg2rad": case(F.deg2rad, arg(edges=EDGES), reference=torch.deg2rad),
    "rad2deg": case(F.rad2deg, arg(edges=EDGES), reference=torch.rad2deg),
    # ---------------------------------------------------------------- reductions
    "sum": reduction(F.sum, lambda x, dim, keepdim: torch.sum(x, dim=dim, keepdim=keepdim)),
    "mean": reduction(F.mean, lambda x, dim, keepdim: torch.mean(x, dim=dim, keepdim=keepdim)),
    "max": reduction(F.max, lambda x, dim, keepdim: torch.amax(x, dim=dim, keepdim=keepdim), shapes=mst.shapes(max_dims=3,
                     max_side=3), ties=True),
    "min": reduction(F.min, lambda x, dim, keepdim: torch.amin(x, dim=dim, keepdim=keepdim), shapes=mst.shapes(max_dims=3,
                     max_side=3), ties=True),
    "logsumexp": reduction(F.logsumexp, torch_logsumexp),
    "var": case(lambda x, axis, ddof, keepdims: F.var(x, axis, ddof, keepdims), arg(edges=EDGES),
                shapes=mst.shapes(min_dims=1, max_dims=3, min_side=2, max_side=3),  # n - ddof > 0: see test_reduction
                kwargs={"axis": lambda s: mst.axes_for(len(s)), "ddof": st.sampled_from([0, 1]), "keepdims": st.booleans()},
                reference=lambda x, axis, ddof, keepdims: torch.var(x, dim=dims(axis, x.ndim), correction=ddof,
                                                                   keepdim=keepdims)),
    "median": case(lambda x, axis, keepdims: F.median(x, axis, keepdims).values, arg(edges=(NAN,), distinct=True),
                   shapes=mst.shapes(min_dims=1, max_dims=3), kwargs={"axis": an_axis, "keepdims": st.booleans()},
                   reference=lambda x, axis, keepdims: torch.median(x, axis, keepdim=keepdims).values),
    "median_all": case(F.median, arg(distinct=True), reference=torch.median),
    "nanmedian": case(lambda x, axis: F.nanmedian(x, axis).values, arg(edges=(NAN,), edge_probability=0.5, distinct=True),
                      shapes=mst.shapes(min_dims=1, max_dims=3), kwargs={"axis": an_axis},
                      reference=torch_nanmedian),
    "kthvalue": case(lambda x, k, axis, keepdims: F.kthvalue(x, k, axis, keepdims).values, arg(distinct=True),
                     shapes=mst.shapes(min_dims=1, max_dims=3),
                     kwargs={"axis": an_axis, "k": lambda s: st.integers(1, min(s)), "keepdims": st.booleans()},
                     reference=lambda x, k, axis, keepdims: torch.kthvalue(x, k, axis, keepdims).values),
    "mode": case(lambda x, axis, keepdims: F.mode(x, axis, keepdims).values, arg(edges=(0.0, INF, -INF), ties=True),
                 kwargs={"axis": an_axis, "keepdims": st.booleans()},
                 reference=lambda x, axis, keepdims: torch.mode(x, axis, keepdims).values),
    "quantile": case(lambda x, q, axis, keepdims, interpolation: F.quantile(x, q, axis, keepdims, interpolation),
                     arg(edges=EDGES, distinct=True), shapes=mst.shapes(min_dims=1, max_dims=3),
                     kwargs={"q": QUANTILE_LEVELS, "axis": an_axis, "keepdims": st.booleans(),
                             "interpolation": st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest"])},
                     reference=torch_quantile("quantile")),
    "nanquantile": case(lambda x, q, axis: F.nanquantile(x, q, axis),
                        arg(edges=EDGES, edge_probability=0.5, distinct=True),
                        shapes=mst.shapes(min_dims=1, max_dims=3), kwargs={"q": QUANTILE_LEVELS, "axis": an_axis},
                        reference=torch_quantile("nanquantile")),
    "diff": case(lambda x, n, axis: F.diff(x, n, axis), arg(edges=EDGES), shapes=mst.shapes(min_dims=1, max_dims=3),
                 kwargs={"n": st.integers(1, 3), "axis": an_axis}, reference=lambda x, n, axis: torch.diff(x, n, axis)),
    "diff_prepend_append": case(lambda x, p, a: F.diff(x, 1, -1, p, a), arg(edges=EDGES),
                                arg(shape=lambda x: x[:-1] + (2,), edges=EDGES), arg(shape=lambda x, p: x[:-1] + (1,)),
                                shapes=mst.shapes(min_dims=1, max_dims=3),
                                reference=lambda x, p, a: torch.diff(x, 1, -1, p, a)),
    # ---------------------------------------------------------------- shape
    "reshape": case(lambda x: F.reshape(x, (-1,)), arg(edges=EDGES), reference=lambda x: x.reshape(-1)),
    "transpose": case(lambda x, axes: F.transpose(x, axes), arg(), kwargs={"axes": permutation},
                      reference=lambda x, axes: x.permute(axes)),
    "swapaxes": case(lambda x, a, b: F.swapaxes(x, a, b), arg(), shapes=mst.shapes(min_dims=1, max_dims=3),
                     kwargs={"a": an_axis, "b": an_axis}, reference=lambda x, a, b: torch.swapaxes(x, a, b)),
    "unsqueeze": case(lambda x, axis: F.unsqueeze(x, axis), arg(), kwargs={"axis": lambda s: an_axis(s, extra=1)},
                      reference=lambda x, axis: torch.unsqueeze(x, axis)),
    "squeeze": case(lambda x: F.squeeze(x), arg(), shapes=mst.shapes(max_dims=3, max_side=2),
                    reference=torch.squeeze),
    "broadcast_to": case(lambda x: F.broadcast_to(x, (2,) + x.shape), arg(), reference=lambda x: x.broadcast_to((2,) + x.shape)),
    "getitem": case(lambda x: x[1:, ..., ::2], arg(), shapes=mst.shapes(min_dims=2, max_dims=3),
                    reference=lambda x: x[1:, ..., ::2]),
    "concatenate": case(lambda a, b: F.concatenate([a, b], axis=-1), arg(), arg(), reference=lambda a, b: torch.cat([a, b], -1),
                        shapes=mst.shapes(min_dims=1, max_dims=3)),
    "stack": case(lambda a, b: F.stack([a, b], axis=0), arg(), arg(), reference=lambda a, b: torch.stack([a, b], 0)),
    "hstack": case(lambda a, b: F.hstack([a, b]), arg(), arg(), reference=lambda a, b: torch.hstack([a, b])),
    "vstack": case(lambda a, b: F.vstack([a, b]), arg(), arg(), reference=lambda a, b: torch.vstack([a, b])),
    "block_diag": case(lambda a, b: F.block_diag(a, b), arg(edges=EDGES), arg(shape=mst.shapes(max_dims=2), edges=EDGES),
                       shapes=mst.shapes(max_dims=2, min_side=0, max_side=3).filter(lambda s: s != (0,)),
                       reference=torch.block_diag),
    "broadcast_tensors": case(lambda a, b: F.stack(F.broadcast_tensors(a, b)), arg(edges=EDGES),
                              arg(shape=lambda a: st.sampled_from([a, a[1:], (1,) + a]), edges=EDGES),
                              reference=lambda a, b: torch.stack(torch.broadcast_tensors(a, b))),
    "cartesian_prod": case(lambda a, b: F.cartesian_prod(a, b), arg(edges=EDGES),
                           arg(shape=mst.shapes(min_dims=1, max_dims=1, min_side=0), edges=EDGES),
                           shapes=mst.shapes(min_dims=1, max_dims=1, min_side=0), reference=torch.cartesian_prod),
    "combinations": case(lambda x, r, repeat: F.combinations(x, r, repeat), arg(edges=EDGES),
                         shapes=mst.shapes(min_dims=1, max_dims=1, min_side=1, max_side=4),
                         kwargs={"r": st.integers(1, 3), "repeat": st.booleans()},
                         reference=lambda x, r, repeat: torch.combinations(x, r, repeat)),
    "column_stack": case(lambda a, b: F.column_stack([a, b]), arg(edges=EDGES), arg(shape=lambda a: a[:1], edges=EDGES),
                         shapes=mst.shapes(min_dims=1, max_dims=2), reference=lambda a, b: torch.column_stack([a, b])),
    "dstack": case(lambda a, b: F.dstack([a, b]), arg(edges=EDGES), arg(edges=EDGES), reference=lambda a, b: torch.dstack([a, b])),
    "slice_scatter": case(lambda x, s: F.slice_scatter(x, s, 1, 1, None, 2), arg(edges=EDGES),
                          arg(shape=lambda x: x[:1] + (len(range(1, x[1], 2)),) + x[2:], edges=EDGES),
                          shapes=mst.shapes(min_dims=2, max_dims=3, max_side=4),
                          reference=lambda x, s: torch.slice_scatter(x, s, 1, 1, None, 2)),
    "select_scatter": case(lambda x, s: F.select_scatter(x, s, -1, 0), arg(edges=EDGES), arg(shape=lambda x: x[:-1], edges=EDGES),
                           shapes=mst.shapes(min_dims=1, max_dims=3, max_side=4),
                           reference=lambda x, s: torch.select_scatter(x, s, -1, 0)),
    "diagonal_scatter": case(lambda x, s: F.diagonal_scatter(x, s, 1, -1, 0), arg(edges=EDGES),
                             arg(shape=lambda x: x[1:-1] + (max(0, min(x[-1], x[0] - 1)),), edges=EDGES),
                             shapes=mst.shapes(min_dims=2, max_dims=3, max_side=4),
                             reference=lambda x, s: torch.diagonal_scatter(x, s, 1, -1, 0)),
    "meshgrid": case(lambda a, b, indexing: F.stack(F.meshgrid(a, b, indexing=indexing)), arg(),
                     arg(shape=mst.shapes(max_dims=1)), shapes=mst.shapes(max_dims=1), kwargs={"indexing": st.sampled_from(["ij", "xy"])},
                     reference=lambda a, b, indexing: torch.stack(torch.meshgrid(a, b, indexing=indexing))),
    "tensor_split": case(lambda x, sections, axis: F.tensor_split(x, sections, axis), arg(edges=EDGES),
                         shapes=mst.shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
                         kwargs={"sections": st.integers(1, 5) | st.lists(st.integers(-6, 6), max_size=3),
                                 "axis": an_axis},
                         reference=lambda x, sections, axis: torch.tensor_split(x, sections, axis)),
    "sliding_windows": case(lambda x, window: F.sliding_windows(x, *window), arg(edges=EDGES), shapes=EMPTY_OK,
                            kwargs={"window": windows}, reference=lambda x, window: x.unfold(*window)),
    "pad": case(lambda x, pad_width, value: F.pad(x, pad_width, value=value), arg(), shapes=mst.shapes(min_dims=1, max_dims=3),
                kwargs={"pad_width": pad_widths, "value": st.sampled_from([0.0, -1.5])}, reference=torch_pad),
    # ---------------------------------------------------------------- linear algebra and nn ops
    "matmul": case(F.matmul, arg(shape=st.sampled_from([(3,), (2, 3), (2, 1, 4, 3)])),
                   arg(shape=lambda a: st.sampled_from([(3,), (3, 2), (5, 3, 2)])), reference=torch.matmul),
    "outer": case(F.outer, arg(edges=EDGES), arg(shape=mst.shapes(min_dims=1, max_dims=1), edges=EDGES),
                  shapes=mst.shapes(min_dims=1, max_dims=1), reference=torch.outer),
    "cross": case(lambda a, b, axis: F.cross(a, b, axis), arg(shape=lambda: three_along_an_axis, edges=EDGES),
                  arg(shape=lambda a: a, edges=EDGES), kwargs={"axis": lambda a, b: st.sampled_from(
                      [d for d in range(-len(a), len(a)) if a[d] == 3])},
                  reference=lambda a, b, axis: torch.linalg.cross(a, b, dim=axis)),
    "tensordot": case(lambda a, b: F.tensordot(a, b, 1), arg(edges=EDGES), arg(shape=lambda a: a[-1:] + (2,), edges=EDGES),
                      shapes=mst.shapes(min_dims=1, max_dims=3, min_side=0, max_side=3),
                      reference=lambda a, b: torch.tensordot(a, b, 1)),
    "tensordot_pairs": case(lambda a, b: F.tensordot(a, b, ([0, -1], [1, 0])), arg(edges=EDGES),
                            arg(shape=lambda a: (a[-1], a[0], 2), edges=EDGES),
                            shapes=mst.shapes(min_dims=2, max_dims=3, max_side=3),
                            reference=lambda a, b: torch.tensordot(a, b, ([0, -1], [1, 0]))),
    "inner": case(F.inner, arg(edges=EDGES), arg(shape=lambda a: (2,) + a[-1:], edges=EDGES), shapes=EMPTY_OK,
                  reference=torch.inner),
    "vdot": case(F.vdot, arg(edges=EDGES), arg(edges=EDGES), shapes=mst.shapes(min_dims=1, max_dims=1, min_side=0),
                 reference=torch.vdot),
    "kron": case(F.kron, arg(edges=EDGES), arg(shape=EMPTY_OK, edges=EDGES), shapes=EMPTY_OK,  # (PyTorch's kron
                 reference=lambda a, b: torch.kron(a.contiguous(), b.contiguous())),  # refuses a transposed input)
    "vector_norm": case(lambda x, ord, axis, keepdims: LA.vector_norm(x, ord, axis, keepdims),
                        # (away from 0 but for exact zeros: where every |x|^p is tiny minitx scales the slice
                        # and PyTorch's norm underflows to 0, a departure, docs/ops.md)
                        arg(edges=(0.0, INF, -INF), away_from=(0.0,), margin=1e-3),
                        shapes=mst.shapes(max_dims=3, max_side=3),
                        kwargs={"ord": st.sampled_from([0, 1, 2, 3, INF, -INF]),
                                "axis": lambda s: mst.axes_for(len(s)), "keepdims": st.booleans()},
                        reference=lambda x, ord, axis, keepdims: torch.linalg.vector_norm(x, ord, dim=axis,
                                                                                          keepdim=keepdims)),
    "vector_norm_below_1": case(lambda x, ord, axis: LA.vector_norm(x, ord, axis), arg(edges=(0.0,), away_from=(0.0,),
                                                                                      margin=1e-3),
                                shapes=mst.shapes(max_dims=3, max_side=3),
                                kwargs={"ord": st.sampled_from([0.5, 0.25]), "axis": lambda s: mst.axes_for(len(s))},
                                reference=lambda x, ord, axis: torch.linalg.vector_norm(x, ord, dim=axis)),
    # (away from 0 but for the edges, as vector_norm's: 'fro' of tiny entries is scaled in minitx, 0 in PyTorch)
    "matrix_norm": case(lambda A, ord, keepdims: LA.matrix_norm(A, ord, keepdims=keepdims),
                        arg(edges=EDGES, away_from=(0.0,), margin=1e-3),
                        shapes=mst.shapes(min_dims=2, max_dims=3, max_side=3),
                        kwargs={"ord": st.sampled_from(["fro", 1, -1, INF, -INF]), "keepdims": st.booleans()},
                        reference=lambda A, ord, keepdims: torch.linalg.matrix_norm(A, ord, keepdim=keepdims)),
    "diag": case(lambda x, k: F.diag(x, k), arg(edges=EDGES), shapes=mst.shapes(min_dims=1, max_dims=2),
                 kwargs={"k": st.integers(-3, 3)}, reference=lambda x, k: torch.diag(x, k)),
    "diag_embed": case(lambda x, offset, axes: F.diag_embed(x, offset, *axes), arg(edges=EDGES),
                       shapes=mst.shapes(min_dims=1, max_dims=3, min_side=0, max_side=3),
                       kwargs={"offset": st.integers(-3, 3), "axes": two_axes},
                       reference=lambda x, offset, axes: torch.diag_embed(x, offset, *axes)),
    "take_along_dim": case(lambda x, index, axis: F.take_along_dim(x, index, axis), arg(edges=EDGES),
                           arg(strategy=along_indices), shapes=mst.shapes(min_dims=1, max_dims=3),
                           kwargs={"axis": lambda x, index: an_axis(x)}, reference=torch.take_along_dim),
    "take_along_dim_flat": case(lambda x, index: F.take_along_dim(x, index), arg(edges=EDGES),
                                arg(strategy=lambda x: mst.index_arrays(mst.shapes(max_dims=2, max_side=4),
                                                                        int(np.prod(x)))),
                                shapes=mst.shapes(max_dims=3),  # (PyTorch views a transposed x as 1-d: an error)
                                reference=lambda x, index: torch.take_along_dim(x.contiguous(), index)),
    # (away from 0 but for exact zeros, so no difference is tiny: over one feature minitx's distance is |a - b|
    # itself, where PyTorch's sqrt((a - b)^2) is 0 below about 2e-162, its square underflowing, and its gradient)
    "cdist": case(lambda a, b, p: F.cdist(a, b, p), arg(away_from=(0.0,), margin=1e-3),
                  arg(shape=lambda a: st.integers(1, 3).map(lambda m: a[:-2] + (m, a[-1])), away_from=(0.0,), margin=1e-3),
                  shapes=mst.shapes(min_dims=2, max_dims=3), kwargs={"p": st.sampled_from([0.0, 0.5, 2.0, 3.0])},
                  reference=torch.cdist),
    "index_add": case(lambda x, index, source, alpha: F.index_add(x, 0, index, source, alpha=alpha), arg(edges=EDGES),
                      arg(strategy=lambda x: mst.index_arrays((3,), x[0])),
                      arg(shape=lambda x, index: index[:1] + x[1:], edges=EDGES),
                      shapes=mst.shapes(min_dims=1, max_dims=3), kwargs={"alpha": st.sampled_from([1, 2])},
                      reference=lambda x, index, source, alpha: x.index_add(0, index, source, alpha=alpha)),
    "index_put": case(lambda x, index, values: F.index_put(x, (index,), values, accumulate=True), arg(edges=EDGES),
                      arg(strategy=lambda x: mst.index_arrays((3,), x[0], allow_negative=True)),
                      arg(shape=lambda x, index: st.sampled_from([index[:1] + x[1:], x[1:]]), edges=EDGES),
                      shapes=mst.shapes(min_dims=1, max_dims=3),
                      reference=lambda x, index, values: x.index_put((index,), values, accumulate=True)),
    "index_reduce_mean": case(lambda x, index, source, include_self: F.index_reduce(x, 0, index, source, "mean",
                                                                                    include_self),
                              arg(edges=EDGES), arg(strategy=lambda x: mst.index_arrays((3,), x[0])),
                              arg(shape=lambda x, index: index[:1] + x[1:], edges=EDGES),
                              shapes=mst.shapes(min_dims=1, max_dims=3), kwargs={"include_self": st.booleans()},
                              reference=lambda x, index, source, include_self: x.index_reduce(
                                  0, index, source, "mean", include_self=include_self)),
    "scatter": case(lambda x, index, src: F.scatter(x, -1, index, src), arg(edges=EDGES),
                    arg(strategy=lambda x: distinct_targets(x, len(x) - 1)), arg(shape=lambda x, index: index, edges=EDGES),
                    shapes=mst.shapes(min_dims=1, max_dims=3), reference=lambda x, index, src: x.scatter(-1, index, src)),
    "softmax": case(lambda x, axis: F.softmax(x, axis), arg(edges=NO_POS_INF, edge_probability=0.2),
                    shapes=mst.shapes(min_dims=1, max_dims=3), kwargs={"axis": an_axis}, reference=torch_softmax),
    "log_softmax": case(lambda x, axis: F.log_softmax(x, axis), arg(edges=(0.0, NAN), edge_probability=0.1),
                        shapes=mst.shapes(min_dims=1, max_dims=3), kwargs={"axis": an_axis},
                        reference=lambda x, axis: torch.log_softmax(x, axis)),
    "layer_norm": case(lambda x, w, b: F.layer_norm(x, w, b), arg(edges=(NAN,), edge_probability=0.1),
                       arg(shape=lambda x: x[-1:]), arg(shape=lambda x, w: w), shapes=mst.shapes(min_dims=1, max_dims=3),
                       reference=lambda x, w, b: tF.layer_norm(x, w.shape, w, b), rtol=1e-8, atol=1e-10,
                       grad_rtol=1e-7, grad_atol=1e-9),
    "linear": case(F.linear, arg(), arg(shape=lambda x: st.integers(1, 3).map(lambda n: (n, x[-1]))),
                   arg(shape=lambda x, w: w[:1]), shapes=mst.shapes(min_dims=1, max_dims=3), reference=tF.linear),
    "embedding": case(lambda ids, w, padding_idx: F.embedding(ids, w, padding_idx=padding_idx),
                      arg(strategy=lambda: mst.ids(mst.shapes(max_dims=2), 4)), arg(shape=(4, 3)),
                      kwargs={"padding_idx": st.sampled_from([None, 0, 2])},
                      reference=lambda ids, w, padding_idx: tF.embedding(ids, w, padding_idx=padding_idx)),
    "bias_act": case(lambda x, b, activation: F.bias_act_dropout(x, b, activation), arg(away_from=(0.0,)),
                     arg(shape=lambda x: x[-1:]), shapes=mst.shapes(min_dims=1, max_dims=3),
                     kwargs={"activation": st.sampled_from(["identity", "relu", "gelu_tanh"])},
                     reference=lambda x, b, activation: {"identity": lambda u: u, "relu": torch.relu,
                                                         "gelu_tanh": lambda u: tF.gelu(u, approximate="tanh")}
                     [activation](x + b)),
    "attention": case(lambda q, k, v, mask, causal, scale: F.scaled_dot_product_attention(q, k, v, mask, causal,
                                                                                          scale=scale),
                      arg(), arg(shape=lambda q: st.integers(1, 3).map(lambda lk: q[:2] + (lk, q[3]))),
                      arg(shape=lambda q, k: st.integers(1, 3).map(lambda dv: k[:3] + (dv,))),
                      arg(strategy=attention_mask), shapes=mst.shapes(min_dims=4, max_dims=4, max_side=3),
                      kwargs={"causal": st.booleans(), "scale": st.sampled_from([None, 0.4, 2.0])},
                      reference=torch_attention, rtol=1e-9, atol=1e-11),
    "unfold": case(lambda x, geometry: F.unfold(x, **geometry), arg(edges=EDGES),
                   shapes=mst.shapes(min_dims=3, max_dims=4, max_side=4), kwargs={"geometry": unfold_kwargs},
                   reference=lambda x, geometry: tF.unfold(x, **geometry)),
    "fold": case(lambda cols, geometry: F.fold(as_columns(cols), **geometry), arg(edges=EDGES),
                 shapes=mst.shapes(min_dims=6, max_dims=6, max_side=3), kwargs={"geometry": fold_kwargs},
                 reference=lambda cols, geometry: tF.fold(as_columns(cols), **geometry)),
    # ---------------------------------------------------------------- PyTorch's names and small compositions
    "divide": case(lambda a, b, mode: F.divide(a, b, rounding_mode=mode), arg(edges=EDGES),
                   arg(edges=(0.0, INF, NAN), away_from=(0.0,), margin=1e-3), broadcast=True,
                   kwargs={"mode": st.sampled_from([None, "trunc", "floor"])},
                   reference=lambda a, b, mode: torch.div(a, b, rounding_mode=mode)),
    "subtract": case(lambda a, b, alpha: F.subtract(a, b, alpha=alpha), arg(edges=EDGES), arg(edges=EDGES),
                     broadcast=True, kwargs={"alpha": st.sampled_from([1, -2, 0.5])}, reference=torch.subtract),
    "square": case(F.square, arg(edges=EDGES), reference=torch.square),
    "rot90": case(lambda x, k, axes: F.rot90(x, k, axes), arg(edges=EDGES), shapes=mst.shapes(min_dims=2, max_dims=3,
                                                                                             min_side=0, max_side=3),
                  kwargs={"k": st.integers(-5, 5), "axes": lambda s: st.permutations(range(len(s))).map(lambda p: p[:2])},
                  reference=lambda x, k, axes: torch.rot90(x, k, axes)),
    "ravel_fliplr_flipud": case(lambda x: F.stack([F.ravel(F.fliplr(x)), F.ravel(F.flipud(x))]), arg(edges=EDGES),
                                shapes=mst.shapes(min_dims=2, max_dims=3, min_side=0, max_side=3),
                                reference=lambda x: torch.stack([torch.ravel(torch.fliplr(x)), torch.ravel(torch.flipud(x))])),
    "movedim": case(lambda x, moves: F.movedim(x, *moves), arg(), shapes=mst.shapes(min_dims=1, max_dims=3),
                    kwargs={"moves": lambda s: st.tuples(st.permutations(range(len(s))), st.permutations(range(len(s))))},
                    reference=lambda x, moves: torch.movedim(x, *moves)),
    "select": case(lambda x, axis, index: F.select(x, axis, index), arg(edges=EDGES),
                   shapes=mst.shapes(min_dims=1, max_dims=3, max_side=3),
                   kwargs={"axis": an_axis, "index": lambda s: st.integers(-min(s), min(s) - 1)},
                   reference=lambda x, axis, index: torch.select(x, axis, index)),
    "take": case(F.take, arg(edges=EDGES), arg(strategy=lambda x: mst.index_arrays(mst.shapes(max_dims=2, max_side=4),
                                                                                   int(np.prod(x)), allow_negative=True)),
                 reference=torch.take),
    "diagflat": case(lambda x, offset: F.diagflat(x, offset), arg(edges=EDGES), shapes=mst.shapes(max_dims=2, max_side=3),
                     kwargs={"offset": st.integers(-3, 3)}, reference=lambda x, offset: torch.diagflat(x, offset)),
    "msort": case(F.msort, arg(edges=(INF, -INF), distinct=True), shapes=mst.shapes(max_dims=3, max_side=4),
                  reference=torch.msort),
    "aminmax": case(lambda x, axis, keepdims: F.stack(list(F.aminmax(x, axis=axis, keepdims=keepdims))),
                    arg(edges=EDGES, ties=True), shapes=mst.shapes(max_dims=3, max_side=3),
                    kwargs={"axis": lambda s: st.none() | an_axis(s), "keepdims": st.booleans()},
                    reference=lambda x, axis, keepdims: torch.stack(list(torch.aminmax(x, dim=axis, keepdim=keepdims)))),
    "nansum": reduction(F.nansum, lambda x, dim, keepdim: torch.nansum(x, dim=dim, keepdim=keepdim),
                        edges=(0.0, NAN, NAN, INF)),
    "nanmean": reduction(F.nanmean, torch_nanmean, edges=(0.0, NAN, NAN, -INF)),
    "var_mean": reduction(lambda x, axis, keepdims: F.stack(list(F.var_mean(x, axis, keepdims=keepdims))),
                          lambda x, dim, keepdim: torch.stack(list(torch.var_mean(x, dim, keepdim=keepdim))),
                          edges=(0.0, NAN), shapes=mst.shapes(min_dims=1, max_dims=3, min_side=2, max_side=3)),
    "std_mean": case(lambda x, axis, correction: F.stack(list(F.std_mean(x, axis, correction=correction))),
                     arg(edges=(0.0, NAN)), shapes=EMPTY_OK, kwargs={"axis": lambda s: st.none() | an_axis(s),
                                                                "correction": st.sampled_from([0, 1, 2])},
                     reference=lambda x, axis, correction: torch.stack(list(torch.std_mean(x, axis, correction=correction)))),
    # (variables x observations, none, one or a few of them; a variable of zero variance among the ties)
    "cov": case(lambda x, correction: F.cov(x, correction=correction), arg(edges=EDGES, ties=True),
                shapes=mst.shapes(max_dims=2, min_side=0, max_side=4), kwargs={"correction": st.sampled_from([0, 1, 2])},
                reference=lambda x, correction: torch.cov(x, correction=correction)),
    "corrcoef": case(F.corrcoef, arg(edges=EDGES, ties=True), shapes=mst.shapes(max_dims=2, min_side=0, max_side=4),
                     reference=torch.corrcoef),
    # (trapezoid over no samples: PyTorch's zeros take y's dtype, integers too, minitx's are floats: no empty axes
    # here, test_statistics.py has them)
    "trapezoid": case(lambda y, dx, axis: F.trapezoid(y, dx=dx, axis=axis), arg(edges=EDGES),
                      shapes=mst.shapes(min_dims=1, max_dims=3, max_side=3),
                      kwargs={"dx": st.sampled_from([1, 0.5, -2.0]), "axis": an_axis},
                      reference=lambda y, dx, axis: torch.trapezoid(y, dx=dx, dim=axis)),
    "trapezoid_x": case(lambda y, x, axis: F.trapezoid(y, x, axis=axis), arg(edges=EDGES), arg(edges=EDGES),
                        shapes=mst.shapes(min_dims=1, max_dims=3, max_side=3), kwargs={"axis": lambda y, x: an_axis(y)},
                        reference=lambda y, x, axis: torch.trapezoid(y, x, dim=axis)),
    "cumulative_trapezoid": case(lambda y, x, axis: F.cumulative_trapezoid(y, x, axis=axis), arg(edges=EDGES),
                                 arg(edges=EDGES), shapes=EMPTY_OK.filter(len), kwargs={"axis": lambda y, x: an_axis(y)},
                                 reference=lambda y, x, axis: torch.cumulative_trapezoid(y, x, dim=axis)),
    "gradient": case(lambda x, spacing, axis, edge_order: F.stack(list(F.gradient(x, spacing=spacing, axis=axis,
                                                                                  edge_order=edge_order))),
                     arg(edges=EDGES), shapes=mst.shapes(min_dims=1, max_dims=3, min_side=3, max_side=4),
                     kwargs={"spacing": st.sampled_from([1, 0.5, -2.0]), "axis": lambda s: st.none() | an_axis(s),
                             "edge_order": st.sampled_from([1, 2])},
                     reference=lambda x, spacing, axis, edge_order: torch.stack(list(torch.gradient(
                         x, spacing=spacing, dim=axis, edge_order=edge_order)))),
    "rsub": case(lambda a, b, alpha: F.rsub(a, b, alpha=alpha), arg(edges=EDGES), arg(edges=EDGES), broadcast=True,
                 kwargs={"alpha": st.sampled_from([1, -2, 0.5])}, reference=lambda a, b, alpha: torch.rsub(a, b, alpha=alpha)),
    "frexp": case(lambda x: F.frexp(x).mantissa, arg(edges=EDGES, away_from=(0.0,), margin=1e-3), shapes=EMPTY_OK,
                  reference=lambda x: torch.frexp(x).mantissa),
    # (no NaN: norm's gradient there departs, see vector_norm; maxnorm 0 scales every slice, 100 none; no empty
    # slices: test_statistics.py has them; away from 0 but for exact zeros, as vector_norm's: a slice of tiny
    # entries has minitx's norm, where PyTorch's underflows to 0, which maxnorm 0 would tell apart)
    "renorm": case(lambda x, p, axis, maxnorm: F.renorm(x, p, axis, maxnorm),
                   arg(edges=(0.0, INF, -INF), away_from=(0.0,), margin=1e-3),
                   shapes=mst.shapes(min_dims=2, max_dims=3, max_side=3),
                   kwargs={"p": st.sampled_from([1, 2, 3.5, INF]), "axis": an_axis, "maxnorm": st.sampled_from([0.0, 0.5, 2.0, 100.0])},
                   reference=lambda x, p, axis, maxnorm: torch.renorm(x, p, axis, maxnorm)),
    "sum_to_size": case(lambda x, size: F.sum_to_size(x, size), arg(edges=EDGES), shapes=EMPTY_OK,
                        kwargs={"size": lambda s: st.integers(0, len(s)).flatmap(lambda lead: st.tuples(
                            *[st.sampled_from([1, n]) for n in s[lead:]]))},
                        reference=lambda x, size: x.sum_to_size(size).clone()),
    # (inf in b only where a is finite: inf - inf is NaN, where minitx's norm gradient departs, as vector_norm's;
    # away from 0 but for exact zeros, as vector_norm's; PyTorch's p = 0 has no backward)
    "dist": case(lambda a, b, p: F.dist(a, b, p), arg(edges=(0.0, INF, -INF), away_from=(0.0,), margin=1e-3),
                 arg(edges=(0.0,), away_from=(0.0,), margin=1e-3), broadcast=True,
                 kwargs={"p": st.sampled_from([1, 1.5, 2, 3, INF])}, reference=torch.dist),
    "mv": case(F.mv, arg(shape=mst.shapes(min_dims=2, max_dims=2, min_side=0, max_side=3), edges=EDGES),
               arg(shape=lambda m: m[1:], edges=EDGES), reference=torch.mv),
    "addmm": case(lambda i, a, b, beta, alpha: F.addmm(i, a, b, beta=beta, alpha=alpha),
                  arg(shape=lambda: st.sampled_from([(2, 3), (3,), ()]), edges=EDGES), arg(shape=(2, 4), edges=EDGES),
                  arg(shape=(4, 3)), kwargs={"beta": st.sampled_from([0, 0.5, 1]), "alpha": st.sampled_from([1, -2.5])},
                  reference=lambda i, a, b, beta, alpha: torch.addmm(i, a, b, beta=beta, alpha=alpha)),
    "addmv": case(lambda i, m, v, beta, alpha: F.addmv(i, m, v, beta=beta, alpha=alpha),
                  arg(shape=lambda: st.sampled_from([(3,), ()]), edges=EDGES), arg(shape=(3, 2), edges=EDGES), arg(shape=(2,)),
                  kwargs={"beta": st.sampled_from([0, 2]), "alpha": st.sampled_from([1, 0.5])},
                  reference=lambda i, m, v, beta, alpha: torch.addmv(i, m, v, beta=beta, alpha=alpha)),
    "addbmm": case(lambda i, a, b, beta, alpha: F.addbmm(i, a, b, beta=beta, alpha=alpha),
                   arg(shape=lambda: st.sampled_from([(3, 4), (4,)]), edges=EDGES), arg(shape=(2, 3, 2), edges=EDGES),
                   arg(shape=(2, 2, 4)), kwargs={"beta": st.sampled_from([0, -1]), "alpha": st.sampled_from([1, 3])},
                   reference=lambda i, a, b, beta, alpha: torch.addbmm(i, a, b, beta=beta, alpha=alpha)),
    "baddbmm": case(lambda i, a, b, beta, alpha: F.baddbmm(i, a, b, beta=beta, alpha=alpha),
                    arg(shape=lambda: st.sampled_from([(2, 3, 4), (3, 1), ()]), edges=EDGES),
                    arg(shape=(2, 3, 2), edges=EDGES), arg(shape=(2, 2, 4)),
                    kwargs={"beta": st.sampled_from([0, 0.5]), "alpha": st.sampled_from([1, -1])},
                    reference=lambda i, a, b, beta, alpha: torch.baddbmm(i, a, b, beta=beta, alpha=alpha)),
    "addr": case(lambda i, u, v, beta, alpha: F.addr(i, u, v, beta=beta, alpha=alpha),
                 arg(shape=lambda: st.sampled_from([(3, 2), (2,)]), edges=EDGES), arg(shape=(3,), edges=EDGES),
                 arg(shape=(2,), edges=EDGES), kwargs={"beta": st.sampled_from([0, 1, 2]), "alpha": st.sampled_from([1, 0.5])},
                 reference=lambda i, u, v, beta, alpha: torch.addr(i, u, v, beta=beta, alpha=alpha)),
    "cross_entropy_mean": ce_case("mean"),
    "cross_entropy_sum": ce_case("sum"),
    "cross_entropy_none": ce_case("none"),
}


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=min(settings.default.max_examples, 15))  # 48 cases: about 30 s in CI's profile
@given(data=st.data())
def test_op_matches_torch(name, data):
    CASES[name](data)


@pytest.mark.gpu
@pytest.mark.gpu_ops
@pytest.mark.parametrize("dtype, tolerance", [("float64", dict(rtol=1e-9, atol=1e-12)),
                                              ("float32", dict(rtol=1e-3, atol=1e-5))], ids=["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=min(settings.default.max_examples, 10))
@given(data=st.data())
def test_op_on_the_gpu_matches_the_cpu(name, dtype, tolerance, data):
    """Each case's op on CuPy arrays against the same op on NumPy's: outputs (dtype, device,
    values) and gradients, in float64 and in float32 (the dtype training runs in, where the fused
    kernels take over), to tolerances that allow another libm and another summation order."""
    CASES[name].on_device(data, "cuda", dtype, **tolerance)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=min(settings.default.max_examples, 2))
@given(data=st.data())
def test_every_case_runs_twice_to_the_same_bits(name, dtype, data):
    """What the gpu test above runs, CPU to CPU, here where CI has no GPU: the inputs cast and
    moved with their keyword tensors, several outputs, one cotangent; and two runs of one op on
    one device agree to the bit (no op draws at random or depends on state)."""
    CASES[name].on_device(data, "cpu", dtype, rtol=0.0, atol=0.0)
