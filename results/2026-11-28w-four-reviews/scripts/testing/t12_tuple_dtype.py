# op_case's dtype check (factory.OpCase._check_dtype) runs only for a single Tensor output.
from common import *
import torch
# single output: caught
expect_fail("single: float32 sign from float64", lambda: run_case(op_case(lambda x: F.sign(x).float(), arg(), numpy=np.sign, gradcheck=False)))
# same op inside a tuple: not caught (values exact in float32)
expect_fail("tuple: float32 sign from float64", lambda: run_case(op_case(lambda x: (F.sign(x).float(), x * 1.0), arg(), numpy=lambda a: (np.sign(a), a), gradcheck=False)))
# against torch too
expect_fail("tuple vs torch: float32 sign", lambda: run_case(op_case(lambda x: (F.sign(x).float(), x * 1.0), arg(), torch=lambda t: (torch.sign(t), t * 1.0), gradcheck=False)))
# integer output where the reference is float
expect_fail("single: int vs float reference", lambda: run_case(op_case(lambda x: x.argmax(), arg(), numpy=lambda a: np.float64(np.argmax(a)))))
expect_fail("tuple: int vs float reference", lambda: run_case(op_case(lambda x: (x * 1.0, x.argmax()), arg(), numpy=lambda a: (a, np.float64(np.argmax(a))), gradcheck=False)))
# tuple of integer outputs only, gradcheck left at its default
expect_pass("tuple of int outputs only (docs: integer outputs skip the gradient checks)", lambda: run_case(op_case(lambda x: (x.argmax(), x.argmin()), arg(), numpy=lambda a: (np.argmax(a), np.argmin(a)))))
