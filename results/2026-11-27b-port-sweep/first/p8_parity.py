# Same weights, same data, same optimizer: does a minitx training run track PyTorch's?
# (catches silent numeric differences: BatchNorm running stats, optimizer formulas, RNNs, losses)
import numpy as np
import torch, torch.nn as tnn, torch.nn.functional as TF
import minitx, minitx.nn as mnn, minitx.functional as MF, minitx.optim as mopt

def build(nn, kind):
    if kind == "cnn":
        return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.0), nn.Linear(8, 4))
    if kind == "mlp":
        return nn.Sequential(nn.Linear(10, 32), nn.LayerNorm(32), nn.GELU(), nn.Linear(32, 32), nn.BatchNorm1d(32),
                             nn.Tanh(), nn.Linear(32, 4))
    if kind in ("lstm", "gru"):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(12, 8)
                self.rnn = (nn.LSTM if kind == "lstm" else nn.GRU)(8, 16, num_layers=2, batch_first=True)
                self.fc = nn.Linear(16, 12)
            def forward(self, x):
                return self.fc(self.rnn(self.emb(x))[0])
        return M()

rng = np.random.default_rng(0)
data = {
    "cnn": (rng.standard_normal((16, 3, 8, 8)).astype(np.float32), rng.integers(0, 4, 16)),
    "mlp": (rng.standard_normal((16, 10)).astype(np.float32), rng.integers(0, 4, 16)),
    "lstm": (rng.integers(0, 12, (4, 7)), rng.integers(0, 12, (4, 7))),
}
data["gru"] = data["lstm"]
opts = {
    "sgd_mom_nesterov_wd": (lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
                            lambda p: mopt.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)),
    "adam_wd": (lambda p: torch.optim.Adam(p, lr=1e-2, weight_decay=1e-2),
                lambda p: mopt.Adam(p, lr=1e-2, weight_decay=1e-2)),
    "adamw_default": (lambda p: torch.optim.AdamW(p, lr=1e-2), lambda p: mopt.AdamW(p, lr=1e-2)),
    "adam_amsgrad": (lambda p: torch.optim.Adam(p, lr=1e-2, amsgrad=True), lambda p: mopt.Adam(p, lr=1e-2, amsgrad=True)),
}
for kind in ["cnn", "mlp", "lstm", "gru"]:
    for oname, (tmk, mmk) in opts.items():
        torch.manual_seed(0)
        tm = build(tnn, kind); mm = build(mnn, kind)
        mm.load_state_dict(tm.state_dict())
        to, mo = tmk(tm.parameters()), mmk(mm.parameters())
        X, Y = data[kind]
        tX, tY = torch.tensor(X), torch.tensor(Y)
        mX, mY = minitx.tensor(X), minitx.tensor(Y)
        worst = 0.0
        for step in range(8):
            tout, mout = tm(tX), mm(mX)
            tl = TF.cross_entropy(tout.reshape(-1, tout.shape[-1]), tY.reshape(-1))
            ml = MF.cross_entropy(mout.reshape(-1, mout.shape[-1]), mY.reshape(-1))
            to.zero_grad(); tl.backward(); to.step()
            mo.zero_grad(); ml.backward(); mo.step()
            worst = max(worst, abs(tl.item() - ml.item()))
        tm.eval(); mm.eval()
        with torch.no_grad(), minitx.no_grad():
            d_eval = float(np.abs(tm(tX).numpy() - mm(mX).numpy()).max())
        tsd, msd = tm.state_dict(), mm.state_dict()
        d_state = {k: float(np.abs(tsd[k].numpy().astype(float) - np.asarray(msd[k], dtype=float)).max())
                   for k in tsd if k in msd}
        bad = {k: f"{v:.2e}" for k, v in d_state.items() if v > 1e-4}
        only = sorted(set(tsd) ^ set(msd))
        flag = "OK  " if worst < 1e-4 and d_eval < 1e-3 and not bad else "DIFF"
        print(f"{flag} {kind:4s} {oname:20s} max|dloss|={worst:.2e} eval max|dout|={d_eval:.2e} "
              f"state diffs>1e-4: {bad if bad else '-'} keys only in one: {only if only else '-'}")
