# edges: replaced at edge_probability? examples with an edge skip check_gradients? empty axes drawn?
from common import *
import minitx.testing.factory as fac
draws, calls = [], {"grad": 0}
orig_draw, orig_cg = fac.OpCase.draw, fac.check_gradients
def draw(self, data):
    r = orig_draw(self, data); draws.append(([np.array(t.data) for t in r[0]], r[2])); return r
def cg(*a, **k):
    calls["grad"] += 1
    for t in a[1:]:
        assert np.isfinite(np.asarray(t.data)).all(), "check_gradients ran on an example holding inf/NaN"
    return orig_cg(*a, **k)
fac.OpCase.draw, fac.check_gradients = draw, cg
case = op_case(F.tanh, arg(edges=(0.0, np.inf, -np.inf, np.nan)), numpy=np.tanh, shapes=mst.shapes(min_side=0, max_dims=3))
run_case(case, n=300)
xs = [d[0][0] for d in draws]
allv = np.concatenate([v.ravel() for v in xs])
print(f"examples {len(xs)}, empty {sum(v.size == 0 for v in xs)}, values {allv.size}, non-finite fraction {np.mean(~np.isfinite(allv)):.3f} (0.25*3/4=0.1875)")
print(f"special examples {sum(d[1] for d in draws)}; check_gradients calls {calls['grad']}; plain {sum(not d[1] for d in draws)}")
