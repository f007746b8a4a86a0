"""Core of the 16-bit sweep: run one call in minitx and in PyTorch on float16 or bfloat16 inputs
holding the same values, compare result dtypes, values (bit for bit, or in units in the last
place) and input gradients, and record a tagged finding."""
import re
import sys
import traceback
import warnings

import ml_dtypes
import numpy as np
import torch

sys.path.insert(0, __import__("os").getcwd())  # run from the repository root
import minitx  # noqa: E402
import minitx.functional as F  # noqa: E402

RNG = np.random.default_rng(0)
RESULTS = []  # (tag, op, call, detail)
STATS = {"calls": 0, "ops": set()}
NP = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16)}
TORCH = {"float16": torch.float16, "bfloat16": torch.bfloat16}


class Skip(Exception):
    pass


class Low:
    """Values (float64 or float32) to be given as a 16-bit tensor; both libraries get the same
    bits. nograd: the tensor takes no gradient."""

    def __init__(self, values, dtype, nograd=False):
        self.a = np.asarray(values).astype(NP[dtype])  # rounded once, here
        self.dtype, self.nograd = dtype, nograd

    def __repr__(self):
        return f"{'nograd ' if self.nograd else ''}{self.dtype}{tuple(self.a.shape)}"


def to_m(a):
    if isinstance(a, Low):
        return minitx.tensor(a.a, requires_grad=not a.nograd)
    if isinstance(a, np.ndarray):
        return minitx.tensor(a)
    return a


def to_t(a):
    if isinstance(a, Low):
        return torch.tensor(a.a.astype(np.float32)).to(TORCH[a.dtype]).requires_grad_(not a.nograd)
    if isinstance(a, np.ndarray):
        return torch.tensor(a)
    return a


