import numpy as np, torch, minitx, copy
from minitx import optim
from harness import make
cases = {
 'SGD': dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
 'Adam': dict(lr=0.01, amsgrad=True, weight_decay=0.1),
 'AdamW': dict(lr=0.01, amsgrad=True),
 'RMSprop': dict(lr=0.01, momentum=0.9, centered=True),
 'Adagrad': dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.5),
 'Adadelta': dict(lr=1.0, rho=0.5),
 'Adamax': dict(lr=0.1),
 'NAdam': dict(lr=0.1, weight_decay=0.1),
 'RAdam': dict(lr=0.1, weight_decay=0.1),
 'Rprop': dict(lr=0.1),
 'ASGD': dict(lr=0.1, t0=2, lambd=0.1),
 'Adafactor': dict(lr=0.1),
}
torch.set_default_dtype(torch.float64)
shapes = [(3,4),(5,),(),(2,2)]
def steps(o, t, ours, theirs, n, rng, tag):
    for s in range(n):
        for i,(p,q) in enumerate(zip(ours, theirs)):
            g = rng.standard_normal(shapes[i])
            p.grad = minitx.tensor(g.copy()); q.grad = torch.tensor(g.copy())
        o.step(); t.step()
        for i,(p,q) in enumerate(zip(ours, theirs)):
            if not np.allclose(p.numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12):
                print(f"  MISMATCH {tag} step {s} param {i} maxdiff {np.abs(p.numpy()-q.detach().numpy()).max()}")
                return False
    return True
for name, kw in cases.items():
    try:
        ours, theirs = make(shapes, np.float64)
        # two groups with different lr; add 3rd group mid-run with its own lr
        o = getattr(optim, name)([{'params': ours[:2]}, {'params': ours[2:3], 'lr': kw['lr']*0.3}], **kw)
        t = getattr(torch.optim, name)([{'params': theirs[:2]}, {'params': theirs[2:3], 'lr': kw['lr']*0.3}], **kw)
        rng = np.random.default_rng(1)
        ok = steps(o, t, ours[:3], theirs[:3], 3, rng, name+' groups')
        o.add_param_group({'params': [ours[3]], 'lr': kw['lr']*2})
        t.add_param_group({'params': [theirs[3]], 'lr': kw['lr']*2})
        ok = ok and steps(o, t, ours, theirs, 3, rng, name+' added')
        # resume: new optimizer from minitx state dict
        sd = o.state_dict()
        o2 = getattr(optim, name)([{'params': ours[:2]}, {'params': ours[2:3]}, {'params':[ours[3]]}], **kw)
        o2.load_state_dict(copy.deepcopy(sd))
        ok = ok and steps(o2, t, ours, theirs, 3, rng, name+' resumed')
        # load torch's state dict
        o3 = getattr(optim, name)([{'params': ours[:2]}, {'params': ours[2:3]}, {'params':[ours[3]]}], **kw)
        o3.load_state_dict(t.state_dict())
        ok = ok and steps(o3, t, ours, theirs, 3, rng, name+' torch-sd')
        print(' ', 'ok' if ok else 'FAIL', name)
    except Exception as e:
        import traceback; print("  ERR", name, type(e).__name__, str(e)[:300])
