"""Random sequences of views, recorded and unrecorded writes and reads, run side by side in minitx
and PyTorch: after each sequence every tensor's values and requires_grad, and then the parameters'
gradients, must agree (minitx.autograd.writes). A sequence PyTorch refuses, or one where minitx
refuses what docs/ops.md says it refuses, is left out. A failure names the seed; ``run(seed)``
then gives the steps in its log (``LOG``)."""
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_reference import import_torch

import minitx

torch = import_torch()

LOG = []  # the steps of the last sequence run, as text
DETACH = False  # detach any tensor of the pool (else only the starting ones: a detached view keeps its values)
BAD = True  # include writes that fail (bad shapes, indices): nothing may change


class Skip(Exception):
    """A sequence PyTorch refuses, or minitx by a documented refusal: not compared."""


def _cl(v):
    return v.clone() if isinstance(v, torch.Tensor) else v


def mt_t(a, rg=False):
    return minitx.tensor(np.array(a), dtype="float64", requires_grad=rg)


def run(seed, nsteps=14, verbose=False):
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    log = LOG
    log.clear()
    P0 = [nrng.standard_normal((3, 4)) * 0.5 for _ in range(2)]
    Pm = [mt_t(p, True) for p in P0]
    Pt = [torch.tensor(p, requires_grad=True, dtype=torch.float64) for p in P0]
    pool = []  # (name, m, t)
    pool.append(("x", Pm[0] * 1.0, Pt[0] * 1.0))
    pool.append(("b", minitx.zeros(3, 4, dtype="float64"), torch.zeros(3, 4, dtype=torch.float64)))
    if rng.random() < 0.5:
        pool.append(("y", Pm[1].T * 2.0, Pt[1].T * 2.0))  # a column-major non-leaf
    if rng.random() < 0.5:
        pool.append(("o", minitx.zeros(12, dtype="float64").reshape(3, 4), torch.zeros(12, dtype=torch.float64).reshape(3, 4)))  # a view of a temporary
    lossm, losst = None, None
    n = 0

    def both(desc, fm, ft):
        log.append(desc)
        te = me = None
        try:
            rt = ft()
        except Exception as e:
            te = e
        try:
            rm = fm()
        except Exception as e:
            me = e
        if te is not None and me is not None:
            log.append("  (both raised)")
            return None, None
        if te is not None:
            raise Skip(desc + " torch raises: " + str(te)[:80])
        if me is not None and "detached from" in str(me):
            raise Skip("deliberate refusal (detached)")
        if me is not None:
            raise AssertionError(f"{desc}: minitx raises, torch does not: {type(me).__name__}: {me}")
        return rm, rt

    def value_of(shape):
        """(desc, fm, ft) making a value of this shape."""
        k = rng.randrange(2)
        c = round(rng.uniform(-2, 2), 2)
        r = rng.random()
        if r < 0.3:
            return f"P{k}.sum()*{c}", (lambda: (Pm[k] * c).sum()), (lambda: (Pt[k] * c).sum())
        size = int(np.prod(shape))
        if r < 0.55 and size <= 12:
            return (f"P{k}.reshape(-1)[:{size}].reshape({shape})*{c}",
                    lambda: (Pm[k].reshape(-1)[:size].reshape(shape) * c),
                    lambda: (Pt[k].reshape(-1)[:size].reshape(shape) * c))
        cands = [(nm, m, t) for nm, m, t in pool if tuple(t.shape) == tuple(shape)]
        if r < 0.85 and cands:
            nm, m, t = rng.choice(cands)
            return f"{nm}*{c}", (lambda: m * c), (lambda: t * c)
        if cands and r < 0.95:
            nm, m, t = rng.choice(cands)
            return f"{nm}(itself)", (lambda: m), (lambda: t)
        return f"const{c}", (lambda: c), (lambda: c)

    def write_into(name, m, t, idx, target):
        """m[idx] = t[idx] = a value of the shape ``target``, in each library."""
        d, vm_, vt_ = value_of(target)

        def fm():
            m[idx] = vm_()

        def ft():
            t[idx] = _cl(vt_())
        both(f"{name}[{idx!r}] = {d}", fm, ft)

    for step in range(nsteps):
        r = rng.random()
        name, m, t = rng.choice(pool)
        shape = tuple(t.shape)
        nd = len(shape)
        if r < 0.35:  # a view
            opts = []
            if nd >= 1 and shape[0] > 1:
                i = rng.randrange(shape[0])
                opts.append((f"{name}[{i}]", lambda m, i=i: m[i], lambda t, i=i: t[i]))
                a = rng.randrange(shape[0]); b = rng.randrange(a + 1, shape[0] + 1)
                opts.append((f"{name}[{a}:{b}]", lambda m, a=a, b=b: m[a:b], lambda t, a=a, b=b: t[a:b]))
            if nd == 2:
                j = rng.randrange(shape[1])
                opts.append((f"{name}[:,{j}]", lambda m, j=j: m[:, j], lambda t, j=j: t[:, j]))
                opts.append((f"{name}.T", lambda m: m.T, lambda t: t.T))
                opts.append((f"{name}.swapaxes(0,1)", lambda m: m.swapaxes(0, 1), lambda t: t.swapaxes(0, 1)))
                if t.is_contiguous() and m.data.flags.c_contiguous:
                    opts.append((f"{name}.reshape(-1)", lambda m: m.reshape(-1), lambda t: t.reshape(-1)))
            if nd <= 2:
                opts.append((f"{name}.unsqueeze(0)", lambda m: m.unsqueeze(0), lambda t: t.unsqueeze(0)))
            if nd >= 1 and 1 in shape:
                opts.append((f"{name}.squeeze()", lambda m: m.squeeze(), lambda t: t.squeeze()))
            if (DETACH or name in ('x', 'b', 'y')) and rng.random() < 0.3:
                opts.append((f"{name}.detach()", lambda m: m.detach(), lambda t: t.detach()))
            if not opts:
                continue
            desc, fm, ft = rng.choice(opts)
            n += 1
            nm = f"v{n}"
            vm, vt = both(f"{nm} = {desc}", lambda: fm(m), lambda: ft(t))
            pool.append((nm, vm, vt))
        elif r < 0.75:  # a write
            kind = rng.choice(["setitem", "setitem", "mul_", "add_", "iadd", "sin_", "zero_", "copy_", "nograd",
                               "setadv"] + (["bad"] * 3 if BAD else []))
            if kind == "bad":
                sub = rng.choice(["shape", "index", "addshape", "addshape_view"])
                k = rng.randrange(2)
                if sub == "shape":
                    def fm(): m[...] = Pm[k].reshape(-1)[:5] * 2
                    def ft(): t[...] = Pt[k].reshape(-1)[:5] * 2
                elif sub == "index":
                    def fm(): m[7] = Pm[k].sum() * 2
                    def ft(): t[7] = Pt[k].sum() * 2
                elif sub == "addshape":
                    def fm(): m.add_(Pm[k].reshape(-1)[:5])
                    def ft(): t.add_(Pt[k].reshape(-1)[:5])
                else:
                    def fm():
                        mm = m
                        mm += Pm[k].reshape(-1)[:7].reshape(7, 1)
                    def ft():
                        tt = t
                        tt += Pt[k].reshape(-1)[:7].reshape(7, 1)
                both(f"BAD {sub} into {name}", fm, ft)
                continue
            if kind in ("setitem", "nograd"):
                if nd == 0:
                    idx = ...
                else:
                    idx = rng.choice([rng.randrange(shape[0]), slice(rng.randrange(shape[0]), None), ...])
                    if nd == 2 and rng.random() < 0.4:
                        idx = (slice(None), rng.randrange(shape[1]))
                target = np.zeros(shape)[idx].shape
                if kind == "nograd":
                    c = round(rng.uniform(-1, 1), 2)

                    def fm(m=m, idx=idx, c=c):
                        with minitx.no_grad():
                            m[idx] = c

                    def ft(t=t, idx=idx, c=c):
                        with torch.no_grad():
                            t[idx] = c
                    both(f"no_grad: {name}[{idx!r}] = {c}", fm, ft)
                    continue
                write_into(name, m, t, idx, target)
            elif kind == "setadv":
                if nd == 0:
                    continue
                idx = [0, shape[0] - 1] if shape[0] > 1 else [0]
                write_into(name, m, t, idx, np.zeros(shape)[idx].shape)
            elif kind == "mul_":
                c = round(rng.uniform(-2, 2), 2)
                both(f"{name}.mul_({c})", lambda: m.mul_(c), lambda: t.mul_(c))
            elif kind == "sin_":
                both(f"{name}.sin_()", lambda: m.sin_(), lambda: t.sin_())
            elif kind == "zero_":
                both(f"{name}.zero_()", lambda: m.zero_(), lambda: t.zero_())
            elif kind in ("add_", "iadd", "copy_"):
                d, vm_, vt_ = value_of(shape)
                if kind == "add_":
                    both(f"{name}.add_({d})", lambda: m.add_(vm_()), lambda: t.add_(_cl(vt_())))
                elif kind == "copy_":
                    def fm():
                        v = vm_()
                        m.copy_(v if isinstance(v, minitx.Tensor) else minitx.tensor(v, dtype="float64"))

                    def ft():
                        v = _cl(vt_())
                        t.copy_(v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=torch.float64))
                    both(f"{name}.copy_({d})", fm, ft)
                else:
                    def fm(m=m):
                        mm = m
                        mm += vm_()

                    def ft(t=t):
                        tt = t
                        tt += _cl(vt_())
                    both(f"{name} += {d}", fm, ft)
        elif r < 0.9:  # a read into the loss
            C = nrng.standard_normal(shape)
            if rng.random() < 0.4:
                pm, pt = both(f"loss += ({name} * C).sum()", lambda: (m * mt_t(C)).sum(), lambda: (t * torch.tensor(C)).sum())
            else:
                c = round(rng.uniform(-2, 2), 2)
                pm, pt = both(f"loss += ({name} + C).sum()*{c}", lambda: (m + mt_t(C)).sum() * c, lambda: (t + torch.tensor(C)).sum() * c)
            lossm = pm if lossm is None else lossm + pm
            losst = pt if losst is None else losst + pt
        else:  # compare values now
            log.append(f"check {name}")
            a, b = m.numpy(), t.detach().numpy()
            if not np.allclose(a, b):
                raise AssertionError(f"value of {name} differs:\nminitx {a}\ntorch {b}")
    # final: values of all
    for name, m, t in pool:
        a, b = m.numpy(), t.detach().numpy()
        if not np.allclose(a, b):
            raise AssertionError(f"final value of {name} differs:\nminitx {a}\ntorch {b}")
        if bool(m.requires_grad) != bool(t.requires_grad):
            raise AssertionError(f"requires_grad of {name}: minitx {m.requires_grad} torch {t.requires_grad}")
    if lossm is None or not losst.requires_grad:
        return log
    try:
        losst.backward()
    except RuntimeError as e:
        raise Skip("torch backward: " + str(e)[:80])
    try:
        lossm.backward()
    except RuntimeError as e:
        if "modified in place after the forward" in str(e):
            raise Skip("minitx conservative backward refusal")
        raise
    for k in range(2):
        gt = Pt[k].grad
        gm = Pm[k].grad
        gt = np.zeros((3, 4)) if gt is None else gt.numpy()
        gm = np.zeros((3, 4)) if gm is None else gm.numpy()
        if not np.allclose(gt, gm):
            raise AssertionError(f"grad P{k} differs:\nminitx {gm}\ntorch {gt}")
    return log


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([14, 30]))
def test_random_views_and_writes_agree_with_pytorch(seed, steps):
    try:
        run(seed, steps)
    except Skip:
        pass
