"""Recurrent layers, as PyTorch names and lays them out: RNN, LSTM and GRU over a sequence (layers
stacked, one or two directions), and their cells for one step.

Each step is a few products and gates, composed of minitx's ops, so backward through time is
those ops' backwards, step by step: nothing here has a backward of its own. With x_t the input
at step t and h the state from the step before (W_ih, W_hh: the input's and the state's weights,
stacked gate by gate in PyTorch's order):

    RNN:   h' = tanh(x_t W_ih^T + b_ih + h W_hh^T + b_hh)                (or relu)
    LSTM:  i, f, g, o = split(x_t W_ih^T + b_ih + h W_hh^T + b_hh, 4)
           c' = sigmoid(f) * c + sigmoid(i) * tanh(g),   h' = sigmoid(o) * tanh(c')
    GRU:   r = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr),  z = sigmoid(... z's ...)
           n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn)),  h' = n + z * (h - n)  ((1 - z) n + z h)

The input's products for every step are one product, before the loop; only the state's are per
step. The parameters keep PyTorch's names (weight_ih_l0, bias_hh_l1_reverse, ...) and shapes, so
a PyTorch state_dict loads as it is, and PyTorch's initialisation: uniform in +-1/sqrt(hidden_size).

Derivation: docs/backprop/recurrent.md
"""
from __future__ import annotations

import math

import minitx.functional as F
from minitx.autograd.tensor import Tensor
from minitx.creation import zeros
from minitx.nn import init
from minitx.nn.layers import _count, _new_parameter, _probability
from minitx.nn.module import Module, layer_input

_GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}
_MODES = {"RNN_TANH": ("RNN", "tanh"), "RNN_RELU": ("RNN", "relu"), "LSTM": ("LSTM", "tanh"), "GRU": ("GRU", "tanh")}


def _step(mode, x_proj, h, c, weight_hh, bias_hh, nonlinearity="tanh"):
    """One step from the input's projection x_proj [N, G*H] (bias_ih included) and the state h
    (and c, for LSTM) [N, H]: (h', c') (c' None but for LSTM)."""
    h_proj = F.matmul(h, weight_hh.T)
    if bias_hh is not None:
        h_proj = h_proj + bias_hh
    if mode == "RNN":
        pre = x_proj + h_proj
        return (F.tanh(pre) if nonlinearity == "tanh" else F.relu(pre)), None
    if mode == "LSTM":
        i, f, g, o = F.split(x_proj + h_proj, 4, axis=-1)
        c = F.sigmoid(f) * c + F.sigmoid(i) * F.tanh(g)
        return F.sigmoid(o) * F.tanh(c), c
    xr, xz, xn = F.split(x_proj, 3, axis=-1)
    hr, hz, hn = F.split(h_proj, 3, axis=-1)
    r, z = F.sigmoid(xr + hr), F.sigmoid(xz + hz)
    n = F.tanh(xn + r * hn)
    return n + z * (h - n), None  # ((1 - z) n + z h as PyTorch's GRU computes it: dz = dy (h - n), no cancelling)


def _projected(x, weight_ih, bias_ih):
    """x [..., H_in] W_ih^T + b_ih: every step's input product at once (F.linear takes the L * N
    rows as one matrix, so backward's dW_ih is one product too)."""
    return F.linear(x, weight_ih, bias_ih)


def _uniform_init(module, hidden_size):
    """Every parameter of a cell or a recurrent layer from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)),
    in the order registered: the constructor's draws and reset_parameters' (PyTorch's)."""
    bound = 1 / math.sqrt(hidden_size)
    for p in module.parameters():
        init.uniform_(p, -bound, bound)


