"""End to end on the CPU: a small Transformer learns to copy and to reverse digit sequences.

The claim is checked the way a user would use the model: greedy decoding with the key/value
cache on held-out sequences, token accuracy (end-of-sequence token included) above 99%.
"""
import ctypes
import glob
import os
import time

import numpy as np
import pytest

import minitx
import minitx.functional as F
from minitx import optim
from minitx.nn import Transformer

PAD, BOS, EOS = 0, 1, 2
VOCAB = 12  # PAD, BOS, EOS and the digits 1..9 as ids 3..11
MIN_LEN, MAX_LEN = 5, 8
STEPS, BATCH = 500, 64


def _openblas_thread_setter():
    """numpy's bundled OpenBLAS set_num_threads (and get), or None when not found."""
    libs = glob.glob(os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs", "*openblas*"))
    for path in libs:
        lib = ctypes.CDLL(path)
        for prefix in ("scipy_openblas", "openblas"):
            for suffix in ("64_", ""):
                setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                if setter is not None and getter is not None:
                    return setter, getter
    return None


@pytest.fixture(autouse=True)
def single_threaded_blas():
    """These matrices are tiny: BLAS threads only spin and wait for each other, which makes
    training several times slower on a busy machine. Best effort; restored afterwards."""
    found = _openblas_thread_setter()
    if found is None:
        yield
        return
    setter, getter = found
    before = getter()
    setter(1)
    try:
        yield
    finally:
        setter(before)


def make_batch(rng, size, task):
    """Source digits [size, MAX_LEN] padded, and target BOS + copy/reverse + EOS, padded."""
    lengths = rng.integers(MIN_LEN, MAX_LEN + 1, size)
    src = np.full((size, MAX_LEN), PAD)
    tgt = np.full((size, MAX_LEN + 2), PAD)
    for row, length in enumerate(lengths):
        digits = rng.integers(3, VOCAB, length)
        src[row, :length] = digits
        tgt[row, 0], tgt[row, length + 1] = BOS, EOS
        tgt[row, 1:length + 1] = digits[::-1] if task == "reverse" else digits
    return src, tgt


def greedy_decode(model, src, steps):
    """Argmax decoding one token at a time through the decoder cache."""
    with minitx.no_grad():
        memory, src_mask = model.encode(src)
        cache = model.new_cache()
        token = np.full((len(src), 1), BOS)
        out = []
        for _ in range(steps):
            logits = model.decode(token, memory, src_mask, cache)
            token = logits.numpy()[:, -1].argmax(-1)[:, None]
            out.append(token)
    return np.concatenate(out, axis=1)


@pytest.mark.parametrize("task", ["copy", "reverse"])
def test_transformer_learns_the_task(task):
    start = time.perf_counter()
    minitx.manual_seed(0)
    model = Transformer(VOCAB, VOCAB, d_model=32, num_heads=4, num_encoder_layers=2, num_decoder_layers=2,
                        d_ff=64, dropout=0.0, max_len=MAX_LEN + 2, norm_first=True, pad_id=PAD)
    opt = optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9)
    schedule = optim.WarmupCosine(opt, peak_lr=3e-3, warmup_steps=50, total_steps=STEPS, min_lr=1e-4)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(STEPS):
        src, tgt = make_batch(rng, BATCH, task)
        loss = F.cross_entropy(model(src, tgt[:, :-1]), tgt[:, 1:], ignore_index=PAD)
        opt.zero_grad()
        loss.backward()
        opt.step()
        schedule.step()
        losses.append(loss.item())
    train_time = time.perf_counter() - start

    model.eval()
    src, tgt = make_batch(np.random.default_rng(12345), 500, task)  # held out: another stream
    predicted = greedy_decode(model, src, MAX_LEN + 1)
    reference = tgt[:, 1:]
    real = reference != PAD  # digits and EOS; what follows EOS is not judged
    accuracy = ((predicted == reference) & real).sum() / real.sum()
    print(f"{task}: loss {losses[0]:.3f} -> {np.mean(losses[-20:]):.4f}, greedy token accuracy {accuracy:.4f}, "
          f"train {train_time:.1f} s, total {time.perf_counter() - start:.1f} s")
    assert np.mean(losses[-20:]) < 0.05 * losses[0]
    assert accuracy > 0.99
