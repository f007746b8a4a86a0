"""examples/digits_cnn.py: a small CNN (nn.Conv2d, nn.MaxPool2d, F.cross_entropy) learns
scikit-learn's bundled 8x8 digits on a CPU. Skipped without scikit-learn (extra ``digits``),
except the check that the example then exits with a clear message."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
import digits_cnn  # noqa: E402


def test_the_example_learns_the_digits_in_five_epochs():
    """One run of the script (about 10 s: 4 s of training, the rest imports): the split, the
    per-epoch log and the final test accuracy (0.961 when measured; 15 epochs reach 0.989)."""
    pytest.importorskip("sklearn")
    env = dict(os.environ, PYTHONPATH=str(EXAMPLES.parent), OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(EXAMPLES / "digits_cnn.py"), "--epochs", "5"], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "1438 training and 359 test images; a 6,090-parameter CNN" in out and "epoch  5  loss" in out
    final = re.search(r"trained 5 epochs in [0-9.]+ s; test accuracy ([0-9.]+)", out)
    assert final is not None, out
    assert float(final.group(1)) > 0.94


def test_without_scikit_learn_the_example_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # makes `import sklearn...` raise ImportError
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(SystemExit, match=r'needs scikit-learn .*pip install "minitx\[digits\]"'):
        digits_cnn.load_digits()
