"""The encoder-only Transformer: gradients of the masked-LM and classification losses, BERT's
masking rates, the loss seeing only masked positions, padding never attended, and errors."""
import functools

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import minitx
import minitx.functional as F
from minitx.nn import EncoderClassifier, EncoderModel, MaskedLanguageModel, mask_tokens
from minitx.nn.encoder import IGNORE_INDEX
from minitx.testing import gradcheck

PAD, CLS, SEP, VOCAB = 0, 1, 2, 9
MASK = VOCAB - 1  # the last id, as the encoder app appends [MASK] to the tokenizer's vocabulary
TINY = dict(d_model=8, num_heads=2, num_layers=2, d_ff=16, dropout=0.0, max_len=12, pad_id=PAD)
CONFIGS = {
    "post_norm_relu": dict(norm_first=False, activation="relu"),
    "pre_norm_gelu_learned": dict(norm_first=True, activation="gelu", positional="learned"),
}


def build_encoder(name, seed=0):
    minitx.manual_seed(seed)
    return EncoderModel(VOCAB, **{**TINY, **CONFIGS[name]}).to(dtype="float64")


@functools.lru_cache(maxsize=None)
def shared_mlm(name):
    """One eval-mode float64 model per option set, for the properties (they do not modify it)."""
    return MaskedLanguageModel(build_encoder(name)).eval()


@st.composite
def padded_ids(draw, max_batch=3, max_length=7):
    """ids [B, L] in [3, MASK) with PAD at drawn positions (anywhere), one real token per row."""
    batch, length = draw(st.integers(1, max_batch)), draw(st.integers(1, max_length))
    ids = draw(hnp.arrays(np.int64, (batch, length), elements=st.integers(3, MASK - 1)))
    pad = draw(hnp.arrays(np.bool_, (batch, length)))
    pad[:, draw(st.integers(0, length - 1))] = False
    return np.where(pad, PAD, ids)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# ---------------------------------------------------------------- gradients


INPUTS = np.array([[CLS, 3, MASK, 5, SEP, PAD], [CLS, 6, 7, MASK, 4, SEP]])
TARGETS = np.array([[IGNORE_INDEX, IGNORE_INDEX, 4, IGNORE_INDEX, IGNORE_INDEX, IGNORE_INDEX],
                    [IGNORE_INDEX, 6, IGNORE_INDEX, 3, IGNORE_INDEX, IGNORE_INDEX]])


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_masked_lm_loss_gradient_with_respect_to_every_parameter(name):
    model = MaskedLanguageModel(build_encoder(name))
    params = list(model.parameters())
    assert model.head.embedding[0].weight is model.encoder.embed.weight  # tied, and counted once
    assert sum(p is model.encoder.embed.weight for p in params) == 1

    def loss(*_):
        return model.loss(INPUTS, TARGETS)

    assert gradcheck(loss, *params, full_jacobian_limit=32, directions=3)


@pytest.mark.parametrize("pooling", ["cls", "mean", None])
def test_classifier_loss_gradient_with_respect_to_every_parameter(pooling):
    model = EncoderClassifier(build_encoder("post_norm_relu"), 3, pooling=pooling, dropout=0.0)
    labels = np.array([2, 0]) if pooling else np.where(INPUTS == PAD, IGNORE_INDEX, INPUTS % 3)

    def loss(*_):
        return F.cross_entropy(model(INPUTS), labels)

    assert gradcheck(loss, *model.parameters(), full_jacobian_limit=32, directions=3)


# ---------------------------------------------------------------- the loss sees masked positions only


@pytest.mark.parametrize("name", sorted(CONFIGS))
@given(ids=padded_ids(), seed=st.integers(0, 2**16))
def test_masked_lm_loss_is_the_mean_over_masked_positions(name, ids, seed):
    """loss(inputs, targets) equals -mean log softmax(full logits)[target] over the masked
    positions, computed in NumPy from forward()'s logits at every position: the logits at the
    other positions play no part."""
    model = shared_mlm(name)
    batch = mask_tokens(ids, np.random.default_rng(seed), MASK, (3, MASK), special_ids=(CLS, SEP), pad_id=PAD,
                        mask_prob=0.5)
    if batch.n_masked == 0:
        with pytest.raises(ValueError, match="no position is masked"):
            model.loss(batch.inputs, batch.targets)
        return
    logits = model(batch.inputs).numpy()
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    chosen = batch.targets != IGNORE_INDEX
    expected = -log_probs[chosen, batch.targets[chosen]].mean()
    close(model.loss(batch.inputs, batch.targets).item(), expected)


