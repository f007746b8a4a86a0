"""Sweep of minitx.nn (layers, containers, Module API) and minitx.optim against torch.nn / torch.optim.

PYTHONPATH=$PWD python results/2026-11-26l-nn-sweep/scripts/sweep.py [section ...]   (from the repository root)
Categories printed:
  a   both succeed but differ (values / gradients / state / structure)
  bc  PyTorch succeeds, minitx raises with an unclear message (raw NumPy/Python, not naming the layer)
  b   PyTorch succeeds, minitx raises (named message)
  c   both raise, minitx's message unclear
  d   minitx succeeds where PyTorch raises
"""
import copy
import math
import os
import re
import sys
import traceback
import warnings

import numpy as np
import torch

sys.path.insert(0, os.getcwd())  # the repository root
import minitx  # noqa: E402
from minitx import nn, optim  # noqa: E402

torch.set_default_dtype(torch.float64)
tnn = torch.nn
RNG = np.random.default_rng(0)
RESULTS = []
COUNT = [0]
SECTIONS = {}


def section(fn):
    SECTIONS[fn.__name__] = fn
    return fn


def short(e):
    return f"{type(e).__name__}: {e}".replace("\n", " ")[:230]


def named(msg, names):
    low = msg.lower()
    return any(n.lower() in low for n in names)


def run_both(mfn, tfn):
    m_out = t_out = m_err = t_err = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            m_out = mfn()
        except Exception as e:  # noqa: BLE001
            m_err = e
        try:
            t_out = tfn()
        except Exception as e:  # noqa: BLE001
            t_err = e
    return m_out, m_err, t_out, t_err


def as_np(v):
    if isinstance(v, minitx.Tensor):
        return np.asarray(v.numpy())
    if isinstance(v, torch.Tensor):
        return v.detach().numpy()
    return np.asarray(v)


def cmp_values(label, m, t, rtol=1e-10, atol=1e-12):
    """m, t: dicts name -> array-like (or None). Records differences; returns True when all agree."""
    ok = True
    for k in t:
        if k not in m:
            RESULTS.append(("a", label, f"minitx lacks output {k!r}"))
            ok = False
            continue
        mv, tv = m[k], t[k]
        if mv is None or tv is None:
            if (mv is None) != (tv is None):
                RESULTS.append(("a", label, f"{k}: minitx {'None' if mv is None else 'value'}, torch "
                                            f"{'None' if tv is None else 'value'}"))
                ok = False
            continue
        a, b = as_np(mv), as_np(tv)
        if a.shape != b.shape:
            RESULTS.append(("a", label, f"{k}: shape minitx {a.shape} torch {b.shape}"))
            ok = False
            continue
        if a.dtype.kind in "fiub" and b.dtype.kind in "fiub":
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            if not (np.allclose(a64, b64, rtol=rtol, atol=atol, equal_nan=True)
                    and np.array_equal(np.isnan(a64), np.isnan(b64))):
                err = np.nanmax(np.abs(a64 - b64)) if a64.size else 0
                RESULTS.append(("a", label, f"{k}: values differ (max abs {err:.3g}); minitx "
                                            f"{np.array2string(a64.ravel()[:4], precision=5)} torch "
                                            f"{np.array2string(b64.ravel()[:4], precision=5)}"))
                ok = False
        elif not np.array_equal(a, b):
            RESULTS.append(("a", label, f"{k}: minitx {a!r:.80} torch {b!r:.80}"))
            ok = False
    return ok


def compare(label, mfn, tfn, names=(), rtol=1e-10, atol=1e-12):
    """mfn/tfn return dicts of arrays (or anything comparable); errors classified."""
    COUNT[0] += 1
    m_out, m_err, t_out, t_err = run_both(mfn, tfn)
    if m_err is not None:
        msg = short(m_err)
        is_named = named(str(m_err), names) if names else True
        if t_err is None:
            RESULTS.append(("b" if is_named else "bc", label, f"minitx {msg} | torch ok"))
        elif not is_named:
            RESULTS.append(("c", label, f"minitx {msg} | torch {short(t_err)[:100]}"))
        return None
    if t_err is not None:
        RESULTS.append(("d", label, f"minitx ok, torch {short(t_err)[:150]}"))
        return None
    if isinstance(t_out, dict):
        cmp_values(label, m_out, t_out, rtol, atol)
    elif t_out != m_out:
        RESULTS.append(("a", label, f"minitx {m_out!r:.150} | torch {t_out!r:.150}"))
    return m_out, t_out


def expect_error(label, fn, names):
    """Only minitx: must raise an error whose message names one of ``names``."""
    COUNT[0] += 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001
        if not named(str(e), names):
            RESULTS.append(("c", label, f"minitx {short(e)}"))
        return
    RESULTS.append(("d", label, "minitx accepts it"))


# ================================================================ layer harness
def load_from_torch(mlayer, sd):
    """Cast minitx layer to float64 and copy torch's initial parameters/buffers by name (strict)."""
    mlayer.to(dtype="float64")
    mlayer.load_state_dict(sd, strict=True)


def layer_check(label, mk_m, mk_t, inputs, names, train=True, grad=True, int_inputs=(), call_m=None,
                call_t=None, rtol=1e-10, atol=1e-12, steps=1, out_index=None, load=True):
    """Build both layers, copy torch's state into minitx, run forward (``steps`` times) on the
    numpy ``inputs`` and compare outputs, input gradients, parameter gradients and buffers."""
    W = {}

    def prep(mod, out_list):
        return out_list

    def go(lib):
        if lib == "m":
            layer = mk_m()
            if mt_layer[0] is None:
                raise RuntimeError("torch layer failed")
            if load:
                load_from_torch(layer, mt_layer[0])
        else:
            layer = mk_t()
            mt_layer[0] = {k: v.detach().numpy().copy() for k, v in layer.state_dict().items()}
        layer.train(train)
        res = {}
        for s in range(steps):
            if lib == "m":
                xs = [minitx.tensor(a) if i in int_inputs or a.dtype.kind != "f"
                      else minitx.tensor(a, requires_grad=grad) for i, a in enumerate(inputs)]
                out = call_m(layer, *xs) if call_m else layer(*xs)
            else:
                xs = [torch.tensor(a) if i in int_inputs or a.dtype.kind != "f"
                      else torch.tensor(a, requires_grad=grad) for i, a in enumerate(inputs)]
                out = call_t(layer, *xs) if call_t else layer(*xs)
            if out_index is not None:
                out = out[out_index]
            res[f"out{s}"] = out
            if grad:
                key = (s, tuple(as_np(out).shape))
                if key not in W:
                    W[key] = RNG.standard_normal(as_np(out).shape)
                w = W[key]
                if lib == "m":
                    loss = (out * minitx.tensor(w)).sum()
                else:
                    loss = (out * torch.tensor(w)).sum()
                if out.requires_grad:
                    loss.backward()
                for i, x in enumerate(xs):
                    if x.requires_grad:
                        res[f"dx{i}_{s}"] = x.grad
        if grad:
            for n, p in layer.named_parameters():
                res[f"grad {n}"] = p.grad
        for n, b in layer.named_buffers():
            res[f"buf {n}"] = b
        for n, p in layer.named_parameters():
            res[f"param {n}"] = p
        return res

    mt_layer = [None]
    COUNT[0] += 1
    # torch first (its parameters are copied into minitx)
    t_out = t_err = m_out = m_err = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t_out = go("t")
        except Exception as e:  # noqa: BLE001
            t_err = e
        try:
            if t_err is not None:  # still try to construct/run minitx alone
                layer = mk_m()
                layer.to(dtype="float64")
                layer.train(train)
                xs = [minitx.tensor(a) for a in inputs]
                call_m(layer, *xs) if call_m else layer(*xs)
            else:
                m_out = go("m")
        except Exception as e:  # noqa: BLE001
            m_err = e
            m_tb = traceback.format_exc()
    if m_err is not None:
        msg = short(m_err)
        if t_err is None:
            RESULTS.append(("b" if named(str(m_err), names) else "bc", label, f"minitx {msg} | torch ok"))
        elif not named(str(m_err), names):
            RESULTS.append(("c", label, f"minitx {msg} | torch {short(t_err)[:100]}"))
        return
    if t_err is not None:
        RESULTS.append(("d", label, f"minitx ok, torch {short(t_err)[:150]}"))
        return
    cmp_values(label, m_out, t_out, rtol, atol)


def r(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape)


# ================================================================ 1. layers
@section
def linear():
    N = ["Linear"]
    for i, o in [(3, 2), (0, 3), (3, 0), (1, 1)]:
        for bias in (True, False):
            for xs in [(4, i), (0, i), (2, 3, i), (i,)]:
                layer_check(f"Linear({i},{o},bias={bias}) x{xs}", lambda: nn.Linear(i, o, bias=bias),
                            lambda: tnn.Linear(i, o, bias=bias), [r(*xs)], N)
    for args in [(-1, 3), (3, -2), (2.5, 3), ("3", 2)]:
        expect_error(f"Linear{args} constructor", lambda: nn.Linear(*args), N)
    # activation/dropout fused path with p=0 in eval: plain linear
    layer_check("Linear fused relu vs Linear+ReLU", lambda: nn.Linear(3, 4, activation="relu"),
                lambda: tnn.Linear(3, 4), [r(5, 3)], N,
                call_t=lambda l, x: torch.relu(l(x)))


