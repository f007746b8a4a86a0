"""Differential fuzzer: random small programs of writes, views, raw arrays, saving ops, hooks,
no_grad writes, in-place methods and backward, each run twice -- the new path, and every recorded
write forced into a copy (tests/test_writes_in_place.py's fixture) -- comparing every logged value
bit for bit and every error's type and message.

    python tools/fuzz_writes.py [n_programs] [first_seed]
    RECORDED_ONLY=1 python tools/fuzz_writes.py ...   # no write outside the graph

Prints each mismatching seed with the first differing log entry; a summary at the end. With
RECORDED_ONLY=1 every program must agree bit for bit. Without it, writes not recorded (no_grad,
raw arrays) differ where minitx/autograd/writes.py says they do: a buffer written in place is
refused backward by every step's op, and a raw array or detached tensor of a view of x still
shares x's memory after a write in place. ``rows`` is a loop writing x's rows from each other,
keeping their views (outs.append(h[t])).
"""
import gc
import os
import sys
import traceback
from collections import Counter

import numpy as np

import minitx
import minitx.functional as F
from minitx.ops import indexing

_REAL = indexing.in_place
DECISIONS = Counter()


RECORDED_ONLY = os.environ.get("RECORDED_ONLY") == "1"  # no write outside the graph (no_grad, raw)


def _counting(x, index):
    got = _REAL(x, index)
    DECISIONS[got] += 1
    return got


# ------------------------------------------------------------------------------ generation
SHAPES = [(4, 3), (3, 2, 2), (5,), (), (2, 3), (1, 4), (4, 3), (3, 2, 2), (6,), (0, 3)]
DTYPES = ["float64"] * 6 + ["float32", "float16", "bfloat16"]
ORIGINS = ["zeros", "tensor", "from_numpy_held", "from_numpy", "nonleaf", "Tensor_wrap", "nonleaf_T_clone"]


def rand_index(rng, shape):
    """A random basic index for an array of this shape (sometimes boolean / advanced)."""
    if rng.random() < 0.06:
        return "bool"
    if rng.random() < 0.04:
        return "adv"
    parts, axis = [], 0
    nd = len(shape)
    used_ellipsis = False
    k = int(rng.integers(0, nd + 1)) if nd else int(rng.integers(0, 2))
    while len(parts) < k:
        r = rng.random()
        if r < 0.08:
            parts.append(None)
            continue
        if r < 0.14 and not used_ellipsis:
            parts.append(Ellipsis)
            used_ellipsis = True
            axis = nd  # remaining axes are taken by the ellipsis; later parts index from the end
            continue
        if axis >= nd:
            break
        n = shape[axis]
        if r < 0.45 and n > 0:
            parts.append(int(rng.integers(-n, n)))
        else:
            start = None if rng.random() < 0.3 else int(rng.integers(-n - 1, n + 2))
            stop = None if rng.random() < 0.3 else int(rng.integers(-n - 1, n + 2))
            step = rng.choice([None, 1, 2, -1, -2, 3]) if rng.random() < 0.5 else None
            parts.append(slice(start, stop, None if step is None else int(step)))
        axis += 1
    if used_ellipsis:
        # keep it simple: nothing after an ellipsis but None
        i = parts.index(Ellipsis)
        parts = parts[:i + 1] + [p for p in parts[i + 1:] if p is None]
    if len(parts) == 1 and rng.random() < 0.5:
        return parts[0]
    return tuple(parts)


def concrete_index(index, arr_shape, rng_state):
    """Turn 'bool'/'adv' into a concrete advanced index for this shape."""
    if index == "bool":
        rng = np.random.default_rng(rng_state)
        return rng.random(arr_shape) < 0.5
    if index == "adv":
        if not arr_shape or arr_shape[0] == 0:
            return ()
        rng = np.random.default_rng(rng_state)
        return (rng.integers(0, arr_shape[0], size=2),)
    return index


