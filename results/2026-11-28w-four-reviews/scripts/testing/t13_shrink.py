# shrinking: what minimal example does op_test report for wrong ops?
from common import *
def show(label, test):
    try:
        test()
        print(label, "PASSED?")
    except BaseException as e:
        print(f"== {label}: {type(e).__name__}: {str(e)[:250]}")
        for n in getattr(e, "__notes__", []):
            if n.startswith("Draw") or "Failing" in n: print("   ", n[:300])
s = settings(database=None, max_examples=50, deadline=None)
show("cube wrong", op_test(lambda x: CubeWrong()(x), arg(), numpy=lambda a: a**3, settings=s))
class MulBcastBug2(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b); return a * b
    def backward(self, dy):
        a, b = self.saved
        return dy * b, (dy * a).sum() * np.ones(b.shape) if b.ndim < a.ndim else dy * a
show("broadcast bug", op_test(lambda a, b: MulBcastBug2()(a, b), arg(), arg(), broadcast=True, numpy=np.multiply, settings=s))
class MaxBoth(Function):
    def forward(self, a, b):
        self.save_for_backward(a, b); return np.maximum(a, b)
    def backward(self, dy):
        a, b = self.saved
        return np.where(a >= b, dy, 0.0), np.where(b >= a, dy, 0.0)
show("max tie both", op_test(lambda a, b: MaxBoth()(a, b), arg(ties=True), arg(ties=True), torch="torch.maximum", settings=s))
class ReluAt0(Function):
    def forward(self, x):
        self.save_for_backward(x); return np.maximum(x, 0)
    def backward(self, dy):
        (x,) = self.saved; return (np.where(x >= 0, dy, 0.0),)
show("relu at 0 edges", op_test(lambda x: ReluAt0()(x), arg(edges=(0.0,), away_from=(0.0,)), torch="torch.relu", settings=s))