@section
def embedding():
    N = ["Embedding"]
    ids = np.array([[0, 2, 1], [3, 3, 0]])
    for n, d, pad in [(4, 3, None), (4, 3, 0), (4, 3, 3), (4, 3, -1), (4, 3, -4), (4, 0, None), (0, 4, None)]:
        idx = ids if n else np.zeros((2, 0), dtype=np.int64)
        layer_check(f"Embedding({n},{d},padding_idx={pad})", lambda: nn.Embedding(n, d, padding_idx=pad),
                    lambda: tnn.Embedding(n, d, padding_idx=pad), [idx], N, int_inputs=(0,))
    # 1-d and 3-d ids, 0-size ids
    for idx in [np.array([1, 2, 0]), np.array(2), np.zeros((0, 3), dtype=np.int64), np.zeros((2, 2, 2), dtype=np.int64)]:
        layer_check(f"Embedding ids shape {idx.shape}", lambda: nn.Embedding(4, 3), lambda: tnn.Embedding(4, 3),
                    [idx], N, int_inputs=(0,))
    for pad in (4, -5):
        expect_error(f"Embedding(4,3,padding_idx={pad})", lambda: nn.Embedding(4, 3, padding_idx=pad), N)
    expect_error("Embedding(-1, 3)", lambda: nn.Embedding(-1, 3), N)
    # constructor kwargs PyTorch users pass
    for kw in [dict(max_norm=1.0), dict(scale_grad_by_freq=True), dict(sparse=False)]:
        compare(f"Embedding(4,3,**{kw})", lambda: nn.Embedding(4, 3, **kw) and 1,
                lambda: tnn.Embedding(4, 3, **kw) and 1, N)
    compare("Embedding.from_pretrained", lambda: nn.Embedding.from_pretrained(minitx.tensor(np.ones((3, 2)))).weight.shape,
            lambda: tuple(tnn.Embedding.from_pretrained(torch.ones(3, 2)).weight.shape), N)
    # out of range ids
    expect_error("Embedding ids out of range", lambda: nn.Embedding(4, 3)(minitx.tensor(np.array([[4]]))), N + ["embedding"])


@section
def norms():
    N = ["LayerNorm"]
    x = r(2, 3, 4)
    for shape in [4, (4,), [4], (3, 4)]:
        layer_check(f"LayerNorm({shape!r})", lambda: nn.LayerNorm(shape), lambda: tnn.LayerNorm(shape), [x], N)
    for kw in [dict(elementwise_affine=False), dict(bias=False), dict(eps=1e-3)]:
        layer_check(f"LayerNorm(4, **{kw})", lambda: nn.LayerNorm(4, **kw), lambda: tnn.LayerNorm(4, **kw), [x], N)
    layer_check("LayerNorm(4) 0-batch", lambda: nn.LayerNorm(4), lambda: tnn.LayerNorm(4), [r(0, 4)], N)
    layer_check("LayerNorm(0)", lambda: nn.LayerNorm(0), lambda: tnn.LayerNorm(0), [r(2, 0)], N)
    layer_check("LayerNorm(4) wrong last axis", lambda: nn.LayerNorm(4), lambda: tnn.LayerNorm(4), [r(2, 5)], N + ["layer_norm"])
    # RMSNorm
    N = ["RMSNorm"]
    for shape, kw in [(4, {}), ((4,), {}), (4, dict(eps=1e-6)), (4, dict(elementwise_affine=False)), ((3, 4), {})]:
        layer_check(f"RMSNorm({shape!r}, **{kw})", lambda: nn.RMSNorm(shape, **kw), lambda: tnn.RMSNorm(shape, **kw),
                    [x], N + ["rms_norm"])
    # GroupNorm
    N = ["GroupNorm"]
    for g, c, aff in [(2, 4, True), (1, 4, False), (4, 4, True)]:
        for xs in [(2, 4, 3), (2, 4), (0, 4, 3), (2, 4, 2, 2)]:
            layer_check(f"GroupNorm({g},{c},affine={aff}) x{xs}", lambda: nn.GroupNorm(g, c, affine=aff),
                        lambda: tnn.GroupNorm(g, c, affine=aff), [r(*xs)], N)
    for args in [(3, 4), (0, 4), (-2, 4)]:
        expect_error(f"GroupNorm{args}", lambda: nn.GroupNorm(*args), N)


@section
def batchnorm():
    for cls, xs_list in [("BatchNorm1d", [(4, 3), (4, 3, 5), (1, 3, 5), (1, 3), (0, 3), (0, 3, 2)]),
                         ("BatchNorm2d", [(2, 3, 2, 2), (1, 3, 1, 1), (0, 3, 2, 2)])]:
        N = [cls]
        for xs in xs_list:
            for kw in [{}, dict(affine=False), dict(track_running_stats=False), dict(momentum=0.3),
                       dict(momentum=None), dict(momentum=0.0), dict(momentum=1.0), dict(eps=1e-2)]:
                for train in (True, False):
                    layer_check(f"{cls}(3, **{kw}) {'train' if train else 'eval'} x{xs}",
                                lambda: getattr(nn, cls)(3, **kw), lambda: getattr(tnn, cls)(3, **kw),
                                [r(*xs)], N, train=train, steps=3)
        # train 3 steps, then eval: running stats used
        def mk_seq(lib, kw):
            mod = nn if lib == "m" else tnn
            return mod.Sequential(getattr(mod, cls)(3, **kw))

        xs = xs_list[1] if cls == 'BatchNorm1d' else xs_list[0]
        for kw in [{}, dict(track_running_stats=False)]:
            def run(lib):
                mod, T = (nn, minitx.tensor) if lib == "m" else (tnn, torch.tensor)
                bn = getattr(mod, cls)(3, **kw)
                if lib == "m":
                    bn.to(dtype="float64")
                out = {}
                for s in range(3):
                    bn(T(r(*xs) if lib == "t" else data[s]))
                bn.eval()
                out["eval"] = bn(T(data[3]))
                for n, b in bn.named_buffers():
                    out[n] = b
                return out
            data = [r(*xs) for _ in range(4)]

            def run_t():
                bn = getattr(tnn, cls)(3, **kw)
                out = {}
                for s in range(3):
                    bn(torch.tensor(data[s]))
                bn.eval()
                out["eval"] = bn(torch.tensor(data[3]))
                for n, b in bn.named_buffers():
                    out[n] = b
                return out

            def run_m():
                bn = getattr(nn, cls)(3, **kw)
                bn.to(dtype="float64")
                out = {}
                for s in range(3):
                    bn(minitx.tensor(data[s]))
                bn.eval()
                out["eval"] = bn(minitx.tensor(data[3]))
                for n, b in bn.named_buffers():
                    out[n] = b
                return out
            compare(f"{cls}(3,**{kw}) 3 train steps then eval", run_m, run_t, N)
        for bad in [dict(momentum=-0.1), dict(momentum=1.5), dict(eps=-1.0)]:
            expect_error(f"{cls}(3, **{bad})", lambda: getattr(nn, cls)(3, **bad), N)
        expect_error(f"{cls}(0)", lambda: getattr(nn, cls)(0)(minitx.tensor(r(2, 0, 2, 2)[..., 0] if cls == "BatchNorm1d" else r(2, 0, 2, 2))), N)
        expect_error(f"{cls}(-1)", lambda: getattr(nn, cls)(-1), N)
        expect_error(f"{cls}(3) wrong channels", lambda: getattr(nn, cls)(3)(minitx.tensor(r(2, 4, 2, 2)[..., 0] if cls == "BatchNorm1d" else r(2, 4, 2, 2))), N + ["batch_norm"])


@section
def dropout():
    N = ["Dropout"]
    x = r(3, 4)
    for p in [0.0, 0, 0.5]:
        layer_check(f"Dropout(p={p}) eval", lambda: nn.Dropout(p), lambda: tnn.Dropout(p), [x], N, train=False)
    layer_check("Dropout(p=0.0) train", lambda: nn.Dropout(0.0), lambda: tnn.Dropout(0.0), [x], N, train=True)
    layer_check("Dropout(p=1.0) train", lambda: nn.Dropout(1.0), lambda: tnn.Dropout(1.0), [x], N, train=True)
    layer_check("Dropout(p=1) eval", lambda: nn.Dropout(1), lambda: tnn.Dropout(1), [x], N, train=False)
    layer_check("Dropout() default p (eval)", lambda: nn.Dropout(), lambda: tnn.Dropout(), [x], N, train=False)
    compare("Dropout default p", lambda: nn.Dropout().p, lambda: tnn.Dropout().p, N)
    layer_check("Dropout(p=0.5, inplace=False) eval", lambda: nn.Dropout(0.5, inplace=False),
                lambda: tnn.Dropout(0.5, inplace=False), [x], N, train=False)
    for p in [-0.1, 1.5, float("nan"), "0.5", None]:
        expect_error(f"Dropout(p={p!r})", lambda: nn.Dropout(p), N)
    # statistics of p=0.5 in train: kept entries scaled by 2
    COUNT[0] += 1
    y = nn.Dropout(0.5)(minitx.tensor(np.ones((200, 200)))).numpy()
    vals = set(np.unique(y).tolist())
    if not vals <= {0.0, 2.0} or abs((y == 0).mean() - 0.5) > 0.02:
        RESULTS.append(("a", "Dropout(0.5) train statistics", f"values {vals}, zero share {(y == 0).mean()}"))
    # Dropout on 0-size
    layer_check("Dropout(0.5) train on 0-size", lambda: nn.Dropout(0.5), lambda: tnn.Dropout(0.5), [r(0, 3)], N)


@section
def activations():
    x = r(3, 4, lo=-3, hi=3)
    for name, args in [("ReLU", ()), ("GELU", ()), ("GELU", ("tanh",)), ("SiLU", ()), ("Tanh", ()), ("Sigmoid", ()),
                       ("Softmax", (0,)), ("Softmax", (1,)), ("Softmax", (-1,)), ("Identity", ()),
                       ("Flatten", ()), ("Flatten", (0,)), ("Flatten", (0, 0)), ("Unflatten", (1, (2, 2))),
                       ("Unflatten", (-1, (2, -1)))]:
        layer_check(f"{name}{args}", lambda: getattr(nn, name)(*args), lambda: getattr(tnn, name)(*args), [x], [name])
        layer_check(f"{name}{args} 0-size", lambda: getattr(nn, name)(*args), lambda: getattr(tnn, name)(*args),
                    [r(0, 4)], [name])
    layer_check("Flatten() 1-d", lambda: nn.Flatten(), lambda: tnn.Flatten(), [r(4)], ["Flatten"])
    layer_check("Flatten(2,1)", lambda: nn.Flatten(2, 1), lambda: tnn.Flatten(2, 1), [r(2, 3, 4)], ["Flatten"])
    layer_check("Flatten(1,2) 4-d", lambda: nn.Flatten(1, 2), lambda: tnn.Flatten(1, 2), [r(2, 3, 4, 5)], ["Flatten"])
    layer_check("Flatten 0-d", lambda: nn.Flatten(0), lambda: tnn.Flatten(0), [np.array(2.0)], ["Flatten"])
    layer_check("ReLU(inplace=False)", lambda: nn.ReLU(inplace=False), lambda: tnn.ReLU(inplace=False), [x], ["ReLU"])
    layer_check("GELU(approximate='bad')", lambda: nn.GELU("bad"), lambda: tnn.GELU("bad"), [x], ["GELU", "gelu"])
    layer_check("Unflatten(1, (3, 3)) wrong size", lambda: nn.Unflatten(1, (3, 3)), lambda: tnn.Unflatten(1, (3, 3)),
                [x], ["Unflatten"])


