# The op_case from tests/test_testing_tools.py::test_op_case_on_device_casts_and_moves_the_keyword_tensors_too,
# run as a plain op_case (its __call__), and its torch counterpart.
from common import *
import torch, warnings
weights = st.builds(lambda v: minitx.tensor(np.full(1, v)), st.floats(1.0, 2.0))
def show_ref(x, w):
    r = x * w; print("   numpy reference got w:", type(w).__name__, "and returned:", type(r).__name__); return r
expect_pass("numpy ref x * w, Tensor kwarg w", lambda: run_case(op_case(lambda x, w: x * w, arg(), kwargs={"w": weights}, numpy=show_ref), n=2))
def show_tref(t, w):
    r = t * w; print("   torch reference got w:", type(w).__module__, type(w).__name__, "and returned:", type(r).__module__, type(r).__name__); return r
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    expect_pass("torch ref t * w, Tensor kwarg w", lambda: run_case(op_case(lambda x, w: x * w, arg(), kwargs={"w": weights}, torch=show_tref, gradcheck=False), n=1))
