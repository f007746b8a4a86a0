"""Checkpoint round trips of a model and its optimizer through minitx.save / minitx.load."""
import numpy as np
import pytest

import minitx
import minitx.functional as F
from minitx import nn, optim
from minitx.train.checkpoints import average_checkpoints, load_checkpoint


def _model():
    return nn.Transformer(11, 11, d_model=16, num_heads=2, num_encoder_layers=1, num_decoder_layers=1,
                          d_ff=32, dropout=0.1, max_len=16)


def _batch(step):
    rng = np.random.default_rng(step)
    src = rng.integers(3, 11, (4, 6))
    tgt = np.concatenate([np.ones((4, 1), np.int64), src[:, ::-1]], axis=1)
    return src, tgt[:, :-1], tgt[:, 1:]


def _train(model, opt, schedule, steps, start=0):
    losses = []
    for step in range(start, start + steps):
        src, tgt_in, tgt_out = _batch(step)
        loss = F.cross_entropy(model(src, tgt_in), tgt_out, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        optim.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        schedule.step()
        losses.append(loss.item())
    return losses


def _fresh():
    model = _model()
    opt = optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    return model, opt, optim.WarmupInverseSqrt(opt, peak_lr=1e-3, warmup_steps=4)


def test_round_trip_restores_outputs_and_the_continuation_of_training(tmp_path):
    minitx.manual_seed(3)
    model, opt, schedule = _fresh()
    _train(model, opt, schedule, 3)
    path = tmp_path / "ckpt.npz"
    minitx.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "schedule": schedule.state_dict(),
                 "rng": minitx.random.get_state()}, path)
    src, tgt_in, _ = _batch(0)
    output_at_save = model.eval()(src, tgt_in).numpy()  # eval: no dropout, no random draws
    model.train()
    expected = _train(model, opt, schedule, 3, start=3)  # the uninterrupted run
    expected_params = [p.numpy().copy() for p in model.parameters()]

    minitx.manual_seed(99)  # a different seed: everything must come from the file
    restored, restored_opt, restored_schedule = _fresh()
    state = minitx.load(path)
    restored.load_state_dict(state["model"])
    restored_opt.load_state_dict(state["optimizer"])
    restored_schedule.load_state_dict(state["schedule"])
    np.testing.assert_array_equal(restored.eval()(src, tgt_in).numpy(), output_at_save)
    restored.train()
    minitx.random.set_state(state["rng"])
    assert _train(restored, restored_opt, restored_schedule, 3, start=3) == expected
    for got, want in zip(restored.parameters(), expected_params):
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("damage", ["missing", "shape"])
def test_a_damaged_checkpoint_names_the_key(tmp_path, damage):
    model = _model()
    state = model.state_dict()
    key = "decoder_layers.0.cross_attn.kv.weight"
    if damage == "missing":
        del state[key]
    else:
        state[key] = np.zeros((3, 3), np.float32)
    minitx.save({"model": state}, tmp_path / "bad.npz")
    with pytest.raises((KeyError, ValueError), match=key.replace(".", r"\.")):
        _model().load_state_dict(minitx.load(tmp_path / "bad.npz")["model"])


def test_a_checkpoint_in_the_old_key_order_loads_and_averages_with_a_new_one(tmp_path):
    """state_dict once gave every parameter, then every buffer; files saved so still load (by
    key: the order in a file does not matter)."""
    model = _model()
    state = model.state_dict()
    buffers = [k for k in state if k.rpartition(".")[2] in model.get_submodule(k.rpartition(".")[0])._buffers]
    old = {k: state[k] for k in [*(k for k in state if k not in buffers), *buffers]}
    assert buffers and list(old) != list(state)
    minitx.save({"model": old}, tmp_path / "old.npz")
    minitx.save({"model": state}, tmp_path / "new.npz")
    restored = _model()
    load_checkpoint(tmp_path / "old.npz", restored)
    averaged = average_checkpoints([tmp_path / "old.npz", tmp_path / "new.npz"])
    for key, value in restored.state_dict().items():
        np.testing.assert_array_equal(value, state[key])
        np.testing.assert_array_equal(averaged[key], state[key])
