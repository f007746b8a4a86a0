import sys, traceback
import minitx, numpy as np
import minitx.functional as F
from minitx import nn, optim
def t(label, code, g=None):
    env = dict(minitx=minitx, F=F, nn=nn, optim=optim, np=np)
    if g: env.update(g)
    try:
        r = eval(code, env) if '\n' not in code and '=' not in code.split('(')[0] else exec(code, env)
        print(f"[ok ] {label}: {code!r} -> {r!r}"[:400])
    except Exception as e:
        print(f"[ERR] {label}: {code!r} -> {type(e).__name__}: {e}"[:600])
if __name__ == "__main__":
    for line in sys.stdin.read().split('\n'):
        if line.strip():
            t("", line)
