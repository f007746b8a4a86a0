"""minitx: a small deep-learning framework written from scratch to be read.

    import minitx
    import minitx.functional as F

    x = minitx.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    loss = (F.softmax(x @ x.T, axis=-1) * x).sum()
    loss.backward()          # x.grad now holds d(loss)/dx
"""
import inspect as _inspect

from minitx import backend, cuda
from minitx.autograd import (Function, Tensor, enable_grad, inference_mode, is_anomaly_check_nan_enabled,
                             is_anomaly_enabled, is_grad_enabled, is_inference_mode_enabled, no_grad,
                             set_anomaly_enabled, set_grad_enabled, tensor)
from minitx.autograd.tensor import OP_NAMES as _OP_NAMES, naming as _naming
from minitx.backend import (are_deterministic_algorithms_enabled, is_deterministic_algorithms_warn_only_enabled,
                            set_default_device, use_deterministic_algorithms)
from minitx.creation import (arange, as_tensor, asarray, bartlett_window, bernoulli, binomial, blackman_window,
                             empty, empty_like, eye, from_dlpack, from_numpy, full, full_like, get_default_dtype,
                             hamming_window, hann_window, is_tensor, kaiser_window, linspace, logspace, multinomial,
                             normal, ones, ones_like, poisson, rand, rand_like, randint, randint_like, randn,
                             randn_like, randperm, scalar_tensor, tril_indices, triu_indices, zeros, zeros_like)
from minitx.random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

# The creation functions name themselves in their errors as the ops do: zeros(2, dtype="a") says zeros,
# and full_like full_like, not the full it calls (minitx.autograd.tensor.naming)
_created = {name: function for name, function in globals().items()
            if _inspect.isfunction(function) and function.__module__ == "minitx.creation"}
_OP_NAMES.update(_created)
globals().update({name: _naming(function, name) for name, function in _created.items()})
for _name in _created:  # (pickle finds each as minitx.<name>: this wrapper, not minitx.creation's function)
    globals()[_name].__module__ = __name__
del _created, _name
from minitx import functional  # noqa: F401  (import minitx.functional as F)
from minitx.serialization import load, save
from minitx.amp import autocast, get_autocast_dtype, is_autocast_enabled
from minitx.dtypes import can_cast, finfo, iinfo, promote_types, result_type, set_default_dtype
from minitx.printing import set_printoptions
from minitx.threads import get_num_threads, set_num_threads
from minitx.functional import concatenate as cat, stack  # PyTorch's top-level names

# PyTorch's top-level math (torch.exp(x), torch.where(c, a, b), torch.matmul ...): each op of
# minitx.functional is also minitx.<name>, but for those whose torch namesake answers otherwise:
# asked for, they raise an AttributeError saying what to write (__getattr__ below). Left out of
# __all__: `from minitx import *` must not hide Python's sum, abs, round, pow in your code (nor
# may this file use those builtins below this point).
_TORCH_ANSWERS_OTHERWISE = {
    "max": "torch.max(x, dim) gives (values, indices): write x.amax(dim=...) and x.argmax(dim=...) "
           "(torch.max(a, b): minitx.maximum(a, b); minitx.functional.max(x, axis) is NumPy's, the values)",
    "min": "torch.min(x, dim) gives (values, indices): write x.amin(dim=...) and x.argmin(dim=...) "
           "(torch.min(a, b): minitx.minimum(a, b); minitx.functional.min(x, axis) is NumPy's, the values)",
    "var": "torch.var divides by n - 1: write x.var(correction=1) (minitx.functional.var is NumPy's, ddof=0)",
    "std": "torch.std divides by n - 1: write x.std(correction=1) (minitx.functional.std is NumPy's, ddof=0)",
    "split": "torch.split(x, size, dim) cuts pieces of a size: write x.split(size, dim) (the method is "
             "PyTorch's), or minitx.functional.split(x, parts or cuts, axis=...) (NumPy's)",
    "equal": "torch.equal(a, b) is one bool: write a.shape == b.shape and bool((a == b).all()) "
             "(minitx.functional.equal is NumPy's ==, entry by entry)",
    "transpose": "torch.transpose(x, dim0, dim1) swaps two axes: write x.swapaxes(dim0, dim1) "
                 "(minitx.functional.transpose(x, axes) is NumPy's, a permutation)",
    "batch_norm": "torch.batch_norm takes (input, weight, bias, running_mean, running_var, ...): write "
                  "minitx.functional.batch_norm(x, running_mean, running_var, weight, bias, ...), "
                  "torch.nn.functional's order",
    "embedding": "torch.embedding takes (weight, ids): write minitx.functional.embedding(ids, weight), "
                 "torch.nn.functional's order",
}
globals().update((name, op) for name, op in vars(functional).items()
                 if not name.startswith("_") and name not in _TORCH_ANSWERS_OTHERWISE)



