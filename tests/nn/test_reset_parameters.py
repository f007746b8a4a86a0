"""reset_parameters() on the layers PyTorch has it on (and MultiheadAttention's _reset_parameters):
it draws the parameters again as the constructor draws them, into the same Parameter objects, and
the constructors (which draw by calling it) draw what they always drew, pinned by a digest of
seeded layers and models: recorded runs start from those numbers."""
import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest

import minitx
from minitx import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from torch_reference import import_torch  # noqa: E402

torch = import_torch()

# name -> a layer of each kind, with options that change what is drawn
LAYERS = {
    "Linear": lambda: nn.Linear(5, 4),
    "Linear no bias": lambda: nn.Linear(5, 4, bias=False),
    "Linear of 0 features": lambda: nn.Linear(0, 3),
    "Bilinear": lambda: nn.Bilinear(3, 2, 4),
    "Embedding": lambda: nn.Embedding(7, 3, padding_idx=2),
    "EmbeddingBag": lambda: nn.EmbeddingBag(7, 3, mode="max", padding_idx=-1),
    "LayerNorm": lambda: nn.LayerNorm((3, 4)),
    "RMSNorm": lambda: nn.RMSNorm(4),
    "GroupNorm": lambda: nn.GroupNorm(2, 4),
    "BatchNorm1d": lambda: nn.BatchNorm1d(3),
    "BatchNorm2d": lambda: nn.BatchNorm2d(3, affine=False),
    "InstanceNorm2d": lambda: nn.InstanceNorm2d(3, affine=True),
    "PReLU": lambda: nn.PReLU(3, init=0.1),
    "Conv1d": lambda: nn.Conv1d(4, 6, 3, groups=2),
    "Conv2d": lambda: nn.Conv2d(3, 2, (2, 3), bias=False),
    "Conv3d": lambda: nn.Conv3d(2, 2, 2),
    "ConvTranspose1d": lambda: nn.ConvTranspose1d(4, 6, 3, groups=2),
    "ConvTranspose2d": lambda: nn.ConvTranspose2d(3, 2, 2),
    "ConvTranspose3d": lambda: nn.ConvTranspose3d(2, 3, 2),
    "RNN": lambda: nn.RNN(3, 4, num_layers=2, bidirectional=True),
    "LSTM": lambda: nn.LSTM(3, 4, bias=False),
    "GRU": lambda: nn.GRU(3, 4, num_layers=2),
    "RNNCell": lambda: nn.RNNCell(3, 4, nonlinearity="relu"),
    "LSTMCell": lambda: nn.LSTMCell(3, 4),
    "GRUCell": lambda: nn.GRUCell(3, 4, bias=False),
}
# the MultiheadAttention layers and the models, in the digest too
MODELS = {
    "MultiheadAttention": lambda: nn.MultiheadAttention(8, 2),
    "MultiheadAttention kdim vdim": lambda: nn.MultiheadAttention(8, 2, kdim=3, vdim=5, bias=False),
    "TransformerEncoder": lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2, norm=nn.LayerNorm(8)),
    "TransformerDecoderLayer": lambda: nn.TransformerDecoderLayer(8, 2, 16),
    "seed004-small": lambda: nn.Transformer.from_preset("seed004-small", 50, 60),
    "shared and tied": lambda: nn.Transformer(30, 30, d_model=16, num_heads=2, num_encoder_layers=1,
                                              num_decoder_layers=1, d_ff=32, share_embeddings=True,
                                              tie_output=True, embed_init="normal"),
    "EncoderModel": lambda: nn.MaskedLanguageModel(nn.EncoderModel(40, d_model=16, num_heads=2, num_layers=2,
                                                                   d_ff=32, positional="learned")),
}
# sha256 of every array above, each built right after manual_seed(i) for the i-th, and of the next
# draws after each constructor (the generator's position): as the constructors drew before they
# drew through reset_parameters
DIGEST = "482e1f1e4a9fdeb6a192145c0451e3720c929126affa2319ee0e25786f66c653"


def _state(module):
    return {name: np.array(value) for name, value in module.state_dict().items()}


