"""The GPU paths that issue 23's runs take and that changed since the last GPU session (55e9402):
the multi30k-tiny-published model (no dropout on the attention weights or the feed-forward's
activations, no output bias, fairseq's normal embeddings with a zero padding row, clipping at 25)
captured as CUDA graphs, and Module.load_state_dict, which now writes into each
parameter's own array (a resume, choose_final's averaged/best model) so that graphs captured
before it read the loaded values. The first also runs on the CPU through the CPU model of a graph
(not gpu-marked); the rest need a GPU with CuPy and nvmath-python (cublas_gpu)."""
import numpy as np
import pytest

from minitx import optim
from minitx.train import train_step

from test_graphs import small_transformer, transformer_run, translation_batches, translation_loss


@pytest.mark.slow
def test_the_published_recipes_model_replays_to_the_eager_bits_on_the_cpu_model():
    eager, eager_losses, eager_offset = transformer_run(False, published=True)
    replayed, losses, offset = transformer_run(True, published=True)
    assert losses == eager_losses and offset == eager_offset
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)


@pytest.fixture
def cuda(cublas_gpu):
    return "cuda"


@pytest.mark.gpu
def test_the_published_recipes_model_captured_gives_the_eager_bits(cuda):
    eager, eager_losses, eager_offset = transformer_run(False, cuda, published=True)
    replayed, losses, offset = transformer_run(True, cuda, published=True)
    assert losses == eager_losses and offset == eager_offset
    assert all(np.isfinite(losses))
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
def test_weights_loaded_after_a_capture_are_what_the_replays_read(cuda):
    """load_state_dict at step 4 (both shapes captured by then): the replays after it start from
    the loaded weights, as the eager steps do. A load that gave the parameters new arrays would
    leave the graphs updating the old ones."""
    eager, eager_losses, _ = transformer_run(False, cuda, published=True, reload_at=4)
    replayed, losses, _ = transformer_run(True, cuda, published=True, reload_at=4)
    assert losses == eager_losses
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
def test_a_checkpoint_round_trip_on_the_gpu_resumes_the_same_steps(cuda, tmp_path):
    """save_checkpoint / load_checkpoint of a CuPy model and Adam (device step counts) into a fresh
    model on the GPU: the next steps give the bits of the uninterrupted run (a Trainer resume)."""
    from minitx.train import load_checkpoint, save_checkpoint

    def fresh():
        model = small_transformer(cuda, published=True)
        opt = optim.Adam(model.parameters(), lr=5e-3, betas=(0.9, 0.98), eps=1e-8)
        return model, opt, optim.WarmupInverseSqrt(opt, peak_lr=5e-3, warmup_steps=3)

    batches = list(translation_batches(np.random.default_rng(5)))
    model, opt, schedule = fresh()
    for batch in batches[:3]:
        train_step(model, batch, translation_loss, opt, schedule, clip_norm=25.0)
    save_checkpoint(tmp_path / "last.npz", model, opt, schedule, progress={"step": 3})
    for batch in batches[3:]:
        train_step(model, batch, translation_loss, opt, schedule, clip_norm=25.0)
    want = [p.numpy() for p in model.parameters()]

    model, opt, schedule = fresh()
    load_checkpoint(tmp_path / "last.npz", model, opt, schedule)
    assert all(type(p.data).__module__.startswith("cupy") for p in model.parameters())
    for batch in batches[3:]:
        train_step(model, batch, translation_loss, opt, schedule, clip_norm=25.0)
    for got, expected in zip([p.numpy() for p in model.parameters()], want):
        np.testing.assert_array_equal(got, expected)
