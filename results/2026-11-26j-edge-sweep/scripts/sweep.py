"""Zero-size / degenerate-shape sweep of minitx.functional against PyTorch (float64).

PYTHONPATH=$PWD python results/2026-11-26j-edge-sweep/scripts/sweep.py [family ...]   -> prints findings, categories:
  a  both succeed but differ (shape / dtype / value / gradient)
  bc PyTorch succeeds, minitx raises with a message that does not name the op
  c  minitx raises a message not naming the op (PyTorch raises too)
  b  PyTorch succeeds, minitx raises (message names the op)
  w  a NumPy RuntimeWarning leaks out of minitx
  d  minitx succeeds where PyTorch raises
"""
import itertools
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # harness.py beside it
from harness import F, NoGrad, RESULTS, RNG, STATS, Skip, check, minitx, rand, report  # noqa: E402

tF = torch.nn.functional
EMPTY = [(0,), (0, 3), (3, 0), (2, 0, 4), (2, 3, 0), (0, 0)]
ZD = ()
CTRL = (2, 3)
ALL = EMPTY + [ZD, CTRL]
FAMILIES = {}


def family(fn):
    FAMILIES[fn.__name__] = fn
    return fn


def tdims(axis, ndim):
    return tuple(range(ndim)) if axis is None else axis


def axes_for(shape):
    """None, each axis (and its negative), all axes as a tuple."""
    out = [None]
    for a in range(len(shape)):
        out.append(a)
    if len(shape):
        out.append(-1)
    if len(shape) > 1:
        out.append(tuple(range(len(shape))))
    if len(shape) == 0:
        out += [0, -1]
    return out


# ---------------------------------------------------------------- elementwise
UNARY = {
    # name: (torch fn, low, high)
    "abs": (torch.abs, None, None), "neg": (torch.neg, None, None), "exp": (torch.exp, None, None),
    "log": (torch.log, 0.1, 3), "sqrt": (torch.sqrt, 0.1, 3), "sin": (torch.sin, None, None),
    "cos": (torch.cos, None, None), "tan": (torch.tan, -1, 1), "asin": (torch.asin, -0.9, 0.9),
    "acos": (torch.acos, -0.9, 0.9), "atan": (torch.atan, None, None), "sinh": (torch.sinh, None, None),
    "cosh": (torch.cosh, None, None), "tanh": (torch.tanh, None, None), "asinh": (torch.asinh, None, None),
    "acosh": (torch.acosh, 1.1, 3), "atanh": (torch.atanh, -0.9, 0.9), "erf": (torch.erf, None, None),
    "sign": (torch.sign, None, None), "floor": (torch.floor, None, None), "ceil": (torch.ceil, None, None),
    "round": (torch.round, None, None), "trunc": (torch.trunc, None, None), "log2": (torch.log2, 0.1, 3),
    "exp2": (torch.exp2, None, None), "log1p": (torch.log1p, -0.5, 3), "expm1": (torch.expm1, None, None),
    "rsqrt": (torch.rsqrt, 0.1, 3), "reciprocal": (torch.reciprocal, 0.5, 3), "log10": (torch.log10, 0.1, 3),
    "sigmoid": (torch.sigmoid, None, None), "relu": (torch.relu, None, None), "gelu": (tF.gelu, None, None),
    "silu": (tF.silu, None, None), "leaky_relu": (tF.leaky_relu, None, None), "elu": (tF.elu, None, None),
    "softplus": (tF.softplus, None, None), "logsigmoid": (tF.logsigmoid, None, None),
    "hardtanh": (tF.hardtanh, None, None),
}
PREDICATES = {"isnan": torch.isnan, "isinf": torch.isinf, "isfinite": torch.isfinite, "logical_not": torch.logical_not}


@family
def unary():
    for name, (tfn, lo, hi) in UNARY.items():
        for s in ALL:
            check(name, getattr(F, name), tfn, [rand(s, lo, hi)])
    for name, tfn in PREDICATES.items():
        for s in ALL:
            check(name, getattr(F, name), tfn, [rand(s)], grad=False)
    for s in ALL:
        check("bitwise_not", F.bitwise_not, torch.bitwise_not, [rand(s, dtype=np.int64)], grad=False)
        check("round", lambda x: F.round(x, decimals=2), lambda x: torch.round(x, decimals=2), [rand(s)],
              label="decimals=2")
        check("gelu", lambda x: F.gelu(x, approximate="tanh"), lambda x: tF.gelu(x, approximate="tanh"), [rand(s)],
              label="tanh")
        check("clip", lambda x: F.clip(x, -0.5, 0.5), lambda x: torch.clamp(x, -0.5, 0.5), [rand(s)])
        check("clip", lambda x: F.clip(x, None, 0.5), lambda x: torch.clamp(x, None, 0.5), [rand(s)], label="min None")
        check("astype", lambda x: F.astype(x, "float32"), lambda x: x.to(torch.float32), [rand(s)])
        check("pow", lambda x: F.pow(x, 2.0), lambda x: torch.pow(x, 2.0), [rand(s)], label="scalar exponent")
        check("pow", lambda x: F.pow(2.0, x), lambda x: torch.pow(2.0, x), [rand(s)], label="scalar base")


BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "pow": torch.pow,
    "maximum": torch.maximum, "minimum": torch.minimum, "atan2": torch.atan2, "hypot": torch.hypot,
    "copysign": torch.copysign, "floor_divide": torch.floor_divide, "remainder": torch.remainder,
    "fmod": torch.fmod,
}
COMPARE = {"equal": torch.eq, "not_equal": torch.ne, "less": torch.lt, "less_equal": torch.le,
           "greater": torch.gt, "greater_equal": torch.ge, "isclose": torch.isclose}
BITWISE = {"bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor,
           "bitwise_left_shift": torch.bitwise_left_shift, "bitwise_right_shift": torch.bitwise_right_shift}
