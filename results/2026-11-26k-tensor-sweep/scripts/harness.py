"""Tiny harness: run the same callable on minitx and torch tensors, compare results and grads."""
import sys, traceback, warnings
import numpy as np
import torch
sys.path.insert(0, __import__("os").getcwd())  # run from the repository root
import minitx  # noqa
import minitx.functional as F  # noqa

RNG = np.random.default_rng(0)
RESULTS = []   # (cat, label, detail)
STATS = {"calls": 0}

class Raw:        # pass a numpy array as-is (not converted to a tensor)
    def __init__(self, a): self.a = a
    def __repr__(self): return f"ndarray{self.a.shape}"
class NG:         # a tensor that does not require grad
    def __init__(self, a): self.a = np.asarray(a)
    def __repr__(self): return f"nograd {self.a.dtype.name}{self.a.shape}"

def mk(lib, a, grad):
    if isinstance(a, Raw): return a.a.copy()
    if isinstance(a, NG):
        return minitx.tensor(a.a) if lib == "m" else torch.tensor(a.a)
    if isinstance(a, np.ndarray):
        rg = bool(grad and a.dtype.kind == "f")
        return minitx.tensor(a, requires_grad=rg) if lib == "m" else torch.tensor(a, requires_grad=rg)
    return a

def to_np(o):
    if isinstance(o, minitx.Tensor): return np.asarray(o.numpy())
    if isinstance(o, torch.Tensor): return o.detach().numpy()
    return o

def dname(o):
    if isinstance(o, minitx.Tensor): return o.dtype.name
    if isinstance(o, torch.Tensor): return str(o.dtype).replace("torch.", "")
    return type(o).__name__

def same(a, b, rtol=1e-7, atol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape: return False
    if a.dtype.kind in "biu" and b.dtype.kind in "biu": return np.array_equal(a, b)
    return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True))

def short(e): return (f"{type(e).__name__}: {e}").replace("\n", " ")[:230]

def flat(o):
    if isinstance(o, (tuple, list)) and any(isinstance(x, (minitx.Tensor, torch.Tensor)) for x in o):
        r = []
        for x in o: r += flat(x)
        return r
    return [o]

def cmp(label, fn, args=(), tfn=None, grad=True, rtol=1e-7, check_dtype=True, note="", bw=None):
    """fn(*tensors) for both libs (tfn for torch when the API differs)."""
    STATS["calls"] += 1
    tfn = tfn or fn
    mi = [mk("m", a, grad) for a in args]
    ti = [mk("t", a, grad) for a in args]
    res = {}
    for lib, f, ins in (("m", fn, mi), ("t", tfn, ti)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                res[lib] = ("ok", f(*ins))
            except Exception as e:  # noqa
                res[lib] = ("err", e)
            if lib == "m":
                rw = [str(x.message)[:100] for x in w if issubclass(x.category, RuntimeWarning)]
                if rw: RESULTS.append(("w", label, "numpy warning leaked: " + "; ".join(sorted(set(rw)))))
    (ms, mo), (ts, to) = res["m"], res["t"]
    if ms == "err" and ts == "err":
        RESULTS.append(("both-raise", label, f"minitx {short(mo)} || torch {short(to)[:120]}"))
        return
    if ms == "err":
        RESULTS.append(("m-raises", label, f"minitx {short(mo)} || torch ok -> {summ(to)}"))
        return
    if ts == "err":
        RESULTS.append(("t-raises", label, f"minitx ok -> {summ(mo)} || torch {short(to)[:160]}"))
        return
    mf, tf = flat(mo), flat(to)
    if len(mf) != len(tf):
        RESULTS.append(("diff", label, f"outputs {len(mf)} vs torch {len(tf)}: {summ(mo)} vs {summ(to)}"))
        return
    bad = []
    for i, (a, b) in enumerate(zip(mf, tf)):
        ta, tb = isinstance(a, minitx.Tensor), isinstance(b, torch.Tensor)
        if ta != tb:
            bad.append(f"out{i} type {type(a).__name__} vs torch {type(b).__name__}")
            if not ta and not tb: pass
        an, bn = to_np(a), to_np(b)
        if ta and tb:
            if an.shape != bn.shape: bad.append(f"out{i} shape {an.shape} vs {bn.shape}"); continue
            if check_dtype and dname(a) != dname(b): bad.append(f"out{i} dtype {dname(a)} vs {dname(b)}")
        elif not ta and not tb and type(a) != type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float)) and type(a) == type(b)):
            bad.append(f"out{i} pytype {type(a).__name__} vs {type(b).__name__}")
        try:
            if not same(an, bn, rtol): bad.append(f"out{i} values {np.array2string(np.asarray(an).ravel()[:6], precision=4)} vs {np.array2string(np.asarray(bn).ravel()[:6], precision=4)}")
        except Exception as e:  # noqa
            bad.append(f"out{i} uncomparable {short(e)[:80]}")
    if bad:
        RESULTS.append(("diff", label, "; ".join(bad)))
        return
    if not (grad if bw is None else bw): return
    pairs = [(a, b) for a, b in zip(mf, tf) if isinstance(b, torch.Tensor) and b.requires_grad and b.dtype.is_floating_point]
    if not pairs:
        if any(isinstance(a, minitx.Tensor) and a.requires_grad for a in mf):
            RESULTS.append(("diff", label, "minitx output requires grad, torch's does not"))
        return
    ws = [RNG.standard_normal(tuple(b.shape)) for _, b in pairs]
    try:
        sum((b * torch.tensor(w, dtype=b.dtype)).sum() for (_, b), w in zip(pairs, ws)).backward()
    except Exception as e:  # noqa
        RESULTS.append(("t-bw-raises", label, short(e))); return
    try:
        tot = None
        for (a, _), w in zip(pairs, ws):
            if not (isinstance(a, minitx.Tensor) and a.requires_grad):
                RESULTS.append(("diff", label, "minitx output has no grad where torch's has")); return
            term = (a * minitx.tensor(w.astype(a.dtype))).sum()
            tot = term if tot is None else tot + term
        tot.backward()
    except Exception as e:  # noqa
        RESULTS.append(("m-bw-raises", label, short(e))); return
    gb = []
    for i, (a, b) in enumerate(zip(mi, ti)):
        if not (isinstance(b, torch.Tensor) and b.requires_grad): continue
        tg = np.zeros(b.shape) if b.grad is None else b.grad.numpy()
        mg = np.zeros(a.shape) if a.grad is None else to_np(a.grad)
        if not same(mg, tg, rtol * 10, 1e-9): gb.append(f"grad{i} {np.array2string(mg.ravel()[:6], precision=4)} vs torch {np.array2string(tg.ravel()[:6], precision=4)}")
    if gb: RESULTS.append(("diff-grad", label, "; ".join(gb)))

def summ(o):
    if isinstance(o, (minitx.Tensor, torch.Tensor)):
        return f"{type(o).__module__.split('.')[0]} {dname(o)}{tuple(o.shape)} {np.array2string(to_np(o).ravel()[:4], precision=3)}"
    if isinstance(o, (tuple, list)): return "[" + ", ".join(summ(x) for x in o[:4]) + "]"
    return repr(o)[:80]

def report():
    order = ["diff-grad", "diff", "m-bw-raises", "m-raises", "both-raise", "t-raises", "t-bw-raises", "w"]
    return [f"[{c}] {l}: {d}" for c, l, d in sorted(RESULTS, key=lambda r: order.index(r[0]))]
