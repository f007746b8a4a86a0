"""The CPU compat header must emulate the CUDA semantics the kernels rely on."""
import shutil
from pathlib import Path

import numpy as np
import pytest

from minitx.kernels import _runtime, cpu_harness
from minitx.kernels.cpu_harness import KernelLaunchError

import _reference as ref

PROBE = Path(__file__).with_name("probe_kernels.cu")
PROBE_KERNELS = ("probe_shuffles", "probe_barrier", "probe_racy", "probe_deadlock", "probe_oob",
                 "probe_atomics", "probe_indices", "probe_ballot", "probe_args")


@pytest.fixture(scope="module")
def run(cpu):
    def _run(kernel, grid, block, args, dtype=np.float32):
        cpu.launch("probe_kernels.cu", kernel, dtype, grid, block, args, path=PROBE,
                   kernels=PROBE_KERNELS)
    return _run


@pytest.mark.parametrize("delta,src", [(1, 0), (5, 31), (16, 7)])
def test_shuffle_semantics(run, delta, src, any_schedule):
    out = np.zeros((64, 4), np.float32)
    run("probe_shuffles", (1,), (64,), (out, np.int32(delta), np.int32(src)))
    tid = np.arange(64)
    lane = tid % 32
    base = tid - lane
    np.testing.assert_array_equal(out[:, 0], (base + (lane ^ 16)) * 10.0)
    down = np.where(lane + delta < 32, tid + delta, tid)
    up = np.where(lane - delta >= 0, tid - delta, tid)
    np.testing.assert_array_equal(out[:, 1], down * 10.0)
    np.testing.assert_array_equal(out[:, 2], up * 10.0)
    np.testing.assert_array_equal(out[:, 3], (base + src) * 10.0)


def test_shuffle_double(run):
    out = np.zeros((32, 4), np.float64)
    run("probe_shuffles", (1,), (32,), (out, np.int32(3), np.int32(2)), dtype=np.float64)
    np.testing.assert_array_equal(out[:, 3], np.full(32, 20.0))


def test_barrier_makes_shared_writes_visible(run, any_schedule):
    out = np.zeros(3 * 96, np.float32)
    run("probe_barrier", (3,), (96,), (out,))
    b = np.repeat(np.arange(3), 96)
    t = np.tile(np.arange(96), 3)
    np.testing.assert_array_equal(out, b * 1000 + (t + 1) % 96)


@pytest.mark.parametrize("mode,salt", [("forward", 100), ("reverse", 200), ("random", 300),
                                       ("drift", 400)])
def test_schedules_expose_missing_barrier(run, mode, salt):
    out = np.zeros(64, np.float32)
    with cpu_harness.schedule(mode):
        run("probe_racy", (1,), (64,), (out, np.int32(salt)))
    expected = salt + (np.arange(64) + 1) % 64
    # without a barrier some thread reads its neighbour's slot before it is written
    assert not np.array_equal(out, expected)


def test_deadlock_is_reported_not_hung(run):
    out = np.zeros(64, np.float32)
    with pytest.raises(KernelLaunchError, match="deadlock"):
        run("probe_deadlock", (1,), (64,), (out,))


def test_out_of_bounds_write_is_caught(run):
    out = np.zeros(10, np.float32)
    with pytest.raises(KernelLaunchError, match="out-of-bounds"):
        run("probe_oob", (1,), (32,), (out, np.int32(10)))


def test_atomics_across_concurrent_blocks(run, monkeypatch):
    monkeypatch.setenv("MINITX_CPU_WORKERS", "2")
    out = np.zeros(5, np.float64)
    run("probe_atomics", (40,), (64,), (out,), dtype=np.float64)
    assert out[0] == 40 * 64
    np.testing.assert_array_equal(out[1:], [10 * 64] * 4)


def test_multidimensional_indices(run):
    grid, block = (3, 2, 2), (4, 2, 3)
    nt = 4 * 2 * 3
    out = np.zeros(12 * nt, np.float32)
    run("probe_indices", grid, block, (out,))
    exp = []
    for bz in range(2):
        for by in range(2):
            for bx in range(3):
                for tz in range(3):
                    for ty in range(2):
                        for tx in range(4):
                            exp.append(tx + 10 * ty + 100 * tz + 1000 * (bx + 10 * by + 100 * bz))
    np.testing.assert_array_equal(out, exp)


def test_ballot(run):
    out = np.zeros(2, np.uint32)
    run("probe_ballot", (1,), (64,), (out,))
    np.testing.assert_array_equal(out, [0xAAAAAAAA, 0xAAAAAAAA])


def test_argument_types_are_checked(run):
    out = np.zeros(1, np.float32)
    run("probe_args", (1,), (32,), (out, np.int32(1), np.int64(2), np.float32(3), np.uint64(4)))
    assert out[0] == 10
    with pytest.raises(KernelLaunchError, match="argument mismatch"):
        run("probe_args", (1,), (32,), (out, np.int64(1), np.int64(2), np.float32(3),
                                        np.uint64(4)))
    with pytest.raises(TypeError):
        run("probe_args", (1,), (32,), (out, 1, np.int64(2), np.float32(3), np.uint64(4)))


def test_empty_outputs_are_poisoned(cpu):
    a = cpu.empty((3,), np.float32)
    assert np.isnan(a).all()


