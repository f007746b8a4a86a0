import numpy as np, torch, minitx, math, warnings
warnings.filterwarnings("ignore")
from minitx import optim
M, T = optim.lr_scheduler, torch.optim.lr_scheduler

def opts(kind='SGD', lrs=(0.1, 0.03)):
    p1 = minitx.tensor(np.zeros(2), requires_grad=True); p2 = minitx.tensor(np.zeros(3), requires_grad=True)
    q1 = torch.zeros(2, requires_grad=True); q2 = torch.zeros(3, requires_grad=True)
    kw = dict(momentum=0.9) if kind == 'SGD' else {}
    o = getattr(optim, kind)([{'params': [p1], 'lr': lrs[0]}, {'params': [p2], 'lr': lrs[1]}], lr=lrs[0], **kw)
    t = getattr(torch.optim, kind)([{'params': [q1], 'lr': lrs[0]}, {'params': [q2], 'lr': lrs[1]}], lr=lrs[0], **kw)
    return o, t

def mom(opt):
    out = []
    for g in opt.param_groups:
        if 'betas' in g: out.append(float(g['betas'][0]))
        elif 'momentum' in g: out.append(float(g['momentum']))
    return out

def cmp(tag, build, n=40, kind='SGD', stepper=None, tol=1e-12):
    o, t = opts(kind)
    try:
        so = build(M, o)
    except Exception as e:
        so = e
    try:
        st = build(T, t)
    except Exception as e:
        st = e
    if isinstance(so, Exception) or isinstance(st, Exception):
        print(f"  {tag}: minitx -> {so!r:.200} | torch -> {st!r:.200}"); return
    lo, lt = [so.get_last_lr()], [st.get_last_lr()]
    mo, mt = [mom(o)], [mom(t)]
    for i in range(n):
        try:
            if stepper: stepper(so, i)
            else: so.step()
            ro = None
        except Exception as e: ro = e
        try:
            if stepper: stepper(st, i)
            else: st.step()
            rt = None
        except Exception as e: rt = e
        if ro or rt:
            if (ro is None) != (rt is None):
                print(f"  {tag}: at step {i+1}: minitx {ro!r:.150} torch {rt!r:.150}")
            break
        lo.append(so.get_last_lr()); lt.append(st.get_last_lr()); mo.append(mom(o)); mt.append(mom(t))
    lo = np.array(lo, float); lt = np.array(lt, float)
    bad = np.where(~np.isclose(lo, lt, rtol=tol, atol=1e-15).all(1))[0]
    gbad = np.where(~np.isclose(np.array([[g['lr'] for g in o.param_groups]]), np.array([[g['lr'] for g in t.param_groups]]), rtol=tol, atol=1e-15).all(1))[0]
    mbad = [i for i,(a,b) in enumerate(zip(mo,mt)) if not np.allclose(a,b,rtol=tol,atol=1e-15)]
    if len(bad) or len(mbad) or len(gbad):
        i = bad[0] if len(bad) else (mbad[0] if mbad else -1)
        print(f"  MISMATCH {tag}: first at {i}: minitx {lo[i] if len(bad) else mo[i]} torch {lt[i] if len(bad) else mt[i]}; groups-lr mismatch {len(gbad)>0}")
    else:
        print(f"  ok {tag}")
    return so, st

