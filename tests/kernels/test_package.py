"""Package-level behaviour: lazy CuPy import, gating, launcher validation."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitx.kernels as K
from minitx.kernels import _runtime

ROOT = Path(__file__).resolve().parents[2]


def test_import_does_not_import_cupy():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'cupy' or name.startswith('cupy.'):\n"
        "            raise ImportError('cupy import attempted')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import minitx.kernels as K\n"
        "import numpy as np\n"
        "assert 'cupy' not in sys.modules\n"
        "assert K.enabled(np.zeros(3, np.float32)) is False\n"
        "assert K.available() is False\n"
        "print('ok')\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_enabled_is_false_for_numpy_and_respects_switches(monkeypatch):
    x = np.zeros(3, np.float32)
    assert K.enabled(x) is False
    monkeypatch.delenv("MINITX_FUSED", raising=False)
    assert K.fused_allowed()
    with K.use_fused(False):
        assert not K.fused_allowed()
        with K.use_fused(True):
            assert K.fused_allowed()
        assert not K.fused_allowed()
    assert K.fused_allowed()
    monkeypatch.setenv("MINITX_FUSED", "0")
    assert not K.fused_allowed()
    with K.use_fused(True):
        assert not K.fused_allowed()  # the environment variable always wins
    assert K.enabled() is False


def test_enabled_with_fake_cupy_arrays(monkeypatch):
    # a stand-in whose type lives in a module named "cupy..." (no real CuPy)
    fake_type = type("ndarray", (), {"__module__": "cupy._core.core", "dtype": np.dtype("float32")})
    arr = fake_type()
    monkeypatch.delenv("MINITX_FUSED", raising=False)
    monkeypatch.setattr(K, "available", lambda: True)
    assert K.enabled(arr, None)
    fake_int = type("ndarray", (), {"__module__": "cupy", "dtype": np.dtype("int64")})()
    assert not K.enabled(arr, fake_int)
    assert not K.enabled(arr, np.zeros(2, np.float32))
    with K.use_fused(False):
        assert not K.enabled(arr)


def test_launchers_validate_inputs():
    with pytest.raises(TypeError):
        K.softmax_forward(np.zeros((2, 3), np.int32))
    with pytest.raises(TypeError):
        K.softmax_backward(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float64))
    with pytest.raises(ValueError):
        K.layer_norm_forward(np.zeros((2, 3), np.float32), np.zeros(4, np.float32))
    with pytest.raises(ValueError):
        K.dropout_add_forward(np.zeros(3, np.float32), np.zeros(3, np.float32), 1.5, 0)
    with pytest.raises(ValueError):
        K.bias_act_dropout_forward(np.zeros((2, 3)), None, "swish", 0.1, 0)


def test_kernel_args_must_be_typed():
    with pytest.raises(TypeError):
        _runtime.check_kernel_args([np.zeros(2), 3])
    with pytest.raises(ValueError):
        _runtime.check_kernel_args([np.zeros((4, 4))[:, ::2]])
    _runtime.check_kernel_args([np.zeros(2), None, np.int32(3), np.float32(1)])


def test_nvrtc_source_is_self_contained():
    src = _runtime.load_source("softmax.cu")
    assert "namespace mtx" in src and src.count("struct num<float>") == 1
    assert _runtime.name_expressions("softmax.cu", "float") == [
        "softmax_forward<float>", "softmax_backward<float>"]


def test_build_dir_is_gitignored():
    gi = ROOT / ".gitignore"
    if gi.exists():
        assert ".kernel_build" in gi.read_text()
