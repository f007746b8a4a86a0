"""One comparison for every exact-resume test: nested checkpoint contents (dicts, lists,
arrays, numbers) identical, arrays bit for bit; and one for the applications' mixed-precision
runs against their float32 run."""
import numpy as np


def assert_same_state(a, b, where=""):
    """Nested checkpoint contents are identical: arrays bit for bit, other values equal."""
    if isinstance(a, dict):
        assert sorted(a) == sorted(b), where
        for key in a:
            assert_same_state(a[key], b[key], f"{where}/{key}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_state(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where)
    else:
        assert a == b, where


def assert_near_float32(saved, atol=2e-2):
    """``saved``: the last.npz contents of an application's fp32, bf16 and fp16 runs. The mixed
    precision runs' weights are float32 and near the float32 run's; fp16's holds its loss scaler."""
    assert "scaler" in saved["fp16"] and "scaler" not in saved["bf16"]
    for low in ("bf16", "fp16"):
        for name, w in saved[low]["model"].items():
            assert w.dtype == saved["fp32"]["model"][name].dtype
            np.testing.assert_allclose(w, saved["fp32"]["model"][name], atol=atol, err_msg=f"{low} {name}")
