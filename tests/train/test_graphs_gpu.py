"""minitx.train.graphs on a GPU: test_graphs.py's runs, captured as cupy.cuda.Graph and replayed,
give the bits of the same steps run eagerly (both with minitx.blas's products), no step reading
the device. Skipped without CuPy, a GPU and nvmath-python."""
import numpy as np
import pytest

from test_graphs import CHANGES, batches, loss_fn, on_device, replays_as_eager, run, transformer_run

from minitx import nn, optim, sync
from minitx.train.graphs import CudaGraphs, StepGraphs

pytestmark = pytest.mark.gpu


@pytest.fixture
def cuda(cublas_gpu):
    return "cuda"


@pytest.mark.parametrize("shared_pool", [True, False])
def test_captured_steps_give_the_eager_steps_bits(cuda, shared_pool):
    """Two shapes interleaved (A A B A B B A B): with one memory pool for both graphs, B's capture
    reuses what A's freed, and the replays that follow still give the eager bits."""
    eager, eager_losses, eager_counters, _ = run(False, cuda)
    replayed, losses, counters, _ = run(True, cuda, shared_pool=shared_pool)  # no step reads the device
    assert losses == eager_losses and counters == eager_counters
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("what", sorted(CHANGES))
def test_a_change_between_captured_steps_gives_the_eager_bits(cuda, what):
    """A parameter's array replaced, a group setting moved, the scaler's factors loaded: the
    graphs captured before are dropped, and the steps after keep the eager steps' bits."""
    fn, float16 = CHANGES[what]
    replays_as_eager(device=cuda, float16=float16, change=(5, fn))


def test_graphs_sharing_a_pool_hold_less_than_a_pool_each(cuda):
    """What sharing buys: the two graphs' memory, counted once, is below two pools' sum."""
    held = {}
    for shared in (True, False):
        model = nn.Sequential(nn.Embedding(12, 512), nn.Linear(512, 12)).to(cuda)
        opt = optim.AdamW(model.parameters(), lr=1e-2)
        context, _ = on_device(cuda)
        step = StepGraphs(model, loss_fn, opt, sync.DeferredChecks(cuda), lambda batch: batch.tokens,
                          recorder=CudaGraphs(shared))
        with context:
            for batch in batches():
                step(batch)
        held[shared] = step.held()
    assert held[True][0] == held[False][0] == 2 and 0 < held[True][1] < held[False][1]


def test_a_captured_transformer_with_dropout_gives_the_eager_bits(cuda):
    eager, eager_losses, eager_offset = transformer_run(False, cuda)
    replayed, losses, offset = transformer_run(True, cuda)
    assert losses == eager_losses and offset == eager_offset
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)


def test_a_captured_transformer_in_tf32_gives_the_eager_bits(cuda):
    """TF32 products, translate's default on such GPUs: cuBLAS's TF32 math, captured and eager."""
    from minitx import backend

    before = backend.tf32_allowed()
    backend.allow_tf32(True)
    try:
        eager, eager_losses, _ = transformer_run(False, cuda)
        replayed, losses, _ = transformer_run(True, cuda)
    finally:
        backend.allow_tf32(before)
    assert losses == eager_losses
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)


def test_a_captured_transformer_under_bfloat16_autocast_gives_the_eager_bits(cuda):
    """bfloat16 autocast: its products in bfloat16, the rest as the kernels compute it."""
    pytest.importorskip("ml_dtypes")
    eager, eager_losses, _ = transformer_run(False, cuda, autocast="bfloat16")
    replayed, losses, _ = transformer_run(True, cuda, autocast="bfloat16")
    assert losses == eager_losses
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)


def test_captured_float16_steps_with_a_loss_scaler_give_the_eager_bits(cuda):
    eager, eager_losses, eager_counters, _ = run(False, cuda, float16=True)
    replayed, losses, counters, _ = run(True, cuda, float16=True)
    assert losses == eager_losses and counters == eager_counters
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)
