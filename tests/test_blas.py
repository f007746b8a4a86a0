"""minitx.blas: the cuBLAS call plans of row-major products, run by a NumPy emulation of
cublasGemmStridedBatchedEx (column-major reads with the plan's leading dimensions and batch
strides) and compared with numpy.matmul, on operands of every layout a product meets:
contiguous, transposed views, row slices, broadcast batches, reversed and crossed strides. The
call itself needs a GPU (tests/kernels/test_gpu.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minitx import blas


def flat(x):
    """x's elements from its first one on, as a 1-D array over its memory (strides >= 0)."""
    span = 1 + sum((n - 1) * s for n, s in zip(x.shape, x.strides)) // x.itemsize if x.size else 1
    return np.lib.stride_tricks.as_strided(x, shape=(span,), strides=(x.itemsize,))


def emulated_product(a, b):
    """a @ b as minitx.blas.matmul computes it, with the call emulated; and whether a and b went
    in as they were (no copy)."""
    batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    n, k, m = a.shape[-2], a.shape[-1], b.shape[-1]
    a2, a_layout = blas.prepared(np, a, batch)
    b2, b_layout = blas.prepared(np, b, batch)
    out = np.full(batch + (n, m), np.nan, dtype=a.dtype)
    plan = blas.gemm_plan(a_layout, b_layout, n, k, m, int(np.prod(batch, dtype=np.int64)))
    blas.emulate_gemm(plan, flat(b2), flat(a2), out.reshape(-1))
    return out, (a2 is a, b2 is b)


def layout(draw, x):
    """x, or a view of the same values in another memory layout."""
    kind = draw(st.sampled_from(["as is", "transposed", "wider rows", "reversed", "every other"]))
    if kind == "transposed":  # stored [..., c, r], seen through swapaxes
        return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)
    if kind == "wider rows":  # rows of a wider matrix: leading dimension > cols
        wide = np.zeros(x.shape[:-1] + (x.shape[-1] + 3,), x.dtype)
        wide[..., :x.shape[-1]] = x
        return wide[..., :x.shape[-1]]
    if kind == "reversed":
        return np.ascontiguousarray(x[..., ::-1, :])[..., ::-1, :]
    if kind == "every other":  # crossed strides: neither rows nor columns contiguous
        big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        big[..., ::2] = x
        return big[..., ::2]
    return x


@st.composite
def operands(draw):
    n, k, m = (draw(st.integers(1, 5)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    a_batch = [draw(st.sampled_from([size, 1])) for size in batch][draw(st.integers(0, len(batch))):]
    b_batch = [draw(st.sampled_from([size, 1])) for size in batch][draw(st.integers(0, len(batch))):]
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    a = rng.standard_normal(tuple(a_batch) + (n, k)).astype(dtype)
    b = rng.standard_normal(tuple(b_batch) + (k, m)).astype(dtype)
    return layout(draw, a), layout(draw, b)


@settings(max_examples=60, deadline=None)
@given(operands())
def test_every_plan_computes_numpy_matmul(pair):
    a, b = pair
    got, _ = emulated_product(a, b)
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-5 if a.dtype == np.float32 else 1e-12, atol=1e-6)


@pytest.mark.parametrize("a, b", [
    (np.ones((4, 3)), np.ones((3, 5))),                               # contiguous
    (np.ones((3, 4)).T, np.ones((3, 5))),                             # x^T, as in dw = dy^T @ rows
    (np.ones((4, 3)), np.ones((5, 3)).T),                             # w^T, as in y = rows @ w^T
    (np.ones((2, 6, 4, 3)), np.ones((3, 5))),                         # a weight broadcast over the batch
    (np.swapaxes(np.ones((2, 3, 4)), -1, -2), np.ones((2, 3, 5))),    # batched transposed view
    (np.ones((4, 8))[:, :3], np.ones((3, 5))),                        # rows of a wider matrix
    (np.ones((1, 3)), np.ones((3, 1))),                               # vectors made matrices
    (np.ones((3, 1, 4, 3)), np.ones((1, 2, 3, 5))),                   # both broadcast, each on one axis
])
def test_the_layouts_of_the_products_of_a_step_need_no_copy(a, b):
    got, in_place = emulated_product(a, b)
    np.testing.assert_array_equal(got, np.matmul(a, b))
    if a.shape[:-2] != (3, 1) or b.shape[:-2] != (1, 2):
        assert in_place == (True, True)
    else:  # broadcast on one batch axis and not the other: no single batch stride walks it
        assert in_place == (False, False)


def test_a_crossed_operand_is_copied():
    a = np.arange(24.0).reshape(4, 6)[:, ::2]
    _, in_place = emulated_product(a, np.ones((3, 2)))
    assert in_place == (False, True)


def test_the_switch_leaves_numpy_products_to_numpy():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    with blas.use_cublas():
        assert not blas.enabled(a, b)
        np.testing.assert_array_equal(blas.product(a, b), a @ b)
    assert not blas.enabled(a, b)
