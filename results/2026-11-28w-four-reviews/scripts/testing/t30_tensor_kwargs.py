# Tensors among the keyword arguments (on_device's docstring says they move): what do the references get?
from common import *
import torch
seen = []
weights = st.builds(lambda v: minitx.tensor(np.full(1, v)), st.floats(1.0, 2.0))
def ref(x, w):
    seen.append(type(w).__name__); return x * np.asarray(w)
expect_pass("numpy ref with a Tensor kwarg", lambda: run_case(op_case(lambda x, w: x * w, arg(), kwargs={"w": weights}, numpy=ref), n=5))
print("numpy reference received w as:", set(seen))
expect_pass("torch ref with a Tensor kwarg", lambda: run_case(op_case(lambda x, w: x * w, arg(), kwargs={"w": weights}, torch=lambda t, w: t * w, gradcheck=False), n=5))
