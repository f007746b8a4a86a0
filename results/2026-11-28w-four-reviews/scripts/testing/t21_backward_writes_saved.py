from common import *
class ExpWritesSaved(Function):
    def forward(self, x):
        y = np.exp(x); self.save_for_backward(y); return y
    def backward(self, dy):
        (y,) = self.saved; y *= dy; return (y,)
class SquareWritesInput(Function):
    def forward(self, x):
        self.save_for_backward(x); return x * x
    def backward(self, dy):
        (x,) = self.saved; x *= 2; return (x * dy,)
for name, op, ref, tref in [("exp writes saved", ExpWritesSaved, np.exp, "torch.exp"), ("square writes input", SquareWritesInput, np.square, "torch.square")]:
    expect_fail(name + ": check_gradients", lambda: check_gradients(lambda x: op()(x), leaf([1.0, 2.0])))
    expect_fail(name + ": op_case numpy", lambda: run_case(op_case(lambda x: op()(x), arg(), numpy=ref), n=5))
    expect_fail(name + ": op_case torch", lambda: run_case(op_case(lambda x: op()(x), arg(), torch=tref), n=5))
from minitx.testing import check_backward_hygiene
expect_fail("exp writes saved: check_backward_hygiene alone", lambda: check_backward_hygiene(lambda x: ExpWritesSaved()(x), leaf([1.0, 2.0])))
e = expect_fail("exp writes saved: check_gradients type", lambda: check_gradients(lambda x: ExpWritesSaved()(x), leaf([1.0, 2.0])))
print("is GradcheckError (as check_gradients' docstring says):", isinstance(e, GradcheckError))
