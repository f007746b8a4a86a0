import numpy as np, minitx, minitx.functional as F
from minitx import nn
minitx.manual_seed(0)
m = nn.Transformer(src_vocab=9, tgt_vocab=9, d_model=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=16, dropout=0.0).double()
rng = np.random.default_rng(0)
src = rng.integers(4, 9, (2, 5)); src[0, 3:] = 0          # pad_id 0 at the end
tgt_in = rng.integers(4, 9, (2, 4)); tgt_in[1, 2:] = 0
tgt_out = rng.integers(4, 9, (2, 4)); tgt_out[1, 2:] = 0
logits = m(src, tgt_in)
F.cross_entropy(logits, tgt_out, ignore_index=0).backward()
print("src_embed pad row grad max |.|:", np.abs(m.src_embed.weight.grad.numpy()[0]).max())
print("tgt_embed pad row grad max |.|:", np.abs(m.tgt_embed.weight.grad.numpy()[0]).max())
