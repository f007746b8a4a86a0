"""nn.MultiheadAttention, the Transformer layers and their stacks against PyTorch's: the same
state_dict loaded into both, the same inputs, and the outputs, the inputs' gradients and every
parameter's gradient compared (float32 within 1e-5, float64 within 1e-10), dropout 0."""
import sys
from pathlib import Path

import numpy as np
import pytest

import minitx
from minitx import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from torch_reference import import_torch  # noqa: E402

torch = import_torch()  # skipped without PyTorch, an error in CI (where it is installed)

# the tutorials' float causal mask beside boolean padding masks: PyTorch warns that the mix is deprecated
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")

TOLERANCE = {"float32": 1e-5, "float64": 1e-10}
E, HEADS, FF = 8, 2, 16


def _close(ours, theirs, dtype, what):
    np.testing.assert_allclose(ours, theirs, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype], err_msg=what)


def _compare(ours, theirs, inputs, dtype, call=lambda m, *xs, **kw: m(*xs, **kw), extra=None):
    """Load theirs' state_dict into ours, run both on ``inputs`` (arrays; gradients taken) and
    compare the output, the inputs' gradients and the parameters' gradients. ``call`` runs a
    module on its inputs (plus ``extra``: (ours', theirs') other arguments, masks say)."""
    theirs = theirs.to(getattr(torch, dtype))
    ours.to(dtype=dtype).load_state_dict(theirs.state_dict())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours_in = [minitx.tensor(a, dtype=dtype, requires_grad=True) for a in inputs]
    theirs_in = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in inputs]
    out = call(ours, *ours_in, **(extra[0] if extra else {}))
    out_t = call(theirs, *theirs_in, **(extra[1] if extra else {}))
    out, out_t = (out[0], out_t[0]) if isinstance(out, tuple) else (out, out_t)
    _close(out.numpy(), out_t.detach().numpy(), dtype, "output")
    dy = np.random.default_rng(0).standard_normal(out.shape)
    out.backward(minitx.tensor(dy, dtype=dtype))
    out_t.backward(torch.tensor(dy, dtype=getattr(torch, dtype)))
    for i, (x, x_t) in enumerate(zip(ours_in, theirs_in)):
        _close(x.grad.numpy(), x_t.grad.numpy(), dtype, f"input {i}'s gradient")
    theirs_grads = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        _close(p.grad.numpy(), theirs_grads[name].grad.numpy(), dtype, f"{name}'s gradient")


def _arrays(*shapes, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in shapes]


def _layout(batch_first, n, length, features):
    return (n, length, features) if batch_first else (length, n, features)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("cross", [False, True])
def test_multihead_attention_matches_pytorch(cross, batch_first, dtype):
    ours = nn.MultiheadAttention(E, HEADS, batch_first=batch_first)
    theirs = torch.nn.MultiheadAttention(E, HEADS, batch_first=batch_first)
    if cross:  # queries over another sequence of another length
        inputs = _arrays(_layout(batch_first, 3, 4, E), _layout(batch_first, 3, 6, E), _layout(batch_first, 3, 6, E))
        _compare(ours, theirs, inputs, dtype)
    else:  # self-attention: one tensor is query, key and value
        _compare(ours, theirs, _arrays(_layout(batch_first, 3, 5, E)), dtype, call=lambda m, x: m(x, x, x))


def _masks(kind, n, lq, lk, heads=HEADS):
    """(attn_mask, key_padding_mask) as arrays, PyTorch's convention (boolean: True = masked out)."""
    rng = np.random.default_rng(2)
    padding = np.zeros((n, lk), dtype=bool)
    padding[0, -2:] = padding[2, -1] = True
    if kind == "key_padding":
        return None, padding
    if kind == "bool_2d":
        return np.triu(np.ones((lq, lk), dtype=bool), k=1), None
    if kind == "bool_3d_and_padding":
        blocked = rng.random((n * heads, lq, lk)) < 0.3
        blocked[:, :, 0] = False  # every query sees at least one key (PyTorch: NaN otherwise)
        return blocked, padding
    if kind == "float":
        return rng.standard_normal((lq, lk)), np.where(padding, -np.inf, 0.0)
    raise AssertionError(kind)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["key_padding", "bool_2d", "bool_3d_and_padding", "float"])
