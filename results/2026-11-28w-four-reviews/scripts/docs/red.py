import numpy as np, torch, warnings
warnings.simplefilter("ignore")
def g(f, v):
    t = torch.tensor(v, dtype=torch.float64, requires_grad=True); out = f(t); out.backward(torch.ones_like(out)); return t.grad
print("cumprod nan0", g(lambda t: torch.cumprod(t,0), [np.nan,0,0.5]).tolist())
print("cumprod inf0", g(lambda t: torch.cumprod(t,0), [np.inf,0,0.5]).tolist())
print("cumprod 2nan3", g(lambda t: torch.cumprod(t,0), [2,np.nan,3]).tolist())
print("prod nan02", g(lambda t: torch.prod(t), [np.nan,0,2]).tolist())
print("std 0.1x3", torch.tensor([0.1]*3, dtype=torch.float64).std(correction=0).item(), g(lambda t: t.std(correction=0), [0.1]*3).tolist())
print("var 0.1x3", torch.tensor([0.1]*3, dtype=torch.float64).var(correction=0).item(), g(lambda t: t.var(correction=0), [0.1]*3).tolist())
print("std 2x3", g(lambda t: t.std(correction=0), [2.0]*3).tolist())
print("var dim corr=n", g(lambda t: t.var(dim=0, correction=2), [3.0,1.0]).tolist())
print("var nodim corr=n", g(lambda t: t.var(correction=2), [3.0,1.0]).tolist())
print("var dim corr=3", g(lambda t: t.var(dim=0, correction=3), [3.0,1.0]).tolist())
print("std dim corr=3", g(lambda t: t.std(dim=0, correction=3), [3.0,1.0]).tolist())
for p in (3.0, 0.5):
    print("norm inf entry p=",p, g(lambda t: torch.linalg.vector_norm(t, p), [np.inf, 1.0, 0.0]).tolist())
t = torch.tensor([1.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True)
try:
    torch.linalg.vector_norm(t, 0).backward(); print("norm p=0 grad", t.grad)
except Exception as e: print("norm p=0 backward error:", e)
print("lse masked", g(lambda t: torch.logsumexp(t, 1), [[-np.inf,-np.inf],[0.0,-np.inf]]).tolist())
print("sum empty", torch.zeros(2,0).sum(1).tolist(), torch.zeros(2,0).mean(1).tolist())
