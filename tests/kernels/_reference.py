"""Independent NumPy references for the kernel tests (float64 math; the bfloat16 tests
round their results to bfloat16 through float32 with ml_dtypes, as the kernels store).

:func:`adam` uses only array methods and operators, so the GPU tests call it
with CuPy arrays too."""
import numpy as np


def softmax(x):
    s = np.asarray(x, dtype=np.float64)
    m = s.max(axis=-1, keepdims=True)
    dead = m == -np.inf  # a row of -inf only (fully masked): zeros; a NaN or +inf in a row makes it NaN
    e = np.exp(s - np.where(dead, 0.0, m))
    z = e.sum(axis=-1, keepdims=True)
    return np.where(dead, 0.0, e / np.where(z == 0, 1.0, z))


def softmax_grad(y, dy):
    y = np.asarray(y, np.float64)
    dy = np.asarray(dy, np.float64)
    return y * (dy - (dy * y).sum(-1, keepdims=True))


def layer_norm(x, w, b, eps):
    x = np.asarray(x, np.float64)
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    y = (x - mu) * rstd
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y, mu[..., 0], rstd[..., 0]


def layer_norm_grad(dy, x, w, eps):
    x = np.asarray(x, np.float64)
    dy = np.asarray(dy, np.float64)
    n = x.shape[-1]
    mu = x.mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)
    xhat = (x - mu) * rstd
    g = dy * (w if w is not None else 1.0)
    dx = rstd / n * (n * g - g.sum(-1, keepdims=True) - xhat * (g * xhat).sum(-1, keepdims=True))
    lead = tuple(range(x.ndim - 1))
    return dx, (dy * xhat).sum(lead), dy.sum(lead)


def cross_entropy(x, t, ignore_index, eps):
    x = np.asarray(x, np.float64)
    C = x.shape[-1]
    m = x.max(-1, keepdims=True)
    lse = (m + np.log(np.exp(x - m).sum(-1, keepdims=True)))[..., 0]
    logp = x - lse[..., None]
    valid = t != ignore_index
    tt = np.where(valid, t, 0)
    nll = -np.take_along_axis(logp, tt[..., None], -1)[..., 0]
    smooth = -logp.mean(-1)
    loss = np.where(valid, (1 - eps) * nll + eps * smooth, 0.0)
    p = np.exp(logp)
    target = (1 - eps) * np.eye(C)[tt] + eps / C
    grad = np.where(valid[..., None], p - target, 0.0)
    return loss, lse, grad


