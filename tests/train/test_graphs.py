"""minitx.train.graphs: steps replayed from a graph per batch shape give the eager steps' bits.

Run on the CPU with the kernels' CPU build (so dropout draws from Philox through the kernels, as
on a GPU) and the CPU model of a CUDA graph (_rerun_graphs.py: a replay reruns the step with the
capture's dropout offsets, and may not write its learning rate). A learning rate that changes
every step, dropout, clipping, Adam's device-side step counts and the deferred checks all go
through the replays; the parameters, losses, step counts and Philox offsets must come out as the
eager steps leave them. The GPU test runs the same on cupy.cuda.Graph."""
import contextlib
import dataclasses
import functools

import numpy as np
import pytest

import minitx
import minitx.functional as F
from minitx import backend, kernels, nn, optim, sync
from minitx import random as mrandom
from minitx.train import graphs as graphs_module
from minitx.train import train_step
from minitx.train.graphs import StepGraphs

from _rerun_graphs import RerunGraphs


@dataclasses.dataclass
class Ids:
    ids: np.ndarray
    tokens: int


def batches():
    """Eight batches of two shapes, interleaved: each shape warms up, is captured, is replayed."""
    rng = np.random.default_rng(3)
    out = []
    for rows, cols in [(2, 4), (2, 4), (3, 5), (2, 4), (3, 5), (3, 5), (2, 4), (3, 5)]:
        ids = rng.integers(0, 12, (rows, cols))
        out.append(Ids(ids, int((ids != 0).sum())))
    return out


def loss_fn(model, batch):
    return F.cross_entropy(model(batch.ids), batch.ids, ignore_index=0), batch.tokens


def on_device(device, shared_pool=True):
    """How the steps run: on the CPU through the kernels' CPU build and the model of a graph; on
    a GPU with minitx.blas's products (a captured step's), eager or captured alike."""
    if device == "cpu":
        return kernels.emulate_on_cpu(), lambda opt, scaler=None, model=None: RerunGraphs(opt, scaler, model)
    from minitx import blas
    from minitx.train.graphs import CudaGraphs

    return blas.use_cublas(True), lambda opt, scaler=None, model=None: CudaGraphs(shared_pool)


def run(captured: bool, device="cpu", reseed_at=None, float16=False, shared_pool=True, load_at=None, change=None,
        loss_of=loss_fn):
    """Parameters, losses and counters after the eight steps, eager or through StepGraphs (with
    ``reseed_at``, minitx.manual_seed(7) before that step; with ``load_at``, the optimizer's
    state saved and loaded back, as a resume loads it; with ``change`` = (step, fn),
    fn(model, optimizer, scaler) before that step; with ``float16``, the forward under
    autocast and the loss scaled by a GradScaler, its scale and growth count on the device)."""
    minitx.manual_seed(0)
    model = nn.Sequential(nn.Embedding(12, 8), nn.Dropout(0.3), nn.Linear(8, 12)).to(device)
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    schedule = optim.WarmupInverseSqrt(opt, peak_lr=1e-2, warmup_steps=4)  # a new rate every step
    checks = sync.DeferredChecks(device)
    context, make_recorder = on_device(device, shared_pool)
    scaler = optim.GradScaler(init_scale=2.0 ** 8, growth_interval=3) if float16 else None
    recorder = make_recorder(opt, scaler, model)
    step_loss = (lambda model, batch: _under(minitx.autocast("float16"), loss_of, model, batch)) if float16 else loss_of
    step = StepGraphs(model, step_loss, opt, checks, lambda batch: batch.tokens, schedule=schedule, clip_norm=0.5,
                      scaler=scaler, recorder=recorder)
    losses, reads = [], 0
    with context:
        for number, batch in enumerate(batches()):
            if number == reseed_at:
                minitx.manual_seed(7)
            if number == load_at:
                opt.load_state_dict(opt.state_dict())
            if change is not None and number == change[0]:
                change[1](model, opt, scaler)
            with backend.count_host_reads() as counted:
                if captured:
                    loss, weight = step(batch)
                else:
                    loss, weight = train_step(model, batch, step_loss, opt, schedule, clip_norm=0.5, checks=checks,
                                              scaler=scaler)
            reads += counted.count
            losses.append((float(backend.to_host(loss)), weight))
    assert reads == 0  # no step, eager, warm-up, capture or replay, reads the device
    checks.raise_first()
    counters = (mrandom.philox_offset(device), [int(s["step"]) for s in opt.state.values()], int(checks.step),
                opt.param_groups[0]["lr"], None if scaler is None else scaler.state_dict())
    return [p.numpy() for p in model.parameters()], losses, counters, getattr(recorder, "launches", None)


