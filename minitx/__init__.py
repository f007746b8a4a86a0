"""minitx: a small deep-learning framework written from scratch to be read.

    import minitx
    import minitx.functional as F

    x = minitx.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    loss = (F.softmax(x @ x.T, axis=-1) * x).sum()
    loss.backward()          # x.grad now holds d(loss)/dx
"""
from minitx import backend, cuda
from minitx.autograd import (Function, Tensor, enable_grad, inference_mode, is_grad_enabled, no_grad,
                             set_grad_enabled, tensor)
from minitx.backend import set_default_device
from minitx.creation import (arange, empty, eye, from_dlpack, full, full_like, linspace, ones, ones_like, rand, randn,
                             zeros, zeros_like)
from minitx.random import manual_seed
from minitx import functional  # noqa: F401  (import minitx.functional as F)
from minitx.serialization import load, save
from minitx.amp import autocast
from minitx.functional import concatenate as cat, stack  # PyTorch's top-level names

# dtype names, as torch.float32 is one: minitx.tensor(x, dtype=minitx.int8)
float16, float32, float64 = "float16", "float32", "float64"
int8, int16, int32, int64 = "int8", "int16", "int32", "int64"
uint8, uint16, uint32, uint64 = "uint8", "uint16", "uint32", "uint64"
bool_ = "bool"
bfloat16 = "bfloat16"  # ml_dtypes' type; see minitx.amp

__version__ = "0.1.0"

__all__ = [
    "Tensor", "tensor", "Function", "no_grad", "enable_grad", "is_grad_enabled", "manual_seed",
    "zeros", "ones", "full", "arange", "rand", "randn", "zeros_like", "ones_like", "from_dlpack",
    "set_default_device", "cuda", "backend", "functional", "save", "load", "autocast", "cat", "stack",
    "inference_mode", "set_grad_enabled", "empty", "eye", "linspace", "full_like",
]
