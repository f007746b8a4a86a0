"""Code written for PyTorch, spelled as PyTorch spells it, in minitx: keyword names (dim=,
keepdim=, dims=, start_dim=, correction=, ...; minitx/keywords.py), ``x.size(dim)``, the named
pairs of sort/topk, attention's attn_mask=/is_causal= and the top-level math (minitx.exp ...).
Each call below is written once and run in both libraries on the same float64 values; values,
dtypes and gradients must agree. Where PyTorch's op means something else with dim= (max, min,
var, std, split), minitx refuses by name, and leaves those out of its top level.
"""
import inspect

import numpy as np
import pytest

from torch_reference import import_torch

torch = import_torch()

import minitx  # noqa: E402
import minitx.functional as F  # noqa: E402
from minitx.keywords import DIFFERENT_WITH_DIM  # noqa: E402


class TorchOps:
    """torch.nn.functional's op of a name where it has one, else torch's (torch.softmax is both)."""

    def __getattr__(self, name):
        return getattr(torch.nn.functional, name, None) or getattr(torch, name)


TORCH_OPS = TorchOps()
RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4, 5))
INDEX = RNG.integers(0, 4, (3, 2, 5))

# label -> call(t, ops, lib): t a tensor, ops minitx.functional or TorchOps, lib minitx or torch
FUNCTIONS = {
    "sum": lambda t, o, m: o.sum(t, dim=1, keepdim=True),
    "mean": lambda t, o, m: o.mean(t, dim=(0, 2)),
    "var": lambda t, o, m: o.var(t, dim=1, correction=1),
    "var unbiased=False": lambda t, o, m: o.var(t, dim=-1, unbiased=False, keepdim=True),
    "std": lambda t, o, m: o.std(t, dim=0, correction=0),
    "std unbiased=True": lambda t, o, m: o.std(t, dim=2, unbiased=True),
    "logsumexp": lambda t, o, m: o.logsumexp(t, dim=2, keepdim=True),
    "prod": lambda t, o, m: o.prod(t, dim=1),
    "norm": lambda t, o, m: o.norm(t, p=3, dim=1, keepdim=True),
    "softmax": lambda t, o, m: o.softmax(t, dim=1),
    "log_softmax": lambda t, o, m: o.log_softmax(t, dim=0),
    "softmin": lambda t, o, m: o.softmin(t, dim=2),
    "glu": lambda t, o, m: o.glu(t, dim=1),
    # random noise, drowned by logits 1e4 apart along dim 1: the same one-hot in both libraries (gradient 0)
    "gumbel_softmax": lambda t, o, m: o.gumbel_softmax(t + m.tensor([[[0.0], [3e4], [1e4], [2e4]]]), tau=0.5,
                                                       hard=True, dim=1),
    "cumsum": lambda t, o, m: o.cumsum(t, dim=1),
    "cumprod": lambda t, o, m: o.cumprod(t, dim=2),
    "logcumsumexp": lambda t, o, m: o.logcumsumexp(t, dim=0),
    "cummax": lambda t, o, m: o.cummax(t, dim=1)[0],
    "cummin": lambda t, o, m: o.cummin(t, dim=2)[0],
    "sort": lambda t, o, m: o.sort(t, dim=1, descending=True)[0],
    "topk": lambda t, o, m: o.topk(t, 2, dim=1)[0],
    "median": lambda t, o, m: o.median(t, dim=2, keepdim=True)[0],
    "nanmedian": lambda t, o, m: o.nanmedian(t, dim=0)[0],
    "kthvalue": lambda t, o, m: o.kthvalue(t, 2, dim=1, keepdim=True).values,
    "mode": lambda t, o, m: o.mode(t.round(), dim=1, keepdim=True).values,
    "quantile": lambda t, o, m: o.quantile(t, 0.3, dim=2, keepdim=True, interpolation="midpoint"),
    "nanquantile": lambda t, o, m: o.nanquantile(t, 0.8, dim=0),
    "diff": lambda t, o, m: o.diff(t, 2, dim=1, prepend=t[:, :1]),
    "cross": lambda t, o, m: o.cross(t, t.flip(1), dim=0),
    "permute": lambda t, o, m: o.permute(t, dims=(2, 0, 1)),
    "squeeze": lambda t, o, m: o.squeeze(t[:, :1], dim=1),
    "unsqueeze": lambda t, o, m: o.unsqueeze(t, dim=-1),
    "concatenate": lambda t, o, m: o.concatenate([t, t * 2], dim=1),
    "stack": lambda t, o, m: o.stack([t, t * 2], dim=2),
    "cat": lambda t, o, m: m.cat([t, t * 2], dim=-1),
    "flip": lambda t, o, m: o.flip(t, dims=(0, 2)),
    "repeat": lambda t, o, m: (o.repeat if m is minitx else torch.repeat_interleave)(t, 2, dim=2),
    "roll": lambda t, o, m: o.roll(t, shifts=2, dims=1),
    "gather": lambda t, o, m: o.gather(t, dim=1, index=m.tensor(INDEX[:, :, :])),
    "scatter_add": lambda t, o, m: o.scatter_add(t, dim=1, index=m.tensor(INDEX), src=t[:, :2] * 3),
    "scatter_reduce": lambda t, o, m: o.scatter_reduce(t, dim=1, index=m.tensor(INDEX), src=t[:, :2] * 3,
                                                       reduce="amax", include_self=False),
    "scatter": lambda t, o, m: o.scatter(t, dim=2, index=m.tensor(np.argsort(INDEX, axis=2)[:, :, :3]),
                                         src=t[:, :2, :3] * 3),
    "index_add": lambda t, o, m: o.index_add(t, dim=1, index=m.tensor([3, 0, 3]), source=t[:, :3] * 2, alpha=0.5),
    "index_fill": lambda t, o, m: (o.index_fill if m is minitx else torch.index_fill)(t, dim=2, index=m.tensor([4, 1]),
                                                                                      value=-1.0),
    "index_copy": lambda t, o, m: (o.index_copy if m is minitx else torch.index_copy)(t, dim=0, index=m.tensor([2, 0]),
                                                                                      source=t[:2] * 3),
    "diagonal": lambda t, o, m: o.diagonal(t, offset=1, dim1=2, dim2=1),
    "diag_embed": lambda t, o, m: o.diag_embed(t, offset=1, dim1=0, dim2=2),
    "take_along_dim": lambda t, o, m: o.take_along_dim(t, m.tensor(INDEX), dim=1),
    "tensor_split": lambda t, o, m: m.stack([c.sum(1) for c in o.tensor_split(t, 3, dim=1)]),
    "sliding_windows": lambda t, o, m: (o.sliding_windows(t, dim=1, size=3, step=2) if m is minitx  # (PyTorch's:
                                        else t.unfold(dimension=1, size=3, step=2)),  # the method alone)
    "tril": lambda t, o, m: o.tril(t, diagonal=-1),
    "triu": lambda t, o, m: o.triu(t, diagonal=2),
    "normalize": lambda t, o, m: o.normalize(t, p=2.0, dim=2),
    "cosine_similarity": lambda t, o, m: o.cosine_similarity(t, t.flip(0), dim=0),
    "pairwise_distance": lambda t, o, m: o.pairwise_distance(t, t * 0.5, keepdim=True),
    "rot90": lambda t, o, m: o.rot90(t, 3, dims=(2, 0)),
    "select": lambda t, o, m: o.select(t, dim=1, index=-2),
    "slice_scatter": lambda t, o, m: (o.slice_scatter if m is minitx else torch.slice_scatter)(
        t, t[:, 1::2] * 2, dim=1, start=1, step=2),
    "select_scatter": lambda t, o, m: (o.select_scatter if m is minitx else torch.select_scatter)(
        t, t[:, :, 0] * 2, dim=2, index=-1),
    "diagonal_scatter": lambda t, o, m: (o.diagonal_scatter if m is minitx else torch.diagonal_scatter)(
        t, t[0, :, :3] * 2, offset=1, dim1=0, dim2=2),
    "index_reduce": lambda t, o, m: (o.index_reduce if m is minitx else torch.index_reduce)(
        t, dim=1, index=m.tensor([3, 0, 3]), source=t[:, :3] * 2, reduce="amax", include_self=False),
    "aminmax": lambda t, o, m: o.aminmax(t, dim=1, keepdim=True).max,
    "nansum": lambda t, o, m: o.nansum(t, dim=(0, 2), keepdim=True),
    "nanmean": lambda t, o, m: o.nanmean(t, dim=-1),
    "var_mean": lambda t, o, m: m.stack(list(o.var_mean(t, dim=1, keepdim=True))),
    "std_mean": lambda t, o, m: m.stack(list(o.std_mean(t, dim=(0, 2), unbiased=False))),
    "renorm": lambda t, o, m: o.renorm(t, p=1, dim=-1, maxnorm=1.0),
    "gradient": lambda t, o, m: m.stack(list(o.gradient(t, spacing=[2.0, 0.5], dim=[0, -1], edge_order=2))),
    "trapezoid": lambda t, o, m: o.trapezoid(t, dx=0.5, dim=1),
    "trapz": lambda t, o, m: o.trapz(t, t * t, dim=0),
    "cumulative_trapezoid": lambda t, o, m: o.cumulative_trapezoid(t, t[0, 0], dim=-1),
}

