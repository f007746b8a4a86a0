# A parameter appended to an existing group after Adam's first step (opt.param_groups[0]['params'].append(q)):
# PyTorch steps it; minitx's Adam fails with an IndexError from its per-group count array (sized at the first step).
import numpy as np, minitx, torch
from minitx import optim
for lib, O in ((minitx, optim), (torch, torch.optim)):
    for name in ("SGD", "Adam"):
        p = lib.tensor(np.ones(3), requires_grad=True); opt = getattr(O, name)([p], lr=0.1)
        p.grad = lib.tensor(np.full(3, 0.5)); opt.step()
        q = lib.tensor(np.ones(2), requires_grad=True); opt.param_groups[0]["params"].append(q)
        q.grad = lib.tensor(np.full(2, 0.5))
        try: opt.step(); print(lib.__name__, name, "ok", (q.detach() if lib is torch else q).numpy().tolist())
        except Exception as e: print(lib.__name__, name, type(e).__name__, str(e)[:120])
