from common import *
t = op_test(F.exp, arg(), numpy=np.exp)
expect_fail("settings(...) applied on top of op_test's result", lambda: settings(max_examples=5)(t))
from hypothesis import seed
expect_pass("seed(...) on top", lambda: seed(1)(op_test(F.exp, arg(), numpy=np.exp))())
expect_pass("settings with deadline=None given", lambda: op_test(F.exp, arg(), torch="torch.exp", settings=settings(max_examples=5, deadline=None))())
