"""Step 9: backpropagation through time, and why an LSTM's cell keeps the gradient alive.

The task: a sequence of T random signs; at its end, say what the FIRST one was. The answer has to
be carried across all T steps, and so does the gradient that teaches it: the loss at the end
reaches the first input only through every step between.

A plain RNN multiplies that gradient by its recurrent weights and tanh's slope at every step, so
it shrinks geometrically with T. An LSTM carries its cell state forward by addition,
c' = f * c + i * g, so where its forget gate f is near 1 the gradient flows back almost unchanged
(that is why its forget gate's bias is set to 1 here, as Jozefowicz et al. 2015 advise). We measure
|d loss / d x_0| / |d loss / d x_last| for both, untrained, at T = 16, 32 and 64; then an LSTM
learns the task.

nn.RNN and nn.LSTM (minitx/nn/recurrent.py) compose each step of minitx's ops, so backward
through time is nothing but those ops' backwards, step after step.
"""
import os

import numpy as np

import minitx
import minitx.functional as F
from minitx import nn, optim

FAST = os.environ.get("MINITX_EXAMPLES_FAST") == "1"
HIDDEN, BATCH = 16, 64


def batch(rng, length):
    """x [length, B, 1]: random signs; y [B]: 1 where the first sign is +."""
    signs = rng.choice([-1.0, 1.0], size=(length, BATCH, 1)).astype(np.float32)
    return minitx.tensor(signs), minitx.tensor((signs[0, :, 0] > 0).astype(np.int64))


class Remember(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.recurrent = layer(1, HIDDEN)
        if layer is nn.LSTM:  # the forget gate's bias (PyTorch's gate order: i, f, g, o) at 1
            with minitx.no_grad():
                self.recurrent.bias_ih_l0.data[HIDDEN:2 * HIDDEN] = 1.0
        self.readout = nn.Linear(HIDDEN, 2)

    def forward(self, x):
        outputs, _ = self.recurrent(x)
        return self.readout(outputs[-1])  # the last step's state decides


def gradient_reach(model, length):
    """|d loss / d x_t| over the batch, at the first step over at the last one."""
    x, y = batch(np.random.default_rng(0), length)
    x.requires_grad_(True)
    F.cross_entropy(model(x), y).backward()
    model.zero_grad()
    per_step = np.abs(x.grad.numpy()).mean(axis=(1, 2))
    return per_step[0] / per_step[-1]


def train(model, length, steps):
    rng = np.random.default_rng(1)
    opt = optim.Adam(model.parameters(), lr=0.01)
    for _ in range(steps):
        x, y = batch(rng, length)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    x, y = batch(rng, length)
    with minitx.no_grad():
        return float((model(x).argmax(-1) == y).numpy().mean())


if __name__ == "__main__":
    reach = {}
    for length in (16, 32, 64):
        for layer in (nn.RNN, nn.LSTM):
            minitx.manual_seed(0)
            reach[layer.__name__, length] = gradient_reach(Remember(layer), length)
        print(f"T = {length:2}: gradient at the first step / at the last, untrained: "
              f"RNN {reach['RNN', length]:.1e}, LSTM {reach['LSTM', length]:.1e}")
    minitx.manual_seed(0)
    accuracy = train(Remember(nn.LSTM), 16, 200 if FAST else 300)
    print(f"an LSTM trained on T = 16: accuracy {accuracy:.2f}")
    assert all(reach["LSTM", n] > 1000 * reach["RNN", n] for n in (32, 64)), reach
    assert accuracy > 0.95, accuracy
