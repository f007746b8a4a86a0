import re
from pathlib import Path
R = Path("/work/main")
text = (R/"docs/kernel-ladder.md").read_text()
blocks = re.findall(r"^```(python|cuda)\n(.*?)^```", text, re.S|re.M)
srcs = {"python": (R/"tests/kernels/_reference.py").read_text(),
        "cuda": "\n".join(p.read_text() for p in list((R/"minitx/kernels/ladder").glob("*.cu")) + [R/"minitx/kernels/softmax.cu", R/"minitx/kernels/layer_norm.cu", R/"minitx/kernels/common.cuh"])}
sq = lambda s: " ".join(s.split())
for kind, body in blocks:
    src = sq(srcs[kind])
    for line in body.splitlines():
        l = line.split("#")[0] if kind == "python" else line
        l = l.strip()
        if not l or l == "...": continue
        if sq(l) not in src:
            print("MISSING", kind, repr(line))
print("done")