@section
def conv():
    for dims in (1, 2):
        sp = (5,) * dims if dims == 1 else (5, 4)
        cls = f"Conv{dims}d"
        N = [cls]
        for cin, cout, k, kw in [(2, 4, 3, {}), (4, 4, 3, dict(groups=2)), (4, 4, 3, dict(groups=4)),
                                 (2, 3, 2, dict(dilation=2)), (2, 3, 3, dict(stride=2, padding=1)),
                                 (2, 3, 3, dict(padding="same")), (2, 3, 3, dict(padding="valid")),
                                 (2, 3, 3, dict(bias=False)), (2, 3, 3, dict(padding=1, padding_mode="zeros")),
                                 (2, 3, 3, dict(padding=1, padding_mode="reflect")),
                                 (2, 3, 3, dict(padding=1, padding_mode="replicate")),
                                 (2, 3, 3, dict(padding=1, padding_mode="circular")),
                                 (2, 3, 2, dict(padding="same", dilation=2))]:
            for n in (2, 0):
                layer_check(f"{cls}({cin},{cout},{k},**{kw}) N={n}", lambda: getattr(nn, cls)(cin, cout, k, **kw),
                            lambda: getattr(tnn, cls)(cin, cout, k, **kw), [r(n, cin, *sp)], N + ["conv"])
        layer_check(f"{cls} unbatched", lambda: getattr(nn, cls)(2, 3, 3), lambda: getattr(tnn, cls)(2, 3, 3),
                    [r(2, *sp)], N + ["conv", "batched"])
        for args, kw in [((0, 3, 3), {}), ((2, 3, 0), {}), ((3, 4, 3), dict(groups=2)), ((2, 3, 3), dict(stride=0)),
                         ((2, 3, 3), dict(padding=-1)), ((2, 3, 3), dict(dilation=0)), ((2, 3, 3), dict(padding="bad")),
                         ((2, 3, 3), dict(padding_mode="bad")), ((2, 3, 3), dict(groups=0))]:
            COUNT[0] += 1
            m_ok = t_ok = True
            try:
                getattr(nn, cls)(*args, **kw)
            except Exception as e:  # noqa: BLE001
                m_ok, m_e = False, e
            try:
                getattr(tnn, cls)(*args, **kw)
            except Exception:  # noqa: BLE001
                t_ok = False
            if m_ok and not t_ok:
                RESULTS.append(("d", f"{cls}{args} {kw} constructor", "minitx builds it, torch refuses at construction"))
            elif not m_ok and not named(str(m_e), N):
                RESULTS.append(("c", f"{cls}{args} {kw} constructor", f"minitx {short(m_e)}"))
        # ConvTranspose
        cls = f"ConvTranspose{dims}d"
        N = [cls, "conv_transpose"]
        for cin, cout, k, kw in [(2, 3, 3, {}), (4, 4, 3, dict(groups=2)), (2, 3, 3, dict(stride=2, padding=1,
                                                                                             output_padding=1)),
                                 (2, 3, 2, dict(dilation=2)), (2, 3, 3, dict(bias=False))]:
            for n in (2, 0):
                layer_check(f"{cls}({cin},{cout},{k},**{kw}) N={n}", lambda: getattr(nn, cls)(cin, cout, k, **kw),
                            lambda: getattr(tnn, cls)(cin, cout, k, **kw), [r(n, cin, *sp)], N)
    # pools
    x = r(2, 3, 6, 5)
    for cls, kw in [("MaxPool2d", dict(kernel_size=2)), ("MaxPool2d", dict(kernel_size=3, stride=2, padding=1)),
                    ("MaxPool2d", dict(kernel_size=2, ceil_mode=True)), ("MaxPool2d", dict(kernel_size=2, dilation=2)),
                    ("AvgPool2d", dict(kernel_size=2)), ("AvgPool2d", dict(kernel_size=3, stride=1, padding=1,
                                                                            count_include_pad=False)),
                    ("AvgPool2d", dict(kernel_size=2, divisor_override=3)), ("AvgPool2d", dict(kernel_size=2, ceil_mode=True)),
                    ("Upsample", dict(scale_factor=2)), ("Upsample", dict(size=(3, 7), mode="bilinear")),
                    ("Upsample", dict(scale_factor=2, mode="bilinear", align_corners=True))]:
        layer_check(f"{cls}(**{kw})", lambda: getattr(nn, cls)(**kw), lambda: getattr(tnn, cls)(**kw), [x], [cls])
    layer_check("MaxPool1d(2)", lambda: nn.MaxPool1d(2), lambda: tnn.MaxPool1d(2), [r(2, 3, 7)], ["MaxPool1d"])
    layer_check("AvgPool1d(3,2,1)", lambda: nn.AvgPool1d(3, 2, 1), lambda: tnn.AvgPool1d(3, 2, 1), [r(2, 3, 7)], ["AvgPool1d"])
    layer_check("MaxPool2d return_indices", lambda: nn.MaxPool2d(2, return_indices=True),
                lambda: tnn.MaxPool2d(2, return_indices=True), [x], ["MaxPool2d"], out_index=1, grad=False)
    # unpool roundtrip
    def unpool(lib):
        mod, T = (nn, minitx.tensor) if lib == "m" else (tnn, torch.tensor)
        y, i = mod.MaxPool2d(2, return_indices=True)(T(x))
        return {"u": mod.MaxUnpool2d(2)(y, i)}
    compare("MaxUnpool2d roundtrip", lambda: unpool("m"), lambda: unpool("t"), ["MaxUnpool2d"])


@section
def attention():
    """minitx MultiHeadAttention (fused qkv) against torch MultiheadAttention(batch_first=True)."""
    d, h, B, L = 8, 2, 2, 3
    x = r(B, L, d)
    N = ["MultiHeadAttention", "attention"]

    def build(bias):
        t = tnn.MultiheadAttention(d, h, bias=bias, batch_first=True)
        m = nn.MultiHeadAttention(d, h, bias=bias)
        m.to(dtype="float64")
        sd = {"qkv.weight": t.in_proj_weight.detach().numpy().copy(),
              "out.weight": t.out_proj.weight.detach().numpy().copy()}
        if bias:
            sd["qkv.bias"] = t.in_proj_bias.detach().numpy().copy()
            sd["out.bias"] = t.out_proj.bias.detach().numpy().copy()
        m.load_state_dict(sd)
        return m, t

    causal_bool = np.tril(np.ones((L, L), dtype=bool))
    for bias in (True, False):
        for mask_kind in ("none", "causal_flag", "bool", "float", "pad"):
            def run(lib):
                m, t = built
                xs = minitx.tensor(x, requires_grad=True) if lib == "m" else torch.tensor(x, requires_grad=True)
                if lib == "m":
                    kw = {"none": {}, "causal_flag": dict(causal=True), "bool": dict(mask=minitx.tensor(causal_bool)),
                          "float": dict(mask=minitx.tensor(np.where(causal_bool, 0.0, -np.inf))),
                          "pad": dict(mask=minitx.tensor(np.array([True, True, False])[None, None, None, :]))}[mask_kind]
                    y = m(xs, **kw)
                else:
                    kw = {"none": {}, "causal_flag": dict(attn_mask=torch.tensor(~causal_bool), is_causal=True),
                          "bool": dict(attn_mask=torch.tensor(~causal_bool)),
                          "float": dict(attn_mask=torch.tensor(np.where(causal_bool, 0.0, -np.inf))),
                          "pad": dict(key_padding_mask=torch.tensor(np.array([[False, False, True]] * B)))}[mask_kind]
                    y = t(xs, xs, xs, need_weights=False, **kw)[0]
                w = np.cos(np.arange(B * L * d)).reshape(B, L, d)
                (y * (minitx.tensor(w) if lib == "m" else torch.tensor(w))).sum().backward()
                mod = m if lib == "m" else t
                out = {"y": y, "dx": xs.grad}
                names = {"qkv.weight": "in_proj_weight", "out.weight": "out_proj.weight", "qkv.bias": "in_proj_bias",
                         "out.bias": "out_proj.bias"}
                tp = dict(t.named_parameters())
                for mn, tn in names.items():
                    if tn in tp:
                        out[mn] = (dict(m.named_parameters())[mn].grad if lib == "m" else tp[tn].grad)
                return out
            try:
                built = build(bias)
            except Exception as e:  # noqa: BLE001
                RESULTS.append(("bc", f"MultiHeadAttention build bias={bias}", short(e)))
                continue
            compare(f"MultiHeadAttention bias={bias} mask={mask_kind}", lambda: run("m"), lambda: run("t"), N)
    # return_weights: per head (minitx) vs averaged (torch average_attn_weights=False gives per head)
    built = build(True)

    def rw(lib):
        m, t = built
        if lib == "m":
            return {"w": m(minitx.tensor(x), return_weights=True)[1]}
        return {"w": t(*(torch.tensor(x),) * 3, need_weights=True, average_attn_weights=False)[1]}
    compare("MultiHeadAttention return_weights per head", lambda: rw("m"), lambda: rw("t"), N)
    # 0-size batch and length
    for shape in [(0, 3, d), (2, 0, d)]:
        built = build(True)

        def z(lib):
            m, t = built
            if lib == "m":
                return {"y": m(minitx.tensor(np.zeros(shape)))}
            xx = torch.tensor(np.zeros(shape))
            return {"y": t(xx, xx, xx, need_weights=False)[0]}
        compare(f"MultiHeadAttention input {shape}", lambda: z("m"), lambda: z("t"), N)
    for args in [(8, 3), (8, 0), (0, 2), (-8, 2)]:
        expect_error(f"MultiHeadAttention{args}", lambda: nn.MultiHeadAttention(*args), N)
    compare("MultiHeadAttention(8,2,dropout=1.5) constructor", lambda: nn.MultiHeadAttention(8, 2, dropout=1.5) and 1,
            lambda: tnn.MultiheadAttention(8, 2, dropout=1.5) and 1, N)


