"""The Transformer as a whole: gradients of the loss, masking properties, incremental decoding
with a cache, presets and argument errors."""
import functools

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st
from hypothesis.extra import numpy as hnp

import minitx
import minitx.functional as F
from minitx import nn
from minitx.nn import Transformer
from minitx.testing import gradcheck, strategies as mst

PAD, VOCAB = 0, 7
TINY = dict(d_model=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=16, dropout=0.0,
            max_len=10, pad_id=PAD)
# option sets of the tiny model, named for test ids
CONFIGS = {
    "post_norm_sinusoidal": {},
    "learned": dict(positional="learned"),
    "pre_norm": dict(norm_first=True),
    "tied_shared": dict(tie_output=True, share_embeddings=True),
    "tied_learned_pre_norm": dict(tie_output=True, positional="learned", norm_first=True),
}


def build(name, seed=0, dtype="float64", **overrides):
    minitx.manual_seed(seed)
    model = Transformer(VOCAB, VOCAB, **{**TINY, **CONFIGS[name], **overrides})
    return model.to(dtype=dtype)


@functools.lru_cache(maxsize=None)
def shared_model(name):
    """One eval-mode float64 model per option set, for the properties (they do not modify it)."""
    return build(name).eval()


def ids(batch, length, low=1, high=VOCAB):
    """Token id arrays [batch, length] in [low, high)."""
    return hnp.arrays(np.int64, (batch, length), elements=st.integers(low, high - 1))


@st.composite
def padded_sources(draw, max_batch=3, max_length=6):
    """Source ids with PAD at drawn positions (anywhere, not only at the end), one real token per row."""
    batch, length = draw(st.integers(1, max_batch)), draw(st.integers(1, max_length))
    src = draw(ids(batch, length))
    pad = draw(hnp.arrays(np.bool_, (batch, length)))
    pad[:, draw(st.integers(0, length - 1))] = False
    return np.where(pad, PAD, src)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# ---------------------------------------------------------------- gradients of the whole model


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_loss_gradient_with_respect_to_every_parameter(name):
    model = build(name)
    src = np.array([[3, 4, 5, PAD], [6, 2, 1, 1]])
    tgt = np.array([[1, 5, 4, 3], [1, 2, 6, PAD]])
    params = list(model.parameters())
    assert len(params) > 20

    def loss(*_):
        return F.cross_entropy(model(src, tgt[:, :-1]), tgt[:, 1:], ignore_index=PAD)

    # small parameters get the full Jacobian, larger ones random directions
    assert gradcheck(loss, *params, full_jacobian_limit=32, directions=3)


# ---------------------------------------------------------------- masking properties


@pytest.mark.parametrize("name", ["post_norm_sinusoidal", "tied_learned_pre_norm"])
@given(src=padded_sources(), extra=st.integers(0, 3), seed=st.integers(0, 2**16))
def test_padding_changes_nothing_that_is_used(name, src, extra, seed):
    """What sits at padded source positions (the pad row of the embedding table, and how many
    trailing pads there are) changes no logits and no encoder output at real positions."""
    model = shared_model(name)
    tgt = np.random.default_rng(seed).integers(1, VOCAB, (len(src), 4))
    memory, _ = model.encode(src)
    logits = model(src, tgt).numpy()
    longer = np.pad(src, ((0, 0), (0, extra)), constant_values=PAD)
    pad_row = model.src_embed.weight.data[PAD].copy()
    try:
        model.src_embed.weight.data[PAD] = np.random.default_rng(seed).normal(0, 3, pad_row.shape)
        memory2, _ = model.encode(longer)
        logits2 = model(longer, tgt).numpy()
    finally:
        model.src_embed.weight.data[PAD] = pad_row
    real = src != PAD
    close(memory2.numpy()[:, :src.shape[1]][real], memory.numpy()[real])
    close(logits2, logits)


@pytest.mark.parametrize("name", ["post_norm_sinusoidal", "pre_norm"])
@given(data=st.data())
def test_a_target_token_does_not_affect_earlier_positions(name, data):
    model = shared_model(name)
    src = data.draw(padded_sources(max_batch=2), "src")
    tgt = data.draw(ids(len(src), data.draw(st.integers(1, 6), "length"), low=0), "tgt")
    j = data.draw(st.integers(0, tgt.shape[1] - 1), "j")
    changed = tgt.copy()
    changed[:, j] = data.draw(st.integers(0, VOCAB - 1), "token")
    assume(not np.array_equal(changed, tgt))
    before, after = model(src, tgt).numpy(), model(src, changed).numpy()
    close(after[:, :j], before[:, :j])
    assert np.abs(after[:, j] - before[:, j]).max() > 1e-9  # position j itself does see its token