PAIRS = [(s, s) for s in ALL] + [((0, 3), (3,)), ((3, 0), (3, 1)), ((3, 0), (1,)), ((), (0,)), ((0,), ()),
                                  ((2, 0, 4), (4,)), ((2, 0, 4), (1, 1, 4)), ((0,), (1,)), ((1, 3), (0, 3)),
                                  ((0, 1), (1, 0)), ((0,), (3,))]


@family
def binary():
    for (sa, sb) in PAIRS:
        for name, tfn in BINARY.items():
            lo = 0.5 if name in ("pow",) else None
            a = rand(sa, lo, 2.0 if lo else None)
            b = rand(sb, 0.5, 2.0) if name in ("div", "floor_divide", "remainder", "fmod", "hypot", "pow") else rand(sb)
            check(name, getattr(F, name), tfn, [a, b], grad=name != "floor_divide")
        for name, tfn in COMPARE.items():
            check(name, getattr(F, name), tfn, [rand(sa), rand(sb)], grad=False)
        for name, tfn in BITWISE.items():
            check(name, getattr(F, name), tfn, [rand(sa, 0, 4, dtype=np.int64), rand(sb, 0, 4, dtype=np.int64)],
                  grad=False)
        check("allclose", F.allclose, torch.allclose, [rand(sa), rand(sb)], grad=False)
        check("where", lambda c, a, b: F.where(c, a, b), torch.where, [rand(sa, dtype=np.bool_), rand(sa), rand(sb)])
        check("where", lambda c, a, b: F.where(c, a, b), torch.where, [rand(sb, dtype=np.bool_), rand(sa), rand(sb)],
              label="cond of b's shape")
        check("masked_fill", lambda x, m: F.masked_fill(x, m, -1.5), lambda x, m: x.masked_fill(m, -1.5),
              [rand(sa), rand(sb, dtype=np.bool_)])
    for s in ALL:
        check("masked_fill", lambda x, m, v: F.masked_fill(x, m, v), lambda x, m, v: x.masked_fill(m, v),
              [rand(s), rand(s, dtype=np.bool_), np.array(2.5)], label="0-d tensor value")


# ---------------------------------------------------------------- reductions
@family
def reductions():
    for s in ALL:
        for axis in axes_for(s):
            for keep in (False, True):
                lab = f"axis={axis}, keepdims={keep}"
                td = tdims(axis, len(s))
                for name, tfn in [("sum", lambda x, d=td, k=keep: torch.sum(x, dim=d, keepdim=k)),
                                  ("mean", lambda x, d=td, k=keep: torch.mean(x, dim=d, keepdim=k)),
                                  ("max", lambda x, d=td, k=keep: torch.amax(x, dim=d, keepdim=k)),
                                  ("min", lambda x, d=td, k=keep: torch.amin(x, dim=d, keepdim=k)),
                                  ("logsumexp", lambda x, d=td, k=keep: torch.logsumexp(x, dim=d, keepdim=k))]:
                    check(name, lambda x, n=name, a=axis, k=keep: getattr(F, n)(x, axis=a, keepdims=k), tfn,
                          [rand(s)], label=lab)
                for ddof in (0, 1):
                    for name, tfn in [("var", torch.var), ("std", torch.std)]:
                        check(name, lambda x, n=name, a=axis, k=keep, dd=ddof: getattr(F, n)(x, axis=a, ddof=dd,
                                                                                             keepdims=k),
                              lambda x, f=tfn, d=td, k=keep, dd=ddof: f(x, dim=d, correction=dd, keepdim=k),
                              [rand(s)], label=lab + f", ddof={ddof}")
                # prod: torch takes one dim or none
                if axis is None:
                    tp = (lambda x: torch.prod(x)) if not keep else None
                elif isinstance(axis, int):
                    tp = (lambda x, a=axis, k=keep: torch.prod(x, dim=a, keepdim=k))
                else:
                    tp = None
                if tp is not None:
                    check("prod", lambda x, a=axis, k=keep: F.prod(x, axis=a, keepdims=k), tp, [rand(s)], label=lab)
            if axis is None or isinstance(axis, int):
                for name in ("argmax", "argmin"):
                    check(name, lambda x, n=name, a=axis: getattr(F, n)(x, axis=a),
                          lambda x, n=name, a=axis: getattr(torch, n)(x, dim=a), [rand(s)], grad=False,
                          label=f"axis={axis}")


# ---------------------------------------------------------------- scans and sorting
@family
def scans():
    for s in ALL:
        axes = list(range(len(s))) + [-1] if s else [0, -1]
        for axis in axes:
            lab = f"axis={axis}"
            check("cumsum", lambda x, a=axis: F.cumsum(x, a), lambda x, a=axis: torch.cumsum(x, a), [rand(s)], label=lab)
            check("cumprod", lambda x, a=axis: F.cumprod(x, a), lambda x, a=axis: torch.cumprod(x, a), [rand(s)],
                  label=lab)
            check("logcumsumexp", lambda x, a=axis: F.logcumsumexp(x, a), lambda x, a=axis: torch.logcumsumexp(x, a),
                  [rand(s)], label=lab)
            check("cummax", lambda x, a=axis: F.cummax(x, a), lambda x, a=axis: tuple(torch.cummax(x, a)), [rand(s)],
                  label=lab)
            check("cummin", lambda x, a=axis: F.cummin(x, a), lambda x, a=axis: tuple(torch.cummin(x, a)), [rand(s)],
                  label=lab)
            for desc in (False, True):
                check("sort", lambda x, a=axis, d=desc: F.sort(x, a, d),
                      lambda x, a=axis, d=desc: tuple(torch.sort(x, dim=a, descending=d, stable=True)), [rand(s)],
                      label=lab + f", descending={desc}")
            check("argsort", lambda x, a=axis: F.argsort(x, a), lambda x, a=axis: torch.argsort(x, dim=a, stable=True),
                  [rand(s)], label=lab, grad=False)
            n = s[axis] if s else 1
            for k in sorted({0, 1, n}):
                for largest in (True, False):
                    check("topk", lambda x, a=axis, k=k, lg=largest: F.topk(x, k, a, lg),
                          lambda x, a=axis, k=k, lg=largest: tuple(torch.topk(x, k, dim=a, largest=lg)), [rand(s)],
                          label=lab + f", k={k}, largest={largest}")


