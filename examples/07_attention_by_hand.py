"""Step 7: attention, written with the ops you already know, against minitx's fused op.

    python examples/07_attention_by_hand.py

Scaled dot-product attention: each query position takes a weighted average of the values,
weighted by how well its query matches each key:

    S = q k^T / sqrt(d)            scores       [batch, heads, Lq, Lk]
    S = -inf where masked          a causal mask hides the future: key j > query i
    P = softmax(S) over keys       weights, each row sums to 1
    O = P v                        output       [batch, heads, Lq, d]

By hand it is six ops (k^T is a swap_axes; then matmul, div, masked_fill, softmax, matmul: the
tree printed below), and backward goes through each. ``F.scaled_dot_product_attention`` is
one op with a hand-written backward (and a fused CUDA kernel on the GPU); both must agree,
outputs and gradients. Heads are just a reshape: [batch, L, heads * d] -> [batch, heads, L, d].
"""
import math

import numpy as np

import minitx
import minitx.functional as F
from minitx.autograd.graph import to_tree
from minitx.testing import gradcheck

batch, length, heads, d = 2, 5, 2, 4
rng = np.random.default_rng(0)


def split_heads(x):
    """[batch, L, heads * d] -> [batch, heads, L, d]"""
    return x.reshape(batch, length, heads, d).transpose(0, 2, 1, 3)


def attention_by_hand(q, k, v):
    scores = (q @ k.swapaxes(-1, -2)) / math.sqrt(d)
    future = np.triu(np.ones((length, length), dtype=bool), k=1)  # True above the diagonal
    scores = scores.masked_fill(minitx.tensor(future), -np.inf)
    return F.softmax(scores, axis=-1) @ v


x = [minitx.tensor(rng.normal(size=(batch, length, heads * d)), dtype="float64", requires_grad=True)
     for _ in range(3)]
q, k, v = (split_heads(t) for t in x)
by_hand = attention_by_hand(q, k, v)
fused = F.scaled_dot_product_attention(q, k, v, causal=True)
print("outputs agree:", np.allclose(by_hand.numpy(), fused.numpy()), " shape", by_hand.shape)
assert np.allclose(by_hand.numpy(), fused.numpy())

cotangent = minitx.tensor(rng.normal(size=by_hand.shape), dtype="float64")
grads = []
for out in (by_hand, fused):
    for t in x:
        t.grad = None
    (out * cotangent).sum().backward(retain_graph=True)
    grads.append([t.grad.numpy() for t in x])
for name, a, b in zip("qkv", *grads):
    print(f"gradient of {name} agrees:", np.allclose(a, b))
    assert np.allclose(a, b)

print("\nthe graph of attention by hand, per op:")
print(to_tree(by_hand, names={"x_q": x[0], "x_k": x[1], "x_v": x[2]}))
small = [minitx.tensor(rng.normal(size=(1, 1, 3, 2)), dtype="float64", requires_grad=True) for _ in range(3)]
print("\ngradcheck of the fused op:",
      gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, causal=True), *small))
