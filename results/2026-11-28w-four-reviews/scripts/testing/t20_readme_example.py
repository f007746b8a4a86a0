import minitx.functional as F
from minitx.testing import arg, op_test, strategies as mst

test_linear = op_test(F.linear, arg(), arg(shape=lambda x: (3, x[-1])), arg(shape=lambda x, w: w[:1]),
                      numpy=lambda x, w, b: x @ w.T + b, torch="torch.nn.functional.linear",
                      shapes=mst.shapes(min_dims=1, max_dims=3))
test_linear()  # pytest collects it by its name; calling it runs it too
