import numpy as np, torch, minitx, copy, warnings
warnings.filterwarnings("ignore")
from minitx import optim
from t3_sched import cmp, opts
M, T = optim.lr_scheduler, torch.optim.lr_scheduler
cmp('Seq onecycle', lambda L,o: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=3), L.OneCycleLR(o, 1.0, total_steps=20)], milestones=[3]), n=22)
cmp('Seq cyclic', lambda L,o: L.SequentialLR(o, [L.ConstantLR(o, 0.1, total_iters=3), L.CyclicLR(o, 0.01, 0.1, step_size_up=3)], milestones=[4]), n=20)
cmp('Seq chained first', lambda L,o: L.SequentialLR(o, [L.ChainedScheduler([L.ConstantLR(o, 0.5, total_iters=3), L.ExponentialLR(o, 0.9)]), L.StepLR(o, 2)], milestones=[5]), n=12)
cmp('Chained seq inside', lambda L,o: L.ChainedScheduler([L.SequentialLR(o, [L.ConstantLR(o, 0.5, total_iters=3), L.ExponentialLR(o, 0.9)], milestones=[2]), L.StepLR(o, 3, 0.5)]), n=12)
cmp('Seq last_epoch', lambda L,o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, total_iters=3), L.ExponentialLR(o, 0.9)], milestones=[2]), n=12)
cmp('Seq 3 with CAWR mid', lambda L,o: L.SequentialLR(o, [L.LinearLR(o, 0.2, total_iters=2), L.CosineAnnealingWarmRestarts(o, 2, 2), L.ExponentialLR(o, 0.5)], milestones=[2, 9]), n=14)
cmp('Seq Lambda second', lambda L,o: L.SequentialLR(o, [L.LinearLR(o, 0.2, total_iters=2), L.LambdaLR(o, lambda e: 0.5 ** e)], milestones=[3]), n=10)
cmp('Seq Multiplicative second', lambda L,o: L.SequentialLR(o, [L.LinearLR(o, 0.2, total_iters=2), L.MultiplicativeLR(o, lambda e: 0.5)], milestones=[3]), n=10)
cmp('Seq Constant second', lambda L,o: L.SequentialLR(o, [L.ExponentialLR(o, 0.5), L.ConstantLR(o, 0.5, total_iters=3)], milestones=[3]), n=10)
cmp('Seq Linear second', lambda L,o: L.SequentialLR(o, [L.ExponentialLR(o, 0.5), L.LinearLR(o, 0.5, total_iters=3)], milestones=[3]), n=10)
cmp('Seq Cosine second', lambda L,o: L.SequentialLR(o, [L.ExponentialLR(o, 0.5), L.CosineAnnealingLR(o, 4, 0.001)], milestones=[3]), n=14)
# round trip of SequentialLR / ChainedScheduler mid-run
for name, b in {'Seq': lambda L,o: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=4), L.CosineAnnealingLR(o, 6)], milestones=[4]),
                'Chained': lambda L,o: L.ChainedScheduler([L.LinearLR(o, 0.1, total_iters=4), L.ExponentialLR(o, 0.9)]),
                'Cyclic': lambda L,o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode='triangular2'),
                'OneCycle': lambda L,o: L.OneCycleLR(o, 1.0, total_steps=20, three_phase=True)}.items():
    o, _ = opts(); s = b(M, o); ref = []
    for i in range(15): s.step(); ref.append(s.get_last_lr())
    o1, _ = opts(); s1 = b(M, o1)
    for i in range(5): s1.step()
    osd, ssd = copy.deepcopy(o1.state_dict()), copy.deepcopy(s1.state_dict())
    import json
    try: json.dumps(ssd); js = 'json-ok'
    except Exception as e: js = f'json-fail {e}'
    o2, _ = opts(); s2 = b(M, o2); o2.load_state_dict(osd); s2.load_state_dict(ssd)
    seq = []
    for i in range(10): s2.step(); seq.append(s2.get_last_lr())
    print(' ', name, 'round trip', 'ok' if np.allclose(seq, ref[5:], rtol=1e-12) else f'MISMATCH {seq[:2]} vs {ref[5:7]}', js)
