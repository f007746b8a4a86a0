"""float16 and bfloat16 sweep of minitx.functional and the Tensor operators against PyTorch (CPU).

PYTHONPATH=$PWD python results/2026-11-26n-16bit-sweep/scripts/sweep.py [family ...]   -> prints findings, tags:
  a  both succeed and differ: result or gradient dtype, shape, NaN/inf where the other is finite,
     values or gradients further apart than below
  bc PyTorch succeeds, minitx raises an error that does not name the op
  c  minitx raises an error that does not name the op (PyTorch raises too)
  u  values one unit in the last place apart where the op is expected bit for bit (PyTorch's CPU
     kernel computes in float32 and rounds once)
  n  values of an op PyTorch computes in another order (LOOSE: sums, matmul, norms, softmax, losses)
     more than one unit apart, within 8 units of the array's largest magnitude
  g  gradients more than one unit apart, within 8 units of the array's largest magnitude
     (PyTorch's autograd formulas round to 16 bits at each step)
  z  the same values but for the sign of a zero
  b  PyTorch succeeds, minitx refuses, naming the op
  w  a NumPy RuntimeWarning leaks out of minitx
  d  minitx succeeds where PyTorch raises
Values: each op on both dtypes, on ordinary values and on an edge vector holding 0, -0, +-1,
the dtype's largest finite value and smallest subnormal (or smallest normal, bfloat16), inf,
-inf and NaN; binary ops and operators also with Python numbers beside the tensor.
"""
import operator as opr
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # harness.py beside it
from harness import F, Low, RESULTS, RNG, STATS, check, minitx, report  # noqa: E402

tF = torch.nn.functional
DTYPES = ("float16", "bfloat16")
BIG = {"float16": 65504.0, "bfloat16": 3.3895e38}
TINY = {"float16": 6e-8, "bfloat16": 1e-38}
# a number the dtype cannot hold: it rounds to inf, or to 0
NOT_HELD = {"float16": [1e6, 1e-8], "bfloat16": [3.4e38, 1e-42]}
FAMILIES = {}
# ops whose PyTorch CPU kernel adds or rounds in another order (sums, products of matrices, norms):
# values compared within one unit in the last place, not bit for bit
LOOSE = 1


def family(fn):
    FAMILIES[fn.__name__] = fn
    return fn


def edge(dt):
    b, t = BIG[dt], TINY[dt]
    return np.array([0.0, -0.0, 1.0, -1.5, b, -b, t, -t, np.inf, -np.inf, np.nan, 3.0, 0.3, 1e-4])


def ordinary(shape, lo=None, hi=None):
    if lo is not None:
        return RNG.uniform(lo, hi, size=shape)
    return RNG.standard_normal(shape)


def numbers(dt):
    return [2.5, 0.3, 3, 0.0, -0.0, BIG[dt], TINY[dt], float("inf"), float("nan")] + NOT_HELD[dt]