def gen_program(seed, n_steps=None):
    rng = np.random.default_rng(seed)
    shape = SHAPES[int(rng.integers(len(SHAPES)))]
    dtype = DTYPES[int(rng.integers(len(DTYPES)))]
    origin = ORIGINS[int(rng.integers(len(ORIGINS)))]
    steps = []
    n_steps = n_steps or int(rng.integers(3, 20))
    for _ in range(n_steps):
        kind = rng.choice(["set", "set", "set", "set", "set_ng", "method", "view", "view", "raw", "save", "save",
                           "del", "hook", "retain", "rawwrite", "read", "detach", "wrap", "gc", "set_view",
                           "set_self", "method_ng", "iadd", "save_part", "save_part", "raw_view", "set_ng", "rows", "rows"])
        if RECORDED_ONLY and kind in ("set_ng", "method_ng", "rawwrite"):
            kind = {"set_ng": "set", "method_ng": "method", "rawwrite": "read"}[str(kind)]
        steps.append((str(kind), int(rng.integers(0, 2**31)), float(rng.standard_normal())))
    end = rng.choice(["backward", "backward_twice", "grad", "none", "backward_sgd"])
    check = bool(rng.random() < 0.15)
    anomaly = bool(rng.random() < 0.05)
    return dict(shape=shape, dtype=dtype, origin=origin, steps=steps, end=str(end), seed=seed, check=check,
                anomaly=anomaly)


# ------------------------------------------------------------------------------ execution
class Log(list):
    def val(self, label, t):
        try:
            if isinstance(t, minitx.Tensor):
                a = np.array(t.data, copy=True)  # (reads: a stale view is made again)
            else:
                a = np.array(t, copy=True)
            self.append((label, a.shape, str(a.dtype), a.tobytes()))
        except Exception as e:  # noqa: BLE001
            self.append((label, "error", type(e).__name__, str(e)))

    def err(self, label, e):
        self.append((label, "raised", type(e).__name__, str(e)))


def _make_x(prog, rng):
    shape, dtype, origin = prog["shape"], prog["dtype"], prog["origin"]
    held = {}
    base = rng.standard_normal(shape)
    if origin == "zeros":
        x = minitx.zeros(*shape, dtype=dtype) if shape else minitx.zeros((), dtype=dtype)
    elif origin == "tensor":
        x = minitx.tensor(base, dtype=dtype)
    elif origin in ("from_numpy_held", "from_numpy"):
        arr = np.asarray(minitx.tensor(base, dtype=dtype).data).copy()
        x = minitx.from_numpy(arr)
        if origin == "from_numpy_held":
            held["np"] = arr
        del arr
    elif origin == "Tensor_wrap":
        x = minitx.Tensor(minitx.tensor(base, dtype=dtype).data.copy())
    elif origin == "nonleaf":
        w = minitx.tensor(base, dtype=dtype, requires_grad=True)
        held["wx"] = w
        x = w * 1
    else:  # nonleaf_T_clone: a non-leaf whose array is its own (clone of a transpose keeps F order)
        w = minitx.tensor(base, dtype=dtype, requires_grad=True)
        held["wx"] = w
        x = (w.T * 1).T.clone() if len(shape) >= 2 else w * 1
    return x, held


def execute(prog, copy):
    indexing.in_place = (lambda x, index: False) if copy else _counting
    try:
        return _execute(prog)
    finally:
        indexing.in_place = _REAL


