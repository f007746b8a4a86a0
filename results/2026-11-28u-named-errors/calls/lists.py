"""Every public function of minitx.functional that takes a 2 x 2 tensor alone, given the same numbers
as a Python list: prints those that refuse the list (the ops convert lists: minitx/ops/_args.py), then
the count. atleast_1d/2d/3d read a list as a list of tensors, as PyTorch's, and are left out.

    PYTHONPATH=<checkout> python lists.py
"""
import warnings

import minitx
import minitx.functional as F

warnings.simplefilter("ignore")
values = [[0.5, 0.25], [0.75, 0.125]]
taking, refusing = 0, []
for name in sorted(n for n in dir(F) if not n.startswith("_") and callable(getattr(F, n))):
    if name.startswith("atleast_"):
        continue
    op = getattr(F, name)
    try:
        op(minitx.tensor(values))
    except Exception:  # noqa: BLE001  (needs more arguments, or other data)
        continue
    taking += 1
    try:
        op(values)
    except (TypeError, AttributeError) as error:
        refusing.append(name)
        print(f"{name:20s} {type(error).__name__}: {str(error)[:100]}")
print(f"{taking} functions take the tensor alone; {len(refusing)} of them refuse the same list")
