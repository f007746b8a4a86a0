import warnings, numpy as np, minitx.functional as F
from minitx.testing import leaf
cases = {"log(0)": lambda: F.log(leaf([0.0])), "div 1/0": lambda: F.div(leaf([1.0]), leaf([0.0])),
         "sqrt(-1)": lambda: F.sqrt(leaf([-1.0])), "exp(1000)": lambda: F.exp(leaf([1000.0])),
         "var ddof=2 n=2": lambda: F.var(leaf([3.0, 1.0]), ddof=2),
         "std ddof=3 backward": lambda: F.std(leaf([3.0,1.0]), 0, ddof=3).backward(np.array(1.0)),
         "kl_div y=0 backward": lambda: F.kl_div(leaf([-1.0,-1.0]), leaf([0.0, 0.5]), reduction="sum").backward()}
for name, f in cases.items():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always"); f()
    with np.errstate(all="raise"):
        try: f(); r = "no raise"
        except FloatingPointError as e: r = "RAISES " + str(e)
    print(f"{name:22s} warnings={[str(x.message)[:50] for x in w]}  under np.errstate(all='raise'): {r}")
