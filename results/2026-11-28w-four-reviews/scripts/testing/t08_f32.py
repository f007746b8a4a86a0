from common import *
f32 = mst.tensors(mst.shapes(max_dims=2), dtype="float32")
expect_pass("f32 grad_rtol", lambda: run_case(op_case(F.exp, arg(strategy=f32), numpy=np.exp, torch="torch.exp", gradcheck=False, rtol=1e-6, grad_rtol=1e-6)))
expect_fail("f32 default gradcheck=True", lambda: run_case(op_case(F.exp, arg(strategy=f32), numpy=np.exp, rtol=1e-6)))
# low_precision via op_case
case = op_case(F.exp, arg(), numpy=np.exp)
expect_pass("low_precision bf16", lambda: settings(database=None, max_examples=20, deadline=None)(given(data=st.data())(lambda data: case.low_precision(data)))())
case = op_case(lambda x: CubeWrong()(x), arg(), numpy=lambda a: a**3)
expect_fail("low_precision CubeWrong (not expected to catch: same backward both sides)", lambda: settings(database=None, max_examples=20, deadline=None)(given(data=st.data())(lambda data: case.low_precision(data)))())
