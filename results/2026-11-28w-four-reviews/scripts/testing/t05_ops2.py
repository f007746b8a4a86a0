from common import *
import torch

# int arg, correct
class Pow(Function):
    def __init__(self, n): self.n = n
    def forward(self, x):
        self.save_for_backward(x); return x ** self.n
    def backward(self, dy):
        (x,) = self.saved
        return ((self.n * x ** (self.n - 1) if self.n else np.zeros_like(x)) * dy,)
expect_pass("int arg", lambda: run_case(op_case(lambda x, n: Pow(n)(x), arg(), arg(strategy=st.integers(0, 4)),
      numpy=lambda a, n: a ** n, torch=lambda t, n: t ** n)))

# relu wrong only at 0: backward passes dy at x == 0 (torch gives 0)
class ReluAt0(Function):
    def forward(self, x):
        self.save_for_backward(x); return np.maximum(x, 0)
    def backward(self, dy):
        (x,) = self.saved; return (np.where(x >= 0, dy, 0.0),)
expect_fail("relu wrong at 0, edges=(0,), torch", lambda: run_case(op_case(lambda x: ReluAt0()(x), arg(edges=(0.0,)),
      torch="torch.relu")))
expect_pass("relu wrong at 0, edges=(0,), numpy only (documented to pass)", lambda: run_case(op_case(lambda x: ReluAt0()(x), arg(edges=(0.0,), away_from=(0.0,)),
      numpy=lambda a: np.maximum(a, 0))))
# no edges, no away_from: does gradcheck fail spuriously on relu at 0 (hypothesis draws 0 often)?
expect_pass("correct relu, no away_from (expected: fails spuriously at 0 - user error)", lambda: run_case(op_case(F.relu, arg(), numpy=lambda a: np.maximum(a, 0))))

# maximum: whole dy to both sides at tie
class MaxBoth(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b); return np.maximum(a, b)
    def backward(self, dy):
        a, b = self.saved
        return np.where(a >= b, dy, 0.0), np.where(b >= a, dy, 0.0)
expect_fail("max both at tie, torch", lambda: run_case(op_case(lambda a, b: MaxBoth()(a, b), arg(ties=True), arg(ties=True),
      torch="torch.maximum"), n=60))
expect_pass("max both at tie, numpy only (documented to pass)", lambda: run_case(op_case(lambda a, b: MaxBoth()(a, b), arg(ties=True), arg(ties=True),
      numpy=np.maximum), n=60))