METHODS = {
    "sum": lambda t, m: t.sum(dim=-1),
    "mean": lambda t, m: t.mean(dim=1, keepdim=True),
    "var": lambda t, m: t.var(dim=2, correction=1),
    "std": lambda t, m: t.std(dim=0, unbiased=False),
    "logsumexp": lambda t, m: t.logsumexp(dim=1),
    "norm": lambda t, m: t.norm(p=1, dim=2, keepdim=True),
    "prod": lambda t, m: t.prod(dim=0, keepdim=True),
    "amax": lambda t, m: t.amax(dim=(0, 2), keepdim=True),
    "amin": lambda t, m: t.amin(dim=1),
    "softmax": lambda t, m: t.softmax(dim=0),
    "log_softmax": lambda t, m: t.log_softmax(dim=2),
    "squeeze": lambda t, m: t[:1].squeeze(dim=0),
    "unsqueeze": lambda t, m: t.unsqueeze(dim=1),
    "flatten": lambda t, m: t.flatten(start_dim=1, end_dim=2),
    "flip": lambda t, m: t.flip(dims=(1,)),
    "roll": lambda t, m: t.roll(shifts=-1, dims=2),
    "repeat_interleave": lambda t, m: t.repeat_interleave(2, dim=1),
    "repeat (NumPy's: PyTorch's repeat_interleave)": lambda t, m: (t.repeat if m is minitx else t.repeat_interleave)(
        3, dim=0),
    "cumsum": lambda t, m: t.cumsum(dim=2),
    "cumprod": lambda t, m: t.cumprod(dim=0),
    "logcumsumexp": lambda t, m: t.logcumsumexp(dim=1),
    "cummax": lambda t, m: t.cummax(dim=1).values,
    "cummin": lambda t, m: t.cummin(dim=2)[0],
    "sort": lambda t, m: t.sort(dim=0)[0],
    "topk": lambda t, m: t.topk(3, dim=2, largest=False)[0],
    "diagonal": lambda t, m: t.diagonal(dim1=0, dim2=2),
    "diag_embed": lambda t, m: t.diag_embed(offset=-1, dim1=-1, dim2=0),
    "take_along_dim": lambda t, m: t.take_along_dim(m.tensor(INDEX), dim=1),
    "tensor_split": lambda t, m: m.stack([c.sum(2) for c in t.tensor_split([1, 3], dim=2)]),
    "unfold": lambda t, m: t.unfold(dimension=2, size=2, step=1),
    "triu": lambda t, m: t.triu(diagonal=1),
    "narrow": lambda t, m: t.narrow(dim=1, start=1, length=2),
    "unflatten": lambda t, m: t.unflatten(dim=2, sizes=(5, 1)),
    "gather": lambda t, m: t.gather(dim=1, index=m.tensor(INDEX)),
    "scatter_add": lambda t, m: t.scatter_add(dim=1, index=m.tensor(INDEX), src=t[:, :2]),
    "index_select": lambda t, m: t.index_select(dim=2, index=m.tensor([4, 0, 4])),
    "chunk": lambda t, m: m.stack([c.sum(2) for c in t.chunk(2, dim=1)]),
    "median": lambda t, m: t.median(dim=1, keepdim=True).values,
    "nanmedian": lambda t, m: t.nanmedian(dim=2)[0],
    "kthvalue": lambda t, m: t.kthvalue(3, dim=2).values,
    "mode": lambda t, m: t.round().mode(dim=0)[0],
    "quantile": lambda t, m: t.quantile(0.75, dim=0, keepdim=True),
    "nanquantile": lambda t, m: t.nanquantile(0.2, dim=1, interpolation="lower"),
    "diff": lambda t, m: t.diff(dim=0, append=t[:1] * 2),
    "cross": lambda t, m: t.cross(t * t, dim=0),
    "index_add": lambda t, m: t.index_add(dim=1, index=m.tensor([3, 0]), source=t[:, :2] * 2, alpha=-1.5),
    "scatter": lambda t, m: t.scatter(dim=1, index=m.tensor(np.argsort(INDEX, axis=1)[:, :2]), src=t[:, :2] * 3),
    "unbind": lambda t, m: m.stack([u * (k + 1) for k, u in enumerate(t.unbind(dim=2))]),
    "index_fill": lambda t, m: t.index_fill(dim=1, index=m.tensor([3, 0]), value=2.5),
    "index_copy": lambda t, m: t.index_copy(dim=2, index=m.tensor([4, 1]), source=t[:, :, :2] * 2),
    "scatter_reduce": lambda t, m: t.scatter_reduce(dim=1, index=m.tensor(INDEX), src=t[:, :2], reduce="prod"),
    "rot90": lambda t, m: t.rot90(k=-1, dims=(1, 2)),
    "select": lambda t, m: t.select(dim=2, index=3),
    "slice_scatter": lambda t, m: t.slice_scatter(t[:, :, :2] * 2, dim=2, end=2),
    "select_scatter": lambda t, m: t.select_scatter(t[0] * 2, dim=0, index=1),
    "diagonal_scatter": lambda t, m: t.diagonal_scatter(t[0, :, :3] * 2, offset=-1, dim1=-1, dim2=0),
    "index_reduce": lambda t, m: t.index_reduce(dim=2, index=m.tensor([0, 4]), source=t[:, :, 1:3], reduce="mean"),
    "aminmax": lambda t, m: t.aminmax(dim=0).min,
    "nansum": lambda t, m: t.nansum(dim=1),
    "nanmean": lambda t, m: t.nanmean(dim=(0, 1), keepdim=True),
    # the in-place forms (on a computed tensor: the write is recorded)
    "scatter_": lambda t, m: (t * 1).scatter_(dim=2, index=m.tensor(np.argsort(INDEX, axis=2)[:, :, :3]), value=0.5),
    "scatter_add_": lambda t, m: (t * 1).scatter_add_(dim=1, index=m.tensor(INDEX), src=t[:, :2] * 3),
    "scatter_reduce_": lambda t, m: (t * 1).scatter_reduce_(dim=1, index=m.tensor(INDEX), src=t[:, :2] * 3,
                                                            reduce="amin", include_self=False),
    "index_add_": lambda t, m: (t * 1).index_add_(dim=2, index=m.tensor([0, 4, 0]), source=t[:, :, :3], alpha=2),
    "index_fill_": lambda t, m: (t * 1).index_fill_(dim=0, index=m.tensor([1]), value=-3.0),
    "index_reduce_": lambda t, m: (t * 1).index_reduce_(dim=0, index=m.tensor([2, 2]), source=t[:2] * 2, reduce="prod"),
    "index_copy_": lambda t, m: (t * 1).index_copy_(dim=1, index=m.tensor([2, 1]), source=t[:, 2:] * 2),
    "cumsum_": lambda t, m: (t * 1).cumsum_(dim=2),
    "cumprod_": lambda t, m: (t * 1).cumprod_(dim=0),
    "renorm": lambda t, m: t.renorm(p=2, dim=1, maxnorm=0.5),
}

