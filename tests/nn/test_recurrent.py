"""RNN, LSTM, GRU and their cells (minitx/nn/recurrent.py) against PyTorch's, with PyTorch's own
weights loaded by their names: outputs, last states, and the gradients of the input, the first
state and every weight; float64 gradients through time by finite differences; the errors."""
import numpy as np
import pytest

import minitx
import minitx.nn as nn
from minitx.testing import check_gradients, leaf

torch = pytest.importorskip("torch")


def _pair(name, *args, **kwargs):
    """(minitx's module, PyTorch's with its float64 weights), the same numbers in both."""
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = getattr(nn, name)(*args, **kwargs).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def _flat(out):
    """The tensors of a module's result: outputs and states, LSTM's pair opened."""
    if isinstance(out, (tuple, list)):
        return [t for part in out for t in _flat(part)]
    return [out]


def _compare(ours, theirs, arrays):
    """Run both on the same arrays (each requiring grad), backward through every result with the
    same random weights; values and every gradient must agree."""
    mine = [leaf(a) for a in arrays]
    their_inputs = [torch.tensor(a, requires_grad=True) for a in arrays]
    pack = (lambda xs: (xs[0], (xs[1], xs[2]))) if len(arrays) == 3 else (lambda xs: tuple(xs))
    ours_out, theirs_out = _flat(ours(*pack(mine))), _flat(theirs(*pack(their_inputs)))
    rng = np.random.default_rng(5)
    weights = [rng.standard_normal(t.shape) for t in ours_out]
    sum((o * minitx.tensor(w)).sum() for o, w in zip(ours_out, weights)).backward()
    sum((t * torch.tensor(w)).sum() for t, w in zip(theirs_out, weights)).backward()
    for o, t in zip(ours_out, theirs_out):
        np.testing.assert_allclose(o.numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)
    for m, t in zip(mine, their_inputs):
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs_params[name].grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=name)


OPTIONS = [{}, {"num_layers": 2}, {"bidirectional": True}, {"num_layers": 2, "bidirectional": True, "batch_first": True},
           {"bias": False}]


@pytest.mark.parametrize("options", OPTIONS, ids=repr)
@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_sequence_layers_match_pytorch(name, options):
    ours, theirs = _pair(name, 3, 4, **options)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 3) if options.get("batch_first") else (5, 2, 3))
    _compare(ours, theirs, [x])
    layers = options.get("num_layers", 1) * (2 if options.get("bidirectional") else 1)
    states = [rng.standard_normal((layers, 2, 4)) for _ in range(2 if name == "LSTM" else 1)]
    _compare(ours, theirs, [x] + states)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_one_sequence_without_a_batch_and_relu_match_pytorch(name):
    options = {"nonlinearity": "relu"} if name == "RNN" else {}
    ours, theirs = _pair(name, 3, 4, num_layers=2, **options)
    _compare(ours, theirs, [np.random.default_rng(2).standard_normal((6, 3))])


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_pytorch(name, batched):
    ours, theirs = _pair(name, 3, 4)
    rng = np.random.default_rng(3)
    shape = (2,) if batched else ()
    x, states = rng.standard_normal(shape + (3,)), [rng.standard_normal(shape + (4,))]
    if name == "LSTMCell":
        states.append(rng.standard_normal(shape + (4,)))
    _compare(ours, theirs, [x])
    _compare(ours, theirs, [x] + states)


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_gradients_through_time_agree_with_finite_differences(name):
    minitx.manual_seed(0)
    layer = getattr(nn, name)(2, 3, num_layers=2, bidirectional=True).double()
    x = leaf(np.random.default_rng(4).standard_normal((4, 2, 2)))
    assert check_gradients(lambda t: layer(t)[0], x)
    weight = layer.weight_hh_l1_reverse
    assert check_gradients(lambda w: _with(layer, "weight_hh_l1_reverse", w, x), leaf(weight.numpy()))


def _with(layer, name, value, x):
    """layer(x)'s outputs with one of its parameters replaced by ``value`` (for gradcheck)."""
    kept = layer._parameters[name]
    layer._parameters[name] = value
    try:
        return layer(x)[0]
    finally:
        layer._parameters[name] = kept


