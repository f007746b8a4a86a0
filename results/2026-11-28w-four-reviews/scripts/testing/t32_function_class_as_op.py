# Passing the Function class (or one instance) as op, instead of lambda x: Cube()(x)
from common import *
expect_fail("op=Cube (the class)", lambda: run_case(op_case(Cube, arg(), numpy=lambda a: a ** 3), n=2))
expect_fail("op=Cube() (one instance)", lambda: run_case(op_case(Cube(), arg(), numpy=lambda a: a ** 3), n=2))
expect_fail("gradcheck(Cube, x)", lambda: gradcheck(Cube, leaf([1.0])))