def device(name: str) -> str:
    """PyTorch's torch.device(name): in minitx a device is its name, "cpu" or "cuda" ("cuda:0" reads
    as "cuda"); whether a GPU is there is asked when a tensor goes to it, as in PyTorch."""
    kind = str(name).split(":")[0]
    if kind not in ("cpu", "cuda"):
        raise ValueError(f"device: expected 'cpu' or 'cuda' (or 'cuda:0'), got {name!r}")
    return kind


def _as_function(method: str):
    """torch.<method>(x, ...) as x.<method>(...): PyTorch's top-level form of a Tensor method, whose
    errors name it as the method's do (x given as data no tensor holds too)."""
    def function(x, *args, **kwargs):
        return getattr(as_tensor(x), method)(*args, **kwargs)

    function.__name__ = function.__qualname__ = method
    function.__doc__ = f"torch.{method}(x, ...): x.{method}(...), see Tensor.{method}."
    return _naming(function, method)


# Tensor methods PyTorch also has at its top level (torch.flatten(x, 1), torch.clamp(x, min=0) ...)
# and the in-place forms PyTorch has there (torch.exp_(x) ...; torch.relu_ is minitx.functional.relu_)
for _method in ("flatten", "clone", "numel", "chunk", "unbind", "any", "all", "amax", "amin",
                "mm", "bmm", "dot", "t", "repeat_interleave", "count_nonzero", "index_select", "clamp_min", "clamp_max",
                "logical_and", "logical_or", "logical_xor", "narrow", "unflatten", "split_with_sizes", "detach",
                "is_floating_point", "is_nonzero", "is_same_size", "is_signed", "is_inference",
                "abs_", "neg_", "exp_", "log_", "log1p_", "expm1_", "sqrt_", "rsqrt_", "reciprocal_", "square_",
                "sin_", "cos_", "tanh_", "sigmoid_", "floor_", "ceil_", "round_", "trunc_", "nan_to_num_",
                "clamp_", "clip_", "clamp_min_", "clamp_max_", "detach_", "fill_", "zero_"):
    globals()[_method] = _as_function(_method)
del _method


def __getattr__(name):
    if name in _TORCH_ANSWERS_OTHERWISE:
        raise AttributeError(f"module 'minitx' has no attribute {name!r}: {_TORCH_ANSWERS_OTHERWISE[name]}")
    raise AttributeError(f"module 'minitx' has no attribute {name!r}")


# dtype names, as torch.float32 is one: minitx.tensor(x, dtype=minitx.int8)
float16, float32, float64 = "float16", "float32", "float64"
int8, int16, int32, int64 = "int8", "int16", "int32", "int64"
uint8, uint16, uint32, uint64 = "uint8", "uint16", "uint32", "uint64"
bool_ = "bool"
bfloat16 = "bfloat16"  # ml_dtypes' type; see minitx.amp
# PyTorch's other names for them (torch.long ...). float, int and bool hide Python's builtins in
# this namespace only (minitx.float), as torch's do; left out of __all__ so that
# `from minitx import *` does not hide them in yours, and nothing below this line may use them.
long, int, short = int64, int32, int16
float, double, half = float32, float64, float16
bool = bool_

__version__ = "0.1.0"

# after `import minitx`, minitx.linalg, minitx.nn, minitx.optim, minitx.special and minitx.utils.data are there,
# as torch's are
from minitx import linalg, nn, optim, special, utils  # noqa: E402
# and the top-level names torch gives some of torch.linalg's (torch.det, torch.inverse, ...)
from minitx.ops.matrix import (cholesky_inverse, cholesky_solve, det, inverse, logdet, lu_unpack,  # noqa: E402
                               matrix_exp, matrix_power, pinverse, slogdet, triangular_solve, vander)
# and torch.lu and torch.lu_solve, PyTorch's older forms of linalg.lu_factor and linalg.lu_solve (b first)
from minitx.ops.matrix import lu_solve_b_first as lu_solve, lu_with_info as lu  # noqa: E402

lu.called, lu_solve.called = "lu", "lu_solve"  # (their errors name them so, not lu_with_info)

__all__ = [
    "Tensor", "tensor", "Function", "no_grad", "enable_grad", "is_grad_enabled", "manual_seed", "Generator",
    "zeros", "ones", "full", "arange", "rand", "randn", "zeros_like", "ones_like", "from_dlpack",
    "set_default_device", "cuda", "backend", "functional", "save", "load", "autocast", "cat", "stack",
    "inference_mode", "set_grad_enabled", "empty", "eye", "linspace", "full_like", "empty_like",
    "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal", "multinomial", "bernoulli",
    "poisson", "binomial",
    "from_numpy", "as_tensor", "is_tensor", "get_default_dtype",
    "initial_seed", "seed", "get_rng_state", "set_rng_state",
    "finfo", "iinfo", "result_type", "promote_types", "can_cast", "set_default_dtype",
    "set_printoptions", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
    "set_anomaly_enabled", "is_inference_mode_enabled", "is_autocast_enabled", "get_autocast_dtype",
    "logspace", "scalar_tensor", "tril_indices", "triu_indices", "asarray", "hann_window", "hamming_window",
    "blackman_window", "bartlett_window", "kaiser_window", "set_num_threads", "get_num_threads",
]