if __name__ == '__main__':
    C = cmp
    C('StepLR', lambda L,o: L.StepLR(o, 3, gamma=0.5))
    C('MultiStepLR rep', lambda L,o: L.MultiStepLR(o, [2, 5, 5, 9], gamma=0.5))
    C('ExponentialLR', lambda L,o: L.ExponentialLR(o, 0.9))
    C('ConstantLR', lambda L,o: L.ConstantLR(o, factor=0.25, total_iters=4))
    C('LinearLR', lambda L,o: L.LinearLR(o, start_factor=0.1, end_factor=0.5, total_iters=7))
    C('LinearLR dec', lambda L,o: L.LinearLR(o, start_factor=1.0, end_factor=0.0, total_iters=7))
    C('PolynomialLR', lambda L,o: L.PolynomialLR(o, total_iters=6, power=2.5))
    C('PolynomialLR p0', lambda L,o: L.PolynomialLR(o, total_iters=6, power=0.0))
    C('Cosine', lambda L,o: L.CosineAnnealingLR(o, T_max=7, eta_min=0.001), n=60)
    C('Cosine T1', lambda L,o: L.CosineAnnealingLR(o, T_max=1, eta_min=0.01), n=10)
    C('Cosine eta>base', lambda L,o: L.CosineAnnealingLR(o, T_max=5, eta_min=0.2), n=20)
    C('CAWR', lambda L,o: L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001), n=60)
    C('CAWR Tm1', lambda L,o: L.CosineAnnealingWarmRestarts(o, T_0=4), n=30)
    C('CAWR frac epochs', lambda L,o: L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2), n=60, stepper=lambda s,i: s.step(i*0.37))
    C('CAWR frac Tm1', lambda L,o: L.CosineAnnealingWarmRestarts(o, T_0=3), n=60, stepper=lambda s,i: s.step(i*0.37))
    C('CAWR int epochs T_mult 3', lambda L,o: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=3), n=60, stepper=lambda s,i: s.step(i))
    C('Lambda', lambda L,o: L.LambdaLR(o, [lambda e: 0.9**e, lambda e: 1/(e+1)]))
    C('Multiplicative', lambda L,o: L.MultiplicativeLR(o, lambda e: 0.95))
    C('OneCycle', lambda L,o: L.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=30), n=30)
    C('OneCycle 3phase lin', lambda L,o: L.OneCycleLR(o, max_lr=1.0, total_steps=30, three_phase=True, anneal_strategy='linear', pct_start=0.4), n=30)
    C('OneCycle adam', lambda L,o: L.OneCycleLR(o, max_lr=1.0, epochs=3, steps_per_epoch=7, base_momentum=0.7), n=21, kind='Adam')
    C('OneCycle past end', lambda L,o: L.OneCycleLR(o, max_lr=1.0, total_steps=10), n=12)
    C('OneCycle pct 0', lambda L,o: L.OneCycleLR(o, max_lr=1.0, total_steps=10, pct_start=0.0), n=10)
    C('OneCycle tiny', lambda L,o: L.OneCycleLR(o, max_lr=1.0, total_steps=2), n=2)
    C('OneCycle nomom', lambda L,o: L.OneCycleLR(o, max_lr=1.0, total_steps=20, cycle_momentum=False), n=20)
    C('Cyclic tri', lambda L,o: L.CyclicLR(o, 0.01, 0.1, step_size_up=4, step_size_down=2), n=30)
    C('Cyclic tri2', lambda L,o: L.CyclicLR(o, [0.01,0.02], [0.1,0.3], step_size_up=3, mode='triangular2'), n=30)
    C('Cyclic exp', lambda L,o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode='exp_range', gamma=0.9), n=30)
    C('Cyclic adam', lambda L,o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, base_momentum=0.5, max_momentum=0.95), n=30, kind='Adam')
    C('Cyclic fn iter', lambda L,o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, scale_fn=lambda x: 1/(1+x), scale_mode='iterations'), n=30)
    C('Cyclic fn cycle', lambda L,o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, scale_fn=lambda x: 1/(1+x)), n=30)
    C('Cyclic frac', lambda L,o: L.CyclicLR(o, 0.01, 0.1, step_size_up=2.5, step_size_down=1.5), n=30)
    C('Cyclic down0', lambda L,o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=0), n=30)
    C('Cyclic nomom rms', lambda L,o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, cycle_momentum=False), n=30, kind='RMSprop')
    C('Cyclic mom rmsprop', lambda L,o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3), n=30, kind='RMSprop')
    C('Seq', lambda L,o: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=4), L.ExponentialLR(o, 0.9), L.StepLR(o, 2, 0.5)], milestones=[3, 8]), n=20)
    C('Seq cos', lambda L,o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, total_iters=10), L.CosineAnnealingLR(o, 5, eta_min=0.001)], milestones=[4]), n=20)
    C('Seq lambda/multiplicative', lambda L,o: L.SequentialLR(o, [L.LambdaLR(o, lambda e: (e+1)/5), L.MultiplicativeLR(o, lambda e: 0.8)], milestones=[4]), n=20)
    C('Seq poly', lambda L,o: L.SequentialLR(o, [L.ExponentialLR(o, 0.5), L.PolynomialLR(o, 5, 2.0)], milestones=[3]), n=20)
    C('Seq milestone 0', lambda L,o: L.SequentialLR(o, [L.ExponentialLR(o, 0.5), L.StepLR(o, 2, 0.5)], milestones=[0]), n=10)
    C('Seq multistep', lambda L,o: L.SequentialLR(o, [L.ExponentialLR(o, 0.5), L.MultiStepLR(o, [1, 3], 0.5)], milestones=[2]), n=10)
    C('Seq cawr', lambda L,o: L.SequentialLR(o, [L.ExponentialLR(o, 0.5), L.CosineAnnealingWarmRestarts(o, 3)], milestones=[2]), n=12)
    C('Seq nested seq', lambda L,o: L.SequentialLR(o, [L.SequentialLR(o, [L.ConstantLR(o, 0.5, total_iters=3), L.ExponentialLR(o, 0.9)], milestones=[2]), L.StepLR(o, 2, 0.5)], milestones=[5]), n=12)
    C('Chained', lambda L,o: L.ChainedScheduler([L.ConstantLR(o, 0.5, total_iters=4), L.ExponentialLR(o, 0.9)]), n=12)
    C('Chained cos', lambda L,o: L.ChainedScheduler([L.CosineAnnealingLR(o, 5), L.LinearLR(o, 0.2, total_iters=3)]), n=12)
    C('Chained lambda', lambda L,o: L.ChainedScheduler([L.LambdaLR(o, lambda e: 0.9**e), L.MultiStepLR(o, [2, 4])]), n=12)
