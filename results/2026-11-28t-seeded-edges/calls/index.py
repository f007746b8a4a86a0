"""Indexing a (2, 3, 4) tensor with odd indices (floats, bools, empty lists, negative steps, nested lists) beside
PyTorch's: prints where the two differ (the differences left are in docs/ops.md).

    python results/2026-11-28t-seeded-edges/calls/index.py
"""
import warnings, numpy as np, minitx, torch
warnings.simplefilter("ignore")
base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
idx = ["1.5", "True", "False", "(0, 1.0)", "slice(0, 1.5)", "slice(None, None, 0)", "slice(None, None, -1)", "[0, 1.0]", "[True, False]",
       "[True, False, True]", "np.array([1.5])", "np.int64(1)", "np.True_", "(..., None)", "(None, 0, ..., 1)", "([0, 1], [0, 1])",
       "(Ellipsis, Ellipsis)", "3", "-3", "(0, 0, 0, 0)", "[[0, 1], [1, 0]]", "np.array([], dtype=np.int64)", "[]", "()", "np.array(1)",
       "(slice(None), [0, 2], slice(None))", "([0], slice(None), [1])", "np.zeros((2, 3), bool)", "np.ones((2, 3, 4), bool)",
       "'a'", "None", "[None]", "(0, [])", "2**63", "-2**63-1", "np.uint8(1)", "[np.int64(1)]", "(1.0,)", "[[True, False]]"]
flag = []
for s in idx:
    try: i = eval(s)
    except Exception as e: print("bad", s); continue
    def conv(v):
        if isinstance(v, np.ndarray): return v
        return v
    try: o = minitx.tensor(base)[i]; ok = True; oshape = tuple(o.shape); ov = o.numpy()
    except Exception as e: ok = False; err = f"{type(e).__name__}: {str(e)[:90]}"
    try:
        ti = torch.from_numpy(i) if isinstance(i, np.ndarray) else i
        t = torch.tensor(base)[ti]; tok = True; tshape = tuple(t.shape); tv = t.numpy()
    except Exception as e: tok = False; terr = f"{type(e).__name__}: {str(e)[:90]}"
    if ok and tok:
        if oshape != tshape or not np.array_equal(ov, tv): flag.append((s, "differ", oshape, tshape))
    elif ok != tok:
        flag.append((s, "minitx ok" if ok else err, "torch ok" if tok else terr))
for f in flag: print(f)
print(len(flag))