def _execute(prog):
    log = Log()
    rng = np.random.default_rng(prog["seed"] + 7)
    dtype = prog["dtype"]
    w0 = minitx.tensor(1.5, dtype=dtype, requires_grad=True)
    w1 = minitx.tensor(-0.75, dtype=dtype, requires_grad=True)
    x, held = _make_x(prog, rng)
    leaves = [w0, w1] + ([held["wx"]] if "wx" in held else [])
    tensors = [x]          # x and tensors showing it (views, detached, wraps)
    raws = [held["np"]] if "np" in held else []
    results = []           # outputs of ops that saved something
    hook_log = []
    retained = []
    ctxs = []
    if prog["check"]:
        ctxs.append(minitx.autograd.check_saved_arrays())
    if prog["anomaly"]:
        ctxs.append(minitx.autograd.detect_anomaly())
    for c in ctxs:
        c.__enter__()
    try:
        for i, (kind, s, r) in enumerate(prog["steps"]):
            srng = np.random.default_rng(s)
            label = f"step{i}:{kind}"
            try:
                _step(kind, srng, r, x, tensors, raws, results, hook_log, retained, w0, w1, dtype, log, label)
            except Exception as e:  # noqa: BLE001
                log.err(label, e)
        # the end: values of everything, then gradients
        log.val("x", x)
        for j, t in enumerate(tensors):
            log.val(f"tensor{j}", t)
        for j, a in enumerate(raws):
            log.val(f"raw{j}", a)
        for j, t in enumerate(results):
            log.val(f"result{j}", t)
        end = prog["end"]
        if end != "none":
            try:
                terms = [t for t in tensors + results if isinstance(t, minitx.Tensor) and t.requires_grad]
                loss = None
                for j, t in enumerate(terms):
                    c = minitx.tensor(np.random.default_rng(j).standard_normal(t.shape), dtype=t.dtype)
                    term = (t * c).sum().astype("float64")
                    loss = term if loss is None else loss + term
                if loss is None:
                    log.append(("loss", "none"))
                elif end == "grad":
                    gs = minitx.autograd.grad(loss, leaves, allow_unused=True)
                    for j, g in enumerate(gs):
                        log.val(f"agrad{j}", g) if g is not None else log.append((f"agrad{j}", None))
                else:
                    log.val("loss", loss)
                    loss.backward(retain_graph=end == "backward_twice")
                    if end == "backward_twice":
                        loss.backward()
            except Exception as e:  # noqa: BLE001
                log.err("backward", e)
            for j, w in enumerate(leaves):
                log.val(f"grad{j}", w.grad) if w.grad is not None else log.append((f"grad{j}", None))
            for j, g in enumerate(hook_log):
                log.val(f"hook{j}", g)
            for j, t in enumerate(retained):
                try:
                    log.val(f"retained{j}", t.grad) if t.grad is not None else log.append((f"retained{j}", None))
                except Exception as e:  # noqa: BLE001
                    log.err(f"retained{j}", e)
            if end == "backward_sgd":
                try:
                    opt = minitx.optim.SGD(leaves, lr=0.1, momentum=0.9)
                    opt.step()
                    for j, w in enumerate(leaves):
                        log.val(f"stepped{j}", w)
                    log.val("x_after_step", x)
                    y = (x * w0).sum() if x.dtype.kind == "f" else None
                    if y is not None:
                        y.backward()
                        log.val("grad_after", w0.grad)
                except Exception as e:  # noqa: BLE001
                    log.err("sgd", e)
    finally:
        for c in reversed(ctxs):
            c.__exit__(None, None, None)
    return log


def _pick(srng, seq):
    return seq[int(srng.integers(len(seq)))] if seq else None


def _value_for(shape, srng, r, x, tensors, w0, w1, dtype):
    """A value for a region of this shape: from the leaves, from x's views, or a constant."""
    choice = srng.integers(0, 7)
    c = minitx.tensor(srng.standard_normal(shape), dtype=dtype)
    if choice == 0:
        return c
    if choice == 1:
        return w0 * c
    if choice == 2:
        return F.tanh(w1 * c + r)
    if choice in (3, 4):  # something computed from x itself (same shape found among a few indices)
        t = _pick(srng, tensors)
        for _ in range(20):
            idx = rand_index(srng, t.shape)
            if idx in ("bool", "adv"):
                continue
            try:
                part = t[idx]
            except Exception:  # noqa: BLE001
                continue
            if part.shape == tuple(shape):
                return part.exp() * w0 if choice == 3 else part
        return (t.sum() * w0 + c) if t.dtype.kind == "f" else w0 * c
    if choice == 5:
        return float(r)
    return (w0 * c).detach() if srng.random() < 0.5 else w0 * c


