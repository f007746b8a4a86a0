# LR schedulers, weight init, parameter groups with weight decay
import math
import minitx
import minitx.nn as nn
from minitx.optim.lr_scheduler import StepLR, LambdaLR, CosineAnnealingLR, OneCycleLR

minitx.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(), nn.LayerNorm(32), nn.Linear(32, 1))

def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        if m.bias is not None:
            nn.init.zeros_(m.bias)
model.apply(init_weights)
nn.init.kaiming_normal_(model[2].weight, mode="fan_in", nonlinearity="relu")
nn.init.kaiming_uniform_(model[0].weight, a=math.sqrt(5))
nn.init.normal_(model[5].weight, mean=0.0, std=0.02)
nn.init.constant_(model[5].bias, 0.1)
nn.init.trunc_normal_(model[2].bias, std=0.02)
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
print("OneCycle", lrs(lambda o: OneCycleLR(o, max_lr=0.1, total_steps=10)))

X = minitx.randn(64, 8); Y = X.sum(1, keepdim=True)
sched = CosineAnnealingLR(opt, T_max=50)
for step in range(50):
    loss = __import__('minitx.nn.functional').nn.functional.mse_loss(model(X), Y)  # WA2: minitx.nn has no attribute functional until imported
    opt.zero_grad(); loss.backward(); opt.step(); sched.step()
print("final loss", round(loss.item(), 4), "lr", opt.param_groups[0]["lr"])
for g in opt.param_groups:   # manual LR edit
    g["lr"] = 5e-4
print("edited", [g["lr"] for g in opt.param_groups])
sd = opt.state_dict()
print("opt state keys", sorted(sd.keys()), len(sd["state"]))
