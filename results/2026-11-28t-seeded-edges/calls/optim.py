"""Optimizer constructors with out-of-range or mistyped settings beside PyTorch's: prints where one refuses
and the other takes them.

    python results/2026-11-28t-seeded-edges/calls/optim.py
"""
import warnings, numpy as np, minitx, torch
warnings.simplefilter("ignore")
from minitx import optim as mo
to = torch.optim
cases = [("SGD", {"lr": -0.1}), ("SGD", {"lr": 0.1, "momentum": -0.5}), ("SGD", {"lr": 0.1, "nesterov": True}), ("SGD", {"lr": 0.1, "weight_decay": -1}),
 ("SGD", {"lr": 0.1, "dampening": 0.5, "nesterov": True, "momentum": 0.9}), ("Adam", {"betas": (1.0, 0.999)}), ("Adam", {"betas": (0.9, 1.5)}), ("Adam", {"eps": -1e-8}),
 ("Adam", {"lr": float("nan")}), ("AdamW", {"weight_decay": -0.1}), ("Adam", {"betas": (0.9,)}), ("RMSprop", {"alpha": -0.1}), ("RMSprop", {"momentum": -1}),
 ("Adagrad", {"lr_decay": -1}), ("Adagrad", {"initial_accumulator_value": -1}), ("Adadelta", {"rho": 1.5}), ("Adamax", {"betas": (1.2, 0.9)}),
 ("NAdam", {"momentum_decay": -1}), ("RAdam", {"betas": (0.9, -0.1)}), ("Rprop", {"etas": (1.5, 1.2)}), ("Rprop", {"step_sizes": (1.0, 0.5)}),
 ("ASGD", {"lambd": -1}), ("LBFGS", {"history_size": 0}), ("LBFGS", {"line_search_fn": "wolfe"}), ("Adam", {"lr": 1e-3, "amsgrad": 1}),
 ("SGD", {"lr": 0.1, "momentum": True}), ("Adam", {"lr": True}), ("Adam", {"lr": "0.1"}), ("AdamW", {"betas": [0.9, 0.99]}),]
flag = []
for name, kw in cases:
    if not hasattr(mo, name): print("missing", name); continue
    try: getattr(mo, name)([minitx.nn.Parameter(minitx.tensor([1.0]))], **kw); ok = True
    except Exception as e: ok = False; err = f"{type(e).__name__}: {str(e)[:90]}"
    try: getattr(to, name)([torch.nn.Parameter(torch.tensor([1.0]))], **kw); tok = True
    except Exception as e: tok = False; terr = f"{type(e).__name__}: {str(e)[:90]}"
    if ok != tok: flag.append((name, kw, "minitx ok" if ok else err, "torch ok" if tok else terr))
for f in flag: print(f)
print(len(flag))
