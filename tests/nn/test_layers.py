"""Layers: forward against NumPy, gradients against finite differences (float64); the initializers
are in test_init.py.

Gradient checks pass a module's own parameters to ``gradcheck`` as extra inputs: gradcheck
perturbs their arrays in place, and the module reads them on every call, so one function of
the input checks the gradient of every parameter too.
"""
import math

import numpy as np
import pytest

import minitx
from minitx import nn
from minitx.nn.transformer import DecoderLayer, EncoderLayer, FeedForward
from minitx.testing import gradcheck


def rand(*shape, seed=0):
    return minitx.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def check_module_grads(module, call, *inputs):
    """gradcheck call(*inputs) with respect to the float inputs and every parameter of module."""
    module.to(dtype="float64")
    params = list(module.parameters())
    assert params, "the module has parameters to check"
    assert gradcheck(lambda *args: call(*args[:len(inputs)]), *inputs, *params)


# ---------------------------------------------------------------- forward values


def test_linear_matches_numpy():
    layer = nn.Linear(4, 3)
    x = rand(2, 5, 4).numpy().astype(np.float32)
    expected = x @ layer.weight.numpy().T + layer.bias.numpy()
    np.testing.assert_allclose(layer(minitx.tensor(x)).numpy(), expected, rtol=1e-5, atol=1e-6)
    assert nn.Linear(4, 3, bias=False).bias is None
    bound = 1 / math.sqrt(4)
    assert np.abs(layer.weight.numpy()).max() <= bound


@pytest.mark.parametrize("in_features", [4, 1])
def test_linear_refuses_a_0d_input_by_name(in_features):
    """(An IndexError from inside the op before: 'tuple index out of range'.)"""
    with pytest.raises(ValueError, match=r"linear: expected an input of at least 1 axis \[\.\.\., in_features\] "
                                         rf"and a weight \[out_features, in_features\], got shapes \(\) and \(3, {in_features}\)"):
        nn.Linear(in_features, 3)(minitx.tensor(1.0))
    with pytest.raises(ValueError, match=r"linear: .* got shapes \(2, 4\) and \(4,\)"):
        minitx.functional.linear(minitx.zeros(2, 4), minitx.zeros(4))


def test_layer_norm_matches_numpy():
    layer = nn.LayerNorm(6).to(dtype="float64")
    layer.weight.data[:] = np.linspace(0.5, 2, 6)
    layer.bias.data[:] = np.linspace(-1, 1, 6)
    x = rand(3, 6).numpy()
    normed = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    expected = normed * layer.weight.numpy() + layer.bias.numpy()
    np.testing.assert_allclose(layer(minitx.tensor(x)).numpy(), expected, rtol=1e-10)


def test_embedding_padding_row_is_zero_and_gets_no_gradient():
    layer = nn.Embedding(5, 3, padding_idx=1)
    assert np.all(layer.weight.numpy()[1] == 0)
    ids = np.array([[1, 2, 1], [4, 1, 0]])
    out = layer(ids)
    np.testing.assert_array_equal(out.numpy(), layer.weight.numpy()[ids])
    out.sum().backward()
    grad = layer.weight.grad.numpy()
    np.testing.assert_array_equal(grad[:, 0], [1, 0, 1, 0, 1])
    with pytest.raises(ValueError, match="padding_idx 5"):
        nn.Embedding(5, 3, padding_idx=5)
    with pytest.raises(IndexError, match="id 7"):
        layer(np.array([7]))


def test_embedding_padding_idx_counts_from_the_end_and_must_name_a_row():
    """As PyTorch's nn.Embedding: -1 is the last row (stored as 4 of 5); a float or a bool is
    refused naming the layer (PyTorch fails on a float inside its indexing, and takes True as 1)."""
    layer = nn.Embedding(5, 3, padding_idx=-1)
    assert layer.padding_idx == 4 and np.all(layer.weight.numpy()[4] == 0)
    layer(np.array([4, 0])).sum().backward()
    assert np.all(layer.weight.grad.numpy()[4] == 0) and np.all(layer.weight.grad.numpy()[0] == 1)
    assert repr(layer) == "Embedding(5, 3, padding_idx=4)"
    for bad in (1.5, True, -6):
        with pytest.raises(ValueError, match=rf"^Embedding: padding_idx {bad!r} is not a row of a table of 5 rows; "
                                             r"expected None or an int in \[-5, 5\)"):
            nn.Embedding(5, 3, padding_idx=bad)


def test_dropout_statistics_and_eval_identity():
    minitx.manual_seed(0)
    layer = nn.Dropout(0.3)
    x = minitx.ones(200, 100)
    y = layer(x).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.7)}
    assert abs((y == 0).mean() - 0.3) < 0.02
    layer.eval()
    assert layer(x) is x
    with pytest.raises(ValueError, match="p must be in"):
        nn.Dropout(1.0)