# ---------------------------------------------------------------- shape
@family
def shape():
    reshapes = {(0,): [(0, 3), (-1,), (0, 0), (3, 0, 2)], (0, 3): [(3, 0), (-1, 3), (-1,), (0, -1)],
                (3, 0): [(0, 5), (3, -1), (-1, 0)], (2, 0, 4): [(8, 0), (0, -1), (-1, 4)],
                (): [(1,), (-1,), (1, 1)], (0, 0): [(0,), (5, 0)]}
    for s, targets in reshapes.items():
        for t in targets:
            check("reshape", lambda x, t=t: F.reshape(x, t), lambda x, t=t: x.reshape(t), [rand(s)], label=f"to {t}")
    for s in ALL:
        for perm in itertools.permutations(range(len(s))):
            check("transpose", lambda x, p=perm: F.transpose(x, p), lambda x, p=perm: x.permute(p), [rand(s)],
                  label=str(perm))
            check("permute", lambda x, p=perm: F.permute(x, p), lambda x, p=perm: x.permute(p), [rand(s)],
                  label=str(perm), names=["permute", "transpose"])
        check("transpose", lambda x: F.transpose(x), lambda x: x.permute(*reversed(range(x.ndim))), [rand(s)],
              label="axes=None")
        axes = list(range(-len(s), len(s))) if s else [0, -1]
        for a in axes:
            for b in axes:
                check("swapaxes", lambda x, a=a, b=b: F.swapaxes(x, a, b), lambda x, a=a, b=b: torch.swapaxes(x, a, b),
                      [rand(s)], label=f"{a},{b}")
            check("flip", lambda x, a=a: F.flip(x, a), lambda x, a=a: torch.flip(x, (a,)), [rand(s)], label=f"axis={a}")
            check("roll", lambda x, a=a: F.roll(x, 1, a), lambda x, a=a: torch.roll(x, 1, a), [rand(s)], label=f"axis={a}")
            check("squeeze", lambda x, a=a: F.squeeze(x, a), lambda x, a=a: torch.squeeze(x, a), [rand(s)],
                  label=f"axis={a}")
            check("repeat", lambda x, a=a: F.repeat(x, 2, a), lambda x, a=a: torch.repeat_interleave(x, 2, a), [rand(s)],
                  label=f"2, axis={a}")
            check("repeat", lambda x, a=a: F.repeat(x, 0, a), lambda x, a=a: torch.repeat_interleave(x, 0, a), [rand(s)],
                  label=f"0, axis={a}")
        for a in range(-len(s) - 1, len(s) + 1):
            check("unsqueeze", lambda x, a=a: F.unsqueeze(x, a), lambda x, a=a: torch.unsqueeze(x, a), [rand(s)],
                  label=f"axis={a}")
        check("flip", lambda x: F.flip(x), lambda x: torch.flip(x, tuple(range(x.ndim))), [rand(s)], label="axis=None")
        check("roll", lambda x: F.roll(x, 2), lambda x: torch.roll(x, 2), [rand(s)], label="axis=None")
        check("squeeze", lambda x: F.squeeze(x), lambda x: torch.squeeze(x), [rand(s)], label="axis=None")
        check("repeat", lambda x: F.repeat(x, 2), lambda x: torch.repeat_interleave(x, 2), [rand(s)], label="axis=None")
        for reps in [(2,), (0,), (2, 1), (1, 0, 2), ()]:
            check("tile", lambda x, r=reps: F.tile(x, r), lambda x, r=reps: torch.tile(x, r), [rand(s)],
                  label=f"reps={reps}")
        for tgt in [(2,) + s, (0,) + s]:
            check("broadcast_to", lambda x, t=tgt: F.broadcast_to(x, t), lambda x, t=tgt: x.broadcast_to(t), [rand(s)],
                  label=f"to {tgt}")
        # pad: numpy pairs per axis; torch pairs last axis first
        for width in [1, (1, 2), (0, 0), (-1, 0)] + ([((0, 0),) * (len(s) - 1) + ((2, 0),)] if s else []):
            def tpad(x, w=width):
                pw = [w] * x.ndim if isinstance(w, int) else ([tuple(w)] * x.ndim if isinstance(w[0], int) else list(w))
                pw = [(p, p) if isinstance(p, int) else p for p in pw]
                return tF.pad(x, [n for pair in reversed(pw) for n in pair], value=0.5)
            check("pad", lambda x, w=width: F.pad(x, w, 0.5), tpad, [rand(s)], label=f"{width}, constant")
            for mode in ("reflect", "replicate"):
                if isinstance(width, int) or isinstance(width[0], int) and min(width) < 0:
                    if not (isinstance(width, int) and width >= 0):
                        continue

                def tpadm(x, w=width, m=mode):
                    pw = [w] * x.ndim if isinstance(w, int) else (
                        [tuple(w)] * x.ndim if isinstance(w[0], int) else list(w))
                    pw = [(p, p) if isinstance(p, int) else p for p in pw]
                    # torch pads the trailing spatial axes of a [N, C, *] (or [C, *]) input only
                    nd = x.ndim
                    if nd < 2 or any(pw[i] != (0, 0) for i in range(min(nd - 1, 2 if nd >= 3 else 1))):
                        raise Skip
                    return tF.pad(x, [n for pair in reversed(pw[1 if nd == 2 else 2:]) for n in pair], mode=m)
                try:
                    check("pad", lambda x, w=width, m=mode: F.pad(x, w, mode=m), tpadm, [rand(s)], label=f"{width}, {mode}")
                except Skip:
                    pass


