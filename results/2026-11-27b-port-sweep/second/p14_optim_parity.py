# One Linear, same weights/data; 5 steps of each optimizer config in both libraries.
import numpy as np, torch, minitx, minitx.nn as mnn, minitx.optim as mo
rng = np.random.default_rng(0); X = rng.standard_normal((8, 4)).astype('float32'); Y = rng.standard_normal((8, 2)).astype('float32')
cfgs = [("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01)), ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, dampening=0)),
        ("Adam", dict(lr=0.01)), ("Adam", dict(lr=0.01, weight_decay=0.1)), ("AdamW", dict(lr=0.01)), ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
        ("RMSprop", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True)), ("Adagrad", dict(lr=0.1)), ("Adamax", dict(lr=0.01)), ("NAdam", dict(lr=0.01)), ("RAdam", dict(lr=0.01)), ("Adadelta", dict(lr=1.0)), ("LBFGS", dict(lr=1.0)), ("Adafactor", dict(lr=0.01))]
for name, kw in cfgs:
    t = torch.nn.Linear(4, 2); m = mnn.Linear(4, 2); m.load_state_dict(t.state_dict())
    try:
        to = getattr(torch.optim, name)(t.parameters(), **kw)
    except Exception as e:
        print(f"skip {name}: torch {e}"); continue
    try:
        oo = getattr(mo, name)(m.parameters(), **kw)
    except Exception as e:
        print(f"ERR  {name} {kw}: {type(e).__name__}: {e}"[:200]); continue
    if name == "LBFGS": print("have LBFGS (closure not tested)"); continue
    for _ in range(5):
        to.zero_grad(); ((t(torch.tensor(X)) - torch.tensor(Y)) ** 2).mean().backward(); to.step()
        oo.zero_grad(); ((m(minitx.tensor(X)) - minitx.tensor(Y)) ** 2).mean().backward(); oo.step()
    d = max(np.abs(t.weight.detach().numpy() - m.weight.numpy()).max(), np.abs(t.bias.detach().numpy() - m.bias.numpy()).max())
    print(("OK  " if d < 1e-5 else "DIFF"), name, kw, f"{d:.2e}")