@section
def losses():
    x = r(4, 5)
    tgt = np.array([1, 0, 4, 2])
    for cls, kw, inputs, ints in [
        ("CrossEntropyLoss", {}, [x, tgt], (1,)), ("CrossEntropyLoss", dict(reduction="sum"), [x, tgt], (1,)),
        ("CrossEntropyLoss", dict(ignore_index=0), [x, tgt], (1,)),
        ("CrossEntropyLoss", dict(label_smoothing=0.1), [x, tgt], (1,)),
        ("CrossEntropyLoss", dict(weight=torch.tensor(r(5, lo=0.1))), [x, tgt], (1,)),
        ("CrossEntropyLoss", {}, [x, RNG.dirichlet(np.ones(5), 4)], ()),
        ("CrossEntropyLoss", {}, [r(2, 5, 3), np.array([[1, 0, 4], [2, 2, 2]])], (1,)),
        ("NLLLoss", {}, [np.log(RNG.dirichlet(np.ones(5), 4)), tgt], (1,)),
        ("NLLLoss", dict(reduction="none"), [np.log(RNG.dirichlet(np.ones(5), 4)), tgt], (1,)),
        ("NLLLoss", {}, [r(2, 5, 3), np.array([[1, 0, 4], [2, 2, 2]])], (1,)),
        ("MSELoss", {}, [x, r(4, 5)], ()), ("MSELoss", dict(reduction="sum"), [x, r(4, 5)], ()),
        ("MSELoss", dict(reduction="none"), [x, r(4, 5)], ()),
        ("MSELoss", {}, [r(0, 3), r(0, 3)], ()),
        ("BCEWithLogitsLoss", {}, [x, RNG.uniform(0, 1, (4, 5))], ()),
        ("BCEWithLogitsLoss", dict(pos_weight=np.full(5, 2.0)), [x, RNG.uniform(0, 1, (4, 5))], ()),
        ("BCEWithLogitsLoss", dict(weight=np.full(5, 2.0)), [x, RNG.uniform(0, 1, (4, 5))], ()),
        ("CrossEntropyLoss", {}, [r(0, 5), np.zeros(0, dtype=np.int64)], (1,)),
    ]:
        def mk(lib, cls=cls, kw=kw):
            kk = {}
            for k, v in kw.items():
                if isinstance(v, (np.ndarray, torch.Tensor)):
                    v = as_np(v)
                    v = minitx.tensor(v) if lib == "m" else torch.tensor(v)
                kk[k] = v
            return getattr(nn if lib == "m" else tnn, cls)(**kk)
        layer_check(f"{cls}(**{ {k: (v if not hasattr(v, 'shape') else 'arr') for k, v in kw.items()} }) in {[a.shape for a in inputs]}",
                    lambda: mk("m"), lambda: mk("t"), inputs, [cls, "cross_entropy", "nll", "binary"],
                    int_inputs=ints, load=False)
    # PyTorch's positional forms: CrossEntropyLoss(weight), BCEWithLogitsLoss(weight)
    w = r(5, lo=0.1)
    layer_check("CrossEntropyLoss(weight) positional", lambda: nn.CrossEntropyLoss(minitx.tensor(w)),
                lambda: tnn.CrossEntropyLoss(torch.tensor(w)), [x, tgt], ["CrossEntropyLoss", "cross_entropy"], int_inputs=(1,),
                load=False)
    for cls in ["CrossEntropyLoss", "NLLLoss", "MSELoss", "BCEWithLogitsLoss"]:
        expect_error(f"{cls}(reduction='bad')", lambda: getattr(nn, cls)(reduction="bad"), [cls])


# ================================================================ 2. Module API
class MNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 4)
        self.b = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
        self.bn = nn.BatchNorm1d(4)


class TNet(tnn.Module):
    def __init__(self):
        super().__init__()
        self.a = tnn.Linear(3, 4)
        self.b = tnn.Sequential(tnn.Linear(4, 4), tnn.ReLU(), tnn.Linear(4, 2))
        self.bn = tnn.BatchNorm1d(4)


def names_of(it):
    return [n for n, _ in it]


