# Tensor idioms, run verbatim under PyTorch and under the mechanical minitx translation
# (name `torch` bound to minitx, F to minitx.functional). When minitx lacks a top-level name,
# the snippet is retried with a shim that falls back to minitx.functional (the user's 2nd try).
import sys, types, numpy as np
import torch as T, torch.nn.functional as TF, torch.nn as Tnn
import minitx as M, minitx.nn as Mnn, minitx.nn.functional as MF, minitx.utils.data, minitx.optim

class Shim(types.ModuleType):
    def __getattr__(self, n):
        return getattr(MF, n)
shim = Shim("minitx_shim"); shim.__dict__.update({k: getattr(M, k) for k in dir(M) if not k.startswith("__")})

SNIPPETS = open(sys.argv[1] if len(sys.argv) > 1 else "p7_snippets.txt").read().strip().split("\n")

def norm(v):
    if isinstance(v, (T.Tensor,)):
        return ("tensor", tuple(v.shape), str(v.dtype).replace("torch.", ""), v.detach().numpy())
    if isinstance(v, M.Tensor):
        return ("tensor", tuple(v.shape), str(v.dtype).replace("bool", "bool"), v.numpy())
    if isinstance(v, np.ndarray):
        return ("ndarray", v.shape, str(v.dtype), v)
    if isinstance(v, (tuple, list)) and any(isinstance(x, (T.Tensor, M.Tensor, tuple, list)) for x in v):
        return ("seq", type(v).__name__, [norm(x) for x in v])
    if isinstance(v, T.dtype) or isinstance(v, np.dtype) or (isinstance(type(v), type) and type(v).__name__.endswith("DType")):
        return ("dtype", str(v).replace("torch.", ""))
    if isinstance(v, T.Size):
        return ("size", tuple(v))
    return ("py", type(v).__name__, v)

def same(a, b):
    if a[0] != b[0]:
        return a[0] == "size" and b == ("py", "tuple", a[1])
    if a[0] == "tensor":
        if a[1] != b[1] or a[2] != b[2]:
            return False
        return np.allclose(a[3].astype(float), b[3].astype(float), equal_nan=True, atol=1e-5)
    if a[0] == "seq":
        return a[1] == b[1] and len(a[2]) == len(b[2]) and all(same(x, y) for x, y in zip(a[2], b[2]))
    if a[0] == "ndarray":
        return a[1] == b[1] and a[2] == b[2] and np.allclose(a[3].astype(float), b[3].astype(float), equal_nan=True)
    if a[0] == "py":
        if isinstance(a[2], float) or isinstance(b[2], float):
            try: return abs(a[2] - b[2]) < 1e-5 and type(a[2]) == type(b[2])
            except Exception: return False
        return a[1:] == b[1:]
    return a == b

def run(code, torchmod, Fmod, nnmod):
    env = {"torch": torchmod, "F": Fmod, "nn": nnmod, "np": np}
    *pre, last = code.split(";;")
    for p in pre:
        exec(p.strip(), env)
    return eval(last.strip(), env)

def short(v):
    if v[0] == "seq": return repr([short(x) for x in v[2]])[:200]
    s = repr(v[3].tolist() if v[0] in ("tensor", "ndarray") else v)
    return s[:120]

for code in SNIPPETS:
    code = code.strip()
    if not code or code.startswith("#"):
        continue
    T.manual_seed(0); M.manual_seed(0); T.set_grad_enabled(True); M.set_grad_enabled(True)
    try:
        ref = norm(run(code, T, TF, Tnn))
    except Exception as e:
        print(f"TORCH-ERR {code}: {type(e).__name__}: {e}"); continue
    note = ""
    try:
        got = norm(run(code, M, MF, Mnn))
    except AttributeError as e:
        if "module 'minitx'" in str(e):
            try:
                got = norm(run(code, shim, MF, Mnn)); note = f" [needs F.: {e}]"
            except Exception as e2:
                print(f"ERR  {code}\n     minitx: {type(e).__name__}: {e}; via F.: {type(e2).__name__}: {e2}"[:700]); continue
        else:
            print(f"ERR  {code}\n     minitx: {type(e).__name__}: {e}"[:600]); continue
    except Exception as e:
        print(f"ERR  {code}\n     minitx: {type(e).__name__}: {e}"[:600]); continue
    if "rand" in code and "seed" not in code and got[0] == "tensor" and ref[0] == "tensor" and ref[1:3] == got[1:3]:
        print(f"ok~  {code}  (random; shape/dtype match){note}"); continue
    if same(ref, got):
        print(f"ok   {code}{note}")
    else:
        print(f"DIFF {code}{note}\n     torch : {ref[:3] if ref[0]=='tensor' else ''} {short(ref)}\n     minitx: {got[:3] if got[0]=='tensor' else ''} {short(got)}")
