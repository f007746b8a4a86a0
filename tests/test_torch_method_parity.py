"""The Tensor and Module methods a PyTorch user reaches for (clone, flatten, expand, the in-place
methods, model.half(), get_submodule ...) against PyTorch on the same values: results, dtypes,
shapes and, where a method is differentiable, gradients.

The in-place methods (add_, zero_, ...) write into the tensor's array as ``x += y`` does, and
while a graph is recorded with a gradient involved the write is recorded, as PyTorch's (docs/ops.md,
"In place"; the other in-place methods: tests/test_inplace_methods.py). PyTorch is skipped where
it is not installed, and required in CI (torch_reference.import_torch).
"""
import numpy as np
import pytest

from torch_reference import import_torch

torch = import_torch()

import minitx  # noqa: E402
from minitx import backend, nn, optim  # noqa: E402

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3, 4))  # float64: the two libraries compute the same numbers


def dtype_name(t):
    return str(t.dtype).removeprefix("torch.")


def as_float64(t):
    """Either library's tensor (bfloat16 and float16 too) as a float64 NumPy array."""
    if isinstance(t, torch.Tensor):
        return t.detach().double().numpy()
    return np.asarray(t.numpy(), dtype=np.float64)


def same(ours, theirs, **tolerance):
    assert ours.shape == tuple(theirs.shape)
    assert ours.dtype.name == dtype_name(theirs)
    np.testing.assert_allclose(as_float64(ours), as_float64(theirs), **(tolerance or dict(rtol=0, atol=0)))


# ------------------------------------------------------------------ differentiable methods
OTHER = RNG.standard_normal((4, 5))
# name -> the call, written once for both libraries (argument names as PyTorch's where they agree)
DIFFERENTIABLE = {
    "clone": lambda t, m: t.clone(),
    "contiguous of a transpose": lambda t, m: t.swapaxes(0, 2).contiguous(),
    "contiguous of a contiguous tensor": lambda t, m: t.contiguous(),
    "flatten": lambda t, m: t.flatten(),
    "flatten(1)": lambda t, m: t.flatten(1),
    "flatten(0, 1)": lambda t, m: t.flatten(0, 1),
    "flatten(-2, -1)": lambda t, m: t.flatten(-2, -1),
    "flatten(1, 1)": lambda t, m: t.flatten(1, 1),
    "expand(2, 2, -1, 4)": lambda t, m: t[:, :1].expand(2, 2, -1, 4),
    "expand((3, 2, 3, -1))": lambda t, m: t.expand((3, 2, 3, -1)),
    "clamp(-0.5, 0.5)": lambda t, m: t.clamp(-0.5, 0.5),
    "clamp(min=0)": lambda t, m: t.clamp(min=0.0),
    "clamp(max=0.2)": lambda t, m: t.clamp(max=0.2),
    "pow(3)": lambda t, m: t.pow(3),
    "pow(2.5) of |t|": lambda t, m: t.abs().pow(2.5),
    "matmul": lambda t, m: t.matmul(m.tensor(OTHER)),
    "mT": lambda t, m: t.mT,
    "type_as(float32)": lambda t, m: t.type_as(m.zeros(1, dtype=m.float32)),
    "half": lambda t, m: t.half(),
    "bfloat16": lambda t, m: t.bfloat16(),
    "neg": lambda t, m: t.neg(),
    "square": lambda t, m: t.square(),
    "maximum": lambda t, m: t.maximum(t * 0.5),
    "amax(1)": lambda t, m: t.amax(1),
    "amin(-1, keepdims)": lambda t, m: t.amin(-1, True),
    "expand_as": lambda t, m: t[:1].expand_as(t),
    "where": lambda t, m: t.where(t > 0, t * 2),
    "masked_select": lambda t, m: t.masked_select(t > 0),
    "index_select(1, [2, 0, 2])": lambda t, m: t.index_select(1, m.tensor([2, 0, 2])),
    "chunk(3, 2) stacked": lambda t, m: m.stack([c.sum(-1) for c in t.chunk(3, 2)]),
    "unbind(1) stacked": lambda t, m: m.stack([u * (k + 1) for k, u in enumerate(t.unbind(1))]),
    "t": lambda t, m: t[0].t(),
    "t of a vector": lambda t, m: t[0, 0].t(),
    "add": lambda t, m: t.add(t[0]), "add(alpha=-2)": lambda t, m: t.add(t[1], alpha=-2),
    "sub(alpha=0.5)": lambda t, m: t.sub(t * t, alpha=0.5), "mul": lambda t, m: t.mul(t[:, :1]),
    "div": lambda t, m: t.div(t.abs() + 1), "clamp_min": lambda t, m: t.clamp_min(0.1),
    "clamp_max": lambda t, m: t.clamp_max(-0.2), "log10 of |t|": lambda t, m: (t.abs() + 0.5).log10(),
    "mm": lambda t, m: t[0].mm(m.tensor(OTHER)), "bmm": lambda t, m: t.bmm(t.swapaxes(1, 2)),
    "dot": lambda t, m: t[0, 0].dot(t[1, 2]),
    "outer": lambda t, m: t[0, 0].outer(t[1, 2]), "diag of a matrix": lambda t, m: t[0].diag(1),
    "inner": lambda t, m: t.inner(t[1]), "vdot": lambda t, m: t[0, 0].vdot(t[1, 2]), "kron": lambda t, m: t[0].kron(t[1, :2]),
    "diag of a vector": lambda t, m: t[0, 0].diag(-1),
    "diag_embed": lambda t, m: t.diag_embed(1, 0, 2), "take_along_dim": lambda t, m: t.take_along_dim(
        m.tensor([[[3], [-1], [0]]]), 2), "take_along_dim flat": lambda t, m: t.take_along_dim(m.tensor([[5, 0, 5]])),
    "tensor_split(3, 2) stacked": lambda t, m: m.stack([c.sum(-1) for c in t.tensor_split(3, 2)]),
    "tensor_split([3, -5], 1) joined": lambda t, m: m.cat(t.tensor_split(m.tensor([3, -5]), 1), 1),
    "hsplit(3) joined": lambda t, m: m.cat(t.hsplit(3), 0), "vsplit([1]) joined": lambda t, m: m.cat(t.vsplit([1]), 2),
    "dsplit(2) joined": lambda t, m: m.cat(t.dsplit(2), 1),
    "view_as": lambda t, m: t.view_as(m.zeros(4, 6)), "reshape_as": lambda t, m: t.reshape_as(m.zeros(6, 4)),
    "narrow": lambda t, m: t.narrow(2, 1, 2), "narrow(-1)": lambda t, m: t.narrow(-1, 0, 3),
    "narrow from a negative start": lambda t, m: t.narrow(2, -2, 2) * t.narrow(1, -1, 1).narrow(2, -3, 2),
    "movedim": lambda t, m: t.movedim(0, 2), "movedim of two": lambda t, m: t.movedim((0, 1), (2, 0)),
    "unflatten": lambda t, m: t.unflatten(2, (2, -1)),
    "nan_to_num": lambda t, m: (t / (t > 0)).nan_to_num(0.5, neginf=-3.0),  # x / False: inf, -inf and NaN
    "lerp": lambda t, m: t.lerp(t * t, 0.3), "lerp with a weight tensor": lambda t, m: t.lerp(t[0], t.sigmoid()),
    # the methods of ops minitx.functional has, PyTorch's other names for them, and small compositions
    **{name: (lambda name: lambda t, m: getattr(t.tanh() * 0.9, name)())(name)  # (|x| < 1: acos, atanh ...)
       for name in ("acos", "asin", "atan", "atanh", "cosh", "sinh", "tan", "asinh", "arccos", "arcsin", "arctan",
                    "arctanh", "arcsinh", "absolute", "negative", "positive", "fix", "sgn", "ravel", "fliplr",
                    "flipud", "msort")},
    "acosh": lambda t, m: (t.abs() + 1.5).acosh(), "arccosh": lambda t, m: (t.abs() + 1.5).arccosh(),
    "atan2": lambda t, m: t.atan2(t[1] + 0.5), "arctan2": lambda t, m: t.arctan2(t[0] - 0.5),
    "hypot": lambda t, m: t.hypot(t[0]), "copysign": lambda t, m: t.copysign(t.flip(0)),
    "multiply": lambda t, m: t.multiply(t[0]), "true_divide": lambda t, m: t.true_divide(t.abs() + 1),
    "divide": lambda t, m: t.divide(t[1] + 3), "div(rounding_mode='trunc')": lambda t, m: (t * 4).div(
        t[0] + 3, rounding_mode="trunc"), "divide(rounding_mode='floor')": lambda t, m: (t * 4).divide(1.5, rounding_mode="floor"),
    "subtract(alpha=3)": lambda t, m: t.subtract(t * t, alpha=3), "prelu": lambda t, m: t.prelu(t[0, 0, :1] * 0 + 0.25),
    "swapdims": lambda t, m: t.swapdims(0, 2), "moveaxis": lambda t, m: t.moveaxis(2, 0),
    "rot90": lambda t, m: t.rot90(), "rot90(3, (2, 0))": lambda t, m: t.rot90(3, (2, 0)),
    "select(1, -1)": lambda t, m: t.select(1, -1), "take": lambda t, m: t.take(m.tensor([[23, -1], [0, 5]])),
    "diagflat": lambda t, m: t[0, :2].diagflat(1), "aminmax stacked": lambda t, m: m.stack(list(t.aminmax())),
    "nansum of NaN": lambda t, m: (t / (t > 0)).nan_to_num(posinf=1.5).nansum(1),  # (x / False: NaN at 0 / 0 only)
    "nanmean of NaN": lambda t, m: m.where(t > 0.5, t * 0 / 0, t).nanmean(2, True),
    "sum_to_size": lambda t, m: t.sum_to_size(3, 1), "dist": lambda t, m: t.dist(t[0] * 2, 3),
    "cov(correction=0, aweights=)": lambda t, m: t[0].cov(correction=0, aweights=t[1, 0].abs() + 0.5),
    "cov(fweights=)": lambda t, m: t[1].cov(fweights=m.tensor([2, 0, 1, 3])), "corrcoef": lambda t, m: t[0].corrcoef(),
    "frexp mantissa": lambda t, m: t.frexp().mantissa,
    "renorm": lambda t, m: t.renorm(3, 2, 1.5),
    "mv": lambda t, m: t[0].mv(t[1, 0]), "ger": lambda t, m: t[0, 0].ger(t[1, 1]),
    "addmm": lambda t, m: t[0, :, :3].addmm(t[1], t[0].T, beta=0.5, alpha=2),
    "addmv": lambda t, m: t[0, :, 0].addmv(t[1], t[0, 0], alpha=-1),
    "addbmm": lambda t, m: t[0, 0, :3].addbmm(t, t.mT, beta=2),
    "baddbmm": lambda t, m: t[:, :, :3].baddbmm(t, t.mT, beta=-1, alpha=0.5),
    "addr(beta=0)": lambda t, m: t[0].addr(t[1, :, 0], t[0, 0], beta=0),
    "split_with_sizes joined": lambda t, m: m.cat(t.split_with_sizes([1, 3], 2)[::-1], 2),
}