# no gradient: indices, booleans, counts
INTEGER_FUNCTIONS = {
    "argmax": lambda t, o, m: o.argmax(t, dim=2, keepdim=True),
    "argmin": lambda t, o, m: o.argmin(t, dim=0),
    "argsort": lambda t, o, m: o.argsort(t, dim=1, descending=True),
    "unique_consecutive": lambda t, o, m: o.unique_consecutive((t > 0).long(), return_counts=True, dim=2)[1],
}
INTEGER_METHODS = {
    "argmax": lambda t, m: t.argmax(dim=1, keepdim=True),
    "argmax keepdim, no dim": lambda t, m: t.argmax(keepdim=True),
    "argmin": lambda t, m: t.argmin(dim=-1),
    "argsort": lambda t, m: t.argsort(dim=1, descending=True),
    "any": lambda t, m: (t > 1).any(dim=1, keepdim=True),
    "all": lambda t, m: (t > -2).all(dim=0),
    "count_nonzero": lambda t, m: (t > 0).count_nonzero(dim=(0, 2)),
    "sort indices": lambda t, m: t.sort(dim=2)[1],
    "kthvalue indices": lambda t, m: t.kthvalue(2, dim=0, keepdim=True)[1],
    "mode indices": lambda t, m: t.round().mode(dim=1, keepdim=True)[1],
    "unique_consecutive": lambda t, m: (t[:, :1] > 0).long().unique_consecutive(return_inverse=True, dim=0)[1],
    "stride": lambda t, m: m.tensor([t.stride(dim=1), t.swapaxes(0, 2).stride(dim=-1)]),
}


