"""A tour of minitx's autograd in a few seconds: gradients by hand, by backward, by finite
differences, and the graph backward walked, drawn.

    python examples/autograd_tour.py                          # everything in the terminal
    python examples/autograd_tour.py --draw graph.svg         # also draw the graph (Graphviz's dot)

The numbered examples (docs/learn.md) go step by step; this is the whole story on one page.
"""
import argparse

import numpy as np

import minitx
import minitx.functional as F
from minitx.autograd.graph import render, to_tree
from minitx.testing import gradcheck

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--draw", metavar="PATH", help="draw the graph of part 1 into PATH (.svg, .png, .pdf or .dot)")
args = parser.parse_args()

# 1. A small expression and its gradient.
x = minitx.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
w = minitx.tensor([0.3, -0.7], requires_grad=True)
z = x @ w
y = F.tanh(z).sum()          # y = sum_i tanh(sum_j x_ij w_j)
y.backward()

# The same gradient by hand: dy/dx_ij = (1 - tanh(z_i)^2) * w_j, z = x @ w.
by_hand = (1 - np.tanh(z.numpy()) ** 2)[:, None] * w.numpy()[None, :]
print("backward:", np.round(x.grad.numpy().astype(float), 4).tolist())
print("by hand: ", np.round(by_hand.astype(float), 4).tolist())

# 2. The graph backward walked: y.grad_fn is the op that made y, grad_fn.inputs what it read.
print("\nthe graph, output on top:")
print(to_tree(y, names={"x": x, "w": w, "z": z, "y": y}, grads=True))
print("y.grad_fn:", y.grad_fn.name, "| its input was made by:", y.grad_fn.inputs[0].grad_fn.name)
if args.draw:
    print("drawn:", render(y, args.draw, names={"x": x, "w": w, "z": z, "y": y}, grads=True,
                           title="y = sum(tanh(x @ w)), after backward"))

# 3. gradcheck compares backward with central finite differences in float64.
a = minitx.tensor(np.random.default_rng(0).normal(size=(3, 5)), dtype="float64", requires_grad=True)
print("\nsoftmax gradcheck:", gradcheck(lambda t: F.softmax(t, axis=-1) * t, a))


# 4. A hand-written op: the backward is one formula next to the forward.
class Cube(minitx.Function):
    """y = x^3.   dx = dy * 3 x^2"""

    def forward(self, x):
        self.save_for_backward(x)
        return x ** 3

    def backward(self, dy):
        (x,) = self.saved
        return (dy * 3 * x ** 2,)


print("Cube gradcheck:", gradcheck(lambda t: Cube()(t), a))