def test_multihead_attention_masks_match_pytorch(kind, dtype):
    n, lq, lk = 3, 4, 5
    attn_mask, padding = _masks(kind, n, lq, lk)
    # float masks in the inputs' dtype (PyTorch requires it); boolean ones as they are
    ours_masks = {k: None if v is None else minitx.tensor(v, dtype=None if v.dtype == bool else dtype)
                  for k, v in (("attn_mask", attn_mask), ("key_padding_mask", padding))}
    theirs_masks = {k: None if v is None else torch.tensor(v, dtype=torch.bool if v.dtype == bool else
                                                           getattr(torch, dtype))
                    for k, v in (("attn_mask", attn_mask), ("key_padding_mask", padding))}
    inputs = _arrays((n, lq, E), (n, lk, E), (n, lk, E))
    _compare(nn.MultiheadAttention(E, HEADS, batch_first=True), torch.nn.MultiheadAttention(E, HEADS, batch_first=True),
             inputs, dtype, extra=(ours_masks, theirs_masks))


@pytest.mark.parametrize("average", [True, False])
def test_attention_weights_match_pytorch(average):
    ours, theirs = nn.MultiheadAttention(E, HEADS), torch.nn.MultiheadAttention(E, HEADS).double()
    ours.double().load_state_dict(theirs.state_dict())
    query, key = _arrays((4, 3, E), (6, 3, E))
    attn_mask, padding = _masks("bool_3d_and_padding", 3, 4, 6)
    _, weights = ours(*map(minitx.tensor, (query, key, key)), key_padding_mask=padding, attn_mask=attn_mask,
                      average_attn_weights=average)
    _, weights_t = theirs(*map(torch.tensor, (query, key, key)), key_padding_mask=torch.tensor(padding),
                          attn_mask=torch.tensor(attn_mask), average_attn_weights=average)
    assert weights.shape == ((3, 4, 6) if average else (3, HEADS, 4, 6))
    np.testing.assert_allclose(weights.numpy(), weights_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert ours(*map(minitx.tensor, (query, key, key)), need_weights=False)[1] is None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_keys_and_values_of_other_sizes_match_pytorch(dtype):
    ours = nn.MultiheadAttention(E, HEADS, kdim=5, vdim=3)
    theirs = torch.nn.MultiheadAttention(E, HEADS, kdim=5, vdim=3)
    assert [name for name, _ in ours.named_parameters()] == ["q_proj_weight", "k_proj_weight", "v_proj_weight",
                                                              "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    _compare(ours, theirs, _arrays((4, 2, E), (6, 2, 5), (6, 2, 3)), dtype)


def test_unbatched_inputs_match_pytorch():
    """[L, E] inputs (one sequence), with an [S] key padding mask and an [h, L, S] attn_mask."""
    padding, attn_mask = np.array([False, False, False, True, True]), np.triu(np.ones((HEADS, 4, 5), bool), k=2)
    _compare(nn.MultiheadAttention(E, HEADS), torch.nn.MultiheadAttention(E, HEADS), _arrays((4, E), (5, E), (5, E)),
             "float64", extra=(dict(key_padding_mask=padding, attn_mask=attn_mask),
                               dict(key_padding_mask=torch.tensor(padding), attn_mask=torch.tensor(attn_mask))))


def test_initialization_is_pytorchs():
    """xavier-uniform projections (bound sqrt(6 / (fan_in + fan_out))), zero biases."""
    m = nn.MultiheadAttention(64, 4)
    bound = np.sqrt(6 / (64 + 3 * 64))
    w = m.in_proj_weight.numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert not m.in_proj_bias.numpy().any() and not m.out_proj.bias.numpy().any()


def _pair(kind, norm_first, activation):
    ours = getattr(nn, kind)(E, HEADS, FF, dropout=0.0, activation=activation, norm_first=norm_first)
    theirs = getattr(torch.nn, kind)(E, HEADS, FF, dropout=0.0, activation=activation, norm_first=norm_first)
    return ours, theirs


def _decoder_masks(lt, ls, n):
    """A causal target mask and padding of both sequences, for ours and for theirs."""
    causal = nn.Transformer.generate_square_subsequent_mask(lt).numpy()
    tgt_padding, memory_padding = np.zeros((n, lt), bool), np.zeros((n, ls), bool)
    tgt_padding[1, -1] = memory_padding[0, -2:] = True
    arrays = dict(tgt_mask=causal, tgt_key_padding_mask=tgt_padding, memory_key_padding_mask=memory_padding)
    return arrays, {k: torch.tensor(v) for k, v in arrays.items()}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_matches_pytorch(norm_first, activation, dtype):
    ours, theirs = _pair("TransformerEncoderLayer", norm_first, activation)
    padding = np.zeros((2, 5), bool)
    padding[0, -1] = True
    _compare(ours, theirs, _arrays((5, 2, E)), dtype,
             extra=(dict(src_key_padding_mask=padding), dict(src_key_padding_mask=torch.tensor(padding))))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_pytorch(norm_first, activation, dtype):
    ours, theirs = _pair("TransformerDecoderLayer", norm_first, activation)
    _compare(ours, theirs, _arrays((4, 2, E), (5, 2, E)), dtype, extra=_decoder_masks(4, 5, 2))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_stacks_with_a_final_norm_match_pytorch(norm_first, dtype):
    kwargs = dict(dropout=0.0, norm_first=norm_first, batch_first=True, activation="gelu")
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, HEADS, FF, **kwargs), 2, norm=nn.LayerNorm(E))
    encoder_t = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(E, HEADS, FF, **kwargs), 2,
                                            norm=torch.nn.LayerNorm(E), enable_nested_tensor=False)
    causal = nn.Transformer.generate_square_subsequent_mask(5)
    _compare(encoder, encoder_t, _arrays((2, 5, E)), dtype,
             extra=(dict(mask=causal, is_causal=True), dict(mask=torch.tensor(causal.numpy()), is_causal=True)))
    decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(E, HEADS, FF, **kwargs), 2, norm=nn.LayerNorm(E))
    decoder_t = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(E, HEADS, FF, **kwargs), 2,
                                            norm=torch.nn.LayerNorm(E))
    _compare(decoder, decoder_t, _arrays((2, 4, E), (2, 5, E)), dtype, extra=_decoder_masks(4, 5, 2))


