"""Mixed precision: ``with minitx.autocast("bfloat16"): ...`` computes the products in bfloat16
(or, with "float16", in float16, beside a dynamic loss scale: minitx.optim.GradScaler).

bfloat16 keeps float32's 8 exponent bits (the same range) and 8 of its 24 mantissa bits: about
two decimal digits. A GPU's tensor cores multiply bfloat16 matrices many times faster than
float32 ones, adding the products in float32; sums over many terms (a softmax's denominator, a
norm's variance, a loss over a batch) would lose their small terms in bfloat16, so those stay
float32. Inside the block each op listed in PRECISION casts its inputs, and its output, to the
dtype its row names, with the reason beside it; ops not listed run in their inputs' dtype.

What stays float32: the parameters and the optimizer's state (the *master weights*). A product
reads a bfloat16 copy of a weight (the cast is an op, ``Astype``), so its gradient flows back
through the cast and arrives in the parameter's own dtype, float32, where Adam updates it.
Only float32 is cast down; float64 (gradient checks) is left as it is, as PyTorch's autocast
leaves it.

    with minitx.autocast("bfloat16"):
        logits = model(src, tgt_in)                # products in bfloat16, softmax etc. in float32
        loss = F.cross_entropy(logits, tgt_out)    # float32
    loss.backward()                                # outside: gradients in the parameters' dtypes

On NumPy, bfloat16 arrays are ml_dtypes' (``pip install ml_dtypes``, in minitx's test extras):
slow, but the same numbers, for tests and for learning what the precision does.

Inside one op, 16 bits are storage, not arithmetic (autocast or not): an op of bfloat16 or
float16 tensors computes in float32 and rounds its result once, as PyTorch's kernels do
("opmath"), except where its own fast path takes the 16-bit arrays: the fused kernels (bfloat16
storage, float32 inside) and the GPU's products (``Function.low_precision``). Gradients summed
over broadcast axes add in float32 too. tests/test_low_precision_ops.py holds every op of the
PyTorch parity table to float32's result within 4 units of the 16-bit dtype.

float16 keeps 11 mantissa bits (three more than bfloat16) but only 5 exponent bits: its largest
value is 65504 and its smallest (subnormal) 6e-8. The same table applies, and the forward pass
fits that range, but the small gradients of a backward pass underflow to 0: a float16 run scales
its loss up before backward and its gradients down before the step (``GradScaler``, "fp16"
in PRECISIONS). The fused kernels take float32, float64 and bfloat16 only (kernels.enabled says
no to float16), so float16 ops run the NumPy/CuPy reference code.
"""
from __future__ import annotations

import contextlib

import numpy as np

from minitx import backend

#: op (Function class name) -> (where it computes under autocast, why). "low": inputs and output
#: in the autocast dtype; "float32": inputs and output in float32 (an op whose kernels read 16-bit
#: inputs and return float32, Function.float32_from_16_bits, gets them uncast where its kernels
#: take them: CrossEntropy). A subclass without a row of its
#: own computes as its parent (PackedHeadsAttention as ScaledDotProductAttention). An op without a
#: row runs in its inputs' dtype: an embedding's rows stay float32, the residual stream they start.
PRECISION = {
    "Matmul": ("low", "a matrix product: tensor cores multiply bfloat16, adding in float32"),
    "Linear": ("low", "the same product, and a bias add"),
    "BiasActDropout": ("low", "a product's bias add (a Linear that leaves its bias to this op, as the "
                              "feed-forward's first), activation and dropout: in the product's dtype, as "
                              "Linear's own bias, so the fused kernel takes them (it refuses mixed dtypes)"),
    "ConvNd": ("low", "a convolution is a matrix product (of the weights and the input's windows), and a "
                      "bias add; PyTorch's autocast computes it in 16 bits on the CPU and the GPU"),
    "ConvTransposeNd": ("low", "the same products, read the other way"),
    "ScaledDotProductAttention": ("low", "its two products (q k^T and P v); its softmax is float32 inside"),
    "DropoutAdd": ("float32", "the residual sum every layer adds into: the stream keeps float32's mantissa, "
                              "as PyTorch's type promotion keeps it (float32 plus bfloat16 is float32)"),
    "Softmax": ("float32", "exp and a row sum: small probabilities need float32's mantissa"),
    "LogSoftmax": ("float32", "the same, and the logs of small probabilities"),
    "LayerNorm": ("float32", "a row's mean and variance: x - mean cancels digits"),
    "CrossEntropy": ("float32", "log-sum-exp over the classes and a mean over the batch"),
    "SoftCrossEntropy": ("float32", "the same, against probability targets"),
    "NllLoss": ("float32", "a mean over the batch"),
    "Sum": ("float32", "long sums lose their small terms in bfloat16"),
    "Mean": ("float32", "a long sum, then a division"),
}

