import numpy as np
from hypothesis import settings, strategies as st
import minitx.functional as F
from minitx.testing import arg, op_test, strategies as mst

test_exp = op_test(F.exp, arg(), numpy=np.exp, torch="torch.exp")
test_linear = op_test(F.linear, arg(), arg(shape=lambda x: (3, x[-1])), arg(shape=lambda x, w: w[:1]),
                      numpy=lambda x, w, b: x @ w.T + b, torch="torch.nn.functional.linear",
                      shapes=mst.shapes(min_dims=1, max_dims=3))
test_exp_f32 = op_test(F.exp, arg(strategy=mst.tensors(mst.shapes(max_dims=2), dtype="float32")),
                       numpy=np.exp, torch="torch.exp", gradcheck=False, rtol=1e-6)
test_sum_empty = op_test(F.sum, arg(edges=(0.0, np.inf, np.nan)), shapes=mst.shapes(min_side=0, max_dims=3),
                   numpy=lambda x, axis, keepdims: np.sum(x, axis=axis, keepdims=keepdims),
                   kwargs={"axis": lambda shape: mst.axes_for(len(shape)), "keepdims": st.booleans()})
test_max_ties = op_test(F.maximum, arg(ties=True), arg(ties=True), numpy=np.maximum, torch="torch.maximum",
                        broadcast=True, settings=settings(max_examples=30, deadline=None))