def test_stack_layers_are_independent_copies():
    layer = nn.TransformerEncoderLayer(E, HEADS, FF)
    stack = nn.TransformerEncoder(layer, 3)
    weights = [stack.layers[i].linear1.weight for i in range(3)] + [layer.linear1.weight]
    assert len({id(w) for w in weights}) == 4
    np.testing.assert_array_equal(weights[0].numpy(), weights[3].numpy())  # copies of one layer, as in PyTorch


def test_a_layer_as_activation():
    """A callable activation (here a layer) is used as it is."""
    _compare(nn.TransformerEncoderLayer(E, HEADS, FF, dropout=0.0, activation=nn.Tanh()),
             torch.nn.TransformerEncoderLayer(E, HEADS, FF, dropout=0.0, activation=torch.nn.Tanh()),
             _arrays((3, 2, E)), "float64")


def test_fully_masked_rows_give_zero_attention():
    """A query that may see no key attends to nothing: out_proj's bias (PyTorch: the same without
    weights, NaN with them)."""
    m = nn.MultiheadAttention(E, HEADS, batch_first=True)
    m.out_proj.bias.data[:] = 0.5
    x = minitx.tensor(_arrays((1, 3, E))[0], dtype="float32")
    blocked = np.zeros((3, 3), bool)
    blocked[1] = True
    for need_weights in (False, True):
        out, _ = m(x, x, x, attn_mask=blocked, need_weights=need_weights)
        np.testing.assert_array_equal(out.numpy()[0, 1], 0.5)


