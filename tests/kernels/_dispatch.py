"""Running one op both ways: the xp reference path and the fused kernel path.

Shared by test_dispatch.py (kernels through the CPU emulation, ``K.emulate_on_cpu``) and
test_gpu.py (CuPy arrays on a GPU, where the kernels are on by default). A *case* is
``(fn, inputs, kernels)``: a function of minitx tensors, the NumPy arrays it takes (each
becomes a leaf requiring grad), and the kernels its fused path must launch.
"""
import contextlib

import numpy as np

import _reference as ref
import minitx
import minitx.functional as F
from minitx import backend, optim
from minitx import kernels as K
from minitx.kernels import _runtime, cpu_harness
from minitx.nn import Transformer


@contextlib.contextmanager
def kernel_launches():
    """Collect the names of the kernels launched inside the block (emulated or on the GPU)."""
    names = []
    backends = [cpu_harness.cpu_backend()] + ([_runtime.cupy_backend()] if K.available() else [])
    for be in backends:
        original = be.launch

        def launch(filename, kernel, *args, _original=original, **kwargs):
            names.append(kernel)
            return _original(filename, kernel, *args, **kwargs)

        be.launch = launch  # an instance attribute shadows the method until deleted
    try:
        yield names
    finally:
        for be in backends:
            del be.launch


def leaves(arrays, device="cpu"):
    return [minitx.tensor(a, device=device, requires_grad=True) for a in arrays]


def cotangent_of(shape, dtype, seed=0):
    """The fixed random cotangent run() sends back through an output of this shape."""
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def run(fn, arrays, device="cpu", seed=0, cotangent_dtype=None):
    """fn's output and the gradients of its inputs for a fixed random cotangent, as NumPy (the
    cotangent rounded to ``cotangent_dtype`` first, when given)."""
    inputs = leaves(arrays, device)
    out = fn(*inputs)
    cotangent = cotangent_of(out.shape, cotangent_dtype or out.dtype, seed)
    out.backward(backend.to_device(cotangent.astype(out.dtype), device))
    grads = [None if t.grad is None else t.grad.numpy() for t in inputs]
    return out.numpy(), grads


def path_context(fused, device="cpu"):
    """The reference path (use_fused(False)), or the kernels: through the CPU emulation for
    NumPy arrays, by default on the GPU."""
    if not fused:
        return K.use_fused(False)
    return K.emulate_on_cpu() if device == "cpu" else contextlib.nullcontext()


def both_paths(fn, arrays, device="cpu"):
    """(reference, fused, launched): run() under use_fused(False), run() with the kernels on,
    and the names of the kernels the second run launched."""
    with path_context(False, device):
        reference = run(fn, arrays, device)
    with path_context(True, device), kernel_launches() as names:
        got = run(fn, arrays, device)
    return reference, got, names


def tolerance(dtype):
    return dict(rtol=1e-9, atol=1e-11) if np.dtype(dtype) == np.float64 else dict(rtol=2e-4, atol=2e-5)


def assert_paths_agree(case, device="cpu"):
    """The fused path launches the case's kernels and agrees with the reference path."""
    fn, arrays, expected_kernels = case
    (ref_out, ref_grads), (out, grads), names = both_paths(fn, arrays, device)
    missing = set(expected_kernels) - set(names)
    assert not missing, f"fused path did not launch {sorted(missing)} (launched {sorted(set(names))})"
    tol = tolerance(arrays[0].dtype)
    np.testing.assert_allclose(out, ref_out, **tol)
    for got, want in zip(grads, ref_grads):
        np.testing.assert_allclose(got, want, **tol)


#: bfloat16 keeps 8 significant bits: one rounding is off by at most 2**-9 of the value. The fused
#: path rounds each result once, but its backward reads the forward's rounded outputs (softmax's y,
#: attention's o), so a gradient may be off by a few roundings of the largest term it sums.
BFLOAT16_TOLERANCE = 2.0**-6


