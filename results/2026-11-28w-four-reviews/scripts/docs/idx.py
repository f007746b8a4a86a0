import numpy as np, torch
x = torch.arange(12.).reshape(4,3)
for name, f in [("index_select", lambda: torch.index_select(x, 1, torch.tensor([0,-1]))),
                ("index_fill", lambda: x.clone().index_fill(1, torch.tensor([-1]), 9.0)),
                ("x[rows]", lambda: x[torch.tensor([-1])]),
                ("x[rows]=v", lambda: x.clone().__setitem__(torch.tensor([-1]), 7.0))]:
    try: print(name, "accepts:", f())
    except Exception as e: print(name, "refuses:", type(e).__name__, str(e)[:100])
# scatter_add with src larger than index
xx = torch.zeros(4,3, dtype=torch.float64, requires_grad=True); src = torch.randn(3,3, dtype=torch.float64, requires_grad=True)
idx = torch.tensor([[1,3,1],[1,0,3]])
try:
    torch.scatter_add(xx, 0, idx, src).backward(torch.ones(4,3, dtype=torch.float64)); print("scatter_add larger src grad", src.grad)
except Exception as e: print("scatter_add larger src backward raises:", type(e).__name__, str(e)[:150])
# scatter overwrite
x5 = torch.zeros(5, dtype=torch.float64, requires_grad=True); s6 = torch.randn(4, dtype=torch.float64, requires_grad=True)
y = torch.scatter(x5, 0, torch.tensor([1,3,1,0]), s6); y.backward(torch.arange(5.,dtype=torch.float64)); print("scatter src grad", s6.grad.tolist())
# scatter_reduce amax include_self False
x = torch.tensor([5.0,0.0,1.0], dtype=torch.float64, requires_grad=True); s = torch.tensor([2.0,2.0,5.0,3.0], dtype=torch.float64, requires_grad=True)
torch.scatter_reduce(x, 0, torch.tensor([1,1,0,2]), s, "amax", include_self=False).backward(torch.tensor([12.,6.,1.], dtype=torch.float64))
print("scatter_reduce amax include_self=False x", x.grad.tolist(), "src", s.grad.tolist())