def flat(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(flat(o))
        return res
    return [out]


def dname(o):
    if isinstance(o, minitx.Tensor):
        return o.dtype.name
    if isinstance(o, torch.Tensor):
        return str(o.dtype).replace("torch.", "")
    return type(o).__name__


def as_np(o):
    """The values: 16-bit floats as their own NumPy dtype (ml_dtypes' bfloat16), others as they are."""
    if isinstance(o, minitx.Tensor):
        return np.asarray(o.numpy())
    if isinstance(o, torch.Tensor):
        o = o.detach()
        if o.dtype in (torch.float16, torch.bfloat16):
            name = str(o.dtype).replace("torch.", "")
            return o.view(torch.int16).numpy().view(NP[name])
        return o.numpy()
    return np.asarray(o)


def _ordered(a):
    """16-bit floats as integers in the order of their values (+0 and -0 both 0): the distance
    between two is the number of units in the last place between them."""
    u = a.view(np.uint16).astype(np.int64)
    return np.where(u & 0x8000, -(u & 0x7FFF), u)


def ulps(a, b):
    """Elementwise units in the last place between two arrays of one 16-bit dtype; -1 where one
    is NaN and the other not (or inf against finite, counted as far), 0 where both NaN."""
    na, nb = np.isnan(a.astype(np.float32)), np.isnan(b.astype(np.float32))
    d = np.abs(_ordered(a) - _ordered(b))
    d = np.where(na & nb, 0, d)
    fa, fb = np.isfinite(a.astype(np.float32)), np.isfinite(b.astype(np.float32))
    return np.where((na != nb) | (fa != fb), -1, d)


def compare(an, bn, tol, loose=False):
    """'' (the same bits, zeros' signs aside), 'z' (a zero's sign differs), 'u' (within one unit
    in the last place), 'n' (loose: within 8 units of the array's largest magnitude), or the
    difference described: 'nonfinite' (NaN or inf where the other is not), 'N units'."""
    if an.shape != bn.shape:
        return f"shape {an.shape} vs torch {bn.shape}"
    if an.dtype.name in ("float16", "bfloat16") and an.dtype == bn.dtype:
        d = ulps(an, bn)
        if (d < 0).any():
            return "nonfinite"
        worst = int(d.max()) if d.size else 0
        if worst == 0:
            za = np.signbit(an.astype(np.float32)) != np.signbit(bn.astype(np.float32))
            return "z" if (za & ~np.isnan(an.astype(np.float32))).any() else ""
        if worst <= 1:
            return "u"
        a32, b32 = an.astype(np.float64), bn.astype(np.float64)
        fin = np.isfinite(b32)
        scale = np.abs(b32[fin]).max() if fin.any() else 0.0
        eps = 2.0 ** -10 if an.dtype.name == "float16" else 2.0 ** -7
        with np.errstate(all="ignore"):
            close = np.all(np.abs(a32 - b32)[fin] <= 8 * eps * scale)
        if loose and close:
            return "n"
        return f"{worst} units"
    if an.dtype.kind in "biu" or bn.dtype.kind in "biu":
        return "" if np.array_equal(an, bn) else "values"
    a64, b64 = an.astype(np.float64), bn.astype(np.float64)
    ok = np.allclose(a64, b64, rtol=1e-6, atol=1e-30, equal_nan=True) and np.array_equal(np.isnan(a64), np.isnan(b64))
    return "" if ok else "values"


def where_differ(an, bn, inputs=()):
    """The first entries that differ: index, minitx's value, PyTorch's."""
    a, b = an.astype(np.float64).ravel(), bn.astype(np.float64).ravel()
    diff = ~((a == b) | (np.isnan(a) & np.isnan(b)))
    if not diff.any():
        diff = np.signbit(a) != np.signbit(b)
    idx = np.flatnonzero(diff)[:4]
    return ", ".join(f"[{i}] {a[i]:.6g} vs torch {b[i]:.6g}" for i in idx) + (
        f" (of {int(diff.sum())})" if diff.sum() > 4 else "")


def short(e):
    return f"{type(e).__name__}: {e}".replace("\n", " ")[:240]


def names_op(msg, names):
    low = msg.lower()
    return any(re.search(re.escape(n.lower()) + r"\w*:", low) for n in names)


def show(a):
    return np.array2string(np.asarray(a).astype(np.float64).ravel()[:6], precision=5)


def check(op, mfn, tfn, args, label="", names=None, grad=True, tol=0, compare_values=True):
    """mfn(*minitx args) vs tfn(*torch args). tol 0: values bit for bit (one unit apart: tagged u);
    tol 1 (LOOSE, PyTorch adds or rounds in another order): within one unit, or 8 units of the
    array's largest magnitude (tagged n). Gradients: within one unit, or tagged g within 8 units of
    the array's largest magnitude (PyTorch's autograd formulas round at each step)."""
    STATS["calls"] += 1
    STATS["ops"].add(op)
    names = names or [op]
    call = ", ".join(repr(a) if not isinstance(a, np.ndarray) else f"{a.dtype.name}{a.shape}" for a in args)
    call += f" | {label}" if label else ""
    m_in, t_in = [to_m(a) for a in args], [to_t(a) for a in args]
    m_err = t_err = None
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            with np.errstate(all="warn"):
                m_out = mfn(*m_in)
        except Skip:
            return
        except Exception as e:  # noqa: BLE001
            m_err = e
            m_tb = traceback.format_exc()
        m_warn = [str(x.message)[:100] for x in w if issubclass(x.category, RuntimeWarning)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_out = tfn(*t_in)
    except Skip:
        return
    except Exception as e:  # noqa: BLE001
        t_err = e
    if m_warn:
        RESULTS.append(("w", op, call, "numpy RuntimeWarning leaked: " + "; ".join(sorted(set(m_warn)))[:200]))
    if m_err is not None:
        named = names_op(str(m_err), names)
        where = m_tb.strip().splitlines()[-3].strip()[:100] if not named else ""
        if t_err is None:
            RESULTS.append(("b" if named else "bc", op, call, f"minitx {short(m_err)} {where}| torch ok"))
        elif not named:
            RESULTS.append(("c", op, call, f"minitx {short(m_err)} {where}| torch also raises {short(t_err)[:100]}"))
        return
    if t_err is not None:
        RESULTS.append(("d", op, call, f"minitx ok, torch {short(t_err)[:160]}"))
        return
    mo, to = flat(m_out), flat(t_out)
    if len(mo) != len(to):
        RESULTS.append(("a", op, call, f"output count {len(mo)} vs torch {len(to)}"))
        return
    bad, near = [], []
    for i, (a, b) in enumerate(zip(mo, to)):
        if isinstance(a, minitx.Tensor) and isinstance(b, torch.Tensor) and dname(a) != dname(b):
            bad.append(f"out{i} dtype {dname(a)} vs torch {dname(b)}")
            continue
        an, bn = as_np(a), as_np(b)
        if not compare_values:
            continue
        verdict = compare(an, bn, tol, loose=tol > 0)
        if verdict in ("z", "u", "n"):
            if not (verdict == "u" and tol > 0):
                near.append((verdict, f"out{i} {where_differ(an, bn)}"))
        elif verdict:
            bad.append(f"out{i} {verdict}: {where_differ(an, bn) if verdict != 'values' or an.size < 50 else ''}"
                       if an.shape == bn.shape else f"out{i} {verdict}")
    if bad:
        RESULTS.append(("a", op, call, "; ".join(bad)))
        return
    for tag in ("n", "u", "z"):
        if any(t == tag for t, _ in near):
            RESULTS.append((tag, op, call, "; ".join(d for t, d in near if t == tag)))
            break
    if not grad:
        return
    pairs = [(a, b) for a, b in zip(mo, to) if isinstance(b, torch.Tensor) and b.requires_grad]
    if not pairs:
        return
    rng = np.random.default_rng(STATS["calls"])  # dy drawn per call: one call's change moves no other's
    gs = [Low(rng.standard_normal(tuple(b.shape)), dname(b)) if dname(b) in NP else
          rng.standard_normal(tuple(b.shape)).astype(as_np(b).dtype) for _, b in pairs]
    try:
        torch.autograd.backward([b for _, b in pairs], [to_t(g).detach() for g in gs])
    except Exception as e:  # noqa: BLE001
        RESULTS.append(("d", op, call, f"backward: minitx not tried, torch {short(e)[:120]}"))
        return
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with np.errstate(all="warn"):
                total = None
                for (a, _), g in zip(pairs, gs):
                    if not (isinstance(a, minitx.Tensor) and a.requires_grad):
                        raise RuntimeError("minitx output does not require grad")
                    gm = minitx.tensor(g.a if isinstance(g, Low) else g)
                    if len(pairs) == 1:
                        a.backward(gm)
                    else:
                        term = F.sum(F.mul(a, gm))
                        total = term if total is None else F.add(total, term)
                if total is not None:
                    total.backward()
            bw_warn = [str(x.message)[:100] for x in w if issubclass(x.category, RuntimeWarning)]
    except Exception as e:  # noqa: BLE001
        RESULTS.append(("b" if names_op(str(e), names) else "bc", op, call, f"backward: minitx {short(e)}"))
        return
    if bw_warn:
        RESULTS.append(("w", op, call, "backward numpy RuntimeWarning: " + "; ".join(sorted(set(bw_warn)))[:200]))
    gbad, gnear = [], []
    for i, (a, b) in enumerate(zip(m_in, t_in)):
        if not (isinstance(b, torch.Tensor) and b.requires_grad):
            continue
        if a.grad is None and b.grad is None:
            continue
        if a.grad is None or b.grad is None:
            gbad.append(f"grad{i} {'minitx' if a.grad is None else 'torch'} has none")
            continue
        if dname(a.grad) != dname(b.grad):
            gbad.append(f"grad{i} dtype {dname(a.grad)} vs torch {dname(b.grad)}")
            continue
        an, bn = as_np(a.grad), as_np(b.grad)
        verdict = compare(an, bn, 1, loose=True)
        if verdict == "n":
            gnear.append(f"grad{i} {where_differ(an, bn)}")
        elif verdict not in ("", "z", "u"):
            gbad.append(f"grad{i} {verdict}: {where_differ(an, bn)}")
    if gbad:
        RESULTS.append(("a", op, call, "; ".join(gbad)))
    elif gnear:
        RESULTS.append(("g", op, call, "; ".join(gnear)))


ORDER = {"a": 0, "bc": 1, "c": 2, "u": 3, "n": 4, "g": 5, "z": 6, "b": 7, "w": 8, "d": 9}


def report():
    return [f"[{t}] {op}({call}): {detail}" for t, op, call, detail in
            sorted(RESULTS, key=lambda r: (ORDER[r[0]], r[1]))]