# name -> a call giving no gradient (casts to integers and booleans, comparisons, counts)
NOT_DIFFERENTIABLE = {
    "int": lambda t, m: t.int(), "short": lambda t, m: t.short(), "byte": lambda t, m: (t > 0).byte(),
    "bool": lambda t, m: t.bool(), "eq": lambda t, m: t.eq(t.round()), "ne": lambda t, m: t.ne(0.5),
    "gt": lambda t, m: t.gt(0), "ge": lambda t, m: t.ge(0.1), "lt": lambda t, m: t.lt(0), "le": lambda t, m: t.le(-0.1),
    "logical_and": lambda t, m: t.logical_and(t > 0), "logical_or": lambda t, m: (t > 1).logical_or(t < -1),
    "logical_xor": lambda t, m: t.logical_xor(t > 0), "logical_not": lambda t, m: (t > 0).logical_not(),
    "bincount": lambda t, m: (t.abs() * 3).long().flatten().bincount(),
    "unique": lambda t, m: (t * 2).round().unique(),
    "unique_consecutive": lambda t, m: (t > 0).unique_consecutive(return_counts=True)[1],
    "frexp exponent": lambda t, m: t.frexp().exponent,
    "histc": lambda t, m: t.histc(bins=7), "histc(4, -1, 1)": lambda t, m: t.float().histc(4, -1, 1),
    "count_nonzero": lambda t, m: (t > 0).count_nonzero(), "count_nonzero(2)": lambda t, m: t.int().count_nonzero(2),
    "char": lambda t, m: (t * 9).char(), "floor_divide": lambda t, m: t.floor_divide(0.3),
    "bitwise_and": lambda t, m: (t * 9).long().bitwise_and(6), "bitwise_or": lambda t, m: (t * 9).long().bitwise_or(5),
    "bitwise_xor": lambda t, m: (t > 0).bitwise_xor(t < 1), "bitwise_not": lambda t, m: (t * 9).int().bitwise_not(),
    "bitwise_left_shift": lambda t, m: (t * 9).long().bitwise_left_shift(2),
    "bitwise_right_shift": lambda t, m: (t * 9).long().bitwise_right_shift(1),
    "greater": lambda t, m: t.greater(t[0]), "greater_equal": lambda t, m: t.greater_equal(0),
    "less": lambda t, m: t.less(0.5), "less_equal": lambda t, m: t.less_equal(t.round()),
    "not_equal": lambda t, m: t.round().not_equal(0), "isclose": lambda t, m: t.isclose(t + 1e-6, rtol=0, atol=1e-5),
    "argwhere": lambda t, m: (t > 0).argwhere(),
}


