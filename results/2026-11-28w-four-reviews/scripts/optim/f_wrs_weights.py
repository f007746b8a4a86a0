# WeightedRandomSampler takes negative / all-zero / NaN weights at construction (it already reads them there to count
# the weights > 0) and fails only when iterated, with an error that names multinomial, not the sampler.
import numpy as np, minitx
from minitx.utils.data import WeightedRandomSampler, DataLoader
for w in ([1.0, -1.0], [0.0, 0.0], [1.0, float("nan")]):
    s = WeightedRandomSampler(w, 2)
    try: list(DataLoader(list(range(2)), sampler=s))
    except Exception as e: print(w, "constructed; at iteration ->", type(e).__name__, e)
