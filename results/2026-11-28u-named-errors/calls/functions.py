"""Every public function of minitx.functional (and every Tensor method with --methods) called with
what no tensor holds (a string, an object), after a tensor where it takes more than one argument.
Each error's first word is read: a name (the function, another public function or special function,
a Function class), ``tensor`` (tensor() inside the op, not what the user called), or none (Python's or
NumPy's own message: "'<=' not supported between instances of 'str' and 'int'"). Prints the calls whose
error names tensor or nothing, then the counts.

    PYTHONPATH=<checkout> python functions.py [--methods]
"""
import re
import sys
import warnings

import minitx
import minitx.functional as F
from minitx.autograd.function import Function

warnings.simplefilter("ignore")


def function_names():
    """The snake-case names of every Function subclass (ConvNd: conv_nd), as errors name them."""
    found, classes = set(), [Function]
    while classes:
        for sub in classes.pop().__subclasses__():
            found.add(re.sub(r"(?<!^)(?=[A-Z])", "_", sub.__name__).lower())
            classes.append(sub)
    return found


PUBLIC = {n for n in dir(F) if not n.startswith("_")}
SPECIAL = {n for n in dir(minitx.special) if not n.startswith("_")}
NAMES = PUBLIC | SPECIAL | function_names() | {"to"}
METHODS = "--methods" in sys.argv
if METHODS:
    targets = sorted(n for n in dir(minitx.Tensor) if not n.startswith("_") and callable(getattr(minitx.Tensor, n, None))
                     and not isinstance(getattr(minitx.Tensor, n), type))
    calls = [lambda name, bad: getattr(minitx.ones(2, 3), name)(bad)]
else:
    targets = sorted(n for n in PUBLIC if callable(getattr(F, n)))
    calls = [lambda name, bad: getattr(F, name)(bad), lambda name, bad: getattr(F, name)(minitx.ones(2, 3), bad)]

counts = {"named": 0, "tensor": 0, "nothing": 0, "no error": 0}
for name in targets:
    for call in calls:
        for bad in ("a", object()):
            try:
                call(name, bad)
                counts["no error"] += 1
                continue
            except Exception as error:  # noqa: BLE001
                message, kind = str(error), type(error).__name__
            first = re.match(r"(?:Tensor\.|linalg\.)?(\w+)(: |\(\) )", message)
            word = first.group(1) if first else None
            verdict = "tensor" if word == "tensor" else "named" if word in NAMES | {name, name.rstrip("_")} else "nothing"
            counts[verdict] += 1
            if verdict != "named":
                print(f"{name:28s} {type(bad).__name__:7s} {kind}: {message.splitlines()[0][:110]}")
print(f"{len(targets)} {'methods' if METHODS else 'functions'}, {sum(counts.values())} calls:",
      ", ".join(f"{k} {v}" for k, v in counts.items()))
