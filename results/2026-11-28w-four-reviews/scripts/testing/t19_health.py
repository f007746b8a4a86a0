from common import *
import time
def timed(label, test):
    t = time.time()
    try:
        test(); print(f"[{label}] passed in {time.time()-t:.1f}s")
    except BaseException as e:
        print(f"[{label}] {type(e).__name__}: {str(e)[:300]}  ({time.time()-t:.1f}s)")
s = settings(database=None, max_examples=20)
timed("distinct, shapes up to 6^4", op_test(F.amax if hasattr(F, "amax") else F.max, arg(distinct=True), numpy=np.max, shapes=mst.shapes(max_dims=4, max_side=7), gradcheck=False, settings=settings(s, deadline=None)))
timed("big shapes no grad", op_test(F.exp, arg(), numpy=np.exp, shapes=mst.shapes(min_dims=3, max_dims=3, min_side=10, max_side=12), gradcheck=False, settings=settings(s, deadline=None)))
timed("ties 2 args, default", op_test(F.maximum, arg(ties=True), arg(ties=True), numpy=np.maximum, settings=settings(s, deadline=None)))
timed("strategy arg filter-heavy", op_test(lambda x, n: x * n, arg(), arg(strategy=st.integers().filter(lambda v: v % 97 == 0)), numpy=lambda a, n: a * n, settings=settings(s, deadline=None)))
