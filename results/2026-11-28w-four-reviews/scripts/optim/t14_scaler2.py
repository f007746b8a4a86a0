import numpy as np, torch, minitx, warnings
warnings.filterwarnings("ignore")
from minitx import optim
res = {}
for lib, O, GS in ((minitx, optim, lambda **k: optim.GradScaler(**k)), (torch, torch.optim, lambda **k: torch.amp.GradScaler("cpu", **k))):
    a = lib.tensor(np.ones(3, np.float32), requires_grad=True); b = lib.tensor(np.ones(2, np.float32), requires_grad=True)
    oa = O.SGD([a], lr=0.1); ob = O.Adam([b], lr=0.1)
    s = GS(init_scale=8.0, growth_interval=2)
    out = []
    for step in range(6):
        oa.zero_grad(); ob.zero_grad()
        cb = np.array([1.0, np.inf if step == 2 else 2.0], np.float32)
        loss = (a * lib.tensor(np.full(3, 0.5, np.float32))).sum() + (b * lib.tensor(cb)).sum()
        s.scale(loss).backward()
        r1 = s.step(oa); r2 = s.step(ob); s.update()
        out.append((s.get_scale(), (a.detach() if lib is torch else a).numpy().round(4).tolist(), (b.detach() if lib is torch else b).numpy().round(4).tolist(), r1, r2))
    sd = s.state_dict(); s2 = GS(); s2.load_state_dict(sd)
    out.append(('loaded scale', s2.get_scale(), s2.state_dict() == sd))
    out.append(('step with closure', ))
    try: oa.zero_grad(); s.scale((a*1.0).sum()).backward(); out.append(s.step(oa, lambda: 1.0))
    except Exception as e: out.append(f'{type(e).__name__}: {str(e)[:100]}')
    res[lib.__name__] = out
for x, y in zip(res['minitx'], res['torch']): print(('  ' if x == y else '* '), x, '|', y)
