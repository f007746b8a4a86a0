"""Compare two cpu-quick run directories bit for bit: every array of last.npz and best.npz, the
history without its seconds, the test translations, and results.json without its timings."""
import json
import sys

import numpy as np

import minitx


def flat(d, p=""):
    if isinstance(d, dict):
        for k, v in d.items():
            yield from flat(v, f"{p}/{k}")
    elif isinstance(d, (list, tuple)):
        for i, v in enumerate(d):
            yield from flat(v, f"{p}[{i}]")
    else:
        yield p, d


def strip(h):
    if isinstance(h, dict):
        return {k: strip(v) for k, v in h.items() if "second" not in k and "time" not in k}
    if isinstance(h, list):
        return [strip(x) for x in h]
    return h


a, b = sys.argv[1:3]
for name in ("last.npz", "best.npz"):
    fa, fb = dict(flat(minitx.load(f"{a}/{name}"))), dict(flat(minitx.load(f"{b}/{name}")))
    arrays = [k for k, v in fa.items() if isinstance(v, np.ndarray)]
    differ = [k for k in arrays if not (fa[k].shape == fb[k].shape and fa[k].tobytes() == fb[k].tobytes())]
    others = [k for k in fa if k not in arrays and fa[k] != fb.get(k) and "second" not in k and "time" not in k]
    print(f"{name}: {len(arrays)} arrays, {len(differ)} differ {differ[:3]}; other entries differing: {others[:5]}")
print("history the same but seconds:", strip(json.load(open(f"{a}/history.json"))) == strip(json.load(open(f"{b}/history.json"))))
hyp = [f for f in ("test_2016_flickr.hyp.en",)]
print("test translations the same:", open(f"{a}/{hyp[0]}").read() == open(f"{b}/{hyp[0]}").read())
ra, rb = json.load(open(f"{a}/results.json")), json.load(open(f"{b}/results.json"))
print("results.json entries differing:", {k: (ra.get(k), rb.get(k)) for k in set(ra) | set(rb) if ra.get(k) != rb.get(k)})
