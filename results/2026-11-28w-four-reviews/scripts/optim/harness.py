import numpy as np, torch, minitx
from minitx import optim

def make(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal(s).astype(dtype) for s in shapes]
    ours = [minitx.tensor(a.copy(), requires_grad=True) for a in arrs]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in arrs]
    return ours, theirs

def compare(name, kw, shapes=[(3,4),(5,),(),(0,3)], dtype=np.float64, steps=8, none_pattern=None, groups=None,
            rtol=1e-10, atol=1e-12, quiet=False):
    ours, theirs = make(shapes, dtype)
    if groups:
        og = [dict(g, params=[ours[i] for i in g['params']]) for g in groups]
        tg = [dict(g, params=[theirs[i] for i in g['params']]) for g in groups]
    else:
        og, tg = ours, theirs
    o = getattr(optim, name)(og, **kw); t = getattr(torch.optim, name)(tg, **kw)
    rng = np.random.default_rng(1)
    worst = 0
    for s in range(steps):
        for i, (p, q) in enumerate(zip(ours, theirs)):
            g = rng.standard_normal(shapes[i]).astype(dtype)
            if none_pattern and none_pattern(s, i):
                p.grad = None; q.grad = None
            else:
                p.grad = minitx.tensor(g.copy()); q.grad = torch.tensor(g.copy())
        o.step(); t.step()
        for i, (p, q) in enumerate(zip(ours, theirs)):
            a, b = p.numpy(), q.detach().numpy()
            if a.dtype != b.dtype:
                print(f"  DTYPE {name} {kw} param {i}: {a.dtype} vs {b.dtype}")
            if not np.allclose(a, b, rtol=rtol, atol=atol):
                d = np.max(np.abs(a-b)) if a.size else 0
                print(f"  MISMATCH {name} {kw} step {s+1} param {i}: maxdiff {d}")
                return o, t, ours, theirs
    if not quiet: print(f"  ok {name} {kw} {np.dtype(dtype).name}")
    return o, t, ours, theirs