def attention(q, k, v, keep, scale, z=None):
    """keep: bool [BH, Lq, Lk]; z: None, or the dropout factor of every weight [BH, Lq, Lk]
    (1 / (1 - p) where kept, 0 where dropped).  Returns o, lse, and a backward closure."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    z = 1.0 if z is None else np.asarray(z, np.float64)
    s = scale * np.einsum("bid,bjd->bij", q, k)
    s = np.where(keep, s, -np.inf)
    m = s.max(-1, keepdims=True)
    dead = m == -np.inf  # a query that sees no key; a NaN or +inf score makes its row NaN
    e = np.where(keep, np.exp(s - np.where(dead, 0.0, m)), 0.0)
    total = e.sum(-1, keepdims=True)
    weights = np.where(dead, 0.0, e / np.where(total == 0, 1.0, total))
    o = (weights * z) @ v
    lse = np.where(dead, -np.inf, np.where(dead, 0, m) + np.log(np.where(total == 0, 1.0, total)))[..., 0]

    def saved_weights(lse_saved):
        """P = exp(s - lse) for the lse a forward returned: 0 where the key is masked or lse is -inf."""
        lse_saved = np.asarray(lse_saved, np.float64)[..., None]
        live = keep & ~np.isneginf(lse_saved)
        with np.errstate(invalid="ignore"):
            return np.where(live, np.exp(s - lse_saved), 0.0)

    def backward(do, o_saved=None, lse_saved=None, terms=False):
        """o_saved: the o the forward returned, when it was rounded (bfloat16): the kernels'
        delta = rowsum(do * o) is then that o's, as its contract says. lse_saved: the lse the
        forward returned (in float32; for TF32, of scores of rounded operands): the kernels'
        P = exp(s - lse) is then that lse's. terms: also return the dict of P, dP, delta and dS
        the gradients are made of (error bounds are written in them)."""
        do = np.asarray(do, np.float64)
        p = weights if lse_saved is None else saved_weights(lse_saved)
        dp = (do @ v.transpose(0, 2, 1)) * z
        delta = (dp * p).sum(-1, keepdims=True) if o_saved is None else \
            (do * np.asarray(o_saved, np.float64)).sum(-1, keepdims=True)
        ds = p * (dp - delta)
        dq = scale * ds @ k
        dk = scale * ds.transpose(0, 2, 1) @ q
        dv = (p * z).transpose(0, 2, 1) @ do
        if terms:
            return dq, dk, dv, dict(p=p, dp=dp, delta=delta, ds=ds)
        return dq, dk, dv

    return o, lse, backward


def bfloat16_ulp(a):
    """The spacing of bfloat16 numbers at |a| (8 significant bits: 2^(e - 7) for |a| in
    [2^e, 2^(e+1))), at least that of the smallest normal, 2^-133."""
    a = np.abs(np.asarray(a, np.float64))
    e = np.floor(np.log2(np.maximum(a, 2.0**-126)))
    return 2.0 ** (e - 7)


def attention_keep(BH, Lq, Lk, kpm=None, causal=False):
    keep = np.ones((BH, Lq, Lk), bool)
    if causal:
        keep &= np.tril(np.ones((Lq, Lk), bool))[None]
    if kpm is not None:
        B = kpm.shape[0]
        keep &= np.repeat(np.asarray(kpm, bool), BH // B, axis=0)[:, None, :]
    return keep


# ---- Philox-4x32-10, written from the published description ----------------
_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_MASK = np.uint64(0xFFFFFFFF)


def philox4x32_10(ctr, key):
    """ctr: uint32 array [..., 4]; key: (k0, k1) ints.  Returns uint32 [..., 4]."""
    c = [np.asarray(ctr[..., i], np.uint64) for i in range(4)]
    k0, k1 = int(key[0]), int(key[1])
    for r in range(10):
        if r:
            k0 = (k0 + _W0) & 0xFFFFFFFF
            k1 = (k1 + _W1) & 0xFFFFFFFF
        p0 = _M0 * c[0]
        p1 = _M1 * c[2]
        hi0, lo0 = p0 >> np.uint64(32), p0 & _MASK
        hi1, lo1 = p1 >> np.uint64(32), p1 & _MASK
        c = [hi1 ^ c[1] ^ np.uint64(k0), lo1, hi0 ^ c[3] ^ np.uint64(k1), lo0]
    return np.stack([x.astype(np.uint32) for x in c], axis=-1)


def dropout_keep(n, p, seed, offset):
    """Keep mask of the minitx dropout kernels for n flat elements."""
    groups = (n + 3) // 4
    g = np.arange(groups, dtype=np.uint64)
    ctr = np.stack([g & _MASK, g >> np.uint64(32),
                    np.full_like(g, offset & 0xFFFFFFFF), np.full_like(g, offset >> 32)], -1)
    words = philox4x32_10(ctr, (seed & 0xFFFFFFFF, seed >> 32)).reshape(-1)[:n]
    thr = min(2**24, int(np.ceil(p * 2**24)))
    return (words >> np.uint32(8)) >= thr


def adam(p, g, m, v, lr, b1, b2, eps, wd, decoupled, step):
    """One Adam (decoupled=False, L2 decay) / AdamW step.

    Returns the new (p, m, v) in float64.
    """
    p, g, m, v = (a.astype(np.float64) for a in (p, g, m, v))
    if decoupled:
        p = p - lr * wd * p
    else:
        g = g + wd * p
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    mh = m / (1 - b1**step)
    vh = v / (1 - b2**step)
    return p - lr * mh / (vh**0.5 + eps), m, v


def gelu_tanh(u):
    k = np.sqrt(2 / np.pi)
    return 0.5 * u * (1 + np.tanh(k * (u + 0.044715 * u**3)))


def gelu_tanh_grad(u):
    k = np.sqrt(2 / np.pi)
    t = np.tanh(k * (u + 0.044715 * u**3))
    return 0.5 * (1 + t) + 0.5 * u * (1 - t * t) * k * (1 + 3 * 0.044715 * u * u)


def embedding_backward_in_kernel_order(ids, dy, num, lanes, padding_idx=None):
    """embedding.cu's order of additions, written out: an id's lookups in their original
    order, lane w summing lookups w, w + lanes, ..., then the lanes' sums added in lane order.
    Ids outside [0, num) and padding_idx are skipped."""
    out = np.zeros((num, dy.shape[1]), dy.dtype)
    for i in np.unique(ids):
        if not 0 <= i < num or i == padding_idx:
            continue
        rows = dy[ids == i]
        partials = [np.zeros(dy.shape[1], dy.dtype) for _ in range(lanes)]
        for k, row in enumerate(rows):
            partials[k % lanes] = partials[k % lanes] + row
        total = partials[0]
        for partial in partials[1:]:
            total = total + partial
        out[i] = total
    return out