def test_the_methods_that_answer_a_python_value_as_pytorchs():
    """equal (one bool: torch.equal, not minitx.functional.equal's NumPy ==), allclose, the dtype,
    size and device questions, retains_grad; new_empty and size= on new_zeros/new_ones/new_full."""
    x, tx = minitx.tensor(A), torch.tensor(A)
    for ours, theirs in ((x, tx), (minitx.tensor([1, 2]), torch.tensor([1, 2]))):
        for other in (lambda t: t.clone(), lambda t: t[:1], lambda t: t * 2, lambda t: t.double(), lambda t: t / 0):
            assert ours.equal(other(ours)) is theirs.equal(other(theirs))
            if other(theirs).dtype == theirs.dtype:  # (PyTorch's allclose refuses two dtypes; isclose's compares them)
                assert ours.allclose(other(ours)) is theirs.allclose(other(theirs))
    assert x.allclose(x + 1e-6, atol=1e-5) is tx.allclose(tx + 1e-6, atol=1e-5) is True
    assert minitx.ones(2, 3).equal(minitx.ones(3)) is torch.ones(2, 3).equal(torch.ones(3)) is False  # (they broadcast)
    for dtype in ("float32", "float16", "bfloat16", "int8", "int64", "uint8", "bool"):
        assert x.to(dtype=dtype).is_signed() is tx.to(getattr(torch, dtype)).is_signed(), dtype
    for values in ([0.0], [[2.5]], [np.nan], [True]):
        assert minitx.tensor(values).is_nonzero() is torch.tensor(values).is_nonzero()
    with pytest.raises(ValueError, match="^is_nonzero: the truth value of a tensor with 24 elements is ambiguous"):
        x.is_nonzero()
    assert x.is_same_size(x * 2) and not x.is_same_size(x[0]) and not tx.is_same_size(tx[0])
    assert x.ndimension() == tx.ndimension() == 3 and x.is_inference() is tx.is_inference() is False
    assert x.get_device() == tx.get_device() == -1 and x.is_cpu is tx.is_cpu is True
    leaf, tleaf = minitx.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    ours, theirs = leaf * 2, tleaf * 2
    assert ours.retains_grad is theirs.retains_grad is False
    ours.retain_grad(), theirs.retain_grad(), leaf.retain_grad(), tleaf.retain_grad()
    assert ours.retains_grad is theirs.retains_grad is True and leaf.retains_grad is tleaf.retains_grad is False
    for call in (lambda t, m: t.new_empty(2, 3, dtype=m.int8).shape, lambda t, m: t.new_zeros(size=(2, 1)),
                 lambda t, m: t.new_ones(size=[3]), lambda t, m: t.new_full(size=(2,), fill_value=3.5),
                 lambda t, m: t.new_full((1, 2), 7), lambda t, m: t.new_empty(size=(0, 2)).shape):
        ours, theirs = call(x, minitx), call(tx, torch)
        if isinstance(theirs, torch.Tensor):
            same(ours, theirs)
        else:
            assert ours == tuple(theirs)


@pytest.mark.parametrize("name", sorted(NOT_DIFFERENTIABLE))
def test_method_without_gradient_gives_pytorchs_values_and_dtype(name):
    call = NOT_DIFFERENTIABLE[name]
    same(call(minitx.tensor(A), minitx), call(torch.tensor(A), torch))


def test_nonzero_masked_fill_and_the_products_refusals_as_pytorchs():
    x, tx = minitx.tensor(A), torch.tensor(A)
    same(x.nonzero(), tx.nonzero())
    for ours, theirs in zip((x > 0).nonzero(as_tuple=True), (tx > 0).nonzero(as_tuple=True), strict=True):
        same(ours, theirs)
    mask = A > 0.5
    y, ty = x.clone(), tx.clone()
    assert y.masked_fill_(minitx.tensor(mask), -1.0) is y
    ty.masked_fill_(torch.tensor(mask), -1.0)
    same(y, ty)
    leaf = minitx.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"masked_fill_"):
        leaf.masked_fill_(minitx.tensor(mask), 0.0)  # a leaf that requires grad, as PyTorch refuses
    for call, message in ((lambda: x.t(), r"t: expects a tensor with at most 2 axes, got shape \(2, 3, 4\)"),
                          (lambda: x.mm(x), r"mm: expects two tensors of 2 axes, got shapes \(2, 3, 4\) and"),
                          (lambda: x[0].bmm(x[0]), r"bmm: expects two tensors of 3 axes"),
                          (lambda: x[0].dot(x[0, 0]), r"dot: expects two tensors of 1 axes")):
        with pytest.raises(ValueError, match=message):
            call()


def test_to_takes_pytorchs_non_blocking_and_copy():
    x, tx = minitx.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    assert (x.to("cpu", non_blocking=True) is x) == (tx.to("cpu", non_blocking=True) is tx) is True
    copied, theirs = x.to(copy=True), tx.to(copy=True)
    assert copied is not x and theirs is not tx and copied.requires_grad == theirs.requires_grad
    assert not np.shares_memory(copied.data, x.data)
    same(x.to(dtype="float32", copy=True), tx.to(dtype=torch.float32, copy=True))


def test_the_tensor_constructor_given_pytorchs_sizes_says_what_to_write():
    with pytest.raises(TypeError, match=r"Tensor: requires_grad must be True or False, got 3; Tensor\(data\) wraps "
                                        r"data .*minitx.empty\(2, 3\)"):
        minitx.Tensor(2, 3)
    assert minitx.Tensor([1.0, 2.0], requires_grad=np.bool_(True)).requires_grad


