import numpy as np, minitx.kernels.ladder as L, minitx.functional as F, minitx
x = np.array([[1.0, np.inf, 0.0], [1.0, np.nan, 0.0], [-np.inf]*3, [1.0, 2.0, 3.0]])
for r in ("softmax_v1","softmax_v2","softmax_v3"):
    print(r, L.softmax(r, x).tolist())
print("F.softmax", F.softmax(minitx.tensor(x)).numpy().tolist())