def assert_bfloat16_follows_float32(case, device="cpu"):
    """On bfloat16 arrays the fused path launches the case's kernels in bfloat16 storage and
    computes in float32: its outputs and gradients stay bfloat16 and lie within
    BFLOAT16_TOLERANCE (relative to the largest value of each) of the float32 reference path
    run on the same bfloat16-valued inputs and cotangent."""
    fn, arrays, expected_kernels = case
    bfloat16 = backend.resolve_dtype("bfloat16")  # ml_dtypes' type: imported only here
    low = [a.astype(bfloat16) for a in arrays]
    with path_context(False, device):
        ref_out, ref_grads = run(fn, [a.astype(np.float32) for a in low], device, cotangent_dtype=bfloat16)
    with path_context(True, device), kernel_launches() as names:
        out, grads = run(fn, low, device, cotangent_dtype=bfloat16)
    missing = set(expected_kernels) - set(names)
    assert not missing, f"fused path did not launch {sorted(missing)} (launched {sorted(set(names))})"
    for got, want in zip([out, *grads], [ref_out, *ref_grads]):
        assert got.dtype == bfloat16
        scale = float(np.max(np.abs(want), initial=0.0))
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=BFLOAT16_TOLERANCE,
                                   atol=BFLOAT16_TOLERANCE * scale)


def assert_softmax_bfloat16_within_rounding(shape, device="cpu"):
    """Softmax's bfloat16 kernels against the float32 reference, element by element, within the
    error their storage allows (u = 2**-8, two half-ulp roundings). Forward: y rounded once,
    |dy_i| <= u y_i. Backward: dx_i = y_i (g_i - s), s = sum_j g_j y_j, computed from the
    *rounded* y, so |ds| <= u sum_j |g_j| y_j and
        |d dx_i| <= u (y_i sum_j |g_j| y_j + y_i |g_i - s| + |dx_i|).
    In a sharp row (y_i near 1, g_i near s) dx_i is far smaller than the g_j y_j it is made of,
    so a tolerance relative to the largest dx_i, as assert_bfloat16_follows_float32 uses, fails
    although every kernel rounds as it should."""
    fn, arrays, expected_kernels = softmax_case(shape, np.float32)
    bfloat16 = backend.resolve_dtype("bfloat16")
    low = [a.astype(bfloat16) for a in arrays]
    with path_context(False, device):
        y, (dx,) = run(fn, [a.astype(np.float32) for a in low], device, cotangent_dtype=bfloat16)
    with path_context(True, device), kernel_launches() as names:
        got_y, (got_dx,) = run(fn, low, device, cotangent_dtype=bfloat16)
    assert set(expected_kernels) <= set(names), f"launched {sorted(set(names))}"
    assert got_y.dtype == got_dx.dtype == bfloat16
    g = cotangent_of(y.shape, bfloat16).astype(np.float32)
    s = (g * y).sum(-1, keepdims=True)
    u, tiny = 2.0**-8, 2.0**-126
    assert np.all(np.abs(got_y.astype(np.float32) - y) <= u * y + tiny)
    bound = u * (y * (np.abs(g) * y).sum(-1, keepdims=True) + y * np.abs(g - s) + np.abs(dx)) + tiny
    err = np.abs(got_dx.astype(np.float32) - dx)
    assert np.all(err <= bound), f"worst gradient element at {(err / bound).max():.2f} of its bound"


def with_and_without_a_debugging_hook(gradients, monkeypatch):
    """(gradients(), gradients() again while a debugging hook watches every op): the engine's
    in-place sums and the ops' own adds (backward_into, backward_adding), then the plain sums
    the engine makes when they are off."""
    from minitx.autograd import engine

    fast = gradients()
    with monkeypatch.context() as m:
        m.setattr(engine, "backward_hooks", [lambda fn, dy, grads: None])
        return fast, gradients()