_DTYPES = ("bfloat16", "float16")
_DEVICES = {"cpu": "bfloat16", "cuda": "float16"}  # device_type -> PyTorch's default autocast dtype there
_active: list = []  # the autocast dtypes in force, innermost last (None: an enabled=False block)


def autocast(device_type=None, dtype=None, enabled=True, cache_enabled=None):
    """The context in which PRECISION's ops compute in ``dtype``: "bfloat16" (the default) or
    "float16", by name or as a NumPy or ml_dtypes type; ``autocast("bfloat16")`` names it first.
    Also a decorator.

    PyTorch's arguments are taken too, so a ported loop runs unchanged: ``autocast("cuda",
    dtype=...)`` or ``device_type="cuda"`` (without a dtype, PyTorch's default there: float16 on
    "cuda", bfloat16 on "cpu"); ``enabled=False`` turns autocast off inside the block, an outer
    one's included (one code path with and without mixed precision, or a region kept in
    float32); ``cache_enabled`` has nothing to switch (each cast is an op, made at each use). The
    device_type chooses no device: the table applies to the ops of every device."""
    first = False  # whether dtype came in device_type's place
    if device_type is not None and device_type not in _DEVICES:  # minitx's own autocast("float16")
        if dtype is not None:
            raise ValueError(f"autocast: unknown device_type {device_type!r}; expected 'cpu' or 'cuda'")
        device_type, dtype, first = None, device_type, True
    if not isinstance(enabled, bool):
        raise TypeError(f"autocast: enabled must be True or False, got {enabled!r}")
    if cache_enabled not in (None, True, False):
        raise TypeError(f"autocast: cache_enabled must be True, False or None, got {cache_enabled!r}")
    if dtype is None:
        dtype = _DEVICES[device_type] if device_type else "bfloat16"
    name = dtype.__name__ if isinstance(dtype, type) else dtype  # np.float16, ml_dtypes.bfloat16: their names
    if not isinstance(name, (str, np.dtype)) or name not in _DTYPES:
        raise ValueError(f"autocast: unknown dtype {dtype!r}; expected one of {', '.join(_DTYPES)}"
                         + (f" (or a device_type: {', '.join(_DEVICES)})" if first else ""))
    return _autocasting(backend.resolve_dtype(name) if enabled else None)


@contextlib.contextmanager
def _autocasting(low):
    _active.append(low)
    try:
        yield
    finally:
        _active.pop()


def active():
    """The autocast dtype in force, or None."""
    return _active[-1] if _active else None


def is_autocast_enabled(device_type=None) -> bool:
    """Whether an autocast block is in force (PyTorch's ``torch.is_autocast_enabled``). minitx's
    autocast applies to the ops of every device, so ``device_type`` ("cpu" or "cuda") is checked
    but changes nothing (PyTorch's answers for that device's autocast, "cuda" without one)."""
    _check_device_type("is_autocast_enabled", device_type)
    return active() is not None


def get_autocast_dtype(device_type) -> np.dtype:
    """The dtype autocast computes in now, or would by default on ``device_type`` (PyTorch's
    ``torch.get_autocast_dtype``: float16 for "cuda", bfloat16 for "cpu")."""
    _check_device_type("get_autocast_dtype", device_type)
    return active() if active() is not None else backend.resolve_dtype(_DEVICES[device_type])


def _check_device_type(function: str, device_type) -> None:
    if device_type is not None and device_type not in _DEVICES:
        raise ValueError(f"{function}: unknown device_type {device_type!r}; expected 'cpu' or 'cuda'")


