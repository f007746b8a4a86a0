# opt.state is keyed by parameter index in minitx, by the parameter tensor in PyTorch:
# ported code that reads opt.state[p] (momentum buffers, Adam moments) gets a KeyError.
import numpy as np, minitx, torch
from minitx import optim
for lib, O in ((minitx, optim), (torch, torch.optim)):
    p = lib.tensor(np.ones(3), requires_grad=True); opt = O.SGD([p], lr=0.1, momentum=0.9)
    p.grad = lib.tensor(np.full(3, 0.5)); opt.step()
    try: print(lib.__name__, "opt.state[p] keys:", sorted(opt.state[p]))
    except KeyError as e: print(lib.__name__, "KeyError for opt.state[p]; keys are", list(opt.state))

# The same in a PyTorch-style custom optimizer: torch's self.state is a defaultdict(dict) keyed by parameter.
for lib, O in ((minitx, optim), (torch, torch.optim)):
    class SignSGD(O.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, dict(lr=lr))
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None: continue
                    state = self.state[p]
                    state["n"] = state.get("n", 0) + 1
                    with (torch.no_grad() if lib is torch else minitx.no_grad()):
                        p.sub_(group["lr"] * p.grad.sign())
    p = lib.tensor(np.ones(3), requires_grad=True); opt = SignSGD([p]); p.grad = lib.tensor(np.full(3, 0.5))
    try: opt.step(); print(lib.__name__, "custom optimizer step ok:", p.detach().numpy().tolist() if lib is torch else p.numpy().tolist())
    except Exception as e: print(lib.__name__, "custom optimizer step:", type(e).__name__, str(e)[:120])