def assert_tied_table_adds_into_the_output_layers(dtype, device, monkeypatch):
    """A table used by two embeddings and a tied output layer (a Transformer with shared
    embeddings): the output layer's gradient is new (Linear.fresh_gradients), so both embedding
    kernels add into it (backward_into; not for a bfloat16 table), and the gradients are the bits
    of the plain sums the engine makes when a debugging hook watches every op (which turns this
    off)."""
    from minitx.ops.indexing import Embedding

    dtype = backend.resolve_dtype(dtype)
    rng = np.random.default_rng(4)
    table = rng.standard_normal((11, 6)).astype(dtype)
    src, tgt = rng.integers(0, 11, (3, 5)), rng.integers(0, 11, (3, 4))
    x = rng.standard_normal((3, 4, 6)).astype(dtype)

    def gradients():
        w, h = leaves([table, x], device)
        a = F.embedding(minitx.tensor(src, device=device), w, 0).sum(1)  # [3, 6]
        b = F.embedding(minitx.tensor(tgt, device=device), w, 0)          # [3, 4, 6]
        logits = F.linear(h * b + a.reshape(3, 1, 6), w)                   # [3, 4, 11]
        (logits * logits).sum().backward()
        return w.grad.numpy(), h.grad.numpy()

    into, original = [], Embedding.backward_into

    def spy(self, dy, grad):  # the shapes of the sums an embedding added into
        added = original(self, dy, grad)
        if added:
            into.append(grad.shape)
        return added
    monkeypatch.setattr(Embedding, "backward_into", spy)
    with path_context(True, device), kernel_launches() as names:
        fast, plain = with_and_without_a_debugging_hook(gradients, monkeypatch)
    # bfloat16 rows: backward rounds the kernel's float32 sums first, so the engine adds (no into)
    assert into == ([] if np.dtype(dtype).itemsize == 2 else [(11, 6), (11, 6)])
    assert names.count("embedding_backward") == 4
    for got, want in zip(fast, plain):
        np.testing.assert_array_equal(got, want)


def assert_layer_norm_adds_the_residual_gradient(dtype, device, fused, monkeypatch):
    """Two pre-norm residual blocks, y = x + linear(layer_norm(x)): x's gradient from the residual
    add is pending when the layer norm's backward runs, and the layer norm adds it in as it writes
    dx (backward_adding: float32 and float64; a bfloat16 dx is left to the engine's add). The
    gradients are the bits of the plain sums the engine makes when a debugging hook watches
    every op (which turns this off)."""
    from minitx.ops.norm import LayerNorm

    dtype = backend.resolve_dtype(dtype)
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal(s).astype(dtype) for s in ((3, 5, 8), (8,), (8,), (8, 8), (8,), (8,), (8, 8))]

    def gradients():
        x, w1, b1, m1, w2, b2, m2 = leaves(arrays, device)
        h = x + F.linear(F.layer_norm(x, w1, b1), m1)
        y = h + F.linear(F.layer_norm(h, w2, b2), m2)
        (y * y).sum().backward()
        return [t.grad.numpy() for t in (x, w1, b1, m1, w2, b2, m2)]

    added, original = [], LayerNorm.backward_adding

    def spy(self, dy, index, pending):  # which gradients a layer norm added its dx into
        grads = original(self, dy, index, pending)
        if grads is not None:
            added.append((index, pending.shape))
        return grads
    monkeypatch.setattr(LayerNorm, "backward_adding", spy)
    with path_context(fused, device), kernel_launches() as names:
        fast, plain = with_and_without_a_debugging_hook(gradients, monkeypatch)
    assert added == ([] if np.dtype(dtype).itemsize == 2 else [(0, (3, 5, 8))] * 2)
    assert ("layer_norm_backward_dx" in names) == fused
    for got, want in zip(fast, plain):
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


# ---------------------------------------------------------------- cases


