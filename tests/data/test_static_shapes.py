"""Static batch shapes (data.static_shape, make_batch(shape=...)): a few fixed shapes, every batch
fits its shape, and the padding changes nothing a real position sees: the loss and every gradient
equal the unpadded batch's."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.data import batch_by_tokens, example_lengths, make_batch, static_shape
from minitx.nn import Transformer


@given(width=st.integers(1, 200), max_tokens=st.integers(1, 10_000), limit=st.none() | st.integers(200, 256))
def test_a_static_shape_holds_every_batch_of_its_width(width, max_tokens, limit):
    rows, columns = static_shape(width, max_tokens, limit=limit)
    assert columns >= width and (columns % 8 == 0 or columns == limit)
    # every width that rounds to these columns: batch_by_tokens puts at most max_tokens // w examples
    for w in range(max(1, columns - 7), columns + 1):
        if w <= max_tokens:
            assert max_tokens // w <= rows


def test_batches_of_a_whole_split_take_a_few_shapes():
    rng = np.random.default_rng(0)
    src = [list(rng.integers(4, 50, rng.integers(1, 40))) for _ in range(3000)]
    tgt = [list(rng.integers(4, 50, rng.integers(1, 40))) for _ in range(3000)]
    shapes = set()
    for epoch in range(3):
        for batch in batch_by_tokens(src, tgt, 1024, seed=1, epoch=epoch):
            width = int(example_lengths([src[i] for i in batch], [tgt[i] for i in batch]).max())
            rows, columns = static_shape(width, 1024)
            assert len(batch) <= rows
            shapes.add((rows, columns))
    assert len(shapes) <= 41 // 8 + 1  # one per multiple of 8 up to the longest (40 + <eos>)


def test_make_batch_pads_rows_and_columns_and_keeps_the_counts():
    batch = make_batch([[5, 6], [7]], [[8], [9, 10, 11]], pad_id=0, bos_id=1, eos_id=2, shape=(4, 8))
    assert batch.src.shape == batch.tgt_in.shape == batch.tgt_out.shape == (4, 8)
    assert batch.tgt_in[1].tolist() == [1, 9, 10, 11, 0, 0, 0, 0] and not batch.src[2:].any()
    assert (batch.n_src_tokens, batch.n_tgt_tokens) == (3, 6)
    with pytest.raises(ValueError, match=r"make_batch: shape \(1, 8\) has fewer rows than the 2 examples"):
        make_batch([[5], [6]], [[7], [8]], shape=(1, 8))


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 100), norm_first=st.booleans())
def test_a_padded_batch_gives_the_loss_and_gradients_of_the_batch_itself(seed, norm_first):
    rng = np.random.default_rng(seed)
    src = [list(rng.integers(3, 20, rng.integers(1, 7))) for _ in range(3)]
    tgt = [list(rng.integers(3, 20, rng.integers(1, 7))) for _ in range(3)]
    width = int(example_lengths(src, tgt).max())

    def loss_and_grads(shape):
        minitx.manual_seed(seed)
        model = Transformer(20, 20, d_model=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=16,
                            max_len=16, dropout=0.0, norm_first=norm_first).to(dtype="float64")
        batch = make_batch(src, tgt, shape=shape)
        loss = F.cross_entropy(model(batch.src, batch.tgt_in), batch.tgt_out, ignore_index=0, label_smoothing=0.1)
        loss.backward()
        return loss.item(), [p.grad.numpy() for p in model.parameters()]

    loss, grads = loss_and_grads(None)
    padded_loss, padded_grads = loss_and_grads(static_shape(width, 64, limit=16))
    assert padded_loss == pytest.approx(loss, rel=1e-13)
    for g, h in zip(grads, padded_grads):
        np.testing.assert_allclose(h, g, rtol=1e-11, atol=1e-13)