# ---------------------------------------------------------------- elementwise
UNARY = {
    "abs": (torch.abs, None, None), "neg": (torch.neg, None, None), "exp": (torch.exp, None, None),
    "log": (torch.log, 0.1, 3), "sqrt": (torch.sqrt, 0.1, 3), "sin": (torch.sin, None, None),
    "cos": (torch.cos, None, None), "tan": (torch.tan, -1, 1), "asin": (torch.asin, -0.9, 0.9),
    "acos": (torch.acos, -0.9, 0.9), "atan": (torch.atan, None, None), "sinh": (torch.sinh, None, None),
    "cosh": (torch.cosh, None, None), "tanh": (torch.tanh, None, None), "asinh": (torch.asinh, None, None),
    "acosh": (torch.acosh, 1.1, 3), "atanh": (torch.atanh, -0.9, 0.9), "erf": (torch.erf, None, None),
    "sign": (torch.sign, None, None), "floor": (torch.floor, -5, 5), "ceil": (torch.ceil, -5, 5),
    "round": (torch.round, -5, 5), "trunc": (torch.trunc, -5, 5), "log2": (torch.log2, 0.1, 3),
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
    for dt in DTYPES:
        for name, (tfn, lo, hi) in UNARY.items():
            check(name, getattr(F, name), tfn, [Low(ordinary((3, 4), lo, hi), dt)], label="ordinary")
            check(name, getattr(F, name), tfn, [Low(edge(dt), dt)], label="edge")
            check(name, lambda x, n=name: getattr(x, n)() if hasattr(x, n) else getattr(F, n)(x), tfn,
                  [Low(ordinary((5,), 4, 12), dt)], label="large: 4 to 12")
        for name, tfn in PREDICATES.items():
            check(name, getattr(F, name), tfn, [Low(edge(dt), dt)], grad=False, label="edge")
        for vals, lab in ((edge(dt), "edge"), (ordinary((3, 4)) * 10, "ordinary")):
            check("round", lambda x: F.round(x, decimals=2), lambda x: torch.round(x, decimals=2), [Low(vals, dt)],
                  label=lab + ", decimals=2")
            check("gelu", lambda x: F.gelu(x, approximate="tanh"), lambda x: tF.gelu(x, approximate="tanh"),
                  [Low(vals, dt)], label=lab + ", tanh")
            check("clip", lambda x: F.clip(x, -0.5, 0.3), lambda x: torch.clamp(x, -0.5, 0.3), [Low(vals, dt)],
                  label=lab + ", -0.5, 0.3")
            check("softplus", lambda x: F.softplus(x, beta=2.0, threshold=5.0),
                  lambda x: tF.softplus(x, beta=2.0, threshold=5.0), [Low(vals, dt)], label=lab + ", beta=2")
            check("leaky_relu", lambda x: F.leaky_relu(x, 0.3), lambda x: tF.leaky_relu(x, 0.3), [Low(vals, dt)],
                  label=lab + ", 0.3")
            check("elu", lambda x: F.elu(x, 0.7), lambda x: tF.elu(x, 0.7), [Low(vals, dt)], label=lab + ", alpha=0.7")
            check("hardtanh", lambda x: F.hardtanh(x, -0.3, 2.5), lambda x: tF.hardtanh(x, -0.3, 2.5),
                  [Low(vals, dt)], label=lab + ", -0.3, 2.5")
            for to in ("float32", "float64", "float16", "bfloat16", "int32", "bool"):
                check("astype", lambda x, to=to: F.astype(x, to), lambda x, to=to: x.to(getattr(torch, to)),
                      [Low(vals, dt)], label=f"{lab}, to {to}", grad=to.startswith(("float", "bfloat")))
            for p in (2.0, 3, 0.5, -1, 2.5, -0.5):
                check("pow", lambda x, p=p: F.pow(x, p), lambda x, p=p: torch.pow(x, p), [Low(vals, dt)],
                      label=f"{lab}, x ** {p}")
                check("pow", lambda x, p=p: p ** x, lambda x, p=p: p ** x, [Low(vals, dt)], label=f"{lab}, {p} ** x")


BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "pow": torch.pow,
    "maximum": torch.maximum, "minimum": torch.minimum, "atan2": torch.atan2, "hypot": torch.hypot,
    "copysign": torch.copysign, "floor_divide": torch.floor_divide, "remainder": torch.remainder,
    "fmod": torch.fmod,
}
COMPARE = {"equal": torch.eq, "not_equal": torch.ne, "less": torch.lt, "less_equal": torch.le,
           "greater": torch.gt, "greater_equal": torch.ge, "isclose": torch.isclose}


@family
def binary():
    for dt in DTYPES:
        e = edge(dt)
        pairs = [(Low(ordinary((2, 3)), dt), Low(ordinary((3,), 0.5, 2.0), dt), "ordinary, broadcast"),
                 (Low(e[:, None], dt), Low(e[None, :], dt), "edge x edge")]
        for a, b, lab in pairs:
            for name, tfn in BINARY.items():
                check(name, getattr(F, name), tfn, [a, b], label=lab, grad=name != "floor_divide")
            for name, tfn in COMPARE.items():
                check(name, getattr(F, name), tfn, [a, b], grad=False, label=lab)
            check("allclose", F.allclose, torch.allclose, [a, b], grad=False, label=lab)
            cond = RNG.random(np.broadcast_shapes(a.a.shape, b.a.shape)) < 0.5
            check("where", F.where, torch.where, [cond, a, b], label=lab)
        for name in ("add", "sub", "mul", "div"):  # the big values, one step past the limit
            b = BIG[dt]
            check(name, getattr(F, name), BINARY[name], [Low([b, -b, b, 0.5 * b], dt), Low([b, b, 2.0, 3.0], dt)],
                  label="at the limit")


OPS = {"+": opr.add, "-": opr.sub, "*": opr.mul, "/": opr.truediv, "//": opr.floordiv, "%": opr.mod,
       "**": opr.pow, "==": opr.eq, "!=": opr.ne, "<": opr.lt, "<=": opr.le, ">": opr.gt, ">=": opr.ge}
WITH_NUMBER = {  # F function, torch function taking a 0-d tensor in the number's place
    "maximum": torch.maximum, "minimum": torch.minimum, "atan2": torch.atan2, "hypot": torch.hypot,
    "copysign": torch.copysign, "fmod": torch.fmod, "remainder": torch.remainder,
}


