"""minitx's Transformer, loss, clipping and Adam give PyTorch's numbers, step for step, in float64.

The PyTorch twin in benchmarks/bench_train_step.py is built module for module with minitx's
parameter names. It takes minitx's initial weights; both models see the same padded batch;
then logits, the label-smoothed loss, every gradient, and the parameters after three steps of
clipping + Adam must agree. This is an independent check of the whole model (masks, scaling,
positions, residual order, tying) and it keeps the benchmark's twin honest: a twin that
computed something else would make the speed comparison meaningless.

minitx does not depend on PyTorch: CI installs the CPU build as a test-only step (.ci/run), and
these tests fail there when it is missing (torch_reference.import_torch); elsewhere they are
skipped without it (`pip install torch==2.13.0` runs them).
"""
import sys
from pathlib import Path

import numpy as np
import pytest

from torch_reference import import_torch

torch = import_torch()

import minitx  # noqa: E402
import minitx.functional as F  # noqa: E402
from minitx import optim  # noqa: E402
from minitx.nn import Transformer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from bench_train_step import make_batch, torch_model  # noqa: E402

SMALL = dict(d_model=16, num_heads=2, num_encoder_layers=2, num_decoder_layers=2, d_ff=24, max_len=12,
             dropout=0.0)
VARIANTS = {
    # the tutorial's model (seed004-small): post-norm, learned positions, separate vocabularies
    "post-norm learned": dict(positional="learned", src_vocab=40, tgt_vocab=30),
    # pre-norm, sinusoidal, one shared table also used as output, GELU (the other options)
    "pre-norm shared tied gelu": dict(positional="sinusoidal", norm_first=True, share_embeddings=True,
                                      tie_output=True, activation="gelu", src_vocab=35, tgt_vocab=35),
    "post-norm sinusoidal, no output bias": dict(positional="sinusoidal", output_bias=False, src_vocab=30,
                                                 tgt_vocab=33),
    # post-norm, sinusoidal, shared and tied embeddings, ReLU (the first gpu-best recipe's model)
    "post-norm shared tied": dict(positional="sinusoidal", share_embeddings=True, tie_output=True,
                                             src_vocab=35, tgt_vocab=35),
}
TOLERANCE = dict(rtol=1e-9, atol=1e-11)


def twins(variant):
    cfg = dict(SMALL, **VARIANTS[variant])
    minitx.manual_seed(0)
    ours = Transformer(**cfg).to(dtype="float64")
    theirs = torch_model(torch, cfg).double()
    weights = ours.state_dict()
    # named_parameters lists a shared table once (as src_embed.weight), like minitx's state dict
    theirs.load_state_dict({name: torch.from_numpy(weights[name]) for name, _ in theirs.named_parameters()},
                           strict=False)
    assert sorted(n for n, _ in theirs.named_parameters()) == sorted(n for n, _ in ours.named_parameters())
    if cfg["positional"] == "sinusoidal":
        # both tables are float32 sin/cos of the same angles; then the same table on both sides
        table = ours.src_pos.table.numpy()
        np.testing.assert_allclose(table, theirs.src_table.numpy(), rtol=1e-6, atol=1e-6)
        theirs.src_table.copy_(torch.from_numpy(table))
        theirs.tgt_table.copy_(torch.from_numpy(ours.tgt_pos.table.numpy()))
    src, tgt = make_batch(tokens=40, length=cfg["max_len"] - 2, vocab=min(cfg["src_vocab"], cfg["tgt_vocab"]),
                          seed=3)
    assert (src == 0).any() and (tgt == 0).any(), "the batch must hold padding"
    return cfg, ours, theirs, src, tgt