def same(ours, theirs, tolerance=1e-12):
    theirs = theirs.detach()
    assert ours.shape == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=tolerance, atol=tolerance)


def values_and_gradients(call):
    """call's result and the input's gradient, in both libraries: [(ours, theirs), ...]."""
    x, tx = minitx.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    y, ty = call(x, minitx), call(tx, torch)
    weights = RNG.standard_normal(y.shape)  # a gradient that tells the entries apart
    (y * minitx.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    return [(y, ty), (x.grad, tx.grad)]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_function_takes_pytorchs_keywords_with_pytorchs_meaning(name):
    call = FUNCTIONS[name]
    for ours, theirs in values_and_gradients(lambda t, m: call(t, F if m is minitx else TORCH_OPS, m)):
        same(ours, theirs)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_method_takes_pytorchs_keywords_with_pytorchs_meaning(name):
    for ours, theirs in values_and_gradients(METHODS[name]):
        same(ours, theirs)


@pytest.mark.parametrize("name", sorted(INTEGER_FUNCTIONS))
def test_function_without_gradient_takes_pytorchs_keywords(name):
    call = INTEGER_FUNCTIONS[name]
    same(call(minitx.tensor(A), F, minitx), call(torch.tensor(A), TORCH_OPS, torch))


@pytest.mark.parametrize("name", sorted(INTEGER_METHODS))
def test_method_without_gradient_takes_pytorchs_keywords(name):
    call = INTEGER_METHODS[name]
    same(call(minitx.tensor(A), minitx), call(torch.tensor(A), torch))


def takes_an_axis(function):
    return bool({"axis", "axes", "keepdims", "start_axis", "end_axis", "axis1", "axis2"}
                & set(inspect.signature(function).parameters))


# functions and methods with an axis whose PyTorch namesake takes it under another meaning: left as
# NumPy's (their PyTorch keywords would be a TypeError, not NumPy's meaning under PyTorch's name)
NUMPY_ONLY = {"transpose": "PyTorch's transpose(dim0, dim1) swaps two axes; minitx's is a permutation",
              "swapaxes": "PyTorch's swapaxes(axis0, axis1) against NumPy's (axis1, axis2): one name, two axes",
              "permute": "Tensor.permute(*axes): PyTorch's *dims, positional"}


def test_every_function_and_method_with_an_axis_takes_pytorchs_keywords():
    """So a new op with an axis cannot forget them: each is wrapped, and called above."""
    functions = {name for name, f in vars(F).items() if callable(f) and not name.startswith("_")
                 and not isinstance(f, type) and takes_an_axis(f)}
    methods = {name for name, f in vars(minitx.Tensor).items() if callable(f) and not name.startswith("_")
               and takes_an_axis(f)}
    for names, tables, where in ((functions, (FUNCTIONS, INTEGER_FUNCTIONS, DIFFERENT_WITH_DIM), vars(F)),
                                 (methods, (METHODS, INTEGER_METHODS, DIFFERENT_WITH_DIM), vars(minitx.Tensor))):
        unwrapped = sorted(name for name in names - set(NUMPY_ONLY)
                           if not getattr(where[name], "takes_torch_keywords", False))
        assert unwrapped == []
        called = {label.split()[0] for table in tables for label in table}
        assert sorted(names - called - set(NUMPY_ONLY)) == []


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_and_min_refuse_dim_and_say_what_to_write(op):
    x = minitx.tensor(A)
    for call in (lambda: getattr(F, op)(x, dim=1), lambda: getattr(x, op)(dim=1, keepdim=True)):
        with pytest.raises(TypeError, match=rf"^{op}: PyTorch's {op}\(dim=\) gives \(values, indices\).*"
                                            rf"a{op}\(dim=\).*arg{op}\(dim=\)"):
            call()
    # their keepdim alone, and axis=, keep minitx's (and NumPy's) meaning
    same(getattr(x, op)(keepdim=True), getattr(torch, f"a{op}")(torch.tensor(A), dim=(0, 1, 2), keepdim=True))
    same(getattr(F, op)(x, axis=1), getattr(torch.tensor(A), op)(dim=1).values)


@pytest.mark.parametrize("op", ["var", "std"])
def test_var_and_std_with_dim_need_the_divisor_said(op):
    """PyTorch's divides by n - 1 by default, NumPy's (minitx's) by n: with dim= neither is assumed."""
    x = minitx.tensor(A)
    for call in (lambda: getattr(F, op)(x, dim=1), lambda: getattr(x, op)(dim=(0, 1))):
        with pytest.raises(TypeError, match=rf"^{op}: PyTorch's {op}\(dim=\) divides by n - 1 .*correction=1"):
            call()
    for given in (dict(correction=1), dict(unbiased=True), dict(ddof=1)):
        same(getattr(x, op)(dim=1, **given), getattr(torch.tensor(A), op)(dim=1))
    same(getattr(x, op)(unbiased=False), getattr(torch.tensor(A), op)(unbiased=False))
    with pytest.raises(TypeError, match=rf"^{op}: unbiased must be True or False, got 1"):
        getattr(x, op)(dim=1, unbiased=1)
    with pytest.raises(TypeError, match=rf"^{op}: got correction= and unbiased=, which name one argument \(ddof\)"):
        getattr(x, op)(dim=1, correction=1, unbiased=True)


def test_split_refuses_dim_and_says_what_to_write():
    with pytest.raises(TypeError, match=r"^split: PyTorch's split\(x, size, dim=\) cuts pieces of that size.*"
                                        r"chunk\(n, dim=\)"):
        F.split(minitx.tensor(A), 2, dim=1)
    assert [p.shape for p in F.split(minitx.tensor(A), 2, axis=1)] == [(3, 2, 5), (3, 2, 5)]


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin", "count_nonzero", "logsumexp", "norm"])
def test_a_reduction_given_dim_empty_says_what_to_write(op):
    """PyTorch's sum(dim=()) reduces every axis, NumPy's sum(axis=()) none: dim=() is refused, axis=()
    keeps NumPy's meaning."""
    x = minitx.tensor(A)
    for empty in ((), []):
        with pytest.raises(TypeError, match=rf"^{op}: PyTorch's {op}\(dim=\(\)\) reduces every axis.*dim=None"):
            getattr(x, op)(dim=empty)
    if op not in ("count_nonzero", "logsumexp"):
        assert getattr(x, op)(axis=()).shape == x.shape


def test_both_names_of_one_argument_are_refused():
    x = minitx.tensor(A)
    with pytest.raises(TypeError, match=r"^sum: got axis= and dim=, which name one argument \(axis\); give it once"):
        x.sum(axis=1, dim=1)
    with pytest.raises(TypeError, match=r"^mean: got keepdim= and keepdims=, which name one argument"):
        F.mean(x, keepdim=True, keepdims=True)
    with pytest.raises(TypeError):  # a keyword neither library has is Python's TypeError, as before
        x.sum(dimension=1)


def test_the_wrapped_op_keeps_its_name_signature_and_docstring():
    """help(F.sum) shows minitx's own signature; the wrapper is an implementation detail."""
    for function in (F.sum, F.softmax, minitx.Tensor.mean):
        assert function.__wrapped__.__doc__ == function.__doc__
        assert inspect.signature(function) == inspect.signature(function.__wrapped__)
    assert "axis" in inspect.signature(F.sum).parameters and F.sum.__name__ == "sum"


def test_size_is_numpys_number_and_pytorchs_call():
    """``x.size`` is the number of entries (NumPy's); ``x.size()`` and ``x.size(dim)`` are PyTorch's."""
    x, tx = minitx.tensor(A), torch.tensor(A)
    assert x.size == A.size and isinstance(x.size, int) and x.size + 1 == A.size + 1
    assert x.size() == tuple(tx.size()) == (3, 4, 5)
    assert [x.size(d) for d in (0, 1, 2, -1, -3)] == [tx.size(d) for d in (0, 1, 2, -1, -3)]
    assert x.size(dim=1) == tx.size(dim=1) and minitx.tensor(2.0).size() == ()
    for dim in (3, -4, 1.0, True):
        with pytest.raises(IndexError, match=rf"^size: dim {dim!r} is not an axis of a tensor of shape \(3, 4, 5\)"):
            x.size(dim)


@pytest.mark.parametrize("op", ["sort", "topk", "cummax", "cummin", "kthvalue", "mode"])
def test_pairs_of_values_and_indices_have_pytorchs_field_names(op):
    """``F.sort(x).indices`` as ``torch.sort(x).indices``; still a pair to unpack."""
    args = (2,) if op in ("topk", "kthvalue") else ()
    ours = getattr(F, op)(minitx.tensor(A), *args, dim=1)
    theirs = getattr(torch, op)(torch.tensor(A), *args, dim=1)
    same(ours.values, theirs.values)
    same(ours.indices, theirs.indices)
    values, indices = ours
    assert values is ours.values and indices is ours[1] and len(ours) == 2


def test_attention_takes_pytorchs_attn_mask_and_is_causal():
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 3, 4, 8)) for _ in range(3))
    mask = rng.random((4, 4)) > 0.3
    mask[:, 0] = True  # no row fully masked (minitx gives 0 there, PyTorch NaN: docs/ops.md)
    ours = F.scaled_dot_product_attention(*map(minitx.tensor, (q, k, v)), attn_mask=minitx.tensor(mask))
    theirs = torch.nn.functional.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)),
                                                              attn_mask=torch.tensor(mask))
    same(ours, theirs)
    same(F.scaled_dot_product_attention(*map(minitx.tensor, (q, k, v)), is_causal=True),
         torch.nn.functional.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)), is_causal=True))
    with pytest.raises(TypeError, match=r"scaled_dot_product_attention: causal must be True or False, got 0.1 "
                                        r"\(the fifth argument is causal; PyTorch's is dropout_p"):
        F.scaled_dot_product_attention(*map(minitx.tensor, (q, k, v)), None, 0.1)