@family
def numbers_beside():
    for dt in DTYPES:
        x = Low(edge(dt), dt)
        for n in numbers(dt):
            for sym, f in OPS.items():
                grad = sym not in ("//", "%") and sym in "+-*/**"
                if sym == "**" and isinstance(n, float) and abs(n) in (BIG[dt],) + tuple(NOT_HELD[dt][:1]):
                    pass
                check(f"x {sym} n", lambda x, f=f, n=n: f(x, n), lambda x, f=f, n=n: f(x, n), [x], label=f"n={n!r}",
                      grad=grad, names=["pow", sym])
                check(f"n {sym} x", lambda x, f=f, n=n: f(n, x), lambda x, f=f, n=n: f(n, x), [x], label=f"n={n!r}",
                      grad=grad, names=["pow", sym])
            for name, tfn in WITH_NUMBER.items():
                check(name, lambda x, nm=name, n=n: getattr(F, nm)(x, n),
                      lambda x, t=tfn, n=n: t(x, torch.tensor(n, dtype=torch.float64)), [x], label=f"n={n!r}")
            check("clip", lambda x, n=n: F.clip(x, min=n), lambda x, n=n: torch.clamp(x, min=n), [x], label=f"min={n!r}")
            check("clip", lambda x, n=n: F.clip(x, max=n), lambda x, n=n: torch.clamp(x, max=n), [x], label=f"max={n!r}")
            m = np.arange(x.a.size) % 3 == 0
            check("masked_fill", lambda x, m, n=n: F.masked_fill(x, m, n), lambda x, m, n=n: x.masked_fill(m, n),
                  [x, m], label=f"value={n!r}")
            check("where", lambda m, x, n=n: F.where(m, x, n), lambda m, x, n=n: torch.where(m, x, n), [m, x],
                  label=f"b={n!r}")
            check("pad", lambda x, n=n: F.pad(x, 1, n), lambda x, n=n: tF.pad(x, (1, 1), value=n), [x],
                  label=f"value={n!r}")
            check("isclose", lambda x, n=n: F.isclose(x, n), lambda x, n=n: torch.isclose(x, torch.tensor(n).to(x.dtype)),
                  [x], grad=False, label=f"n={n!r}")
        # unary operators and augmented forms
        check("-x", lambda x: -x, lambda x: -x, [x])
        check("abs(x)", lambda x: abs(x), lambda x: abs(x), [x])
        for sym, f in (("+=", opr.iadd), ("-=", opr.isub), ("*=", opr.imul), ("/=", opr.itruediv)):
            for n in (2.5, BIG[dt], NOT_HELD[dt][0], NOT_HELD[dt][1]):
                def aug(x, f=f, n=n):
                    y = x.detach().clone() if isinstance(x, torch.Tensor) else x.detach() * 1
                    return f(y, n)
                check(f"x {sym} n", aug, aug, [x], grad=False, label=f"n={n!r}", names=[sym])


@family
def promotion():
    for dt in DTYPES:
        a = Low(ordinary((2, 3)), dt)
        other = "bfloat16" if dt == "float16" else "float16"
        cases = [(Low(ordinary((3,)), other), "the other 16-bit dtype"),
                 (ordinary((3,)).astype(np.float32), "float32 tensor"),
                 (np.array(1.5, dtype=np.float32), "0-d float32"), (np.array(1.5), "0-d float64"),
                 (np.array([1, 2, 3]), "int64 tensor"), (np.array(2), "0-d int64"),
                 (np.array([True, False, True]), "bool tensor"), (Low(1.5, dt), f"0-d {dt}")]
        for b, lab in cases:
            for sym in ("+", "*", "/", "**", "<"):
                check(f"x {sym} y", OPS[sym], OPS[sym], [a, b], label=lab, grad=sym != "<", names=[sym, "pow"])
            check("maximum", F.maximum, torch.maximum, [a, b], label=lab)
            check("where", lambda x, y: F.where(x > 0, x, y), lambda x, y: torch.where(x > 0, x, y), [a, b], label=lab)
        check("matmul", F.matmul, torch.matmul, [a, ordinary((3, 2)).astype(np.float32)], label="with float32")
        check("x @ y", opr.matmul, opr.matmul, [a, Low(ordinary((3, 2)), dt)], tol=LOOSE, names=["matmul"])


# ---------------------------------------------------------------- reductions and scans
@family
def reductions():
    for dt in DTYPES:
        b = BIG[dt]
        inputs = [(Low(ordinary((3, 4)), dt), "ordinary"), (Low(edge(dt).reshape(2, 7), dt), "edge"),
                  (Low([[b, b, -b, 1.0], [b / 2, b / 2, 1.0, 1.0]], dt), "sums past the limit"),
                  (Low(np.full((2, 300), 1.0) + RNG.random((2, 300)), dt), "300 values")]
        for x, lab in inputs:
            for axis in (None, 0, 1):
                for name, tfn in [("sum", torch.sum), ("mean", torch.mean), ("max", torch.amax), ("min", torch.amin),
                                  ("logsumexp", torch.logsumexp)]:
                    d = tuple(range(2)) if axis is None else axis
                    check(name, lambda x, n=name, a=axis: getattr(F, n)(x, axis=a),
                          lambda x, f=tfn, d=d: f(x, dim=d), [x], label=f"{lab}, axis={axis}", tol=LOOSE)
                for ddof in (0, 1):
                    for name, tfn in [("var", torch.var), ("std", torch.std)]:
                        d = tuple(range(2)) if axis is None else axis
                        check(name, lambda x, n=name, a=axis, dd=ddof: getattr(F, n)(x, axis=a, ddof=dd),
                              lambda x, f=tfn, d=d, dd=ddof: f(x, dim=d, correction=dd), [x],
                              label=f"{lab}, axis={axis}, ddof={ddof}", tol=LOOSE)
                check("prod", lambda x, a=axis: F.prod(x, axis=a),
                      lambda x, a=axis: torch.prod(x) if a is None else torch.prod(x, a), [x],
                      label=f"{lab}, axis={axis}", tol=LOOSE)
                for name in ("argmax", "argmin"):
                    check(name, lambda x, n=name, a=axis: getattr(F, n)(x, axis=a),
                          lambda x, n=name, a=axis: getattr(torch, n)(x, dim=a), [x], grad=False,
                          label=f"{lab}, axis={axis}")


