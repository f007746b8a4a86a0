import numpy as np
from harness import compare
cases = {
 'SGD': [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.1, momentum=0.9, dampening=0.5, weight_decay=0.1),
         dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True, weight_decay=0.01), dict(lr=0.1, momentum=0.0, dampening=0.3)],
 'Adam': [dict(lr=0.01), dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True), dict(lr=0.01, betas=(0.0, 0.0)),
          dict(lr=0.01, betas=(0.5, 0.9), eps=1e-3, amsgrad=True)],
 'AdamW': [dict(lr=0.01), dict(lr=0.01, amsgrad=True, weight_decay=0.5, maximize=True), dict(lr=0.01, weight_decay=0)],
 'RMSprop': [dict(lr=0.01), dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1, maximize=True), dict(lr=0.01, alpha=0.5, centered=True)],
 'Adagrad': [dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-5, maximize=True)],
 'Adadelta': [dict(lr=1.0, rho=0.5, weight_decay=0.1, maximize=True)],
 'Adamax': [dict(lr=0.1, weight_decay=0.1, maximize=True)],
 'NAdam': [dict(lr=0.1, weight_decay=0.1, momentum_decay=0.01, decoupled_weight_decay=True)],
 'RAdam': [dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)],
 'Rprop': [dict(lr=0.1, maximize=True)],
 'ASGD': [dict(lr=0.1, t0=2, lambd=0.1, weight_decay=0.1)],
 'Adafactor': [dict(lr=0.1, weight_decay=0.1)],
}
for dtype in (np.float64, np.float32):
  for name, kws in cases.items():
    for kw in kws:
        try:
            compare(name, kw, dtype=dtype, rtol=1e-10 if dtype==np.float64 else 1e-5, atol=1e-12 if dtype==np.float64 else 1e-6,
                    none_pattern=lambda s,i: (s+i)%3==0)
        except Exception as e:
            print("  ERR", name, kw, type(e).__name__, str(e)[:300])
