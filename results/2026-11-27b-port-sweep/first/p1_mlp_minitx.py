# MLP classifier training loop -- minitx port (workarounds marked "# WA:")
import numpy as np
import minitx
import minitx.nn as nn
import minitx.functional as F
from minitx import optim

minitx.manual_seed(0)
N, D, C = 512, 20, 4
X = minitx.randn(N, D)
W_true = minitx.randn(D, C)
y = (X @ W_true).argmax(dim=1)
assert y.dtype == minitx.int64          # WA: minitx.long missing

model = nn.Sequential(
    nn.Linear(D, 64),
    nn.ReLU(),
    nn.Dropout(0.1),
    nn.Linear(64, C),
)
criterion = nn.CrossEntropyLoss()
opt = optim.Adam(model.parameters(), lr=1e-2)
sgd = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)

def evaluate():
    model.eval()
    with minitx.no_grad():
        logits = model(X)
        pred = logits.argmax(dim=1)
        acc = (pred == y).float().mean().item()
        correct = (pred == y).sum().item()
    model.train()
    return acc, correct

for epoch in range(5):
    perm = minitx.tensor(np.random.permutation(N))   # WA: minitx.randperm missing
    total = 0.0
    for i in range(0, N, 64):
        idx = perm[i:i + 64]
        xb, yb = X[idx], y[idx]
        opt.zero_grad(set_to_none=True)
        out = model(xb)
        loss = criterion(out, yb)
        loss.backward()
        opt.step()
        total += loss.item() * xb.shape[0]          # WA: xb.size(0) -> TypeError 'int' object is not callable
    acc, correct = evaluate()
    print(f"epoch {epoch} loss {total / N:.4f} acc {acc:.3f} correct {correct}")

# misc idioms
probs = F.softmax(model(X[:3]), dim=1)
print(probs.sum(dim=1))
# torch.max(probs, dim=1).values / probs.max(1)[1]:
try:
    print(F.max(probs, dim=1))
except TypeError as e:
    print("F.max(dim=1):", e)
print("probs.max(1)[1] (torch: indices):", probs.max(1)[1].tolist(), " argmax:", probs.argmax(1).tolist())
print(model[0].weight.shape, len(list(model.parameters())))
n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
print("params", n_params)
print(isinstance(model[1], nn.ReLU), model.training)
loss2 = F.cross_entropy(model(X), y, label_smoothing=0.1)
print("ls loss", round(loss2.item(), 3))
print(minitx.__name__, loss.detach().cpu().numpy().shape)