def check_attention_weights(weights, allowed):
    """Non-negative, 0 where not allowed, each row summing to 1 over its allowed keys
    (0 for a query that may see no key)."""
    weights = weights.numpy()
    allowed = np.broadcast_to(allowed, weights.shape)
    assert (weights >= 0).all()
    assert (weights[~allowed] == 0).all()
    close(weights.sum(-1), allowed.any(-1).astype(float), tol=1e-12)


@given(data=st.data(), causal=st.booleans())
def test_scaled_dot_product_attention_weights(data, causal):
    batch = data.draw(mst.shapes(max_dims=2, max_side=3), "batch")
    lq, lk, d = (data.draw(st.integers(1, 5)) for _ in range(3))
    q, k, v = (data.draw(mst.float_arrays(batch + (length, d))) for length in (lq, lk, lk))
    mask = data.draw(mst.attention_masks(batch, lq, lk), "mask")
    _, weights = F.scaled_dot_product_attention(minitx.tensor(q), minitx.tensor(k), minitx.tensor(v), mask=mask,
                                                causal=causal, return_weights=True)
    if causal:
        mask = mask & np.tri(lq, lk, k=lk - lq, dtype=bool)
    check_attention_weights(weights, mask)


@given(data=st.data(), causal=st.booleans(), self_attention=st.booleans())
def test_multi_head_attention_weights(data, causal, self_attention):
    minitx.manual_seed(0)
    layer = nn.MultiHeadAttention(8, 2, self_attention=self_attention).to(dtype="float64")
    b, lq = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4))
    lk = lq if self_attention else data.draw(st.integers(1, 4))
    x, memory = (minitx.tensor(data.draw(mst.float_arrays((b, n, 8)))) for n in (lq, lk))
    mask = data.draw(mst.attention_masks((b, 1), lq, lk), "mask")
    _, weights = layer(x, None if self_attention else memory, mask=mask, causal=causal, return_weights=True)
    assert weights.shape == (b, 2, lq, lk)
    if causal:
        mask = mask & np.tri(lq, lk, k=lk - lq, dtype=bool)
    check_attention_weights(weights, mask)


# ---------------------------------------------------------------- incremental decoding


def decode_in_chunks(model, src, tgt, chunks, cache=None, encoded=None):
    """Logits of tgt fed to the decoder ``chunks`` positions at a time through a cache."""
    memory, src_mask = encoded or model.encode(src)
    cache = cache or model.new_cache()
    out, start = [], 0
    for size in chunks:
        out.append(model.decode(tgt[:, start:start + size], memory, src_mask, cache).numpy())
        start += size
    return np.concatenate(out, axis=1), cache


def chunk_sizes(total):
    """Ways to cut ``total`` positions into consecutive chunks (mostly single steps)."""
    return st.lists(st.sampled_from([1, 1, 1, 2, 3]), min_size=total, max_size=total).map(
        lambda sizes: list(_cut(sizes, total)))


def _cut(sizes, total):
    left = total
    for s in sizes:
        if left <= 0:
            return
        yield min(s, left)
        left -= s


@pytest.mark.parametrize("name", sorted(CONFIGS))
@given(data=st.data())
def test_incremental_decoding_equals_full_decoding(name, data):
    model = shared_model(name)
    src = data.draw(padded_sources(), "src")
    tgt = data.draw(ids(len(src), data.draw(st.integers(1, 6), "length")), "tgt")  # decoded tokens: no PAD
    chunks = data.draw(chunk_sizes(tgt.shape[1]), "chunks")
    stepwise, cache = decode_in_chunks(model, src, tgt, chunks)
    assert cache.length == tgt.shape[1]
    close(stepwise, model(src, tgt).numpy())


@given(data=st.data())
def test_cache_reorder_selects_batch_rows(data):
    model = shared_model("pre_norm")
    src = data.draw(padded_sources(max_batch=4), "src")
    batch = len(src)
    tgt = data.draw(ids(batch, 5), "tgt")
    rows = np.array(data.draw(st.lists(st.integers(0, batch - 1), min_size=1, max_size=4), "rows"))
    split = data.draw(st.integers(1, 4), "split")
    memory, src_mask = model.encode(src)
    _, cache = decode_in_chunks(model, src, tgt[:, :split], [1] * split, encoded=(memory, src_mask))
    cache.reorder(rows)  # keep (and repeat) rows, as beam search does
    steps = [1] * (5 - split)
    continued, _ = decode_in_chunks(model, None, tgt[rows, split:], steps, cache, (memory[rows], src_mask[rows]))
    fresh = model(src[rows], tgt[rows]).numpy()[:, split:]
    close(continued, fresh)



