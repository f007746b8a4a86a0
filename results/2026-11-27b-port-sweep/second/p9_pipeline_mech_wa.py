# Dataset/DataLoader pipeline, device handling, ModuleList, decorators, BCE, ReduceLROnPlateau, early stopping
import copy
import minitx
import minitx.nn as nn
import minitx.nn.functional as F
from minitx.utils.data import TensorDataset, DataLoader, random_split

device = "cuda" if minitx.cuda.is_available() else "cpu"  # WA2: minitx.device missing (AttributeError)
minitx.manual_seed(0)
X = minitx.randn(400, 6)
y = ((X[:, 0] * X[:, 1] + X[:, 2]) > 0).float()
ds = TensorDataset(X, y)
train_ds, val_ds = random_split(ds, [320, 80])
train_dl = DataLoader(train_ds, batch_size=32, shuffle=True, drop_last=True)
val_dl = DataLoader(val_ds, batch_size=64)

class Net(nn.Module):
    def __init__(self, dims=(6, 32, 32)):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])])
        self.out = nn.Linear(dims[-1], 1)
    def forward(self, x):
        for layer in self.layers:
            x = F.dropout(F.relu(layer(x)), p=0.1, training=self.training)
        return self.out(x).squeeze(-1)

model = Net().to(device)
pos_weight = minitx.tensor([(y == 0).sum() / (y == 1).sum()])
crit = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
opt = minitx.optim.Adam(model.parameters(), lr=3e-3)
sched = minitx.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2)

@minitx.no_grad()
def evaluate(dl):
    model.eval()
    tot, correct, n = 0.0, 0, 0
    for xb, yb in dl:
        xb, yb = xb.to(device), yb.to(device)
        logits = model(xb)
        tot += crit(logits, yb).item() * len(xb)
        correct += ((minitx.sigmoid(logits) > 0.5).float() == yb).sum().item()
        n += len(xb)
    model.train()
    return tot / n, correct / n

best, best_state, bad = float("inf"), None, 0
for epoch in range(15):
    for xb, yb in train_dl:
        xb, yb = xb.to(device), yb.to(device)  # WA2: Tensor.to(non_blocking=) TypeError
        loss = crit(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        opt.step()
    vl, va = evaluate(val_dl)
    sched.step(vl)
    if vl < best - 1e-4:
        best, best_state, bad = vl, copy.deepcopy(model.state_dict()), 0
    else:
        bad += 1
print(f"best val {best:.3f} last acc {va:.3f} lr {opt.param_groups[0]['lr']}")
model.load_state_dict(best_state)
with minitx.inference_mode():
    probs = minitx.sigmoid(model.eval()(X[:5].to(device))).cpu()
print([round(p, 3) for p in probs.tolist()], len(train_dl), len(val_ds))
print(F.binary_cross_entropy(probs, y[:5]).item() >= 0)