def _rng_arrays(seed, dtype, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def softmax_case(shape, dtype, seed=0):
    # sharp rows (logits of standard deviation 3) drawn as data, not scaled inside the case: a
    # scale inside would round its bfloat16 product before the kernel but not in the float32
    # reference, and one bfloat16 ulp of a logit near 8 moves its probability by 3%
    (x,) = _rng_arrays(seed, dtype, shape)
    return (lambda x: F.softmax(x, -1)), [(3 * x).astype(dtype)], ["softmax_forward", "softmax_backward"]


def layer_norm_case(shape, dtype, seed=0):
    arrays = _rng_arrays(seed, dtype, shape, shape[-1:], shape[-1:])
    return (lambda x, w, b: F.layer_norm(x, w, b, eps=1e-3)), arrays, [
        "layer_norm_forward", "layer_norm_backward_dx", "layer_norm_backward_dwdb_partial"]


def cross_entropy_case(rows, classes, dtype, reduction="mean", smoothing=0.1, seed=0):
    (x,) = _rng_arrays(seed, dtype, (rows, classes))
    t = np.random.default_rng(seed + 1).integers(0, classes, rows)
    t[::3] = -100

    def fn(x):
        return F.cross_entropy(x, minitx.tensor(t, device=x.device), label_smoothing=smoothing,
                               reduction=reduction)
    return fn, [x], ["cross_entropy_forward", "cross_entropy_backward"]


def key_padding_mask(batch, lk, seed=0):
    """[B, 1, 1, Lk] (the Transformer's shape), a few keys of some rows masked, row 0 whole."""
    keep = np.random.default_rng(seed).random((batch, lk)) < 0.7
    keep[:, 0] = True
    return keep[:, None, None, :]


def attention_kernels(dtype, d, lk):
    """The kernels of an attention's forward and backward (but delta): the backward in one kernel
    where one block's tile holds all lk keys (attention.one_pass_backward_runs), else two."""
    from minitx.kernels.attention import one_pass_backward_runs
    backward = (["attention_backward_onepass"] if one_pass_backward_runs(backend.resolve_dtype(dtype), d, lk)
                else ["attention_backward_dkdv", "attention_backward_dq"])
    return ["attention_forward"] + backward


def attention_case(b, h, lq, lk, d, dtype, masked=True, causal=False, seed=0):
    arrays = _rng_arrays(seed, dtype, (b, h, lq, d), (b, h, lk, d), (b, h, lk, d))
    mask = key_padding_mask(b, lk, seed) if masked else None

    def fn(q, k, v):
        m = None if mask is None else minitx.tensor(mask, device=q.device)
        return F.scaled_dot_product_attention(q, k, v, mask=m, causal=causal)
    return fn, arrays, attention_kernels(dtype, d, lk)


def embedding_case(vocab, ids_shape, dim, dtype, padding_idx=None, seed=0):
    (w,) = _rng_arrays(seed, dtype, (vocab, dim))
    ids = np.random.default_rng(seed + 1).integers(0, vocab, ids_shape)

    def fn(w):
        return F.embedding(minitx.tensor(ids, device=w.device), w, padding_idx)
    return fn, [w], ["embedding_backward"]


def bias_act_case(shape, activation, dtype, seed=0):
    """p = 0: both paths are deterministic and must agree (dropout itself: see the tests)."""
    arrays = _rng_arrays(seed, dtype, shape, shape[-1:])
    return (lambda x, b: F.bias_act_dropout(x, b, activation, p=0.0)), arrays, [
        "bias_act_dropout_forward", "bias_act_dropout_backward"]


def attention_dropout_both_ways(causal, device="cpu"):
    """The fused kernels (no weights asked for) and the unfused path (weights asked for, so P
    is formed and its mask drawn by dropout.cu) drop the same weights after the same
    manual_seed: equal outputs and gradients, and the kernels ran only in the first."""
    rng = np.random.default_rng(9)
    arrays = [rng.standard_normal((2, 3, 6, 8)) for _ in range(3)]
    mask = rng.random((2, 1, 1, 6)) < 0.8
    do = rng.standard_normal((2, 3, 6, 8))

    def run(return_weights):
        minitx.manual_seed(5)
        q, k, v = leaves(arrays, device)
        with path_context(True, device), kernel_launches() as names:
            out = F.scaled_dot_product_attention(q, k, v, mask=minitx.tensor(mask, device=device), causal=causal,
                                                 dropout_p=0.4, return_weights=return_weights)
            out = out[0] if return_weights else out
            (out * minitx.tensor(do, device=device)).sum().backward()
        return [out.numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy()], names

    fused, fused_names = run(False)
    unfused, unfused_names = run(True)
    assert "attention_forward" in fused_names and "attention_forward" not in unfused_names
    for got, want in zip(fused, unfused):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- optimizer, clipping, a training step


def optimizer_run(opt_class, fused, device="cpu"):
    """Three Adam(W) steps on three parameters, the last one without a gradient at the first
    step (so its step count lags: the one launch of each step reads two different counts).
    Returns (parameters, second moments, launched kernels)."""
    rng = np.random.default_rng(5)
    params = leaves([rng.standard_normal(s) for s in ((3,), (2, 5), (4,))], device)
    opt = opt_class(params, lr=0.1, weight_decay=0.1)
    with path_context(fused, device), kernel_launches() as names:
        for step in range(3):
            for i, p in enumerate(params):
                p.grad = None if (step == 0 and i == 2) else minitx.tensor(rng.standard_normal(p.shape), device=device)
            opt.step()
    return ([p.numpy() for p in params], [backend.to_numpy(s["exp_avg_sq"]) for s in opt.state.values()],
            names)


def clip_run(scale, max_norm, fused, device="cpu"):
    """clip_grad_norm_ over two gradients times ``scale``: (norm, clipped grads, kernels)."""
    rng = np.random.default_rng(6)
    params = leaves([rng.standard_normal(s) for s in ((3,), (4, 2))], device)
    for p in params:
        p.grad = minitx.tensor(rng.standard_normal(p.shape) * scale, device=device)
    with path_context(fused, device), kernel_launches() as names:
        norm = optim.clip_grad_norm_(params, max_norm)
    return norm, [p.grad.numpy() for p in params], names


#: kernels a training step must launch on the fused path
TRAINING_STEP_KERNELS = {"attention_forward", "attention_backward_delta", "layer_norm_forward", "cross_entropy_forward",
                         "bias_act_dropout_forward", "embedding_backward", "adam_step", "sumsq_partial",
                         "nonfinite_partial"}


def training_step(fused, device="cpu", autocast=False, **sizes):
    """One step of a small float64 Transformer (no dropout): forward, cross-entropy, backward,
    clipping, AdamW; with ``autocast``, a float32 one whose forward runs under
    minitx.autocast("bfloat16"). Returns (loss, norm, grads, updated params, set of launched
    kernels)."""
    minitx.manual_seed(0)
    config = dict(d_model=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=12, max_len=8)
    config.update(sizes)
    model = Transformer(9, 11, dropout=0.0, positional="learned", device=device, **config).to(
        dtype="float32" if autocast else "float64")
    src = np.array([[3, 4, 5, 6, 2], [7, 8, 2, 0, 0]])
    tgt = np.array([[1, 5, 6, 7, 2], [1, 9, 10, 2, 0]])
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    precision = minitx.autocast("bfloat16") if autocast else contextlib.nullcontext()
    with path_context(fused, device), kernel_launches() as names:
        with precision:  # the forward and the loss, as a training step runs them
            logits = model(src, tgt[:, :-1])
            target = minitx.tensor(tgt[:, 1:], device=device)
            loss = F.cross_entropy(logits, target, ignore_index=0, label_smoothing=0.1)
        loss.backward()
        norm = optim.clip_grad_norm_(model.parameters(), 0.5)
        grads = [p.grad.numpy() for p in model.parameters()]
        opt.step()
    return loss.item(), norm, grads, [p.numpy() for p in model.parameters()], set(names)


def check_fused_dropout_ops(dtype, device="cpu", shape=(5, 6)):
    """F.dropout_add and F.bias_act_dropout on the kernel path, with a fixed seed, against the
    Philox mask of the NumPy reference (tests/kernels/_reference.py): forward and gradients."""
    rng = np.random.default_rng(2)
    x, r, b = (rng.standard_normal(s).astype(dtype) for s in (shape, shape, shape[-1:]))
    p, seed = 0.3, 11
    keep = ref.dropout_keep(x.size, p, seed, 0).reshape(shape)
    scale = dtype(1 / (1 - p))
    dy = rng.standard_normal(shape).astype(dtype)
    tol = tolerance(dtype)
    tx, tr, tb = leaves([x, r, b], device)
    with path_context(True, device), kernel_launches() as names:
        y = F.dropout_add(tx, tr, p, seed=seed)
        assert y._ctx.philox == (seed, 0)
        y.backward(backend.to_device(dy, device))
        z = F.bias_act_dropout(tx, tb, "relu", p, seed=seed)
        z.backward(backend.to_device(dy, device))
    assert {"dropout_add_forward", "dropout_mask_apply", "bias_act_dropout_forward",
            "bias_act_dropout_backward"} <= set(names)
    u = x + b
    np.testing.assert_allclose(y.numpy(), r + np.where(keep, x * scale, 0), **tol)
    np.testing.assert_allclose(z.numpy(), np.where(keep, np.maximum(u, 0) * scale, 0), **tol)
    np.testing.assert_array_equal(tr.grad.numpy(), dy)
    dx = np.where(keep, dy * scale, 0) + np.where(keep & (u > 0), dy * scale, 0)
    np.testing.assert_allclose(tx.grad.numpy(), dx, **tol)
    np.testing.assert_allclose(tb.grad.numpy(), np.where(keep & (u > 0), dy * scale, 0).sum(0), **tol)