def replays_as_eager(**options):
    """run() eagerly and through StepGraphs with the same options, asserting the same losses,
    counters and parameters, bit for bit; (the counters, the recorder's launches) of the replays."""
    eager, eager_losses, eager_counters, _ = run(captured=False, **options)
    replayed, losses, counters, launches = run(captured=True, **options)
    assert losses == eager_losses and counters == eager_counters
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)
    return counters, launches


def test_replayed_steps_give_the_eager_steps_bits():
    counters, launches = replays_as_eager()
    assert launches == 4  # 8 steps: 2 shapes x (1 eager + 1 captured) + 4 reruns
    assert counters[0] == 8 * 1  # one dropout call a step


def _under(context, fn, *args):
    with context:
        return fn(*args)


def test_float16_steps_with_a_loss_scaler_replay_to_the_eager_bits():
    """The scaler's scale, growth count and skip flag live on the device and change inside the
    step: replays carry them on as the eager steps do (the scale grows after 3 clean steps)."""
    counters, launches = replays_as_eager(float16=True)
    assert launches == 4
    assert counters[-1]["scale"] > 2.0 ** 8  # it grew: the scaler's state went through the replays


def test_a_reseeded_run_captures_again_and_still_gives_the_eager_bits():
    """manual_seed in the middle of a run restarts the Philox offsets (and may change the seed):
    the graphs captured before would replay the old stream, so they are dropped and each shape
    warms up and is captured again."""
    _, launches = replays_as_eager(reseed_at=5)
    # shapes A A B A B | reseed | B A B: A warms, is captured, B warms, A replays (the one rerun), B is
    # captured; after the reseed B and A warm up again and B is captured again
    assert launches == 1


def test_loading_the_optimizers_state_captures_again_and_still_gives_the_eager_bits():
    """load_state_dict gives the optimizer new state arrays, which the graphs captured before do
    not update: they are dropped, and each shape warms up and is captured again (as after a reseed)."""
    _, launches = replays_as_eager(load_at=5)
    assert launches == 1


def _replace_a_weight(model, opt, scaler):
    """What Module.load_state_dict does for memory it cannot write, or a user's ``p.data = ...``."""
    model[2].weight.data = model[2].weight.data * 0.5


def _move_weight_decay(model, opt, scaler):
    opt.param_groups[0]["weight_decay"] = 0.5


def _load_other_scaler_factors(model, opt, scaler):
    scaler.load_state_dict({**scaler.state_dict(), "growth_factor": 4.0})


def _to_evaluation(model, opt, scaler):
    model.eval()  # (dropout off: the eager steps draw no mask, a replay of a training capture would)


def _freeze_the_output_layer(model, opt, scaler):
    model[2].requires_grad_(False)  # (the eager steps give it no gradient and no update; a replay would)


def _add_a_forward_hook(model, opt, scaler):
    model[0].register_forward_hook(lambda module, inputs, output: F.dropout(output, 0.1, True))


CHANGES = {"a parameter's array replaced": (_replace_a_weight, False),
           "a layer frozen": (_freeze_the_output_layer, False),
           "a forward hook added": (_add_a_forward_hook, False),
           "a group setting moved": (_move_weight_decay, False),
           "the model put in evaluation mode": (_to_evaluation, False),
           "the scaler's growth factor loaded": (_load_other_scaler_factors, True)}


@pytest.mark.parametrize("what", sorted(CHANGES))
def test_a_change_between_steps_to_what_the_graphs_took_as_given_captures_again(what):
    """An array a graph reads or writes replaced, or a number its kernels take moved, between two
    steps: a replay would go on with the capture's, so the graphs are dropped and each shape
    warms up and is captured again (as after a load), and the steps keep the eager bits."""
    fn, float16 = CHANGES[what]
    _, launches = replays_as_eager(float16=float16, change=(5, fn))
    assert launches == 1


@pytest.mark.parametrize("what", sorted(CHANGES))
def test_a_driver_blind_to_the_change_would_replay_the_captures(what, monkeypatch):
    """The test above can fail: the CPU model of a graph refuses to replay after such a change."""
    fn, float16 = CHANGES[what]
    monkeypatch.setattr(StepGraphs, "_unchanged", lambda self: True)
    with pytest.raises(AssertionError, match="since the capture"):
        run(captured=True, float16=float16, change=(5, fn))


def test_without_the_philox_base_the_replays_would_redraw_the_captures_masks(monkeypatch):
    """The test above can fail: a driver that leaves the base at 0 replays the masks of the
    capture, and the parameters part from the eager run's."""
    eager, *_ = run(captured=False)
    monkeypatch.setattr(graphs_module, "philox_memory", lambda be, seed: np.zeros(2, np.uint64))
    replayed, *_ = run(captured=True)
    assert any(not np.array_equal(a, b) for a, b in zip(replayed, eager))


