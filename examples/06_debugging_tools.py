"""Step 6: looking inside backward when something goes wrong.

    python examples/06_debugging_tools.py

Three tools, none of which changes what the engine computes:

1. ``trace_backward``: every op backward visits, the gradient it received and those it returned,
   with their norms. Vanishing or exploding gradients show up as norms that shrink or grow
   from row to row. Given the model, it names the module that ran each op (``model[2]``'s
   linear says "2"), where the line alone would name ``model(x)`` for every layer.
2. ``detect_anomaly``: the first op whose forward or backward produces NaN or inf raises, naming
   the op, its inputs and the line of your code that created it. Without it, a NaN appears in
   the loss many ops later with no hint of where it came from.
3. The in-place guard (always on): changing an array that the graph saved for backward, between
   forward and backward, would silently give wrong gradients; minitx refuses instead.
"""
import numpy as np

import minitx
import minitx.functional as F
from minitx import nn, optim
from minitx.autograd.debug import detect_anomaly, trace_backward

minitx.manual_seed(0)
rng = np.random.default_rng(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
x, labels = minitx.tensor(rng.normal(size=(5, 4)), dtype="float32"), minitx.tensor(rng.integers(0, 3, 5))

print("1. the backward trace of one training step")
with trace_backward(model=model) as trace:
    F.cross_entropy(model(x), labels).backward()
print(trace)
assert [(r.op, r.module) for r in trace.rows] == [("cross_entropy", None), ("linear", "2"), ("relu", "1"),
                                                  ("linear", "0")]

print("\n2. anomaly mode: log of a probability that underflowed to 0")
logits = minitx.tensor([[0.0, 200.0]], requires_grad=True)
probabilities = F.softmax(logits, axis=-1)  # [e^-200, 1]: e^-200 is 0 in float32
try:
    with detect_anomaly():
        loss = -F.log(probabilities)[0, 0]  # -log p0 = 200 in exact arithmetic, inf here
        loss.backward()
except FloatingPointError as error:
    print(error)
print("the fix: F.log_softmax(logits) computes log p without forming p:",
      (-F.log_softmax(logits, axis=-1)[0, 0]).item())

print("\n3. the in-place guard: an optimizer step between forward and backward")
opt = optim.SGD(model.parameters(), lr=0.1)
loss = F.cross_entropy(model(x), labels)
for p in model.parameters():
    p.grad = minitx.zeros_like(p)
opt.step()  # changes the weights that `loss` was computed with
try:
    loss.backward()
except RuntimeError as error:
    print(error)
weight = model[0].weight
loss = F.cross_entropy(model(x), labels)
try:
    weight.data[...] = 0.0  # a raw write into an array the graph saved: NumPy refuses it
except ValueError as error:
    print(f"writing into weight.data before backward: ValueError: {error}")
loss.backward()   # backward releases the graph ...
weight.data[...] = 0.0  # ... and the array is writable again
print("after backward the write goes through")