# ---------------------------------------------------------------- padding is never attended


@pytest.mark.parametrize("name", sorted(CONFIGS))
@given(ids=padded_ids(), extra=st.integers(0, 3), seed=st.integers(0, 2**16))
def test_padding_changes_nothing_at_real_positions(name, ids, extra, seed):
    """Neither the pad row of the embedding table nor how many pads follow changes the hidden
    states, the masked-LM logits or the mean-pooled vector at real positions (the logit of
    <pad> itself excepted: the output layer is the embedding table, pad row included)."""
    model = shared_mlm(name)
    encoder = model.encoder
    hidden, logits = encoder(ids).numpy(), model(ids).numpy()
    pooled = encoder.pool(encoder(ids), ids, "mean").numpy()
    longer = np.pad(ids, ((0, 0), (0, extra)), constant_values=PAD)
    pad_row = encoder.embed.weight.data[PAD].copy()
    try:
        encoder.embed.weight.data[PAD] = np.random.default_rng(seed).normal(0, 3, pad_row.shape)
        hidden2, logits2 = encoder(longer).numpy(), model(longer).numpy()
        pooled2 = encoder.pool(encoder(longer), longer, "mean").numpy()
    finally:
        encoder.embed.weight.data[PAD] = pad_row
    real = ids != PAD
    close(hidden2[:, :ids.shape[1]][real], hidden[real])
    close(logits2[:, :ids.shape[1]][real][:, PAD + 1:], logits[real][:, PAD + 1:])
    close(pooled2, pooled)


def test_a_real_token_does_change_the_other_positions():
    """The counterpart of the padding test: attention does reach real tokens."""
    model = shared_mlm("post_norm_relu")
    ids = np.array([[CLS, 3, 4, SEP]])
    changed = np.array([[CLS, 3, 5, SEP]])
    assert np.abs(model.encoder(ids).numpy()[0, 1] - model.encoder(changed).numpy()[0, 1]).max() > 1e-6


# ---------------------------------------------------------------- BERT's masking


def test_masking_rates_over_many_draws():
    """15% of the maskable tokens are chosen; of them 80% become [MASK], 10% a random token,
    10% stay. Each rate is within 5 standard deviations of its binomial expectation."""
    rng = np.random.default_rng(0)
    ids = rng.integers(4, 1004, (400, 50))
    ids[:, 0], ids[:, -1] = CLS, SEP
    ids[::3, 40:] = PAD
    counts = dict(maskable=0, chosen=0, mask=0, random=0, kept=0)
    for _ in range(10):
        batch = mask_tokens(ids, rng, mask_id=1004, random_ids=(4, 1004), special_ids=(CLS, SEP), pad_id=PAD)
        chosen = batch.targets != IGNORE_INDEX
        assert (batch.targets[chosen] == ids[chosen]).all()
        assert (batch.inputs[~chosen] == ids[~chosen]).all()  # nothing else is touched
        counts["maskable"] += int((~np.isin(ids, [PAD, CLS, SEP])).sum())
        counts["chosen"] += int(chosen.sum())
        counts["mask"] += int((batch.inputs[chosen] == 1004).sum())
        counts["kept"] += int((batch.inputs[chosen] == ids[chosen]).sum())
        counts["random"] += int(((batch.inputs[chosen] != 1004) & (batch.inputs[chosen] != ids[chosen])).sum())

    def within(k, n, p):
        assert abs(k - n * p) <= 5 * np.sqrt(n * p * (1 - p)), (k, n, p)

    within(counts["chosen"], counts["maskable"], 0.15)
    within(counts["mask"], counts["chosen"], 0.8)
    # a random token equal to the original (1 chance in 1000) looks kept
    within(counts["random"], counts["chosen"], 0.1 * (1 - 1 / 1000))
    within(counts["kept"], counts["chosen"], 0.1 + 0.1 / 1000)


