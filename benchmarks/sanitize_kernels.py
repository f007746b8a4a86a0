"""Launch every CUDA kernel of minitx once, float32 and float64 (and bfloat16 where a kernel
stores it), for compute-sanitizer.

    compute-sanitizer --tool memcheck   python3 benchmarks/sanitize_kernels.py
    compute-sanitizer --tool racecheck  python3 benchmarks/sanitize_kernels.py

Small shapes that are not multiples of any block or tile size (so every bounds check and
every partial tile runs), a key-padding mask with a fully masked row, causal attention, both
dtypes, a head in each of attention's head-dim classes, attention on the CUDA cores and on the
tensor cores (bfloat16, and float32 as TF32). The script fails if some kernel of
``kernels.KERNELS`` (or a rung of ``kernels.ladder``), at each compile-time size it has, was not
launched, so a new kernel cannot escape the sanitizer. It
needs CuPy and a GPU (``--help`` works without).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere, no install


def launch_all(cp, K, ladder, dtype):
    """Call every launcher, and every rung of the ladders, once on small awkward shapes."""
    rng = cp.random.default_rng(0)

    def randn(*shape):
        return rng.standard_normal(shape).astype(dtype)

    x, w, b = launch_storage_kernels(cp, K, randn, rng, dtype)
    params = [randn(3), randn(4097), randn(5, 7)]
    grads = [randn(*p.shape) for p in params]
    moments = [cp.zeros_like(p) for p in params] + [cp.zeros_like(p) for p in params]
    K.grad_norm(grads)
    K.scale_in_place(grads, randn(1))
    K.nonfinite_counts(grads)
    K.adam_step(params, grads, moments[:3], moments[3:], 1e-3, weight_decay=0.01, decoupled=True)
    K.embedding_backward(cp.asarray([[1, 4, 4], [0, 9, 2]]), randn(2, 3, 40), 10, padding_idx=0)
    # long runs of one id (a block loops over its run), ids out of range, a ragged last column block
    ids = rng.integers(-2, 12, 300)
    K.embedding_backward(ids, randn(300, 70), 10, padding_idx=3)
    for rung in ladder.RUNGS["softmax"]:
        ladder.softmax(rung, x)
    for rung in ladder.RUNGS["layer_norm"]:
        ladder.layer_norm(rung, x, w, b)


def launch_storage_kernels(cp, K, randn, rng, dtype):
    """The kernels that also keep their arrays in bfloat16 (computing in float32): softmax, layer
    norm, cross-entropy, attention with and without dropout, dropout + residual, bias +
    activation + dropout. Returns (x, w, b) of the row kernels."""
    x = randn(5, 37)
    y = K.softmax_forward(x)
    K.softmax_backward(y, randn(5, 37))
    w, b = randn(37), randn(37)
    out, mean, rstd = K.layer_norm_forward(x, w, b, 1e-5)
    K.layer_norm_backward(randn(5, 37), x, w, mean, rstd)
    K.layer_norm_backward(randn(5, 37), x, w, mean, rstd, plus=randn(5, 37))  # the residual's gradient added in
    for cols in (300, 600, 1100, 2100):  # layer norm's other row classes (2, 4, 8 columns a thread) and its loop
        xl = randn(2, cols)
        _, mean_l, rstd_l = K.layer_norm_forward(xl, randn(cols), None, 1e-5)
        K.layer_norm_backward(randn(2, cols), xl, randn(cols), mean_l, rstd_l, plus=randn(2, cols))
    t = cp.asarray([3, -100, 0, 36, 7])
    loss, lse = K.cross_entropy_forward(x, t, -100, 0.1)
    K.cross_entropy_backward(x, t, lse, cp.ones(5, cp.float32 if dtype == BFLOAT16 else dtype), -100, 0.1)
    mask = rng.random((2, 23)) < 0.7
    mask[1] = False  # a batch row with no key at all
    # on the CUDA cores, and on the tensor cores where the dtype has them (main allows TF32)
    cores = (False, True) if K.tensor_core_attention_runs(K._runtime.backend_for(x), dtype) else (False,)
    for d, tensor_cores in ((d, t) for d in (24, 40, 100) for t in cores):  # d: each head-dim class, short of its edge
        q, k, v = randn(6, 19, d), randn(6, 23, d), randn(6, 23, d)
        for causal, (qq, kk, vv) in ((False, (q, k, v)), (True, (q, q, q))):
            m = mask[:, :kk.shape[1]]
            options = dict(key_pad_mask=m, causal=causal, tensor_cores=tensor_cores)
            o, lse = K.attention_forward(qq, kk, vv, **options)
            K.attention_backward(qq, kk, vv, o, lse, randn(*o.shape), **options)
            # dropout on the weights: the Philox draws inside the kernels
            o, lse = K.attention_forward(qq, kk, vv, dropout_p=0.3, seed=5, offset=2, **options)
            K.attention_backward(qq, kk, vv, o, lse, randn(*o.shape), dropout_p=0.3, seed=5, offset=2, **options)
    h = randn(7, 33)
    K.dropout_add_backward(K.dropout_add_forward(h, randn(7, 33), 0.1, 5, 1), 0.1, 5, 1)
    for act in ("relu", "gelu_tanh"):
        K.bias_act_dropout_backward(randn(7, 33), h, randn(33), act, 0.1, 5, 2)
        K.bias_act_dropout_forward(h, randn(33), act, 0.1, 5, 2)
    return x, w, b


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", action="store_true",
                        help="launch through the CPU emulation instead (checks this script without a GPU)")
    args = parser.parse_args(argv)
    from minitx import kernels as K
    from minitx.kernels import _runtime, cpu_harness, ladder

    if args.cpu:
        import numpy as cp  # the launchers take NumPy arrays to the emulation

        backend = cpu_harness.cpu_backend()
    else:
        import cupy as cp

        backend = _runtime.cupy_backend()
    launched = set()
    original = backend.launch

    def launch(filename, kernel, *args, **kwargs):
        launched.add((kernel, kwargs.get("size")))
        return original(filename, kernel, *args, **kwargs)

    backend.launch = launch
    from minitx.backend import allow_tf32

    allow_tf32(True)  # float32 attention may take the tensor cores (TF32); no other kernel reads it
    for dtype in (cp.float32, cp.float64):
        launch_all(cp, K, ladder, dtype)
    host = np.random.default_rng(1)  # bfloat16 values made on the host: CuPy holds them, the kernels use them
    launch_storage_kernels(cp, K, lambda *shape: cp.asarray(host.standard_normal(shape).astype(BFLOAT16)),
                           cp.random.default_rng(1), BFLOAT16)
    if not args.cpu:
        cp.cuda.Device().synchronize()
    # every kernel, and each compile-time size of a sized one (attention's head-dim classes)
    every = {pair for filename, names in (*K.KERNELS.items(), *ladder.KERNELS.items())
             for pair in _runtime.instantiations(filename, "float", names)}
    missing = sorted(every - launched, key=str)
    if missing:
        print(f"sanitize_kernels: kernels never launched: {missing}", file=sys.stderr)
        return 1
    print(f"sanitize_kernels: launched all {len(every)} kernels in float32 and float64, the bfloat16 ones in "
          f"bfloat16 too")
    return 0


if __name__ == "__main__":
    sys.exit(main())