def test_a_replay_must_not_write_its_learning_rate_itself(monkeypatch):
    monkeypatch.setattr(optim.AdamW, "write_lr", lambda self: None)
    with pytest.raises(AssertionError, match="wrote its learning rate inside a replay"):
        run(captured=True)


def test_the_driver_counts_its_graphs_and_what_they_hold():
    """held(): the shapes captured so far (a shape's second batch captures it) and the bytes their
    pools hold (the CPU's model of a graph keeps none): what a run reports at its end."""
    minitx.manual_seed(0)
    model = nn.Sequential(nn.Embedding(12, 8), nn.Linear(8, 12))
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    context, make_recorder = on_device("cpu")
    step = StepGraphs(model, loss_fn, opt, sync.DeferredChecks("cpu"), lambda batch: batch.tokens,
                      recorder=make_recorder(opt))
    seen = []
    with context:
        for batch in batches():  # shapes A A B A B B A B
            step(batch)
            seen.append(step.held())
    assert [shapes for shapes, _ in seen] == [0, 1, 1, 1, 2, 2, 2, 2]
    assert {held for _, held in seen} == {0}


def test_the_driver_refuses_what_it_cannot_capture():
    model = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="must be sync-free"):
        StepGraphs(model, loss_fn, optim.Adam(model.parameters()), None, len, recorder=object())
    with pytest.raises(TypeError, match="SGD cannot skip a step on the device"):
        StepGraphs(model, loss_fn, optim.SGD(model.parameters(), lr=0.1), sync.DeferredChecks(), len,
                   recorder=object())
    step = StepGraphs(model, loss_fn, optim.Adam(model.parameters()), sync.DeferredChecks(), len, recorder=object())
    with pytest.raises(TypeError, match="a batch must be a dataclass holding its arrays"):
        step(np.zeros((2, 2)))


def test_a_trainer_with_cuda_graphs_names_what_the_run_lacks(tmp_path):
    from minitx.train import Trainer

    model = nn.Linear(2, 2)
    with pytest.raises(ValueError, match=r"cuda_graphs needs a model on the GPU \(it is on cpu\); sync_every .*; "
                                         r"one batch per step \(accumulate is 2\); weight_of\(batch\)"):
        Trainer(tmp_path, model, optim.Adam(model.parameters()), loss_fn, lambda seed, epoch: [],
                validation_loss=lambda m: 0.0, accumulate=2, cuda_graphs=True)


# multi30k-tiny-published's layers (minitx.translate.recipes) where they differ from the default
PUBLISHED = dict(dropout=0.3, attention_dropout=0.0, activation_dropout=0.0, positional="sinusoidal",
                 share_embeddings=True, tie_output=True, output_bias=False, embed_init="normal")


def small_transformer(device="cpu", published=False):
    """A one-layer Transformer with dropout everywhere (the fused dropout ops and the attention
    kernels', all from Philox), or with the published recipe's layers."""
    from minitx.nn import Transformer

    minitx.manual_seed(1)
    layers = PUBLISHED if published else dict(dropout=0.2, attention_dropout=0.1, positional="learned")
    return Transformer(12, 12, d_model=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=12,
                       max_len=8, device=device, **layers).to(dtype="float32")


def translation_batches(rng):
    """Six minitx.data.Batch of two shapes."""
    from minitx.data import make_batch

    for shape in [(2, 8), (2, 8), (3, 8), (2, 8), (3, 8), (2, 8)]:
        lengths = rng.integers(1, 6, (shape[0], 2))
        yield make_batch([list(rng.integers(3, 9, n)) for n in lengths[:, 0]],
                         [list(rng.integers(3, 11, n)) for n in lengths[:, 1]], shape=shape)


def translation_loss(model, batch, autocast=None):
    with minitx.autocast(autocast) if autocast else contextlib.nullcontext():
        logits = model(batch.src, batch.tgt_in)
        loss = F.cross_entropy(logits, batch.tgt_out, ignore_index=0, label_smoothing=0.1)
    return loss, batch.n_tgt_tokens


