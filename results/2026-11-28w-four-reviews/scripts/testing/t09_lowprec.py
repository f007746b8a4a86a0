# OpCase.low_precision returns True (check_low_precision's value), __call__ and on_device return None:
# the lambda pattern the repo's own tests use for on_device trips hypothesis' return_value health check.
from common import *
case = op_case(F.exp, arg(), numpy=np.exp)
expect_pass("on_device lambda", lambda: settings(database=None, max_examples=5, deadline=None)(given(data=st.data())(lambda data: case.on_device(data, "cpu")))())
expect_pass("low_precision lambda", lambda: settings(database=None, max_examples=5, deadline=None)(given(data=st.data())(lambda data: case.low_precision(data)))())
def t(data): case.low_precision(data)
expect_pass("low_precision def bf16", lambda: settings(database=None, max_examples=30, deadline=None)(given(data=st.data())(t))())
def t16(data): case.low_precision(data, "float16")
expect_pass("low_precision def fp16", lambda: settings(database=None, max_examples=30, deadline=None)(given(data=st.data())(t16))())
# wrong op in low precision only: backward computes in float64 for float64, but flushes to 0 in float16
class CubeLowWrong(Function):
    def forward(self, x):
        self.save_for_backward(x); return x ** 3
    def backward(self, dy):
        (x,) = self.saved
        g = 3 * x * x * dy
        return (g if g.dtype == np.float64 else (2 * x * x * dy).astype(g.dtype),)
case2 = op_case(lambda x: CubeLowWrong()(x), arg(), numpy=lambda a: a ** 3)
def t2(data): case2.low_precision(data)
expect_fail("low_precision catches float32-only wrong backward", lambda: settings(database=None, max_examples=30, deadline=None)(given(data=st.data())(t2))())