def test_dropout_is_reproducible_under_manual_seed():
    layer = nn.TransformerEncoderLayer(E, HEADS, FF, dropout=0.3)  # dropout in attention, FF and residuals
    x = minitx.tensor(_arrays((5, 2, E))[0], dtype="float32")
    outputs = []
    for seed in (7, 7, 8):
        minitx.manual_seed(seed)
        outputs.append(layer(x).numpy())
    np.testing.assert_array_equal(outputs[0], outputs[1])
    assert not np.allclose(outputs[0], outputs[2])
    layer.eval()
    np.testing.assert_array_equal(layer(x).numpy(), layer(x).numpy())


@pytest.mark.parametrize("make, message", [
    (lambda: nn.MultiheadAttention(E, HEADS, add_bias_kv=True), "MultiheadAttention: add_bias_kv"),
    (lambda: nn.MultiheadAttention(E, HEADS, add_zero_attn=True), "MultiheadAttention: add_bias_kv and add_zero"),
    (lambda: nn.MultiheadAttention(E, 3), "MultiheadAttention: embed_dim 8 is not divisible by num_heads 3"),
    (lambda: nn.MultiheadAttention(E, HEADS, dropout=1.5), "MultiheadAttention: dropout must be in"),
    (lambda: nn.TransformerEncoderLayer(E, HEADS, activation="tanh"), "TransformerEncoderLayer: activation must be"),
    (lambda: nn.TransformerDecoderLayer(E, HEADS, activation=3), "TransformerDecoderLayer: activation must be"),
    (lambda: nn.TransformerEncoder(2, nn.TransformerEncoderLayer(E, HEADS)), "TransformerEncoder: the first argument"),
    (lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(E, HEADS), -1), "TransformerDecoder: num_layers"),
])
def test_bad_arguments_name_the_class(make, message):
    with pytest.raises((ValueError, TypeError, NotImplementedError), match=message):
        make()


@pytest.mark.parametrize("call, message", [
    (lambda m, x: m(x, x, x, is_causal=True), "is_causal=True needs the causal attn_mask"),
    (lambda m, x: m(x, x, x, attn_mask=np.zeros((3, 4), bool)), r"attn_mask must be \[L, S\] = \(4, 4\)"),
    (lambda m, x: m(x, x, x, key_padding_mask=np.zeros((4, 2), bool)), r"key_padding_mask must be \[N, S\] = \(2, 4\)"),
    (lambda m, x: m(x, x[..., :3], x), "query, key and value must be"),
])
def test_bad_inputs_name_the_class(call, message):
    m = nn.MultiheadAttention(E, HEADS)
    with pytest.raises(ValueError, match=f"MultiheadAttention: {message}"):
        call(m, minitx.tensor(_arrays((4, 2, E))[0], dtype="float32"))


def test_an_integer_mask_is_refused_in_the_modules_own_terms():
    """PyTorch's old byte masks: refused as PyTorch does, saying MultiheadAttention's convention
    (True = not allowed), not scaled_dot_product_attention's (True = may attend)."""
    mha = nn.MultiheadAttention(E, HEADS)
    x = minitx.tensor(_arrays((4, 2, E))[0], dtype="float32")
    with pytest.raises(TypeError, match=r"MultiheadAttention: attn_mask must be boolean \(True = not allowed\) or "
                                        r"floating \(added to the scores\), got dtype uint8"):
        mha(x, x, x, attn_mask=minitx.tensor(np.triu(np.ones((4, 4), np.uint8), 1)))


@pytest.mark.parametrize("name", ["attn_mask", "key_padding_mask"])
def test_a_mask_of_another_kind_is_named_by_its_argument(name):
    """Of the two masks, the error names the one that is neither boolean nor floating (as PyTorch's
    'only bool and floating types of key_padding_mask are supported')."""
    mha = nn.MultiheadAttention(E, HEADS)
    x = minitx.tensor(_arrays((4, 2, E))[0], dtype="float32")
    masks = dict(attn_mask=np.zeros((4, 4), bool), key_padding_mask=np.zeros((2, 4), bool))
    masks[name] = masks[name].astype(np.int64)
    with pytest.raises(TypeError, match=f"MultiheadAttention: {name} must be boolean .*, got dtype int64"):
        mha(x, x, x, **masks)