@family
def joins():
    groups = [[(0,), (3,)], [(0, 3), (2, 3)], [(3, 0), (3, 2)], [(0,), (0,)], [(2, 0, 4), (2, 0, 4)], [(0, 3), (0, 3)],
              [(0,), (2, 3)], [(), ()], [(2, 3)], [(0, 3)]]
    for shapes in groups:
        nd = len(shapes[0])
        for axis in (list(range(-nd, nd)) if nd else [0]):
            check("concatenate", lambda *xs, a=axis: F.concatenate(list(xs), axis=a), lambda *xs, a=axis: torch.cat(xs, a),
                  [rand(s) for s in shapes], label=f"axis={axis}")
        if len({s for s in shapes}) == 1:
            for axis in range(-nd - 1, nd + 1):
                check("stack", lambda *xs, a=axis: F.stack(list(xs), axis=a), lambda *xs, a=axis: torch.stack(xs, a),
                      [rand(s) for s in shapes], label=f"axis={axis}")
    check("concatenate", lambda: F.concatenate([]), lambda: torch.cat([]), [], label="no tensors")
    check("stack", lambda: F.stack([]), lambda: torch.stack([]), [], label="no tensors")
    for s in EMPTY + [CTRL]:
        for axis in range(-len(s), len(s)):
            n = s[axis]
            for sec in (1, 2, 3):
                if n % sec == 0 or n == 0:
                    check("split", lambda x, k=sec, a=axis: F.split(x, k, a), lambda x, k=sec, a=axis: torch.tensor_split(x, k, a),
                          [rand(s)], label=f"{sec} sections, axis={axis}", names=["split", "getitem"])
            for cuts in ([0], [0, 0], [1], [5]):
                check("split", lambda x, c=cuts, a=axis: F.split(x, c, a),
                      lambda x, c=cuts, a=axis: torch.tensor_split(x, c, a), [rand(s)], label=f"cuts={cuts}, axis={axis}",
                      names=["split", "getitem"])
    check("split", lambda x: F.split(x, 1, 0), lambda x: torch.tensor_split(x, 1, 0), [rand(())], label="0-d",
          names=["split"])


# ---------------------------------------------------------------- indexing
@family
def indexing():
    idx = [
        ((0,), (slice(None),)), ((0,), (slice(0, 0),)), ((0,), (np.array([], dtype=np.int64),)),
        ((0,), (np.zeros(0, dtype=bool),)), ((3,), (np.zeros(3, dtype=bool),)), ((3,), (np.array([], dtype=np.int64),)),
        ((0, 3), (slice(None), 1)), ((0, 3), (Ellipsis, None)), ((3, 0), (1,)), ((3, 0), (np.array([0, 0, 2]),)),
        ((2, 0, 4), (slice(None), slice(None), np.array([1, 1]))), ((3, 0), (slice(None), np.array([], dtype=np.int64))),
        ((3, 4), (np.array([], dtype=np.int64), np.array([], dtype=np.int64))), ((0,), (0,)), ((3, 0), (slice(None), 0)),
        ((), (None,)), ((), (Ellipsis,)), ((), (np.array(True),)), ((), (np.array(False),)), ((3,), (slice(2, 1),)),
        ((3,), (slice(None, None, -1),)), ((0, 3), (np.zeros((0, 3), dtype=bool),)),
    ]
    for s, index in idx:
        check("getitem", lambda x, i=index: F.getitem(x, i), lambda x, i=index: x[tuple(torch.tensor(p) if isinstance(p, np.ndarray) else p for p in i)],
              [rand(s)], label=f"index={index!r}")
        check("getitem", lambda x, i=index: x[i], lambda x, i=index: x[tuple(torch.tensor(p) if isinstance(p, np.ndarray) else p for p in i)],
              [rand(s)], label=f"x[{index!r}] operator")
    # gather / scatter
    gcases = [((0, 3), 0, (0, 3)), ((0, 3), 1, (0, 2)), ((3, 0), 1, (3, 0)), ((3, 0), 1, (3, 2)), ((3, 0), 0, (2, 0)),
              ((3, 4), 0, (0, 4)), ((3, 4), 1, (3, 0)), ((3, 4), 1, (0, 0)), ((0,), 0, (0,)), ((0,), 0, (2,)),
              ((), 0, ()), ((3,), 0, ()), ((2, 0, 4), 2, (2, 0, 1)), ((2, 3, 0), 1, (2, 2, 0))]
    for xs, axis, ishape in gcases:
        n = xs[axis] if xs else 1
        index = np.asarray(RNG.integers(0, max(n, 1), size=ishape)).astype(np.int64)
        check("gather", lambda x, i, a=axis: F.gather(x, a, i), lambda x, i, a=axis: torch.gather(x, a, i),
              [rand(xs), index], label=f"axis={axis}")
        src = rand(ishape)
        check("scatter_add", lambda x, i, s, a=axis: F.scatter_add(x, a, i, s),
              lambda x, i, s, a=axis: torch.scatter_add(x, a, i, s), [rand(xs), index, src], label=f"axis={axis}")
        for red in ("sum", "prod", "mean", "amax", "amin"):
            for inc in (True, False):
                check("scatter_reduce", lambda x, i, s, a=axis, r=red, c=inc: F.scatter_reduce(x, a, i, s, r, c),
                      lambda x, i, s, a=axis, r=red, c=inc: torch.scatter_reduce(x, a, i, s, r, include_self=c),
                      [rand(xs), index, src], label=f"axis={axis}, {red}, include_self={inc}")
    for s in [(0, 3), (3, 0), (0, 0), (2, 0, 4), (2, 3, 0), (2, 3), (3,), ()]:
        for k in (-1, 0, 2):
            check("tril", lambda x, k=k: F.tril(x, k), lambda x, k=k: torch.tril(x, k), [rand(s)], label=f"k={k}")
            check("triu", lambda x, k=k: F.triu(x, k), lambda x, k=k: torch.triu(x, k), [rand(s)], label=f"k={k}")
    for ids_shape, wshape in [((0,), (4, 3)), ((2, 0), (4, 3)), ((3,), (4, 0)), ((0,), (0, 3)), ((), (4, 3)),
                              ((2,), (4, 0))]:
        ids = np.asarray(RNG.integers(0, max(wshape[0], 1), size=ids_shape)).astype(np.int64)
        for pad in (None, 0):
            check("embedding", lambda i, w, p=pad: F.embedding(i, w, padding_idx=p),
                  lambda i, w, p=pad: tF.embedding(i, w, padding_idx=p), [ids, rand(wshape)], label=f"padding_idx={pad}")
    for s in [(0,), (2, 0), (), (3,)]:
        ids = np.asarray(RNG.integers(0, 3, size=s)).astype(np.int64)
        for nc in (3, 0, -1):
            check("one_hot", lambda i, n=nc: F.one_hot(i, n), lambda i, n=nc: tF.one_hot(i, n), [ids], grad=False,
                  label=f"num_classes={nc}")
    for s in ALL:
        x = rand(s)
        if x.size and x.ndim:
            x[..., 0] = 0
        check("nonzero", F.nonzero, torch.nonzero, [x], grad=False)
        check("nonzero", lambda x: F.nonzero(x, as_tuple=True), lambda x: torch.nonzero(x, as_tuple=True), [x],
              grad=False, label="as_tuple")
        check("argwhere", F.argwhere, torch.argwhere, [x], grad=False, names=["argwhere", "nonzero"])
        check("masked_select", F.masked_select, torch.masked_select, [rand(s), rand(s, dtype=np.bool_)])
    for sx, sm in [((0, 3), (3,)), ((3,), (0, 3)), ((3, 0), (3, 1)), ((), (0,))]:
        check("masked_select", F.masked_select, torch.masked_select, [rand(sx), rand(sm, dtype=np.bool_)])