def test_the_constructors_draw_what_they_always_drew():
    digest = hashlib.sha256()
    for i, build in enumerate([*LAYERS.values(), *MODELS.values()]):
        minitx.manual_seed(i)
        for name, array in _state(build()).items():
            digest.update(name.encode() + array.dtype.str.encode() + str(array.shape).encode() + array.tobytes())
        digest.update(minitx.rand(4, dtype="float64").numpy().tobytes())
    assert digest.hexdigest() == DIGEST


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_reset_parameters_draws_again_as_the_constructor_into_the_same_parameters(name):
    minitx.manual_seed(3)
    layer = LAYERS[name]()
    built = _state(layer)
    parameters = list(layer.parameters())
    with minitx.no_grad():
        for tensor in [*parameters, *layer.buffers()]:
            tensor.fill_(7)
    minitx.manual_seed(3)
    assert layer.reset_parameters() is None
    assert all(a is b for a, b in zip(layer.parameters(), parameters))
    again = _state(layer)
    assert again.keys() == built.keys()
    for key in built:
        np.testing.assert_array_equal(again[key], built[key], err_msg=key)


def test_pytorchs_layers_with_reset_parameters_have_it_here_too():
    """Every torch.nn layer with reset_parameters that minitx.nn has (MultiheadAttention's is
    PyTorch's private _reset_parameters, there and here)."""
    shared = [name for name in dir(torch.nn) if isinstance(getattr(torch.nn, name), type)
              and hasattr(getattr(torch.nn, name), "reset_parameters") and hasattr(nn, name)]
    lazy = {f"Lazy{kind}{d}d" for kind in ("Conv", "ConvTranspose", "BatchNorm", "InstanceNorm") for d in (1, 2, 3)}
    assert sorted(shared) == sorted({n.split()[0] for n in LAYERS} | {"InstanceNorm1d", "InstanceNorm3d", "BatchNorm3d"}
                                    | lazy | {"LazyLinear", "AdaptiveLogSoftmaxWithLoss", "RNNBase", "RNNCellBase"})
    assert all(hasattr(getattr(nn, name), "reset_parameters") for name in shared)
    assert hasattr(torch.nn.MultiheadAttention, "_reset_parameters")


@pytest.mark.parametrize("kwargs", [{}, {"kdim": 3, "vdim": 5, "bias": False}])
def test_multihead_attentions_reset_draws_the_projections_and_zeroes_the_biases_as_pytorchs(kwargs):
    """PyTorch's _reset_parameters: xavier-uniform in-projections (the constructor's first draws) and
    zero biases; out_proj's weight is left as it is, in both libraries."""
    minitx.manual_seed(5)
    ours = nn.MultiheadAttention(8, 2, **kwargs)
    built = _state(ours)
    theirs = torch.nn.MultiheadAttention(8, 2, **kwargs)
    for module in (ours, theirs):
        with (minitx.no_grad() if module is ours else torch.no_grad()):
            for p in module.parameters():
                p.fill_(7)
    minitx.manual_seed(5)
    ours._reset_parameters()
    theirs._reset_parameters()
    again, theirs_now = _state(ours), {k: v.numpy() for k, v in theirs.state_dict().items()}
    assert again.keys() == theirs_now.keys()
    for key in again:
        if key == "out_proj.weight":
            assert (again[key] == 7).all() and (theirs_now[key] == 7).all()
        elif "bias" in key:
            assert not again[key].any() and not theirs_now[key].any()
        else:
            np.testing.assert_array_equal(again[key], built[key], err_msg=key)
            bound = np.sqrt(6 / sum(again[key].shape))  # xavier's, as PyTorch's
            assert np.abs(again[key]).max() <= bound and np.abs(theirs_now[key]).max() <= bound


def test_batch_norm_resets_its_running_statistics_as_pytorchs():
    ours, theirs = nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3, dtype=torch.float64)
    x = np.random.default_rng(0).standard_normal((8, 3)) * 3 + 1
    ours(minitx.tensor(x, dtype="float32"))
    theirs(torch.tensor(x))
    assert ours.num_batches_tracked.item() == 1 and ours.running_mean.numpy().any()
    with minitx.no_grad():
        ours.weight.fill_(2.0)
    for module in (ours, theirs):
        module.reset_running_stats()
    assert ours.weight.numpy().tolist() == [2.0] * 3  # the statistics only
    for module in (ours, theirs):
        module.reset_parameters()
    for key, value in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[key], value.numpy(), err_msg=key)
