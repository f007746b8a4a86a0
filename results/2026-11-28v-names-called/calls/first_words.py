"""Every public function (minitx.functional, minitx.linalg, minitx.special, minitx's top level) and Tensor
method called with arguments it cannot use, each from a short list; prints each error whose first word
names neither the function or method called (nor its own name, in-place or _with_indices form, nor its
module's prefix: linalg.inv) and counts them. Run: python first_words.py > out.txt"""
import collections
import inspect
import re
import warnings

import minitx
import minitx.functional as F
import minitx.linalg as L
import minitx.special as S

warnings.simplefilter("ignore")
x23, x4, x0 = minitx.ones(2, 3), minitx.ones(4), minitx.ones(0, 3)
ARGS = {
    "object": (object(),), "x,object": (x23, object()), "x,'a'": (x23, "a"), "x,1.5": (x23, 1.5),
    "x,True": (x23, True), "x,7": (x23, 7), "x,-9": (x23, -9), "x,x4": (x23, x4), "x,x4,x4": (x23, x4, x4),
    "x,x,'a'": (x23, x23, "a"), "x,x,7": (x23, x23, 7), "x0": (x0,), "x0,0": (x0, 0), "x,None": (x23, None),
}
FIRST = re.compile(r"(?:Tensor\.|linalg\.|special\.)?(\w+)(: |\(\) )")


def own_names(name, fn):
    base = inspect.unwrap(fn).__name__
    return {name, base, name.rstrip("_"), base.rstrip("_"), name.removesuffix("_with_indices")}


def probe(label, name, fn, call):
    counts = collections.Counter()
    for what, args in ARGS.items():
        try:
            call(*args)
        except Exception as error:  # noqa: BLE001
            counts["raised"] += 1
            first = FIRST.match(str(error))
            word = first.group(1) if first else None
            if word not in own_names(name, fn) and not str(error).startswith(f"{label}.{name}: "):
                counts["other"] += 1
                print(f"{label}.{name}({what}): {type(error).__name__}: {str(error)[:110]!r}")
    return counts


def call_method(name):
    def call(*args):
        x, rest = (args[0], args[1:]) if isinstance(args[0], minitx.Tensor) else (x23, args)
        return getattr(x, name)(*rest)
    return call


total = collections.Counter()
for label, module in (("F", F), ("linalg", L), ("special", S), ("minitx", minitx)):
    for name in sorted(n for n in dir(module) if not n.startswith("_") and inspect.isfunction(getattr(module, n))):
        total += probe(label, name, getattr(module, name), getattr(module, name))
for name in sorted(n for n in dir(minitx.Tensor) if not n.startswith("_") and callable(getattr(minitx.Tensor, n, None))
                   and not isinstance(getattr(minitx.Tensor, n), type)):
    total += probe("Tensor", name, getattr(minitx.Tensor, name), call_method(name))
print(f"# {total['raised']} errors, {total['other']} not naming the call")
