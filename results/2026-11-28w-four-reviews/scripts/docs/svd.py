import numpy as np, torch, minitx, minitx.linalg as LA
from minitx.testing import leaf
rng = np.random.default_rng(3)
for shape in ((5,3),(3,5)):
    A = rng.standard_normal(shape)
    U, S, Vt = np.linalg.svd(A, full_matrices=False); V = Vt.T
    gU, gS, gV = rng.standard_normal(U.shape), rng.standard_normal(S.shape), rng.standard_normal(V.shape)
    a = leaf(A); res = LA.svd(a, full_matrices=False)
    Um, Sm, Vhm = res
    # align signs
    sg = np.sign((Um.numpy()*U).sum(0)); U2, V2 = U*sg, V*sg
    ((Um*minitx.tensor(gU)).sum() + (Sm*minitx.tensor(gS)).sum() + (Vhm.mT*minitx.tensor(gV)).sum()).backward()
    J, K = U2.T@gU, V2.T@gV
    F = np.where(np.eye(len(S))==1, 0.0, 1/(S[None,:]**2 - S[:,None]**2 + np.eye(len(S))))
    F[np.eye(len(S))==1] = 0
    m, n = shape
    hand = U2@(F*((J-J.T)@np.diag(S) + np.diag(S)@(K-K.T)) + np.diag(gS))@V2.T \
         + (np.eye(m)-U2@U2.T)@gU@np.diag(1/S)@V2.T + U2@np.diag(1/S)@gV.T@(np.eye(n)-V2@V2.T)
    print(shape, "svd page formula matches minitx:", np.allclose(a.grad.numpy(), hand, rtol=1e-9, atol=1e-11))
# polar factor at I
a = leaf(np.eye(3)); U,S,Vh = LA.svd(a); (U@Vh).sum().backward(); print("minitx polar grad at I finite?", np.isfinite(a.grad.numpy()).all())
t = torch.eye(3, dtype=torch.float64, requires_grad=True); U,S,Vh = torch.linalg.svd(t); (U@Vh).sum().backward(); print("torch polar grad at I", t.grad.numpy())
# pinv(I) through torch
t = torch.eye(3, dtype=torch.float64, requires_grad=True); torch.linalg.pinv(t).sum().backward(); print("torch pinv(I) grad", t.grad.numpy()[0])