def test_dropout_between_layers_only_while_training():
    minitx.manual_seed(0)
    layer = nn.GRU(3, 4, num_layers=2, dropout=0.5).double()
    x = minitx.tensor(np.random.default_rng(5).standard_normal((5, 2, 3)))
    evaluated = layer.eval()(x)[0].numpy()
    trained = layer.train()(x)[0].numpy()
    assert not np.allclose(evaluated, trained)
    ours, theirs = _pair("GRU", 3, 4, num_layers=2, dropout=0.5)
    ours.eval(), theirs.eval()
    _compare(ours, theirs, [x.numpy()])


def test_recurrent_layers_name_what_is_wrong():
    with pytest.raises(ValueError, match=r"LSTM: input must be \[L, N, 3\] .* got \(5, 2, 4\)"):
        nn.LSTM(3, 4)(minitx.ones(5, 2, 4))
    with pytest.raises(ValueError, match=r"GRU: the state must be \[2, 2, 4\] .* got \(1, 2, 4\)"):
        nn.GRU(3, 4, num_layers=2)(minitx.ones(5, 2, 3), minitx.ones(1, 2, 4))
    with pytest.raises(ValueError, match=r"LSTM: the state must be a pair \(h_0, c_0\)"):
        nn.LSTM(3, 4)(minitx.ones(5, 2, 3), minitx.ones(1, 2, 4))
    with pytest.raises(ValueError, match="RNN: nonlinearity must be 'tanh' or 'relu', got 'gelu'"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match=r"LSTMCell: state must be \[2, 4\] for this input, got \(3, 4\)"):
        nn.LSTMCell(3, 4)(minitx.ones(2, 3), (minitx.ones(3, 4), minitx.ones(3, 4)))


@pytest.mark.parametrize("dropout, error, got", [("0.1", TypeError, r"'0\.1' \(str\)"), (True, TypeError, r"True \(bool\)"),
                                                 (None, TypeError, r"None \(NoneType\)")])
def test_a_recurrent_dropout_that_is_no_number_is_named(dropout, error, got):
    """(A string raised Python's "'<=' not supported between instances of 'int' and 'str'".)"""
    with pytest.raises(error, match=rf"^LSTM: dropout must be a number in \[0, 1\), got {got}$"):
        nn.LSTM(3, 4, num_layers=2, dropout=dropout)
    with pytest.raises(ValueError, match=r"^GRU: dropout must be in \[0, 1\), got 1\.0$"):
        nn.GRU(3, 4, num_layers=2, dropout=1.0)


def test_an_lstm_state_with_one_part_none_takes_zeros_for_it_as_its_cell_does():
    minitx.manual_seed(0)
    layer, cell = nn.LSTM(3, 4, num_layers=2).double(), nn.LSTMCell(3, 4).double()
    x = minitx.tensor(np.random.default_rng(6).standard_normal((5, 2, 3)))
    h0 = minitx.tensor(np.random.default_rng(7).standard_normal((2, 2, 4)))
    zeros = minitx.zeros(2, 2, 4, dtype="float64")
    for state, full in [((h0, None), (h0, zeros)), ((None, h0), (zeros, h0))]:
        for got, want in zip(layer(x, state), layer(x, full)):
            want = want if isinstance(want, tuple) else (want,)
            for a, b in zip(got if isinstance(got, tuple) else (got,), want):
                np.testing.assert_array_equal(a.numpy(), b.numpy())
    for got, want in zip(cell(x[0], (h0[0], None)), cell(x[0], (h0[0], zeros[0]))):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_a_sequence_of_length_zero_has_no_outputs_and_ends_in_its_first_state(name):
    layer = getattr(nn, name)(3, 4, num_layers=2, bidirectional=True).double()
    h0 = minitx.tensor(np.random.default_rng(8).standard_normal((4, 2, 4)))
    outputs, last = layer(minitx.zeros(0, 2, 3, dtype="float64"), (h0, h0) if name == "LSTM" else h0)
    assert outputs.shape == (0, 2, 8)
    for state in last if name == "LSTM" else (last,):
        np.testing.assert_array_equal(state.numpy(), h0.numpy())


