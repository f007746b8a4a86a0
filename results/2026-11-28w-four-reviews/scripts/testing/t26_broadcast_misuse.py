from common import *
expect_fail("broadcast=True, shapes draws 1 shape for 2 args", lambda: run_case(op_case(F.add, arg(), arg(), broadcast=True, numpy=np.add, shapes=mst.broadcastable_shapes(1)), n=3))
expect_fail("broadcast=True, shapes=mst.shapes() (one shape, not a tuple of them)", lambda: run_case(op_case(F.add, arg(), arg(), broadcast=True, numpy=np.add, shapes=mst.shapes(min_dims=1)), n=3))
expect_fail("broadcast=False, shapes=broadcastable_shapes (a tuple of shapes)", lambda: run_case(op_case(F.add, arg(), arg(), numpy=np.add, shapes=mst.broadcastable_shapes(2, min_dims=1)), n=3))