def call(fn, inputs):
    """Apply ``fn`` (a Function) to ``inputs`` as PRECISION says under the active autocast."""
    rule = next((PRECISION[c.__name__] for c in type(fn).__mro__ if c.__name__ in PRECISION), None)
    if rule is None:
        return fn.apply(*inputs)
    target = np.dtype(np.float32) if rule[0] == "float32" else _active[-1]
    if target == np.float32 and fn.float32_from_16_bits and _low_inputs_taken(fn, inputs):
        fn.keeps_float32 = True  # its kernels sum in float32 and return float32: no cast up
        try:
            return fn.apply(*inputs)
        finally:
            fn.keeps_float32 = False  # this call only (an op is called again under no_grad)
    out = fn.apply(*(_cast(t, target) for t in inputs))
    return _cast(out, target)


def _low_inputs_taken(fn, inputs) -> bool:
    """Whether every floating input is in the autocast dtype and fn's kernels take them as they are."""
    arrays = [t.data for t in inputs if t.dtype.name in ("float32", "bfloat16", "float16")]
    return all(a.dtype == _active[-1] for a in arrays) and fn._computes_as_they_are(arrays)


def lowered(values):
    """values with each float32 (or other 16-bit) tensor cast to the active autocast dtype, for a
    composed op that PyTorch's autocast lists though it is no Function of PRECISION's (the addmm
    family: ops.linalg._beta_input_alpha_product); anything else as it is."""
    return tuple(_cast(t, _active[-1]) if hasattr(t, "dtype") and hasattr(t, "data") else t for t in values)


def _cast(t, dtype):
    """t in ``dtype`` when it is a float32, bfloat16 or float16 tensor of another dtype (an Astype
    op, so gradients flow back through the cast); anything else as it is."""
    if t.dtype == dtype or t.dtype.name not in ("float32", "bfloat16", "float16"):
        return t
    from minitx.ops.elementwise import Astype

    return Astype(dtype)(t)


#: a training run's precision (the command lines' --precision): name -> what it means
PRECISIONS = {
    "fp32": "every product in float32",
    "tf32": "float32 products on the GPU's TF32 tensor cores (inputs rounded to 10 mantissa bits); the CPU has "
            "no TF32 and computes them in float32",
    "bf16": "mixed precision: autocast('bfloat16'), float32 master weights",
    "fp16": "mixed precision: autocast('float16'), float32 master weights, and a dynamic loss scale "
            "(GradScaler) that keeps float16's small gradients from underflowing",
}
_AUTOCAST = {"bf16": "bfloat16", "fp16": "float16"}  # the precisions that autocast, and their dtype


def default_precision(device: str) -> str:
    """The precision a run takes when it names none: 'tf32' on a GPU whose tensor cores compute
    TF32 (compute capability 8.0 on: Ampere, Hopper and later), as PyTorch's
    set_float32_matmul_precision("high") chooses; 'fp32' elsewhere."""
    if device != "cuda":
        return "fp32"
    import cupy

    return "tf32" if int(cupy.cuda.Device().compute_capability) >= 80 else "fp32"


def _check_precision(name: str) -> None:
    if name not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {name!r}")


def step_precision(name: str, device: str):
    """Set up a run's precision on ``device`` and return the context each training step's forward
    and loss run in: autocast for 'bf16' and 'fp16', nothing for the others ('tf32' is a switch of
    the matrix products, backend.allow_tf32, set here once for the run). An 'fp16' run also needs
    ``loss_scaler('fp16')`` in its Trainer."""
    _check_precision(name)
    if device == "cuda":
        backend.allow_tf32(name == "tf32")
    return (lambda: autocast(_AUTOCAST[name])) if name in _AUTOCAST else contextlib.nullcontext


def loss_scaler(name: str):
    """The GradScaler a run of precision ``name`` steps with (a new one, PyTorch's defaults) for
    'fp16', None for the others: bfloat16 has float32's range, and nothing underflows."""
    _check_precision(name)
    from minitx.optim.grad_scaler import GradScaler  # (minitx.optim imports the autograd, which imports this)

    return GradScaler() if name == "fp16" else None


def __getattr__(name):
    """``minitx.amp.GradScaler``, where PyTorch has it (torch.amp.GradScaler), imported on first use."""
    if name == "GradScaler":
        from minitx.optim.grad_scaler import GradScaler

        return GradScaler
    raise AttributeError(f"module 'minitx.amp' has no attribute {name!r}")