def test_pytorchs_top_left_causal_mask_is_a_tril_mask_where_the_lengths_differ():
    """docs/ops.md: is_causal aligns bottom-right here, top-left in PyTorch; with Lq != Lk they
    differ, and minitx.ones(Lq, Lk, dtype=bool).tril() as attn_mask gives PyTorch's is_causal."""
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((2, 2, 4)), rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 5))
    theirs = torch.nn.functional.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)), is_causal=True)
    ours = F.scaled_dot_product_attention(*map(minitx.tensor, (q, k, v)), is_causal=True)
    assert not np.allclose(ours.numpy(), theirs.numpy())
    same(F.scaled_dot_product_attention(*map(minitx.tensor, (q, k, v)),
                                        attn_mask=minitx.ones(2, 3, dtype=minitx.bool).tril()), theirs)


def test_attention_takes_pytorchs_query_key_and_value_keywords():
    """torch's F.scaled_dot_product_attention(query=, key=, value=) names minitx's q, k and v; the
    names stay attention's own (quantile's q and tril's k are not query= and key=)."""
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 3, 4, 8)) for _ in range(3))
    same(F.scaled_dot_product_attention(query=minitx.tensor(q), key=minitx.tensor(k), value=minitx.tensor(v),
                                        is_causal=True),
         torch.nn.functional.scaled_dot_product_attention(query=torch.tensor(q), key=torch.tensor(k),
                                                          value=torch.tensor(v), is_causal=True))
    with pytest.raises(TypeError, match="got q= and query=, which name one argument"):
        F.scaled_dot_product_attention(minitx.tensor(k), minitx.tensor(k), minitx.tensor(v), q=minitx.tensor(q),
                                       query=minitx.tensor(q))
    with pytest.raises(TypeError, match="key"):
        F.tril(minitx.tensor(q), key=1)


