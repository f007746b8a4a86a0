"""Every function of minitx.functional and minitx.special called on one tensor of edge values (0, -0, the
smallest subnormal, +-1e308, +-inf, NaN, ...) in float64, float32, float16 and bfloat16, forward and
backward, NumPy warnings as errors: prints what raised other than a TypeError, ValueError or
NotImplementedError naming the call.

    python results/2026-11-28t-seeded-edges/calls/unary.py
"""
import warnings, inspect, numpy as np, minitx, traceback
import minitx.functional as F, minitx.special as S
warnings.simplefilter("error")
vals = np.array([0.0, -0.0, 1e-308, 5e-324, 1e308, -1e308, np.inf, -np.inf, np.nan, 0.5, -0.5, 1.0, -1.0, 2.0, -2.5, 1e-30, 30.0, -30.0, 800.0, -800.0])
names = sorted(set(n for mod in (F, S) for n in dir(mod) if not n.startswith("_")))
problems = []
for mod in (F, S):
    for n in sorted(dir(mod)):
        if n.startswith("_"): continue
        fn = getattr(mod, n)
        if not callable(fn) or inspect.isclass(fn): continue
        for dt in ("float64", "float32", "float16", "bfloat16"):
            x = minitx.tensor(vals.astype(np.float64), dtype=dt, requires_grad=True)
            try:
                y = fn(x)
            except (TypeError, ValueError, NotImplementedError) as e:
                break  # needs other arguments, or refuses by name
            except Exception as e:
                problems.append((mod.__name__, n, dt, "forward", type(e).__name__, str(e)[:120])); continue
            if not isinstance(y, minitx.Tensor) or not y.requires_grad: break
            try:
                y.sum().backward() if y.ndim else y.backward()
            except (NotImplementedError,) as e:
                break
            except Exception as e:
                problems.append((mod.__name__, n, dt, "backward", type(e).__name__, str(e)[:120]))
for p in problems: print(p)
print(len(problems), "problems")