@pytest.mark.parametrize("layer, shape", [(nn.Dropout(0.3), (200, 100)), (nn.Dropout1d(0.3), (200, 100, 1)),
                                          (nn.Dropout2d(0.3), (200, 100, 1, 1)), (nn.Dropout3d(0.3), (200, 100, 1, 1, 1))],
                         ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else None)
def test_dropout_of_integers_scales_what_it_keeps_in_float32(layer, shape):
    """Dropped in their own dtype, integers kept 1/(1-p) = 1.43 truncated to 1: unscaled."""
    minitx.manual_seed(0)
    y = layer(minitx.tensor(np.full(shape, 3, np.int64)))
    assert y.dtype == "float32"
    assert set(np.unique(y.numpy())) == {0.0, np.float32(3 / 0.7)}
    layer.eval()
    assert layer(x := minitx.tensor([1, 2])) is x
    minitx.manual_seed(0)
    y = minitx.functional.dropout_add(minitx.tensor(np.full(1000, 3)), minitx.tensor(np.zeros(1000, np.int64)), 0.3)
    assert y.dtype == "float32" and set(np.unique(y.numpy())) == {0.0, np.float32(3 / 0.7)}


def test_sinusoidal_encoding_matches_the_paper():
    d, length = 6, 7
    layer = nn.SinusoidalPositionalEncoding(d, max_len=10)
    table = layer.table.numpy()
    for pos in range(length):
        for i in range(d // 2):
            angle = pos / 10000 ** (2 * i / d)
            assert table[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-6)
            assert table[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-6)
    x = minitx.zeros(2, 3, d)
    np.testing.assert_array_equal(layer(x, offset=4).numpy(), np.broadcast_to(table[4:7], (2, 3, d)))
    assert list(layer.parameters()) == [] and "table" in layer.state_dict()


@pytest.mark.parametrize("kind", [nn.SinusoidalPositionalEncoding, nn.LearnedPositionalEmbedding])
def test_positions_past_max_len_raise(kind):
    layer = kind(4, max_len=5)
    layer(minitx.zeros(1, 5, 4))
    with pytest.raises(ValueError, match="max_len 5"):
        layer(minitx.zeros(1, 3, 4), offset=3)


def _reference_attention(layer, x, memory, mask):
    """NumPy multi-head attention from the module's weights (mask True = may attend)."""
    d, h = layer.d_model, layer.num_heads
    w = {name: p.numpy() for name, p in layer.named_parameters()}
    if layer.self_attention:
        qkv = x @ w["qkv.weight"].T + w["qkv.bias"]
        q, k, v = qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]
    else:
        q = x @ w["q.weight"].T + w["q.bias"]
        kv = memory @ w["kv.weight"].T + w["kv.bias"]
        k, v = kv[..., :d], kv[..., d:]

    def heads(t):
        return t.reshape(t.shape[0], t.shape[1], h, d // h).transpose(0, 2, 1, 3)

    q, k, v = heads(q), heads(k), heads(v)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d // h)
    scores = np.where(mask, scores, -np.inf)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out = (p @ v).transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[1], d)
    return out @ w["out.weight"].T + w["out.bias"], p


@pytest.mark.parametrize("self_attention", [True, False])
def test_multi_head_attention_matches_numpy(self_attention):
    layer = nn.MultiHeadAttention(8, 2, self_attention=self_attention).to(dtype="float64")
    x, memory = rand(2, 3, 8, seed=1), rand(2, 5, 8, seed=2)
    lk = 3 if self_attention else 5
    mask = np.random.default_rng(3).random((2, 1, 3, lk)) < 0.7
    mask[..., 0] = True
    y, weights = layer(x, None if self_attention else memory, mask=mask, return_weights=True)
    expected, p = _reference_attention(layer, x.numpy(), memory.numpy(), mask)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(weights.numpy(), p, rtol=1e-10, atol=1e-12)


def test_multi_head_attention_argument_errors():
    with pytest.raises(ValueError, match="not divisible"):
        nn.MultiHeadAttention(6, 4)
    with pytest.raises(ValueError, match="needs memory"):
        nn.MultiHeadAttention(4, 2, self_attention=False)(minitx.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="activation"):
        FeedForward(4, 8, activation="tanh")


# ---------------------------------------------------------------- gradients


def _dropout_train(layer):
    def call(x):
        minitx.manual_seed(5)  # the same mask at every evaluation of the finite differences
        return layer(x)
    return call


