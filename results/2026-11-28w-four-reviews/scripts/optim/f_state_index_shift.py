# State is stored by parameter index (position across the groups). Appending a parameter to an earlier group
# (opt.param_groups[0]['params'].append(q), which PyTorch supports since its state is keyed by tensor) shifts
# the later groups' indices: the new parameter silently inherits another parameter's momentum buffer.
import numpy as np, minitx, torch
from minitx import optim
res = {}
for lib, O in ((minitx, optim), (torch, torch.optim)):
    a = lib.tensor(np.zeros(2), requires_grad=True); b = lib.tensor(np.zeros(2), requires_grad=True)
    opt = O.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=1.0, momentum=0.9)
    a.grad = lib.tensor(np.array([1.0, 1.0])); b.grad = lib.tensor(np.array([100.0, 100.0])); opt.step()
    q = lib.tensor(np.zeros(2), requires_grad=True); opt.param_groups[0]["params"].append(q)
    for t in (a, b, q): t.grad = lib.tensor(np.array([1.0, 1.0]))
    opt.step()
    res[lib.__name__] = {n: (t.detach() if lib is torch else t).numpy().tolist() for n, t in (("a", a), ("b", b), ("q", q))}
    print(lib.__name__, res[lib.__name__])
