# hand-written causal self-attention block -- minitx port (workarounds marked "# WA:")
import math
import numpy as np
import minitx
import minitx.nn as nn
import minitx.functional as F
import minitx.optim

minitx.manual_seed(0)

class CausalSelfAttention(nn.Module):
    def __init__(self, d, n_head, block):
        super().__init__()
        assert d % n_head == 0
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.n_head = n_head
        # WA: torch.tril -> F.tril (no top-level minitx.tril)
        self.register_buffer("mask", F.tril(minitx.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        B, T, C = x.shape                                   # WA: x.size() -> TypeError
        q, k, v = F.split(self.c_attn(x), 3, axis=2)        # WA: .split(C, dim=2): no Tensor.split; F.split(dim=) refused
        q = q.view(B, T, self.n_head, C // self.n_head).swapaxes(1, 2)   # WA: transpose(1, 2) -> ValueError
        k = k.view(B, T, self.n_head, C // self.n_head).swapaxes(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).swapaxes(1, 2)
        att = (q @ k.swapaxes(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))  # WA: k.size(-1)
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.swapaxes(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)

class Block(nn.Module):
    def __init__(self, d, n_head, block):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, n_head, block)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))

V, d, block = 11, 32, 16
emb = nn.Embedding(V, d)
pos = nn.Parameter(minitx.zeros(1, block, d))
blk = Block(d, 4, block)
head = nn.Linear(d, V, bias=False)
params = list(emb.parameters()) + [pos] + list(blk.parameters()) + list(head.parameters())
opt = minitx.optim.AdamW(params, lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
for step in range(80):
    idx = minitx.tensor(np.random.randint(0, V, (16, block)))   # WA: torch.randint missing
    x = emb(idx) + pos[:, :idx.shape[1], :]
    logits = head(blk(x))
    loss = F.cross_entropy(logits[:, 1:].reshape(-1, V), idx[:, :-1].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
print("loss", round(loss.item(), 3))
q = minitx.randn(2, 4, 8, 16); k = minitx.randn(2, 4, 8, 16); v = minitx.randn(2, 4, 8, 16)
ref = F.scaled_dot_product_attention(q, k, v, causal=True)   # WA: is_causal= -> causal=
m = F.triu(minitx.ones(8, 8, dtype=minitx.bool_), 1)      # WA: dtype=torch.bool; diagonal=1 keyword refused
s = (q @ k.swapaxes(-2, -1)) / math.sqrt(16)
mine = F.softmax(s.masked_fill(m, float('-inf')), dim=-1) @ v    # WA: torch.softmax -> F.softmax
print("sdpa match", F.allclose(ref, mine, atol=1e-5))
print("buffers", [n for n, _ in blk.named_buffers()], "state keys", len(blk.state_dict()))
print(att_shape := tuple(blk.attn.mask.shape))
