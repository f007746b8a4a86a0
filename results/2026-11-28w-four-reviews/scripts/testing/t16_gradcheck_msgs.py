from common import *
expect_fail("gradcheck int output", lambda: gradcheck(lambda x: x.argmax(), leaf([1.0, 2.0])))
expect_fail("gradcheck bool output", lambda: gradcheck(lambda x: x > 0, leaf([1.0, 2.0])))
expect_fail("check_gradients int output", lambda: check_gradients(lambda x: x.argmax(), leaf([1.0, 2.0])))
rng = np.random.default_rng(0)
expect_fail("gradcheck large (random directions)", lambda: gradcheck(lambda x: CubeWrong()(x), leaf(rng.normal(size=(70, 70)))))
expect_fail("gradcheck 2 outputs, 2nd wrong", lambda: gradcheck(lambda x: (F.exp(x), CubeWrong()(x)), leaf([[1.0, 2.0], [3.0, 4.0]])))
# NaN input, op correct (exp): gradcheck docs say an input holding NaN is checked too, failure says where the NaN is
expect_fail("gradcheck NaN input, correct op", lambda: gradcheck(F.exp, leaf([1.0, np.nan])))
# inf input: tanh saturates -> pass
expect_pass("gradcheck inf input tanh", lambda: gradcheck(F.tanh, leaf([1.0, np.inf])))
# forward returning a numpy array, not a Tensor
expect_fail("gradcheck fn returns ndarray", lambda: gradcheck(lambda x: x.numpy() * 2, leaf([1.0])))
# non-callable fn
expect_fail("gradcheck fn not callable", lambda: gradcheck(42, leaf([1.0])))
expect_fail("check_forward fn not callable", lambda: check_forward(42, np.exp, leaf([1.0])))
expect_fail("check_forward reference not callable", lambda: check_forward(F.exp, "np.exp", leaf([1.0])))
# float32 input
expect_fail("gradcheck float32 input", lambda: gradcheck(F.exp, minitx.tensor([1.0], dtype="float32", requires_grad=True)))
# a list of tensors passed instead of *inputs
expect_fail("gradcheck list of inputs", lambda: gradcheck(F.add, [leaf([1.0]), leaf([2.0])]))
