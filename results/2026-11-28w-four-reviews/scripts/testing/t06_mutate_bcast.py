from common import *

# forward mutates its input array in place
class ExpInPlace(Function):
    def forward(self, x):
        np.exp(x, out=x); self.save_for_backward(x.copy()); return x.copy()
    def backward(self, dy):
        (y,) = self.saved; return (dy * y,)
expect_fail("forward writes input: op_case numpy", lambda: run_case(op_case(lambda x: ExpInPlace()(x), arg(), numpy=np.exp)))
expect_fail("forward writes input: gradcheck", lambda: gradcheck(lambda x: ExpInPlace()(x), leaf([1.0, 2.0])))
expect_fail("forward writes input: op_case torch only", lambda: run_case(op_case(lambda x: ExpInPlace()(x), arg(), torch="torch.exp", gradcheck=False)))
expect_fail("forward writes input: op_case gradcheck only", lambda: run_case(op_case(lambda x: ExpInPlace()(x), arg())))

# backward writes dy in place
class ExpDyInPlace(Function):
    def forward(self, x):
        y = np.exp(x); self.save_for_backward(y); return y
    def backward(self, dy):
        (y,) = self.saved; dy *= y; return (dy,)
expect_fail("backward writes dy", lambda: check_gradients(lambda x: ExpDyInPlace()(x), leaf([1.0, 2.0])))

# broadcasting bug: mul whose backward doesn't reduce b's gradient correctly
class MulBcastBug(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b); return a * b
    def backward(self, dy):
        a, b = self.saved
        ga = dy * b
        gb = dy * a
        # bug: sums over leading axes only, ignores size-1 axes that were broadcast
        while gb.ndim > b.ndim: gb = gb.sum(0)
        ga = np.broadcast_to(ga, np.broadcast_shapes(a.shape, b.shape))
        while ga.ndim > a.ndim: ga = ga.sum(0)
        return ga, gb
e = expect_fail("broadcast bug op_case", lambda: run_case(op_case(lambda a, b: MulBcastBug()(a, b), arg(), arg(), broadcast=True,
      numpy=np.multiply), shrink=True))
import traceback
