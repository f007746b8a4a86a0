# Arguments PyTorch's schedulers take and compute with, refused by minitx (not among the refusals docs/ops.md lists),
# and the deprecated step(epoch) form.
import warnings, numpy as np, minitx, torch
from minitx import optim
warnings.filterwarnings("ignore")
cases = [("StepLR", (2.0,), {}), ("CosineAnnealingLR", (2.5,), {}), ("LinearLR", (), dict(total_iters=0)),
         ("ConstantLR", (0.5,), dict(total_iters=0)), ("PolynomialLR", (), dict(total_iters=0))]
for name, args, kw in cases:
    out = []
    for lib, O in ((minitx, optim), (torch, torch.optim)):
        p = lib.tensor(np.ones(1), requires_grad=True); opt = O.SGD([p], lr=1.0)
        try:
            s = getattr(O.lr_scheduler, name)(opt, *args, **kw); lrs = []
            for _ in range(5): s.step(); lrs.append(round(s.get_last_lr()[0], 4))
            out.append(f"{lib.__name__}: {lrs}")
        except Exception as e: out.append(f"{lib.__name__}: {type(e).__name__}: {str(e)[:80]}")
    print(name, args, kw, "|", " | ".join(out))
for lib, O in ((minitx, optim), (torch, torch.optim)):
    p = lib.tensor(np.ones(1), requires_grad=True); opt = O.SGD([p], lr=1.0); s = O.lr_scheduler.StepLR(opt, 2)
    try: s.step(4); print(lib.__name__, "step(4) ->", s.get_last_lr())
    except Exception as e: print(lib.__name__, "step(4) ->", type(e).__name__, e)
