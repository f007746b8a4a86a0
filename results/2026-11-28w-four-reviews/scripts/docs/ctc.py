import numpy as np, torch, minitx, minitx.functional as F
from minitx.testing import leaf
rng = np.random.default_rng(0); T,N,C = 4,2,3
z = rng.standard_normal((T,N,C)); lp = z - np.logaddexp.reduce(z, axis=-1, keepdims=True)
x = leaf(lp); l = F.ctc_loss(x, minitx.tensor([[1,1,1],[1,2,1]]), (4,4), (3,3), reduction="none"); l.backward(np.ones(2))
print("minitx loss", l.numpy(), "grad entry0 nan?", np.isnan(x.grad.numpy()[:,0]).all(), "entry1 finite", np.isfinite(x.grad.numpy()[:,1]).all())
xt = torch.tensor(lp, requires_grad=True)
lt = torch.nn.functional.ctc_loss(xt, torch.tensor([[1,1,1],[1,2,1]]), (4,4), (3,3), reduction="none"); lt.sum().backward()
print("torch loss", lt.tolist(), "grad entry0", xt.grad[:,0].tolist())
