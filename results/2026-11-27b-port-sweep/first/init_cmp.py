import torch, minitx, numpy as np
from minitx import nn as mnn
def st(a): a=np.asarray(a); return f"min {a.min():+.3f} max {a.max():+.3f} std {a.std():.3f} mean {a.mean():+.3f}"
pairs = [
 ("Linear(256,128).weight", lambda m: m.nn.Linear(256,128).weight, ),
 ("Linear(256,128).bias", lambda m: m.nn.Linear(256,128).bias),
 ("Embedding(1000,64).weight", lambda m: m.nn.Embedding(1000,64).weight),
 ("Conv2d(16,32,3).weight", lambda m: m.nn.Conv2d(16,32,3).weight),
 ("Conv2d(16,32,3).bias", lambda m: m.nn.Conv2d(16,32,3).bias),
 ("LSTM(32,64).weight_hh_l0", lambda m: m.nn.LSTM(32,64).weight_hh_l0),
 ("LSTM(32,64).bias_ih_l0", lambda m: m.nn.LSTM(32,64).bias_ih_l0),
 ("GRU(32,64).weight_ih_l0", lambda m: m.nn.GRU(32,64).weight_ih_l0),
 ("LayerNorm(64).weight", lambda m: m.nn.LayerNorm(64).weight),
 ("BatchNorm2d(8).running_var", lambda m: m.nn.BatchNorm2d(8).running_var),
 ("MultiheadAttention?", None),
]
import minitx.nn
for name, f in pairs:
    if f is None: continue
    for lib in (torch, minitx):
        try:
            v = f(lib); v = v.detach().numpy() if lib is torch else v.numpy()
            print(f"{name:30s} {lib.__name__:7s} shape {tuple(v.shape)} {st(v)}")
        except Exception as e:
            print(f"{name:30s} {lib.__name__:7s} ERR {type(e).__name__}: {e}")
