# A broadcasting bug in b's gradient (b of fewer dims than a: summed over everything, not over the leading axes)
# op_case(..., broadcast=True) with the default shapes: how often is it caught in 100 examples?
from common import *
import hypothesis
class MulBcastBug(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b); return a * b
    def backward(self, dy):
        a, b = self.saved
        gb = (dy * a).sum() * np.ones(b.shape) if b.ndim < a.ndim else dy * a
        return dy * b, gb
caught = 0
for s in range(6):
    case = op_case(lambda a, b: MulBcastBug()(a, b), arg(), arg(), broadcast=True, numpy=np.multiply)
    try:
        hypothesis.seed(s)(settings(phases=[Phase.generate], database=None, max_examples=100, deadline=None)(given(data=st.data())(lambda data: case(data))))()
    except GradcheckError as e:
        caught += 1
print("caught in", caught, "of 6 runs of 100 examples")
# the same bug with an explicit shapes strategy is caught at once
case = op_case(lambda a, b: MulBcastBug()(a, b), arg(), arg(), broadcast=True, numpy=np.multiply, shapes=st.just(((2, 3), (3,))))
expect_fail("explicit shapes", lambda: run_case(case, n=5))
