import numpy as np, torch, torch.nn.functional as TF
import minitx.functional as F
from minitx.testing import leaf
def tgrad(f, at):
    t = torch.tensor([at], dtype=torch.float64, requires_grad=True); f(t).sum().backward(); return t.grad.item()
def mgrad(f, at):
    x = leaf([at]); f(x).backward(np.ones(1)); return x.grad.numpy()[0]
cases = [("relu",TF.relu,F.relu,0.0),("leaky",lambda t:TF.leaky_relu(t,0.1),lambda t:F.leaky_relu(t,0.1),0.0),
 ("elu",lambda t:TF.elu(t,0.5),lambda t:F.elu(t,0.5),0.0),("hardtanh-1",TF.hardtanh,F.hardtanh,-1.0),("hardtanh1",TF.hardtanh,F.hardtanh,1.0),
 ("relu6 0",TF.relu6,F.relu6,0.0),("relu6 6",TF.relu6,F.relu6,6.0),("hsig-3",TF.hardsigmoid,F.hardsigmoid,-3.0),("hsig3",TF.hardsigmoid,F.hardsigmoid,3.0),
 ("hswish-3",TF.hardswish,F.hardswish,-3.0),("hswish3",TF.hardswish,F.hardswish,3.0),
 ("threshold",lambda t:TF.threshold(t,0.5,-1.0),lambda t:F.threshold(t,0.5,-1.0),0.5),
 ("hardshrink.5",TF.hardshrink,F.hardshrink,0.5),("hardshrink-.5",TF.hardshrink,F.hardshrink,-0.5),
 ("softshrink.5",TF.softshrink,F.softshrink,0.5),("softshrink-.5",TF.softshrink,F.softshrink,-0.5),
 ("selu0",TF.selu,F.selu,0.0),("celu0",lambda t:TF.celu(t,2.0),lambda t:F.celu(t,2.0),0.0)]
for name,tf,mf,at in cases:
    print(f"{name:15s} torch={tgrad(tf,at)!r:22} minitx={mgrad(mf,at)!r}")
