"""The GPU paths that issue 23's runs take and that changed since the last GPU session (55e9402):
the multi30k-tiny-published model (no dropout on the attention weights or the feed-forward's
activations, no output bias, fairseq's normal embeddings with a zero padding row, clipping at 25,
Adam's eps 1e-8) captured as CUDA graphs, and Module.load_state_dict, which now writes into each
parameter's own array (a resume, choose_final's averaged/best model) so that graphs captured
before it read the loaded values. The first also runs on the CPU through the CPU model of a graph
(not gpu-marked); the rest need a GPU with CuPy and nvmath-python (cublas_gpu)."""
import numpy as np
import pytest

import minitx
import minitx.functional as F
from minitx import backend, optim, sync
from minitx import random as mrandom
from minitx.train import train_step
from minitx.train.graphs import StepGraphs

from test_graphs import on_device

SHAPES = [(2, 8), (2, 8), (3, 8), (2, 8), (3, 8), (2, 8)]


def _published_model(device):
    from minitx.nn import Transformer

    minitx.manual_seed(1)
    # the recipe's settings that differ from test_graphs.transformer_run's model
    return Transformer(12, 12, d_model=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=12,
                       max_len=8, dropout=0.3, attention_dropout=0.0, activation_dropout=0.0, positional="sinusoidal",
                       share_embeddings=True, tie_output=True, output_bias=False, embed_init="normal",
                       device=device).to(dtype="float32")


def _batches(rng):
    from minitx.data import make_batch

    for shape in SHAPES:
        lengths = rng.integers(1, 6, (shape[0], 2))
        yield make_batch([list(rng.integers(3, 12, n)) for n in lengths[:, 0]],
                         [list(rng.integers(3, 12, n)) for n in lengths[:, 1]], shape=shape)


def _loss(model, batch):
    logits = model(batch.src, batch.tgt_in)
    return F.cross_entropy(logits, batch.tgt_out, ignore_index=0, label_smoothing=0.1), batch.n_tgt_tokens


def published_run(captured: bool, device="cpu", reload_at=None):
    """Six steps of the published recipe's model shape; with ``reload_at``, the model's starting
    weights loaded back (load_state_dict) before that step, as a resume or choose_final loads."""
    model = _published_model(device)
    start = {name: np.array(value, copy=True) for name, value in model.state_dict().items()}
    opt = optim.Adam(model.parameters(), lr=5e-3, betas=(0.9, 0.98), eps=1e-8)
    schedule = optim.WarmupInverseSqrt(opt, peak_lr=5e-3, warmup_steps=3)
    checks = sync.DeferredChecks(device)
    context, make_recorder = on_device(device)
    step = StepGraphs(model, _loss, opt, checks, lambda batch: batch.n_tgt_tokens, schedule=schedule,
                      clip_norm=25.0, recorder=make_recorder(opt))
    losses = []
    with context:
        for number, batch in enumerate(_batches(np.random.default_rng(5))):
            if number == reload_at:
                arrays = [p.data for p in model.parameters()]
                model.load_state_dict(start)
                assert all(p.data is a for p, a in zip(model.parameters(), arrays))  # in place: graphs see it
            if captured:
                loss, _ = step(batch)
            else:
                loss, _ = train_step(model, batch, _loss, opt, schedule, clip_norm=25.0, checks=checks)
            losses.append(float(backend.to_host(loss)))
    checks.raise_first()
    return [p.numpy() for p in model.parameters()], losses, mrandom.philox_offset(device)


@pytest.mark.slow
def test_the_published_recipes_model_replays_to_the_eager_bits_on_the_cpu_model():
    eager, eager_losses, eager_offset = published_run(False)
    replayed, losses, offset = published_run(True)
    assert losses == eager_losses and offset == eager_offset
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)


@pytest.fixture
def cuda(cublas_gpu):
    return "cuda"


@pytest.mark.gpu
def test_the_published_recipes_model_captured_gives_the_eager_bits(cuda):
    eager, eager_losses, eager_offset = published_run(False, cuda)
    replayed, losses, offset = published_run(True, cuda)
    assert losses == eager_losses and offset == eager_offset
    assert all(np.isfinite(losses))
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
def test_weights_loaded_after_a_capture_are_what_the_replays_read(cuda):
    """load_state_dict at step 4 (both shapes captured by then): the replays after it start from
    the loaded weights, as the eager steps do. A load that gave the parameters new arrays would
    leave the graphs updating the old ones."""
    eager, eager_losses, _ = published_run(False, cuda, reload_at=4)
    replayed, losses, _ = published_run(True, cuda, reload_at=4)
    assert losses == eager_losses
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
def test_a_checkpoint_round_trip_on_the_gpu_resumes_the_same_steps(cuda, tmp_path):
    """save_checkpoint / load_checkpoint of a CuPy model and Adam (device step counts) into a fresh
    model on the GPU: the next steps give the bits of the uninterrupted run (a Trainer resume)."""
    from minitx.train import load_checkpoint, save_checkpoint

    def fresh():
        model = _published_model(cuda)
        opt = optim.Adam(model.parameters(), lr=5e-3, betas=(0.9, 0.98), eps=1e-8)
        return model, opt, optim.WarmupInverseSqrt(opt, peak_lr=5e-3, warmup_steps=3)

    batches = list(_batches(np.random.default_rng(5)))
    model, opt, schedule = fresh()
    for batch in batches[:3]:
        train_step(model, batch, _loss, opt, schedule, clip_norm=25.0)
    save_checkpoint(tmp_path / "last.npz", model, opt, schedule, progress={"step": 3})
    for batch in batches[3:]:
        train_step(model, batch, _loss, opt, schedule, clip_norm=25.0)
    want = [p.numpy() for p in model.parameters()]

    model, opt, schedule = fresh()
    load_checkpoint(tmp_path / "last.npz", model, opt, schedule)
    assert all(type(p.data).__module__.startswith("cupy") for p in model.parameters())
    for batch in batches[3:]:
        train_step(model, batch, _loss, opt, schedule, clip_norm=25.0)
    for got, expected in zip([p.numpy() for p in model.parameters()], want):
        np.testing.assert_array_equal(got, expected)
