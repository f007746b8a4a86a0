import numpy as np, torch, minitx, minitx.functional as F
from minitx.testing import leaf
def tg(f, v, dy=None):
    t = torch.tensor(v, dtype=torch.float64, requires_grad=True)
    out = f(t)
    if isinstance(out, tuple): out = out[0]
    out.backward(torch.ones_like(out) if dy is None else dy)
    return t.grad.numpy()
# pooling several NaNs
print("torch pool 2 NaN", tg(lambda t: torch.nn.functional.max_pool1d(t, 3), [[[np.nan, 1.0, np.nan]]]))
# cummax ties
v=[1.0, 3.0, 3.0, 2.0]
print("torch cummax", tg(lambda t: torch.cummax(t, 0)[0], v))
x=leaf(v); F.cummax(x, 0)[0].sum().backward() if isinstance(F.cummax(x,0), tuple) else F.cummax(x,0).sum().backward(); print("minitx cummax", x.grad.numpy())
print("torch cummin", tg(lambda t: torch.cummin(t, 0)[0], [3.0, 1.0, 1.0, 2.0]))
x=leaf([3.0, 1.0, 1.0, 2.0]); r=F.cummin(x,0); (r[0] if isinstance(r,tuple) else r).sum().backward(); print("minitx cummin", x.grad.numpy())
# inf norm
v=[1.0,-3.0,3.0,2.0]
print("torch inf norm", tg(lambda t: torch.linalg.vector_norm(t, float('inf')), v))
x=leaf(v); F.norm(x, np.inf).backward(); print("minitx inf norm", x.grad.numpy())
# median without dim
v=[1.0,2.0,2.0,2.0,5.0]
print("torch median", tg(lambda t: torch.median(t), v))
x=leaf(v); F.median(x).backward(); print("minitx median", x.grad.numpy())
print("torch kthvalue", tg(lambda t: torch.kthvalue(t, 3)[0], v))
print("torch topk", tg(lambda t: torch.topk(t, 1)[0], [2.0,2.0,1.0]))
print("torch max nodim NaN", tg(lambda t: torch.max(t), [1.0, np.nan, np.nan]))
print("torch amax NaN", tg(lambda t: torch.amax(t,1), [[1.0, np.nan, 3.0]]))
print("torch max dim tie", tg(lambda t: torch.max(t,0)[0], [3.0,3.0]))
print("torch max nodim tie", tg(lambda t: torch.max(t), [3.0,3.0,1.0]))
print("torch maximum NaN", tg(lambda t: torch.maximum(t, torch.tensor([1.0],dtype=torch.float64)), [np.nan]))
