"""Core of the edge sweep: run one call in minitx and in PyTorch, compare, record findings."""
import re
import sys
import traceback
import warnings

import numpy as np
import torch

sys.path.insert(0, "/work/main")
import minitx  # noqa: E402
import minitx.functional as F  # noqa: E402

torch.set_default_dtype(torch.float64)
RNG = np.random.default_rng(0)

RESULTS = []  # (category, op, label, detail)
STATS = {"calls": 0, "ops": set()}


class Skip(Exception):
    pass


class NoGrad:
    """An array passed as a tensor that takes no gradient."""

    def __init__(self, a):
        self.a = a

    def __repr__(self):
        return f"nograd {self.a.dtype.name}{tuple(self.a.shape)}"


def to_m(a, grad):
    if isinstance(a, NoGrad):
        return minitx.tensor(a.a)
    if isinstance(a, np.ndarray):
        return minitx.tensor(a, requires_grad=bool(grad and a.dtype.kind == "f"))
    return a


def to_t(a, grad):
    if isinstance(a, NoGrad):
        return torch.tensor(a.a)
    if isinstance(a, np.ndarray):
        return torch.tensor(a, requires_grad=bool(grad and a.dtype.kind == "f"))
    return a


def flat_outputs(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(flat_outputs(o))
        return res
    return [out]


def as_np(o):
    if isinstance(o, minitx.Tensor):
        return np.asarray(o.numpy())
    if isinstance(o, torch.Tensor):
        return o.detach().numpy()
    return np.asarray(o)


def kind(a):
    k = a.dtype.kind
    return "i" if k == "u" else k


def same_values(a, b, rtol=1e-9, atol=1e-12):
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "b" or b.dtype.kind == "b":
        return np.array_equal(a.astype(bool), b.astype(bool))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return bool(np.allclose(a64, b64, rtol=rtol, atol=atol, equal_nan=True)) and bool(
        np.array_equal(np.isnan(a64), np.isnan(b64)))


def short(e):
    s = f"{type(e).__name__}: {e}"
    s = s.replace("\n", " ")
    return s[:260]


def names_op(msg, names):
    low = msg.lower()
    return any(re.search(re.escape(n.lower()) + r"\w*:", low) for n in names)


def describe(arrays, extra):
    parts = []
    for a in arrays:
        if isinstance(a, np.ndarray):
            parts.append(f"{a.dtype.name}{tuple(a.shape)}")
        else:
            parts.append(repr(a))
    s = ", ".join(parts)
    if extra:
        s += " | " + extra
    return s


def check(op, mfn, tfn, arrays, label="", names=None, grad=True, rtol=1e-9, atol=1e-12, compare_values=True,
          grad_rtol=None):
    """mfn(*minitx args) vs tfn(*torch args). arrays: numpy arrays (become tensors) or other args."""
    STATS["calls"] += 1
    STATS["ops"].add(op)
    names = names or [op]
    call = describe(arrays, label)
    m_in = [to_m(a, grad) for a in arrays]
    t_in = [to_t(a, grad) for a in arrays]
    m_err = t_err = None
    m_warn = []
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
        m_warn = [str(x.message) for x in w if issubclass(x.category, RuntimeWarning)
                  and not names_op(str(x.message), names)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_out = tfn(*t_in)
    except Skip:
        return
    except Exception as e:  # noqa: BLE001
        t_err = e
    if m_err is not None:
        msg = short(m_err)
        named = names_op(str(m_err), names)
        if t_err is None:
            RESULTS.append(("b" if named else "bc", op, call, f"minitx {msg} | torch ok"))
        elif not named:
            RESULTS.append(("c", op, call, f"minitx {msg} | torch also raises {short(t_err)[:120]}"))
        return
    if t_err is not None:
        RESULTS.append(("d", op, call, f"minitx ok, torch {short(t_err)[:160]}"))
        return
    mo, to = flat_outputs(m_out), flat_outputs(t_out)
    if len(mo) != len(to):
        RESULTS.append(("a", op, call, f"output count {len(mo)} vs torch {len(to)}"))
        return
    bad = []
    for i, (a, b) in enumerate(zip(mo, to)):
        an, bn = as_np(a), as_np(b)
        if an.shape != bn.shape:
            bad.append(f"out{i} shape {an.shape} vs torch {bn.shape}")
        elif kind(an) != kind(bn):
            bad.append(f"out{i} dtype {an.dtype} vs torch {bn.dtype}")
        elif compare_values and not same_values(an, bn, rtol, atol):
            bad.append(f"out{i} values {np.array2string(an.ravel()[:6], precision=4)} vs torch "
                       f"{np.array2string(bn.ravel()[:6], precision=4)}")
    if m_warn:
        RESULTS.append(("w", op, call, "numpy RuntimeWarning leaked: " + "; ".join(sorted(set(m_warn)))[:200]))
    if bad:
        RESULTS.append(("a", op, call, "; ".join(bad)))
        return
    if not grad:
        return
    # gradients: the same random upstream gradient for every float output that has a graph in torch
    pairs = [(a, b) for a, b in zip(mo, to) if isinstance(b, torch.Tensor) and b.requires_grad]
    if not pairs:
        return
    gs = [RNG.standard_normal(as_np(b).shape) for _, b in pairs]
    try:
        torch.autograd.backward([b for _, b in pairs], [torch.tensor(g) for g in gs])
    except Exception as e:  # noqa: BLE001
        RESULTS.append(("d", op, call, f"backward: minitx not tried, torch {short(e)[:120]}"))
        return
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with np.errstate(all="warn"):
                mpairs = [(a, g) for (a, _), g in zip(pairs, gs)]
                if len(mpairs) == 1:
                    a, g = mpairs[0]
                    if not (isinstance(a, minitx.Tensor) and a.requires_grad):
                        raise RuntimeError("minitx output does not require grad")
                    a.backward(g)
                else:
                    total = None
                    for a, g in mpairs:
                        if not (isinstance(a, minitx.Tensor) and a.requires_grad):
                            continue
                        term = F.sum(F.mul(a, minitx.tensor(g)))
                        total = term if total is None else F.add(total, term)
                    total.backward()
            bw_warn = [str(x.message) for x in w if issubclass(x.category, RuntimeWarning)
                       and not names_op(str(x.message), names)]
    except Exception as e:  # noqa: BLE001
        RESULTS.append(("bc" if not names_op(str(e), names) else "b", op, call, f"backward: minitx {short(e)}"))
        return
    if bw_warn:
        RESULTS.append(("w", op, call, "backward numpy RuntimeWarning: " + "; ".join(sorted(set(bw_warn)))[:200]))
    gbad = []
    for i, (a, b) in enumerate(zip(m_in, t_in)):
        if not isinstance(b, torch.Tensor) or not b.requires_grad:
            continue
        tg = b.grad
        mg = a.grad
        if tg is None and mg is None:
            continue
        tgn = np.zeros(b.shape) if tg is None else tg.numpy()
        mgn = np.zeros(tuple(a.shape)) if mg is None else as_np(mg)
        if mgn.shape != tgn.shape:
            gbad.append(f"grad{i} shape {mgn.shape} vs torch {tgn.shape}")
        elif not same_values(mgn, tgn, grad_rtol or rtol * 10, atol * 10):
            gbad.append(f"grad{i} {np.array2string(mgn.ravel()[:6], precision=4)} vs torch "
                        f"{np.array2string(tgn.ravel()[:6], precision=4)}")
    if gbad:
        RESULTS.append(("a", op, call, "; ".join(gbad)))


def rand(shape, low=None, high=None, dtype=np.float64):
    if dtype in (np.int64, np.int32):
        return np.asarray(RNG.integers(low if low is not None else -5, high if high is not None else 6, size=shape)).astype(dtype)
    if dtype == np.bool_:
        return np.asarray(RNG.random(shape) < 0.5)
    if low is not None:
        return np.asarray(RNG.uniform(low, high, size=shape)).astype(dtype)
    return np.asarray(RNG.standard_normal(shape)).astype(dtype)


def report():
    order = {"a": 0, "bc": 1, "c": 2, "b": 3, "w": 4, "d": 5}
    out = []
    for cat, op, call, detail in sorted(RESULTS, key=lambda r: (order[r[0]], r[1])):
        out.append(f"[{cat}] {op}({call}): {detail}")
    return out