def test_the_cache_reorders_its_two_halves_apart():
    """reorder_decoded keeps rows of the decoded positions' keys and values (self-attention) and
    leaves the memory's (cross-attention) as they were; reorder_memory the other way round."""
    model = shared_model("pre_norm")
    src = np.array([[1, 2, 3], [4, 5, PAD], [6, PAD, PAD]])
    _, cache = decode_in_chunks(model, src, np.array([[1, 2], [3, 4], [5, 6]]), [1, 1])

    def snapshot(part):
        return [{key: value.numpy().copy() for key, value in layer[part].items()} for layer in cache.layers]

    def assert_rows(part, want):
        for layer, wanted in zip(cache.layers, want):
            assert sorted(layer[part]) == sorted(wanted) == ["k", "v"]
            for key, value in layer[part].items():
                np.testing.assert_array_equal(value.numpy(), wanted[key])

    rows = np.array([2, 0, 0])
    decoded, memory = snapshot("self"), snapshot("cross")
    cache.reorder_decoded(rows)
    assert_rows("self", [{key: value[rows] for key, value in layer.items()} for layer in decoded])
    assert_rows("cross", memory)
    cache.reorder_memory(rows)
    assert_rows("self", [{key: value[rows] for key, value in layer.items()} for layer in decoded])
    assert_rows("cross", [{key: value[rows] for key, value in layer.items()} for layer in memory])

# ---------------------------------------------------------------- presets, sizes and errors


def test_seed004_small_parameter_count():
    model = Transformer.from_preset("seed004-small", 7855, 5893)
    assert model.num_parameters() == 9_038_853


def test_base_preset_is_the_paper_base_model():
    model = Transformer.from_preset("base", 50, 60, max_len=64)
    config = model.config
    assert (config["d_model"], config["num_heads"], config["d_ff"]) == (512, 8, 2048)
    assert (config["num_encoder_layers"], config["num_decoder_layers"]) == (6, 6)
    assert config["positional"] == "sinusoidal" and config["max_len"] == 64
    assert len(model.encoder_layers) == 6 and len(model.decoder_layers) == 6
    assert isinstance(model.src_pos, nn.SinusoidalPositionalEncoding)
    assert model.output.weight.shape == (60, 512)


def test_unknown_preset_names_the_choices():
    with pytest.raises(ValueError, match="unknown preset 'huge'.*base"):
        Transformer.from_preset("huge", 10, 10)


def test_shared_and_tied_embeddings_are_one_parameter():
    untied = build("post_norm_sinusoidal")
    tied = build("tied_shared")
    assert tied.src_embed.weight is tied.tgt_embed.weight
    assert not hasattr(tied, "output")
    # one embedding table (7 x 8) instead of two, and no output matrix (8 x 7)
    assert untied.num_parameters() - tied.num_parameters() == 2 * VOCAB * 8


@pytest.mark.parametrize("share", [True, False])
def test_normal_embeddings_are_fairseqs_and_the_other_matrices_stay_xavier(share):
    """embed_init='normal': each table N(0, 1/d_model) with its padding row 0 (fairseq's
    Transformer); every other matrix as with 'xavier', drawn in the same order."""
    d, vocab = 64, 3000
    minitx.manual_seed(3)
    normal = Transformer(vocab, vocab, d_model=d, num_heads=4, num_encoder_layers=1, num_decoder_layers=1, d_ff=32,
                         share_embeddings=share, tie_output=share, embed_init="normal", pad_id=0)
    minitx.manual_seed(3)
    xavier = Transformer(vocab, vocab, d_model=d, num_heads=4, num_encoder_layers=1, num_decoder_layers=1, d_ff=32,
                         share_embeddings=share, tie_output=share, pad_id=0)
    tables = {id(e.weight): e.weight for e in (normal.src_embed, normal.tgt_embed)}.values()
    assert len(tables) == (1 if share else 2)
    for table in tables:
        values = table.numpy()
        assert not values[0].any()
        assert abs(values[1:].std() / d ** -0.5 - 1) < 0.02 and abs(values[1:].mean()) < 0.01 * d ** -0.5
    embeddings = {id(t) for t in tables}
    for (name, p), (_, q) in zip(normal.named_parameters(), xavier.named_parameters()):
        if id(p) not in embeddings:
            np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=name)
    assert xavier.src_embed.weight.numpy().std() < 0.3 * d ** -0.5  # xavier's table is several times smaller


