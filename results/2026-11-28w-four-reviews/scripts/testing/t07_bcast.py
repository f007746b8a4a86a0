from common import *
class MulBcastBug2(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b); return a * b
    def backward(self, dy):
        a, b = self.saved
        ga, gb = dy * b, dy * a
        out = np.broadcast_shapes(a.shape, b.shape)
        # bug: for b, takes the first slice along stretched axes instead of summing
        gb = np.broadcast_to(gb, out)
        while gb.ndim > b.ndim: gb = gb[0]
        for i, n in enumerate(b.shape):
            if n == 1 and gb.shape[i] != 1: gb = np.take(gb, [0], axis=i)
        return ga, np.ascontiguousarray(gb)
expect_fail("broadcast bug2 op_case", lambda: run_case(op_case(lambda a, b: MulBcastBug2()(a, b), arg(), arg(), broadcast=True,
      numpy=np.multiply), shrink=True))
