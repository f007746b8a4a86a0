import numpy as np, torch, torch.nn.functional as TF
D = torch.float64
x = torch.tensor([[[1.0,2.0,4.0]]], dtype=D, requires_grad=True)
y = TF.interpolate(x, scale_factor=1.3, mode="nearest"); y.backward(torch.tensor([[[1.0,10.0,100.0]]], dtype=D))
print("torch nearest 1.3 y", y.tolist(), "dx", x.grad.tolist())
x = torch.randn(1,1,2,2, dtype=D, requires_grad=True)
print("torch bicubic gradcheck", torch.autograd.gradcheck(lambda t: TF.interpolate(t, scale_factor=(1.0,1.3), mode="bicubic"), (x,), raise_exception=False))
x = torch.tensor([[[1.0,2.0,5.0]]], dtype=D, requires_grad=True)
y = TF.max_unpool1d(x, torch.tensor([[[1,3,3]]]), kernel_size=2, stride=1); y.backward(torch.tensor([[[1.0,10.0,100.0,1000.0]]], dtype=D))
print("torch unpool dup", y.tolist(), x.grad.tolist())
for mode in ("reflect","replicate"):
    try: print(mode, "neg width:", TF.pad(torch.arange(1.,6.)[None,None], (-1,1), mode=mode).tolist())
    except Exception as e: print(mode, "neg width refuses:", str(e)[:100])
for mode, w in (("reflect",(3,0)),("circular",(4,0)),("circular",(3,-1))):
    try: print(mode, w, TF.pad(torch.tensor([[[1.0,2.0,3.0]]]), w, mode=mode).tolist())
    except Exception as e: print(mode, w, "refuses:", str(e)[:100])