# ---------------------------------------------------------------- linear algebra
@family
def linalg():
    for sa, sb in [((0, 3), (3, 2)), ((2, 0), (0, 3)), ((2, 3), (3, 0)), ((0,), (0,)), ((3,), (3, 0)), ((0,), (0, 2)),
                   ((2, 0), (0,)), ((0, 2, 3), (3, 4)), ((2, 0, 3), (3, 4)), ((2, 1, 0, 3), (5, 3, 2)), ((0, 3), (0, 3)),
                   ((), (3,)), ((3, 0), (3, 0)), ((2, 3), (3, 2))]:
        check("matmul", F.matmul, torch.matmul, [rand(sa), rand(sb)])
        check("matmul", lambda a, b: a @ b, torch.matmul, [rand(sa), rand(sb)], label="@ operator")
    for sx, sw, bias in [((0, 3), (2, 3), True), ((2, 0), (4, 0), True), ((2, 3), (0, 3), True), ((0, 0), (0, 0), True),
                         ((2, 0, 3), (2, 3), False), ((3,), (2, 3), True), ((0,), (2, 0), True), ((2, 3), (2, 3), True)]:
        args = [rand(sx), rand(sw)] + ([rand(sw[:1])] if bias else [])
        check("linear", F.linear, tF.linear, args, label="bias" if bias else "")
    for spec, shapes in [("ij,jk->ik", [(2, 0), (0, 3)]), ("ij,jk->ik", [(0, 2), (2, 3)]), ("i,i->", [(0,), (0,)]),
                         ("ij->", [(0, 3)]), ("ij->j", [(0, 3)]), ("ij->ji", [(3, 0)]), ("bij,bjk->bik", [(0, 2, 3), (0, 3, 4)]),
                         ("i,j->ij", [(0,), (3,)]), ("->", [()]), ("ii->i", [(0, 0)]), ("ii->", [(3, 3)])]:
        check("einsum", lambda *xs, sp=spec: F.einsum(sp, *xs), lambda *xs, sp=spec: torch.einsum(sp, *xs),
              [rand(s) for s in shapes], label=spec)


# ---------------------------------------------------------------- activations with an axis
@family
def softmaxes():
    for s in ALL:
        for axis in (list(range(-len(s), len(s))) if s else [0, -1]):
            check("softmax", lambda x, a=axis: F.softmax(x, a), lambda x, a=axis: torch.softmax(x, a), [rand(s)],
                  label=f"axis={axis}")
            check("log_softmax", lambda x, a=axis: F.log_softmax(x, a), lambda x, a=axis: torch.log_softmax(x, a),
                  [rand(s)], label=f"axis={axis}")


# ---------------------------------------------------------------- normalization
@family
def norms():
    for s in [(0, 3), (3, 0), (2, 0, 4), (2, 3, 0), (0,), (0, 0), (), (2, 3)]:
        d = s[-1:] if s else ()
        for w in (False, True):
            args = [rand(s)] + ([rand(d), rand(d)] if w else [])
            check("layer_norm", lambda x, *wb: F.layer_norm(x, *wb), lambda x, *wb: tF.layer_norm(x, d, *wb), args,
                  label="weight, bias" if w else "", rtol=1e-8, atol=1e-10)
            args = [rand(s)] + ([rand(d)] if w else [])
            check("rms_norm", lambda x, *wb: F.rms_norm(x, d, *wb, eps=1e-6),
                  lambda x, *wb: tF.rms_norm(x, d, *wb, eps=1e-6), args, label="weight" if w else "", rtol=1e-8,
                  atol=1e-10)
    for s, g in [((0, 4, 3), 2), ((2, 4, 0), 2), ((2, 0, 3), 1), ((2, 4), 2), ((2, 4, 3), 2), ((0, 4), 4), ((2, 4, 1), 4)]:
        for w in (False, True):
            args = [rand(s)] + ([rand(s[1:2]), rand(s[1:2])] if w else [])
            check("group_norm", lambda x, *wb, g=g: F.group_norm(x, g, *wb), lambda x, *wb, g=g: tF.group_norm(x, g, *wb),
                  args, label=f"groups={g}" + (", weight, bias" if w else ""), rtol=1e-8, atol=1e-10)
    for s in [(0, 3), (0, 3, 4), (2, 0, 4), (2, 3, 0), (2, 0), (2, 3), (1, 3), (3,)]:
        c = s[1:2] if len(s) > 1 else (0,)
        for training in (False, True):
            def mb(x, w, b, t=training, c=c):
                rm, rv = minitx.tensor(np.zeros(c)), minitx.tensor(np.ones(c))
                return F.batch_norm(x, rm, rv, w, b, training=t)

            def tb(x, w, b, t=training, c=c):
                rm, rv = torch.zeros(c), torch.ones(c)
                return tF.batch_norm(x, rm, rv, w, b, training=t)
            check("batch_norm", mb, tb, [rand(s), rand(c), rand(c)], label=f"training={training}", rtol=1e-8, atol=1e-10)