def test_take_along_dim_takes_pytorchs_indices_keyword():
    """torch.take_along_dim(input, indices, dim): indices= names minitx's index, in each of its forms."""
    a, picks = np.arange(12.0).reshape(3, 4), np.array([[3], [0], [-1]])
    theirs = torch.take_along_dim(torch.tensor(a), indices=torch.tensor(picks), dim=1)
    x, index = minitx.tensor(a), minitx.tensor(picks)
    for ours in (F.take_along_dim(x, indices=index, dim=1), minitx.take_along_dim(x, indices=index, dim=1),
                 x.take_along_dim(indices=index, dim=1), x.take_along_dim(index=index, dim=1)):
        same(ours, theirs)
    with pytest.raises(TypeError, match="got index= and indices=, which name one argument"):
        x.take_along_dim(index=index, indices=index)


def test_the_top_level_has_pytorchs_math_but_where_torch_answers_otherwise():
    """minitx.exp is minitx.functional.exp, as torch.exp is torch's; torch.max(x, 1) (a pair),
    torch.var (n - 1) and torch.equal (one bool) have no minitx namesake at the top, and say what to
    write instead; ``import minitx`` brings nn, optim and utils.data; ``import *`` hides no builtin."""
    for name, op in vars(F).items():
        if not name.startswith("_"):
            assert (getattr(minitx, name, None) is op) == (name not in minitx._TORCH_ANSWERS_OTHERWISE), name
    x = minitx.tensor(A)
    same(minitx.tanh(minitx.exp(x) - 1).sum(dim=0), torch.tanh(torch.exp(torch.tensor(A)) - 1).sum(dim=0))
    same(minitx.flatten(x, 1), torch.flatten(torch.tensor(A), 1))
    same(minitx.clamp(x, min=0.1), torch.clamp(torch.tensor(A), min=0.1))
    same(minitx.divide(x, 2.0, rounding_mode="floor"), torch.divide(torch.tensor(A), 2.0, rounding_mode="floor"))
    same(minitx.narrow(x, 1, 1, 2), torch.narrow(torch.tensor(A), 1, 1, 2))
    same(minitx.clamp_min(x, 0.2), torch.clamp_min(torch.tensor(A), 0.2))
    same(minitx.logical_xor(x, x > 0), torch.logical_xor(torch.tensor(A), torch.tensor(A) > 0))
    same(minitx.unflatten(x, 2, (5, 1)), torch.unflatten(torch.tensor(A), 2, (5, 1)))
    same(minitx.cat(minitx.split_with_sizes(x, [1, 2]), 0), torch.cat(torch.split_with_sizes(torch.tensor(A), [1, 2]), 0))
    for question in ("is_floating_point", "is_signed", "is_inference"):
        assert getattr(minitx, question)(x) is getattr(torch, question)(torch.tensor(A)) and minitx.is_nonzero(x[0, 0, 0])
    assert minitx.is_same_size(x, x * 2) and not minitx.detach(x).requires_grad
    same(minitx.amax(x, dim=(0, 2), keepdim=True), torch.amax(torch.tensor(A), dim=(0, 2), keepdim=True))
    same(minitx.bmm(x, x.swapaxes(1, 2)), torch.bmm(torch.tensor(A), torch.tensor(A).transpose(1, 2)))
    assert minitx.numel(x) == torch.numel(torch.tensor(A)) and minitx.flatten.__name__ == "flatten"
    for name in ("max", "split", "equal"):
        with pytest.raises(AttributeError, match=rf"module 'minitx' has no attribute '{name}': torch.{name}\("):
            getattr(minitx, name)
    assert minitx.nn.functional is F and minitx.utils.data.DataLoader and minitx.optim.lr_scheduler.StepLR
    namespace = {}
    exec("from minitx import *", namespace)
    assert not {"sum", "abs", "round", "pow", "max", "float", "int", "bool"} & set(namespace)


