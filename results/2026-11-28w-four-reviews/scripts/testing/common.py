import numpy as np
import minitx
import minitx.functional as F
from minitx import Function
from hypothesis import given, settings, Phase, strategies as st, HealthCheck
from minitx.testing import (arg, op_case, op_test, gradcheck, check_gradients, check_forward,
                            check_low_precision, GradcheckError, leaf, strategies as mst)

def run_case(case, n=30, shrink=False):
    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    settings(phases=phases, database=None, max_examples=n, deadline=None)(given(data=st.data())(lambda data: case(data)))()

def expect_fail(label, thunk):
    try:
        thunk()
    except BaseException as e:
        msg = str(e).split("\nFalsifying")[0]
        print(f"[{label}] CAUGHT {type(e).__name__}: {msg[:700]}")
        return e
    print(f"[{label}] NOT CAUGHT (passed)")

def expect_pass(label, thunk):
    try:
        thunk()
        print(f"[{label}] passed")
    except BaseException as e:
        print(f"[{label}] FAILED {type(e).__name__}: {str(e)[:700]}")

class Cube(Function):
    def forward(self, x):
        self.save_for_backward(x)
        return x ** 3
    def backward(self, dy):
        (x,) = self.saved
        return (3 * x * x * dy,)

class CubeWrong(Function):
    def forward(self, x):
        self.save_for_backward(x)
        return x ** 3
    def backward(self, dy):
        (x,) = self.saved
        return (2 * x * x * dy,)