@pytest.mark.parametrize("args", [(1,), (2,), (2, 1), (3, -1), (5, 2), ([1, 1], 0), ([2, 0, 1], 1), ([4], 2)])
def test_split_method_cuts_pieces_as_pytorchs(args):
    """Tensor.split is PyTorch's (pieces of a size, or of the sizes listed); F.split stays NumPy's."""
    x, tx = minitx.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    ours, theirs = x.split(*args), tx.split(*args)
    assert len(ours) == len(theirs)
    for k, (o, th) in enumerate(zip(ours, theirs)):
        same(o, th)
        (o * (k + 1)).sum().backward()
        (th * (k + 1)).sum().backward()
    same(x.grad, tx.grad)
    with pytest.raises(ValueError, match=r"split: sizes \[1, 1\] do not add up to the 3 entries of axis 1"):
        x.split([1, 1], 1)
    with pytest.raises(ValueError, match=r"split: the piece size must be >= 1, got 0"):
        x.split(0)


def test_random_fills_and_devices_under_pytorchs_names():
    minitx.manual_seed(0)
    w = minitx.zeros(200, 300)
    assert w.uniform_(-0.5, 0.5) is w and -0.5 <= w.numpy().min() and w.numpy().max() < 0.5
    assert abs(float(w.normal_(1.0, 0.02).numpy().std()) - 0.02) < 1e-3 and abs(float(w.numpy().mean()) - 1) < 1e-3
    assert minitx.device("cuda:0") == "cuda" and minitx.device("cpu") == str(torch.device("cpu"))
    with pytest.raises(ValueError, match=r"device: expected 'cpu' or 'cuda' \(or 'cuda:0'\), got 'tpu'"):
        minitx.device("tpu")


def test_chunk_gives_pytorchs_pieces_and_floating_and_cuda_flags():
    x, t = minitx.tensor(A), torch.tensor(A)
    for chunks in (1, 2, 3, 5, 9):
        assert [c.shape for c in x.chunk(chunks, -1)] == [tuple(c.shape) for c in t.chunk(chunks, -1)]
    with pytest.raises(ValueError, match="chunk: chunks must be an int >= 1, got 0"):
        x.chunk(0)
    assert x.is_floating_point() and not x.int().is_floating_point() and not x.is_cuda
    with pytest.raises(ValueError, match=r"index_select: index must be 1-d, got shape \(1, 1\)"):
        x.index_select(0, minitx.tensor([[0]]))


AXIS_OUT_OF_RANGE = {  # shape (2, 3, 4): axis 3 and -4 do not exist
    "narrow": lambda t, m: t.narrow(3, 0, 1), "index_select": lambda t, m: t.index_select(-4, m.tensor([0])),
    "chunk": lambda t, m: t.chunk(2, 3), "split": lambda t, m: t.split(1, 3), "unbind": lambda t, m: t.unbind(-4),
    "movedim": lambda t, m: t.movedim(3, 0), "movedim, destination": lambda t, m: t.movedim(0, -4),
}


@pytest.mark.parametrize("name", sorted(AXIS_OUT_OF_RANGE))
def test_an_axis_out_of_range_is_refused_naming_the_method_as_pytorch_refuses_it(name):
    """Not wrapped around to an axis that exists (x.unbind(3) of a 3-d x was x.unbind(0))."""
    call = AXIS_OUT_OF_RANGE[name]
    with pytest.raises(IndexError):
        call(torch.tensor(A), torch)
    with pytest.raises(IndexError, match=rf"{name.split(',')[0]}: axis -?[34] is out of range for a tensor of shape "
                                         r"\(2, 3, 4\); expected an int in \[-3, 3\)"):
        call(minitx.tensor(A), minitx)


@pytest.mark.parametrize("call, message", [
    (lambda t: t.narrow(-1, 3, 2), r"narrow: start 3 and length 2 do not fit axis 2 of length 4; expected 0 <= "
                                   r"length <= 1"),
    (lambda t: t.narrow(-1, 1, -1), r"narrow: start 1 and length -1 do not fit axis 2 of length 4"),
    (lambda t: t.narrow(-1, -5, 1), r"narrow: start -5 is out of range for axis 2 of length 4; expected an int in "
                                    r"\[-4, 4\]"),
    (lambda t: t.movedim((0, 1), (2, 2)), r"movedim: repeated axis in destination \(2, 2\)"),
    (lambda t: t[0, 0, 0].unbind(0), "unbind: needs a tensor with at least 1 dimension, got a 0-d tensor"),
    (lambda t: t[0, 0, 0].chunk(2), "chunk: needs a tensor with at least 1 dimension, got a 0-d tensor"),
])
def test_narrow_movedim_unbind_and_chunk_refuse_what_pytorch_refuses(call, message):
    """A span past the axis's end is refused (a slice silently cut it short), as is a repeated
    destination (it moved the axes somewhere) and an axis of a 0-d tensor (ZeroDivisionError)."""
    with pytest.raises((IndexError, RuntimeError)):
        call(torch.tensor(A))
    with pytest.raises((ValueError, IndexError), match=message):
        call(minitx.tensor(A))


def test_chunk_of_an_empty_axis_and_movedim_of_a_0d_tensor_as_pytorchs():
    """chunks empty pieces, not none; a 0-d tensor's axis 0 moved to 0 is the tensor."""
    empty = np.zeros((0, 2))
    for chunks in (1, 3):
        assert [c.shape for c in minitx.tensor(empty).chunk(chunks)] == \
            [tuple(c.shape) for c in torch.tensor(empty).chunk(chunks)] == [(0, 2)] * chunks
    assert minitx.tensor(2.0).movedim(0, -1).shape == tuple(torch.tensor(2.0).movedim(0, -1).shape) == ()


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_differentiable_method_gives_pytorchs_values_and_gradients(name):
    call = DIFFERENTIABLE[name]
    x, tx = minitx.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    y, ty = call(x, minitx), call(tx, torch)
    same(y, ty, rtol=1e-15, atol=1e-15)  # a product's sums may be added in another order
    assert y.is_contiguous() == ty.is_contiguous()
    weights = RNG.standard_normal(y.shape)  # a gradient that tells the entries apart
    (y.to(dtype="float64") * minitx.tensor(weights)).sum().backward()
    (ty.double() * torch.tensor(weights)).sum().backward()
    same(x.grad, tx.grad, rtol=1e-12, atol=1e-12)


