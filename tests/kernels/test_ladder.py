"""Every rung of the softmax and layer-norm ladders (minitx/kernels/ladder) against the NumPy
reference, through the CPU build: a rung that is not right cannot teach anything."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minitx import kernels as K
from minitx.kernels import ladder

import _reference as ref

SETTINGS = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
SHAPES = dict(rows=st.integers(1, 9), cols=st.sampled_from([1, 7, 31, 33, 100, 257, 300]),
              dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**31))


def tol(dtype):
    return dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("rung", ladder.RUNGS["softmax"])
@SETTINGS
@given(**SHAPES)
def test_softmax_rung(cpu, rung, rows, cols, dtype, seed):
    x = (np.random.default_rng(seed).standard_normal((rows, cols)) * 3).astype(dtype)
    x[-1, : cols // 2] = -np.inf  # -inf logits get probability 0 ...
    if rows > 1:
        x[0] = -np.inf  # ... and a row of them, zeros
    if rows > 2:
        x[1, seed % cols] = np.nan  # a NaN logit: a NaN row, as softmax.cu's and F.softmax's
    if rows > 3:
        x[2, seed % cols] = np.inf  # a +inf logit (not a mask): a NaN row too
    np.testing.assert_allclose(ladder.softmax(rung, x), ref.softmax(x), **tol(dtype))


@pytest.mark.parametrize("rung", ladder.RUNGS["layer_norm"])
@SETTINGS
@given(affine=st.booleans(), **SHAPES)
def test_layer_norm_rung(cpu, rung, affine, rows, cols, dtype, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, cols)) * 2 + 1).astype(dtype)
    w, b = (rng.standard_normal(cols).astype(dtype) for _ in "wb") if affine else (None, None)
    y, mean, rstd = ladder.layer_norm(rung, x, w, b, 1e-5)
    y_ref, mean_ref, rstd_ref = ref.layer_norm(x, w, b, 1e-5)
    loose = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else tol(dtype)  # float32 sums of a row
    np.testing.assert_allclose(mean, mean_ref, **tol(dtype))
    np.testing.assert_allclose(rstd, rstd_ref, **loose)
    np.testing.assert_allclose(y, y_ref, **loose)


@pytest.mark.parametrize("rung", [*ladder.RUNGS["softmax"], *ladder.RUNGS["layer_norm"]])
def test_rungs_under_every_schedule(cpu, any_schedule, rung):
    x = np.random.default_rng(1).standard_normal((6, 200))
    if rung.startswith("softmax"):
        np.testing.assert_allclose(ladder.softmax(rung, x), K.softmax_forward(x), rtol=1e-12, atol=1e-15)
    else:
        for got, want in zip(ladder.layer_norm(rung, x), K.layer_norm_forward(x)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_unknown_rung():
    with pytest.raises(ValueError, match="unknown softmax rung"):
        ladder.softmax("softmax_v9", np.zeros((2, 3)))