def losses(ours, theirs, src, tgt):
    tgt_in, tgt_out = tgt[:, :-1], np.ascontiguousarray(tgt[:, 1:])
    logits = ours(src, tgt_in)
    loss = F.cross_entropy(logits, minitx.tensor(tgt_out), ignore_index=0, label_smoothing=0.1)
    torch_logits = theirs(torch.from_numpy(src), torch.from_numpy(tgt_in))
    torch_loss = torch.nn.functional.cross_entropy(torch_logits.reshape(-1, torch_logits.shape[-1]),
                                                   torch.from_numpy(tgt_out).reshape(-1), ignore_index=0,
                                                   label_smoothing=0.1)
    return logits, loss, torch_logits, torch_loss


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_forward_loss_and_gradients_match_pytorch(variant):
    _, ours, theirs, src, tgt = twins(variant)
    ours.eval(), theirs.eval()
    logits, loss, torch_logits, torch_loss = losses(ours, theirs, src, tgt)
    np.testing.assert_allclose(logits.numpy(), torch_logits.detach().numpy(), **TOLERANCE)
    np.testing.assert_allclose(loss.item(), torch_loss.item(), **TOLERANCE)

    loss.backward()
    torch_loss.backward()
    theirs_by_name = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad, theirs_by_name[name].grad.numpy(), **TOLERANCE,
                                   err_msg=f"gradient of {name}")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_three_clipped_adam_steps_match_pytorch(variant):
    _, ours, theirs, src, tgt = twins(variant)
    ours_params, theirs_by_name = list(ours.parameters()), dict(theirs.named_parameters())
    ours_opt = optim.Adam(ours_params, lr=1e-2, betas=(0.9, 0.98), eps=1e-9)
    theirs_opt = torch.optim.Adam(theirs.parameters(), lr=1e-2, betas=(0.9, 0.98), eps=1e-9)
    for _ in range(3):
        _, loss, _, torch_loss = losses(ours, theirs, src, tgt)
        ours_opt.zero_grad()
        theirs_opt.zero_grad()
        loss.backward()
        torch_loss.backward()
        # max_norm 0.5 is below the gradient norm here, so the clipping really scales
        norm = optim.clip_grad_norm_(ours_params, 0.5)
        torch_norm = torch.nn.utils.clip_grad_norm_(theirs.parameters(), 0.5)
        assert float(norm) > 0.5
        np.testing.assert_allclose(float(norm), torch_norm.item(), **TOLERANCE)
        ours_opt.step()
        theirs_opt.step()
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.numpy(), theirs_by_name[name].detach().numpy(), rtol=1e-8, atol=1e-10,
                                   err_msg=f"{name} after three steps")


@pytest.mark.parametrize("precision", ["bfloat16", "float16"])
@pytest.mark.parametrize("variant", ["post-norm learned", "pre-norm shared tied gelu"])
def test_a_step_under_autocast_follows_pytorchs_autocast(variant, precision):
    """The same float32 model under minitx.autocast and torch.autocast("cpu") in the same 16-bit
    dtype: the two losses within 0.3% and every gradient pointing the same way (cosine above
    0.995). Not closer: the two tables differ in detail (minitx also keeps the embedding's output
    in 16 bits; PyTorch's CPU autocast leaves it float32), and each rounding then differs."""
    _, ours, theirs, src, tgt = twins(variant)
    ours, theirs = ours.to(dtype="float32"), theirs.float()
    ours.eval(), theirs.eval()
    tgt_in, tgt_out = tgt[:, :-1], np.ascontiguousarray(tgt[:, 1:])
    with minitx.autocast(precision):
        loss = F.cross_entropy(ours(src, tgt_in), minitx.tensor(tgt_out), ignore_index=0, label_smoothing=0.1)
    loss.backward()
    with torch.autocast("cpu", dtype=getattr(torch, precision)):
        torch_logits = theirs(torch.from_numpy(src), torch.from_numpy(tgt_in))
    torch_loss = torch.nn.functional.cross_entropy(torch_logits.float().reshape(-1, torch_logits.shape[-1]),
                                                   torch.from_numpy(tgt_out).reshape(-1), ignore_index=0,
                                                   label_smoothing=0.1)
    torch_loss.backward()
    assert loss.item() == pytest.approx(torch_loss.item(), rel=3e-3)
    theirs_by_name = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        mine, other = p.grad.numpy().ravel().astype(np.float64), theirs_by_name[name].grad.numpy().ravel()
        assert p.grad.dtype == np.float32, name
        cosine = mine @ other / (np.linalg.norm(mine) * np.linalg.norm(other) + 1e-30)
        assert cosine > 0.995, f"gradient of {name}: cosine {cosine:.4f} with PyTorch's"