def test_clone_and_contiguous_copy_and_keep_no_memory_of_the_original():
    x = minitx.tensor(A)
    for copy in (x.clone(), x.transpose(1, 0, 2).contiguous()):
        assert not np.shares_memory(copy.data, x.data)
    assert x.contiguous() is x and torch.tensor(A).contiguous().is_contiguous()


def test_flatten_of_a_0d_and_an_empty_tensor_and_its_errors():
    for shape, args in (((), ()), ((), (0, -1)), ((2, 0, 3), (0, 1)), ((2, 0, 3), (1,))):
        a = np.zeros(shape)
        same(minitx.tensor(a).flatten(*args), torch.tensor(a).flatten(*args))
    for args in ((2, 1), (0, 3), (-4,)):
        with pytest.raises((IndexError, ValueError)):
            minitx.tensor(A).flatten(*args)
        with pytest.raises((IndexError, RuntimeError)):
            torch.tensor(A).flatten(*args)


@pytest.mark.parametrize("sizes", [(-1, 2, 3, 4), (3, 4), (2, 3, 5)])
def test_expand_refuses_what_pytorch_refuses(sizes):
    """-1 for a new leading axis, fewer sizes than axes, a length that is not the axis' or 1."""
    with pytest.raises(ValueError, match="expand|broadcast_to"):
        minitx.tensor(A).expand(*sizes)
    with pytest.raises(RuntimeError):
        torch.tensor(A).expand(*sizes)


# ------------------------------------------------------------------ facts and new tensors
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "bool", "float16"])
def test_dim_numel_nelement_element_size(dtype):
    x, tx = minitx.tensor(A).to(dtype=dtype), torch.tensor(A).to(getattr(torch, dtype))
    assert (x.dim(), x.numel(), x.nelement(), x.element_size(), x.itemsize, x.nbytes) == \
        (tx.dim(), tx.numel(), tx.nelement(), tx.element_size(), tx.itemsize, tx.nbytes)


def test_is_contiguous_of_views():
    x, tx = minitx.tensor(A), torch.tensor(A)
    views = [(x, tx), (x[0], tx[0]), (x[:, :, ::2], tx[:, :, ::2]), (x.transpose(0, 2, 1), tx.transpose(1, 2)),
             (x.mT, tx.mT), (x[:1].expand(3, 3, 4), tx[:1].expand(3, 3, 4)), (x.flatten(), tx.flatten())]
    assert [v.is_contiguous() for v, _ in views] == [tv.is_contiguous() for _, tv in views]


def test_stride_and_nbytes_of_contiguous_tensors_and_of_views_as_pytorchs():
    """Strides in entries, the tensor's own bytes (an expanded view's nbytes counts its entries)."""
    x, tx = minitx.tensor(A), torch.tensor(A)
    views = [(x, tx), (x[1], tx[1]), (x[:, ::2], tx[:, ::2]), (x.transpose(2, 0, 1), tx.permute(2, 0, 1)),
             (x.mT, tx.mT), (x.narrow(2, 1, 2), tx.narrow(2, 1, 2)), (x[:, :1].expand(2, 5, 4), tx[:, :1].expand(2, 5, 4)),
             (x.unsqueeze(1), tx.unsqueeze(1)), (x[:, None], tx[:, None]), (x.reshape(6, 4), tx.reshape(6, 4)), (x.float()[0].t(), tx.float()[0].t()),
             (minitx.tensor(2.0), torch.tensor(2.0)), (minitx.zeros(0, 3), torch.zeros(0, 3))]
    for v, tv in views:
        assert v.stride() == tv.stride() and v.nbytes == tv.nbytes
        assert [v.stride(axis) for axis in range(-v.ndim, v.ndim)] == [tv.stride(d) for d in range(-v.ndim, v.ndim)]
    assert x.stride(dim=-1) == tx.stride(dim=-1) == 1
    with pytest.raises(IndexError, match=r"^stride: axis 3 is out of range for a tensor of shape \(2, 3, 4\)"):
        x.stride(3)
    with pytest.raises(ValueError, match="^stride: needs a tensor with at least 1 dimension"):
        minitx.tensor(2.0).stride(0)
    odd = np.lib.stride_tricks.as_strided(np.zeros(8, np.float32), shape=(3, 2), strides=(6, 4))  # (PyTorch has none)
    with pytest.raises(ValueError, match=r"^stride: the array's byte strides \(6, 4\) are no whole number of 4-byte"):
        minitx.from_numpy(odd).stride()


def test_type_names_the_dtype_and_casts_as_pytorchs():
    """type() gives the dtype's name where PyTorch gives 'torch.FloatTensor' (docs/ops.md); type(dtype) casts."""
    x, tx = minitx.tensor(A, dtype="float32"), torch.tensor(A, dtype=torch.float32)
    assert x.type() == "float32" and tx.type() == "torch.FloatTensor"
    assert x.long().type() == "int64" and x.bfloat16().type() == "bfloat16"
    same(x.type(minitx.float64), tx.type(torch.float64))
    same(x.type("int32"), tx.type(torch.int32))
    same(x.type(dtype="float16", non_blocking=True), tx.type(dtype=torch.float16, non_blocking=True))
    assert x.type("float32") is x and tx.type(torch.float32) is tx


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_new_tensors_take_the_tensors_dtype(dtype):
    x, tx = minitx.tensor(A, dtype=dtype), torch.tensor(A).to(getattr(torch, dtype))
    for call in (lambda t: t.new_zeros(2, 3), lambda t: t.new_zeros((2, 3)), lambda t: t.new_ones([4]),
                 lambda t: t.new_full((2, 2), 1), lambda t: t.new_tensor([[1, 0], [2, 3]]),
                 lambda t: t.new_tensor(7)):
        ours, theirs = call(x), call(tx)
        same(ours, theirs)
        assert not ours.requires_grad and ours.device == "cpu"


def test_new_tensor_copies_and_takes_no_gradient():
    x = minitx.tensor(A, requires_grad=True)
    data = np.arange(3.0)
    copy = x.new_tensor(data)
    data[0] = 5
    assert copy.tolist() == [0, 1, 2] and not copy.requires_grad and copy.dtype.name == "float64"
    same(x.new_zeros(2, dtype="int8"), torch.tensor(A).new_zeros(2, dtype=torch.int8))
    assert x.new_ones(2, requires_grad=True).requires_grad


# ------------------------------------------------------------------ in place
NUMBER_ARGS = {"add_": (0.5,), "sub_": (0.25,), "mul_": (3.0,), "div_": (4.0,), "clamp_": (-0.5, 0.5),
               "fill_": (2.0,), "zero_": ()}
