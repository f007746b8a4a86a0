import numpy as np, torch, minitx, warnings
warnings.filterwarnings("ignore")
from minitx import optim
from t3_sched import opts
rng = np.random.default_rng(0)
metrics = list(np.round(np.cumsum(rng.standard_normal(80)) * 0.1 + 5, 3)) + [3.0]*10 + [-1.0, -1.00001, -1.0, -0.9]*5
cfgs = [dict(), dict(mode='max', patience=2, cooldown=3, factor=0.5), dict(threshold_mode='abs', threshold=0.05, patience=1, min_lr=[0.01, 0.02]),
        dict(mode='max', threshold_mode='abs', threshold=0.0, patience=0, factor=0.3, eps=1e-3), dict(patience=0, cooldown=2, min_lr=0.05, factor=0.9)]
for cfg in cfgs:
    o, t = opts()
    so = optim.lr_scheduler.ReduceLROnPlateau(o, **cfg); st = torch.optim.lr_scheduler.ReduceLROnPlateau(t, **cfg)
    bad = None
    for i, m in enumerate(metrics):
        so.step(m); st.step(m)
        if not np.allclose(so.get_last_lr(), st.get_last_lr(), rtol=1e-14) or so.num_bad_steps != st.num_bad_epochs or so.best != st.best:
            bad = (i, so.get_last_lr(), st.get_last_lr(), so.num_bad_steps, st.num_bad_epochs); break
    print(' ', 'ok' if bad is None else f'MISMATCH {bad}', cfg)
o, t = opts()
so = optim.lr_scheduler.ReduceLROnPlateau(o); st = torch.optim.lr_scheduler.ReduceLROnPlateau(t)
for name in ['last_epoch', 'num_bad_epochs', 'in_cooldown', 'best', 'mode_worse', '_last_lr']:
    print(f'  attr {name}: minitx has={hasattr(so, name)} torch has={hasattr(st, name)}')
print('  state keys minitx', sorted(so.state_dict())); print('  state keys torch ', sorted(st.state_dict()))
for m in [float('nan'), float('inf'), minitx.tensor(1.0), np.float32(2.0)]:
    for lib, s in (('minitx', so), ('torch', st)):
        try: s.step(m); r = 'ok'
        except Exception as e: r = repr(e)[:150]
        print(f'  step({m!r}) {lib}: {r}')
for lib, s in (('minitx', so), ('torch', st)):
    try: s.step(1.0, 5); r = 'ok'
    except Exception as e: r = repr(e)[:150]
    print(f'  step(1.0, epoch=5) {lib}: {r}')
print(isinstance(so, optim.lr_scheduler.LRScheduler), isinstance(st, torch.optim.lr_scheduler.LRScheduler))
