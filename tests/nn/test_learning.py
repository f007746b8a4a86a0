"""End to end on the CPU: a small Transformer learns to copy and to reverse digit sequences.

The claim is checked the way a user would use the model: greedy decoding with the key/value
cache on held-out sequences, token accuracy (end-of-sequence token included) above 99%. The
data, model and training loop are those of examples/learn_to_reverse.py, so the example is
tested too.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import minitx

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
from learn_to_reverse import build_model, token_accuracy, train  # noqa: E402


@pytest.fixture(autouse=True)
def single_threaded_blas():
    """These matrices are tiny: BLAS threads only spin and wait for each other, which makes
    training several times slower on a busy machine. Restored afterwards."""
    before = minitx.get_num_threads()
    minitx.set_num_threads(1)
    try:
        yield
    finally:
        minitx.set_num_threads(before)


@pytest.mark.parametrize("task", ["copy", "reverse"])
def test_transformer_learns_the_task(task):
    start = time.perf_counter()
    minitx.manual_seed(0)
    model = build_model()
    losses = train(model, task, steps=500)
    train_time = time.perf_counter() - start
    model.eval()
    accuracy = token_accuracy(model, task)
    print(f"{task}: loss {losses[0]:.3f} -> {np.mean(losses[-20:]):.4f}, greedy token accuracy {accuracy:.4f}, "
          f"train {train_time:.1f} s, total {time.perf_counter() - start:.1f} s")
    assert np.mean(losses[-20:]) < 0.05 * losses[0]
    assert accuracy > 0.99


def test_the_example_runs_and_draws_its_attention():
    env = dict(os.environ, PYTHONPATH=str(EXAMPLES.parent), OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(EXAMPLES / "learn_to_reverse.py"), "--steps", "20"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "step   20  loss" in out and "greedy token accuracy on 500 new strings" in out
    assert " of 4; source: " in out