def test_dropout_gradients():
    layer = nn.Dropout(0.4)
    x = rand(3, 4)
    call = _dropout_train(layer)
    assert not np.array_equal(call(x).numpy(), x.numpy())  # some entries are really dropped
    np.testing.assert_array_equal(call(x).numpy(), call(x).numpy())
    assert gradcheck(call, x)
    layer.eval()
    assert gradcheck(layer, x)


def direct(module):
    return module


# name: (make the module, make the function of the inputs to check, input shapes)
MODULE_CASES = {
    "linear": (lambda: nn.Linear(3, 2), direct, [(2, 3)]),
    "linear_no_bias": (lambda: nn.Linear(3, 2, bias=False), direct, [(4, 3)]),
    "layer_norm": (lambda: nn.LayerNorm(4), direct, [(2, 3, 4)]),
    "learned_positions": (lambda: nn.LearnedPositionalEmbedding(3, max_len=6),
                          lambda m: lambda x: m(x, offset=2), [(2, 3, 3)]),
    "self_attention": (lambda: nn.MultiHeadAttention(4, 2),
                       lambda m: lambda x: m(x, mask=np.array([True, True, False])), [(2, 3, 4)]),
    "causal_self_attention": (lambda: nn.MultiHeadAttention(4, 2), lambda m: lambda x: m(x, causal=True),
                              [(1, 3, 4)]),
    "cross_attention": (lambda: nn.MultiHeadAttention(4, 2, self_attention=False),
                        lambda m: lambda x, mem: m(x, mem, mask=np.array([True, False, True, True])),
                        [(2, 2, 4), (2, 4, 4)]),
    "feed_forward_relu": (lambda: FeedForward(4, 6, dropout=0.0), direct, [(2, 3, 4)]),
    "feed_forward_gelu": (lambda: FeedForward(4, 6, dropout=0.0, activation="gelu"), direct,
                          [(2, 3, 4)]),
}


@pytest.mark.parametrize("name", sorted(MODULE_CASES))
def test_module_gradients(name):
    make, call, shapes = MODULE_CASES[name]
    minitx.manual_seed(1)
    module = make()
    inputs = [rand(*shape, seed=k) for k, shape in enumerate(shapes)]
    check_module_grads(module, call(module), *inputs)


def test_embedding_gradient_with_respect_to_weight():
    minitx.manual_seed(0)
    layer = nn.Embedding(5, 3)  # (the padding row's gradient is zero by design: tested above)
    ids = np.array([[1, 3, 3], [0, 4, 1]])  # repeated ids: their gradients add up
    check_module_grads(layer, lambda: layer(ids) * minitx.tensor(np.arange(1.0, 19).reshape(2, 3, 3)))


def test_sinusoidal_encoding_gradient_is_the_identity():
    layer = nn.SinusoidalPositionalEncoding(4, max_len=8).to(dtype="float64")
    assert layer.table.dtype == np.float64
    assert gradcheck(lambda x: layer(x, offset=1), rand(2, 3, 4))


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_transformer_layer_gradients(kind, norm_first):
    minitx.manual_seed(2)
    args = dict(d_model=4, num_heads=2, d_ff=6, dropout=0.0, attention_dropout=0.0, norm_first=norm_first,
                activation="gelu")
    src_mask = np.array([True, True, True, False])[None, None, None, :]
    if kind == "encoder":
        layer = EncoderLayer(**args)
        check_module_grads(layer, lambda x: layer(x, src_mask), rand(2, 4, 4))
    else:
        layer = DecoderLayer(**args)
        check_module_grads(layer, lambda x, memory: layer(x, memory, src_mask), rand(2, 3, 4), rand(2, 4, 4, seed=1))



@pytest.mark.parametrize("activation_dropout, expected", [(None, 0.3), (0.0, 0.0), (0.1, 0.1)])
def test_each_dropout_of_the_transformer_goes_where_it_is_named(activation_dropout, expected):
    """dropout on the residual branches; activation_dropout (None: dropout) on the feed-forward's
    hidden activations; attention_dropout on the attention weights, each in every layer."""
    model = nn.Transformer(20, 20, d_model=8, num_heads=2, num_encoder_layers=2, num_decoder_layers=2, d_ff=16,
                           dropout=0.3, attention_dropout=0.05, activation_dropout=activation_dropout)
    layers = [*model.encoder_layers, *model.decoder_layers]
    assert [layer.feed_forward.linear1.dropout for layer in layers] == [expected] * 4
    assert [layer.dropout.p for layer in layers] == [0.3] * 4
    assert {attn.dropout for layer in layers for attn in (layer.self_attn, getattr(layer, "cross_attn", None))
            if attn is not None} == {0.05}
    assert (model.config["dropout"], model.config["activation_dropout"]) == (0.3, expected)
