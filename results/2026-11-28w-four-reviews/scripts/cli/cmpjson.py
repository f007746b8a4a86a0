import sys, json, numpy as np
def flat(o, p=''):
    if isinstance(o, dict):
        if o.get('type') == 'dict' and 'items' in o:
            for k, v in o['items']: yield from flat(v, f'{p}/{k}')
        else:
            for k, v in o.items(): yield from flat(v, f'{p}/{k}')
    elif isinstance(o, list):
        for i, v in enumerate(o): yield from flat(v, f'{p}[{i}]')
    else: yield p, o
def load(f):
    z = np.load(f, allow_pickle=False); s = z['minitx_structure']
    return dict(flat(json.loads(bytes(s).decode() if s.dtype.kind!='U' else str(s))))
a, b = load(sys.argv[1]), load(sys.argv[2])
for k in sorted(set(a)|set(b)):
    if a.get(k) != b.get(k): print(k, ':', repr(a.get(k))[:150], '|', repr(b.get(k))[:150])
