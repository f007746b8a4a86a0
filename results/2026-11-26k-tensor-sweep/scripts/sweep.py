"""Sweep of minitx.Tensor operators, methods, indexing and backward API against PyTorch.
PYTHONPATH=$PWD python results/2026-11-26k-tensor-sweep/scripts/sweep.py [section ...]"""
import os, sys, operator as op
import numpy as np
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import cmp, RESULTS, STATS, NG, Raw, RNG, report, minitx, F  # noqa

def r(*s, dtype=np.float64): return np.asarray(RNG.standard_normal(s)).astype(dtype)
def ri(*s, dtype=np.int64, lo=-5, hi=6): return np.asarray(RNG.integers(lo, hi, size=s)).astype(dtype)
def rp(*s): return np.asarray(RNG.uniform(0.5, 2.0, size=s))
def rb(*s): return np.asarray(RNG.random(s) < 0.5)
def nz(*s, dtype=np.int64):
    a = ri(*s, dtype=dtype); a[a == 0] = 3; return a

SECTIONS = {}
def section(f): SECTIONS[f.__name__] = f; return f

BIN = {"+": op.add, "-": op.sub, "*": op.mul, "/": op.truediv, "//": op.floordiv, "%": op.mod, "**": op.pow}
CMPS = {"==": op.eq, "!=": op.ne, "<": op.lt, "<=": op.le, ">": op.gt, ">=": op.ge}
BITS = {"&": op.and_, "|": op.or_, "^": op.xor, "<<": op.lshift, ">>": op.rshift}