@section
def module_api():
    N = []
    # ordering of named_parameters / named_buffers / named_modules / state_dict keys
    compare("named_parameters order", lambda: names_of(MNet().named_parameters()), lambda: names_of(TNet().named_parameters()))
    compare("named_buffers order", lambda: names_of(MNet().named_buffers()), lambda: names_of(TNet().named_buffers()))
    compare("named_modules order", lambda: names_of(MNet().named_modules()), lambda: names_of(TNet().named_modules()))
    compare("state_dict keys", lambda: list(MNet().state_dict()), lambda: list(TNet().state_dict()))
    compare("children count", lambda: len(list(MNet().children())), lambda: len(list(TNet().children())))
    compare("named_children", lambda: [n for n, _ in MNet().named_children()],
            lambda: [n for n, _ in TNet().named_children()])
    compare("named_parameters(prefix='p')", lambda: names_of(MNet().named_parameters(prefix="p")),
            lambda: names_of(TNet().named_parameters(prefix="p")))
    compare("named_parameters(recurse=False)", lambda: names_of(MNet().a.named_parameters(recurse=False)),
            lambda: names_of(TNet().a.named_parameters(recurse=False)))
    compare("parameters(recurse=False) on container", lambda: len(list(MNet().parameters(recurse=False))),
            lambda: len(list(TNet().parameters(recurse=False))))
    compare("named_buffers(prefix)", lambda: names_of(MNet().named_buffers(prefix="p")),
            lambda: names_of(TNet().named_buffers(prefix="p")))
    compare("named_modules(prefix)", lambda: names_of(MNet().named_modules(prefix="p")),
            lambda: names_of(TNet().named_modules(prefix="p")))

    # shared parameter registered twice / shared module registered twice
    def shared(lib):
        mod = nn if lib == "m" else tnn
        P = nn.Parameter if lib == "m" else tnn.Parameter
        T = minitx.tensor if lib == "m" else torch.tensor
        root = mod.Module()
        root.e = mod.Embedding(5, 3)
        root.h = mod.Linear(3, 5, bias=False)
        root.h.weight = root.e.weight
        root.l = mod.Linear(2, 2)
        root.l2 = root.l  # same module twice
        root.p = P(T(np.ones(2)))
        root.q = root.p
        return {"params": names_of(root.named_parameters()), "modules": names_of(root.named_modules()),
                "state_dict": list(root.state_dict()), "n_params": len(list(root.parameters())),
                "children": len(list(root.children()))}

    m, t = shared("m"), shared("t")
    for k in t:
        COUNT[0] += 1
        if m[k] != t[k]:
            RESULTS.append(("a", f"shared params/modules: {k}", f"minitx {m[k]} | torch {t[k]}"))

    # loading a torch-saved state dict of a tied model into minitx (tied keys)
    def tied_load():
        root = nn.Module()
        root.e = nn.Embedding(5, 3)
        root.h = nn.Linear(3, 5, bias=False)
        root.h.weight = root.e.weight
        troot = tnn.Module()
        troot.e = tnn.Embedding(5, 3)
        troot.h = tnn.Linear(3, 5, bias=False)
        troot.h.weight = troot.e.weight
        root.to(dtype="float64")
        root.load_state_dict({k: v.detach().numpy() for k, v in troot.state_dict().items()})
        return 1
    compare("load torch state_dict of tied model (strict)", tied_load, lambda: 1, ["load_state_dict"])

    # load_state_dict strictness
    def lsd(lib, mutate, strict=True):
        net = MNet() if lib == "m" else TNet()
        if lib == "m":
            net.to(dtype="float64")
        src = (MNet() if lib == "m" else TNet())
        if lib == "m":
            src.to(dtype="float64")
        sd = src.state_dict()
        if lib == "t":
            sd = {k: v for k, v in sd.items()}
        sd = dict(sd)
        mutate(sd, lib)
        res = net.load_state_dict(sd, strict=strict)
        res = (sorted(res.missing_keys), sorted(res.unexpected_keys))
        return {"res": str(res), "a.weight loaded": bool(np.allclose(as_np(net.a.weight), as_np(sd["a.weight"])))
                if "a.weight" in sd else None}

    def conv(v, lib, f):
        return f(v)

    mutations = {
        "missing key": lambda sd, lib: sd.pop("a.bias"),
        "unexpected key": lambda sd, lib: sd.__setitem__("zzz", sd["a.bias"]),
        "missing buffer": lambda sd, lib: sd.pop("bn.running_mean"),
        "missing num_batches_tracked": lambda sd, lib: sd.pop("bn.num_batches_tracked"),
        "shape mismatch": lambda sd, lib: sd.__setitem__("a.bias", sd["a.bias"][:2]),
        "float32 into float64": lambda sd, lib: sd.__setitem__("a.weight", sd["a.weight"].astype(np.float32)
                                                              if lib == "m" else sd["a.weight"].float()),
        "int into float": lambda sd, lib: sd.__setitem__("a.bias", sd["a.bias"].astype(np.int64)
                                                        if lib == "m" else sd["a.bias"].long()),
        "num_batches_tracked as float": lambda sd, lib: sd.__setitem__(
            "bn.num_batches_tracked", sd["bn.num_batches_tracked"].astype(np.float64) if lib == "m"
            else sd["bn.num_batches_tracked"].double()),
        "0-d for (4,)": lambda sd, lib: sd.__setitem__("a.bias", sd["a.bias"][0]),
    }
    for name, mut in mutations.items():
        for strict in (True, False):
            compare(f"load_state_dict {name} strict={strict}", lambda: lsd("m", mut, strict),
                    lambda: lsd("t", mut, strict), ["load_state_dict"])
    # state_dict values are copies (torch: views that alias, but documented copies in minitx) -> skip
    # register_buffer forms
    def buf(lib, persistent=None, value="tensor"):
        mod = nn if lib == "m" else tnn
        T = minitx.tensor if lib == "m" else torch.tensor
        m = mod.Module()
        v = T(np.arange(3.0)) if value == "tensor" else None
        if persistent is None:
            m.register_buffer("b", v)
        else:
            m.register_buffer("b", v, persistent=persistent)
        return {"sd": list(m.state_dict()), "buffers": names_of(m.named_buffers()),
                "params": names_of(m.named_parameters())}
    compare("register_buffer", lambda: buf("m"), lambda: buf("t"))
    compare("register_buffer persistent=False", lambda: buf("m", False), lambda: buf("t", False))
    compare("register_buffer None", lambda: buf("m", None, None), lambda: buf("t", None, None))
    expect_error("register_buffer non-tensor", lambda: nn.Module().register_buffer("b", [1, 2]), ["register_buffer", "buffer"])
    compare("register_parameter", lambda: names_of((lambda m: (m.register_parameter("w", nn.Parameter(minitx.tensor(np.ones(2)))), m)[1])(nn.Module()).named_parameters()),
            lambda: names_of((lambda m: (m.register_parameter("w", tnn.Parameter(torch.ones(2))), m)[1])(tnn.Module()).named_parameters()))
    compare("add_module", lambda: names_of((lambda m: (m.add_module("x", nn.Linear(2, 2)), m)[1])(nn.Module()).named_parameters()),
            lambda: names_of((lambda m: (m.add_module("x", tnn.Linear(2, 2)), m)[1])(tnn.Module()).named_parameters()))
    # assigning a plain tensor to a parameter attribute
    def plain(lib):
        l = nn.Linear(2, 2) if lib == "m" else tnn.Linear(2, 2)
        l.weight = minitx.tensor(np.ones((2, 2))) if lib == "m" else torch.ones(2, 2)
        return {"params": names_of(l.named_parameters())}
    compare("assign plain Tensor to .weight", lambda: plain("m"), lambda: plain("t"))

    def setnone(lib):
        l = nn.Linear(2, 2) if lib == "m" else tnn.Linear(2, 2, dtype=torch.float32)
        l.bias = None
        T = minitx.tensor if lib == "m" else torch.tensor
        return {"params": names_of(l.named_parameters()), "sd": list(l.state_dict()),
                "y": tuple(l(T(np.ones((1, 2), dtype=np.float32))).shape)}
    compare("bias = None", lambda: setnone("m"), lambda: setnone("t"))

    def buffer_as_param(lib):
        mod = nn if lib == "m" else tnn
        m = mod.BatchNorm1d(3)
        P = nn.Parameter if lib == "m" else tnn.Parameter
        T = minitx.tensor if lib == "m" else torch.tensor
        m.running_mean = T(np.ones(3))
        return {"buffers": names_of(m.named_buffers()), "params": names_of(m.named_parameters())}
    compare("reassign buffer with a tensor", lambda: buffer_as_param("m"), lambda: buffer_as_param("t"))

    # train/eval propagation
    def modes(lib):
        net = MNet() if lib == "m" else TNet()
        out = {}
        net.eval()
        out["after eval"] = [m.training for m in net.modules()]
        net.b.train()
        out["after b.train"] = [m.training for m in net.modules()]
        net.train(False)
        out["train(False)"] = [m.training for m in net.modules()]
        r_ = net.train()
        out["returns self"] = r_ is net
        return out
    m, t = modes("m"), modes("t")
    for k in t:
        COUNT[0] += 1
        if m[k] != t[k]:
            RESULTS.append(("a", f"train/eval: {k}", f"minitx {m[k]} | torch {t[k]}"))
    compare("train('no') non-bool", lambda: MNet().train("no") and 1, lambda: TNet().train("no") and 1, ["train"])

    # zero_grad
    def zg(lib, **kw):
        net = MNet() if lib == "m" else TNet()
        if lib == "m":
            net.to(dtype="float64")
        T = minitx.tensor if lib == "m" else torch.tensor
        net.b(net.a(T(np.ones((2, 3))))).sum().backward()
        net.zero_grad(**kw)
        return {"grads": [None if p.grad is None else float(as_np(p.grad).sum()) for p in net.parameters()]}
    compare("Module.zero_grad()", lambda: zg("m"), lambda: zg("t"))
    compare("Module.zero_grad(set_to_none=False)", lambda: zg("m", set_to_none=False), lambda: zg("t", set_to_none=False))
    compare("Module.zero_grad(False) positional", lambda: zg("m") if False else (lambda n: (n.zero_grad(False), 1)[1])(MNet()),
            lambda: (lambda n: (n.zero_grad(False), 1)[1])(TNet()))

    # apply
    def ap(lib):
        net = MNet() if lib == "m" else TNet()
        seen = []
        ret = net.apply(lambda m: seen.append(type(m).__name__.replace("MNet", "Net").replace("TNet", "Net")))
        return {"seen": seen, "ret": ret is net}
    m, t = ap("m"), ap("t")
    COUNT[0] += 1
    if m != t:
        RESULTS.append(("a", "apply order", f"minitx {m} | torch {t}"))

    # requires_grad_ on module
    def rg(lib):
        net = MNet() if lib == "m" else TNet()
        ret = net.requires_grad_(False)
        return {"rg": [p.requires_grad for p in net.parameters()], "ret": ret is net}
    compare("Module.requires_grad_(False)", lambda: rg("m"), lambda: rg("t"))
    # Parameter(requires_grad=False) counted
    compare("Parameter(requires_grad=False) in parameters()",
            lambda: (lambda m: (setattr(m, "w", nn.Parameter(minitx.tensor(np.ones(2)), requires_grad=False)), len(list(m.parameters())))[1])(nn.Module()),
            lambda: (lambda m: (setattr(m, "w", tnn.Parameter(torch.ones(2), requires_grad=False)), len(list(m.parameters())))[1])(tnn.Module()))
    compare("Parameter() no args", lambda: nn.Parameter().shape, lambda: tuple(tnn.Parameter().shape))
    # repr
    COUNT[0] += 1
    rm, rt = repr(nn.Sequential(nn.Linear(3, 4), nn.ReLU())), repr(tnn.Sequential(tnn.Linear(3, 4), tnn.ReLU()))
    if rm != rt:
        RESULTS.append(("minor", "repr Sequential", f"minitx {rm!r} | torch {rt!r}"))
    for mk, tk in [(lambda: nn.LayerNorm(4), lambda: tnn.LayerNorm(4)), (lambda: nn.Embedding(4, 3, padding_idx=0),
                   lambda: tnn.Embedding(4, 3, padding_idx=0)), (lambda: nn.Dropout(0.2), lambda: tnn.Dropout(0.2)),
                   (lambda: nn.Conv2d(2, 3, 3), lambda: tnn.Conv2d(2, 3, 3)), (lambda: nn.BatchNorm1d(3), lambda: tnn.BatchNorm1d(3)),
                   (lambda: nn.GELU(), lambda: tnn.GELU()), (lambda: nn.Softmax(1), lambda: tnn.Softmax(1))]:
        COUNT[0] += 1
        a, b = repr(mk()), repr(tk())
        if a != b:
            RESULTS.append(("minor", "repr", f"minitx {a!r} | torch {b!r}"))
    # __getattr__ of missing attribute names the module
    COUNT[0] += 1
    try:
        nn.Linear(2, 2).nonexistent
    except AttributeError as e:
        if "Linear" not in str(e):
            RESULTS.append(("minor", "missing attribute message", short(e)))
    # super().__init__ forgotten
    class Bad(nn.Module):
        def __init__(self):
            self.l = nn.Linear(2, 2)
    expect_error("Module subclass without super().__init__()", Bad, ["super().__init__", "Bad"])
    # modules() / parameters() return types: torch returns generators; list is fine.
    # to(float64) then forward with float32 input
    compare("get_submodule", lambda: type(MNet().get_submodule("b.0")).__name__,
            lambda: type(TNet().get_submodule("b.0")).__name__)
    compare("get_parameter", lambda: tuple(MNet().get_parameter("b.0.weight").shape),
            lambda: tuple(TNet().get_parameter("b.0.weight").shape))
    compare("Module.double()", lambda: MNet().double().a.weight.dtype.name,
            lambda: str(TNet().double().a.weight.dtype).replace("torch.", ""))
    compare("Module.float() after to(float64)", lambda: MNet().to(dtype="float64").float().a.weight.dtype.name,
            lambda: str(TNet().double().float().a.weight.dtype).replace("torch.", ""))
    # forward hook
    def hook(lib):
        net = (nn if lib == "m" else tnn).Linear(2, 2, dtype=torch.float32 if lib == "t" else None)
        seen = []
        h = net.register_forward_hook(lambda mod, inp, out: seen.append(len(inp)))
        T = minitx.tensor if lib == "m" else torch.tensor
        net(T(np.ones((1, 2), dtype=np.float32)))
        h.remove()
        net(T(np.ones((1, 2), dtype=np.float32)))
        return {"seen": seen}
    compare("forward hook + remove", lambda: hook("m"), lambda: hook("t"))
    compare("register_forward_pre_hook", lambda: (nn.Linear(2, 2).register_forward_pre_hook(lambda m, i: None), 1)[1],
            lambda: (tnn.Linear(2, 2).register_forward_pre_hook(lambda m, i: None), 1)[1])