@family
def scans():
    for dt in DTYPES:
        b = BIG[dt]
        for x, lab in [(Low(ordinary((3, 5)), dt), "ordinary"), (Low(edge(dt).reshape(2, 7), dt), "edge"),
                       (Low([[b, b, -b, 1.0, 2.0], [b / 2, b / 2, -b, 1.0, 3.0]], dt), "past the limit")]:
            for axis in (0, 1):
                la = f"{lab}, axis={axis}"
                check("cumsum", lambda x, a=axis: F.cumsum(x, a), lambda x, a=axis: torch.cumsum(x, a), [x], label=la,
                      tol=LOOSE)
                check("cumprod", lambda x, a=axis: F.cumprod(x, a), lambda x, a=axis: torch.cumprod(x, a), [x],
                      label=la, tol=LOOSE)
                check("logcumsumexp", lambda x, a=axis: F.logcumsumexp(x, a),
                      lambda x, a=axis: torch.logcumsumexp(x, a), [x], label=la, tol=LOOSE)
                for name in ("cummax", "cummin"):
                    check(name, lambda x, n=name, a=axis: F.__dict__[n](x, a),
                          lambda x, n=name, a=axis: tuple(getattr(torch, n)(x, a)), [x], label=la)
                for desc in (False, True):
                    check("sort", lambda x, a=axis, d=desc: F.sort(x, a, d),
                          lambda x, a=axis, d=desc: tuple(torch.sort(x, dim=a, descending=d, stable=True)), [x],
                          label=la + f", descending={desc}")
                check("argsort", lambda x, a=axis: F.argsort(x, a),
                      lambda x, a=axis: torch.argsort(x, dim=a, stable=True), [x], label=la, grad=False)
                for lg in (True, False):
                    check("topk", lambda x, a=axis, lg=lg: F.topk(x, 2, a, lg),
                          lambda x, a=axis, lg=lg: tuple(torch.topk(x, 2, dim=a, largest=lg)), [x],
                          label=la + f", k=2, largest={lg}")


# ---------------------------------------------------------------- shape, joins, indexing
@family
def shape():
    for dt in DTYPES:
        x = Low(np.concatenate([edge(dt), ordinary(10)]).reshape(2, 3, 4), dt)
        y = Low(ordinary((2, 3, 4)), dt)
        calls = {
            "reshape": (lambda x: F.reshape(x, (6, 4)), lambda x: x.reshape(6, 4)),
            "transpose": (lambda x: F.transpose(x, (2, 0, 1)), lambda x: x.permute(2, 0, 1)),
            "permute": (lambda x: F.permute(x, (1, 0, 2)), lambda x: x.permute(1, 0, 2)),
            "swapaxes": (lambda x: F.swapaxes(x, 0, 2), lambda x: x.swapaxes(0, 2)),
            "broadcast_to": (lambda x: F.broadcast_to(x, (2, 2, 3, 4)), lambda x: x.broadcast_to(2, 2, 3, 4)),
            "squeeze": (lambda x: F.squeeze(F.unsqueeze(x, 1), 1), lambda x: x.unsqueeze(1).squeeze(1)),
            "unsqueeze": (lambda x: F.unsqueeze(x, -1), lambda x: x.unsqueeze(-1)),
            "flip": (lambda x: F.flip(x, 1), lambda x: torch.flip(x, (1,))),
            "roll": (lambda x: F.roll(x, 1, 2), lambda x: torch.roll(x, 1, 2)),
            "repeat": (lambda x: F.repeat(x, 2, 1), lambda x: torch.repeat_interleave(x, 2, 1)),
            "tile": (lambda x: F.tile(x, (1, 2, 1)), lambda x: torch.tile(x, (1, 2, 1))),
            "split": (lambda x: F.split(x, 2, 2), lambda x: torch.tensor_split(x, 2, 2)),
            "pad": (lambda x: F.pad(x, ((0, 0), (0, 0), (1, 2)), 0.5), lambda x: tF.pad(x, (1, 2), value=0.5)),
            "tril": (lambda x: F.tril(x, 0), lambda x: torch.tril(x, 0)),
            "triu": (lambda x: F.triu(x, 1), lambda x: torch.triu(x, 1)),
        }
        for name, (mf, tf) in calls.items():
            check(name, mf, tf, [x], label="edge")
        for mode in ("reflect", "replicate"):
            check("pad", lambda x, m=mode: F.pad(x, ((0, 0), (0, 0), (2, 1)), mode=m),
                  lambda x, m=mode: tF.pad(x, (2, 1), mode=m), [x], label=mode)
        check("concatenate", lambda a, b: F.concatenate([a, b], 1), lambda a, b: torch.cat([a, b], 1), [x, y])
        check("stack", lambda a, b: F.stack([a, b], 0), lambda a, b: torch.stack([a, b], 0), [x, y])
        other = "bfloat16" if dt == "float16" else "float16"
        check("concatenate", lambda a, b: F.concatenate([a, b], 1), lambda a, b: torch.cat([a, b], 1),
              [x, Low(ordinary((2, 3, 4)), other)], label="with the other 16-bit dtype")
        check("concatenate", lambda a, b: F.concatenate([a, b], 1), lambda a, b: torch.cat([a, b], 1),
              [x, ordinary((2, 3, 4)).astype(np.float32)], label="with float32")
        check("stack", lambda a, b: F.stack([a, b], 0), lambda a, b: torch.stack([a, b], 0),
              [x, ordinary((2, 3, 4)).astype(np.float32)], label="with float32")


