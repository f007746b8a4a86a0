# clip_grad_norm_/clip_grad_value_: PyTorch's foreach= keyword refused; norm_type=0 refused; and a NaN/inf
# gradient: PyTorch scales every gradient by max_norm/(nan or inf) (NaN or 0), minitx leaves them as they are.
import numpy as np, minitx, torch
from minitx import optim
for lib, clip, clipv in ((minitx, optim.clip_grad_norm_, optim.clip_grad_value_), (torch, torch.nn.utils.clip_grad_norm_, torch.nn.utils.clip_grad_value_)):
    p = lib.tensor(np.zeros(3), requires_grad=True); p.grad = lib.tensor(np.array([3.0, 0.0, 4.0]))
    out = []
    for call in (lambda: clip([p], 1.0, foreach=True), lambda: clipv([p], 1.0, foreach=True), lambda: clip([p], 1.0, norm_type=0)):
        try: r = call(); out.append(f"ok {float(r) if r is not None else None}")
        except Exception as e: out.append(f"{type(e).__name__}: {str(e)[:60]}")
    p.grad = lib.tensor(np.array([np.inf, 1.0, 2.0])); n = clip([p], 1.0)
    out.append(f"inf grad: norm {float(n)} grads {p.grad.numpy().tolist()}")
    print(lib.__name__, out)
