"""As unary.py, with every pair of 14 edge values as two tensor arguments.

    python results/2026-11-28t-seeded-edges/calls/binary.py
"""
import warnings, inspect, numpy as np, minitx, itertools
import minitx.functional as F, minitx.special as S
warnings.simplefilter("error")
v = np.array([0.0, -0.0, 5e-324, 1e308, -1e308, np.inf, -np.inf, np.nan, 0.5, -1.0, 2.0, -2.5, 800.0, 1e-300])
a = np.repeat(v, len(v)); b = np.tile(v, len(v))
problems = []
for mod in (F, S):
    for n in sorted(dir(mod)):
        if n.startswith("_"): continue
        fn = getattr(mod, n)
        if not callable(fn) or inspect.isclass(fn): continue
        for dt in ("float64", "float32", "float16", "bfloat16"):
            x = minitx.tensor(a, dtype=dt, requires_grad=True); y = minitx.tensor(b, dtype=dt, requires_grad=True)
            try:
                z = fn(x, y)
            except (TypeError, ValueError, NotImplementedError, IndexError) as e:
                break
            except Exception as e:
                problems.append((n, dt, "forward", type(e).__name__, str(e)[:120])); continue
            if not isinstance(z, minitx.Tensor) or not z.requires_grad: break
            try:
                z.sum().backward()
            except NotImplementedError:
                break
            except Exception as e:
                problems.append((n, dt, "backward", type(e).__name__, str(e)[:120]))
for p in problems: print(p)
print(len(problems), "problems")
