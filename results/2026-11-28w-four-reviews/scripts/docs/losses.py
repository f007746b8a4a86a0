import numpy as np, torch, torch.nn.functional as TF, warnings
warnings.simplefilter("ignore")
import minitx, minitx.functional as F
from minitx.testing import leaf
# BCE target grad at p=0
p = torch.tensor([0.0, 0.2], dtype=torch.float64, requires_grad=True); y = torch.tensor([1.0, 0.0], dtype=torch.float64, requires_grad=True)
TF.binary_cross_entropy(p, y, reduction="sum").backward(); print("torch bce dp", p.grad.tolist(), "dy", y.grad.tolist())
# KL at y=0
x = torch.tensor([-1.0, -1.0], dtype=torch.float64); yy = torch.tensor([0.0, 0.5], dtype=torch.float64, requires_grad=True)
TF.kl_div(x, yy, reduction="sum").backward(); print("torch kl dtarget at y=0", yy.grad.tolist())
e = leaf([0.0, 0.5])
with np.errstate(divide="ignore"):
    F.kl_div(minitx.tensor(np.array([-1.0, -1.0])), e, reduction="sum").backward()
print("minitx kl dtarget", e.grad.numpy())
print("torch kl neg y", TF.kl_div(x, torch.tensor([-0.5, 0.5], dtype=torch.float64), reduction="none").tolist())
try: print("minitx kl neg y", F.kl_div(minitx.tensor(np.array([-1.0,-1.0])), minitx.tensor(np.array([-0.5,0.5])), reduction="none").numpy())
except Exception as ex: print("minitx kl neg y raises", type(ex).__name__, ex)
print("torch kl x=-inf y=0", TF.kl_div(torch.tensor([-np.inf]), torch.tensor([0.0]), reduction="none").tolist())
print("torch kl logt t=-inf", TF.kl_div(torch.tensor([-1.0]), torch.tensor([-np.inf]), reduction="none", log_target=True).tolist())
print("torch mse empty", TF.mse_loss(torch.zeros(0,3), torch.zeros(0,3)).item())
# smooth l1 at |d|=beta
xs = torch.tensor([1.0], dtype=torch.float64, requires_grad=True); l = TF.smooth_l1_loss(xs, torch.zeros(1, dtype=torch.float64), beta=1.0); l.backward(); print("torch sl1 at beta", l.item(), xs.grad.item())
xm = leaf([1.0]); lm = F.smooth_l1_loss(xm, minitx.tensor(np.zeros(1)), beta=1.0); lm.backward(); print("minitx sl1", lm.item(), xm.grad.numpy())
try: TF.huber_loss(torch.zeros(1), torch.ones(1), delta=0.0); print("torch huber delta 0 accepted")
except Exception as ex: print("torch huber delta0:", ex)
try: TF.smooth_l1_loss(torch.zeros(1), torch.ones(1), beta=-1.0); print("torch sl1 beta<0 accepted")
except Exception as ex: print("torch sl1 beta<0:", ex)
