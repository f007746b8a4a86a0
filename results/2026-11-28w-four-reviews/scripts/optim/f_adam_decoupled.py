# Adam(decoupled_weight_decay=...) (PyTorch >= 2.6 takes it; False is its default) is refused with a bare
# "unexpected keyword argument", though docs say the setting is "refused by name" pointing to AdamW.
import numpy as np, minitx
from minitx import optim
p = minitx.tensor(np.ones(3), requires_grad=True)
for v in (False, True):
    try: optim.Adam([p], decoupled_weight_decay=v)
    except TypeError as e: print(v, "->", e)
