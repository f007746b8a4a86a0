# op_test docs: "It runs without a deadline unless settings=hypothesis.settings(...) says otherwise."
# Passing settings that only change max_examples brings hypothesis' 200 ms deadline back.
import numpy as np, traceback
from hypothesis import settings
import minitx.functional as F
from minitx.testing import arg, op_test
test_tanh = op_test(F.tanh, arg(), torch="torch.tanh", settings=settings(max_examples=10, database=None))
print("deadline in effect:", test_tanh._hypothesis_internal_use_settings.deadline)
try:
    test_tanh()
    print("passed")
except BaseException as e:
    print(type(e).__name__, str(e).splitlines()[0][:300])
