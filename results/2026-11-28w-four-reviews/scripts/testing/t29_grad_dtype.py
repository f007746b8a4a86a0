# a backward returning a float32 gradient for a float64 input
from common import *
class ExpGrad32(Function):
    def forward(self, x):
        y = np.exp(x); self.save_for_backward(y); return y
    def backward(self, dy):
        (y,) = self.saved; return ((dy * y).astype(np.float32),)
x = leaf([0.5, 1.0, 2.0]); ExpGrad32()(x).sum().backward(); print("x.grad dtype:", x.grad.dtype)
expect_fail("check_gradients", lambda: check_gradients(lambda x: ExpGrad32()(x), leaf([0.5, 1.0, 2.0])))
expect_fail("op_case numpy", lambda: run_case(op_case(lambda x: ExpGrad32()(x), arg(), numpy=np.exp)))
expect_fail("op_case torch", lambda: run_case(op_case(lambda x: ExpGrad32()(x), arg(), torch="torch.exp")))