TENSOR_ARGS = {"add_": lambda m: (m.tensor(A[0]),), "sub_": lambda m: (m.tensor(A[1]),),
               "mul_": lambda m: (m.tensor(A[0]),), "div_": lambda m: (m.tensor(A[1]),),
               "copy_": lambda m: (m.tensor(A[1, 0]),)}


def calls():
    """(name, args for one library) of every in-place method, with numbers and with tensors."""
    out = [(f"{name}{args}", name, lambda m, args=args: args) for name, args in NUMBER_ARGS.items()]
    return out + [(f"{name}(tensor)", name, args) for name, args in TENSOR_ARGS.items()]


CALLS = {label: (name, args) for label, name, args in calls()}
CALLS["add_(tensor, alpha=-0.1)"] = ("add_", lambda m: (m.tensor(A[0]),))


def call_in_place(label, t, m):
    name, args = CALLS[label]
    kwargs = {"alpha": -0.1} if "alpha" in label else {}
    return getattr(t, name)(*args(m), **kwargs)


@pytest.mark.parametrize("label", sorted(CALLS))
def test_in_place_method_writes_under_no_grad_as_pytorch(label):
    x, tx = minitx.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    array = x.data
    with minitx.no_grad():
        result = call_in_place(label, x, minitx)
    with torch.no_grad():
        call_in_place(label, tx, torch)
    assert result is x and x.data is array and x.requires_grad
    same(x, tx, rtol=1e-15, atol=0)


@pytest.mark.parametrize("label", sorted(CALLS))
def test_in_place_method_writes_where_no_gradient_is_involved(label):
    """Grad mode on, but neither the tensor nor the argument requires grad: a plain write, also
    through a view (v = y[0]: y changes), as in PyTorch."""
    y, ty = minitx.tensor(A), torch.tensor(A)
    v, tv = y[0], ty[0]
    assert call_in_place(label, v, minitx) is v
    call_in_place(label, tv, torch)
    same(y, ty, rtol=1e-15, atol=0)


@pytest.mark.parametrize("label, case", [(label, case) for label in sorted(CALLS) for case in
                                         ("leaf", "computed", "argument") if case != "argument" or "tensor" in label])
def test_in_place_method_while_a_graph_is_recorded_as_pytorch(label, case):
    """A leaf that requires grad is refused, as PyTorch refuses it ("a leaf Variable that requires
    grad is being used in an in-place operation"); on a computed tensor, or one whose argument
    requires grad, the write is recorded, and the gradients are PyTorch's."""
    name, args = CALLS[label]
    kwargs = {"alpha": -0.1} if "alpha" in label else {}
    weights = RNG.standard_normal(A.shape)
    grads = []
    for lib in (minitx, torch):
        leaf = lib.tensor(A, requires_grad=True)
        x = {"leaf": leaf, "computed": leaf * 1, "argument": lib.tensor(A)}[case]
        other_args = args(lib)
        if case == "argument":
            other_args = (other_args[0].requires_grad_(),) + other_args[1:]
        if case == "leaf":
            message = f"^{name}: a leaf tensor that requires grad cannot be changed in place" if lib is minitx \
                else "leaf Variable that requires grad"
            with pytest.raises(RuntimeError, match=message):
                getattr(x, name)(*other_args, **kwargs)
            assert x.tolist() == A.tolist()  # nothing written
            continue
        assert getattr(x, name)(*other_args, **kwargs) is x
        # (+ leaf.sum(): a write of constants, fill_ or zero_, leaves minitx's x needing no gradient)
        ((x * lib.tensor(weights)).sum() + leaf.sum()).backward()
        grads.append([t.grad for t in (leaf,) + other_args if isinstance(t, lib.Tensor) and t.requires_grad])
    for ours, theirs in zip(*grads) if grads else ():
        for g, tg in zip(ours, theirs, strict=True):
            same(g, tg, rtol=1e-13, atol=0)  # (sums of the broadcast argument: an order of their own)


def test_the_operator_and_the_method_record_the_same_write():
    x = minitx.tensor(A, requires_grad=True) * 1
    y = x
    y += 1
    assert y is x
    x.add_(1)
    x.sum().backward()
    np.testing.assert_array_equal(x.numpy(), A + 2)