# ---------------------------------------------------------------- the cells: one step
class RNNCellBase(Module):
    """The cells' base class, as PyTorch's (isinstance(cell, nn.RNNCellBase) holds for RNNCell,
    LSTMCell and GRUCell), with its arguments: weights of num_chunks * hidden_size rows (1 for
    RNNCell, 4 for LSTMCell, 3 for GRUCell), all drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    mode = None

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        self.input_size = _count(name, "input_size", input_size, 1)
        self.hidden_size = _count(name, "hidden_size", hidden_size, 1)
        rows = _count(name, "num_chunks", num_chunks, 1) * self.hidden_size
        self.weight_ih = _new_parameter((rows, self.input_size), device, dtype)
        self.weight_hh = _new_parameter((rows, self.hidden_size), device, dtype)
        self.bias_ih = _new_parameter((rows,), device, dtype) if bias else None
        self.bias_hh = _new_parameter((rows,), device, dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        _uniform_init(self, self.hidden_size)

    def _state(self, x, state):
        """x as a batch [N, H_in] (one sample [H_in] too), the state's zeros where None, and
        whether x was one sample."""
        name = type(self).__name__
        x = layer_input(name, x)
        if x.ndim not in (1, 2) or x.shape[-1] != self.input_size:
            raise ValueError(f"{name}: input must be [N, {self.input_size}] or [{self.input_size}], got {x.shape}")
        single = x.ndim == 1
        x = x.reshape(1, -1) if single else x
        if state is None:
            state = zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
        elif single:
            state = state.reshape(1, -1)
        if state.shape != (x.shape[0], self.hidden_size):
            raise ValueError(f"{name}: state must be [{x.shape[0]}, {self.hidden_size}] for this input, got "
                             f"{state.shape}")
        return x, state, single

    def extra_repr(self):
        options = [f"{self.input_size}, {self.hidden_size}"] + ([] if self.bias_ih is not None else ["bias=False"])
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            options.append(f"nonlinearity={self.nonlinearity}")  # (PyTorch's cell shows it, unquoted)
        return ", ".join(options)


class RNNCell(RNNCellBase):
    """h' = tanh (or relu) of x W_ih^T + b_ih + h W_hh^T + b_hh, one step."""

    mode = "RNN"

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, bias, _GATES[self.mode], device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, x, h=None):
        x, h, single = self._state(x, h)
        h, _ = _step("RNN", _projected(x, self.weight_ih, self.bias_ih), h, None, self.weight_hh, self.bias_hh,
                     self.nonlinearity)
        return h.reshape(-1) if single else h


class LSTMCell(RNNCellBase):
    """One LSTM step: (h', c') from x and (h, c) (zeros when None)."""

    mode = "LSTM"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, _GATES[self.mode], device, dtype)

    def forward(self, x, state=None):
        h, c = (None, None) if state is None else state
        _, c, _ = self._state(x, c)
        x, h, single = self._state(x, h)
        h, c = _step("LSTM", _projected(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh)
        return (h.reshape(-1), c.reshape(-1)) if single else (h, c)


class GRUCell(RNNCellBase):
    """One GRU step: h' from x and h (zeros when None)."""

    mode = "GRU"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, _GATES[self.mode], device, dtype)

    def forward(self, x, h=None):
        x, h, single = self._state(x, h)
        h, _ = _step("GRU", _projected(x, self.weight_ih, self.bias_ih), h, None, self.weight_hh, self.bias_hh)
        return h.reshape(-1) if single else h