def transformer_run(captured: bool, device="cpu", autocast=None, published=False, reload_at=None):
    """Six steps of small_transformer on translation_batches; with ``autocast``, its forward under
    minitx.autocast of that dtype (bfloat16: the products and attention in bfloat16, float32
    master weights); with ``reload_at``, the starting weights loaded back (load_state_dict) before
    that step, as a resume or the final model's choice loads them."""
    model = small_transformer(device, published)
    start = {name: np.array(value, copy=True) for name, value in model.state_dict().items()}
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    schedule = optim.WarmupInverseSqrt(opt, peak_lr=1e-2, warmup_steps=3)
    clip_norm = 25.0 if published else 1.0
    checks = sync.DeferredChecks(device)
    context, make_recorder = on_device(device)
    loss_fn = functools.partial(translation_loss, autocast=autocast)
    step = StepGraphs(model, loss_fn, opt, checks, lambda batch: batch.n_tgt_tokens, schedule=schedule,
                      clip_norm=clip_norm, recorder=make_recorder(opt))
    losses = []
    with context:
        for number, batch in enumerate(translation_batches(np.random.default_rng(5))):
            if number == reload_at:
                arrays = [p.data for p in model.parameters()]
                model.load_state_dict(start)
                assert all(p.data is a for p, a in zip(model.parameters(), arrays))  # in place: graphs see it
            if captured:
                loss, _ = step(batch)
            else:
                loss, _ = train_step(model, batch, loss_fn, opt, schedule, clip_norm=clip_norm, checks=checks)
            losses.append(float(backend.to_host(loss)))
    checks.raise_first()
    return [p.numpy() for p in model.parameters()], losses, mrandom.philox_offset(device)


@pytest.mark.slow
def test_a_transformer_with_dropout_replays_to_the_eager_bits():
    eager, eager_losses, eager_offset = transformer_run(captured=False)
    replayed, losses, offset = transformer_run(captured=True)
    assert losses == eager_losses and offset == eager_offset > 6
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)


@pytest.mark.slow
def test_a_transformer_under_bfloat16_autocast_replays_to_the_eager_bits():
    pytest.importorskip("ml_dtypes")
    eager, eager_losses, _ = transformer_run(captured=False, autocast="bfloat16")
    replayed, losses, _ = transformer_run(captured=True, autocast="bfloat16")
    assert losses == eager_losses
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)


def trainer_run(tmp_path, captured: bool, monkeypatch):
    """A Trainer over three epochs of batches() (two shapes), with validation, checkpoints every
    three steps and the last two epochs averaged; with ``captured``, its steps through StepGraphs
    (the Trainer's GPU check lifted, the CPU model of a graph as the recorder). The parameters
    it trained and, when captured, its StepGraphs."""
    from minitx.train import Trainer
    from minitx.train import loop

    minitx.manual_seed(0)
    model = nn.Sequential(nn.Embedding(12, 8), nn.Dropout(0.3), nn.Linear(8, 12))
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    if captured:
        monkeypatch.setattr(loop, "_check_graphs", lambda *args: None)
        monkeypatch.setattr(graphs_module, "CudaGraphs", lambda: RerunGraphs(opt))
    trainer = Trainer(tmp_path / ("captured" if captured else "eager"), model, opt, loss_fn, lambda seed, epoch: batches(),
                      validation_loss=lambda m: float(loss_fn(m, batches()[0])[0].item()),
                      schedule=optim.WarmupInverseSqrt(opt, peak_lr=1e-2, warmup_steps=4), epochs=3, save_every=3,
                      average_last=2, clip_norm=0.5, progress=False, sync_every=4, cuda_graphs=captured,
                      weight_of=lambda batch: batch.tokens, write_in_background=False)
    with kernels.emulate_on_cpu():
        trainer.fit()
    return [p.numpy() for p in model.parameters()], trainer._graphs


def test_a_trainers_steps_between_epochs_and_checkpoints_keep_their_graphs(tmp_path, monkeypatch):
    """What the Trainer does between two steps (validation, checkpoints, the epoch's end) leaves
    alone every array and setting the graphs took as given: each of the two shapes is captured
    once in the run's three epochs (24 steps), and the steps keep the eager Trainer's bits."""
    eager, _ = trainer_run(tmp_path, False, monkeypatch)
    replayed, graphs = trainer_run(tmp_path, True, monkeypatch)
    assert graphs.captures == 2 and graphs.recorder.launches == 24 - 4
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)


def test_hooks_a_step_puts_on_its_own_tensors_keep_the_graphs(monkeypatch):
    """A hook registered on an activation inside the forward (a gradient-reversal layer, say) is
    the step's own: it runs in every warm-up and capture and does not start the graphs over."""
    def hooked_loss(model, batch):
        hidden = model[0](batch.ids)
        hidden.register_hook(lambda g: g * 0.5)
        return F.cross_entropy(model[2](model[1](hidden)), batch.ids, ignore_index=0), batch.tokens
    eager, eager_losses, _, _ = run(captured=False, loss_of=hooked_loss)
    replayed, losses, _, launches = run(captured=True, loss_of=hooked_loss)
    assert launches == 4 and losses == eager_losses
    for got, want in zip(replayed, eager):
        np.testing.assert_array_equal(got, want)
