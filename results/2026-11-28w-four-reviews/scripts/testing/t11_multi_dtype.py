from common import *
import torch
# (a) an op returning two integer outputs: docs say an integer output skips the gradient checks
expect_pass("two int outputs, numpy", lambda: run_case(op_case(lambda x: (x.argmax(), x.argmin()), arg(),
      numpy=lambda a: (np.argmax(a), np.argmin(a)))))
# (b) an op returning a float32 output among several from float64 inputs: single-output version is caught
expect_fail("single output float32 from float64", lambda: run_case(op_case(lambda x: x.float(), arg(), numpy=lambda a: a, gradcheck=False)))
expect_fail("tuple output float32 from float64", lambda: run_case(op_case(lambda x: (x.float(), x * 1.0), arg(), numpy=lambda a: (a, a), gradcheck=False)))
# (c) tuple output where ours is int but reference float
expect_fail("tuple: int vs reference float", lambda: run_case(op_case(lambda x: (x * 1.0, x.argmax()), arg(), numpy=lambda a: (a, np.float64(np.argmax(a))), gradcheck=False)))