def test_a_pytorch_state_dict_of_tensors_loads_as_it_is():
    """No .numpy() needed: PyTorch's tensors are read through DLPack (minitx.interop)."""
    theirs = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    ours = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    assert ours.load_state_dict(theirs.state_dict()) == ([], [])
    x = np.random.default_rng(6).standard_normal((5, 2, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(minitx.tensor(x))[0].numpy(), theirs(torch.from_numpy(x))[0].detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_a_bfloat16_pytorch_state_dict_loads_too():
    """NumPy reads no bfloat16 through DLPack: minitx.interop takes its bits as int16."""
    pytest.importorskip("ml_dtypes")
    theirs = torch.nn.GRU(3, 4).bfloat16()
    ours = nn.GRU(3, 4).bfloat16()
    assert ours.load_state_dict(theirs.state_dict()) == ([], [])
    assert ours.weight_hh_l0.dtype.name == "bfloat16"
    np.testing.assert_array_equal(ours.weight_hh_l0.to(dtype="float32").numpy(),
                                  theirs.weight_hh_l0.detach().float().numpy())


def test_a_gru_keeps_an_infinite_gradient_infinite_through_its_update_gate():
    """h' = n + z (h - n): dz = dy (h - n). As (1 - z) n + z h, dz was -dy n + dy h: NaN at the first
    step (h = 0: inf * 0) where the true value, and PyTorch's, is infinite."""
    minitx.manual_seed(0)
    layer = nn.GRU(3, 2).double()
    x = minitx.tensor(np.random.default_rng(9).standard_normal((3, 1, 3)))
    dy = np.zeros((3, 1, 2))
    dy[0, 0, 1] = np.inf
    layer(x)[0].backward(dy)
    z_rows = layer.bias_ih_l0.grad.numpy()[2:4]  # the update gate's: rows H..2H (PyTorch's r, z, n order)
    assert np.isinf(z_rows[1])


def test_lstm_refuses_pytorchs_proj_size_by_name():
    """(the keyword reached the base class's __init__, whose TypeError named neither LSTM nor proj_size)"""
    with pytest.raises(NotImplementedError, match=r"LSTM: proj_size \(h projected to a smaller size\) is not "
                                                  r"implemented, got 4; expected 0"):
        nn.LSTM(8, 16, proj_size=4)
    assert nn.LSTM(8, 16, proj_size=0).hidden_size == 16


def test_the_base_classes_are_pytorchs_with_its_arguments():
    """nn.RNNBase and nn.RNNCellBase: the layers' and cells' base classes (ported code checks
    isinstance), built from PyTorch's arguments with its parameters; RNNBase's mode computes that
    layer, as the layer itself (PyTorch's base has no forward)."""
    for layer in (nn.RNN(3, 4), nn.LSTM(3, 4), nn.GRU(3, 4)):
        assert isinstance(layer, nn.RNNBase) and not isinstance(layer, nn.RNNCellBase)
    for cell in (nn.RNNCell(3, 4), nn.LSTMCell(3, 4), nn.GRUCell(3, 4)):
        assert isinstance(cell, nn.RNNCellBase) and not isinstance(cell, nn.RNNBase)
    for args in [("LSTM", 3, 4, 2), ("GRU", 3, 4, 1, False), ("RNN_RELU", 3, 4, 1, True, False, 0.0, True)]:
        ours, theirs = nn.RNNBase(*args), torch.nn.RNNBase(*args)
        assert {k: v.shape for k, v in ours.state_dict().items()} == {k: tuple(v.shape) for k, v in
                                                                      theirs.state_dict().items()}
    ours, theirs = nn.RNNCellBase(3, 4, True, 4), torch.nn.RNNCellBase(3, 4, True, 4)
    assert {k: v.shape for k, v in ours.state_dict().items()} == {k: tuple(v.shape) for k, v in
                                                                  theirs.state_dict().items()}
    assert repr(ours) == repr(theirs) == "RNNCellBase(3, 4)"
    with pytest.raises(NotImplementedError, match="RNNCellBase.forward"):
        ours(minitx.zeros(2, 3))
    relu = torch.nn.RNN(3, 4, nonlinearity="relu", dtype=torch.float64)
    base = nn.RNNBase("RNN_RELU", 3, 4, dtype="float64")
    base.load_state_dict(relu.state_dict())
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    np.testing.assert_allclose(base(minitx.tensor(x))[0].numpy(), relu(torch.tensor(x))[0].detach().numpy(),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="RNNBase: mode must be one of 'RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU', got 'rnn'"):
        nn.RNNBase("rnn", 3, 4)
    with pytest.raises(NotImplementedError, match="RNNBase: proj_size"):
        nn.RNNBase("LSTM", 3, 4, proj_size=2)
    with pytest.raises(ValueError, match="RNNCellBase: num_chunks must be a whole number >= 1, got 0"):
        nn.RNNCellBase(3, 4, True, 0)
