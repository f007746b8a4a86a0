import numpy as np, torch, torch.nn.functional as TF
D = torch.float64
def T(v): return torch.tensor(v, dtype=D, requires_grad=True)
x1, x2 = T([[0.3,0.4,0.0]]), T([[1.0,2.0,2.0]])
TF.cosine_similarity(x1, x2, 1, 1.0).sum().backward(); print("torch cos dx1 below eps", x1.grad.numpy().round(3))
x1, x2 = T([[0.0,0,0]]), T([[1.0,2,2]])
y = TF.cosine_similarity(x1, x2); y.sum().backward(); print("torch cos zero x1", y.item(), x1.grad.numpy(), x2.grad.numpy())
x1, x2 = T([[0.0,0,0]]), T([[0.0,0,0]])
y = TF.cosine_similarity(x1, x2); y.sum().backward(); print("torch cos both zero", y.item(), x1.grad.numpy(), x2.grad.numpy())
x1, x2 = T([[0.3,0.4]]), T([[0.4,0.3]])
print("torch cos clamp", TF.cosine_similarity(x1, x2, 1, 0.5).item(), "minitx-style", 0.24/0.25)
# normalize
for v, eps in (([[0.0,0,0]],1e-12), ([[3.0,4.0,0.0]],5.0), ([[0.0,0.0]],0.0)):
    t = T(v); y = TF.normalize(t, 2.0, 1, eps); y.backward(torch.tensor([[1.0,2.0,3.0]][0][:len(v[0])], dtype=D)[None]); print("torch normalize", v, eps, y.detach().numpy(), t.grad.numpy())
# pairwise at equality
same = [[1.0,2.0,3.0]]
for p in (2.0, 1.0, 0.5, float('inf')):
    a, b = T(same), T(same); y = TF.pairwise_distance(a, b, p); y.sum().backward(); print("torch pd same p", p, y.item(), a.grad.numpy())
    a, b = T([[0.0,0,0]]), T([[1e-6]*3]); y = TF.pairwise_distance(a, b, p); y.sum().backward(); print("   d=0:", y.item(), a.grad.numpy())
# cdist inf tie
a, b = T([[0.0,0.0]]), T([[1.0,-1.0]]); y = torch.cdist(a, b, float('inf')); y.sum().backward(); print("torch cdist inf tie", a.grad.numpy())
rows = [[1.0,2.0,3.0],[0.0,1.0,0.0]]
for p in (2.0, 1.0, 0.5, 3.0, 0.0):
    a, b = T(rows), T([[1.0,2.0,3.0]]); y = torch.cdist(a, b, p); y.sum().backward(); print("torch cdist coincide p", p, a.grad.numpy().tolist())
# shortcut
av = np.array([0.6, -1.3, 2.1, 0.4]); bv = av + 1e-9
rng = np.random.default_rng(1)
for nrows in (25, 26):
    X1 = np.vstack([av[None], rng.standard_normal((nrows-1, 4))]); A = T(X1.tolist()); B = T(bv[None].tolist())
    y = torch.cdist(A, B); y.sum().backward(); print("torch cdist rows", nrows, y[0,0].item(), np.linalg.norm(A.grad.numpy()[0]))
