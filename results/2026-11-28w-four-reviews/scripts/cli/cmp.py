"""compare two run dirs: every .npz array (and json member) and history.json"""
import sys, json, zipfile, numpy as np
from pathlib import Path
a, b = Path(sys.argv[1]), Path(sys.argv[2])
names = sys.argv[3:] or sorted({p.name for p in a.glob('*.npz')} | {p.name for p in b.glob('*.npz')})
ok = True
for n in names:
    pa, pb = a/n, b/n
    if not pa.exists() or not pb.exists():
        print(f"{n}: only in {'a' if pa.exists() else 'b'}"); ok = False; continue
    za, zb = np.load(pa, allow_pickle=False), np.load(pb, allow_pickle=False)
    ka, kb = set(za.files), set(zb.files)
    if ka != kb:
        print(f"{n}: members differ: {sorted(ka ^ kb)[:10]}"); ok = False
    diffs = []
    for k in sorted(ka & kb):
        x, y = za[k], zb[k]
        if k == 'minitx_structure':
            import subprocess
            out = subprocess.run([sys.executable, '/work/hunt-cli/cmpjson.py', str(pa), str(pb)], capture_output=True, text=True).stdout
            real = [l for l in out.splitlines() if 'output_dir' not in l and 'seconds' not in l]
            if real: diffs.append(k); print(f"{n}: structure differs:\n   " + "\n   ".join(real[:15]))
            continue
        if x.dtype != y.dtype or x.shape != y.shape or not np.array_equal(x, y, equal_nan=True) if x.dtype.kind in 'fc' else not np.array_equal(x, y):
            diffs.append(k)
    if diffs:
        ok = False
        print(f"{n}: {len(diffs)} members differ, e.g. {diffs[:6]}")
        for k in diffs[:6]:
            x, y = za[k], zb[k]
            if x.dtype.kind in 'fiu' and x.shape == y.shape:
                print(f"   {k}: max abs diff {np.max(np.abs(x.astype(float)-y.astype(float)))}")
            else:
                s1 = bytes(x).decode(errors='replace')[:300] if x.dtype.kind in 'uSV' else x
                s2 = bytes(y).decode(errors='replace')[:300] if y.dtype.kind in 'uSV' else y
                print(f"   {k}: {str(s1)[:400]}\n   vs {str(s2)[:400]}")
    else:
        print(f"{n}: identical ({len(ka)} members)")
for j in ['history.json']:
    ha, hb = json.loads((a/j).read_text()), json.loads((b/j).read_text())
    strip = lambda h: [{k: v for k, v in e.items() if k not in ('seconds',)} for e in h]
    same = strip(ha) == strip(hb)
    print(f"{j}: {'identical (less seconds)' if same else 'DIFFERENT'}")
    if not same:
        ok = False
        for x, y in zip(strip(ha), strip(hb)):
            if x != y: print('  ', x, '\n   vs', y)
        if len(ha) != len(hb): print('   lengths', len(ha), len(hb))
print("ALL SAME" if ok else "DIFFERENCES")