def _step(kind, srng, r, x, tensors, raws, results, hook_log, retained, w0, w1, dtype, log, label):
    if kind in ("set", "set_ng", "set_view", "set_self"):
        target = x if kind in ("set", "set_ng", "set_self") else _pick(srng, tensors)
        idx = rand_index(srng, target.shape)
        idx = concrete_index(idx, target.shape, int(srng.integers(2**31)))
        region = np.empty(target.shape)[idx].shape
        if kind == "set_self":
            value = target[idx] * w0 if srng.random() < 0.5 else target[idx].exp()
        else:
            value = _value_for(region, srng, r, x, tensors, w0, w1, dtype)
        if RECORDED_ONLY and not (isinstance(value, minitx.Tensor) and value.requires_grad) \
                and not target.requires_grad:
            value = w0 * value  # (recorded: a write outside the graph is another finding's)
        if kind == "set_ng":
            with minitx.no_grad():
                target[idx] = value
        else:
            target[idx] = value
        log.append((label, "done"))
    elif kind in ("method", "method_ng", "iadd"):
        target = _pick(srng, tensors)
        m = int(srng.integers(0, 7))
        if RECORDED_ONLY and not target.requires_grad:
            m = (0, 1, 3)[m % 3]  # (recorded: a write outside the graph is another finding's)

        def go():
            if kind == "iadd":
                t = target
                t += w0
                return
            if m == 0:
                target.add_(w0)
            elif m == 1:
                target.mul_(w1)
            elif m == 2:
                target.exp_()
            elif m == 3:
                target.copy_(w0 * minitx.tensor(srng.standard_normal(target.shape), dtype=dtype))
            elif m == 4:
                target.fill_(r)
            elif m == 5:
                target.zero_()
            else:
                target.tanh_()
        if kind == "method_ng":
            with minitx.no_grad():
                go()
        else:
            go()
        log.append((label, "done"))
    elif kind == "view":
        t = _pick(srng, tensors)
        v = int(srng.integers(0, 8))
        if v <= 2:
            idx = rand_index(srng, t.shape)
            if idx in ("bool", "adv"):
                idx = ()
            out = t[idx]
        elif v == 3:
            out = t.T
        elif v == 4:
            out = t.reshape(-1)
        elif v == 5:
            out = t.unsqueeze(0).expand(2, *t.shape)
        elif v == 6:
            out = t.swapaxes(0, -1) if t.ndim else t
        else:
            out = t.flip(0) if t.ndim else t
        tensors.append(out)
        log.append((label, out.shape))
    elif kind == "raw":
        t = _pick(srng, tensors)
        how = int(srng.integers(0, 4))
        if how == 0:
            raws.append(t.data)
        elif how == 1:
            raws.append(np.asarray(t))
        elif how == 2:
            raws.append(t.numpy())
        else:
            idx = rand_index(srng, t.shape)
            raws.append(t.data[() if idx in ("bool", "adv") else idx])
        log.append((label, "done"))
    elif kind == "save":
        t = _pick(srng, tensors)
        f = int(srng.integers(0, 7))
        if f == 0:
            out = t * w0
        elif f == 1:
            out = t.exp()
        elif f == 2:
            out = F.tanh(t)
        elif f == 3:
            out = F.sigmoid(t)
        elif f == 4:
            out = F.softmax(t, axis=-1) if t.ndim else t * t
        elif f == 5:
            out = t * t
        else:
            out = (t @ minitx.tensor(srng.standard_normal((t.shape[-1], 2)), dtype=dtype)) if t.ndim == 2 else t * w1
        results.append(out)
        log.append((label, out.shape))
    elif kind == "save_part":  # an op that saves a part of x (a row, a column, a strided slice)
        idx = rand_index(srng, x.shape)
        part = x[() if idx in ("bool", "adv") else idx]
        f = int(srng.integers(0, 4))
        out = part * w0 if f == 0 else part.exp() if f == 1 else F.sigmoid(part) if f == 2 else part * part
        results.append(out)
        if srng.random() < 0.5:
            tensors.append(part)
        log.append((label, out.shape))
    elif kind == "rows":  # a loop over one axis, x[k] = f(x[k - 1]), its rows kept as views (outs.append(h[t]))
        if x.ndim and x.shape[0] > 1:
            axis = int(srng.integers(0, x.ndim))
            n = x.shape[axis]
            at = lambda k: (slice(None),) * axis + (k,)  # noqa: E731
            how = int(srng.integers(0, 4))
            prev = x[at(0)] if how == 2 else None
            for k in range(1, n):
                step_in = prev if how == 2 else x[at(k - 1)]
                x[at(k)] = F.tanh(step_in * w0 + r) if how != 3 else step_in * w1
                if how in (0, 3) or srng.random() < 0.5:
                    out = x[at(k)]
                    tensors.append(out)
                    if srng.random() < 0.15:
                        raws.append(out.data if srng.random() < 0.5 else np.asarray(out))
                    elif srng.random() < 0.15:
                        tensors.append(out.detach())
                prev = x[at(k)] if how == 2 else None
        log.append((label, "done"))
    elif kind == "raw_view":  # a view kept, and its raw array
        idx = rand_index(srng, x.shape)
        v = x[() if idx in ("bool", "adv") else idx]
        tensors.append(v)
        raws.append(v.data if srng.random() < 0.5 else np.asarray(v))
        log.append((label, v.shape))
    elif kind == "del":
        pools = [p for p in (tensors[1:], raws, results) if p]
        if pools:
            pool = _pick(srng, pools)
            pool.pop(int(srng.integers(len(pool))) if pool is not tensors else 1 + int(srng.integers(len(pool))))
        log.append((label, "done"))
    elif kind == "gc":
        gc.collect()
        log.append((label, "done"))
    elif kind == "hook":
        t = _pick(srng, tensors)
        t.register_hook(lambda g: hook_log.append(np.array(g.data if isinstance(g, minitx.Tensor) else g)))
        log.append((label, "done"))
    elif kind == "retain":
        t = _pick(srng, tensors)
        t.retain_grad()
        retained.append(t)
        log.append((label, "done"))
    elif kind == "rawwrite":
        a = _pick(srng, raws)
        if a is not None:
            a[...] = r
        log.append((label, "done"))
    elif kind == "read":
        log.val(label, _pick(srng, tensors))
    elif kind == "detach":
        t = _pick(srng, tensors)
        if srng.random() < 0.5:
            tensors.append(t.detach())
        else:
            idx = rand_index(srng, t.shape)
            tensors.append(t[() if idx in ("bool", "adv") else idx].detach())
        log.append((label, "done"))
    elif kind == "wrap":
        t = _pick(srng, tensors)
        tensors.append(minitx.Tensor(t.data))
        log.append((label, "done"))


