import numpy as np, torch, minitx
from minitx.utils.data import DataLoader, RandomSampler, random_split, WeightedRandomSampler, SubsetRandomSampler
ds = list(range(10))
def order(loader): return [int(i) for b in loader for i in b.numpy().ravel()]
g = minitx.Generator().manual_seed(3)
a = order(DataLoader(ds, batch_size=4, shuffle=True, generator=minitx.Generator().manual_seed(3)))
b = order(DataLoader(ds, batch_size=4, shuffle=True, generator=minitx.Generator().manual_seed(3)))
print('same seed same order', a == b, a)
L = DataLoader(ds, batch_size=4, shuffle=True, generator=g)
e1 = order(L); st = g.get_state(); e2 = order(L); g.set_state(st); e2b = order(L)
print('epochs differ', e1 != e2, 'resume', e2 == e2b)
minitx.manual_seed(5); x1 = order(DataLoader(ds, batch_size=3, shuffle=True)); minitx.manual_seed(5); x2 = order(DataLoader(ds, batch_size=3, shuffle=True))
print('global seed', x1 == x2)
# partially consumed epoch, then a new one
L = DataLoader(ds, batch_size=4, shuffle=True, generator=minitx.Generator().manual_seed(1))
it = iter(L); next(it); e_next = order(L)
print('after partial epoch, new epoch is permutation', sorted(e_next) == ds)
for bad in (torch.Generator(), 42, np.random.default_rng(0)):
    for what, f in (('DataLoader', lambda: order(DataLoader(ds, shuffle=True, generator=bad))), ('RandomSampler', lambda: list(RandomSampler(ds, generator=bad))),
                    ('random_split', lambda: random_split(ds, [5, 5], generator=bad)), ('WeightedRandomSampler', lambda: list(WeightedRandomSampler([1.0, 2.0], 3, generator=bad))),
                    ('SubsetRandomSampler', lambda: list(SubsetRandomSampler([1, 2], generator=bad)))):
        try: f(); r = 'ACCEPTED'
        except Exception as e: r = f'{type(e).__name__}: {str(e)[:170]}'
        print(f'  {what} generator={type(bad).__name__}: {r}')