@pytest.mark.parametrize("kwargs, message", [
    (dict(src_vocab=7, tgt_vocab=9, share_embeddings=True), "share_embeddings needs one joint vocabulary"),
    (dict(src_vocab=7, tgt_vocab=7, positional="rotary"), "positional must be"),
    (dict(src_vocab=7, tgt_vocab=7, activation="swish"), "activation must be"),
    (dict(src_vocab=7, tgt_vocab=7, embed_init="kaiming"), "embed_init must be 'xavier' or 'normal'"),
])
def test_inconsistent_options_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Transformer(**{**TINY, **kwargs})


@pytest.mark.parametrize("name", ["post_norm_sinusoidal", "learned"])
def test_sequences_longer_than_max_len_raise(name):
    model = shared_model(name)
    short, long = np.ones((1, 10), dtype=np.int64), np.ones((1, 11), dtype=np.int64)
    model(short, short)
    for src, tgt in [(long, short), (short, long)]:
        with pytest.raises(ValueError, match="max_len 10"):
            model(src, tgt)
    with pytest.raises(ValueError, match="max_len 10"):  # one step past the end while decoding
        decode_in_chunks(model, short, long, [10, 1])


@pytest.mark.parametrize("src_vocab, tgt_vocab", [(8, 2), (256, 4), (512, 1), (3, 30)])
def test_pytorchs_positional_d_model_and_nhead_are_refused_as_vocabularies(src_vocab, tgt_vocab):
    """PyTorch's nn.Transformer(8, 2) is (d_model, nhead); here the two are vocabulary sizes, and
    one too small for the special tokens and a word is refused before a 512-wide model is built,
    naming what minitx's Transformer takes and where PyTorch's is."""
    with pytest.raises(ValueError, match=rf"^Transformer: src_vocab {src_vocab} and tgt_vocab {tgt_vocab} are "
                                         r"vocabulary sizes.*at least 5.*minitx.nn.TransformerEncoder"):
        Transformer(src_vocab, tgt_vocab)
    assert Transformer(5, 5, **TINY).output.weight.shape == (5, 8)



@pytest.mark.parametrize("call, names", [
    (lambda: Transformer(d_model=512, nhead=8), "d_model=, nhead="), (lambda: Transformer(d_model=512), "d_model="),
    (lambda: Transformer(512, 8, batch_first=True), "batch_first="),
    (lambda: Transformer(11, 11, dim_feedforward=64, **TINY), "dim_feedforward=")])
def test_pytorchs_keywords_are_refused_at_construction_pointing_to_the_layers(call, names):
    """A call only PyTorch's nn.Transformer takes (its own keywords, or d_model= without the
    vocabularies) is refused before anything is built, naming the keywords and where PyTorch's is.
    PyTorch's positional nn.Transformer(512, 8) is two vocabularies here and builds (no value rule
    is safe: the tests' toy models have 5 to 11 words); its forward refuses embeddings (below)."""
    with pytest.raises(TypeError, match=rf"^Transformer: {names} make this PyTorch's nn.Transformer call.*"
                                        r"minitx.nn.TransformerEncoder"):
        call()
    model = Transformer(11, 11, d_model=8, **{k: v for k, v in TINY.items() if k != "d_model"})
    assert model.config["d_model"] == 8

def test_embeddings_given_for_token_ids_point_to_the_pytorch_style_layers():
    model = shared_model("learned")
    with pytest.raises(ValueError, match=r"integer array \[batch, length\], got shape \(10, 1, 8\).*"
                                         r"PyTorch's nn.Transformer\(d_model, nhead\).*TransformerEncoder"):
        model(np.ones((10, 1, 8), np.float32), np.ones((4, 1, 8), np.float32))


@pytest.mark.parametrize("bad", [np.ones((1, 3)), np.ones(3, dtype=np.int64)], ids=["float", "1-d"])
def test_token_ids_must_be_integer_matrices(bad):
    model = shared_model("learned")
    with pytest.raises(ValueError, match="integer array"):
        model(bad, np.ones((1, 2), dtype=np.int64))


@pytest.mark.parametrize("src_batch, tgt_batch", [(2, 1), (1, 2), (3, 2)])
def test_source_and_target_batches_must_match(src_batch, tgt_batch):
    model = shared_model("post_norm_sinusoidal")
    src, tgt = np.ones((src_batch, 3), dtype=np.int64), np.ones((tgt_batch, 4), dtype=np.int64)
    message = f"target batch has {tgt_batch} sentences but the source batch .memory. has {src_batch}"
    with pytest.raises(ValueError, match=message):
        model(src, tgt)
    memory, src_mask = model.encode(src)
    with pytest.raises(ValueError, match=message):  # incremental decoding checks it too
        model.decode(tgt[:, :1], memory, src_mask, model.new_cache())
