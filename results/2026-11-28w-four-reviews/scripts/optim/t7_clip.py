import numpy as np, torch, minitx, warnings
from minitx import optim
rng = np.random.default_rng(0)
shapes = [(3,4),(5,),(),(0,2)]
def mk(dtype, scale=1.0, none=()):
    gs = [(rng.standard_normal(s)*scale).astype(dtype) for s in shapes]
    P = [minitx.tensor(np.zeros(s, dtype), requires_grad=True) for s in shapes]
    Q = [torch.zeros(s, dtype=getattr(torch, np.dtype(dtype).name), requires_grad=True) for s in shapes]
    for i,(p,q,g) in enumerate(zip(P,Q,gs)):
        if i in none: continue
        p.grad = minitx.tensor(g.copy()); q.grad = torch.tensor(g.copy())
    return P, Q
for dtype in (np.float64, np.float32, np.float16):
  for nt in (2, 1, 3.5, 0.5, float('inf'), 'inf'):
    for mx in (0.5, 100.0, 0.0):
        P, Q = mk(dtype, none=(1,))
        try: a = optim.clip_grad_norm_(P, mx, norm_type=nt)
        except Exception as e: a = e
        try: b = float(torch.nn.utils.clip_grad_norm_(Q, mx, norm_type=nt))
        except Exception as e: b = e
        tol = dict(rtol=1e-12) if dtype==np.float64 else dict(rtol=2e-3 if dtype==np.float16 else 1e-6)
        ok = not isinstance(a, Exception) and not isinstance(b, Exception) and np.isclose(a, b, **tol) and all(
            (p.grad is None and q.grad is None) or np.allclose(p.grad.numpy(), q.grad.numpy(), **tol, atol=1e-7) for p,q in zip(P,Q))
        if not ok: print(f"  MISMATCH clip_grad_norm_ {np.dtype(dtype).name} nt={nt} max={mx}: {a} vs {b}")
for dtype in (np.float64, np.float32):
    P, Q = mk(dtype); optim.clip_grad_value_(P, 0.3); torch.nn.utils.clip_grad_value_(Q, 0.3)
    print("  clip_grad_value_", np.dtype(dtype).name, all(np.array_equal(p.grad.numpy(), q.grad.numpy()) for p,q in zip(P,Q)))
# non-finite
for bad in (np.nan, np.inf):
    P, Q = mk(np.float64); P[0].grad.numpy()[0,0] = bad; Q[0].grad[0,0] = bad
    a = optim.clip_grad_norm_(P, 1.0); b = torch.nn.utils.clip_grad_norm_(Q, 1.0)
    print(f"  nonfinite {bad}: minitx norm {a} grads[1] {P[0].grad.numpy()[0,:3]} | torch {b} {Q[0].grad[0,:3]}")
# argument checks
for call in ["clip_grad_norm_(P, 1.0, norm_type=0)", "clip_grad_norm_(P, -1.0)", "clip_grad_norm_(P, 1.0, foreach=True)",
             "clip_grad_value_(P, -1.0)", "clip_grad_value_(P, 1.0, foreach=False)", "clip_grad_norm_(P[0], 1.0)", "clip_grad_norm_(iter(P), 1.0)",
             "clip_grad_norm_([], 1.0)", "clip_grad_norm_(P, '1.0')"]:
    P, Q = mk(np.float64)
    for lib, mod, ps in (("minitx", optim, P), ("torch", torch.nn.utils, Q)):
        try: r = eval(call.replace("P", "ps"), {"ps": ps, **{n: getattr(mod, n) for n in ("clip_grad_norm_", "clip_grad_value_")}}); r = f"ok {r}"
        except Exception as e: r = f"{type(e).__name__}: {str(e)[:140]}"
        print(f"  {call} {lib}: {r}")
