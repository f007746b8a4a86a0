# char-level LSTM / GRU language model with truncated BPTT
import minitx
import minitx.nn as nn
import minitx.nn.functional as F

minitx.manual_seed(0)
text = "hello world, this is a tiny corpus for a tiny char model. " * 20
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
itos = {i: c for c, i in stoi.items()}
V = len(chars)
data = minitx.tensor([stoi[c] for c in text], dtype=minitx.long)

class CharLM(nn.Module):
    def __init__(self, V, E=16, H=64, cell="lstm"):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        rnn_cls = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = rnn_cls(E, H, num_layers=2, batch_first=True, dropout=0.1)
        self.head = nn.Linear(H, V)

    def forward(self, x, h=None):
        out, h = self.rnn(self.emb(x), h)
        return self.head(out), h

B, T = 8, 16
for cell in ["lstm", "gru"]:
    model = CharLM(V, cell=cell)
    opt = minitx.optim.Adam(model.parameters(), lr=3e-3)
    h = None
    n_batches = (len(data) - 1) // (B * T)
    src = data[: n_batches * B * T].view(B, -1)
    tgt = data[1: n_batches * B * T + 1].view(B, -1)
    for step in range(60):
        j = (step * T) % (src.size(1) - T)
        x, yt = src[:, j:j + T], tgt[:, j:j + T]
        if h is not None:
            h = tuple(s.detach() for s in h) if isinstance(h, tuple) else h.detach()
        logits, h = model(x, h)
        loss = F.cross_entropy(logits.view(-1, V), yt.reshape(-1))
        opt.zero_grad()
        loss.backward()
        norm = minitx.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    print(cell, "loss", round(loss.item(), 3), "gradnorm", type(norm).__name__)

    # sampling
    model.eval()
    with minitx.no_grad():
        idx = minitx.tensor([[stoi["h"]]])
        h = None
        out = []
        for _ in range(30):
            logits, h = model(idx, h)
            p = F.softmax(logits[:, -1, :] / 0.8, dim=-1)
            idx = minitx.multinomial(p, num_samples=1)
            out.append(itos[idx.item()])
        print(repr("".join(out)))
    hs = h[0] if isinstance(h, tuple) else h
    print("hidden", tuple(hs.shape), "out", tuple(logits.shape))
    print([n for n, _ in model.rnn.named_parameters()][:4])
