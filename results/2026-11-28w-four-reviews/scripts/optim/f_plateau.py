# ReduceLROnPlateau: PyTorch's attributes last_epoch / num_bad_epochs are missing (minitx: last_step /
# num_bad_steps), step(metric, epoch) is refused, a NaN/inf metric raises (PyTorch counts it as a bad epoch),
# and it is not an LRScheduler (PyTorch's is, since 2.2).
import warnings, numpy as np, minitx, torch
from minitx import optim
warnings.filterwarnings("ignore")
for lib, O in ((minitx, optim), (torch, torch.optim)):
    p = lib.tensor(np.ones(3), requires_grad=True); opt = O.SGD([p], lr=0.1)
    s = O.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
    s.step(1.0); s.step(2.0)
    out = {a: getattr(s, a, "MISSING") for a in ("last_epoch", "num_bad_epochs")}
    for args in ((float("nan"),), (float("inf"),), (1.0, 5)):
        try: s.step(*args); out[f"step{args}"] = "ok"
        except Exception as e: out[f"step{args}"] = f"{type(e).__name__}: {str(e)[:70]}"
    out["isinstance LRScheduler"] = isinstance(s, O.lr_scheduler.LRScheduler)
    print(lib.__name__, out)
