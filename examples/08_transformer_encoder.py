"""Step 8: a Transformer encoder, assembled from minitx.nn parts, learns to reverse a sequence.

    python examples/08_transformer_encoder.py

Input: 6 digits, e.g. 3 1 4 1 5 9; target at every position: the same digits reversed,
9 5 1 4 1 3. Position i must copy the token at position 5 - i, and only attention can move
information between positions: each layer's queries learn to look for "the key at the mirrored
position". Tokens carry no position by themselves, so a learned position vector is added to
each embedding.

    h = Embedding(tokens) + P[positions]                    [batch, 6, d]
    h = EncoderLayer(h)  twice: h + attention(LN(h)), then h + feed_forward(LN(h))
    logits = Linear(LN(h))                                  [batch, 6, 10]

The next rung, ``examples/learn_to_reverse.py``, adds the decoder: an encoder-decoder that
writes its answer one token at a time and handles strings of any length.
"""
import os
import time

import numpy as np

import minitx
import minitx.functional as F
from minitx import nn, optim
from minitx.nn.attention import LearnedPositionalEmbedding
from minitx.nn.transformer import EncoderLayer

FAST = os.environ.get("MINITX_EXAMPLES_FAST") == "1"
STEPS = 40 if FAST else 150
LENGTH, DIGITS, D_MODEL = 6, 10, 32


class ReverseEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(DIGITS, D_MODEL)
        self.positions = LearnedPositionalEmbedding(D_MODEL, max_len=LENGTH)
        self.layers = nn.ModuleList([EncoderLayer(D_MODEL, num_heads=4, d_ff=64, dropout=0.0, attention_dropout=0.0,
                                                  norm_first=True) for _ in range(2)])
        self.norm = nn.LayerNorm(D_MODEL)
        self.out = nn.Linear(D_MODEL, DIGITS)

    def forward(self, tokens):
        h = self.positions(self.embed(tokens))
        for layer in self.layers:
            h = layer(h)
        return self.out(self.norm(h))


def batch(rng, size=64):
    tokens = rng.integers(0, DIGITS, (size, LENGTH))
    return tokens, tokens[:, ::-1].copy()


minitx.manual_seed(0)
rng = np.random.default_rng(0)
model = ReverseEncoder()
opt = optim.Adam(model.parameters(), lr=3e-3)
print(f"{model.num_parameters():,} parameters; {STEPS} steps of 64 sequences")
start = time.perf_counter()
for step in range(1, STEPS + 1):
    tokens, target = batch(rng)
    loss = F.cross_entropy(model(tokens), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % (STEPS // 8) == 0:
        print(f"step {step:4d}  loss {loss.item():.4f}")
print(f"trained in {time.perf_counter() - start:.1f} s")

model.eval()
tokens, target = batch(np.random.default_rng(1), 500)
with minitx.no_grad():
    predicted = model(tokens).numpy().argmax(axis=-1)
accuracy = (predicted == target).mean()
for row in range(3):
    print(f"  {' '.join(map(str, tokens[row]))}  ->  {' '.join(map(str, predicted[row]))}")
print(f"token accuracy on 500 new sequences: {accuracy:.3f} (chance: {1 / DIGITS:.2f})")
assert accuracy > (0.5 if FAST else 0.95)