@section
def containers():
    def mk(lib, n=4):
        mod = nn if lib == "m" else tnn
        return [mod.Linear(2, 2) for _ in range(n)]

    # Sequential
    def seq(lib, op):
        mod = nn if lib == "m" else tnn
        ls = mk(lib)
        s = mod.Sequential(*ls)
        out = op(s, ls, lib)
        return out

    ops = {
        "len": lambda s, ls, lib: len(s),
        "index -1": lambda s, ls, lib: s[-1] is ls[-1],
        "slice type": lambda s, ls, lib: type(s[1:3]).__name__,
        "slice len": lambda s, ls, lib: len(s[1:3]),
        "slice param names": lambda s, ls, lib: names_of(s[1:3].named_parameters()),
        "append": lambda s, ls, lib: (s.append((nn if lib == "m" else tnn).ReLU()), len(s))[1],
        "insert": lambda s, ls, lib: (s.insert(0, (nn if lib == "m" else tnn).ReLU()), type(s[0]).__name__)[1],
        "del [1]": lambda s, ls, lib: (s.__delitem__(1), names_of(s.named_parameters()))[1],
        "del slice": lambda s, ls, lib: (s.__delitem__(slice(0, 2)), names_of(s.named_parameters()))[1],
        "setitem": lambda s, ls, lib: (s.__setitem__(0, (nn if lib == "m" else tnn).ReLU()), type(s[0]).__name__)[1],
        "iter": lambda s, ls, lib: [m is l for m, l in zip(s, ls)],
        "index out of range": lambda s, ls, lib: s[10],
        "extend": lambda s, ls, lib: (s.extend([(nn if lib == "m" else tnn).ReLU()]), len(s))[1],
        "OrderedDict ctor": lambda s, ls, lib: names_of((nn if lib == "m" else tnn).Sequential(
            __import__("collections").OrderedDict([("first", ls[0]), ("second", ls[1])])).named_parameters()),
        "forward of empty": lambda s, ls, lib: as_np((nn if lib == "m" else tnn).Sequential()(
            (minitx.tensor if lib == "m" else torch.tensor)(np.ones(2)))).tolist(),
        "same module twice": lambda s, ls, lib: names_of((nn if lib == "m" else tnn).Sequential(ls[0], ls[0]).named_parameters()),
    }
    for name, op in ops.items():
        compare(f"Sequential {name}", lambda: seq("m", op), lambda: seq("t", op), ["Sequential"])

    # ModuleList
    def ml(lib, op):
        mod = nn if lib == "m" else tnn
        ls = mk(lib)
        s = mod.ModuleList(ls)
        return op(s, ls, lib)
    lops = dict(ops)
    lops.pop("OrderedDict ctor")
    lops.pop("forward of empty")
    lops.pop("same module twice")
    lops["None ctor"] = lambda s, ls, lib: len((nn if lib == "m" else tnn).ModuleList(None))
    lops["+"] = lambda s, ls, lib: len(s + s)
    lops["append non-module"] = lambda s, ls, lib: s.append(3)
    lops["index negative after del"] = lambda s, ls, lib: (s.__delitem__(0), s[-1] is ls[-1], names_of(s.named_parameters()))[1:]
    lops["insert -1"] = lambda s, ls, lib: (s.insert(-1, (nn if lib == "m" else tnn).ReLU()), [type(m).__name__ for m in s])[1]
    lops["state_dict after del"] = lambda s, ls, lib: (s.__delitem__(1), list(s.state_dict()))[1]
    lops["setitem -1"] = lambda s, ls, lib: (s.__setitem__(-1, (nn if lib == "m" else tnn).ReLU()), [type(m).__name__ for m in s])[1]
    for name, op in lops.items():
        compare(f"ModuleList {name}", lambda: ml("m", op), lambda: ml("t", op), ["ModuleList"])

    # ModuleDict
    def md(lib, op):
        mod = nn if lib == "m" else tnn
        ls = mk(lib)
        d = mod.ModuleDict({"x": ls[0], "y": ls[1]})
        return op(d, ls, lib)
    dops = {
        "keys": lambda d, ls, lib: list(d.keys()),
        "params": lambda d, ls, lib: names_of(d.named_parameters()),
        "del": lambda d, ls, lib: (d.__delitem__("x"), list(d.keys()))[1],
        "pop": lambda d, ls, lib: (d.pop("x") is ls[0], list(d.keys())),
        "update": lambda d, ls, lib: (d.update({"z": ls[2]}), list(d.keys()))[1],
        "missing key": lambda d, ls, lib: d["nope"],
        "non-str key": lambda d, ls, lib: d.__setitem__(1, ls[2]),
        "key with dot": lambda d, ls, lib: d.__setitem__("a.b", ls[2]),
        "key 'training'": lambda d, ls, lib: (d.__setitem__("training", ls[2]), list(d.keys()))[1],
        "key 'forward'": lambda d, ls, lib: (d.__setitem__("forward", ls[2]), list(d.keys()))[1],
        "clear": lambda d, ls, lib: (d.clear(), len(d))[1],
        "list of pairs ctor": lambda d, ls, lib: list((nn if lib == "m" else tnn).ModuleDict([("q", ls[2]), ("p", ls[3])]).keys()),
    }
    for name, op in dops.items():
        compare(f"ModuleDict {name}", lambda: md("m", op), lambda: md("t", op), ["ModuleDict"])

    # ParameterList
    def pl(lib, op):
        P = nn.Parameter if lib == "m" else tnn.Parameter
        T = minitx.tensor if lib == "m" else torch.tensor
        ps = [P(T(np.ones(2) * i)) for i in range(3)]
        s = (nn if lib == "m" else tnn).ParameterList(ps)
        return op(s, ps, lib)
    pops = {
        "len": lambda s, ps, lib: len(s),
        "names": lambda s, ps, lib: names_of(s.named_parameters()),
        "append tensor": lambda s, ps, lib: (s.append((minitx.tensor if lib == "m" else torch.tensor)(np.ones(2))), len(list(s.parameters())))[1],
        "slice": lambda s, ps, lib: type(s[0:2]).__name__,
        "extend": lambda s, ps, lib: (s.extend([ps[0]]), len(s))[1],
    }
    for name, op in pops.items():
        compare(f"ParameterList {name}", lambda: pl("m", op), lambda: pl("t", op), ["ParameterList"])
    compare("ParameterDict exists", lambda: hasattr(nn, "ParameterDict"), lambda: True)


# ================================================================ 3. optimizers
SHAPES = [(3, 2), (4,), (), (0, 3)]


def opt_run(make_m, make_t, steps=5, none_at=None, groups=None, resume_at=None, grad_seq=None, sched=None):
    """Same parameters and gradient sequence in both; returns dicts of parameter values after
    each step, plus states. ``none_at``: {step: [param index]} gradients set to None at that step."""
    init = [RNG.standard_normal(s) for s in SHAPES]
    grads = grad_seq or [[RNG.standard_normal(s) for s in SHAPES] for _ in range(steps)]

    def run(lib):
        if lib == "m":
            ps = [nn.Parameter(minitx.tensor(a.copy())) for a in init]
        else:
            ps = [torch.nn.Parameter(torch.tensor(a.copy())) for a in init]
        params = ps if groups is None else [dict(g, params=[ps[i] for i in g["params"]]) for g in groups]
        opt = (make_m if lib == "m" else make_t)(params)
        sch = sched[0 if lib == "m" else 1](opt) if sched else None
        out = {}
        for s in range(steps):
            for i, (p, g) in enumerate(zip(ps, grads[s])):
                if none_at and i in none_at.get(s, ()):
                    p.grad = None
                else:
                    p.grad = minitx.tensor(g.copy()) if lib == "m" else torch.tensor(g.copy())
            opt.step()
            if sch is not None:
                sch.step()
                out[f"lr{s}"] = np.array([g_["lr"] for g_ in opt.param_groups])
            for i, p in enumerate(ps):
                out[f"p{i}@{s}"] = p
            if resume_at is not None and s == resume_at:
                # save, build a fresh optimizer over the same params, load, continue
                sd = copy.deepcopy(opt.state_dict())
                opt = (make_m if lib == "m" else make_t)(params)
                opt.load_state_dict(sd)
        return out
    return run("m"), run("t")


