from common import *
expect_pass("cube op_case", lambda: run_case(op_case(lambda x: Cube()(x), arg(), numpy=lambda a: a**3)))
expect_fail("cubewrong op_case numpy", lambda: run_case(op_case(lambda x: CubeWrong()(x), arg(), numpy=lambda a: a**3)))
expect_fail("cubewrong op_case torch", lambda: run_case(op_case(lambda x: CubeWrong()(x), arg(), torch=lambda t: t**3, gradcheck=False)))
expect_fail("cubewrong gradcheck", lambda: gradcheck(lambda x: CubeWrong()(x), leaf([[1.0, 2.0],[3.0, -1.0]])))
# named function (not lambda)
def cube(x): return CubeWrong()(x)
expect_fail("cubewrong op_test named", lambda: op_test(cube, arg(), numpy=lambda a: a**3, settings=settings(database=None, max_examples=20))())
