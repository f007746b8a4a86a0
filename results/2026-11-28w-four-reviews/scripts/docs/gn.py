import numpy as np, minitx, minitx.functional as F
from minitx.testing import leaf
x = leaf(np.random.default_rng(0).standard_normal((2, 4)))
try:
    print(F.group_norm(x, 4).numpy())
except Exception as e: print(type(e).__name__, e)
try:
    import torch
    print(torch.nn.functional.group_norm(torch.randn(2,4), 4))
except Exception as e: print("torch", type(e).__name__, e)
x1 = leaf(np.ones((1, 4)))
try: F.group_norm(x1, 4); print("N=1 ok")
except Exception as e: print("N=1:", type(e).__name__, e)
try: torch.nn.functional.group_norm(torch.randn(1,4), 4); print("torch N=1 ok")
except Exception as e: print("torch N=1:", type(e).__name__, e)
