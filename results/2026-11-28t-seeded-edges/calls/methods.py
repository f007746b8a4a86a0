"""Tensor methods that take ints (axes, sizes, counts) called with floats and bools beside PyTorch's: prints
where minitx takes what PyTorch refuses.

    python results/2026-11-28t-seeded-edges/calls/methods.py
"""
import warnings, numpy as np, minitx, torch
warnings.simplefilter("ignore")
base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
calls = {
 "reshape": [(2.0, 12), (True, 24), (6, 4.0)], "view": [(2.0, 12), (6, 4.0)], "expand": [(2.0, 2, 3, 4)],
 "repeat": [(1.0, 1, 1), (True, 1, 1), (2, 1, 1.5)], "permute": [(0.0, 1, 2), (True, 0, 2)], "transpose": [(0.0, 1), (True, 0)],
 "unsqueeze": [(1.0,), (True,)], "squeeze": [(1.0,), (True,)], "narrow": [(0, 0.0, 1), (0, 0, 1.0), (True, 0, 1)],
 "chunk": [(2.0,), (True,)], "split": [(1.5,), (2.0,)], "flatten": [(1.0,), (True,)], "movedim": [(0.0, 1), (True, 0)],
 "unflatten": [(2, (1.0, 4)), (2.0, (2, 2))], "roll": [(1.5,), (True,)], "flip": [(0.0,), ((True,),)],
 "select": [(0, 1.0), (0.0, 1), (True, 1)], "diagonal": [(1.0,)], "tril": [(1.5,)], "cumsum": [(1.0,), (True,)],
 "sum": [(1.0,), (True,)], "mean": [(1.0,)], "max": [(1.0,)], "argmax": [(1.0,), (True,)], "softmax": [(1.0,)],
 "topk": [(2.0,), (True,)], "kthvalue": [(1.5,), (True,)], "sort": [(1.0,)], "argsort": [(1.0,)], "gather": [],
 "index_select": [(1.0, None)], "unfold": [(0, 1.0, 1), (0, 1, 1.5)], "tile": [((2.0, 1, 1),)], "new_zeros": [((2.0, 3),)],
 "new_full": [((2.5,), 1.0)], "std": [(1.0,)], "var": [(True,)], "prod": [(1.0,), (True,)], "logsumexp": [(1.0,)],
 "median": [(1.0,)], "mode": [(1.0,)], "nansum": [(1.0,)], "cummax": [(1.0,)], "norm": [(2, 1.0)], "renorm": [(2, 1.0, 1.0)],
 "repeat_interleave": [(2.0,), (True,)], "diff": [(1.5,), (True,)], "rot90": [(1.0, (0, 1)), (1, (0.0, 1))],
 "swapaxes": [(0.0, 1)], "expand_as": [], "masked_fill": [], "count_nonzero": [(1.0,)], "amax": [(1.0,)], "all": [(1.0,)],
 "any": [(True,)], "nanmean": [(True,)], "logcumsumexp": [(1.0,)], "histc": [(2.5,)], "bincount": [], "unique_consecutive": [],
 "take_along_dim": [], "triu": [(True,)], "narrow_copy": [(0, 0.0, 1)], "unbind": [(1.0,), (True,)], "tensor_split": [(2.0,)],
 "hsplit": [(2.0,)], "vsplit": [(2.0,)], "dsplit": [(2.0,)], "movedim": [(0.0, 1)], "moveaxis": [(0.0, 1)],
}
flag = []
for name, arglists in calls.items():
    for args in arglists:
        try:
            getattr(minitx.tensor(base), name)(*args); ok = True
        except AttributeError:
            break
        except Exception as e:
            ok = False
        try:
            getattr(torch.tensor(base), name)(*args); tok = True
        except AttributeError:
            break
        except Exception as e:
            tok = False; terr = f"{type(e).__name__}: {str(e)[:90]}"
        if ok and not tok:
            flag.append((name, args, terr))
for f in flag: print(f)
print(len(flag))
