import numpy as np, torch, warnings
warnings.simplefilter("ignore"); np.seterr(all="ignore")
import minitx.functional as F
from minitx.testing import leaf
inf, nan = np.inf, np.nan
def m(fn, *vals, dy=1.0):
    ins = [leaf([v]) for v in vals]; y = fn(*ins); y.backward(np.array([dy])); return [float(y.numpy()[0])] + [float(t.grad.numpy()[0]) for t in ins]
def t(fn, *vals, dy=1.0):
    ins = [torch.tensor([v], dtype=torch.float64, requires_grad=True) for v in vals]; y = fn(*ins)
    try: y.backward(torch.tensor([dy], dtype=torch.float64)); g = [float(i.grad[0]) if i.grad is not None else None for i in ins]
    except Exception as e: g = ["raises: " + str(e)[:60]]
    return [float(y[0])] + g
rows = [
 ("div (0,1e-310)", lambda a,b: a/b, lambda a,b: a/b, (0.0, 1e-310), 1.0),
 ("div (1,0)", lambda a,b: a/b, lambda a,b: a/b, (1.0, 0.0), 1.0),
 ("div (1e-300,1e-170)", lambda a,b: a/b, lambda a,b: a/b, (1e-300, 1e-170), 1.0),
 ("1e-300 / b", lambda b: 1e-300/b, lambda b: 1e-300/b, (1e-170,), 1.0),
 ("x**0.5 @ -0.0", lambda x: x**0.5, lambda x: x**0.5, (-0.0,), 1.0),
 ("x**0.5 @ -inf", lambda x: x**0.5, lambda x: x**0.5, (-inf,), 1.0),
 ("x**1.5 @ -inf", lambda x: x**1.5, lambda x: x**1.5, (-inf,), 1.0),
 ("x**-0.5 @ -inf", lambda x: x**-0.5, lambda x: x**-0.5, (-inf,), 1.0),
 ("pow (-2,2)", F.pow, torch.pow, (-2.0, 2.0), 1.0),
 ("pow (inf,-1)", F.pow, torch.pow, (inf, -1.0), 1.0),
 ("sqrt -0.0", F.sqrt, torch.sqrt, (-0.0,), 1.0),
 ("log -2", F.log, torch.log, (-2.0,), 1.0),
 ("expm1 -40", F.expm1, torch.expm1, (-40.0,), 1.0),
 ("abs nan", F.abs, torch.abs, (nan,), 1.0),
 ("sign nan", F.sign, torch.sign, (nan,), 1.0),
 ("floor_divide", F.floor_divide, torch.floor_divide, (7.0, 2.0), 1.0),
 ("remainder (1,.1)", F.remainder, torch.remainder, (1.0, 0.1), 1.0),
 ("fmod (1,.1)", F.fmod, torch.fmod, (1.0, 0.1), 1.0),
 ("remainder (1,0)", F.remainder, torch.remainder, (1.0, 0.0), 1.0),
 ("fmod (-1,0)", F.fmod, torch.fmod, (-1.0, 0.0), 1.0),
 ("clip 0,1 @2 dy=inf", lambda x: F.clip(x, 0.0, 1.0), lambda x: torch.clamp(x, 0.0, 1.0), (2.0,), inf),
 ("clip tensors (-1,.5,.5)", F.clip, torch.clamp, (-1.0, 0.5, 0.5), 1.0),
 ("clip tensors (2,.5,.5)", F.clip, torch.clamp, (2.0, 0.5, 0.5), 1.0),
 ("clip tensors (.5,1,0)", F.clip, torch.clamp, (0.5, 1.0, 0.0), 1.0),
 ("atan2 (0,0)", F.atan2, torch.atan2, (0.0, 0.0), 1.0),
 ("atan2 (1e-200,1e-200)", F.atan2, torch.atan2, (1e-200, 1e-200), 1.0),
 ("hypot (0,0)", F.hypot, torch.hypot, (0.0, 0.0), 1.0),
]
for name, mf, tf, vals, dy in rows:
    print(f"{name:24s} minitx={m(mf, *vals, dy=dy)}  torch={t(tf, *vals, dy=dy)}")
