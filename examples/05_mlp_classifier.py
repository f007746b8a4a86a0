"""Step 5: a small neural network (a multi-layer perceptron) learns two interleaved spirals.

    python examples/05_mlp_classifier.py

No straight line separates the two spirals, so a linear model stays far from 100% (about 66%); two
hidden layers with ReLU bend the boundary. The pieces are minitx.nn modules (``Linear``,
``ReLU``, ``Sequential``: each holds its parameters and knows its forward), the loss is
cross-entropy over the two classes, and Adam updates the parameters.
"""
import os

import numpy as np

import minitx
import minitx.functional as F
from minitx import nn, optim

STEPS = 100 if os.environ.get("MINITX_EXAMPLES_FAST") == "1" else 300


def spirals(n, rng):
    """n points per class on two spirals, with a little noise: x [2n, 2], labels [2n]."""
    r = np.linspace(0.2, 1.0, n)
    angle = np.linspace(0, 3 * np.pi, n)
    points, labels = [], []
    for label, offset in enumerate((0.0, np.pi)):
        points.append(np.stack([r * np.cos(angle + offset), r * np.sin(angle + offset)], axis=1))
        labels.append(np.full(n, label))
    x = np.concatenate(points) + 0.02 * rng.normal(size=(2 * n, 2))
    return x.astype(np.float32), np.concatenate(labels)


def accuracy(model, x, labels):
    with minitx.no_grad():
        return float((model(x).numpy().argmax(axis=1) == labels).mean())


rng = np.random.default_rng(0)
x_np, labels_np = spirals(200, rng)
x, labels = minitx.tensor(x_np), minitx.tensor(labels_np)
minitx.manual_seed(0)

linear = nn.Linear(2, 2)
mlp = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))
print(f"the MLP has {mlp.num_parameters():,} parameters:\n{mlp}\n")
for name, model in [("linear model", linear), ("MLP", mlp)]:
    opt = optim.Adam(model.parameters(), lr=0.01)
    for step in range(1, STEPS + 1):
        loss = F.cross_entropy(model(x), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if name == "MLP" and step % (STEPS // 5) == 0:
            print(f"step {step:4d}  loss {loss.item():.4f}  accuracy {accuracy(model, x, labels_np):.3f}")
    print(f"{name}: training accuracy {accuracy(model, x, labels_np):.3f}\n")
assert accuracy(mlp, x, labels_np) > accuracy(linear, x, labels_np) + 0.1