@section
def optimizers():
    cfgs = []
    for mom, damp, nest, wd in [(0, 0, False, 0), (0.9, 0, False, 0), (0.9, 0.1, False, 0), (0.9, 0, True, 0),
                                (0.9, 0, True, 0.1), (0, 0, False, 0.1), (0.5, 0.5, False, 0.01), (1.5, 0, False, 0)]:
        kw = dict(lr=0.1, momentum=mom, dampening=damp, nesterov=nest, weight_decay=wd)
        cfgs.append((f"SGD({kw})", lambda p, kw=kw: optim.SGD(p, **kw), lambda p, kw=kw: torch.optim.SGD(p, **kw)))
    for cls in ("Adam", "AdamW"):
        for kw in [dict(lr=0.01), dict(lr=0.01, betas=(0.8, 0.9)), dict(lr=0.01, eps=1e-3), dict(lr=0.01, weight_decay=0.1),
                   dict(lr=0.01, betas=(0.0, 0.5)), dict(lr=0.01, amsgrad=True), dict(lr=0.01, maximize=True),
                   dict(lr=0.0), dict()]:
            cfgs.append((f"{cls}({kw})", lambda p, kw=kw, cls=cls: getattr(optim, cls)(p, **kw),
                         lambda p, kw=kw, cls=cls: getattr(torch.optim, cls)(p, **kw)))
    for label, mk_m, mk_t in cfgs:
        def both(label=label, mk_m=mk_m, mk_t=mk_t, **kw):
            return opt_run(mk_m, mk_t, **kw)
        for variant, kw in [("5 steps", {}), ("grad None at steps 1,2 for p0/p2", dict(none_at={1: [0], 2: [0, 2]})),
                            ("resume after step 2", dict(resume_at=2)),
                            ("p0 grad None for steps 0-2, resume after 1", dict(none_at={0: [0], 1: [0, 3], 2: [0]}, resume_at=1)),
                            ("2 groups lr", dict(groups=[{"params": [0, 1]}, {"params": [2, 3], "lr": 0.5}]))]:
            res = {}
            COUNT[0] += 1
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m, t = opt_run(mk_m, mk_t, **kw)
            except Exception as e:  # noqa: BLE001
                # find who raised
                try:
                    mk_t([torch.nn.Parameter(torch.ones(2))])
                    t_ok = True
                except Exception:  # noqa: BLE001
                    t_ok = False
                RESULTS.append(("b" if t_ok else "c", f"{label} {variant}", short(e)))
                break
            cmp_values(f"{label} {variant}", m, t, rtol=1e-12, atol=1e-14)

    # state_dict contents compared
    def sd(lib, cls, kw):
        P = nn.Parameter if lib == "m" else torch.nn.Parameter
        T = minitx.tensor if lib == "m" else torch.tensor
        ps = [P(T(np.ones(3))), P(T(np.ones(2)))]
        opt = getattr(optim if lib == "m" else torch.optim, cls)(ps, **kw)
        for _ in range(2):
            ps[0].grad = T(np.arange(3.0))
            ps[1].grad = None
            opt.step()
        s = opt.state_dict()
        st = s["state"]
        st = dict(enumerate(st)) if isinstance(st, list) else st
        out = {"state keys": sorted((k, tuple(sorted(v))) for k, v in st.items() if v)}
        for k, v in st.items():
            for kk, vv in v.items():
                out[f"{k}.{kk}"] = vv
        out["group keys ⊇"] = None
        return out, [sorted(g) for g in s["param_groups"]]
    for cls, kw in [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.1)), ("AdamW", dict(lr=0.1))]:
        COUNT[0] += 1
        (m, mg), (t, tg) = sd("m", cls, kw), sd("t", cls, kw)
        if m["state keys"] != t["state keys"]:
            RESULTS.append(("minor", f"{cls} state_dict state keys", f"minitx {m['state keys']} | torch {t['state keys']}"))
        for k in t:
            if k in m and k != "state keys" and t[k] is not None:
                cmp_values(f"{cls} state_dict {k}", {k: m[k]}, {k: t[k]})
        missing = [sorted(set(tg[0]) - set(mg[0]))]
        if missing[0]:
            RESULTS.append(("minor", f"{cls} state_dict param_group keys missing", str(missing[0])))
    # loading a torch optimizer state_dict format (dict state, tensor step)
    def load_torch_sd(cls):
        tp = [torch.nn.Parameter(torch.ones(3))]
        topt = getattr(torch.optim, cls)(tp, lr=0.1, **({"momentum": 0.9} if cls == "SGD" else {}))
        tp[0].grad = torch.arange(3.0)
        topt.step()
        tsd = topt.state_dict()
        msd = {"state": {k: {kk: (vv.numpy() if torch.is_tensor(vv) and vv.ndim else (int(vv.item()) if kk == "step" else vv))
                             for kk, vv in v.items()} for k, v in tsd["state"].items()},
               "param_groups": tsd["param_groups"]}
        mp = [nn.Parameter(minitx.tensor(np.ones(3)))]
        mopt = getattr(optim, cls)(mp, lr=0.1, **({"momentum": 0.9} if cls == "SGD" else {}))
        mopt.load_state_dict(msd)
        return 1
    for cls in ("SGD", "Adam", "AdamW"):
        compare(f"{cls}.load_state_dict(torch's state_dict, arrays converted)", lambda: load_torch_sd(cls), lambda: 1, [cls])

    # zero_grad
    def ozg(lib, **kw):
        P = nn.Parameter if lib == "m" else torch.nn.Parameter
        T = minitx.tensor if lib == "m" else torch.tensor
        p = P(T(np.ones(2)))
        p.grad = T(np.ones(2))
        opt = (optim if lib == "m" else torch.optim).SGD([p], lr=0.1)
        opt.zero_grad(**kw)
        return {"g": p.grad}
    compare("optimizer.zero_grad()", lambda: ozg("m"), lambda: ozg("t"))
    compare("optimizer.zero_grad(set_to_none=False)", lambda: ozg("m", set_to_none=False), lambda: ozg("t", set_to_none=False))
    # constructor errors
    for cls, kw in [("SGD", dict(lr=-0.1)), ("SGD", dict(lr=0.1, momentum=-1)), ("SGD", dict(lr=0.1, nesterov=True)),
                    ("SGD", dict(lr=0.1, weight_decay=-1)), ("Adam", dict(lr=-1)), ("Adam", dict(betas=(1.0, 0.9))),
                    ("Adam", dict(betas=(0.9,))), ("Adam", dict(eps=-1)), ("AdamW", dict(weight_decay=-0.1)),
                    ("SGD", dict(lr=float("nan"))), ("Adam", dict(lr="0.1"))]:
        COUNT[0] += 1
        t_ok = True
        try:
            getattr(torch.optim, cls)([torch.nn.Parameter(torch.ones(2))], **kw)
        except Exception:  # noqa: BLE001
            t_ok = False
        try:
            getattr(optim, cls)([nn.Parameter(minitx.tensor(np.ones(2)))], **kw)
            if not t_ok:
                RESULTS.append(("d", f"{cls}({kw})", "minitx accepts, torch raises"))
        except Exception as e:  # noqa: BLE001
            if t_ok:
                RESULTS.append(("b" if cls in str(e) else "bc", f"{cls}({kw})", f"minitx {short(e)} | torch ok"))
            elif cls not in str(e):
                RESULTS.append(("c", f"{cls}({kw})", short(e)))
    compare("SGD(params) without lr", lambda: optim.SGD([nn.Parameter(minitx.tensor(np.ones(2)))]) and 1,
            lambda: torch.optim.SGD([torch.nn.Parameter(torch.ones(2))]) and 1, ["SGD"])
    # add_param_group after steps
    def apg(lib):
        P = nn.Parameter if lib == "m" else torch.nn.Parameter
        T = minitx.tensor if lib == "m" else torch.tensor
        p, q = P(T(np.ones(2))), P(T(np.ones(3)))
        opt = (optim if lib == "m" else torch.optim).Adam([p], lr=0.1)
        p.grad = T(np.array([1.0, -2.0]))
        opt.step()
        opt.add_param_group({"params": [q], "lr": 0.2})
        for _ in range(2):
            p.grad = T(np.array([1.0, -2.0]))
            q.grad = T(np.array([0.5, 1.0, -1.0]))
            opt.step()
        return {"p": p, "q": q}
    compare("Adam add_param_group after a step", lambda: apg("m"), lambda: apg("t"), ["Adam"], rtol=1e-12)


@section
def schedules():
    # ReduceLROnPlateau against torch's
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.7, 0.7, 0.7, 0.7]
    for kw in [dict(), dict(patience=1), dict(patience=0, factor=0.5), dict(patience=1, cooldown=2),
               dict(mode="max", patience=1), dict(threshold_mode="abs", threshold=0.06, patience=1),
               dict(patience=0, factor=0.5, min_lr=0.02), dict(patience=0, factor=0.5, min_lr=[0.02, 0.3]),
               dict(patience=0, factor=0.99999999)]:
        def run(lib):
            P = nn.Parameter if lib == "m" else torch.nn.Parameter
            T = minitx.tensor if lib == "m" else torch.tensor
            ps = [P(T(np.ones(2))), P(T(np.ones(2)))]
            o = (optim if lib == "m" else torch.optim).SGD([{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.5}], lr=0.1)
            s = (optim.ReduceLROnPlateau if lib == "m" else torch.optim.lr_scheduler.ReduceLROnPlateau)(o, **kw)
            out = {}
            for i, mval in enumerate(metrics if kw.get("mode") != "max" else [-v for v in metrics]):
                s.step(mval)
                out[f"lr@{i}"] = np.array([g["lr"] for g in o.param_groups])
            out["last_lr"] = np.array(s.get_last_lr())
            return out
        compare(f"ReduceLROnPlateau({kw})", lambda: run("m"), lambda: run("t"), ["ReduceLROnPlateau"], rtol=1e-13)
    # WarmupCosine vs LambdaLR with the same formula; WarmupInverseSqrt/Noam vs LambdaLR
    def lam(lib, which):
        P = nn.Parameter if lib == "m" else torch.nn.Parameter
        T = minitx.tensor if lib == "m" else torch.tensor
        p = P(T(np.ones(2)))
        peak = 0.1
        if lib == "m":
            o = optim.SGD([p], lr=peak)
            s = {"cos": lambda: optim.WarmupCosine(o, peak, 3, 10, 0.01),
                 "isqrt": lambda: optim.WarmupInverseSqrt(o, peak, 3),
                 "noam": lambda: optim.NoamSchedule(o, 16, 3, factor=2.0),
                 "cos0": lambda: optim.WarmupCosine(o, peak, 0, 5)}[which]()
        else:
            o = torch.optim.SGD([p], lr=peak)
            f = {"cos": lambda t: optim.schedules.warmup_cosine_lr(t + 1, peak, 3, 10, 0.01) / peak,
                 "isqrt": lambda t: optim.schedules.warmup_inverse_sqrt_lr(t + 1, peak, 3) / peak,
                 "noam": lambda t: 2.0 * 16 ** -0.5 * min((t + 1) ** -0.5, (t + 1) * 3 ** -1.5) / peak,
                 "cos0": lambda t: (0.5 * (1 + math.cos(math.pi * min(t + 1, 5) / 5)))}[which]
            s = torch.optim.lr_scheduler.LambdaLR(o, f)
        out = {"lr@0": np.array(o.param_groups[0]["lr"])}
        for i in range(12):
            p.grad = T(np.ones(2))
            o.step()
            s.step()
            out[f"lr@{i + 1}"] = np.array(o.param_groups[0]["lr"])
        return out
    for which in ("cos", "isqrt", "noam", "cos0"):
        compare(f"schedule {which} vs LambdaLR", lambda: lam("m", which), lambda: lam("t", which), [], rtol=1e-13)
    # torch.optim.lr_scheduler names present?
    for name in ("StepLR", "LambdaLR", "CosineAnnealingLR", "LinearLR", "OneCycleLR", "ExponentialLR"):
        COUNT[0] += 1
        if not hasattr(optim, name) and not hasattr(optim, "lr_scheduler"):
            pass  # minitx documents its own schedule set (module docstring); not reported
    # ReduceLROnPlateau state_dict resume
    def resume(lib):
        P = nn.Parameter if lib == "m" else torch.nn.Parameter
        T = minitx.tensor if lib == "m" else torch.tensor
        o = (optim if lib == "m" else torch.optim).SGD([P(T(np.ones(2)))], lr=0.1)
        S = optim.ReduceLROnPlateau if lib == "m" else torch.optim.lr_scheduler.ReduceLROnPlateau
        s = S(o, patience=1, cooldown=1)
        for mval in metrics[:5]:
            s.step(mval)
        sd = copy.deepcopy(s.state_dict())
        s2 = S(o, patience=1, cooldown=1)
        s2.load_state_dict(sd)
        out = {}
        for i, mval in enumerate(metrics[5:]):
            s2.step(mval)
            out[f"lr@{i}"] = np.array(o.param_groups[0]["lr"])
        return out
    compare("ReduceLROnPlateau resume via state_dict", lambda: resume("m"), lambda: resume("t"), ["ReduceLROnPlateau"])
    for kw in [dict(factor=1.0), dict(factor=-0.1), dict(mode="bad"), dict(patience=-1), dict(min_lr=[0.1, 0.2])]:
        COUNT[0] += 1
        try:
            optim.ReduceLROnPlateau(optim.SGD([nn.Parameter(minitx.tensor(np.ones(2)))], lr=0.1), **kw)
            RESULTS.append(("d", f"ReduceLROnPlateau({kw})", "minitx accepts"))
        except Exception as e:  # noqa: BLE001
            if "ReduceLROnPlateau" not in str(e):
                RESULTS.append(("c", f"ReduceLROnPlateau({kw})", short(e)))


