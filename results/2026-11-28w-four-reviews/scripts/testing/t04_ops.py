from common import *
import torch

# 1. keyword args
class Scale(Function):
    def __init__(self, s): self.s = s
    def forward(self, x): return x * self.s
    def backward(self, dy): return (dy * self.s,)
def scale(x, *, s=1.0): return Scale(s)(x)
expect_pass("kwargs op", lambda: run_case(op_case(scale, arg(), kwargs={"s": st.floats(-2, 2)},
      numpy=lambda a, s: a * s, torch=lambda t, s: t * s)))
class ScaleWrong(Scale):
    def backward(self, dy): return (dy * abs(self.s),)
expect_fail("kwargs op wrong for s<0", lambda: run_case(op_case(lambda x, s: ScaleWrong(s)(x), arg(), kwargs={"s": st.floats(-2, 2)},
      numpy=lambda a, s: a * s), shrink=True))

# 2. two outputs
def two(x): return Cube()(x), F.exp(x)
expect_pass("two outputs", lambda: run_case(op_case(two, arg(), numpy=lambda a: (a**3, np.exp(a)), torch=lambda t: (t**3, t.exp()))))
def two_wrong(x): return F.exp(x), CubeWrong()(x)
expect_fail("two outputs wrong 2nd", lambda: run_case(op_case(two_wrong, arg(), numpy=lambda a: (np.exp(a), a**3))))

# 3. integer argument
class Pow(Function):
    def __init__(self, n): self.n = n
    def forward(self, x):
        self.save_for_backward(x); return x ** self.n
    def backward(self, dy):
        (x,) = self.saved; return (self.n * x ** (self.n - 1) * dy,)
expect_pass("int arg", lambda: run_case(op_case(lambda x, n: Pow(n)(x), arg(), arg(strategy=st.integers(0, 4)),
      numpy=lambda a, n: a ** n, torch=lambda t, n: t ** n)))

# 4. integer output
expect_pass("int output", lambda: run_case(op_case(lambda x: (x > 0).sum(), arg(), numpy=lambda a: (a > 0).sum(),
      torch=lambda t: (t > 0).sum())))