@family
def indexing():
    for dt in DTYPES:
        x = Low(np.concatenate([edge(dt), ordinary(10)]).reshape(4, 6), dt)
        idx = np.asarray(RNG.integers(0, 4, size=(3, 6))).astype(np.int64)
        check("getitem", lambda x: x[1:3, ::2], lambda x: x[1:3, ::2], [x], label="slices")
        check("getitem", lambda x: x[np.array([0, 2, 2])], lambda x: x[torch.tensor([0, 2, 2])], [x],
              label="index array, repeated")
        check("getitem", lambda x: x[x > 0], lambda x: x[x > 0], [x], label="mask")
        check("gather", lambda x, i: F.gather(x, 0, i), lambda x, i: torch.gather(x, 0, i), [x, idx])
        src = Low(np.concatenate([edge(dt), ordinary(4)]).reshape(3, 6), dt)
        check("scatter_add", lambda x, i, s: F.scatter_add(x, 0, i, s), lambda x, i, s: torch.scatter_add(x, 0, i, s),
              [x, idx, src])
        b = BIG[dt]
        big = Low(np.full((3, 6), b / 2), dt)
        check("scatter_add", lambda x, i, s: F.scatter_add(x, 0, i, s), lambda x, i, s: torch.scatter_add(x, 0, i, s),
              [Low(np.full((4, 6), b / 2), dt), np.zeros((3, 6), dtype=np.int64), big], label="sums past the limit")
        for red in ("sum", "prod", "mean", "amax", "amin"):
            for inc in (True, False):
                check("scatter_reduce", lambda x, i, s, r=red, c=inc: F.scatter_reduce(x, 0, i, s, r, c),
                      lambda x, i, s, r=red, c=inc: torch.scatter_reduce(x, 0, i, s, r, include_self=c),
                      [Low(ordinary((4, 6)), dt), idx, Low(ordinary((3, 6)), dt)],
                      label=f"{red}, include_self={inc}", tol=LOOSE)
                check("scatter_reduce", lambda x, i, s, r=red, c=inc: F.scatter_reduce(x, 0, i, s, r, c),
                      lambda x, i, s, r=red, c=inc: torch.scatter_reduce(x, 0, i, s, r, include_self=c),
                      [Low(np.full((4, 6), b / 2), dt), np.zeros((3, 6), dtype=np.int64), big],
                      label=f"{red}, include_self={inc}, past the limit", tol=LOOSE)
        ids = np.array([[0, 3, 1], [3, 3, 2]])
        for pad in (None, 0):
            check("embedding", lambda i, w, p=pad: F.embedding(i, w, padding_idx=p),
                  lambda i, w, p=pad: tF.embedding(i, w, padding_idx=p), [ids, x], label=f"padding_idx={pad}")
        check("nonzero", F.nonzero, torch.nonzero, [x], grad=False)
        check("argwhere", F.argwhere, torch.argwhere, [x], grad=False, names=["argwhere", "nonzero"])
        m = RNG.random((4, 6)) < 0.5
        check("masked_select", F.masked_select, torch.masked_select, [x, m])
        check("one_hot", lambda i: F.one_hot(i, 4), lambda i: tF.one_hot(i, 4), [ids], grad=False)