@section
def operators():
    # float64 tensor with tensor (broadcast), Python scalars both sides, 0-d tensor
    for name, f in BIN.items():
        a, b = (rp(2, 3), rp(3)) if name in ("**", "//", "%", "/") else (r(2, 3), r(3))
        cmp(f"f64 {name} f64 bcast", f, [a, b])
        cmp(f"f64 {name} f64 0-d", f, [a, np.array(1.7)])
        cmp(f"0-d f64 {name} f64", f, [np.array(1.7), a])
        for s in (2, 2.5, True):
            cmp(f"f64 {name} {s!r}", lambda x, s=s: f(x, s), [a])
            cmp(f"{s!r} {name} f64 (reflected)", lambda x, s=s: f(s, x), [a])
        cmp(f"f64 {name} ndarray (raw, right)", f, [a, Raw(b)])
        cmp(f"ndarray (raw, left) {name} f64", f, [Raw(b), a])
        cmp(f"np.float64 scalar {name} f64", lambda x: f(np.float64(1.5), x), [a])
        cmp(f"f64 {name} np.float64 scalar", lambda x: f(x, np.float64(1.5)), [a])
        cmp(f"f32 {name} np.float64 scalar", lambda x: f(x, np.float64(1.5)), [rp(3).astype(np.float32)])
        cmp(f"np.int64 scalar {name} i64", lambda x: f(np.int64(2), x), [nz(3)])
    # ints and bools: dtype promotion
    I64, I32, U8, I8 = nz(2, 3), nz(2, 3, dtype=np.int32), ri(2, 3, lo=1, hi=9, dtype=np.uint8), nz(2, 3, dtype=np.int8)
    F32 = rp(2, 3).astype(np.float32)
    B = rb(2, 3)
    for name, f in BIN.items():
        for la, a in (("i64", I64), ("i32", I32), ("u8", U8), ("i8", I8), ("bool", B)):
            for lb, b in (("i64", I64), ("i32", I32), ("f32", F32), ("f64", rp(2, 3)), ("bool", B), ("u8", U8)):
                if name == "**" and lb in ("i64", "i32", "i8"):
                    b = np.abs(b)
                cmp(f"{la} {name} {lb}", f, [a, b], grad=False)
            for s in (2, -3, 2.5, True, 0):
                if name == "**" and s == -3: continue
                cmp(f"{la} {name} {s!r}", lambda x, s=s: f(x, s), [a], grad=False)
                cmp(f"{s!r} {name} {la}", lambda x, s=s: f(s, x), [np.abs(a) if name == "**" else a], grad=False)
        cmp(f"f32 {name} 2.5", lambda x: f(x, 2.5), [F32], grad=False)
        cmp(f"2.5 {name} f32", lambda x: f(2.5, x), [F32], grad=False)
    cmp("i64 ** -1 (negative int power)", lambda x: x ** -1, [I64], grad=False)
    cmp("i64 ** neg int tensor", lambda x, y: x ** y, [I64, -np.abs(I64)], grad=False)
    cmp("i64 // 0", lambda x: x // 0, [I64], grad=False)
    cmp("i64 % 0", lambda x: x % 0, [I64], grad=False)
    cmp("i64 / 0", lambda x: x / 0, [I64], grad=False)
    cmp("f64 // 0", lambda x: x // 0, [r(4)])
    cmp("f64 % 0", lambda x: x % 0, [r(4)])
    cmp("f64 % neg", lambda x: x % -1.5, [r(6)])
    cmp("neg % f64", lambda x: -1.5 % x, [rp(6)])
    cmp("i64 % neg", lambda x: x % -3, [I64], grad=False)
    cmp("i64 // neg", lambda x: x // -3, [I64], grad=False)
    cmp("f64 ** f64 with neg base", lambda x, y: x ** y, [r(5), np.array([2., 3., 0.5, 1., 0.])])
    cmp("0 ** 0 grad", lambda x, y: x ** y, [np.zeros(3), np.array([0., 1., 2.])])
    cmp("x ** 0 at x=0 grad", lambda x: x ** 0, [np.zeros(3)])
    cmp("x ** 0.5 at 0", lambda x: x ** 0.5, [np.zeros(3)])
    cmp("2 ** x grad", lambda x: 2 ** x, [r(4)])
    cmp("0 ** x grad", lambda x: 0 ** x, [rp(4)])
    cmp("-2 ** x", lambda x: (-2) ** x, [np.array([1., 2., 0.5])])
    cmp("x ** x", lambda x: x ** x, [rp(4)])
    cmp("x ** 0-d tensor", lambda x, p: x ** p, [rp(4), np.array(3.0)])
    cmp("x ** int tensor", lambda x, p: x ** p, [r(4), np.array([1, 2, 3, 0])])
    cmp("int tensor ** float tensor", lambda x, p: x ** p, [np.array([1, 2, 3, 4]), rp(4)])
    # unary
    for lab, a in (("f64", r(2, 3)), ("i64", I64), ("i8", I8), ("u8", U8), ("bool", B), ("0-d", np.array(-1.5))):
        cmp(f"-{lab}", lambda x: -x, [a])
        cmp(f"abs({lab})", lambda x: abs(x), [a])
        cmp(f"+{lab}", lambda x: +x, [a])
        cmp(f"~{lab}", lambda x: ~x, [a], grad=False)
    cmp("abs grad at 0", lambda x: abs(x), [np.array([0., -1., 2.])])
    # comparisons
    for name, f in CMPS.items():
        cmp(f"f64 {name} f64", f, [r(2, 3), r(3)], grad=False)
        cmp(f"f64 {name} 0.0", lambda x: f(x, 0.0), [r(3)], grad=False)
        cmp(f"0 {name} f64 (reflected)", lambda x: f(0, x), [r(3)], grad=False)
        cmp(f"i64 {name} 2.5", lambda x: f(x, 2.5), [I64], grad=False)
        cmp(f"i64 {name} f64", f, [I64, r(2, 3)], grad=False)
        cmp(f"bool {name} True", lambda x: f(x, True), [B], grad=False)
        cmp(f"bool {name} 2", lambda x: f(x, 2), [B], grad=False)
        cmp(f"f64 {name} nan", lambda x: f(x, float("nan")), [r(3)], grad=False)
        cmp(f"f64 {name} ndarray (raw, left)", lambda a, x: f(a, x), [Raw(r(3)), r(3)], grad=False)
        cmp(f"u8 {name} -1", lambda x: f(x, -1), [U8], grad=False)
        cmp(f"i8 {name} 1000", lambda x: f(x, 1000), [I8], grad=False)
        cmp(f"i64 {name} 2**70", lambda x: f(x, 2 ** 70), [I64], grad=False)
        cmp(f"f64 {name} None", lambda x: f(x, None), [r(3)], grad=False)
        cmp(f"f64 {name} 'a'", lambda x: f(x, "a"), [r(3)], grad=False)
    cmp("f64 == shape mismatch", lambda x, y: x == y, [r(3), r(4)], grad=False)
    cmp("x in t (contains)", lambda x: 0.5 in x, [np.array([0.5, 1.0])], grad=False)
    cmp("x in t (contains) absent", lambda x: 7 in x, [np.array([0.5, 1.0])], grad=False)
    # bitwise
    for name, f in BITS.items():
        for la, a in (("i64", I64), ("bool", B), ("u8", U8), ("i8", I8)):
            for lb, b in (("i64", np.abs(I64) % 4), ("bool", B), ("i32", np.abs(I32) % 4)):
                cmp(f"{la} {name} {lb}", f, [a, b], grad=False)
            cmp(f"{la} {name} 1", lambda x: f(x, 1), [a], grad=False)
            cmp(f"1 {name} {la}", lambda x: f(1, x), [np.abs(a) % 4 if la != "bool" else a], grad=False)
            cmp(f"{la} {name} True", lambda x: f(x, True), [a], grad=False)
        cmp(f"f64 {name} f64", f, [r(3), r(3)], grad=False)
        cmp(f"f64 {name} 1", lambda x: f(x, 1), [r(3)], grad=False)
    cmp("i64 << 64", lambda x: x << 64, [np.array([1, 2])], grad=False)
    cmp("i64 << -1", lambda x: x << -1, [np.array([1, 2])], grad=False)
    cmp("i64 >> 70", lambda x: x >> 70, [np.array([-8, 8])], grad=False)
    # matmul
    cmp("1d @ 1d", op.matmul, [r(3), r(3)])
    cmp("1d @ 2d", op.matmul, [r(3), r(3, 2)])
    cmp("2d @ 1d", op.matmul, [r(2, 3), r(3)])
    cmp("batched bcast @", op.matmul, [r(2, 1, 3, 4), r(5, 4, 2)])
    cmp("3d @ 1d", op.matmul, [r(2, 3, 4), r(4)])
    cmp("1d @ 3d", op.matmul, [r(3), r(2, 3, 4)])
    cmp("i64 @ i64", op.matmul, [ri(2, 3), ri(3, 2)], grad=False)
    cmp("i64 @ f64", op.matmul, [ri(2, 3), r(3, 2)], grad=False)
    cmp("f32 @ f64", op.matmul, [r(2, 3, dtype=np.float32), r(3, 2)], grad=False)
    cmp("ndarray(raw) @ t", op.matmul, [Raw(r(2, 3)), r(3, 2)])
    cmp("t @ ndarray(raw)", op.matmul, [r(2, 3), Raw(r(3, 2))])
    cmp("0-d @ 1d", op.matmul, [np.array(2.0), r(3)])
    cmp("@ shape mismatch", op.matmul, [r(2, 3), r(2, 3)])
    cmp("t @ list", lambda x: x @ [1.0, 2.0, 3.0], [r(2, 3)])
    cmp("t + list", lambda x: x + [1.0, 2.0, 3.0], [r(2, 3)])
    cmp("list + t", lambda x: [1.0, 2.0, 3.0] + x, [r(2, 3)])
    cmp("t + shape mismatch", op.add, [r(2, 3), r(2)])
    cmp("f32 + f64 tensor", op.add, [r(3, dtype=np.float32), r(3)])
    cmp("f16 + f32", op.add, [r(3, dtype=np.float16), r(3, dtype=np.float32)], grad=False)
    cmp("f32 + i64 0-d tensor", op.add, [r(3, dtype=np.float32), np.array(2)], grad=False)
    cmp("i64 + i32 0-d", op.add, [ri(3), np.array(2, dtype=np.int32)], grad=False)
    cmp("i8 + i64 0-d (deliberate numpy rule?)", op.add, [ri(3, dtype=np.int8), np.array(2)], grad=False)
    cmp("i8 + 1000 (doc: OverflowError)", lambda x: x + 1000, [ri(3, dtype=np.int8)], grad=False)
    cmp("i8 + 100 wraps?", lambda x: x + 100, [np.array([100, -100], dtype=np.int8)], grad=False)
    cmp("bool + bool", op.add, [B, B], grad=False)
    cmp("bool - bool", op.sub, [B, B], grad=False)
    cmp("bool * 2.5", lambda x: x * 2.5, [B], grad=False)

@section
def inplace():
    ops_ = {"+=": op.iadd, "-=": op.isub, "*=": op.imul, "/=": op.itruediv, "//=": op.ifloordiv,
            "%=": op.imod, "**=": op.ipow, "@=": op.imatmul, "&=": op.iand, "|=": op.ior, "^=": op.ixor}
    for name, f in ops_.items():
        if name in ("&=", "|=", "^="):
            cmp(f"i64 {name} i64 (alias sees it?)", lambda x, y, f=f: (lambda a: (f(x, y), a)[1])(x), [ri(3), ri(3)], grad=False)
            continue
        if name == "@=":
            cmp("f64 @= f64 leaf no grad", lambda x, y: f(x, y), [NG(r(3, 3)), r(3, 3)], grad=False)
            continue
        a = rp(2, 3)
        # alias: does the other name see the update?
        def alias(x, y, f=f):
            al = x
            f(x, y)
            return al
        cmp(f"{name} no-grad leaf: alias sees update", alias, [NG(a), NG(rp(3))], grad=False)
        def leafgrad(x, y, f=f):
            x2 = f(x, y)
            return x2, x2.is_leaf
        cmp(f"{name} on leaf requiring grad", leafgrad, [a, 1.5])
        def nonleaf(x, y, f=f):
            z = x * 1.0
            z = f(z, y)
            return z
        cmp(f"{name} on non-leaf, grad through", nonleaf, [a, rp(3)])
        cmp(f"{name} needing to grow left side", lambda x, y, f=f: f(x, y), [NG(rp(3)), NG(rp(2, 3))], grad=False)
        cmp(f"int {name} float", lambda x, y, f=f: f(x, y), [NG(nz(3)), NG(rp(3))], grad=False)
        cmp(f"int {name} 0.5", lambda x, f=f: f(x, 0.5), [NG(nz(3))], grad=False)
        cmp(f"f32 {name} f64", lambda x, y, f=f: f(x, y), [NG(rp(3).astype(np.float32)), NG(rp(3))], grad=False)
    # in-place inside no_grad on a leaf that requires grad (optimizer-style update)
    def sgd(lib):
        def f(w):
            ctx = minitx.no_grad() if lib == "m" else torch.no_grad()
            w0 = w
            with ctx:
                w -= 0.5
            return w0, w is w0, w.is_leaf, w.requires_grad
        return f
    cmp("w -= 0.5 under no_grad (SGD-style): same object/leaf", sgd("m"), [rp(3)], tfn=sgd("t"), grad=False)
    def saved(x):
        y = x * 1.0
        z = y * y
        y += 1
        return z
    cmp("in-place on a tensor saved by mul, then backward", saved, [rp(3)])
    def view_inplace(x):
        y = x * 1.0
        v = y[0]
        v += 10
        return y
    cmp("in-place on a view (y[0] += 10) reaches base", view_inplace, [rp(2, 3)])

@section
def indexing():
    x = r(4, 5, 6)
    IDX = {
        "int": 1, "neg int": -1, "slice": slice(1, 3), "step slice": slice(None, None, 2),
        "neg step": slice(None, None, -1), "neg step 2": slice(3, 0, -2), "slice out of range": slice(2, 100),
        "None": None, "Ellipsis": Ellipsis, "(..., 1)": (Ellipsis, 1), "(None, 1, ..., None)": (None, 1, Ellipsis, None),
        "list": [0, 2], "list neg": [-1, 0], "list repeat": [0, 0, 3], "empty list": [], "nested list": [[0, 1], [2, 3]],
        "tuple of lists": ([0, 1], [1, 2]), "lists sep by slice": ([0, 1], slice(None), [1, 2]),
        "adjacent lists": (slice(None), [0, 1], [1, 2]), "list+int": ([0, 1], 2), "int,slice,list": (1, slice(None), [0, 1]),
        "list,None,list": ([0, 1], None, [1, 2]), "np int arr": np.array([1, 3]), "np 2d int arr": np.array([[1], [3]]),
        "np int32 arr": np.array([1, 3], dtype=np.int32), "np uint8 arr": np.array([1, 3], dtype=np.uint8),
        "np bool full": RNG.random((4, 5, 6)) < 0.5, "np bool partial": np.array([True, False, True, False]),
        "np bool 2-axis": RNG.random((4, 5)) < 0.5, "(slice, bool)": (slice(None), np.array([1, 0, 1, 1, 0], bool)),
        "bool list": [True, False, True, True], "True": True, "False": False, "(1, True)": (1, True),
        "np.int64 scalar": np.int64(2), "(0, 0, 0)": (0, 0, 0), "(-4, -5, -6)": (-4, -5, -6),
        "0-d np int": np.array(2), "(Ellipsis, [0,1])": (Ellipsis, [0, 1]), "bool all-false": np.zeros(4, bool),
        "list, list broadcast": ([[0], [1]], [0, 1, 2]), "empty np int arr": np.array([], dtype=np.int64),
        "list in tuple with np.bool scalar": (np.bool_(True), [0]),
    }
    for lab, idx in IDX.items():
        cmp(f"x[{lab}]", lambda t, idx=idx: t[idx], [x])
    # torch-only index forms built per library (minitx tensors / torch tensors as indices)
    def tidx(arr):
        return (lambda t, i: t[i])
    for lab, ia in (("int tensor", np.array([1, 3, 1])), ("bool tensor full", RNG.random((4, 5, 6)) < 0.5),
                    ("bool tensor partial", np.array([True, False, True, True])), ("0-d int tensor", np.array(2)),
                    ("0-d bool tensor", np.array(True)), ("int32 tensor", np.array([1, 2], dtype=np.int32)),
                    ("empty int tensor", np.zeros(0, np.int64)), ("2-d int tensor", np.array([[0, 1], [2, 3]])),
                    ("uint8 tensor", np.array([1, 0, 1, 1], dtype=np.uint8)), ("float tensor", np.array([1.0]))):
        cmp(f"x[{lab}]", lambda t, i: t[i], [x, NG(ia)])
        cmp(f"x[:, {lab}-ish on axis1]", lambda t, i: t[:, i] if i.ndim <= 1 else t[i], [x, NG(ia if ia.dtype.kind != "b" or ia.ndim != 1 else np.array([1, 0, 1, 1, 0], bool))]) if ia.ndim <= 1 else None
    cmp("x[t0:t1] with 0-d tensor bounds", lambda t, a, b: t[a:b], [x, NG(np.array(1)), NG(np.array(3))])
    cmp("x[(t_i, t_j)] two int tensors", lambda t, a, b: t[a, b], [x, NG(np.array([0, 1])), NG(np.array([2, 2]))])
    cmp("x[t_i, :, t_j]", lambda t, a, b: t[a, :, b], [x, NG(np.array([0, 1])), NG(np.array([2, 2]))])
    # out of range
    for lab, idx in (("int 4", 4), ("int -5", -5), ("list [5]", [5]), ("(0, 5)", (0, 5)), ("(0,0,0,0)", (0, 0, 0, 0)),
                     ("np [-9]", np.array([-9])), ("bool wrong len", np.array([True, False])), ("float 1.0", 1.0),
                     ("string", "a"), ("two Ellipsis", (Ellipsis, Ellipsis)), ("float list", [0.0, 1.0]),
                     ("list of tensors?", None)):
        if idx is None: continue
        cmp(f"x[{lab}] (error?)", lambda t, idx=idx: t[idx], [x])
    cmp("x[int tensor out of range]", lambda t, i: t[i], [x, NG(np.array([0, 7]))])
    cmp("0-d x[0]", lambda t: t[0], [np.array(2.5)])
    cmp("0-d x[...]", lambda t: t[...], [np.array(2.5)])
    cmp("0-d x[None]", lambda t: t[None], [np.array(2.5)])
    cmp("0-d x[()]", lambda t: t[()], [np.array(2.5)])
    cmp("0-d x[True]", lambda t: t[True], [np.array(2.5)])
    cmp("0-d x[bool 0-d tensor]", lambda t, m: t[m], [np.array(2.5), NG(np.array(False))])
    cmp("x[[tensor, tensor]] list of tensors", lambda t, a, b: t[[a, b]], [x, NG(np.array(0)), NG(np.array(2))])
    cmp("x[[0, t]] list mixing int and 0-d tensor", lambda t, a: t[[0, a]], [x, NG(np.array(2))])
    cmp("x[(0, t_1d)]", lambda t, a: t[0, a], [x, NG(np.array([0, 2]))])
    # grads through get with duplicates were covered above; int tensor x
    cmp("int x[[0,0]]", lambda t: t[[0, 0]], [ri(4)], grad=False)
    cmp("bool x[mask]", lambda t, m: t[m], [rb(4), NG(rb(4))], grad=False)
    cmp("x[mask] on f32", lambda t, m: t[m], [r(4, dtype=np.float32), NG(rb(4))])
    # setitem
    SET = [("int, scalar", 1, 5.0), ("slice, scalar", slice(0, 2), -1.0), ("neg step, bcast row", slice(None, None, -2), "row"),
           ("list repeat", [0, 0], "row"), ("bool mask, scalar", "mask", 0.0), ("(…, 1)", (Ellipsis, 1), "col"),
           ("list,list", ([0, 1], [2, 3]), 7.0), ("int tensor idx", "tidx", "row")]
    for lab, idx, val in SET:
        base = r(4, 6)
        mask = base > 0
        def f(t, v=None, idx=idx, val=val, lab=lab):
            y = t * 1.0
            i = mask if idx == "mask" else idx
            if idx == "tidx":
                i = (minitx.tensor(np.array([2, 0])) if isinstance(t, minitx.Tensor) else torch.tensor([2, 0]))
            y[i] = v if v is not None else val
            return y
        if val in ("row", "col"):
            vshape = (6,) if val == "row" else (4,)
            cmp(f"y[{lab}] = value needing grad", f, [base, r(*vshape)])
            cmp(f"y[{lab}] = value (ndarray raw)", f, [base, Raw(r(*vshape))])
        else:
            cmp(f"y[{lab}] = {val}", f, [base])
    def setleaf(t):
        t[0] = 1.0
        return t
    cmp("leaf (no grad) t[0] = 1", setleaf, [NG(r(3))], grad=False)
    cmp("leaf requiring grad t[0] = 1", setleaf, [r(3)])
    def setint(t):
        t[0] = 2.7
        return t
    cmp("int t[0] = 2.7", setint, [NG(ri(3))], grad=False)
    def setalias(t):
        v = t[0:2]
        t[0] = 100.0
        return v
    cmp("setitem visible through earlier slice view", setalias, [NG(r(3))], grad=False)

@section
def methods():
    x = r(2, 3, 4)
    # reductions
    for name in ("sum", "mean", "max", "min", "prod", "logsumexp", "std", "var", "argmax", "argmin"):
        for ax in (None, 1, -1, (0, 2)):
            if ax is None and name == "logsumexp": continue
            if isinstance(ax, tuple) and name in ("argmax", "argmin", "max", "min"): continue
            mf = (lambda t, name=name, ax=ax: getattr(t, name)(ax)) if ax is not None else (lambda t, name=name: getattr(t, name)())
            def tf(t, name=name, ax=ax):
                if name in ("std", "var"):
                    return getattr(t, name)(dim=ax, correction=0) if ax is not None else getattr(t, name)(correction=0)
                if ax is None: return getattr(t, name)()
                out = getattr(t, name)(ax)
                return out.values if name in ("max", "min") else out
            cmp(f"t.{name}({ax})", mf, [x], tfn=tf)
            cmp(f"t.{name}(dim={ax}) (torch kw)", lambda t, name=name, ax=ax: getattr(t, name)(dim=ax), [x], tfn=tf) if ax == 1 else None
        cmp(f"t.{name}(axis=1, keepdims=True)", lambda t, name=name: getattr(t, name)(axis=1, keepdims=True) if name not in ("argmax", "argmin") else getattr(t, name)(axis=1),
            [x], tfn=lambda t, name=name: (getattr(t, name)(1, keepdim=True) if name not in ("std", "var") else getattr(t, name)(1, keepdim=True, correction=0)) if name not in ("max", "min", "argmax", "argmin") else (getattr(t, name)(1, keepdim=True).values if name in ("max", "min") else getattr(t, name)(1)))
        cmp(f"0-d t.{name}()", lambda t, name=name: getattr(t, name)(), [np.array(1.5)], tfn=lambda t, name=name: getattr(t, name)(correction=0) if name in ("std", "var") else getattr(t, name)())
        cmp(f"0-d t.{name}(0)", lambda t, name=name: getattr(t, name)(0), [np.array(1.5)], tfn=lambda t, name=name: (getattr(t, name)(0, correction=0) if name in ("std", "var") else (getattr(t, name)(0).values if name in ("max", "min") else getattr(t, name)(0))))
        cmp(f"i64 t.{name}()", lambda t, name=name: getattr(t, name)(), [ri(2, 3)], grad=False, tfn=lambda t, name=name: getattr(t, name)(correction=0) if name in ("std", "var") else getattr(t, name)())
        cmp(f"bool t.{name}()", lambda t, name=name: getattr(t, name)(), [rb(2, 3)], grad=False, tfn=lambda t, name=name: getattr(t, name)(correction=0) if name in ("std", "var") else getattr(t, name)())
    cmp("t.max(1) returns (values, indices) in torch", lambda t: t.max(1), [x])
    cmp("t.sort()", lambda t: t.sort(), [x])
    cmp("t.sort(descending=True) values", lambda t: t.sort(descending=True)[0], [x])
    cmp("t.topk(2)", lambda t: t.topk(2), [x])
    cmp("t.argsort()", lambda t: t.argsort(), [x], grad=False)
    cmp("t.any()/all() f64", lambda t: (t.any(), t.all()), [np.array([0.0, 1.0])], grad=False)
    cmp("t.any(1) bool", lambda t: t.any(1), [rb(3, 4)], grad=False)
    cmp("t.all(-1) bool", lambda t: t.all(-1), [rb(3, 4)], grad=False)
    cmp("t.any() on requires-grad", lambda t: t.any(), [r(3)])
    # shape
    cmp("reshape(-1)", lambda t: t.reshape(-1), [x])
    cmp("reshape((6, 4))", lambda t: t.reshape((6, 4)), [x])
    cmp("reshape([6, -1])", lambda t: t.reshape([6, -1]), [x])
    cmp("reshape(6, -1)", lambda t: t.reshape(6, -1), [x])
    cmp("reshape(()) of 1-elem", lambda t: t.reshape(()), [r(1)])
    cmp("reshape() of 1-elem", lambda t: t.reshape(), [r(1)])
    cmp("reshape(5, -1) bad", lambda t: t.reshape(5, -1), [x])
    cmp("reshape(-1, -1) bad", lambda t: t.reshape(-1, -1), [x])
    cmp("view(-1)", lambda t: t.view(-1), [x])
    cmp("view(4, 6)", lambda t: t.view(4, 6), [x])
    cmp("transpose(0, 1) on 3-D", lambda t: t.transpose(0, 1), [x])
    cmp("transpose(1, 2) on 3-D", lambda t: t.transpose(1, 2), [x])
    cmp("transpose(-1, -2) on 3-D", lambda t: t.transpose(-1, -2), [x])
    cmp("transpose(0, 1) on 2-D", lambda t: t.transpose(0, 1), [r(2, 3)])
    cmp("transpose() on 2-D", lambda t: t.transpose(), [r(2, 3)], tfn=lambda t: t.t())
    cmp("permute(2, 0, 1)", lambda t: t.permute(2, 0, 1), [x])
    cmp("permute((2, 0, 1))", lambda t: t.permute((2, 0, 1)), [x])
    cmp("permute(-1, 0, 1)", lambda t: t.permute(-1, 0, 1), [x])
    cmp("permute(0, 1) wrong count", lambda t: t.permute(0, 1), [x])
    cmp("swapaxes(0, 2)", lambda t: t.swapaxes(0, 2), [x])
    cmp("squeeze()", lambda t: t.squeeze(), [r(1, 3, 1)])
    cmp("squeeze(0)", lambda t: t.squeeze(0), [r(1, 3, 1)])
    cmp("squeeze((0, 2))", lambda t: t.squeeze((0, 2)), [r(1, 3, 1)])
    cmp("squeeze(-1)", lambda t: t.squeeze(-1), [r(1, 3, 1)])
    cmp("unsqueeze(0)", lambda t: t.unsqueeze(0), [x])
    cmp("unsqueeze(-1)", lambda t: t.unsqueeze(-1), [x])
    cmp("unsqueeze(3)", lambda t: t.unsqueeze(3), [x])
    cmp("unsqueeze(4) bad", lambda t: t.unsqueeze(4), [x])
    cmp("unsqueeze(0) on 0-d", lambda t: t.unsqueeze(0), [np.array(1.0)])
    cmp("broadcast_to((2, 2, 3, 4))", lambda t: t.broadcast_to((2, 2, 3, 4)), [x])
    cmp("broadcast_to bad", lambda t: t.broadcast_to((3, 3, 4)), [x])
    cmp("flip(0)", lambda t: t.flip(0), [x])
    cmp("flip((0, 2))", lambda t: t.flip((0, 2)), [x])
    cmp("flip() (minitx: all)", lambda t: t.flip(), [x], tfn=lambda t: t.flip((0, 1, 2)))
    cmp("roll(1, 0)", lambda t: t.roll(1, 0), [x])
    cmp("roll(1) flat", lambda t: t.roll(1), [x])
    cmp("roll((1, 2), (0, 2))", lambda t: t.roll((1, 2), (0, 2)), [x])
    cmp("tril()", lambda t: t.tril(), [r(3, 4)])
    cmp("triu(1)", lambda t: t.triu(1), [r(3, 4)])
    cmp("tril(-1) 3-D", lambda t: t.tril(-1), [x])
    cmp("repeat(2) on 1-D", lambda t: t.repeat(2), [r(3)])
    cmp("repeat(2, 1) on 2-D", lambda t: t.repeat(2, 1), [r(2, 3)])
    cmp("repeat((2, 1)) on 2-D", lambda t: t.repeat((2, 1)), [r(2, 3)])
    cmp("repeat_interleave vs repeat(2, axis=0)", lambda t: t.repeat(2, axis=0), [r(2, 3)], tfn=lambda t: t.repeat_interleave(2, dim=0))
    cmp("tile((2, 1))", lambda t: t.tile((2, 1)), [r(2, 3)])
    cmp("tile(2)", lambda t: t.tile(2), [r(2, 3)], tfn=lambda t: t.tile((2,)))
    cmp("cumsum(1)", lambda t: t.cumsum(1), [x])
    cmp("cumsum(-1)", lambda t: t.cumsum(-1), [x])
    cmp("cumprod(0)", lambda t: t.cumprod(0), [x])
    cmp("logcumsumexp(1)", lambda t: t.logcumsumexp(1), [x])
    cmp("cumsum(0) of i32", lambda t: t.cumsum(0), [ri(3, dtype=np.int32)], grad=False)
    cmp("cumsum(0) of bool", lambda t: t.cumsum(0), [rb(3)], grad=False)
    cmp("cumsum(0) of 0-d", lambda t: t.cumsum(0), [np.array(2.0)])
    cmp("gather(1, idx)", lambda t, i: t.gather(1, i), [r(3, 4), NG(np.array([[0, 0], [1, 3], [2, 2]]))])
    cmp("scatter_add(1, idx, src)", lambda t, i, s: t.scatter_add(1, i, s), [r(3, 4), NG(np.array([[0, 0], [1, 3], [2, 2]])), r(3, 2)])
    cmp("masked_fill(mask, 0)", lambda t, m: t.masked_fill(m, 0.0), [r(3, 4), NG(rb(3, 4))])
    cmp("masked_fill(mask bcast, -inf)", lambda t, m: t.masked_fill(m, float("-inf")), [r(3, 4), NG(rb(4))])
    cmp("masked_fill int mask (torch refuses)", lambda t, m: t.masked_fill(m, 0.0), [r(3, 4), NG(ri(3, 4, lo=0, hi=2))])
    cmp("clip(-0.5, 0.5)", lambda t: t.clip(-0.5, 0.5), [x])
    cmp("clip(min=0)", lambda t: t.clip(min=0), [x])
    cmp("clip(max=0)", lambda t: t.clip(max=0), [x])
    cmp("clip() no bounds", lambda t: t.clip(), [x])
    cmp("clip(1, -1) min>max", lambda t: t.clip(1, -1), [x])
    cmp("clip with tensor bounds", lambda t, a, b: t.clip(a, b), [x, r(4), r(4) + 2])
    cmp("clip i64 with 0.5", lambda t: t.clip(0.5, 2.5), [ri(5)], grad=False)
    cmp("softmax(-1)", lambda t: t.softmax(-1), [x])
    cmp("softmax(0)", lambda t: t.softmax(0), [x])
    cmp("log_softmax(1)", lambda t: t.log_softmax(1), [x])
    cmp("softmax() no arg", lambda t: t.softmax(), [x], tfn=lambda t: t.softmax(-1))
    for name in ("exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs", "sin", "cos", "erf", "sign", "floor", "ceil",
                 "round", "trunc", "log2", "exp2", "log1p", "expm1", "rsqrt", "reciprocal", "isnan", "isinf", "isfinite",
                 "silu", "logsigmoid", "leaky_relu", "elu", "softplus", "hardtanh"):
        inp = rp(2, 3) if name in ("log", "sqrt", "log2", "rsqrt", "log1p") else r(2, 3)
        tf = {"silu": lambda t: torch.nn.functional.silu(t), "logsigmoid": lambda t: torch.nn.functional.logsigmoid(t),
              "leaky_relu": lambda t: torch.nn.functional.leaky_relu(t), "elu": lambda t: torch.nn.functional.elu(t),
              "softplus": lambda t: torch.nn.functional.softplus(t), "hardtanh": lambda t: torch.nn.functional.hardtanh(t)}.get(name)
        cmp(f"t.{name}()", lambda t, name=name: getattr(t, name)(), [inp], tfn=tf)
        cmp(f"i64 t.{name}()", lambda t, name=name: getattr(t, name)(), [np.abs(nz(2, 3))], grad=False, tfn=tf)
        cmp(f"0-d t.{name}()", lambda t, name=name: getattr(t, name)(), [np.array(0.7)], tfn=tf)
    cmp("round(2)", lambda t: t.round(2), [r(5) * 10])
    cmp("round(decimals=1)", lambda t: t.round(decimals=1), [r(5) * 10])
    cmp("round half-even", lambda t: t.round(), [np.array([0.5, 1.5, 2.5, -0.5])])
    cmp("leaky_relu(0.2)", lambda t: t.leaky_relu(0.2), [r(5)], tfn=lambda t: torch.nn.functional.leaky_relu(t, 0.2))
    cmp("hardtanh(-2, 2)", lambda t: t.hardtanh(-2.0, 2.0), [r(5) * 3], tfn=lambda t: torch.nn.functional.hardtanh(t, -2.0, 2.0))
    cmp("softplus(2, 1)", lambda t: t.softplus(2.0, 1.0), [r(5) * 3], tfn=lambda t: torch.nn.functional.softplus(t, 2.0, 1.0))
    # conversions
    cmp("item() of 1-elem 2-D", lambda t: t.item(), [r(1, 1)], grad=False)
    cmp("item() of 3-elem (error)", lambda t: t.item(), [r(3)], grad=False)
    cmp("item() of empty (error)", lambda t: t.item(), [r(0)], grad=False)
    cmp("item() i64", lambda t: t.item(), [np.array([7])], grad=False)
    cmp("item() bool", lambda t: t.item(), [np.array(True)], grad=False)
    cmp("item() f32 value type", lambda t: t.item(), [np.array(0.1, dtype=np.float32)], grad=False)
    cmp("float(t 3 elems) (error)", lambda t: float(t), [r(3)], grad=False)
    cmp("int(t 3 elems) (error)", lambda t: int(t), [r(3)], grad=False)
    cmp("float(0-d)", lambda t: float(t), [np.array(2.5)], grad=False)
    cmp("int(-2.7)", lambda t: int(t), [np.array(-2.7)], grad=False)
    cmp("int(nan) (error)", lambda t: int(t), [np.array(np.nan)], grad=False)
    cmp("bool(0-d 0.0)", lambda t: bool(t), [np.array(0.0)], grad=False)
    cmp("bool(3 elems) (error)", lambda t: bool(t), [r(3)], grad=False)
    cmp("bool(empty) (error)", lambda t: bool(t), [r(0)], grad=False)
    cmp("bool([[1.]])", lambda t: bool(t), [np.ones((1, 1))], grad=False)
    cmp("operator.index(0-d int)", lambda t: op.index(t), [np.array(3)], grad=False)
    cmp("range(stop=0-d int tensor)", lambda t: list(range(t)), [np.array(3)], grad=False)
    cmp("[1,2,3][0-d int tensor]", lambda t: [1, 2, 3][t], [np.array(1)], grad=False)
    cmp("complex(0-d)", lambda t: complex(t), [np.array(2.0)], grad=False)
    cmp("round(0-d) builtin", lambda t: round(t), [np.array(2.6)], grad=False)
    cmp("math.floor(0-d)", lambda t: __import__("math").floor(t), [np.array(2.6)], grad=False)
    cmp("format(0-d, '.2f')", lambda t: format(t, ".2f"), [np.array(2.6)], grad=False)
    cmp("f'{0-d:.2f}' with grad", lambda t: f"{t:.2f}", [np.array(2.6)])
    cmp("len(0-d) (error)", lambda t: len(t), [np.array(2.0)], grad=False)
    cmp("len(2x3)", lambda t: len(t), [r(2, 3)], grad=False)
    cmp("len(empty (0,3))", lambda t: len(t), [r(0, 3)], grad=False)
    cmp("list(iter 0-d) (error)", lambda t: list(t), [np.array(2.0)], grad=False)
    cmp("list(iter 2x3)", lambda t: list(t), [r(2, 3)])
    cmp("iter 1-D yields 0-d", lambda t: [e.shape for e in t], [r(3)], grad=False, tfn=lambda t: [tuple(e.shape) for e in t])
    cmp("sum(t) builtin over rows", lambda t: sum(t), [r(3, 2)])
    cmp("tolist() 2-D", lambda t: t.tolist(), [r(2, 2)], grad=False)
    cmp("tolist() 0-d", lambda t: t.tolist(), [np.array(2.5)], grad=False)
    cmp("tolist() empty", lambda t: t.tolist(), [r(0, 2)], grad=False)
    cmp("numpy() on requires_grad", lambda t: t.numpy(), [r(3)], grad=False, tfn=lambda t: t.detach().numpy())
    cmp("numpy() on requires_grad (torch refuses)", lambda t: t.numpy(), [r(3)])
    cmp("np.asarray(t)", lambda t: np.asarray(t), [NG(r(3))], grad=False)
    cmp("np.asarray(t, float32)", lambda t: np.asarray(t, dtype=np.float32), [NG(r(3))], grad=False)
    def np_shares(lib):
        def f(t):
            a = t.numpy(); a[0] = 99.0; return t
        return f
    cmp("numpy() shares memory (write through)", np_shares("m"), [NG(r(3))], grad=False)
    def detach_shares(t):
        d = t.detach(); return d, d.requires_grad, d.is_leaf
    cmp("detach()", detach_shares, [r(3)], grad=False)
    cmp("detach() of non-leaf", lambda t: (lambda d: (d.requires_grad, d.is_leaf, d.grad_fn is None))((t * 2).detach()), [r(3)], grad=False)
    for dt in ("float32", "float64", "int64", "int32", "bool", "float16", "uint8"):
        tdt = getattr(torch, dt)
        cmp(f"to(dtype={dt})", lambda t, dt=dt: t.to(dtype=dt), [r(4) * 3], tfn=lambda t, tdt=tdt: t.to(dtype=tdt))
        cmp(f"astype({dt})", lambda t, dt=dt: t.astype(dt), [r(4) * 3], tfn=lambda t, tdt=tdt: t.to(tdt))
        cmp(f"to(np.{dt})", lambda t, dt=dt: t.to(dtype=np.dtype(dt)), [r(4) * 3], tfn=lambda t, tdt=tdt: t.to(dtype=tdt))
    cmp("to('float32') positional string (torch: device)", lambda t: t.to("float32"), [r(3)], tfn=lambda t: t.to(torch.float32))
    cmp("to(torch.float32)", lambda t: t.to(dtype=torch.float32), [r(3)], tfn=lambda t: t.to(torch.float32))
    cmp("to('cpu')", lambda t: t.to("cpu"), [r(3)])
    cmp("to(nan f64 -> int64)", lambda t: t.to(dtype="int64"), [np.array([np.nan, 1e30, -2.7])], grad=False, tfn=lambda t: t.to(torch.int64))
    cmp("to(dtype) grad back to f64", lambda t: t.to(dtype="float32"), [r(3)], tfn=lambda t: t.to(torch.float32))
    cmp("to(int64) of requires_grad", lambda t: t.to(dtype="int64"), [r(3)], tfn=lambda t: t.to(torch.int64))
    cmp(".float()", lambda t: t.float(), [r(3)])
    cmp(".double() of f32", lambda t: t.double(), [r(3, dtype=np.float32)])
    cmp(".long()", lambda t: t.long(), [r(3) * 3], grad=False)
    cmp(".long() of bool", lambda t: t.long(), [rb(3)], grad=False)
    cmp(".float() of i64", lambda t: t.float(), [ri(3)], grad=False)
    cmp(".cpu()", lambda t: t.cpu(), [r(3)])
    cmp(".to() same dtype is same object", lambda t: t.to(dtype="float64") is t, [r(3)], tfn=lambda t: t.to(torch.float64) is t)
    cmp(".T on 1-D", lambda t: t.T, [r(3)])
    cmp(".T on 0-D", lambda t: t.T, [np.array(1.0)])
    cmp(".T on 2-D", lambda t: t.T, [r(2, 3)])
    cmp(".T on 3-D", lambda t: t.T, [x])
    cmp("repr(empty)", lambda t: repr(t), [NG(r(0, 3))], grad=False)
    cmp("repr(0-d)", lambda t: repr(t), [NG(np.array(1.5))], grad=False)
    cmp("repr(0-d int)", lambda t: repr(t), [NG(np.array(3))], grad=False)
    cmp("repr(bool)", lambda t: repr(t), [NG(np.array([True]))], grad=False)
    cmp("str(0-d)", lambda t: str(t), [NG(np.array(1.5))], grad=False)
    cmp("hash(t) works", lambda t: isinstance(hash(t), int), [NG(r(2))], grad=False)
    cmp("t in set/dict by identity", lambda t: len({t: 1, t * 1: 2}), [NG(r(2))], grad=False)
    cmp("t == t returns tensor", lambda t: (t == t), [NG(r(2))], grad=False)
    cmp("list.index(t) (uses ==)", lambda t: [t].index(t), [NG(r(2))], grad=False)
    cmp("t in [t, u] (uses ==)", lambda t, u: t in [u, t], [NG(r(2)), NG(r(2))], grad=False)
    cmp("t in [u] (uses ==, multi-elem)", lambda t, u: t in [u], [NG(r(2)), NG(r(2))], grad=False)
    cmp("sorted([0-d, 0-d])", lambda a, b: [float(v) for v in sorted([a, b])], [NG(np.array(2.0)), NG(np.array(1.0))], grad=False)
    cmp("max(a, b) builtin 0-d", lambda a, b: max(a, b), [np.array(2.0), np.array(1.0)])
    # properties
    cmp("shape", lambda t: tuple(t.shape), [x], grad=False)
    cmp("ndim", lambda t: t.ndim, [x], grad=False)
    cmp("size (minitx int attr vs torch method)", lambda t: t.size, [x], grad=False, tfn=lambda t: t.numel())
    cmp("is_leaf of op result without grad", lambda t: (t * 2).is_leaf, [NG(r(2))], grad=False)
    cmp("grad_fn of leaf", lambda t: t.grad_fn is None, [r(2)], grad=False)
    cmp("requires_grad of result", lambda t: (t * 2).requires_grad, [r(2)], grad=False)
    cmp("requires_grad_() on int (error)", lambda t: t.requires_grad_(), [NG(ri(3))], grad=False)
    cmp("requires_grad_(False) on non-leaf (error)", lambda t: (t * 2).requires_grad_(False), [r(3)], grad=False)
    cmp("tensor(int, requires_grad=True) error", lambda t: None, [], grad=False) if False else None

@section
def backward_api():
    def bw_nonscalar(t):
        (t * 2).backward()
    cmp("backward() on non-scalar", bw_nonscalar, [r(3)], bw=False)
    def bw_1elem(t):
        (t * 2).backward(); return t.grad
    cmp("backward() on 1-elem non-0-d", bw_1elem, [r(1, 1)], bw=False)
    def bw_twice(t):
        y = (t * t).sum(); y.backward(); y.backward(); return t.grad
    cmp("backward twice without retain_graph", bw_twice, [r(3)], bw=False)
    def bw_twice_lin(t):
        y = (t * 2.0).sum(); y.backward(); y.backward(); return t.grad
    cmp("backward twice, graph w/o saved tensors (torch ok)", bw_twice_lin, [r(3)], bw=False)
    def bw_twice_add(t):
        y = (t + 1.0).sum(); y.backward(); y.backward(); return t.grad
    cmp("backward twice through add+sum", bw_twice_add, [r(3)], bw=False)
    def bw_retain(t):
        y = (t * t).sum(); y.backward(retain_graph=True); y.backward(); return t.grad
    cmp("backward twice with retain_graph (accumulates)", bw_retain, [r(3)], bw=False)
    def bw_accum(t):
        (t * t).sum().backward(); (t * 3).sum().backward(); return t.grad
    cmp(".grad accumulates across two graphs", bw_accum, [r(3)], bw=False)
    def bw_grad_arg(t):
        g = np.array([1.0, 2.0, 3.0])
        keep = g.copy()
        y = t.reshape(3) if isinstance(t, minitx.Tensor) else t.reshape(3)
        y.backward(g if isinstance(t, minitx.Tensor) else torch.tensor(g))
        (t.reshape(3)).backward(g if isinstance(t, minitx.Tensor) else torch.tensor(g))
        return t.grad, bool(np.array_equal(g, keep))
    cmp("user grad array not mutated by accumulation (reshape)", bw_grad_arg, [r(3)], bw=False)
    def bw_grad_leaf(t):
        g = np.array([1.0, 2.0, 3.0]); keep = g.copy()
        gg = g if isinstance(t, minitx.Tensor) else torch.tensor(g)
        t.backward(gg); t.backward(gg)
        return t.grad, bool(np.array_equal(g, keep))
    cmp("leaf.backward(g) twice: g not mutated", bw_grad_leaf, [r(3)], bw=False)
    def bw_grad_tensor(t):
        g = np.array([1.0, 2.0, 3.0]); keep = g.copy()
        mk = (lambda a: minitx.tensor(a)) if isinstance(t, minitx.Tensor) else (lambda a: torch.tensor(a))
        G = mk(g)
        (t + 0.0).backward(G); (t + 0.0).backward(G)
        return t.grad, G
    cmp("grad Tensor passed to backward not mutated (add)", bw_grad_tensor, [r(3)], bw=False)
    def grad_alias(t):
        (t * 2).sum().backward(); g1 = t.grad; g1c = g1 * 1.0
        (t * 2).sum().backward(); return g1, g1c, t.grad
    cmp("earlier .grad object updated in place", grad_alias, [r(3)], bw=False)
    def grad_wrong_shape(t):
        (t * 2).backward(np.ones(4) if isinstance(t, minitx.Tensor) else torch.ones(4, dtype=torch.float64))
    cmp("backward(grad of wrong shape)", grad_wrong_shape, [r(3)], bw=False)
    def grad_wrong_shape_t(t):
        mk = (lambda a: minitx.tensor(a)) if isinstance(t, minitx.Tensor) else (lambda a: torch.tensor(a))
        (t * 2).backward(mk(np.ones((3, 1))))
    cmp("backward(Tensor grad (3,1) for (3,))", grad_wrong_shape_t, [r(3)], bw=False)
    def grad_int(t):
        mk = (lambda a: minitx.tensor(a)) if isinstance(t, minitx.Tensor) else (lambda a: torch.tensor(a))
        (t * 2).backward(mk(np.array([1, 2, 3]))); return t.grad
    cmp("backward(int grad Tensor)", grad_int, [r(3)], bw=False)
    def grad_f32(t):
        mk = (lambda a: minitx.tensor(a)) if isinstance(t, minitx.Tensor) else (lambda a: torch.tensor(a))
        (t * 2).backward(mk(np.array([1, 2, 3], dtype=np.float32))); return t.grad
    cmp("backward(f32 grad Tensor for f64 output)", grad_f32, [r(3)], bw=False)
    def leaf_bw(t):
        t.backward(); return t.grad
    cmp("0-d leaf.backward()", leaf_bw, [np.array(2.0)], bw=False)
    cmp("backward on no-grad tensor", lambda t: (t * 2).sum().backward(), [NG(r(3))], bw=False)
    cmp("requires_grad=True on int", lambda t: None, [], bw=False) if False else None
    def nog(lib):
        def f(t):
            ctx = minitx.no_grad() if lib == "m" else torch.no_grad()
            with ctx:
                y = t * 2
            return y.requires_grad, y.is_leaf, y.grad_fn is None
        return f
    cmp("no_grad result flags", nog("m"), [r(3)], tfn=nog("t"), bw=False)
    def nog_dec(lib):
        def f(t):
            dec = minitx.no_grad if lib == "m" else torch.no_grad
            @dec
            def g(u): return u * 2
            return g(t).requires_grad
        return f
    cmp("@no_grad without parentheses", nog_dec("m"), [r(3)], tfn=nog_dec("t"), bw=False)
    def eg(lib):
        def f(t):
            ng = minitx.no_grad() if lib == "m" else torch.no_grad()
            en = minitx.enable_grad() if lib == "m" else torch.enable_grad()
            with ng:
                with en:
                    y = t * 2
            return y.requires_grad
        return f
    cmp("enable_grad inside no_grad", eg("m"), [r(3)], tfn=eg("t"), bw=False)
    def sge(lib):
        def f(t):
            m = minitx if lib == "m" else torch
            with m.set_grad_enabled(False):
                y = t * 2
            return y.requires_grad
        return f
    cmp("set_grad_enabled(False)", sge("m"), [r(3)], tfn=sge("t"), bw=False)
    def retain(t):
        y = t * 2; y.retain_grad(); (y * y).sum().backward(); return y.grad
    cmp("retain_grad on non-leaf", retain, [r(3)], bw=False)
    def nonleaf_grad(t):
        y = t * 2; (y * y).sum().backward(); return y.grad is None
    cmp("non-leaf .grad is None", nonleaf_grad, [r(3)], bw=False)
    def hook(t):
        y = t * 2; y.register_hook(lambda g: g * 10); y.sum().backward(); return t.grad
    cmp("register_hook scales grad", hook, [r(3)], bw=False)
    def grad_set_none(t):
        (t * 2).sum().backward(); t.grad = None; (t * 3).sum().backward(); return t.grad
    cmp("grad = None then backward", grad_set_none, [r(3)], bw=False)
    def grad_assign(t):
        mk = (lambda a: minitx.tensor(a)) if isinstance(t, minitx.Tensor) else (lambda a: torch.tensor(a))
        t.grad = mk(np.ones(3)); (t * 3).sum().backward(); return t.grad
    cmp("assigned .grad then accumulate", grad_assign, [r(3)], bw=False)
    def grad_assign_shared(t):
        mk = (lambda a: minitx.tensor(a)) if isinstance(t, minitx.Tensor) else (lambda a: torch.tensor(a))
        G = mk(np.ones(3)); t.grad = G; (t * 3).sum().backward(); return G
    cmp("assigned .grad object mutated by accumulate", grad_assign_shared, [r(3)], bw=False)
    def grad_shape(t):
        mk = (lambda a: minitx.tensor(a)) if isinstance(t, minitx.Tensor) else (lambda a: torch.tensor(a))
        t.grad = mk(np.ones(4))
    cmp("assign .grad of wrong shape", grad_shape, [r(3)], bw=False)
    def grad_np(t):
        t.grad = np.ones(3); (t * 3).sum().backward(); return t.grad
    cmp("assign .grad an ndarray", grad_np, [r(3)], bw=False)
    def used_twice(t):
        y = t * t
        return (y + y).sum()
    cmp("tensor used twice", used_twice, [r(3)])
    def leaf_used_in_two_outputs(t):
        return t * 2, t.sum()
    cmp("two outputs sharing a leaf", leaf_used_in_two_outputs, [r(3)])


@section
def probes():
    """Follow-ups found while reading the sweep's output."""
    def mk(lib, a, rg=False):
        return minitx.tensor(a, requires_grad=rg) if lib == "m" else torch.tensor(a, requires_grad=rg)
    def clip_bound_grad(lib):
        def f(x, lo):
            return x.clip(lo, None) if lib == "m" else x.clamp(lo, None)
        return f
    cmp("clip with a tensor lower bound that requires grad", clip_bound_grad("m"), [np.array([-2., 0., 2.]), np.array([-1., 1., 1.])], tfn=clip_bound_grad("t"))
    cmp("clip with only the bound requiring grad", clip_bound_grad("m"), [NG(np.array([-2., 0., 2.])), np.array([-1., 1., 1.])], tfn=clip_bound_grad("t"))
    cmp("clip with a broadcasting tensor bound (grows x)", clip_bound_grad("m"), [np.array([0.5, 2.0]), NG(np.zeros((3, 2)))], tfn=clip_bound_grad("t"))
    def idx_mut(lib, kind):
        def f(x):
            i = mk(lib, np.array([0, 1]) if kind != "mask" else np.array([True, True, False, False]))
            y = x.gather(0, i) if kind == "gather" else x[i]
            if lib == "m": i.data[...] = np.array([3, 2]) if kind != "mask" else np.array([False, False, True, True])
            else:
                with torch.no_grad(): i[...] = torch.tensor([3, 2]) if kind != "mask" else torch.tensor([False, False, True, True])
            (y * mk(lib, np.array([1., 10.]))).sum().backward()
            return x.grad
        return f
    for kind in ("int", "mask", "gather"):
        cmp(f"index tensor ({kind}) written after forward, then backward", idx_mut("m", kind), [np.arange(4.)], tfn=idx_mut("t", kind), bw=False)
    def assign_grad(lib):
        def f(t):
            t.grad = mk(lib, np.zeros((2, 3))); (t * 3).sum().backward(); return t.grad
        return f
    cmp("assign .grad of another shape, then backward", assign_grad("m"), [np.ones(3)], tfn=assign_grad("t"), bw=False)
    def assign_int_grad(lib):
        def f(t):
            t.grad = mk(lib, np.zeros(3, np.int64)); (t * 1.5).sum().backward(); return t.grad
        return f
    cmp("assign an int .grad, then backward", assign_int_grad("m"), [np.ones(3)], tfn=assign_int_grad("t"), bw=False)
    cmp("max(1)[0] (torch: values row)", lambda t: t.max(1)[0], [r(2, 3)])
    cmp("f32 ** np.float64(2)", lambda t: t ** np.float64(2), [r(3, dtype=np.float32)])
    cmp("i8 ** np.int64(2)", lambda t: t ** np.int64(2), [ri(3, dtype=np.int8)], grad=False)
    cmp("Tensor(ndarray) then SGD step: user array", lambda a: None, [], grad=False) if False else None

if __name__ == "__main__":
    wanted = sys.argv[1:] or list(SECTIONS)
    for w in wanted: SECTIONS[w]()
    for line in report(): print(line)
    print(f"# {STATS['calls']} calls, {len(RESULTS)} findings")
