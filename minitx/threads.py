"""PyTorch's torch.set_num_threads(n) and torch.get_num_threads(): the CPU's threads in minitx.

What the threads are. On the CPU minitx's arrays are NumPy's, and the one part of NumPy that runs
on several threads is the BLAS library it loaded (OpenBLAS in NumPy's wheels; MKL or BLIS in some
builds): matrix products (``@``, ``Linear``, attention's scores, ``einsum`` where it becomes a
product) and the linear algebra. ``set_num_threads(n)`` limits every BLAS library loaded in the
process (NumPy's, and SciPy's if it is imported) to n threads, for the rest of the process or
until called again: global, as PyTorch's is. NumPy cannot do this itself once it is imported;
threadpoolctl (a dependency) finds the loaded libraries and calls each one's own setter.

What they are not. Elementwise work, reductions and everything else NumPy does stays on one
thread whatever n is; CuPy (the GPU) is untouched; a BLAS library loaded after the call (SciPy
imported later) keeps its own count. The library may hold fewer threads than asked (OpenBLAS
stops at the count it was built for), and ``get_num_threads()`` reports what it holds.
"""
from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits


def set_num_threads(n: int) -> None:
    """Let the BLAS libraries NumPy loaded use ``n`` threads (n >= 1) for matrix products, globally.

    ``n`` is an int (a NumPy integer too); a bool, a float, a string or ``n <= 0`` is refused
    (PyTorch refuses them too, each with a RuntimeError; here a TypeError or a ValueError).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"set_num_threads: expected a positive int, got {type(n).__name__} {n!r}")
    if n <= 0:
        raise ValueError(f"set_num_threads: expected a positive int (1 or more threads), got {n}")
    threadpool_limits(limits=int(n), user_api="blas")  # applied at once; left in force (no `with`)


def get_num_threads() -> int:
    """The threads a matrix product may use: the largest count among the loaded BLAS libraries
    (after ``set_num_threads(n)`` each holds n, or its own maximum if that is less), as
    threadpoolctl reports it; 1 where no BLAS library is found (NumPy then multiplies in its
    own loops, on one thread)."""
    return max((library["num_threads"] for library in threadpool_info() if library["user_api"] == "blas"),
               default=1)