@section
def clipping():
    for norm_type in (2, 2.0, float("inf"), "inf", 1, 0.5, 3, 0, -1):
        # torch's inf norm refuses a 0-size gradient: leave it out there
        shapes = [(3, 2), (4,), ()] + ([] if norm_type in (float("inf"), "inf") else [(0, 2)])
        for max_norm in (0.5, 100.0, 0.0):
            for none_idx in (None, 1):
                for special in (None, "nan", "inf"):
                    for err in (False, True):
                        if special is None and err:
                            continue
                        gs = [RNG.standard_normal(s) for s in shapes]
                        if special == "nan":
                            gs[0][0, 0] = np.nan
                        elif special == "inf":
                            gs[0][0, 0] = np.inf

                        def run(lib):
                            P = nn.Parameter if lib == "m" else torch.nn.Parameter
                            T = minitx.tensor if lib == "m" else torch.tensor
                            ps = [P(T(np.ones(s))) for s in shapes]
                            for i, (p, g) in enumerate(zip(ps, gs)):
                                p.grad = None if i == none_idx else T(g.copy())
                            fn = optim.clip_grad_norm_ if lib == "m" else torch.nn.utils.clip_grad_norm_
                            total = fn(ps, max_norm, norm_type=norm_type, error_if_nonfinite=err)
                            out = {"total": np.asarray(float(total))}
                            if special is None:  # minitx documents leaving gradients alone on a non-finite norm
                                for i, p in enumerate(ps):
                                    out[f"g{i}"] = p.grad
                            return out
                        compare(f"clip_grad_norm_(max_norm={max_norm}, norm_type={norm_type!r}, none={none_idx}, "
                                f"{special}, error_if_nonfinite={err})", lambda: run("m"), lambda: run("t"),
                                ["clip_grad_norm_"], rtol=1e-12)
    # all None, empty list, single tensor
    for label, mk in [("all grads None", lambda P, T: [P(T(np.ones(2)))]), ("empty list", lambda P, T: []),
                      ("single tensor", lambda P, T: (lambda p: (setattr(p, "grad", T(np.full(2, 3.0))), p)[1])(P(T(np.ones(2)))))]:
        def run(lib, mk=mk):
            P = nn.Parameter if lib == "m" else torch.nn.Parameter
            T = minitx.tensor if lib == "m" else torch.tensor
            fn = optim.clip_grad_norm_ if lib == "m" else torch.nn.utils.clip_grad_norm_
            return {"total": np.asarray(float(fn(mk(P, T), 1.0)))}
        compare(f"clip_grad_norm_ {label}", lambda: run("m"), lambda: run("t"), ["clip_grad_norm_"])
    # generator of params
    def gen(lib):
        P = nn.Parameter if lib == "m" else torch.nn.Parameter
        T = minitx.tensor if lib == "m" else torch.tensor
        ps = [P(T(np.ones(2))) for _ in range(2)]
        for p in ps:
            p.grad = T(np.full(2, 3.0))
        fn = optim.clip_grad_norm_ if lib == "m" else torch.nn.utils.clip_grad_norm_
        tot = fn((p for p in ps), 1.0)
        return {"total": np.asarray(float(tot)), "g0": ps[0].grad, "g1": ps[1].grad}
    compare("clip_grad_norm_ generator of params", lambda: gen("m"), lambda: gen("t"), ["clip_grad_norm_"])
    # float32 gradients: total in float32 in torch
    def f32(lib):
        P = nn.Parameter if lib == "m" else torch.nn.Parameter
        T = minitx.tensor if lib == "m" else torch.tensor
        ps = [P(T(np.ones(3, dtype=np.float32)))]
        ps[0].grad = T(np.array([1e30, 1e30, 1e30], dtype=np.float32))
        fn = optim.clip_grad_norm_ if lib == "m" else torch.nn.utils.clip_grad_norm_
        tot = fn(ps, 1.0)
        return {"total": np.asarray(float(tot)), "g": ps[0].grad}
    compare("clip_grad_norm_ float32 grads overflow the norm", lambda: f32("m"), lambda: f32("t"), ["clip_grad_norm_"], rtol=1e-6)


@section
def gradscaler():
    """GradScaler on CPU: scale, unscale_, step, update sequence with an inf step."""
    def run(lib):
        P = nn.Parameter if lib == "m" else torch.nn.Parameter
        T = minitx.tensor if lib == "m" else torch.tensor
        p = P(T(np.ones(3, dtype=np.float32)))
        opt = (optim if lib == "m" else torch.optim).SGD([p], lr=0.1)
        sc = optim.GradScaler(init_scale=4.0, growth_interval=2) if lib == "m" else \
            torch.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
        out = {}
        for s, gval in enumerate([1.0, 2.0, np.inf, 1.0, 1.0, np.nan, 3.0]):
            x = T(np.array([gval, 1.0, 2.0], dtype=np.float32))
            loss = (p * x).sum()
            sc.scale(loss).backward()
            if s == 3:
                sc.unscale_(opt)
            sc.step(opt)
            sc.update()
            opt.zero_grad()
            out[f"p@{s}"] = p
            out[f"scale@{s}"] = np.asarray(float(sc.get_scale()))
        return out
    compare("GradScaler SGD sequence with inf/nan", lambda: run("m"), lambda: run("t"), ["GradScaler"], rtol=1e-6)

    def sd(lib):
        sc = optim.GradScaler(init_scale=8.0) if lib == "m" else torch.amp.GradScaler("cpu", init_scale=8.0)
        d = sc.state_dict()
        return {k: (np.asarray(float(v)) if isinstance(v, (int, float)) else v) for k, v in d.items()}
    compare("GradScaler.state_dict before first scale", lambda: sd("m"), lambda: sd("t"), ["GradScaler"])


@section
def extra():
    """Follow-ups of the findings above, as direct reproductions."""
    from collections import OrderedDict
    # Sequential(OrderedDict) forward
    def seq_od(lib):
        mod = nn if lib == "m" else tnn
        s = mod.Sequential(OrderedDict([("fc", mod.Linear(2, 3)), ("act", mod.ReLU())]))
        T = minitx.tensor if lib == "m" else torch.tensor
        return {"out shape": np.array(as_np(s(T(np.ones((1, 2))))).shape)}
    compare("Sequential(OrderedDict) forward output shape", lambda: seq_od("m"), lambda: seq_od("t"), ["Sequential"])
    compare("Sequential(Linear, np.tanh) len", lambda: len(nn.Sequential(nn.Linear(2, 2), np.tanh)),
            lambda: len(tnn.Sequential(tnn.Linear(2, 2), np.tanh)), ["Sequential"])
    # CrossEntropyLoss(weight) positional with batch == classes
    x, t, w = RNG.standard_normal((5, 5)), np.arange(5), np.arange(1.0, 6.0)
    compare("CrossEntropyLoss(weight) positional, batch == classes",
            lambda: {"loss": nn.CrossEntropyLoss(minitx.tensor(w))(minitx.tensor(x), minitx.tensor(t))},
            lambda: {"loss": tnn.CrossEntropyLoss(torch.tensor(w))(torch.tensor(x), torch.tensor(t))}, ["CrossEntropyLoss"])
    # clip_grad_norm_ on float16 gradients >= 256
    def clip16(lib):
        P = nn.Parameter if lib == "m" else torch.nn.Parameter
        T = minitx.tensor if lib == "m" else torch.tensor
        p = P(T(np.zeros(3, dtype=np.float16)))
        p.grad = T(np.full(3, 300.0, dtype=np.float16))
        fn = optim.clip_grad_norm_ if lib == "m" else torch.nn.utils.clip_grad_norm_
        return {"total": np.asarray(float(fn([p], 1.0))), "g": p.grad}
    compare("clip_grad_norm_ float16 grads of 300", lambda: clip16("m"), lambda: clip16("t"), ["clip_grad_norm_"], rtol=2e-3)
    # ModuleDict keys that are Module attributes
    for key in ("keys", "training", "to"):
        def mdk(lib, key=key):
            mod = nn if lib == "m" else tnn
            d = mod.ModuleDict({key: mod.Linear(2, 2)})
            d.eval()
            return {"keys": list(d.keys()), "n": len(list(d.parameters()))}
        compare(f"ModuleDict key {key!r}", lambda: mdk("m"), lambda: mdk("t"), ["ModuleDict"])


def report():
    order = {"a": 0, "bc": 1, "b": 2, "c": 3, "d": 4, "minor": 5}
    RESULTS.sort(key=lambda r_: order.get(r_[0], 9))
    for cat, label, detail in RESULTS:
        print(f"[{cat}] {label}: {detail}")
    print(f"\n{COUNT[0]} comparisons, {len(RESULTS)} findings")


if __name__ == "__main__":
    chosen = sys.argv[1:] or list(SECTIONS)
    for name in chosen:
        try:
            SECTIONS[name]()
        except Exception:  # noqa: BLE001
            print(f"section {name} crashed:\n{traceback.format_exc()}")
    report()
