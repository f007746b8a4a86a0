import sys
f, old, new, why = sys.argv[1:5]
s = open(f).read()
assert old in s, (f, old)
lines = s.split("\n")
for i, l in enumerate(lines):
    if old in l:
        lines[i] = l.replace(old, new) + f"  # WA2: {why}"
open(f, "w").write("\n".join(lines))
