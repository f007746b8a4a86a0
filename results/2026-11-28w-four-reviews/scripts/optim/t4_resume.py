import numpy as np, torch, minitx, copy, warnings
warnings.filterwarnings("ignore")
from minitx import optim
from t3_sched import opts, mom
M, T = optim.lr_scheduler, torch.optim.lr_scheduler
builds = {
 'StepLR': lambda L,o,le: L.StepLR(o, 3, gamma=0.5, last_epoch=le),
 'Exponential': lambda L,o,le: L.ExponentialLR(o, 0.9, last_epoch=le),
 'Cosine': lambda L,o,le: L.CosineAnnealingLR(o, 7, eta_min=0.001, last_epoch=le),
 'CAWR': lambda L,o,le: L.CosineAnnealingWarmRestarts(o, 3, T_mult=2, eta_min=0.001, last_epoch=le),
 'CAWR1': lambda L,o,le: L.CosineAnnealingWarmRestarts(o, 3, last_epoch=le),
 'OneCycle': lambda L,o,le: L.OneCycleLR(o, 1.0, total_steps=30, last_epoch=le),
 'Cyclic': lambda L,o,le: L.CyclicLR(o, 0.01, 0.1, step_size_up=4, last_epoch=le),
 'Linear': lambda L,o,le: L.LinearLR(o, 0.1, total_iters=10, last_epoch=le),
 'Poly': lambda L,o,le: L.PolynomialLR(o, 10, 2.0, last_epoch=le),
 'Lambda': lambda L,o,le: L.LambdaLR(o, lambda e: 0.9**e, last_epoch=le),
 'Constant': lambda L,o,le: L.ConstantLR(o, 0.5, total_iters=8, last_epoch=le),
}
K = 6
for name, b in builds.items():
    # reference: torch uninterrupted
    _, t = opts(); st = b(T, t, -1)
    ref = []
    for i in range(20): st.step(); ref.append(st.get_last_lr())
    # path A: torch run K steps, then resume torch & minitx with last_epoch from torch's opt state
    _, t2 = opts(); s2 = b(T, t2, -1)
    for i in range(K): s2.step()
    tsd = t2.state_dict(); ssd = s2.state_dict()
    # minitx optimizer loads torch's opt state dict and builds scheduler with last_epoch=K
    o3, t3 = opts()
    out = {}
    for lib, L, opt in (('minitx', M, o3), ('torch', T, t3)):
        try:
            opt.load_state_dict(copy.deepcopy(tsd))
            s = b(L, opt, K)
            seq = [s.get_last_lr()]
            for i in range(20 - K - 1): s.step(); seq.append(s.get_last_lr())
            out[lib] = np.array(seq, float)
        except Exception as e:
            out[lib] = repr(e)[:200]
    a, c = out['minitx'], out['torch']
    if isinstance(a, str) or isinstance(c, str):
        print(f"  {name} last_epoch resume: minitx {a if isinstance(a,str) else 'ok'} | torch {c if isinstance(c,str) else 'ok'}")
    elif a.shape != c.shape or not np.allclose(a, c, rtol=1e-12):
        i = np.where(~np.isclose(a, c, rtol=1e-12).all(1))[0][0]
        print(f"  MISMATCH {name} last_epoch resume at {i}: minitx {a[i]} torch {c[i]}")
    else:
        print(f"  ok {name} last_epoch resume", "(torch vs uninterrupted:", np.allclose(c, np.array(ref[K:], float)), ")")
    # path B: minitx run K steps, state_dict round trip into fresh minitx scheduler
    o4, _ = opts(); s4 = b(M, o4, -1)
    for i in range(K): s4.step()
    osd = copy.deepcopy(o4.state_dict()); ssd4 = copy.deepcopy(s4.state_dict())
    o5, _ = opts(); 
    try:
        s5 = b(M, o5, -1); o5.load_state_dict(osd); s5.load_state_dict(ssd4)
        seq = []
        for i in range(20 - K): s5.step(); seq.append(s5.get_last_lr())
        ok = np.allclose(np.array(seq), np.array(ref[K:]), rtol=1e-12)
        print(f"  {'ok' if ok else 'MISMATCH'} {name} state_dict round trip", "" if ok else (seq[:3], ref[K:K+3]))
    except Exception as e:
        print(f"  ERR {name} state_dict round trip {e!r:.200}")
