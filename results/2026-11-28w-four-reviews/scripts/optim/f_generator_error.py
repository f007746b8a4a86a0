# A torch.Generator (what ported code passes) is accepted at construction and refused only at the first
# iteration, with a message naming "generator" but neither DataLoader/RandomSampler nor the fix
# (minitx.Generator().manual_seed(n)).
import torch, minitx
from minitx.utils.data import DataLoader, RandomSampler
ds = list(range(10))
loader = DataLoader(ds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(0))
print("constructed OK")
try: next(iter(loader))
except TypeError as e:
    import traceback; print("at first batch:", e)
sampler = RandomSampler(ds, generator=0)
print("RandomSampler(generator=0) constructed OK; len", len(sampler))
try: list(sampler)
except TypeError as e: print("at iteration:", e)
