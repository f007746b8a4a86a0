"""PyTorch's keyword names for minitx's arguments: ``F.sum(x, dim=1, keepdim=True)`` means
``F.sum(x, axis=1, keepdims=True)``.

minitx names an op's arguments as NumPy does (``axis``, ``keepdims``, ``ddof``); code written for
PyTorch passes ``dim=``, ``keepdim=``, ``dims=``, ``correction=``. Every public op and Tensor
method that takes an axis (but transpose, swapaxes and Tensor.permute, whose PyTorch namesakes
name their axes otherwise; and scaled_dot_product_attention, for ``attn_mask=``,
``is_causal=`` and its ``query=``, ``key=``, ``value=``; take_along_dim, for ``indices=``; tril and
triu, for ``diagonal=``) is
wrapped by :func:`takes_torch_keywords`, which gives PyTorch's keyword to the op under the op's
own name wherever the two mean the same thing. Where PyTorch's op of that name answers
differently when given ``dim=`` (its ``max`` and ``min`` give values and indices, its ``var`` and
``std`` divide by n - 1, its ``split`` cuts pieces of a size, its reductions given ``dim=()``
reduce every axis where NumPy's ``axis=()`` reduces none), ``dim=`` is a TypeError that says what
to write instead: PyTorch's spelling never gets NumPy's meaning silently. Positional arguments
are minitx's own, unchanged.
"""
from __future__ import annotations

import functools
import inspect

# PyTorch's keyword -> the names minitx's ops give the same argument (an op has at most one of them)
RENAMES = {
    "dim": ("axis", "axes"),
    "dims": ("axis", "axes"),
    "keepdim": ("keepdims",),
    "start_dim": ("start_axis",),
    "end_dim": ("end_axis",),
    "dim1": ("axis1",),
    "dim2": ("axis2",),
    "shifts": ("shift",),
    "correction": ("ddof",),
    "diagonal": ("k",),  # tril's and triu's (NumPy's k)
    "attn_mask": ("mask",),
    "is_causal": ("causal",),
}

# PyTorch's keyword -> minitx's name, for one op alone: other ops give minitx's name a meaning of
# their own (quantile's q is PyTorch's q too, tril's k its diagonal)
OP_RENAMES = {
    "scaled_dot_product_attention": {"query": "q", "key": "k", "value": "v"},
    "take_along_dim": {"indices": "index"},
}

# ops whose PyTorch namesake, given dim=, answers something other than minitx's op given axis=
DIFFERENT_WITH_DIM = {
    "max": "PyTorch's max(dim=) gives (values, indices), minitx's max(axis=) the values only (NumPy's); "
           "write amax(dim=) for the values and argmax(dim=) for the indices",
    "min": "PyTorch's min(dim=) gives (values, indices), minitx's min(axis=) the values only (NumPy's); "
           "write amin(dim=) for the values and argmin(dim=) for the indices",
    "split": "PyTorch's split(x, size, dim=) cuts pieces of that size, minitx's split(x, n, axis=) is "
             "NumPy's (n equal parts, or a list of cut points); write x.split(size, dim) (the method is "
             "PyTorch's), chunk(n, dim=) or split(x, n, axis=)",
}

_VARIANCES = ("var", "std")  # PyTorch's divide by n - 1 unless told otherwise; NumPy's (minitx's) by n

# reductions whose PyTorch namesake reduces every axis given dim=(), where NumPy's axis=() reduces none
_EMPTY_DIM_REDUCES_ALL = frozenset({"sum", "mean", "amax", "amin", "count_nonzero", "var", "std", "norm", "vector_norm",
                                     "logsumexp", "var_mean", "std_mean"})


def takes_torch_keywords(op):
    """``op`` that also takes PyTorch's keyword names for its arguments (see the module's docstring).
    The renames are read from op's signature once, here; a call that names none of PyTorch's
    keywords (minitx's own code: axis=, keepdims=) costs one set test."""
    parameters = inspect.signature(op).parameters
    renames = {theirs: ours for theirs, names in RENAMES.items() for ours in names if ours in parameters}
    if "ddof" in parameters:
        renames["unbiased"] = "ddof"
    renames.update(OP_RENAMES.get(op.__name__, {}))
    name, theirs = op.__name__, frozenset(renames)

    @functools.wraps(op)
    def with_torch_keywords(*args, **kwargs):
        if kwargs and not theirs.isdisjoint(kwargs):
            kwargs = _translated(name, kwargs, renames)
        return op(*args, **kwargs)

    with_torch_keywords.takes_torch_keywords = True  # (what tests/test_torch_spelling.py looks for: other
    return with_torch_keywords                       # wrappers copy it, as functools.wraps copies __dict__)


def _translated(op: str, kwargs: dict, renames: dict) -> dict:
    """kwargs with PyTorch's names as ``op``'s own; a TypeError where the two would differ."""
    if "dim" in kwargs and op in DIFFERENT_WITH_DIM:
        raise TypeError(f"{op}: {DIFFERENT_WITH_DIM[op]}")
    if op in _EMPTY_DIM_REDUCES_ALL and isinstance(kwargs.get("dim"), (tuple, list)) and not kwargs["dim"]:
        raise TypeError(f"{op}: PyTorch's {op}(dim=()) reduces every axis, NumPy's (minitx's) {op}(axis=()) none; "
                        "write dim=None for every axis, or axis=() for none")
    if op in _VARIANCES and "dim" in kwargs and not kwargs.keys() & {"correction", "unbiased", "ddof"}:
        raise TypeError(f"{op}: PyTorch's {op}(dim=) divides by n - 1 unless told otherwise, minitx's "
                        f"{op}(axis=) by n (NumPy's ddof=0); say which with dim=: correction=1 (PyTorch's "
                        "default) or correction=0")
    translated = {}
    for key, value in kwargs.items():
        ours = renames.get(key, key)
        if key == "unbiased":
            if not isinstance(value, bool):
                raise TypeError(f"{op}: unbiased must be True or False, got {value!r}")
            value = int(value)
        if ours in translated or (ours != key and ours in kwargs):
            given = [name for name in kwargs if renames.get(name, name) == ours]
            raise TypeError(f"{op}: got {' and '.join(f'{name}=' for name in given)}, which name one argument "
                            f"({ours}); give it once")
        translated[ours] = value
    return translated