# ---------------------------------------------------------------- linear algebra
@family
def linalg():
    for dt in DTYPES:
        b = BIG[dt]
        for sa, sb in [((2, 3), (3, 4)), ((3,), (3,)), ((2, 2, 3), (3, 5)), ((64, 64), (64, 8))]:
            check("matmul", F.matmul, torch.matmul, [Low(ordinary(sa), dt), Low(ordinary(sb), dt)], tol=LOOSE)
        check("matmul", F.matmul, torch.matmul, [Low([[b / 2, b / 2, -b / 2]], dt), Low([[1.0], [1.0], [1.0]], dt)],
              label="sums past the limit", tol=LOOSE)
        check("matmul", F.matmul, torch.matmul, [Low([[np.inf, 1.0, np.nan]], dt), Low([[0.0], [1.0], [1.0]], dt)],
              label="inf and nan", tol=LOOSE)
        check("linear", F.linear, tF.linear, [Low(ordinary((2, 3)), dt), Low(ordinary((4, 3)), dt),
                                             Low(ordinary((4,)), dt)], tol=LOOSE)
        check("linear", F.linear, tF.linear, [Low([[b / 2, b / 2, -b / 2]], dt), Low([[1.0, 1.0, 1.0]], dt),
                                             Low([1.0], dt)], label="sums past the limit", tol=LOOSE)
        for spec, shapes in [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij->j", [(3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
                             ("i,j->ij", [(3,), (4,)])]:
            check("einsum", lambda *xs, sp=spec: F.einsum(sp, *xs), lambda *xs, sp=spec: torch.einsum(sp, *xs),
                  [Low(ordinary(s), dt) for s in shapes], label=spec, tol=LOOSE)


# ---------------------------------------------------------------- softmax, norms, dropout, losses, attention
@family
def softmaxes():
    for dt in DTYPES:
        b = BIG[dt]
        for x, lab in [(Low(ordinary((3, 5)), dt), "ordinary"), (Low([[b, 0.0, -b, 1.0], [b, b, 1.0, 2.0]], dt), "big"),
                       (Low([[np.inf, 0.0, 1.0, 2.0], [-np.inf, 0.0, 1.0, 2.0]], dt), "inf")]:
            for axis in (0, -1):
                check("softmax", lambda x, a=axis: F.softmax(x, a), lambda x, a=axis: torch.softmax(x, a), [x],
                      label=f"{lab}, axis={axis}", tol=LOOSE)
                check("log_softmax", lambda x, a=axis: F.log_softmax(x, a), lambda x, a=axis: torch.log_softmax(x, a),
                      [x], label=f"{lab}, axis={axis}", tol=LOOSE)


@family
def norms():
    for dt in DTYPES:
        for x, lab in [(Low(ordinary((2, 3, 8)), dt), "ordinary"), (Low(ordinary((2, 3, 8)) * 300 + 1000, dt), "~1000"),
                       (Low(ordinary((2, 3, 8)) * 1e-3, dt), "~1e-3")]:
            d = (8,)
            for w in (False, True):
                args = [x] + ([Low(ordinary(d), dt), Low(ordinary(d), dt)] if w else [])
                check("layer_norm", lambda x, *wb: F.layer_norm(x, *wb), lambda x, *wb: tF.layer_norm(x, d, *wb), args,
                      label=lab + (", weight, bias" if w else ""), tol=LOOSE)
                args = [x] + ([Low(ordinary(d), dt)] if w else [])
                check("rms_norm", lambda x, *wb: F.rms_norm(x, d, *wb), lambda x, *wb: tF.rms_norm(x, d, *wb), args,
                      label=lab + (", weight" if w else ""), tol=LOOSE)
                c = (3,)
                args = [x] + ([Low(ordinary(c), dt), Low(ordinary(c), dt)] if w else [])
                check("group_norm", lambda x, *wb: F.group_norm(x, 3, *wb), lambda x, *wb: tF.group_norm(x, 3, *wb),
                      args, label=lab + (", weight, bias" if w else ""), tol=LOOSE)
            for training in (False, True):
                def mb(x, w, b, t=training):
                    rm, rv = minitx.zeros((3,), dtype=dt), minitx.ones((3,), dtype=dt)
                    return F.batch_norm(x, rm, rv, w, b, training=t)

                def tb(x, w, b, t=training):
                    rm, rv = torch.zeros(3, dtype=x.dtype), torch.ones(3, dtype=x.dtype)
                    return tF.batch_norm(x, rm, rv, w, b, training=t)
                check("batch_norm", mb, tb, [x, Low(ordinary((3,)), dt), Low(ordinary((3,)), dt)],
                      label=f"{lab}, training={training}", tol=LOOSE)


@family
def dropouts():
    for dt in DTYPES:
        x, r = Low(edge(dt), dt), Low(ordinary((14,)), dt)
        for p, training in [(0.0, True), (0.5, False)]:
            check("dropout", lambda x, p=p, t=training: F.dropout(x, p, t, seed=1),
                  lambda x, p=p, t=training: tF.dropout(x, p, t), [x], label=f"p={p}, training={training}")
            check("dropout_add", lambda x, r, p=p, t=training: F.dropout_add(x, r, p, t, seed=1),
                  lambda x, r, p=p, t=training: r + tF.dropout(x, p, t), [x, r], label=f"p={p}, training={training}")
        x2 = Low(ordinary((2, 3, 4)) * 3, dt)
        for act, tact in [("relu", torch.relu), ("identity", lambda u: u),
                          ("gelu_tanh", lambda u: tF.gelu(u, approximate="tanh"))]:
            check("bias_act_dropout", lambda x, b, a=act: F.bias_act_dropout(x, b, a, p=0.0),
                  lambda x, b, ta=tact: ta(x + b), [x2, Low(ordinary((4,)), dt)], label=act)
        check("dropout", lambda x: F.dropout(x, 0.5, True, seed=1), lambda x: tF.dropout(x, 0.5, True), [x],
              label="p=0.5, dtype only", compare_values=False, grad=False)