def test_where_of_cond_alone_gives_the_positions_as_numpy_and_pytorch():
    cond = A > 0.3
    for ours, theirs, numpys in zip(F.where(minitx.tensor(cond)), torch.where(torch.tensor(cond)), np.where(cond),
                                    strict=True):
        same(ours, theirs)
        np.testing.assert_array_equal(ours.numpy(), numpys)
    with pytest.raises(TypeError, match=r"where: takes cond alone .* or cond, a and b, got one of a, b"):
        F.where(minitx.tensor(cond), minitx.tensor(A))


def test_size_survives_copy_and_pickle():
    import copy
    import pickle

    size = minitx.zeros(3, 4).size
    for twin in (copy.deepcopy(size), pickle.loads(pickle.dumps(size))):
        assert twin == 12 and twin(1) == 4 and twin() == (3, 4)


def test_set_num_threads_takes_and_refuses_what_torchs_does():
    """torch.set_num_threads(n) then get_num_threads() ports as it is (minitx's are the BLAS
    library's threads, minitx/threads.py); what torch refuses, minitx refuses by name."""
    before = minitx.get_num_threads(), torch.get_num_threads()
    try:
        for n in (1, np.int64(2)):
            for lib in (minitx, torch):
                lib.set_num_threads(n)
                assert lib.get_num_threads() == n
        for bad in (0, -1, True, 2.0, "2", None):
            with pytest.raises(RuntimeError):
                torch.set_num_threads(bad)
            with pytest.raises((TypeError, ValueError), match=r"set_num_threads: expected a positive int.*got"):
                minitx.set_num_threads(bad)
    finally:
        minitx.set_num_threads(before[0])
        torch.set_num_threads(before[1])
