import numpy as np, torch, minitx, copy
from minitx import optim
from harness import make
shapes = [(3,), (2,), (4,)]
for name in ("Adam", "AdamW"):
    ours, theirs = make(shapes, np.float64)
    o = getattr(optim, name)([ours[0], ours[1]], lr=0.1, amsgrad=True); t = getattr(torch.optim, name)([theirs[0], theirs[1]], lr=0.1, amsgrad=True)
    rng = np.random.default_rng(0)
    def step(idx):
        for i in idx:
            g = rng.standard_normal(shapes[i]); ours[i].grad = minitx.tensor(g.copy()); theirs[i].grad = torch.tensor(g.copy())
        o.step(); t.step()
        for i in range(3):
            ours[i].grad = None; theirs[i].grad = None
    step([0]); step([0])                  # param 1 never had a grad yet
    sd = copy.deepcopy(o.state_dict())
    o = getattr(optim, name)([ours[0], ours[1]], lr=0.5, amsgrad=True); o.load_state_dict(sd)
    step([0, 1])
    o.add_param_group({'params': [ours[2]], 'lr': 0.05}); t.add_param_group({'params': [theirs[2]], 'lr': 0.05})
    step([1, 2]); step([0, 1, 2])
    # load torch's state into fresh minitx, with all 3 groups
    o = getattr(optim, name)([{'params': [ours[0], ours[1]]}, {'params': [ours[2]]}], lr=0.5, amsgrad=True); o.load_state_dict(t.state_dict())
    step([2]); step([0, 2])
    print(name, all(np.allclose(p.numpy(), q.detach().numpy(), rtol=1e-12) for p, q in zip(ours, theirs)),
          [o.state_dict()['state'][i].get('step') for i in range(3)], [int(t.state[q]['step']) for q in theirs])