# ---------------------------------------------------------------- dropout
@family
def dropouts():
    for s in ALL:
        for p, training in [(0.5, True), (0.0, True), (0.5, False)]:
            cv = not (p and training)
            check("dropout", lambda x, p=p, t=training: F.dropout(x, p, t, seed=1),
                  lambda x, p=p, t=training: tF.dropout(x, p, t), [rand(s)], label=f"p={p}, training={training}",
                  compare_values=cv, grad=cv)
            check("dropout_add", lambda x, r, p=p, t=training: F.dropout_add(x, r, p, t, seed=1),
                  lambda x, r, p=p, t=training: r + tF.dropout(x, p, t), [rand(s), rand(s)],
                  label=f"p={p}, training={training}", compare_values=cv, grad=cv)
        if s:
            for act, tact in [("relu", torch.relu), ("identity", lambda u: u), ("gelu_tanh", lambda u: tF.gelu(u, approximate="tanh"))]:
                check("bias_act_dropout", lambda x, b, a=act: F.bias_act_dropout(x, b, a, p=0.0),
                      lambda x, b, ta=tact: ta(x + b), [rand(s), rand(s[-1:])], label=act)


# ---------------------------------------------------------------- losses
@family
def losses():
    for xs in [(0, 3), (2, 0), (0, 0), (2, 3), (0, 4, 3), (2, 0, 3), (3,), (0,)]:
        C = xs[-1]
        tshape = xs[:-1]
        t = np.asarray(RNG.integers(0, max(C, 1), size=tshape)).astype(np.int64)

        def tce(x, t, red, ls=0.0):
            if x.ndim >= 2:
                return tF.cross_entropy(x.reshape(-1, x.shape[-1]), t.reshape(-1), reduction=red, label_smoothing=ls) \
                    if red != "none" else tF.cross_entropy(x.reshape(-1, x.shape[-1]), t.reshape(-1), reduction=red,
                                                           label_smoothing=ls).reshape(t.shape)
            return tF.cross_entropy(x, t, reduction=red, label_smoothing=ls)
        for red in ("mean", "sum", "none"):
            for ls in (0.0, 0.1):
                check("cross_entropy", lambda x, t, r=red, ls=ls: F.cross_entropy(x, t, reduction=r, label_smoothing=ls),
                      lambda x, t, r=red, ls=ls: tce(x, t, r, ls), [rand(xs), t], label=f"{red}, smoothing={ls}")
            # probabilities as targets
            q = RNG.random(xs)
            q = q / np.maximum(q.sum(-1, keepdims=True), 1e-9) if q.size else q
            check("cross_entropy", lambda x, q, r=red: F.cross_entropy(x, q, reduction=r),
                  lambda x, q, r=red: (tF.cross_entropy(x.reshape(-1, x.shape[-1]), q.reshape(-1, q.shape[-1]), reduction=r).reshape(q.shape[:-1]) if r == "none" else tF.cross_entropy(x.reshape(-1, x.shape[-1]), q.reshape(-1, q.shape[-1]), reduction=r)) if x.ndim >= 2 else tF.cross_entropy(x, q, reduction=r),
                  [rand(xs), q], label=f"{red}, probability targets", grad=True)
            if len(xs) == 2:
                check("nll_loss", lambda x, t, r=red: F.nll_loss(x, t, reduction=r),
                      lambda x, t, r=red: tF.nll_loss(x, t, reduction=r), [rand(xs), t], label=red)
                wt = RNG.random(C)
                check("nll_loss", lambda x, t, w, r=red: F.nll_loss(x, t, reduction=r, weight=w),
                      lambda x, t, w, r=red: tF.nll_loss(x, t, reduction=r, weight=w), [rand(xs), t, NoGrad(wt)],
                      label=red + ", weight")
    for s in ALL:
        for red in ("mean", "sum", "none"):
            check("binary_cross_entropy", lambda p, t, r=red: F.binary_cross_entropy(p, t, reduction=r),
                  lambda p, t, r=red: tF.binary_cross_entropy(p, t, reduction=r),
                  [rand(s, 0.05, 0.95), RNG.random(s)], label=red)
            check("binary_cross_entropy_with_logits",
                  lambda p, t, r=red: F.binary_cross_entropy_with_logits(p, t, reduction=r),
                  lambda p, t, r=red: tF.binary_cross_entropy_with_logits(p, t, reduction=r), [rand(s), RNG.random(s)],
                  label=red)
            if s:
                check("binary_cross_entropy_with_logits",
                      lambda p, t, w, r=red: F.binary_cross_entropy_with_logits(p, t, reduction=r, pos_weight=w),
                      lambda p, t, w, r=red: tF.binary_cross_entropy_with_logits(p, t, reduction=r, pos_weight=w),
                      [rand(s), RNG.random(s), NoGrad(RNG.random(s[-1:]) + 0.5)], label=red + ", pos_weight")


