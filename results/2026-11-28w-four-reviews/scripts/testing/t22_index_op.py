# an op with an integer-tensor argument: take rows; the wrong one assigns instead of adding at repeated indices
from common import *
import torch
class Take(Function):
    def __init__(self, add=True): self.add = add
    def forward(self, x, idx):
        self.save_for_backward(idx); self.n = x.shape[0]; return x[idx]
    def backward(self, dy):
        (idx,) = self.saved
        g = np.zeros((self.n,) + dy.shape[1:] if dy.ndim else (self.n,))
        if self.add: np.add.at(g, idx, dy)
        else: g[idx] = dy
        return g, None
def case(add):
    return op_case(lambda x, i: Take(add)(x, i), arg(shape=mst.shapes(min_dims=1, max_dims=2)),
                   arg(strategy=lambda x: mst.index_arrays(mst.shapes(min_dims=1, max_dims=1, max_side=6), x[0])),
                   numpy=lambda a, i: a[i], torch=lambda t, i: t[i])
expect_pass("take correct", lambda: run_case(case(True), n=40))
expect_fail("take wrong at repeated indices", lambda: run_case(case(False), n=40, shrink=True))