@given(ids=padded_ids(max_batch=4, max_length=10), seed=st.integers(0, 2**16),
       mask_prob=st.sampled_from([0.15, 0.5, 1.0]))
def test_padding_and_specials_are_never_masked(ids, seed, mask_prob):
    ids = ids.copy()
    ids[:, 0] = CLS
    batch = mask_tokens(ids, np.random.default_rng(seed), MASK, (3, MASK), special_ids=(CLS, SEP), pad_id=PAD,
                        mask_prob=mask_prob)
    special = np.isin(ids, [PAD, CLS, SEP])
    assert (batch.targets[special] == IGNORE_INDEX).all()
    assert (batch.inputs[special] == ids[special]).all()
    changed = batch.inputs != ids
    assert ((batch.inputs[changed] == MASK) | ((batch.inputs[changed] >= 3) & (batch.inputs[changed] < MASK))).all()
    if mask_prob == 1.0:
        assert (batch.targets[~special] == ids[~special]).all()
    again = mask_tokens(ids, np.random.default_rng(seed), MASK, (3, MASK), special_ids=(CLS, SEP), pad_id=PAD,
                        mask_prob=mask_prob)
    assert np.array_equal(again.inputs, batch.inputs) and np.array_equal(again.targets, batch.targets)


# ---------------------------------------------------------------- shapes and errors


def test_heads_output_shapes():
    encoder = build_encoder("post_norm_relu")
    ids = INPUTS
    assert MaskedLanguageModel(encoder)(ids).shape == (2, 6, VOCAB)
    assert EncoderClassifier(encoder, 4, pooling="cls")(ids).shape == (2, 4)
    assert EncoderClassifier(encoder, 4, pooling="mean")(ids).shape == (2, 4)
    assert EncoderClassifier(encoder, 4, pooling=None)(ids).shape == (2, 6, 4)
    close(encoder.pool(encoder(ids), ids, "cls").numpy(), encoder(ids).numpy()[:, 0])


@pytest.mark.parametrize("call, message", [
    (lambda: EncoderModel(VOCAB, positional="rotary"), "positional must be"),
    (lambda: EncoderModel(VOCAB, pad_id=VOCAB), "pad_id 9 is not an id"),
    (lambda: EncoderClassifier(build_encoder("post_norm_relu"), 2, pooling="max"), "pooling must be"),
    (lambda: build_encoder("post_norm_relu")(np.ones((2, 3))), "integer array"),
    (lambda: build_encoder("post_norm_relu")(np.ones(3, dtype=np.int64)), "integer array"),
    (lambda: build_encoder("post_norm_relu").pool(None, INPUTS, "max"), "how must be"),
    (lambda: MaskedLanguageModel(build_encoder("post_norm_relu")).loss(INPUTS, TARGETS[:, :3]), "do not match"),
    (lambda: mask_tokens(np.ones((2, 3)), np.random.default_rng(0), MASK, (3, MASK)), "integer array"),
    (lambda: mask_tokens(INPUTS, np.random.default_rng(0), MASK, (5, 5)), "non-empty range"),
    (lambda: mask_tokens(INPUTS, np.random.default_rng(0), MASK, (3, MASK), replace_prob=0.95), "replace_prob"),
])
def test_bad_arguments_raise_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_sequences_longer_than_max_len_raise():
    with pytest.raises(ValueError, match="exceed"):
        build_encoder("post_norm_relu")(np.full((1, TINY["max_len"] + 1), 3))


def test_random_replacements_come_from_their_range_and_nowhere_else():
    """With every token chosen and every choice randomized, the inputs hold exactly the ids of
    range(*random_ids): each of them over many draws, never [MASK] (the range's end here), never
    an id below it."""
    ids = np.full((50, 40), 7)
    batch = mask_tokens(ids, np.random.default_rng(1), mask_id=MASK, random_ids=(MASK - 3, MASK), pad_id=PAD,
                        mask_prob=1.0, replace_prob=0.0, random_prob=1.0)
    assert set(np.unique(batch.inputs).tolist()) == {MASK - 3, MASK - 2, MASK - 1}
