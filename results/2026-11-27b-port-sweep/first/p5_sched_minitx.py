# LR schedulers, weight init, parameter groups -- minitx port (workarounds marked "# WA:")
import math
import numpy as np
import minitx
import minitx.nn as nn
import minitx.functional as F
import minitx.optim
# WA: from torch.optim.lr_scheduler import StepLR, LambdaLR, CosineAnnealingLR, OneCycleLR -> no such module;
#     minitx.optim has NoamSchedule, WarmupInverseSqrt, WarmupCosine, ReduceLROnPlateau only.
from minitx.optim import WarmupCosine

minitx.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(), nn.LayerNorm(32), nn.Linear(32, 1))

def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        if m.bias is not None:
            nn.init.zeros_(m.bias)
model.apply(init_weights)
# WA: nn.init.kaiming_normal_(w, mode="fan_in", nonlinearity="relu") missing
nn.init.normal_(model[2].weight, 0.0, math.sqrt(2.0 / model[2].weight.shape[1]))
# WA: nn.init.kaiming_uniform_(w, a=math.sqrt(5)) missing
b = math.sqrt(6.0 / ((1 + 5) * model[0].weight.shape[1]))
nn.init.uniform_(model[0].weight, -b, b)
nn.init.normal_(model[5].weight, mean=0.0, std=0.02)
nn.init.normal_(model[5].bias, 0.1, 0.0)              # WA: nn.init.constant_ missing
nn.init.normal_(model[2].bias, std=0.02)              # WA: nn.init.trunc_normal_ missing (untruncated)
nn.init.ones_(model[4].weight)
print("w std", round(model[2].weight.std().item(), 3), "fan_in expect", round(math.sqrt(2 / 32), 3))

decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if p.ndim < 2 or "bias" in name else decay).append(p)
opt = minitx.optim.AdamW([
    {"params": decay, "weight_decay": 0.01},
    {"params": no_decay, "weight_decay": 0.0},
], lr=1e-3)
print("groups", len(opt.param_groups), [len(g["params"]) for g in opt.param_groups],
      [g["weight_decay"] for g in opt.param_groups])

# WA: hand-written LambdaLR on top of param_groups (what a user ends up writing)
class LambdaLR:
    def __init__(self, o, lr_lambda):
        self.o, self.f, self.ep = o, lr_lambda, 0
        self.base = [g["lr"] for g in o.param_groups]
        self._set()
    def _set(self):
        for g, b in zip(self.o.param_groups, self.base):
            g["lr"] = b * self.f(self.ep)
    def step(self):
        self.ep += 1; self._set()
    def get_last_lr(self):
        return [g["lr"] for g in self.o.param_groups]

def StepLR(o, step_size, gamma):
    return LambdaLR(o, lambda ep: gamma ** (ep // step_size))
def CosineAnnealingLR(o, T_max, eta_min=0.0):
    base = o.param_groups[0]["lr"]
    return LambdaLR(o, lambda ep: (eta_min + (base - eta_min) * (1 + math.cos(math.pi * ep / T_max)) / 2) / base)

def lrs(make, steps=10, base=0.1):
    o = minitx.optim.SGD(model.parameters(), lr=base)
    s = make(o)
    out = []
    for _ in range(steps):
        o.step(); s.step()
        out.append(round(o.param_groups[0]["lr"], 5))
    return out, s.get_last_lr()

print("StepLR", lrs(lambda o: StepLR(o, step_size=3, gamma=0.5)))
print("LambdaLR", lrs(lambda o: LambdaLR(o, lr_lambda=lambda ep: 1.0 / (1 + ep))))
print("Cosine", lrs(lambda o: CosineAnnealingLR(o, T_max=10, eta_min=0.001)))
# the built-in closest to CosineAnnealingLR:
print("WarmupCosine", lrs(lambda o: WarmupCosine(o, peak_lr=0.1, warmup_steps=0, total_steps=10, min_lr=0.001)))
# WA: OneCycleLR missing

X = minitx.randn(64, 8); Y = X.sum(1, keepdim=True)
sched = CosineAnnealingLR(opt, T_max=50)
for step in range(50):
    loss = F.mse_loss(model(X), Y)              # nn.functional.mse_loss -> F.mse_loss
    opt.zero_grad(); loss.backward(); opt.step(); sched.step()
print("final loss", round(loss.item(), 4), "lr", opt.param_groups[0]["lr"])
for g in opt.param_groups:
    g["lr"] = 5e-4
print("edited", [g["lr"] for g in opt.param_groups])
sd = opt.state_dict()
print("opt state keys", sorted(sd.keys()), len(sd["state"]))