@family
def losses():
    for dt in DTYPES:
        b = BIG[dt]
        t = np.array([0, 2, 1, 3])
        for x, lab in [(Low(ordinary((4, 5)), dt), "ordinary"), (Low(ordinary((4, 5)) * 40, dt), "logits ~40"),
                       (Low([[b, 0, 0, 0, 0], [0, -b, 0, 0, 0], [1, 2, 3, 4, 5], [0, 0, 0, 1e4, 0]], dt), "big")]:
            for red in ("mean", "sum", "none"):
                for ls in (0.0, 0.1):
                    check("cross_entropy", lambda x, t, r=red, ls=ls: F.cross_entropy(x, t, reduction=r, label_smoothing=ls),
                          lambda x, t, r=red, ls=ls: tF.cross_entropy(x, t, reduction=r, label_smoothing=ls),
                          [x, t], label=f"{lab}, {red}, smoothing={ls}", tol=LOOSE)
                q = RNG.random((4, 5))
                q = Low(q / q.sum(-1, keepdims=True), dt, nograd=True)
                check("cross_entropy", lambda x, q, r=red: F.cross_entropy(x, q, reduction=r),
                      lambda x, q, r=red: tF.cross_entropy(x, q, reduction=r), [x, q],
                      label=f"{lab}, {red}, probability targets", tol=LOOSE)
                check("nll_loss", lambda x, t, r=red: F.nll_loss(x, t, reduction=r),
                      lambda x, t, r=red: tF.nll_loss(x, t, reduction=r), [x, t], label=f"{lab}, {red}", tol=LOOSE)
                check("nll_loss", lambda x, t, w, r=red: F.nll_loss(x, t, reduction=r, weight=w),
                      lambda x, t, w, r=red: tF.nll_loss(x, t, reduction=r, weight=w),
                      [x, t, Low(RNG.random(5), dt, nograd=True)], label=f"{lab}, {red}, weight", tol=LOOSE)
        for red in ("mean", "sum", "none"):
            p = Low(np.array([0.0, 1.0, 0.5, TINY[dt], 1 - 2 ** -8, 0.3]), dt)
            tg = Low(np.array([1.0, 0.0, 0.5, 1.0, 1.0, 0.7]), dt, nograd=True)
            check("binary_cross_entropy", lambda p, t, r=red: F.binary_cross_entropy(p, t, reduction=r),
                  lambda p, t, r=red: tF.binary_cross_entropy(p, t, reduction=r), [p, tg], label=red, tol=LOOSE)
            z = Low(np.array([-np.inf, np.inf, 800.0, -800.0, 0.0, 3.0]) if dt == "bfloat16" else
                    np.array([-np.inf, np.inf, 60000.0, -60000.0, 0.0, 3.0]), dt)
            check("binary_cross_entropy_with_logits",
                  lambda p, t, r=red: F.binary_cross_entropy_with_logits(p, t, reduction=r),
                  lambda p, t, r=red: tF.binary_cross_entropy_with_logits(p, t, reduction=r), [z, tg], label=red,
                  tol=LOOSE)
            check("binary_cross_entropy_with_logits",
                  lambda p, t, w, r=red: F.binary_cross_entropy_with_logits(p, t, reduction=r, pos_weight=w),
                  lambda p, t, w, r=red: tF.binary_cross_entropy_with_logits(p, t, reduction=r, pos_weight=w),
                  [Low(ordinary((6,)), dt), tg, Low(RNG.random(6) + 0.5, dt, nograd=True)], label=red + ", pos_weight",
                  tol=LOOSE)


@family
def attention():
    for dt in DTYPES:
        for scale, lab in ((None, "ordinary"), (30.0, "scores ~30x")):
            for causal in (False, True):
                check("scaled_dot_product_attention",
                      lambda q, k, v, c=causal, s=scale: F.scaled_dot_product_attention(q, k, v, causal=c, scale=s),
                      lambda q, k, v, c=causal, s=scale: tF.scaled_dot_product_attention(q, k, v, is_causal=c, scale=s),
                      [Low(ordinary((1, 2, 3, 4)), dt), Low(ordinary((1, 2, 3, 4)), dt), Low(ordinary((1, 2, 3, 4)), dt)],
                      label=f"{lab}, causal={causal}", names=["attention"], tol=LOOSE)
        mask = RNG.random((3, 3)) < 0.7
        mask[:, 0] = True
        check("scaled_dot_product_attention", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m),
              lambda q, k, v, m: tF.scaled_dot_product_attention(q, k, v, attn_mask=m),
              [Low(ordinary((1, 2, 3, 4)), dt), Low(ordinary((1, 2, 3, 4)), dt), Low(ordinary((1, 2, 3, 4)), dt), mask],
              label="bool mask", names=["attention"], tol=LOOSE)
        fmask = Low(np.where(mask, 0.0, -np.inf), dt, nograd=True)
        check("scaled_dot_product_attention", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m),
              lambda q, k, v, m: tF.scaled_dot_product_attention(q, k, v, attn_mask=m),
              [Low(ordinary((1, 2, 3, 4)), dt), Low(ordinary((1, 2, 3, 4)), dt), Low(ordinary((1, 2, 3, 4)), dt), fmask],
              label="float mask", names=["attention"], tol=LOOSE)


