# Compare positional parameter names of functions present in both torch.nn.functional / torch and minitx.functional
import inspect, torch, torch.nn.functional as TF, minitx.functional as MF, minitx, minitx.nn as mnn, torch.nn as tnn
ALIAS = {"input": "x", "dim": "axis", "keepdim": "keepdims", "other": "y"}
def params(f):
    try:
        return [p.name for p in inspect.signature(f).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (ValueError, TypeError):
        return None
def show(tag, tf, mf, name):
    tp, mp = params(tf), params(mf)
    if tp is None or mp is None:
        return
    # compare up to the shorter list, by position
    diffs = [(i, a, b) for i, (a, b) in enumerate(zip(tp, mp)) if a != b and ALIAS.get(a) != b and not (i == 0)]
    if diffs:
        print(f"{tag}{name}: torch{tuple(tp)}\n{' ' * (len(tag) + len(name))}  minitx{tuple(mp)}")
for name in sorted(set(dir(TF)) & set(dir(MF))):
    if name.startswith("_"): continue
    show("F.", getattr(TF, name), getattr(MF, name), name)
print("---- nn modules (__init__)")
for name in sorted(set(dir(tnn)) & set(dir(mnn))):
    tc, mc = getattr(tnn, name), getattr(mnn, name)
    if isinstance(tc, type) and isinstance(mc, type):
        show("nn.", tc.__init__, mc.__init__, name)
