import numpy as np, warnings
warnings.simplefilter("ignore")
import minitx.functional as F
from minitx.testing import leaf
c = leaf(np.full(3, 0.1)); v = F.var(c); v.backward(np.array(1.0)); print("minitx var 0.1x3", v.item(), c.grad.numpy())
for p in (3.0, 0.5):
    t = leaf([np.inf, 1.0, 0.0]); F.norm(t, p).backward(np.array(1.0)); print("minitx norm inf entry p=",p, t.grad.numpy())
t = leaf([np.nan, 0, 2.0]); F.prod(t).backward(np.array(1.0)); print("minitx prod nan02", t.grad.numpy())
