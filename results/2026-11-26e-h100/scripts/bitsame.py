"""Every kernel this session changed claims the same bits as before: run each at gpu-best-like
sizes on the GPU with CuPy and save every output's bytes (python3 .gpu/bitsame.py OUT.npz, with
PYTHONPATH choosing the tree: .gpu/base or .); compare two files with --compare A B."""
import sys
import numpy as np

if sys.argv[1] == "--compare":
    a, b = np.load(sys.argv[2]), np.load(sys.argv[3])
    bad = [f for f in a.files if f not in b.files or not np.array_equal(a[f], b[f])]
    print(f"bitsame: {len(a.files)} arrays compared, {len(bad)} differ: {bad[:20]}")
    sys.exit(0)

try:
    import cupy as cp
except ImportError:  # a smoke run of the script on the CPU build
    cp = np
    np.asnumpy = np.asarray
import ml_dtypes
from minitx import kernels as K

rng = np.random.default_rng(0)
out = {}


def put(name, *arrays):
    for i, a in enumerate(arrays):
        out[f"{name}.{i}"] = cp.asnumpy(cp.ascontiguousarray(a)).view(np.uint8).reshape(-1)


for dt in (np.float32, ml_dtypes.bfloat16):
    tag = np.dtype(dt).name
    def randn(*shape):
        return cp.asarray(rng.standard_normal(shape).astype(np.float32).astype(dt))
    B, L, H, d = 48, 31, 8, 64
    q, k, v, do = (randn(B, L, H, d).transpose(0, 2, 1, 3) for _ in range(4))
    kpm = cp.asarray(rng.random((B, L)) < 0.85); kpm[:, 0] = True
    for causal, p in ((False, 0.0), (True, 0.3), (False, 0.3)):
        o, lse = K.attention_forward(q, k, v, None if causal else kpm, causal=causal, dropout_p=p, seed=3, offset=1)
        g = K.attention_backward(q, k, v, o, lse, do, None if causal else kpm, causal=causal, dropout_p=p, seed=3, offset=1)
        put(f"attention-{tag}-{causal}-{p}", o, lse, *g)
    for cols in (512, 2048, 3000):
        x, w, b = randn(300, cols), randn(cols), randn(cols)
        y, mean, rstd = K.layer_norm_forward(x, w, b, 1e-5)
        put(f"ln-{tag}-{cols}", y, mean, rstd, *K.layer_norm_backward(randn(300, cols), x, w, mean, rstd, plus=randn(300, cols)))
        y2, m2, r2 = K.layer_norm_forward(x, None, b, 1e-5)
        put(f"ln-nw-{tag}-{cols}", y2, m2, r2)
    x = randn(600, 5000)
    y = K.softmax_forward(x)
    put(f"softmax-{tag}", y, K.softmax_backward(y, randn(600, 5000)))
    t = cp.asarray(rng.integers(0, 5000, 600)); t[::7] = -100
    loss, lse = K.cross_entropy_forward(x, t, -100, 0.1)
    put(f"ce-{tag}", loss, lse, K.cross_entropy_backward(x, t, lse, cp.asarray(rng.standard_normal(600).astype(np.float32)), -100, 0.1))
    ids = cp.asarray(rng.integers(0, 5000, 6000)); ids[::3] = 7
    put(f"embedding-{tag}", K.embedding_backward(ids, randn(6000, 512), 5000, padding_idx=1))
    xa, res = randn(6000, 512), randn(6000, 512)
    put(f"dropout-{tag}", K.dropout_add_forward(xa, res, 0.3, 5, 2), *K.dropout_add_backward(res, 0.3, 5, 2))
    xb, bias = randn(3000, 2048), randn(2048)
    put(f"bias-act-{tag}", K.bias_act_dropout_forward(xb, bias, "relu", 0.3, 5, 4),
        K.bias_act_dropout_backward(randn(3000, 2048), xb, bias, "relu", 0.3, 5, 4)[0])  # dx (db's sum changed since)
grads = [cp.asarray(rng.standard_normal(n).astype(np.float32)) for n in (5000, 2_000_000, 12_345)]
put("grad-norm", K.grad_norm(grads), cp.asarray(K.nonfinite_counts(grads)))
params = [cp.asarray(rng.standard_normal(g.size).astype(np.float32)) for g in grads]
moments = [cp.zeros_like(p) for p in params] + [cp.zeros_like(p) for p in params]
for step in (1, 2):
    K.adam_step(params, grads, moments[:3], moments[3:], 1e-3, weight_decay=0.01, decoupled=True, step=step)
K.scale_in_place(grads, cp.asarray([0.37], np.float32))
put("adam", *params, *moments, *grads)
np.savez(sys.argv[1], **out)
print(f"bitsame: {len(out)} arrays saved to {sys.argv[1]}")