@family
def convs():
    for dt in DTYPES:
        for d in (1, 2, 3):
            conv, tconv = getattr(F, f"conv{d}d"), getattr(tF, f"conv{d}d")
            convT, tconvT = getattr(F, f"conv_transpose{d}d"), getattr(tF, f"conv_transpose{d}d")
            sp, kk = (4,) * d, (2,) * d
            check(f"conv{d}d", lambda x, w, b: conv(x, w, b, padding=1), lambda x, w, b: tconv(x, w, b, padding=1),
                  [Low(ordinary((2, 2) + sp), dt), Low(ordinary((3, 2) + kk), dt), Low(ordinary((3,)), dt)], tol=LOOSE,
                  names=["conv"])
            check(f"conv_transpose{d}d", lambda x, w, b: convT(x, w, b, stride=2),
                  lambda x, w, b: tconvT(x, w, b, stride=2),
                  [Low(ordinary((2, 2) + sp), dt), Low(ordinary((2, 3) + kk), dt), Low(ordinary((3,)), dt)], tol=LOOSE,
                  names=["conv"])
            mp, tmp = getattr(F, f"max_pool{d}d"), getattr(tF, f"max_pool{d}d")
            ap, tap = getattr(F, f"avg_pool{d}d"), getattr(tF, f"avg_pool{d}d")
            vals = np.resize(edge(dt), (2, 2) + sp)
            for x, lab in [(Low(ordinary((2, 2) + sp), dt), "ordinary"), (Low(vals, dt), "edge")]:
                for kw in [dict(), dict(padding=1), dict(ceil_mode=True)]:
                    check(f"max_pool{d}d", lambda x, kw=kw: mp(x, 2, **kw), lambda x, kw=kw: tmp(x, 2, **kw), [x],
                          label=f"{lab}, {kw}", names=["max_pool"])
                    check(f"avg_pool{d}d", lambda x, kw=kw: ap(x, 2, **kw), lambda x, kw=kw: tap(x, 2, **kw), [x],
                          label=f"{lab}, {kw}", names=["avg_pool"], tol=LOOSE)
            b = BIG[dt]
            check(f"avg_pool{d}d", lambda x: ap(x, 2), lambda x: tap(x, 2), [Low(np.full((1, 1) + sp, b), dt)],
                  label="at the limit", names=["avg_pool"], tol=LOOSE)


@family
def resample():
    for dt in DTYPES:
        for xs in [(2, 2, 4), (2, 2, 4, 4)]:
            for mode in ("nearest", "linear", "bilinear"):
                if mode != "nearest" and (mode == "linear") != (len(xs) == 3):
                    continue
                for kw in [dict(scale_factor=2), dict(size=(3,) * (len(xs) - 2))]:
                    ac = dict(align_corners=False) if mode != "nearest" else {}
                    check("interpolate", lambda x, kw=kw, m=mode, ac=ac: F.interpolate(x, mode=m, **kw, **ac),
                          lambda x, kw=kw, m=mode, ac=ac: tF.interpolate(x, mode=m, **kw, **ac),
                          [Low(ordinary(xs), dt)], label=f"{mode}, {kw}", tol=LOOSE)
        for d in (1, 2):
            xs = (2, 2) + (4,) * d
            t_out, t_idx = getattr(tF, f"max_pool{d}d")(torch.tensor(ordinary(xs)), 2, return_indices=True)
            check(f"max_unpool{d}d", lambda x, i: getattr(F, f"max_unpool{d}d")(x, i, 2),
                  lambda x, i: getattr(tF, f"max_unpool{d}d")(x, i, 2), [Low(t_out.numpy(), dt), t_idx.numpy()],
                  names=["max_unpool"])


if __name__ == "__main__":
    chosen = sys.argv[1:] or list(FAMILIES)
    for name in chosen:
        FAMILIES[name]()
    lines = report()
    for line in lines:
        print(line)
    counts = {}
    for t, *_ in RESULTS:
        counts[t] = counts.get(t, 0) + 1
    print(f"# {STATS['calls']} calls over {len(STATS['ops'])} ops; tags: "
          + ", ".join(f"{t} {counts.get(t, 0)}" for t in ("a", "bc", "c", "u", "n", "g", "z", "b", "w", "d")))
    print(f"# ops: {sorted(STATS['ops'])}")
