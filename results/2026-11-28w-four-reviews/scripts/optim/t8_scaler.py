import numpy as np, torch, minitx, warnings
warnings.filterwarnings("ignore")
from minitx import optim
rng = np.random.default_rng(0)
for name, kw in (("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01)), ("AdamW", dict(lr=0.01, amsgrad=True))):
    p0 = rng.standard_normal(5).astype(np.float32)
    p = minitx.tensor(p0.copy(), requires_grad=True); q = torch.tensor(p0.copy(), requires_grad=True)
    o = getattr(optim, name)([p], **kw); t = getattr(torch.optim, name)([q], **kw)
    so = optim.GradScaler(init_scale=2.0**10, growth_interval=3, growth_factor=3.0, backoff_factor=0.25)
    st = torch.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=3, growth_factor=3.0, backoff_factor=0.25)
    bad = None
    for step in range(20):
        c = rng.standard_normal(5).astype(np.float32)
        if step in (4, 5, 11): c[2] = np.inf if step != 5 else np.nan
        o.zero_grad(); t.zero_grad()
        so.scale((p * minitx.tensor(c)).sum()).backward(); st.scale((q * torch.tensor(c)).sum()).backward()
        if step % 2: so.unscale_(o); st.unscale_(t)
        so.step(o); st.step(t); so.update(); st.update()
        if so.get_scale() != st.get_scale() or not np.allclose(p.numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6):
            bad = (step, so.get_scale(), st.get_scale(), p.numpy(), q.detach().numpy()); break
    print(' ', name, 'ok' if bad is None else f'MISMATCH {bad}', so.state_dict() == {k: (v if not hasattr(v, 'item') else v) for k, v in st.state_dict().items()}, so.state_dict(), st.state_dict())