# ---------------------------------------------------------------- attention
@family
def attention():
    cases = [((1, 2, 0, 4), (1, 2, 3, 4), (1, 2, 3, 5)), ((1, 2, 3, 4), (1, 2, 0, 4), (1, 2, 0, 5)),
             ((0, 2, 3, 4), (0, 2, 3, 4), (0, 2, 3, 4)), ((1, 0, 3, 4), (1, 0, 3, 4), (1, 0, 3, 4)),
             ((1, 2, 3, 0), (1, 2, 3, 0), (1, 2, 3, 5)), ((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 0)),
             ((2, 3, 4), (2, 0, 4), (2, 0, 4)), ((3, 4), (0, 4), (0, 4)), ((0, 4), (3, 4), (3, 4)),
             ((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4))]
    for sq, sk, sv in cases:
        for causal in (False, True):
            for scale in (None, 0.5):
                check("scaled_dot_product_attention",
                      lambda q, k, v, c=causal, sc=scale: F.scaled_dot_product_attention(q, k, v, causal=c, scale=sc),
                      lambda q, k, v, c=causal, sc=scale: _tattn(q, k, v, c, sc), [rand(sq), rand(sk), rand(sv)],
                      label=f"causal={causal}, scale={scale}", names=["attention"], rtol=1e-8, atol=1e-10)
        lq, lk = sq[-2], sk[-2]
        mask = RNG.random((lq, lk)) < 0.7
        check("scaled_dot_product_attention", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m),
              lambda q, k, v, m: _tattn(q, k, v, False, None, m), [rand(sq), rand(sk), rand(sv), mask],
              label="bool mask", names=["attention"], rtol=1e-8, atol=1e-10)


def _tattn(q, k, v, causal, scale, mask=None):
    """torch sdpa with minitx's conventions (bottom-right causal; a query seeing no key gives 0)."""
    lq, lk = q.shape[-2], k.shape[-2]
    allowed = mask if mask is not None else torch.ones(lq, lk, dtype=torch.bool)
    if causal:
        allowed = allowed & torch.ones(lq, lk, dtype=torch.bool).tril(lk - lq)
    sees = allowed.any(-1, keepdim=True)
    out = tF.scaled_dot_product_attention(q, k, v, attn_mask=allowed | ~sees, scale=scale)
    return torch.where(sees, out, 0.0)


# ---------------------------------------------------------------- convolution and pooling
@family
def convs():
    for d in (1, 2, 3):
        conv, tconv = getattr(F, f"conv{d}d"), getattr(tF, f"conv{d}d")
        convT, tconvT = getattr(F, f"conv_transpose{d}d"), getattr(tF, f"conv_transpose{d}d")
        sp = (4,) * d
        kk = (2,) * d
        for xs, ws, groups in [((0, 2) + sp, (3, 2) + kk, 1), ((2, 0) + sp, (3, 0) + kk, 1), ((2, 2) + sp, (0, 2) + kk, 1),
                               ((2, 2) + (0,) * d, (3, 2) + kk, 1), ((2, 2) + (1,) * d, (3, 2) + kk, 1),
                               ((2, 4) + sp, (0, 2) + kk, 2), ((2, 2) + sp, (3, 2) + kk, 1)]:
            b = rand(ws[:1])
            check(f"conv{d}d", lambda x, w, b, g=groups: conv(x, w, b, groups=g), lambda x, w, b, g=groups: tconv(x, w, b, groups=g),
                  [rand(xs), rand(ws), b], label=f"groups={groups}", rtol=1e-8, atol=1e-10)
            check(f"conv{d}d", lambda x, w, b, g=groups: conv(x, w, b, padding=1, groups=g),
                  lambda x, w, b, g=groups: tconv(x, w, b, padding=1, groups=g),
                  [rand(xs), rand(ws), b], label=f"padding=1, groups={groups}", rtol=1e-8, atol=1e-10)
        for xs, ws in [((0, 2) + sp, (2, 3) + kk), ((2, 0) + sp, (0, 3) + kk), ((2, 2) + sp, (2, 0) + kk),
                       ((2, 2) + (0,) * d, (2, 3) + kk), ((2, 2) + sp, (2, 3) + kk)]:
            check(f"conv_transpose{d}d", lambda x, w, b: convT(x, w, b, stride=2), lambda x, w, b: tconvT(x, w, b, stride=2),
                  [rand(xs), rand(ws), rand(ws[1:2])], rtol=1e-8, atol=1e-10, names=["conv_transpose", "conv"])
        mp, tmp = getattr(F, f"max_pool{d}d"), getattr(tF, f"max_pool{d}d")
        ap, tap = getattr(F, f"avg_pool{d}d"), getattr(tF, f"avg_pool{d}d")
        for xs in [(0, 2) + sp, (2, 0) + sp, (2, 2) + (0,) * d, (2, 2) + (1,) * d, (2,) + sp, (0,) + sp, (2, 2) + sp]:
            for kw in [dict(), dict(padding=1), dict(ceil_mode=True)]:
                check(f"max_pool{d}d", lambda x, kw=kw: mp(x, 2, **kw), lambda x, kw=kw: tmp(x, 2, **kw), [rand(xs)],
                      label=str(kw), names=["max_pool"])
                check(f"avg_pool{d}d", lambda x, kw=kw: ap(x, 2, **kw), lambda x, kw=kw: tap(x, 2, **kw), [rand(xs)],
                      label=str(kw), names=["avg_pool"])
            check(f"max_pool{d}d", lambda x: mp(x, 2, return_indices=True), lambda x: tuple(tmp(x, 2, return_indices=True)),
                  [rand(xs)], label="return_indices", names=["max_pool"])


@family
def resample():
    for xs in [(0, 2, 4), (2, 0, 4), (2, 2, 0), (0, 2, 4, 4), (2, 0, 4, 4), (2, 2, 0, 4), (2, 2, 4), (2, 2, 4, 4)]:
        for mode in ("nearest", "linear", "bilinear"):
            if (mode == "linear") != (len(xs) == 3) and mode != "nearest":
                continue
            for kw in [dict(scale_factor=2), dict(size=(3,) * (len(xs) - 2))]:
                ac = dict(align_corners=False) if mode != "nearest" else {}
                check("interpolate", lambda x, kw=kw, m=mode, ac=ac: F.interpolate(x, mode=m, **kw, **ac),
                      lambda x, kw=kw, m=mode, ac=ac: tF.interpolate(x, mode=m, **kw, **ac), [rand(xs)],
                      label=f"{mode}, {kw}", rtol=1e-8, atol=1e-10)
    for d in (1, 2):
        for xs in [(0, 2) + (4,) * d, (2, 0) + (4,) * d, (2, 2) + (4,) * d]:
            tp = getattr(tF, f"max_pool{d}d")
            try:
                t_out, t_idx = tp(torch.tensor(rand(xs)), 2, return_indices=True)
            except RuntimeError:
                mo, mi = getattr(F, f"max_pool{d}d")(minitx.tensor(rand(xs)), 2, return_indices=True)
                t_out, t_idx = torch.tensor(mo.numpy()), torch.tensor(mi.numpy())
            check(f"max_unpool{d}d", lambda x, i: getattr(F, f"max_unpool{d}d")(x, i, 2),
                  lambda x, i: getattr(tF, f"max_unpool{d}d")(x, i, 2), [t_out.numpy(), t_idx.numpy()],
                  names=["max_unpool"])


