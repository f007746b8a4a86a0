# Adam keys its per-group step counts by id(group): a parameter-group dict replaced after a step
# (e.g. rebuilt with a new lr) makes the next step fail with a bare KeyError. PyTorch steps on.
import numpy as np, minitx, torch
from minitx import optim
for lib, O in ((minitx, optim), (torch, torch.optim)):
    p = lib.tensor(np.ones(3), requires_grad=True); opt = O.Adam([p], lr=0.1)
    p.grad = lib.tensor(np.full(3, 0.5)); opt.step()
    opt.param_groups[0] = {**opt.param_groups[0], "lr": 0.01}
    try: opt.step(); print(lib.__name__, "ok")
    except Exception as e: print(lib.__name__, type(e).__name__, e)