# ---------------------------------------------------------------- over a sequence
class RNNBase(Module):
    """The recurrent layers' base class, as PyTorch's (isinstance(layer, nn.RNNBase) holds for RNN,
    LSTM and GRU), with its arguments: ``mode`` 'RNN_TANH', 'RNN_RELU', 'LSTM' or 'GRU' picks the
    layer it computes. PyTorch's proj_size (LSTM's h projected to a smaller size each step) is not
    there: any value but 0 is refused by name."""

    mode = None

    nonlinearity = "tanh"  # (RNN's choice; LSTM and GRU have their gates)

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        if mode not in _MODES:
            raise ValueError(f"{name}: mode must be one of {', '.join(map(repr, _MODES))}, got {mode!r}")
        if proj_size != 0:
            raise NotImplementedError(f"{name}: proj_size (h projected to a smaller size) is not implemented, got "
                                      f"{proj_size!r}; expected 0")
        self.mode, self.nonlinearity = _MODES[mode]
        dropout = _probability(name, "dropout", dropout)  # (a string or a bool named too, not Python's TypeError)
        self.input_size = _count(name, "input_size", input_size, 1)
        self.hidden_size = _count(name, "hidden_size", hidden_size, 1)
        self.num_layers = _count(name, "num_layers", num_layers, 1)
        self.bias, self.batch_first, self.dropout, self.bidirectional = bias, batch_first, dropout, bidirectional
        rows = _GATES[self.mode] * self.hidden_size
        for layer in range(self.num_layers):
            width = self.input_size if layer == 0 else self.hidden_size * self.directions
            for suffix in self._suffixes(layer):
                setattr(self, f"weight_ih{suffix}", _new_parameter((rows, width), device, dtype))
                setattr(self, f"weight_hh{suffix}", _new_parameter((rows, self.hidden_size), device, dtype))
                if bias:
                    setattr(self, f"bias_ih{suffix}", _new_parameter((rows,), device, dtype))
                    setattr(self, f"bias_hh{suffix}", _new_parameter((rows,), device, dtype))
        self.reset_parameters()

    def reset_parameters(self):
        _uniform_init(self, self.hidden_size)

    @property
    def directions(self) -> int:
        return 2 if self.bidirectional else 1

    def _suffixes(self, layer):
        return [f"_l{layer}"] + ([f"_l{layer}_reverse"] if self.bidirectional else [])

    def _weights(self, suffix):
        return tuple(getattr(self, f"{kind}{suffix}", None) for kind in ("weight_ih", "bias_ih", "weight_hh", "bias_hh"))

    def forward(self, x, state=None):
        """x [L, N, H_in] ([N, L, H_in] with batch_first, [L, H_in] for one sequence) and the first
        state [layers * directions, N, H] (for LSTM a pair (h, c), either None for zeros; zeros when None): (the last
        layer's outputs [L, N, directions * H], the last state of every layer and direction)."""
        name = type(self).__name__
        x = layer_input(name, x)
        if x.ndim not in (2, 3) or x.shape[-1] != self.input_size:
            raise ValueError(f"{name}: input must be [L, N, {self.input_size}] ([N, L, ...] with batch_first) or "
                             f"[L, {self.input_size}], got {x.shape}")
        single = x.ndim == 2
        x = x.reshape(x.shape[0], 1, -1) if single else x.swapaxes(0, 1) if self.batch_first else x
        batch, shape = x.shape[1], (self.num_layers * self.directions, x.shape[1], self.hidden_size)
        starts = self._first_states(state, single, shape, x)
        last_h, last_c = [], []
        for layer in range(self.num_layers):
            if layer and self.dropout:
                x = F.dropout(x, self.dropout, self.training)
            outputs = []
            for direction, suffix in enumerate(self._suffixes(layer)):
                k = layer * self.directions + direction
                h, c = starts[0][k], (starts[1][k] if self.mode == "LSTM" else None)
                weight_ih, bias_ih, weight_hh, bias_hh = self._weights(suffix)
                projected = _projected(x, weight_ih, bias_ih)  # [L, N, G*H], every step at once
                steps = range(x.shape[0] - 1, -1, -1) if direction else range(x.shape[0])
                hs = [None] * x.shape[0]
                for t in steps:
                    h, c = _step(self.mode, projected[t], h, c, weight_hh, bias_hh, self.nonlinearity)
                    hs[t] = h
                outputs.append(F.stack(hs, axis=0) if hs else zeros(0, batch, self.hidden_size, dtype=x.dtype,
                                                                     device=x.device))
                last_h.append(h)
                last_c.append(c)
            x = outputs[0] if len(outputs) == 1 else F.concatenate(outputs, axis=-1)
        h_n = F.stack(last_h, axis=0)
        if single:
            x, h_n = x.reshape(x.shape[0], -1), h_n.reshape(h_n.shape[0], -1)
        elif self.batch_first:
            x = x.swapaxes(0, 1)
        if self.mode != "LSTM":
            return x, h_n
        c_n = F.stack(last_c, axis=0)
        return x, (h_n, c_n.reshape(c_n.shape[0], -1) if single else c_n)

    def _first_states(self, state, single, shape, x):
        """([h of each layer and direction], [c ... ] for LSTM): the given state, or zeros."""
        name = type(self).__name__
        if state is None:
            first = zeros(*shape, dtype=x.dtype, device=x.device)
            return list(first), list(first)
        pair = state if self.mode == "LSTM" else (state, None)
        if self.mode == "LSTM" and not (isinstance(state, (tuple, list)) and len(state) == 2):
            raise ValueError(f"{name}: the state must be a pair (h_0, c_0)")
        parts = []
        for part in pair:
            if part is None:  # (h_0, None): c_0 zeros, as LSTMCell takes it
                parts.append(list(zeros(*shape, dtype=x.dtype, device=x.device)) if self.mode == "LSTM" else None)
                continue
            if not isinstance(part, Tensor):
                raise TypeError(f"{name}: the state must be tensors, got {type(part).__name__}")
            part = part.reshape(shape[0], 1, -1) if single else part
            if part.shape != shape:
                raise ValueError(f"{name}: the state must be {list(shape)} (layers * directions, batch, hidden) for "
                                 f"this input, got {part.shape}")
            parts.append(list(part))
        return parts[0], parts[1]

    def extra_repr(self):
        options = [f"{self.input_size}, {self.hidden_size}"]
        if self.num_layers != 1:
            options.append(f"num_layers={self.num_layers}")  # (PyTorch's RNN shows no nonlinearity)
        for option, default in (("bias", True), ("batch_first", False), ("dropout", 0.0), ("bidirectional", False)):
            if getattr(self, option) != default:
                options.append(f"{option}={getattr(self, option)}")
        return ", ".join(options)


class RNN(RNNBase):
    """Elman RNN layers: h_t = tanh (or relu) of x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh; forward
    returns (outputs, h_n). The arguments in PyTorch's order (nonlinearity fourth)."""

    mode = "RNN"

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__(f"RNN_{nonlinearity.upper()}", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)


class LSTM(RNNBase):
    """LSTM layers; forward returns (outputs, (h_n, c_n)). PyTorch's proj_size (h projected to a
    smaller size each step) is not there: any value but 0 is refused by name (RNNBase)."""

    mode = "LSTM"

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """GRU layers; forward returns (outputs, h_n)."""

    mode = "GRU"

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)
