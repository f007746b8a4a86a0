# hand-written causal self-attention transformer block (nanoGPT style)
import math
import minitx
import minitx.nn as nn
import minitx.nn.functional as F

minitx.manual_seed(0)

class CausalSelfAttention(nn.Module):
    def __init__(self, d, n_head, block):
        super().__init__()
        assert d % n_head == 0
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.n_head = n_head
        self.register_buffer("mask", minitx.tril(minitx.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
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
# task: copy sequence shifted by one
for step in range(80):
    idx = minitx.randint(0, V, (16, block))
    x = emb(idx) + pos[:, :idx.size(1), :]
    logits = head(blk(x))
    loss = F.cross_entropy(logits[:, 1:].reshape(-1, V), idx[:, :-1].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
print("loss", round(loss.item(), 3))
# compare against built-in SDPA
q = minitx.randn(2, 4, 8, 16); k = minitx.randn(2, 4, 8, 16); v = minitx.randn(2, 4, 8, 16)
ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
m = minitx.triu(minitx.ones(8, 8, dtype=minitx.bool), diagonal=1)
s = (q @ k.transpose(-2, -1)) / math.sqrt(16)
mine = minitx.softmax(s.masked_fill(m, float('-inf')), dim=-1) @ v
print("sdpa match", minitx.allclose(ref, mine, atol=1e-5))
print("buffers", [n for n, _ in blk.named_buffers()], "state keys", len(blk.state_dict()))
print(att_shape := tuple(blk.attn.mask.shape))
