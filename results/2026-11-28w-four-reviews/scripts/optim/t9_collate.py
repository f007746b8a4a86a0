import numpy as np, torch, minitx, collections
from minitx.utils import data as MD
import torch.utils.data as TD
Point = collections.namedtuple('Point', 'x y')
def desc(v):
    if isinstance(v, (minitx.Tensor, torch.Tensor)):
        a = v.numpy() if isinstance(v, minitx.Tensor) else v.numpy()
        return f"T[{a.dtype},{a.shape},{a.ravel()[:4].tolist()}]"
    if isinstance(v, dict): return "{" + ", ".join(f"{k}: {desc(x)}" for k, x in v.items()) + "}" + ("" if type(v) is dict else type(v).__name__)
    if isinstance(v, tuple) and hasattr(v, '_fields'): return type(v).__name__ + "(" + ", ".join(desc(x) for x in v) + ")"
    if isinstance(v, (list, tuple)): return ("[" if isinstance(v, list) else "(") + ", ".join(desc(x) for x in v) + ("]" if isinstance(v, list) else ")")
    return repr(v)
def cvt(x, lib):
    if isinstance(x, np.ndarray) and x.dtype.kind == 'f' and False: pass
    return x
batches = {
 'ints': [1, 2, 3], 'floats': [1.0, 2.5], 'int-then-float': [1, 2.5], 'bools': [True, False], 'float-then-int': [1.5, 2],
 'np f32 scalars': [np.float32(1), np.float32(2)], 'np int32 scalars': [np.int32(1), np.int32(2)], 'np bool': [np.bool_(True), np.bool_(False)],
 'np arrays f32': [np.ones((2,3), np.float32), np.zeros((2,3), np.float32)], 'np 0d': [np.array(1.5), np.array(2.5)],
 'np uint8': [np.ones(3, np.uint8), np.zeros(3, np.uint8)], 'np float16': [np.ones(2, np.float16)]*2,
 'tuples': [(np.ones(2, np.float32), 1), (np.zeros(2, np.float32), 0)],
 'nested dict': [{'a': {'b': 1.0, 'c': [1, 2]}, 's': 'x'}, {'a': {'b': 2.0, 'c': [3, 4]}, 's': 'y'}],
 'namedtuple': [Point(1, 2.0), Point(3, 4.0)], 'strings': ['a', 'b'], 'bytes': [b'a', b'b'],
 'tuple with str': [(1, 'a'), (2, 'b')], 'list of lists': [[1, 2], [3, 4]], 'ragged lists': [[1, 2], [3]],
 'OrderedDict': [collections.OrderedDict(a=1), collections.OrderedDict(a=2)], 'None': [None, None],
 'np str array': [np.array(['a']), np.array(['b'])], 'object': [object(), object()], 'mixed num/str': [1, 'a'],
 'complex': [1+2j, 3j], 'np complex': [np.complex64(1)]*2, 'np datetime': [np.datetime64('2020-01-01')]*2,
 'ragged np': [np.ones(2), np.ones(3)], 'set': [{1}, {2}], 'range': [range(2), range(2)],
}
for name, b in batches.items():
    out = []
    for collate in (MD.default_collate, TD.default_collate):
        try: out.append(desc(collate(b)))
        except Exception as e: out.append(f"{type(e).__name__}: {str(e)[:150]}")
    same = out[0].replace('minitx', '') == out[1]
    print(f"{'  ' if same else '* '}{name}\n     minitx: {out[0]}\n     torch:  {out[1]}")
print('--- default_convert')
for name, b in {'np array': np.ones(2, np.float32), 'float': 1.5, 'tuple': (np.ones(1), 2), 'np scalar': np.float32(3), 'str np': np.array(['a']), 'namedtuple': Point(np.ones(1), 2)}.items():
    print(' ', name, '|', desc(MD.default_convert(b)), '|', desc(TD.default_convert(b)))
# tensors of mixed minitx/torch
for collate, T in ((MD.default_collate, minitx), (TD.default_collate, torch)):
    try: r = desc(collate([T.ones(2), T.ones(3)]))
    except Exception as e: r = f"{type(e).__name__}: {str(e)[:200]}"
    print('  ragged tensors:', r)
    try: r = desc(collate([T.ones(2, dtype=T.float32), T.ones(2, dtype=T.float64)]))
    except Exception as e: r = f"{type(e).__name__}: {str(e)[:200]}"
    print('  mixed dtype tensors:', r)
