# A non-leaf tensor (the classic `randn(..., requires_grad=True) * 0.01` slip) is taken by the optimizer;
# it never gets a .grad, so step() silently does nothing; the second backward then fails with a message
# about a freed graph. PyTorch refuses the non-leaf at construction, naming the problem.
import numpy as np, minitx, torch
from minitx import optim
minitx.manual_seed(0)
w = minitx.randn(3, requires_grad=True) * 0.01          # non-leaf
opt = optim.SGD([w], lr=0.1)                            # minitx: accepted
before = w.numpy().copy()
opt.zero_grad(); loss = ((w - 1.0) ** 2).sum(); loss.backward(); opt.step()
print("minitx after step 1: w.grad =", w.grad, "| w changed:", not np.array_equal(before, w.numpy()))
try:
    opt.zero_grad(); loss = ((w - 1.0) ** 2).sum(); loss.backward()
except RuntimeError as e: print("minitx step 2:", str(e)[:160])
tw = torch.randn(3, requires_grad=True) * 0.01
try: torch.optim.SGD([tw], lr=0.1)
except ValueError as e: print("torch :", e)
