# Attention parity: same weights/inputs in torch and minitx; masks of each kind.
import numpy as np, torch, torch.nn as tnn, torch.nn.functional as TF
import minitx, minitx.nn as mnn, minitx.nn.functional as MF
rng = np.random.default_rng(0)
def T(a): return torch.tensor(a)
def M(a): return minitx.tensor(a)
def cmp(name, a, b):
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
    b = b.numpy() if hasattr(b, 'numpy') else np.asarray(b)
    d = np.nanmax(np.abs(a - b)) if a.shape == b.shape else None
    print(("OK  " if d is not None and d < 1e-5 else "DIFF"), name, "shapes", a.shape, b.shape, "max|d|", d)
q, k, v = (rng.standard_normal((2, 2, 5, 4)).astype('float32') for _ in range(3))
bm = rng.random((5, 5)) > 0.3; np.fill_diagonal(bm, True)
fm = np.where(bm, 0.0, -np.inf).astype('float32')
cmp("sdpa plain", TF.scaled_dot_product_attention(T(q), T(k), T(v)), MF.scaled_dot_product_attention(M(q), M(k), M(v)))
cmp("sdpa is_causal", TF.scaled_dot_product_attention(T(q), T(k), T(v), is_causal=True), MF.scaled_dot_product_attention(M(q), M(k), M(v), is_causal=True))
cmp("sdpa bool attn_mask", TF.scaled_dot_product_attention(T(q), T(k), T(v), attn_mask=T(bm)), MF.scaled_dot_product_attention(M(q), M(k), M(v), attn_mask=M(bm)))
cmp("sdpa float attn_mask", TF.scaled_dot_product_attention(T(q), T(k), T(v), attn_mask=T(fm)), MF.scaled_dot_product_attention(M(q), M(k), M(v), attn_mask=M(fm)))
cmp("sdpa scale=", TF.scaled_dot_product_attention(T(q), T(k), T(v), scale=0.3), MF.scaled_dot_product_attention(M(q), M(k), M(v), scale=0.3))
try:
    cmp("sdpa positional mask", TF.scaled_dot_product_attention(T(q), T(k), T(v), T(bm)), MF.scaled_dot_product_attention(M(q), M(k), M(v), M(bm)))
except Exception as e: print("ERR sdpa positional mask", type(e).__name__, e)
# MHA
for bf in (True, False):
    torch.manual_seed(0)
    t = tnn.MultiheadAttention(8, 2, batch_first=bf); m = mnn.MultiheadAttention(8, 2, batch_first=bf)
    m.load_state_dict(t.state_dict())
    x = rng.standard_normal((3, 5, 8)).astype('float32')
    kpm = np.zeros((3, 5), bool); kpm[0, 3:] = True; kpm[2, 4] = True
    if not bf:
        kpm_x = x.swapaxes(0, 1).copy()
    else:
        kpm_x = x
    to, tw = t(T(kpm_x), T(kpm_x), T(kpm_x), key_padding_mask=T(kpm))
    mo, mw = m(M(kpm_x), M(kpm_x), M(kpm_x), key_padding_mask=M(kpm))
    cmp(f"MHA bf={bf} kpm out", to, mo); cmp(f"MHA bf={bf} kpm weights", tw, mw)
    cm = tnn.Transformer.generate_square_subsequent_mask(5)
    cmm = mnn.Transformer.generate_square_subsequent_mask(5)
    cmp("gen_square_mask", cm, cmm)
    to, tw = t(T(kpm_x), T(kpm_x), T(kpm_x), attn_mask=cm, need_weights=True, average_attn_weights=False)
    mo, mw = m(M(kpm_x), M(kpm_x), M(kpm_x), attn_mask=cmm, need_weights=True, average_attn_weights=False)
    cmp(f"MHA bf={bf} causal out", to, mo); cmp(f"MHA bf={bf} per-head weights", tw, mw)
    to, _ = t(T(kpm_x), T(kpm_x), T(kpm_x), attn_mask=T(~bm))
    mo, _ = m(M(kpm_x), M(kpm_x), M(kpm_x), attn_mask=M(~bm))
    cmp(f"MHA bf={bf} bool attn_mask", to, mo)
# Encoder layer + stack, eval (dropout off)
for nf in (False, True):
    torch.manual_seed(0)
    tl = tnn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True, norm_first=nf)
    tenc = tnn.TransformerEncoder(tl, 2, enable_nested_tensor=False).eval()
    ml = mnn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True, norm_first=nf)
    try:
        menc = mnn.TransformerEncoder(ml, 2, enable_nested_tensor=False).eval()
    except TypeError as e:
        print("ERR TransformerEncoder(enable_nested_tensor=)", e); menc = mnn.TransformerEncoder(ml, 2).eval()
    r = menc.load_state_dict(tenc.state_dict())
    x = rng.standard_normal((3, 5, 8)).astype('float32')
    kpm = np.zeros((3, 5), bool); kpm[0, 3:] = True
    cmp(f"Encoder nf={nf}", tenc(T(x)), menc(M(x)))
    cmp(f"Encoder nf={nf} kpm", tenc(T(x), src_key_padding_mask=T(kpm)).masked_fill(T(kpm)[..., None], 0), menc(M(x), src_key_padding_mask=M(kpm)).masked_fill(M(kpm)[..., None], 0))
    cmp(f"Encoder nf={nf} causal", tenc(T(x), mask=tnn.Transformer.generate_square_subsequent_mask(5), is_causal=True), menc(M(x), mask=mnn.Transformer.generate_square_subsequent_mask(5), is_causal=True))
