# copy.deepcopy / pickle of an Adam optimizer mid-run, then step the copy (PyTorch: works, continues).
import copy, pickle, numpy as np, minitx, torch
from minitx import optim
for lib, O in ((minitx, optim), (torch, torch.optim)):
    for how in ("deepcopy", "pickle"):
        p = lib.tensor(np.ones(3), requires_grad=True)
        opt = O.Adam([p], lr=0.1)
        p.grad = lib.tensor(np.full(3, 0.5)); opt.step()
        try:
            opt2 = copy.deepcopy(opt) if how == "deepcopy" else pickle.loads(pickle.dumps(opt))
            q = opt2.param_groups[0]["params"][0]
            q.grad = lib.tensor(np.full(3, 0.5)); opt2.step()
            st = opt2.state_dict()["state"]; st = st[0]
            print(f"{lib.__name__:6} {how}: ok, copy's param {np.asarray(q.detach() if lib is torch else q.numpy())[:1]}, step {int(st['step'])}")
        except Exception as e:
            print(f"{lib.__name__:6} {how}: {type(e).__name__}: {str(e)[:200]}")
