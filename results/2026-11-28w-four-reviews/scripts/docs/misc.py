import numpy as np, minitx, minitx.functional as F
from minitx.testing import leaf
rng = np.random.default_rng(0)
q, k, v = (leaf(rng.standard_normal((2, 4, 3))) for _ in range(3))
out = F.scaled_dot_product_attention(q, k, v)
saved = out.grad_fn.saved if hasattr(out.grad_fn, "saved") else None
names = ["q","k","v","mask","o","lse","dropout_mask","scores"]
print("attention saved on NumPy:", {n: (None if s is None else getattr(s, "shape", s)) for n, s in zip(names, saved)})
x = leaf([[1.0, np.inf, 0.0]])
print("softmax +inf", F.softmax(x).numpy(), "log_softmax", F.log_softmax(x).numpy(), "logsumexp", F.logsumexp(x, 1).numpy())
r = leaf(np.zeros((1, 4)))
y = F.rms_norm(r, 4, eps=None); y.backward(np.ones((1,4))); print("rms_norm zero row eps=None:", y.numpy(), r.grad.numpy()[0,:2], "1/sqrt(eps64)=", 1/np.sqrt(np.finfo(np.float64).eps))
