# strategies docs: "Arguments are checked when the strategy is built: a bad one raises ValueError naming the strategy"
from common import *
def built(label, make):
    try:
        s = make()
    except Exception as e:
        print(f"[{label}] at build: {type(e).__name__}: {str(e)[:200]}"); return
    try:
        s.example()
        print(f"[{label}] accepted, and drew fine")
    except Exception as e:
        print(f"[{label}] accepted at build; at draw: {type(e).__name__}: {str(e)[:200]}")
import warnings; warnings.simplefilter("ignore")
built("tensors(shape='abc')", lambda: mst.tensors("abc"))
built("float_arrays away_from=0.0 (scalar)", lambda: mst.float_arrays((3,), away_from=0.0))
built("arg(away_from=0.0) (scalar)", lambda: arg(away_from=0.0))
built("float_arrays min_value=nan", lambda: mst.float_arrays((3,), min_value=np.nan))
built("float_arrays margin='x'", lambda: mst.float_arrays((3,), margin="x"))
built("float_arrays margin=nan", lambda: mst.float_arrays((3,), margin=float('nan')))
built("tensors transposed=True 1-d", lambda: mst.tensors((3,), transposed=True))
built("tensors requires_grad='no'", lambda: mst.tensors((3,), requires_grad="no"))
built("index_arrays size=0", lambda: mst.index_arrays((3,), 0))
built("axes_for(-1)", lambda: mst.axes_for(-1))
built("shapes(min_dims=3,max_dims=2)", lambda: mst.shapes(min_dims=3, max_dims=2))
built("class_targets ignore_probability=2", lambda: mst.class_targets((3,), 5, ignore_index=-100, ignore_probability=2))
built("class_targets ignore_probability=nan", lambda: mst.class_targets((3,), 5, ignore_index=-100, ignore_probability=float('nan')))
built("broadcastable_tensors(num=0)", lambda: mst.broadcastable_tensors(num=0))
built("tensors(dtype='int64')", lambda: mst.tensors((3,), dtype="int64"))
built("arg(edges=(np.inf,), edge_probability=nan)", lambda: arg(edges=(np.inf,), edge_probability=float('nan')))
built("arg(edges=('x',))", lambda: arg(edges=("x",)))
built("arg(edges=np.inf) (scalar)", lambda: arg(edges=np.inf))
built("arg(ties='yes')", lambda: arg(ties="yes"))
built("arg(shape=(2,-1))", lambda: arg(shape=(2, -1)))
built("arg(strategy=5)", lambda: arg(strategy=5))
built("ids padding_probability=-1", lambda: mst.ids((3,), 5, padding_idx=0, padding_probability=-1))
