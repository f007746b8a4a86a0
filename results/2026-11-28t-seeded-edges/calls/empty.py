"""Every function PyTorch has by the same name, on tensors of shape (0,), (2, 0) and (0, 3): prints where the
two differ in refusing, in shape or in values.

    python results/2026-11-28t-seeded-edges/calls/empty.py
"""
import warnings, inspect, numpy as np, minitx, torch
import minitx.functional as F, minitx.special as S
warnings.simplefilter("ignore")
def torch_fn(name):
    for mod in (torch.special, torch.nn.functional, torch, torch.linalg):
        f = getattr(mod, name, None)
        if callable(f): return f
flag = []
for mod in (F, S):
    for n in sorted(dir(mod)):
        if n.startswith("_"): continue
        fn = getattr(mod, n); tf = torch_fn(n)
        if not callable(fn) or inspect.isclass(fn) or tf is None: continue
        for shape in [(0,), (2, 0), (0, 3)]:
            a = np.zeros(shape, np.float32)
            try:
                ours = fn(minitx.tensor(a, requires_grad=True)); ok = True
                if isinstance(ours, minitx.Tensor) and ours.requires_grad: ours.sum().backward()
            except Exception as e:
                ok = False; err = f"{type(e).__name__}: {str(e)[:100]}"
            try:
                theirs = tf(torch.tensor(a, requires_grad=True)); tok = True
            except Exception as e:
                tok = False; terr = f"{type(e).__name__}: {str(e)[:80]}"
            if ok and tok and isinstance(ours, minitx.Tensor) and isinstance(theirs, torch.Tensor):
                if tuple(ours.shape) != tuple(theirs.shape):
                    flag.append((n, shape, "shape", tuple(ours.shape), tuple(theirs.shape)))
                else:
                    o = ours.numpy().astype(np.float64); t = theirs.detach().double().numpy()
                    if not np.array_equal(o, t, equal_nan=True):
                        flag.append((n, shape, "values", o.ravel()[:4], t.ravel()[:4]))
            elif not ok and tok:
                flag.append((n, shape, "minitx refuses", err))
            elif ok and not tok:
                flag.append((n, shape, "torch refuses", terr))
for f in flag: print(f)
print(len(flag))
