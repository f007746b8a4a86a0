"""``minitx.cuda.is_available()``: is there a GPU minitx can use (CuPy installed and a device)?"""
from minitx.backend import cuda_available as is_available

__all__ = ["is_available"]
