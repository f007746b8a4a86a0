# torch.optim optimizers take model.named_parameters() (name, tensor pairs) since torch 2.6; minitx refuses.
import numpy as np, minitx, torch
from minitx import optim, nn
for lib, O, mod in ((minitx, optim, nn.Linear(3, 2)), (torch, torch.optim, torch.nn.Linear(3, 2))):
    try: opt = O.SGD(mod.named_parameters(), lr=0.1); print(lib.__name__, "ok", len(opt.param_groups[0]["params"]))
    except Exception as e: print(lib.__name__, type(e).__name__, e)
