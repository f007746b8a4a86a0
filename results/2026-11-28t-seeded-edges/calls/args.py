"""Every function of minitx.functional and minitx.special that PyTorch has by the same name, called with a
float or bool second argument (1.5, 2.0, True, -1.5, 2.5, 1e30, NaN) beside PyTorch's: prints where minitx
takes what PyTorch refuses (a Python number where PyTorch wants a tensor, minitx's superset, is most of it).

    python results/2026-11-28t-seeded-edges/calls/args.py
"""
import warnings, inspect, numpy as np, minitx, torch
import minitx.functional as F, minitx.special as S
warnings.simplefilter("ignore")
def torch_fn(name):
    for mod in (torch.special, torch.nn.functional, torch, torch.linalg):
        f = getattr(mod, name, None)
        if callable(f): return f
flag = []
base = np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4) / 7
for mod in (F, S):
    for n in sorted(dir(mod)):
        if n.startswith("_"): continue
        fn = getattr(mod, n); tf = torch_fn(n)
        if not callable(fn) or inspect.isclass(fn) or tf is None: continue
        for extra in (1.5, 2.0, True, -1.5, 2.5, 1e30, float("nan")):
            try:
                ours = fn(minitx.tensor(base), extra); ok = True
            except Exception as e:
                ok = False
            try:
                theirs = tf(torch.tensor(base), extra); tok = True
            except Exception as e:
                tok = False; terr = f"{type(e).__name__}: {str(e)[:80]}"
            if ok and not tok:
                flag.append((n, repr(extra), terr))
for f in flag: print(f)
print(len(flag))
