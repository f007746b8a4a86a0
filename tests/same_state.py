"""One comparison for every exact-resume test: nested checkpoint contents (dicts, lists,
arrays, numbers) identical, arrays bit for bit."""
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