# ---------------------------------------------------------------- secondary: NaN / inf at a small shape
EDGE = np.array([[1.0, np.nan, 2.0, -np.inf], [np.inf, 0.0, -1.0, 3.0], [0.5, 0.5, -2.0, 0.0]])


@family
def edges():
    for name, (tfn, lo, hi) in UNARY.items():
        check(name, getattr(F, name), tfn, [EDGE.copy()], label="nan/inf")
    for axis in (0, 1):
        for name, tfn in [("cumsum", torch.cumsum), ("cumprod", torch.cumprod), ("logcumsumexp", torch.logcumsumexp)]:
            check(name, lambda x, n=name, a=axis: getattr(F, n)(x, a), lambda x, f=tfn, a=axis: f(x, a), [EDGE.copy()],
                  label=f"nan/inf, axis={axis}")
        for name in ("cummax", "cummin"):
            check(name, lambda x, n=name, a=axis: getattr(F, n)(x, a), lambda x, n=name, a=axis: tuple(getattr(torch, n)(x, a)),
                  [EDGE.copy()], label=f"nan/inf, axis={axis}")
        for desc in (False, True):
            check("sort", lambda x, a=axis, d=desc: F.sort(x, a, d),
                  lambda x, a=axis, d=desc: tuple(torch.sort(x, dim=a, descending=d, stable=True)), [EDGE.copy()],
                  label=f"nan/inf, axis={axis}, descending={desc}")
        for lg in (True, False):
            check("topk", lambda x, a=axis, lg=lg: F.topk(x, 2, a, lg),
                  lambda x, a=axis, lg=lg: tuple(torch.topk(x, 2, dim=a, largest=lg)), [EDGE.copy()],
                  label=f"nan/inf, k=2, axis={axis}, largest={lg}")
        for name in ("argmax", "argmin"):
            check(name, lambda x, n=name, a=axis: getattr(F, n)(x, axis=a), lambda x, n=name, a=axis: getattr(torch, n)(x, dim=a),
                  [EDGE.copy()], grad=False, label=f"nan/inf, axis={axis}")
        for name, tfn in [("sum", torch.sum), ("mean", torch.mean), ("prod", torch.prod)]:
            check(name, lambda x, n=name, a=axis: getattr(F, n)(x, axis=a), lambda x, f=tfn, a=axis: f(x, a),
                  [EDGE.copy()], label=f"nan/inf, axis={axis}")
        for name, tfn in [("var", torch.var), ("std", torch.std)]:
            check(name, lambda x, n=name, a=axis: getattr(F, n)(x, axis=a, ddof=1),
                  lambda x, f=tfn, a=axis: f(x, dim=a, correction=1), [EDGE.copy()], label=f"nan/inf, axis={axis}")
        for name, tfn in [("max", torch.amax), ("min", torch.amin)]:
            check(name, lambda x, n=name, a=axis: getattr(F, n)(x, axis=a), lambda x, f=tfn, a=axis: f(x, a),
                  [EDGE.copy()], label=f"nan/inf, axis={axis}")
    zeros = np.array([[0.0, 2.0, 0.0], [0.0, 3.0, 4.0], [1.0, 2.0, 3.0]])
    for axis in (None, 0, 1):
        check("prod", lambda x, a=axis: F.prod(x, axis=a), lambda x, a=axis: torch.prod(x) if a is None else torch.prod(x, a),
              [zeros.copy()], label=f"zeros, axis={axis}")
    check("cumprod", lambda x: F.cumprod(x, 1), lambda x: torch.cumprod(x, 1), [zeros.copy()], label="zeros")
    check("clip", lambda x: F.clip(x, -1.0, 1.0), lambda x: torch.clamp(x, -1.0, 1.0), [EDGE.copy()], label="nan/inf")
    check("binary_cross_entropy", F.binary_cross_entropy, tF.binary_cross_entropy,
          [np.array([0.0, 1.0, 0.5, 1e-300]), NoGrad(np.array([1.0, 0.0, 0.5, 1.0]))], label="p at 0 and 1")
    check("binary_cross_entropy_with_logits", F.binary_cross_entropy_with_logits, tF.binary_cross_entropy_with_logits,
          [np.array([-np.inf, np.inf, 800.0, -800.0, 0.0]), NoGrad(np.array([1.0, 0.0, 0.0, 1.0, 0.5]))], label="inf logits")
    check("softplus", lambda x: F.softplus(x, beta=2.0, threshold=5.0), lambda x: tF.softplus(x, beta=2.0, threshold=5.0),
          [np.array([-1000.0, 2.4, 2.6, 1000.0, np.nan])], label="beta=2, threshold=5")
    for red in ("amax", "amin", "prod", "mean"):
        check("scatter_reduce", lambda x, i, s, r=red: F.scatter_reduce(x, 0, i, s, r),
              lambda x, i, s, r=red: torch.scatter_reduce(x, 0, i, s, r), [np.array([1.0, np.nan, 0.0]),
                                                                             np.array([0, 0, 1, 2]),
                                                                             np.array([np.nan, 2.0, np.inf, 0.0])],
              label=f"nan/inf, {red}")


if __name__ == "__main__":
    chosen = sys.argv[1:] or list(FAMILIES)
    for name in chosen:
        FAMILIES[name]()
    lines = report()
    for line in lines:
        print(line)
    print(f"# {STATS['calls']} calls over {len(STATS['ops'])} ops: {sorted(STATS['ops'])}", file=sys.stderr)
