# float32 inputs (the only way: arg(strategy=mst.tensors(..., dtype="float32"))): an op that returns float64
# from them is not caught, though the NumPy and torch references both return float32.
from common import *
f32 = mst.tensors(mst.shapes(max_dims=2), dtype="float32")
expect_fail("exp upcasting float32 to float64, numpy ref", lambda: run_case(op_case(lambda x: F.exp(x.double()), arg(strategy=f32),
            numpy=np.exp, gradcheck=False, rtol=1e-6)))
expect_fail("exp upcasting float32 to float64, torch ref", lambda: run_case(op_case(lambda x: F.exp(x.double()), arg(strategy=f32),
            torch="torch.exp", gradcheck=False, rtol=1e-6, grad_rtol=1e-6)))
# and float64 -> float32 on a float64 input is caught:
expect_fail("exp downcasting float64", lambda: run_case(op_case(lambda x: F.exp(x.float()), arg(), numpy=np.exp, gradcheck=False, rtol=1e-6)))
# arg has no dtype: edges/ties for float32 inputs are unavailable
import inspect; print("arg parameters:", list(inspect.signature(arg).parameters))