def first_difference(a, b):
    for i, (p, q) in enumerate(zip(a, b)):
        if p != q:
            return i, p, q
    if len(a) != len(b):
        return min(len(a), len(b)), a[len(b):len(b) + 1], b[len(a):len(a) + 1]
    return None


def fuzz(n, first=0, recorded_only=None):
    """Run the programs of seeds first..first + n - 1 both ways: ([(seed, program, first
    difference)], [seeds that crashed outside their steps], Counter of the steps generated)."""
    global RECORDED_ONLY
    if recorded_only is not None:
        RECORDED_ONLY = recorded_only
    bad, crashed, ops = [], [], Counter()
    for seed in range(first, first + n):
        prog = gen_program(seed)
        for kind, *_ in prog["steps"]:
            ops[kind] += 1
        try:
            new = execute(prog, copy=False)
            gc.collect()
            ref = execute(prog, copy=True)
            gc.collect()
        except Exception:  # noqa: BLE001
            crashed.append(seed)
            traceback.print_exc()
            continue
        d = first_difference(new, ref)
        if d is not None:
            bad.append((seed, prog, d))
    return bad, crashed, ops


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    bad, crashed, ops = fuzz(n, first)
    for seed, prog, (i, p, q) in bad:
        short = lambda e: e if not isinstance(e, tuple) else tuple(  # noqa: E731
            (np.frombuffer(v, dtype=np.uint8)[:32].tolist() if isinstance(v, bytes) else v) for v in e)
        print(f"seed {seed}: {prog['origin']} {prog['shape']} {prog['dtype']} end={prog['end']} "
              f"check={prog['check']} anomaly={prog['anomaly']}\n   entry {i}\n   in place: {short(p)}\n"
              f"   copies:   {short(q)}\n   steps: {[k for k, *_ in prog['steps']]}")
    print(f"\n{n} programs (seeds {first}..{first + n - 1}); {len(bad)} differ; {len(crashed)} crashed outside steps")
    print("in_place decisions in the new runs:", dict(DECISIONS))
    print("steps generated:", dict(ops))
    if bad:
        print("differing seeds:", [seed for seed, *_ in bad][:50])


if __name__ == "__main__":
    main()