# --------------------------------------------- issue 15: warps that drift apart
def _without_first_barrier(cu_name):
    """``cu_name`` copied beside a common.cuh whose block_reduce lacks its leading
    __syncthreads(): the planted bug of issue 15.  (In the build directory, so that the
    compiled mutant is cached like the kernels.)"""
    mutant_dir = cpu_harness.build_dir() / "issue15-mutant"
    mutant_dir.mkdir(exist_ok=True)
    src = (_runtime.KERNEL_DIR / "common.cuh").read_text()
    guarded = "  v = warp_reduce(v, op);\n  __syncthreads();\n  if (lane == 0) partial[warp] = v;\n"
    assert src.count(guarded) == 1, "block_reduce changed: update the mutant"
    (mutant_dir / "common.cuh").write_text(
        src.replace(guarded, "  v = warp_reduce(v, op);\n  if (lane == 0) partial[warp] = v;\n"))
    shutil.copy(_runtime.KERNEL_DIR / cu_name, mutant_dir / cu_name)
    return mutant_dir / cu_name


def _layer_norm_y(cpu, path, x):
    rows, cols = x.shape
    y, mean, rstd = (cpu.empty(s, x.dtype) for s in (x.shape, (rows,), (rows,)))
    cpu.launch("layer_norm.cu", "layer_norm_forward", x.dtype, (rows,), (128,),
               (x, None, None, y, mean, rstd, np.int32(rows), np.int32(cols), x.dtype.type(1e-5)),
               path=path, kernels=_runtime.KERNELS["layer_norm.cu"])
    return y


def _cross_entropy_lse(cpu, path, x):
    rows, cols = x.shape
    t = np.zeros(rows, np.int64)
    loss, lse = cpu.empty((rows,), x.dtype), cpu.empty((rows,), x.dtype)
    cpu.launch("cross_entropy.cu", "cross_entropy_forward", x.dtype, (rows,), (128,),
               (x, t, loss, lse, np.int32(rows), np.int32(cols), np.int64(-100), x.dtype.type(0.1)),
               path=path, kernels=_runtime.KERNELS["cross_entropy.cu"])
    return lse


@pytest.mark.parametrize("cu_name, run, expected", [
    ("layer_norm.cu", _layer_norm_y, lambda x: ref.layer_norm(x, None, None, 1e-5)[0]),
    ("cross_entropy.cu", _cross_entropy_lse, lambda x: np.log(np.exp(x).sum(-1))),
])
def test_drift_catches_a_missing_barrier_between_two_reductions(cpu, cu_name, run, expected):
    """Two back-to-back block_sum calls share `partial` (layer norm: mean then variance; cross
    entropy: sum of exp then sum of x). Without block_reduce's first __syncthreads, a warp that
    runs ahead writes its next partial while slower warps still read the previous sum. With 4
    warps per block, the drift schedule must show that; the real header must stay right."""
    x = np.random.default_rng(3).standard_normal((3, 120))  # 128 threads: 4 warps
    mutant = _without_first_barrier(cu_name)
    with cpu_harness.schedule("drift"):
        np.testing.assert_allclose(run(cpu, _runtime.KERNEL_DIR / cu_name, x), expected(x), rtol=1e-10, atol=1e-12)
        assert not np.allclose(run(cpu, mutant, x), expected(x), rtol=1e-6), "the race went unseen"


def test_outputs_that_are_views_of_one_array_keep_each_others_results(cpu, monkeypatch):
    """Two outputs laid into one array (dk and dv as the two halves of a [BH, L, 2d] array seen
    as [BH, L, d] views): each launch argument's results are written back element by element,
    so neither overwrites the other with the bytes its guard copy held."""
    from minitx import kernels as K
    from minitx.kernels import attention

    rng = np.random.default_rng(13)
    q, k, v, do = (rng.standard_normal((2, 5, 4)) for _ in range(4))
    o, lse = K.attention_forward(q, k, v)
    want = K.attention_backward(q, k, v, o, lse, do)
    both = np.full((2, 5, 8), np.nan)
    real_output, views = attention._output, iter([None, both[..., :4], both[..., 4:]])  # dq, dk, dv

    def output(be, shape, dt):
        view = next(views)
        return real_output(be, shape, dt) if view is None else view

    monkeypatch.setattr(attention, "_output", output)
    for got, expected in zip(K.attention_backward(q, k, v, o, lse, do), want):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("offset", range(0, 16, 2))
@pytest.mark.parametrize("kind", ["contiguous", "every other row", "transposed"])
def test_a_guarded_copy_keeps_its_arrays_address_modulo_16(offset, kind):
    """A kernel may take a 16-byte path where its rows are aligned (mtx::map_row); the emulation
    must hand it a copy aligned as the array itself is, or the tests of both paths would run one.
    The guard bands stay whole on both sides (an out-of-bounds write is still caught)."""
    buf = np.zeros(4096 + 512, np.uint8)
    start = -buf.ctypes.data % 256 + offset
    base = buf[start:start + 4096].view(np.float16).reshape(32, 64)
    arr = {"contiguous": base, "every other row": base[::2], "transposed": base.T}[kind]
    guarded = cpu_harness._Guarded(arr)
    assert guarded.address % 16 == arr.ctypes.data % 16
    assert guarded.start >= cpu_harness.GUARD_BYTES
    assert guarded.buf.size - guarded.start - guarded.view.size >= cpu_harness.GUARD_BYTES
