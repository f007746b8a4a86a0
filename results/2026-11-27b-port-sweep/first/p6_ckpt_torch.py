# state_dict save/load, named_parameters, freezing, fine-tuning, param_groups lr edit
import copy, os, tempfile
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 16))
        self.head = nn.Linear(16, 3)
    def forward(self, x):
        return self.head(F.relu(self.body(x)))

m = Backbone()
X, y = torch.randn(64, 10), torch.randint(0, 3, (64,))
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
for _ in range(20):
    opt.zero_grad(); F.cross_entropy(m(X), y).backward(); opt.step()

d = tempfile.mkdtemp()
path = os.path.join(d, "ckpt.pt")
torch.save({"model": m.state_dict(), "opt": opt.state_dict(), "epoch": 20}, path)
ck = torch.load(path)
m2 = Backbone()
missing = m2.load_state_dict(ck["model"])
print("load result", missing)
opt2 = torch.optim.Adam(m2.parameters(), lr=1e-2)
opt2.load_state_dict(ck["opt"])
m.eval(); m2.eval()
with torch.no_grad():
    print("same outputs", torch.equal(m(X), m2(X)), "epoch", ck["epoch"])
print("keys", list(m.state_dict().keys())[:6])
sd = m.state_dict()
print("sd value type", type(sd["head.weight"]).__name__, sd["body.1.num_batches_tracked"].item())
# partial load, strict=False
res = m2.load_state_dict({k: v for k, v in sd.items() if not k.startswith("head")}, strict=False)
print("missing", res.missing_keys, "unexpected", res.unexpected_keys)
# snapshots: deepcopy and clone
best = copy.deepcopy(m.state_dict())
snap = {k: v.clone() for k, v in m.state_dict().items()}
# freeze body, fine-tune head
for name, p in m.named_parameters():
    if name.startswith("body"):
        p.requires_grad_(False)
m.body.requires_grad_(False)
trainable = [p for p in m.parameters() if p.requires_grad]
print("trainable", sum(p.numel() for p in trainable), [n for n, p in m.named_parameters() if p.requires_grad])
ft = torch.optim.SGD(filter(lambda p: p.requires_grad, m.parameters()), lr=0.1)
m.train()
w0 = m.body[0].weight.clone()
for _ in range(5):
    ft.zero_grad(); loss = F.cross_entropy(m(X), y); loss.backward(); ft.step()
print("body unchanged", torch.equal(w0, m.body[0].weight), "body grad kept", m.body[0].weight.grad is not None)
ft.param_groups[0]["lr"] *= 0.1
print("lr", ft.param_groups[0]["lr"])
m.load_state_dict(best)
print("restored", torch.allclose(m.head.weight, snap["head.weight"]))
print("n modules", len(list(m.modules())), [n for n, _ in m.named_children()])
with torch.no_grad():
    m.head.weight.copy_(torch.zeros_like(m.head.weight))
    m.head.bias.fill_(1.0)
print("head out", m.eval()(X[:2]).tolist())
torch.save(m, os.path.join(d, "full.pt"))
print(os.path.exists(os.path.join(d, "full.pt")))
