"""Checkpoint averaging at the end of training (average_last)."""
import json

import numpy as np
import pytest
from translate_kit import TINY, no_network, subset_dir  # noqa: F401

from minitx.serialization import load
from minitx.translate.recipes import build_config
from minitx.train import average_checkpoints, loop
from minitx.translate.training import train


def test_the_last_epochs_are_kept_averaged_and_evaluated(subset_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("MINITX_DATA_DIR", str(subset_dir))
    run_dir = tmp_path / "run"
    results = train(build_config(None, output_dir=str(run_dir), **{**TINY, "epochs": 3, "average_last": 2}),
                    progress=False)
    kept = sorted(p.name for p in run_dir.glob("epoch-*.npz"))
    assert kept == ["epoch-2.npz", "epoch-3.npz"]  # older epoch checkpoints are deleted as training goes
    averaged = load(run_dir / "averaged.npz")["model"]
    two, three = load(run_dir / "epoch-2.npz")["model"], load(run_dir / "epoch-3.npz")["model"]
    for name, value in averaged.items():
        np.testing.assert_allclose(value, (two[name].astype(np.float64) + three[name]) / 2, rtol=1e-6, atol=1e-7)
    # the final model is whichever of best.npz and averaged.npz has the lower validation loss
    history = json.loads((run_dir / "history.json").read_text())
    losses = results["val_loss"]
    assert set(losses) == {"best", "averaged"}
    assert losses["best"] == pytest.approx(min(r["val_loss"] for r in history), abs=1e-5)
    assert results["checkpoint"] == min(losses, key=losses.get)
    assert json.loads((run_dir / "results.json").read_text())["checkpoint"] == results["checkpoint"]


def test_a_worse_average_is_not_chosen(subset_dir, tmp_path, monkeypatch):
    """Averaging epochs that are still far apart can give a worse model than the best single
    one; the run must then keep best.npz. Here the "average" is made useless (all zeros)."""
    monkeypatch.setenv("MINITX_DATA_DIR", str(subset_dir))
    monkeypatch.setattr(loop, "average_checkpoints",
                        lambda paths: {k: np.zeros_like(v) for k, v in load(paths[-1])["model"].items()})
    run_dir = tmp_path / "run"
    results = train(build_config(None, output_dir=str(run_dir), **{**TINY, "epochs": 2, "average_last": 2}),
                    progress=False)
    assert (run_dir / "averaged.npz").exists()
    assert results["val_loss"]["averaged"] > results["val_loss"]["best"]
    assert results["checkpoint"] == "best"


def test_average_of_one_checkpoint_is_itself(subset_dir, tmp_path):
    from minitx.serialization import save

    state = {"w": np.arange(6, dtype=np.float32).reshape(2, 3)}
    save({"model": state}, tmp_path / "a.npz")
    np.testing.assert_array_equal(average_checkpoints([tmp_path / "a.npz"])["w"], state["w"])


def test_averaging_needs_matching_checkpoints(tmp_path):
    from minitx.serialization import save

    save({"model": {"w": np.zeros(3, np.float32)}}, tmp_path / "a.npz")
    save({"model": {"v": np.zeros(3, np.float32)}}, tmp_path / "b.npz")
    with pytest.raises(ValueError, match="b.npz"):
        average_checkpoints([tmp_path / "a.npz", tmp_path / "b.npz"])
