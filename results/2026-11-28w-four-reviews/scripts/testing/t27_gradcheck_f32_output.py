# a float64 input, an op that computes in float32 by mistake: what does gradcheck say?
from common import *
class ExpF32(Function):
    def forward(self, x):
        y = np.exp(x.astype(np.float32)); self.save_for_backward(y); return y
    def backward(self, dy):
        (y,) = self.saved; return ((dy * y).astype(np.float64),)
expect_fail("gradcheck float32 output from float64 input", lambda: gradcheck(lambda x: ExpF32()(x), leaf([0.5, 1.0, 2.0])))