def test_hand_written_sgd_step_as_pytorchs():
    w0, inputs, target = (RNG.standard_normal(shape).astype(np.float32) for shape in ((3, 4), (5, 3), (5, 4)))
    ours, theirs = minitx.tensor(w0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    for _ in range(3):
        ((minitx.tensor(inputs) @ ours - minitx.tensor(target)) ** 2).mean().backward()
        ((torch.tensor(inputs) @ theirs - torch.tensor(target)) ** 2).mean().backward()
        with minitx.no_grad():
            ours.add_(ours.grad, alpha=-0.1)
        with torch.no_grad():
            theirs.add_(theirs.grad, alpha=-0.1)
        assert ours.grad.zero_() is ours.grad and float(ours.grad.abs().sum()) == 0
        theirs.grad.zero_()
        # minitx computes w - 0.1 * grad in float64 and rounds once; PyTorch's fused kernel nearly does
        same(ours, theirs, rtol=1e-6, atol=1e-7)


def test_add_with_alpha_rounds_once():
    """x + alpha * y computed wider and rounded once into x: the correctly rounded result for every
    element (alpha * y rounded first was off by hundreds of units where the two nearly cancel)."""
    for dtype in ("float16", "float32"):
        p, g = (RNG.standard_normal(20000).astype(dtype) for _ in range(2))
        x = minitx.tensor(p)
        x.add_(minitx.tensor(g), alpha=-0.1)
        np.testing.assert_array_equal(x.numpy(), (p.astype(np.float64) - 0.1 * g.astype(np.float64)).astype(dtype))


ALPHA_DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def as_dtype(lib, values, dtype):
    """Either library's tensor of ``values`` in ``dtype`` (bfloat16 by way of float32: NumPy has none)."""
    if dtype != "bfloat16":
        return lib.tensor(values.astype(dtype))
    return lib.tensor(values.astype(np.float32)).to(torch.bfloat16 if lib is torch else "bfloat16")


@pytest.mark.parametrize("x_dtype", ALPHA_DTYPES)
@pytest.mark.parametrize("alpha", [-2, 3, 300, 2**40, 2.5, True])
def test_alpha_is_taken_as_pytorch_takes_it_by_every_form_of_add_and_sub(x_dtype, alpha):
    """add/sub/subtract as functions, methods and in place, x and y of every pair of dtypes, with an
    alpha that wraps in an unsigned dtype (-2 is 254 in uint8), does not fit a small one (300, 2**40),
    is a float beside integers or a bool beside numbers: PyTorch's dtype and values (floats within a
    unit of the result's last place: the in-place forms round once, as PyTorch's fused kernel nearly
    does), or refused where PyTorch refuses. One function (ops/_args.py's alpha_times) scales y."""
    values = np.array([1, 2, 100, 0])
    for y_dtype in ALPHA_DTYPES:
        for form in ("F.add", "F.sub", "F.subtract", "add", "sub", "subtract", "add_", "sub_", "subtract_"):
            name = form.removeprefix("F.")

            def call(lib, name=name, form=form):
                x, y = (as_dtype(lib, values, dtype) for dtype in (x_dtype, y_dtype))
                if form.startswith("F."):
                    return getattr(lib, name)(x, y, alpha=alpha)
                return getattr(x, name)(y, alpha=alpha)

            label = f"{form}({x_dtype}, {y_dtype}, alpha={alpha!r})"
            try:
                theirs = call(torch)
            except RuntimeError:
                with pytest.raises((TypeError, ValueError), match=rf"^{name}: "):
                    call(minitx)
                continue
            try:
                ours = call(minitx)
            except TypeError as error:  # the departure: no signed result written into an unsigned x (docs/ops.md)
                assert form.endswith("_") and x_dtype == "uint8" and "cannot be stored" in str(error), label
                continue
            assert ours.dtype.name == dtype_name(theirs), label
            unit = torch.finfo(theirs.dtype).eps if theirs.is_floating_point() else 0
            np.testing.assert_allclose(as_float64(ours), as_float64(theirs), rtol=unit, atol=0, err_msg=label)


VIEWS_AS_DTYPE = {  # (a dtype, and the tensor viewed: a float32 (2, 3, 4) x, or a piece of it)
    "float32 as int32": ("int32", lambda x: x), "as float16": ("float16", lambda x: x),
    "as float64": ("float64", lambda x: x), "as bfloat16": ("bfloat16", lambda x: x),
    "as uint8": ("uint8", lambda x: x), "0-d as int32": ("int32", lambda x: x[0, 0, 0]),
    "a transpose as float16": ("float16", lambda x: x.swapaxes(0, 1)),
    "aligned slice as float64": ("float64", lambda x: x.reshape(-1)[2:8]),
    "strided rows as float64": ("float64", lambda x: x[:, 0, :2]),
    "empty as float64": ("float64", lambda x: x[:, :0, :]),
    "empty last axis as float64": ("float64", lambda x: x[:, :, :0]),
    "bool as uint8": ("uint8", lambda x: x > 0), "int64 as float64": ("float64", lambda x: (x > 0).long()),
    "float16 as float32": ("float32", lambda x: x.half()),
    # refused, as PyTorch refuses them
    "0-d as float16": ("float16", lambda x: x[0, 0, 0]), "every other as float16": ("float16", lambda x: x[..., ::2]),
    "zeros(0) as float64": ("float64", lambda x: x[0, 0, :0]),
    "unsqueezed transpose as float16": ("float16", lambda x: x[0].swapaxes(0, 1).unsqueeze(-1)),
    "a last axis of 3 as float64": ("float64", lambda x: x[..., 1:]),
    "an odd offset as float64": ("float64", lambda x: x[..., 1:3]),
    "an odd stride as float64": ("float64", lambda x: x.reshape(8, 3)[:, :2]),
}


@pytest.mark.parametrize("label", VIEWS_AS_DTYPE)
def test_view_as_a_dtype_reads_the_same_bytes_as_pytorchs(label):
    """x.view(dtype): the same bytes, read as another dtype, the last axis scaled by the sizes' ratio,
    and refused (naming view) where PyTorch refuses; the values compared byte by byte."""
    dtype, piece = VIEWS_AS_DTYPE[label]
    values = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    ours = piece(minitx.tensor(values))
    theirs = piece(torch.tensor(values))
    try:
        viewed = theirs.view(getattr(torch, dtype))
    except RuntimeError:
        with pytest.raises(ValueError, match=rf"^view: {ours.dtype.name} as {dtype} "):
            ours.view(dtype)
        return
    got = ours.view(getattr(minitx, dtype))
    assert got.shape == tuple(viewed.shape) and got.dtype.name == dtype

    def as_bytes(array):
        return np.ascontiguousarray(array).reshape(-1).view(np.uint8)

    expected = viewed.view(torch.int16).numpy() if dtype == "bfloat16" else viewed.numpy()
    assert np.array_equal(as_bytes(got.numpy()), as_bytes(expected))


def test_view_as_a_dtype_shares_memory_and_takes_no_gradient():
    x = minitx.tensor(np.ones(4, dtype=np.float32), requires_grad=True)
    bits = x.view(minitx.int32)
    assert not bits.requires_grad and bits.grad_fn is None and int(bits[0]) == 1065353216  # 1.0's bits
    y = minitx.tensor(np.ones(4, dtype=np.float32))
    y.view(minitx.int32)[1] = 0  # a write through the view is a write into y, as in PyTorch
    assert y.tolist() == [1.0, 0.0, 1.0, 1.0]
    with pytest.raises(TypeError, match=r"^view: expected a shape \(ints\), got \('int32', 2\)"):
        y.view("int32", 2)
    assert y.view(dtype=minitx.int32).dtype == np.int32  # PyTorch's keyword too


def test_view_as_a_dtype_leaves_axes_of_length_1_unchecked():
    """The departure (docs/ops.md): an axis of length 1 is never stepped along, and NumPy keeps any
    stride there, so its stride is not checked, where PyTorch refuses an odd one."""
    x = minitx.tensor(RNG.standard_normal((2, 3, 4)).astype(np.float32))
    assert x[..., ::4].view(minitx.float16).shape == (2, 3, 2)
    with pytest.raises(RuntimeError, match="stride"):
        torch.zeros(2, 3, 4)[..., ::4].view(torch.float16)


def test_fill_takes_a_number_or_a_0_d_tensor_as_pytorchs():
    with pytest.raises(ValueError, match=r"fill_: the value must be a number or a 0-d tensor, got shape \(3,\)"):
        minitx.zeros(2, 3).fill_(minitx.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="0-dimension"):
        torch.zeros(2, 3).fill_(torch.tensor([1.0, 2.0, 3.0]))


def test_sub_with_alpha_and_copy_with_a_cast_and_a_broadcast():
    x, tx = minitx.tensor(A, dtype="float32"), torch.tensor(A, dtype=torch.float32)
    x.sub_(minitx.tensor(A[0]), alpha=2)  # float64 into float32: same-kind, as x -= y
    tx.sub_(torch.tensor(A[0]), alpha=2)
    same(x, tx, rtol=1e-6, atol=1e-6)
    row = RNG.standard_normal(4)
    same(x.copy_(minitx.tensor(row)), tx.copy_(torch.tensor(row)))
    same(x.copy_([1, 2, 3, 4]), tx.copy_(torch.tensor([1, 2, 3, 4])))
    same(x.fill_(minitx.tensor(3.0)), tx.fill_(torch.tensor(3.0)))


def test_in_place_methods_refuse_what_the_operators_refuse():
    """A result of another shape, a cast across kinds, a broadcast view: each refused, by
    PyTorch too (with a RuntimeError each)."""
    ints, tints = minitx.zeros(3, dtype="int64"), torch.zeros(3, dtype=torch.int64)
    for ours, theirs, error in ((lambda: minitx.zeros(3).add_(minitx.ones(2, 3)),
                                 lambda: torch.zeros(3).add_(torch.ones(2, 3)), ValueError),
                                (lambda: ints.div_(2), lambda: tints.div_(2), TypeError),
                                (lambda: ints.add_(minitx.ones(3)), lambda: tints.add_(torch.ones(3)), TypeError),
                                (lambda: minitx.zeros(3).expand(2, 3).add_(1),
                                 lambda: torch.zeros(3).expand(2, 3).add_(1), RuntimeError)):
        with pytest.raises(error):
            ours()
        with pytest.raises(RuntimeError):
            theirs()
    with pytest.raises(TypeError, match="fill_"):
        ints.fill_(0.5)  # PyTorch truncates to 0 (docs/ops.md: refused where PyTorch is lenient)
    assert ints.tolist() == [0, 0, 0]


def test_a_write_by_a_method_is_seen_by_a_graph_that_saved_the_tensor():
    x, tx = minitx.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    y, ty = x * x, tx * tx
    with minitx.no_grad():
        x.mul_(2)
    with torch.no_grad():
        tx.mul_(2)
    with pytest.raises(RuntimeError):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ty.sum().backward()


def test_zero_and_fill_of_booleans_and_integers():
    for dtype in ("bool", "int32", "uint8"):
        x, tx = minitx.ones(4, dtype=dtype), torch.ones(4, dtype=getattr(torch, dtype))
        same(x.zero_(), tx.zero_())
    same(minitx.zeros(3, dtype="int32").fill_(7), torch.zeros(3, dtype=torch.int32).fill_(7))
    same(minitx.zeros(3, dtype="bool").fill_(True), torch.zeros(3, dtype=torch.bool).fill_(True))


# ------------------------------------------------------------------ Module
def twin_models():
    minitx.manual_seed(0)
    ours = nn.Sequential(nn.Linear(3, 4), nn.Sequential(nn.LayerNorm(4), nn.Linear(4, 2)))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Sequential(torch.nn.LayerNorm(4),
                                                                             torch.nn.Linear(4, 2)))
    theirs.load_state_dict({k: torch.from_numpy(v) for k, v in ours.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("method", ["float", "double", "half", "bfloat16", "cpu"])
def test_module_casts_and_moves_as_pytorchs(method):
    ours, theirs = twin_models()
    ours.register_buffer("steps", minitx.zeros(2, dtype="int64"))  # integers are not cast
    theirs.register_buffer("steps", torch.zeros(2, dtype=torch.int64))
    assert getattr(ours, method)() is ours
    getattr(theirs, method)()
    same(ours.steps, theirs.steps)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname
        same(p, tp)
    x = RNG.standard_normal((2, 3))
    out, tout = ours(minitx.tensor(x).to(dtype=ours.get_parameter("0.weight").dtype)), \
        theirs(torch.tensor(x).to(theirs.get_parameter("0.weight").dtype))
    assert out.dtype.name == dtype_name(tout)


def test_module_cuda_without_a_gpu_says_so():
    if backend.cuda_available():
        pytest.skip("a GPU is here: cuda() works")
    ours, _ = twin_models()
    with pytest.raises(RuntimeError, match="CuPy"):
        ours.cuda()


def test_module_requires_grad_():
    ours, theirs = twin_models()
    assert ours.requires_grad_(False) is ours
    theirs.requires_grad_(False)
    assert [p.requires_grad for p in ours.parameters()] == [p.requires_grad for p in theirs.parameters()] == [False] * 6
    ours[1].requires_grad_()
    theirs[1].requires_grad_()
    assert [p.requires_grad for p in ours.parameters()] == [p.requires_grad for p in theirs.parameters()]
    # a frozen part takes no gradient and is left alone by the optimizer
    opt = optim.SGD(ours.parameters(), lr=0.1)
    before = ours[0].weight.numpy().copy()
    ours(minitx.randn(2, 3)).sum().backward()
    opt.step()
    assert ours[0].weight.grad is None and np.array_equal(ours[0].weight.numpy(), before)


@pytest.mark.parametrize("target", ["", "0", "1", "1.0", "1.1"])
def test_get_submodule(target):
    ours, theirs = twin_models()
    assert type(ours.get_submodule(target)).__name__ == type(theirs.get_submodule(target)).__name__


@pytest.mark.parametrize("target", ["0.weight", "0.bias", "1.0.weight", "1.1.bias"])
def test_get_parameter(target):
    ours, theirs = twin_models()
    p = ours.get_parameter(target)
    assert isinstance(p, nn.Parameter) and p is dict(ours.named_parameters())[target]
    same(p, theirs.get_parameter(target))


@pytest.mark.parametrize("call, target, missing", [
    ("get_submodule", "2", "2"), ("get_submodule", "1.5", "5"), ("get_submodule", "0.weight", "weight"),
    ("get_parameter", "0.scale", "scale"), ("get_parameter", "2.weight", "2"), ("get_parameter", "1.weight", "weight")])
def test_a_missing_name_is_an_attribute_error_naming_it(call, target, missing):
    ours, theirs = twin_models()
    with pytest.raises(AttributeError, match=f"has no (child module|parameter) '{missing}'"):
        getattr(ours, call)(target)
    with pytest.raises(AttributeError):
        getattr(theirs, call)(target)
