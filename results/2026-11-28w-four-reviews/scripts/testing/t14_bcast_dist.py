# What do broadcast=True's default shapes look like? (op_case: mst.broadcastable_shapes(n, max_dims=3, max_side=4))
from common import *
from collections import Counter
seen = []
case = op_case(lambda a, b: seen.append((a.shape, b.shape)) or a * b, arg(), arg(), broadcast=True, numpy=np.multiply, gradcheck=False)
run_case(case, n=200)
c = Counter()
for sa, sb in seen:
    if sa == sb: c["equal shapes"] += 1
    elif len(sa) != len(sb): c["different ndim"] += 1
    else: c["same ndim, stretched"] += 1
print(len(seen), c)
print(Counter(seen).most_common(12))
sizes = Counter(max(int(np.prod(a)), int(np.prod(b))) for a, b in seen)
print("largest size:", sorted(sizes.items())[:20])
