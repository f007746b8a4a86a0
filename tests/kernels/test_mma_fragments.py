"""mma.cuh's fragments, pinned down on exact numbers (probe_mma.cu): A B for small integers, which
bfloat16 and TF32 hold exactly and a tensor core adds exactly, through each way a kernel of
attention_mma.cu feeds a product (B transposed or as it is, a result as the next A). The CPU
build emulates mma.sync with the layout mma.cuh assumes, so there this checks the helpers; on a
GPU (marked gpu) it checks that assumption against the hardware's own layout, in one warp."""
from pathlib import Path

import numpy as np
import pytest

from minitx import kernels as K
from minitx.kernels import _runtime

PROBE = Path(__file__).with_name("probe_mma.cu")
PROBES = {"probe_mma_bf16": 16, "probe_mma_tf32": 8}  # kernel: the K of its operand type


def _operands(k, seed):
    rng = np.random.default_rng(seed)
    return tuple(rng.integers(-3, 4, shape).astype(np.float32) for shape in ((16, k), (k, 16), (k, 8)))


def _check(outputs, a, b, c, k):
    d, e, f = outputs
    np.testing.assert_array_equal(d, a @ b)
    np.testing.assert_array_equal(f, a @ b)
    np.testing.assert_array_equal(e, (a @ b)[:, :k] @ c)


@pytest.mark.parametrize("kernel, k", PROBES.items())
def test_fragments_on_the_cpu_build(cpu, kernel, k):
    a, b, c = _operands(k, 1)
    outputs = tuple(np.zeros(shape, np.float32) for shape in ((16, 16), (16, 8), (16, 16)))
    cpu.launch(PROBE.name, kernel, np.float32, (1,), (32,), (a, b, c, *outputs), path=PROBE, kernels=tuple(PROBES))
    _check(outputs, a, b, c, k)


@pytest.mark.gpu
@pytest.mark.skipif(not K.available(), reason="needs CuPy and a CUDA GPU")
@pytest.mark.parametrize("kernel, k", PROBES.items())
def test_fragments_on_the_gpu(kernel, k):
    import cupy as cp

    if int(cp.cuda.Device().compute_capability) < 80:
        pytest.skip("mma.sync with bfloat16 or TF32 operands needs compute capability 8.0")
    source = _runtime.load_source(str(PROBE))  # an absolute path: KERNEL_DIR / PROBE is PROBE
    module = cp.RawModule(code=source, options=_runtime.NVRTC_OPTIONS, name_expressions=[f"{kernel}<float>"])
    for seed in range(3):
        a, b, c = _operands(k, seed)
        outputs = tuple(cp.zeros(shape, np.float32) for shape in ((16, 16), (16, 8), (16, 16)))
        module.get_function(f"{kernel}<float>")((1,), (32,), (*map(cp.asarray, (a, b, c)), *outputs))
        _check(tuple(cp.asnumpy(x) for x in outputs), a, b, c, k)
