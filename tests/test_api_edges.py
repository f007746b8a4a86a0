"""Bad arguments at the API's edges get a clear error naming the op, what it got and what it
expected (issue 25's list), and valid edge inputs work (a convolution of an empty batch)."""
import inspect
import re
import sys

import numpy as np
import pytest
from numpy.exceptions import AxisError

import minitx
import minitx.functional as F
from minitx import nn
from minitx.testing import gradcheck


@pytest.mark.parametrize("call, error, message", [
    (lambda: nn.Conv2d(3, 4, 0), ValueError, r"Conv2d: kernel_size\[0\] must be a positive int, got 0"),
    (lambda: nn.Conv2d(0, 4, 3), ValueError, "Conv2d: in_channels must be a positive int, got 0"),
    (lambda: F.einsum(5, minitx.tensor([1.0])), TypeError, "einsum: subscripts must be a string such as 'ij,jk->ik', got 5"),
    (lambda: F.stack([minitx.tensor([1.0]), minitx.tensor([2.0])], axis=3), AxisError,
     r"stack: axis 3 is out of range for stacking tensors of shape \(1,\); expected an int in \[-2, 2\)"),
    (lambda: F.one_hot(minitx.tensor([0, 1]), 2.5), TypeError,
     r"one_hot: num_classes must be an int \(or -1 to infer it\), got 2.5"),
    # an int argument refuses a float (NumPy would truncate or compare with it) and a bool, as PyTorch
    (lambda: F.tril(minitx.tensor(np.ones((3, 3))), 1.5), TypeError, "tril: the diagonal k must be an int, got 1.5"),
    (lambda: F.triu(minitx.tensor(np.ones((3, 3))), True), TypeError, "triu: the diagonal k must be an int, got True"),
    (lambda: F.diagonal(minitx.tensor(np.ones((3, 3))), 1.0), TypeError, "diagonal: offset must be an int, got 1.0"),
    (lambda: F.diagflat(minitx.tensor([1.0, 2.0]), 0.5), TypeError, "diagflat: offset must be an int, got 0.5"),
    (lambda: F.topk(minitx.tensor([1.0, 2.0]), True), TypeError, "topk: k must be an int, got True"),
    (lambda: F.sum(minitx.tensor(np.ones((2, 2))), True), TypeError, "sum: axis True is not an integer"),
    (lambda: F.softmax(minitx.tensor(np.ones((2, 2))), True), TypeError, "softmax: axis True is not an integer"),
    (lambda: minitx.tensor(np.ones((2, 1, 4))).permute(True, 0, 2), TypeError, "permute: an axis must be an int, got True"),
    (lambda: minitx.tensor(np.ones((2, 1, 4))).squeeze(1.5), TypeError, "squeeze: axis must be an int, got 1.5"),
    (lambda: minitx.tensor(np.ones((2, 1, 4))).squeeze(True), TypeError, "squeeze: axis must be an int, got True"),
    (lambda: minitx.tensor(np.ones(4)).split(True), TypeError,
     "split: split_size_or_sections must be an int or a list of ints, got True"),
    (lambda: minitx.tensor(np.ones(4)).split([2.0, 2]), TypeError, "split: a piece size must be an int, got 2.0"),
    (lambda: nn.ZeroPad2d(1.5), ValueError, "ZeroPad2d: padding must be an int or 4 ints, got 1.5"),
    (lambda: nn.Hardtanh(1.0, 1.0), ValueError, "Hardtanh: max_val 1.0 must be greater than min_val 1.0"),
    (lambda: F.pad(minitx.tensor(np.ones((2, 2))), True), TypeError, "pad: the widths must be ints, got True"),
    (lambda: F.pad(minitx.tensor(np.ones((2, 2))), (1.5, 1)), TypeError, r"pad: the widths must be ints, got \(1.5, 1\)"),
    (lambda: F.tile(minitx.tensor(np.ones(2)), True), ValueError, r"tile: reps must be ints >= 0, got \(True,\)"),
    (lambda: F.softmin(minitx.tensor(np.ones((2, 0)))), ValueError, "softmin: axis 1 of the input of shape"),
    (lambda: F.max_pool2d(minitx.tensor(np.ones((1, 1, 4, 4))), True), ValueError,
     "max_pool2d: kernel_size must be an int or a pair of ints, got True"),
    (lambda: F.gumbel_softmax(minitx.tensor(np.ones((2, 3))), axis=2), AxisError, "gumbel_softmax: axis 2 is out of range"),
    (lambda: nn.ReplicationPad1d((1, 2.0)), ValueError, r"ReplicationPad1d: padding must be an int or 2 ints, got \(1, 2.0\)"),
])
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_int_arguments_take_numpy_ints_0d_integer_tensors_and_any_iterable_where_pytorch_does():
    """What the refusals of bools and floats leave taken, as PyTorch takes it."""
    x = minitx.tensor(np.arange(6.0).reshape(2, 1, 3))
    assert x.permute(minitx.tensor(2), np.int64(1), 0).shape == (3, 1, 2)
    assert x.squeeze(minitx.tensor(1)).shape == (2, 3)
    assert F.tril(x[:, 0], np.int64(1)).shape == (2, 3)
    assert nn.ZeroPad2d(np.array([1, 1, 0, 0])).padding == (1, 1, 0, 0)
    assert nn.ZeroPad2d(range(4)).padding == (0, 1, 2, 3)
    assert F.pad(x, np.array([1, 1])).shape == (2, 1, 5)


def test_a_convolution_of_an_empty_batch_is_empty_and_so_are_its_gradients():
    x = minitx.tensor(np.zeros((0, 3, 5, 5)), dtype="float64", requires_grad=True)
    w = minitx.tensor(np.ones((4, 3, 3, 3)), dtype="float64", requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    assert y.shape == (0, 4, 5, 5)
    y.sum().backward()
    assert x.grad.shape == (0, 3, 5, 5) and not w.grad.numpy().any()


@pytest.mark.parametrize("option, value, expected", [("eps", 0, "> 0"), ("eps", -1e-6, "> 0"), ("atol", -1, ">= 0"),
                                                      ("rtol", float("nan"), ">= 0")])
def test_gradcheck_refuses_options_that_would_call_a_correct_gradient_wrong(option, value, expected):
    x = minitx.tensor(np.ones(3), dtype="float64", requires_grad=True)
    with pytest.raises(ValueError, match=f"gradcheck: {option} must be a finite number {expected}"):
        gradcheck(lambda a: a * 2, x, **{option: value})


def _lu_solve_with_pivots(pivots):
    LU, _ = minitx.linalg.lu_factor(minitx.tensor(np.eye(3)))
    return minitx.linalg.lu_solve(LU, minitx.tensor(np.array(pivots, dtype=np.int32)), minitx.tensor(np.ones((3, 1))))


@pytest.mark.parametrize("call, error, message", [
    (lambda: _lu_solve_with_pivots([5, 7, 9]), ValueError,
     r"linalg.lu_solve: pivots must be from 1 to 3 \(LU's rows\), got values from 5 to 9"),
    (lambda: minitx.lu_unpack(minitx.tensor(np.eye(3)), minitx.tensor(np.array([0, 2, 3], dtype=np.int32))),
     ValueError, r"lu_unpack: LU_pivots must be from 1 to 3 \(LU_data's rows\), got values from 0 to 3"),
    (lambda: minitx.corrcoef(minitx.tensor(np.ones((2, 3, 4)))), ValueError,
     r"corrcoef: expected a tensor of at most 2 dimensions \(variables x observations\), got shape \(2, 3, 4\)"),
    (lambda: minitx.var_mean(minitx.ones(2, 3), dim=5), AxisError,
     "var_mean: axis 5 is out of range for a tensor with 2 dimensions"),
    (lambda: minitx.linalg.tensorsolve(minitx.tensor(np.ones((2, 3, 6))), minitx.tensor(np.ones((2, 3))), dims=(5,)),
     AxisError, r"linalg.tensorsolve: axis 5 is out of range for a tensor of shape \(2, 3, 6\); expected an int "
                r"in \[-3, 3\)"),
    (lambda: minitx.isin(minitx.ones(3), "a"), TypeError,
     r"isin: cannot make a tensor from data of type str \(NumPy dtype <U1\); expected numbers or booleans"),
    (lambda: minitx.cholesky_inverse(minitx.ones(3)), ValueError,
     r"cholesky_inverse: L must be batches of square matrices \[..., n, n\], but got shape \(3,\)"),
    (lambda: minitx.cholesky_solve(minitx.ones(2, 1), minitx.ones(2, 3)), ValueError,
     r"cholesky_solve: L must be batches of square matrices \[..., n, n\], but got 2 by 3 matrices"),
    (lambda: minitx.atleast_1d("a"), TypeError, "atleast_1d: cannot make a tensor from data of type str"),
    (lambda: minitx.asarray(object()), TypeError, r"asarray: cannot make a tensor from data of type object \(NumPy dtype object\); expected numbers"),
    (lambda: minitx.result_type("a", minitx.ones(2)), TypeError,
     "result_type: cannot make a tensor from data of type str"),
    (lambda: minitx.ones(3).reshape(minitx.int32), TypeError,
     r"reshape: expected a shape \(ints\), got the dtype 'int32'; x.to\(dtype\) converts the values, x.view\(dtype\) "
     r"reads the same bytes as another dtype"),
    (lambda: minitx.ones(3).reshape("a", 3), TypeError, r"reshape: expected a shape \(ints\), got \('a', 3\)"),
    (lambda: minitx.ones(6).view(True, 6), TypeError, r"^view: expected a shape \(ints\), got \(True, 6\)"),
    (lambda: minitx.ones(1, 3).expand(None, 3), TypeError, r"^expand: expected a shape \(ints\), got \(None, 3\)"),
    (lambda: minitx.broadcast_to(minitx.ones(3), (2.0, 3)), TypeError,
     r"^broadcast_to: expected a shape \(ints\), got \(2.0, 3\)"),
    (lambda: minitx.ones(2, 3).narrow(1, None, 1), TypeError, r"^narrow: start must be an int, got None"),
    (lambda: minitx.ones(2, 3).narrow(1, 0, 1.0), TypeError, r"^narrow: length must be an int, got 1.0"),
    (lambda: minitx.gather(minitx.ones(2, 3), None, minitx.zeros(2, 3, dtype="int64")), TypeError,
     r"^gather: axis must be an integer, got None"),
    (lambda: minitx.cat([minitx.ones(2), minitx.ones(2)], 0.0), TypeError, r"^concatenate: axis must be an int, got 0.0"),
    (lambda: minitx.stack([minitx.ones(2), minitx.ones(2)], True), TypeError, r"^stack: axis must be an int, got True"),
    (lambda: minitx.cat(minitx.ones(2, 3)), TypeError, r"^concatenate: expected a list or tuple of tensors, got Tensor"),
    (lambda: minitx.stack(np.ones((2, 3))), TypeError, r"^stack: expected a list or tuple of tensors, got numpy.ndarray"),
    (lambda: F.hstack(5), TypeError, r"^hstack: expected a list or tuple of tensors, got int"),
    (lambda: F.softmax("a"), TypeError, r"^softmax: cannot make a tensor from data of type str"),
    (lambda: minitx.sin(object()), TypeError, r"^sin: cannot make a tensor from data of type object"),
    (lambda: F.dropout(minitx.ones(3), "0.1"), TypeError, r"^dropout: p must be a number, got '0.1'"),
    (lambda: F.dropout(minitx.ones(3), minitx.ones(3)), TypeError, r"^dropout: p must be a number, got tensor\("),
    (lambda: F.dropout2d(minitx.ones(1, 2, 3, 3), None), TypeError, r"^dropout2d: p must be a number, got None"),
    (lambda: F.alpha_dropout(minitx.ones(3), "0.5", True), TypeError, r"^alpha_dropout: p must be a number, got '0.5'"),
    (lambda: F.leaky_relu(minitx.ones(3), "0.2"), TypeError, r"^leaky_relu: negative_slope must be a number, got '0.2'"),
    (lambda: F.hardtanh(minitx.ones(3), None), TypeError, r"^hardtanh: min_val must be a number, got None"),
    (lambda: F.softplus(minitx.ones(3), beta="2"), TypeError, r"^softplus: beta must be a number, got '2'"),
    (lambda: F.gumbel_softmax(minitx.ones(3), tau=None), TypeError, r"^gumbel_softmax: tau must be a number, got None"),
    (lambda: F.margin_ranking_loss(minitx.ones(2), minitx.ones(2), minitx.ones(2), margin="1"), TypeError,
     r"^margin_ranking_loss: margin must be a number, got '1'"),
    (lambda: F.huber_loss(minitx.ones(2), minitx.ones(2), delta=None), TypeError, r"^huber_loss: delta must be a number, got None"),
    (lambda: F.smooth_l1_loss(minitx.ones(2), minitx.ones(2), beta=np.nan), ValueError,
     r"^smooth_l1_loss: beta must be a number >= 0, got nan"),
    (lambda: F.cdist(minitx.ones(2, 2), minitx.ones(2, 2), p="2"), TypeError, r"^cdist: p must be a number, got '2'"),
    (lambda: F.renorm(minitx.ones(2, 2), 2, 0, maxnorm=minitx.tensor(-1.0)), ValueError,
     r"^renorm: maxnorm must be a number >= 0, got tensor\("),
    (lambda: F.round(minitx.ones(3), 1.5), TypeError, r"^round: decimals must be an int, got 1.5"),
    (lambda: F.split(minitx.ones(4), "ab"), TypeError, r"^split: indices_or_sections must be an int \(a number of equal "
                                                       r"parts\) or a list of cut points, got 'ab'"),
    (lambda: F.split(minitx.ones(4), [1.5]), TypeError, r"^split: a cut point must be an int, got 1.5"),
    (lambda: F.permute(minitx.ones(2), object()), TypeError, r"^permute: an axis must be an int, got <object"),
    (lambda: F.rms_norm(minitx.ones(2, 3), object()), TypeError, r"^rms_norm: expected a shape \(ints\), got \(<object"),
    (lambda: F.broadcast_shapes((2, 1), minitx.ones(3)), TypeError,
     r"^broadcast_shapes: expected a shape \(ints\), got \(tensor"),
    (lambda: F.broadcast_shapes((2, -1), (2, 1)), ValueError, r"^broadcast_shapes: a shape's lengths must be >= 0"),
    (lambda: F.batch_norm(minitx.ones(2, 3), [0.0, 0.0, 0.0], None, training=True), TypeError,
     r"^batch_norm: running_mean must be a tensor \(or None\), got list"),
    (lambda: F.histogramdd(minitx.ones(4, 2), object()), TypeError, r"^histogramdd: bins must be an int or a list"),
    (lambda: F.multilabel_soft_margin_loss(minitx.ones(2, 3), minitx.ones(2, 3), "w"), TypeError,
     r"^multilabel_soft_margin_loss: cannot make a tensor from data of type str"),
    (lambda: minitx.ones(3).eq("a"), TypeError, r"^eq: cannot make a tensor from data of type str"),
    (lambda: minitx.ones(3).eq_("a"), TypeError, r"^eq_: cannot make a tensor from data of type str"),
    (lambda: minitx.ones(3).copy_("a"), TypeError, r"^copy_: cannot make a tensor from data of type str"),
    (lambda: minitx.ones(3).logical_and(object()), TypeError, r"^logical_and: cannot make a tensor from data"),
    (lambda: minitx.ones(3).any("a"), TypeError, r"^any: axis 'a' is not an integer"),
    (lambda: minitx.ones(3).view_as("a"), TypeError, r"^view_as: other must be a tensor, got str"),
    (lambda: minitx.ones(3).type_as(np.ones(3)), TypeError, r"^type_as: other must be a tensor, got numpy.ndarray"),
    (lambda: minitx.ones(3).new_tensor("a"), TypeError, r"^new_tensor: cannot make a tensor from data of type str"),
    (lambda: minitx.tensor("a", dtype="float32"), TypeError, r"^tensor: cannot make a tensor from data of type str"),
    (lambda: minitx.ones(3).uniform_("0", 1), TypeError, r"^uniform_: low must be a number, got '0'"),
    (lambda: minitx.ones(3).exponential_("2"), TypeError, r"^exponential_: lambd must be a number, got '2'"),
    (lambda: minitx.ones(3).bernoulli_(None), TypeError, r"^bernoulli_: p must be a number, got None"),
    (lambda: minitx.ones(3).to(dtype="float8"), TypeError, r"^to: unknown dtype 'float8'"),
    (lambda: minitx.ones(2, 2).pinverse("a"), TypeError, r"^pinverse: rtol must be a number or a tensor, got 'a'"),
    (lambda: nn.LayerNorm(3)("a"), TypeError, r"^LayerNorm: cannot make a tensor from data of type str"),
    (lambda: nn.BatchNorm1d(3)(object()), TypeError, r"^BatchNorm1d: cannot make a tensor from data of type object"),
    (lambda: nn.LSTM(3, 4)("a"), TypeError, r"^LSTM: cannot make a tensor from data of type str"),
    (lambda: nn.GRUCell(3, 4)(None), TypeError, r"^GRUCell: cannot make a tensor from data of type NoneType"),
    (lambda: nn.TransformerEncoderLayer(4, 2)("a"), TypeError,
     r"^TransformerEncoderLayer \(src\): cannot make a tensor from data of type str"),
    (lambda: nn.TransformerDecoderLayer(4, 2)(minitx.ones(2, 1, 4), None), TypeError,
     r"^TransformerDecoderLayer \(memory\): cannot make a tensor from data of type NoneType"),
    (lambda: minitx.optim.SGD([nn.Parameter(minitx.ones(2))], lr=0.1, check_finite="no"), TypeError,
     r"^SGD: invalid check_finite 'no'; expected True or False"),
    (lambda: minitx.utils.data.DataLoader([1, 2], shuffle="no"), TypeError,
     r"^DataLoader: shuffle should be a boolean value, but got shuffle='no'"),
    (lambda: minitx.utils.data.TensorDataset([1, 2]), TypeError,
     r"^TensorDataset: tensor 0 must be a tensor with a first axis \(one row per sample\), got list"),
    (lambda: minitx.utils.data.TensorDataset(minitx.ones(3), minitx.tensor(1.0)), TypeError,
     r"^TensorDataset: tensor 1 must be a tensor with a first axis \(one row per sample\), got Tensor of shape \(\)"),
    (lambda: minitx.utils.data.default_collate([1, "a"]), TypeError, r"^default_collate: cannot make a tensor"),
    (lambda: minitx.optim.lr_scheduler.MultiStepLR(minitx.optim.SGD([nn.Parameter(minitx.ones(2))], lr=0.1), 3),
     TypeError, r"^MultiStepLR: milestones must be a list of epochs, got int"),
    (lambda: F.unique(minitx.ones(3), "no"), TypeError, r"^unique: sorted must be True or False, got 'no'"),
    (lambda: F.unique_consecutive(minitx.ones(3), return_counts=1), TypeError,
     r"^unique_consecutive: return_counts must be True or False, got 1"),
    (lambda: F.alpha_dropout("a"), TypeError, r"^alpha_dropout: cannot make a tensor from data of type str"),
    (lambda: minitx.ones(2, 2).svd("no"), TypeError, r"^svd: some must be True or False, got 'no'"),
    (lambda: minitx.linalg.svd(minitx.ones(2, 3), full_matrices=None), TypeError,
     r"^linalg.svd: full_matrices must be True or False, got None"),
    (lambda: minitx.ones(2, 2).lu(get_infos="yes"), TypeError, r"^lu: get_infos must be True or False, got 'yes'"),
    # the function called, not an op it is built from (naming: nanmean's sum, l1_loss's smooth_l1_loss, the
    # Function LogAddExp's log_add_exp, x.clamp's clip, x.astype's to, full_like's full)
    (lambda: F.nanmean(minitx.ones(2, 3), "a"), TypeError, r"^nanmean: axis 'a' is not an integer"),
    (lambda: F.nanmean(minitx.ones(2, 3), 5), AxisError, r"^nanmean: axis 5 is out of range"),  # (its own copy)
    (lambda: F.l1_loss(minitx.ones(2, 3), minitx.ones(4)), ValueError, r"^l1_loss: targets of shape \(4,\)"),
    (lambda: F.logaddexp(minitx.ones(2, 3), "a"), TypeError, r"^logaddexp: cannot make a tensor"),
    (lambda: F.subtract(minitx.ones(2, 3), minitx.ones(4)), ValueError, r"^subtract: shapes \(2, 3\) and \(4,\)"),
    (lambda: minitx.linalg.norm(minitx.ones(2, 3), "a"), ValueError, r"^linalg\.norm: ord must be"),
    (lambda: minitx.linalg.diagonal(minitx.ones(3)), ValueError, r"^linalg\.diagonal: needs at least 2 dimensions"),
    (lambda: minitx.ones(2, 3).clamp(), ValueError, r"^clamp: give at least one of min and max"),
    (lambda: minitx.ones(2, 3).astype("a"), TypeError, r"^astype: unknown dtype 'a'"),
    (lambda: minitx.zeros(2, dtype="a"), TypeError, r"^zeros: unknown dtype 'a'"),
    (lambda: minitx.full_like(minitx.ones(2), 2, dtype="a"), TypeError, r"^full_like: unknown dtype 'a'"),
    (lambda: minitx.full_like(minitx.ones(2), "a"), TypeError, r"^full_like: value must be a number, got 'a'"),
    (lambda: minitx.full((2,), [1, 2]), TypeError, r"^full: value must be a number, got \[1, 2\]"),
    (lambda: minitx.zeros_like(object()), TypeError, r"^zeros_like: cannot make a tensor"),
    (lambda: minitx.randint_like(minitx.ones(2), 1.5), TypeError, r"^randint_like: low and high must be whole"),
    (lambda: minitx.sin_(object()), TypeError, r"^sin_: cannot make a tensor"),
    (lambda: minitx.poisson(object()), TypeError, r"^poisson: cannot make a tensor"),
    (lambda: minitx.normal(minitx.ones(2, 3), minitx.ones(4)), ValueError,
     r"^normal: mean of shape \(2, 3\) and std of shape \(4,\) do not broadcast"),
    (lambda: minitx.ones(2, 3).new_full((2,)), TypeError, r"^new_full: expected value \(or PyTorch's fill_value=\)"),
    (lambda: minitx.ones(2, 3).new_tensor([1], dtype="a"), TypeError, r"^new_tensor: unknown dtype 'a'"),
    (lambda: minitx.tensor([1], dtype="a"), TypeError, r"^tensor: unknown dtype 'a'"),
    # a tensor is no dtype (NumPy reads any object's .dtype; PyTorch refuses it)
    (lambda: minitx.ones(2, 3).new_zeros(2, dtype=minitx.ones(4)), TypeError, r"^new_zeros: unknown dtype tensor"),
    (lambda: minitx.zeros(2, dtype=minitx.ones(2, dtype="int64")), TypeError, r"^zeros: unknown dtype tensor"),
    (lambda: minitx.tensor([1], device="a"), ValueError, r"^tensor: unknown device 'a'"),
    (lambda: minitx.set_default_device("a"), ValueError, r"^set_default_device: unknown device 'a'"),
    (lambda: F.cumsum(minitx.ones(2, 3), 0, dtype="a"), TypeError, r"^cumsum: unknown dtype 'a'"),
    (lambda: minitx.save("x.npz", {}), TypeError, r"^save: the path must be a str, bytes or os.PathLike, got dict"),
    (lambda: minitx.load(3), TypeError, r"^load: the path must be a str, bytes or os.PathLike, got int"),
    (lambda: minitx.linalg.cond(minitx.ones(2, 3), minitx.ones(4)), ValueError, r"^linalg\.cond: p must be None, 2"),
    (lambda: minitx.ones(2, 3).inverse(), ValueError, r"^inverse: A must be batches of square matrices"),
    # a message that named nothing names the call (NumPy's own, from its Python code below the op)
    (lambda: minitx.linalg.svd(minitx.tensor(np.full((3, 3), np.nan))), ValueError, r"^linalg\.svd: SVD did not converge"),
    # flags and shapes that went unchecked, or crashed inside
    (lambda: (minitx.ones(2, requires_grad=True) * 2).sum().backward(retain_graph="yes"), TypeError,
     r"^backward: retain_graph must be True, False or None, got 'yes'"),
    (lambda: F.dropout(minitx.ones(2, 3), 0.5, training="no"), TypeError, r"^dropout: training must be True or False"),
    (lambda: F.alpha_dropout(minitx.ones(2, 3), training="yes"), TypeError,
     r"^alpha_dropout: training must be True or False"),
    (lambda: F.rrelu(minitx.ones(2, 3), training="no"), TypeError, r"^rrelu: training must be True or False"),
    (lambda: F.batch_norm(minitx.ones(2, 3), training="no"), TypeError, r"^batch_norm: training must be True or False"),
    (lambda: F.dropout_add(minitx.ones(2), minitx.ones(3), training=False), ValueError,
     r"^dropout_add: x \(2,\) and residual \(3,\) must have one shape"),  # (add would broadcast them)
    (lambda: F.searchsorted(minitx.tensor([1.0, 2.0]), minitx.tensor([1.5]), right="yes"), TypeError,
     r"^searchsorted: right must be True or False, got 'yes'"),
    (lambda: F.bucketize(minitx.tensor([1.5]), minitx.tensor([1.0, 2.0]), out_int32=minitx.ones(2)), TypeError,
     r"^bucketize: out_int32 must be True or False"),
    (lambda: F.multi_margin_loss(minitx.ones(2, 3), minitx.tensor([0, 1]), p=minitx.ones(4)), ValueError,
     r"^multi_margin_loss: p must be 1 or 2"),
    (lambda: F.sum_to_size(minitx.ones(2, 3), minitx.ones(4)), TypeError, r"^sum_to_size: expected a shape \(ints\)"),
    (lambda: F.embedding(minitx.tensor([0]), minitx.ones(4)), ValueError,
     r"^embedding: weight must be 2-D \[num_embeddings, dim\], got shape \(4,\)"),
    (lambda: F.scaled_dot_product_attention(minitx.ones(3), minitx.ones(3), minitx.ones(3)), ValueError,
     r"^scaled_dot_product_attention: q \(3,\), k \(3,\), v \(3,\) do not fit"),
    (lambda: minitx.ones(2, 3).bernoulli_(minitx.ones(4)), ValueError,
     r"^bernoulli_: p of shape \(4,\) does not broadcast to the tensor's shape \(2, 3\)"),
    (lambda: minitx.ones(2, 3).unflatten(1, 3), TypeError, r"^unflatten: sizes must be a tuple or list of ints, got 3"),
    (lambda: F.take_along_dim(minitx.ones(2, 3), minitx.zeros(2, 3, dtype="int64"), 1.5), TypeError,
     r"^take_along_dim: axis must be None or an int"),
])
def test_errors_name_the_function_called(call, error, message):
    """Each names the function the user called (not lu_unpack, cov, var, movedim or tensor inside it),
    what it got and what it expected."""
    with pytest.raises(error, match=message):
        call()


def test_an_error_of_the_users_own_code_inside_an_op_keeps_its_name():
    """naming tells an error as the called function's only where minitx's code alone ran below it: a
    distance function's own subtraction, a generator's own tensor() call, say what they are."""
    x = minitx.ones(2, 3)
    with pytest.raises(ValueError, match=r"^sub: shapes \(2, 3\) and \(2, 2\) do not broadcast"):
        F.triplet_margin_with_distance_loss(x, x, x, distance_function=lambda u, v: (u - v[:, :2]).sum(-1))
    with pytest.raises(TypeError, match=r"^tensor: cannot make a tensor from data of type str"):
        minitx.cat(minitx.tensor(v) for v in ["a"])
    with pytest.raises(NotImplementedError, match=r"^zeta: no gradient with respect to s"):  # (backward: the op's)
        minitx.special.zeta(minitx.tensor([2.0], requires_grad=True), minitx.tensor([1.0])).sum().backward()

    def deeper(t):
        return deeper(t.reshape(-1))

    with pytest.raises(RecursionError, match="^maximum recursion depth"):  # (the user's recursion, not reshape's)
        deeper(x)


def test_what_naming_leaves_as_it_was():
    """The wrappers pickle as the functions they stand for; NumPy's own AxisError, which prints a name
    before its words, gets the function's; the Functions, used directly, check what their functions do;
    backward takes PyTorch's 1, 0 and one-entry tensors for its flags; full takes a 0-d boolean value."""
    import pickle  # noqa: PLC0415

    for function in (minitx.zeros, minitx.zeros_like, minitx.arange, F.relu, minitx.sin_):
        assert pickle.loads(pickle.dumps(function)) is function
    error = AxisError(5, 1)
    sys.modules["minitx.autograd.tensor"]._tell_as("sum", error, unnamed=True)
    assert str(error) == "sum: axis 5 is out of bounds for array of dimension 1"
    with pytest.raises(ValueError, match=r"^dropout_add: p must be in \[0, 1\), got 1.5"):
        minitx.ops.DropoutAdd(1.5)
    with pytest.raises(ValueError, match=r"^dropout_add: x \(1, 4\) and residual \(3, 4\) must have one shape"):
        minitx.ops.DropoutAdd(0.5)(minitx.ones(1, 4), minitx.zeros(3, 4))
    with pytest.raises(ValueError, match=r"^scaled_dot_product_attention: q \(2, 3, 4\), k \(2, 5, 3\)"):
        minitx.ops.ScaledDotProductAttention()(minitx.ones(2, 3, 4), minitx.ones(2, 5, 3), minitx.ones(2, 5, 2))
    for flag in (1, 0, minitx.tensor(True), np.True_):
        x = minitx.ones(2, requires_grad=True)
        (x * 2).sum().backward(retain_graph=flag)
        assert x.grad.tolist() == [2.0, 2.0]
    assert minitx.full((2,), np.array(True)).tolist() == [True, True]
    assert minitx.ones(2).new_full((2,), minitx.tensor(True)).tolist() == [1.0, 1.0]


PUBLIC = sorted(name for name in dir(F) if not name.startswith("_") and callable(getattr(F, name)))


#: what no function or method can use, or not everywhere: data no tensor holds, an axis of 1.5 or True, a
#: number past the axes, shapes that do not broadcast, an empty tensor, None where a number or axis is asked
OBJECT = object()


def bad_arguments():
    """Fresh tensors each call (an in-place method writes into its first)."""
    x23, x4, x0 = minitx.ones(2, 3), minitx.ones(4), minitx.ones(0, 3)
    return [(OBJECT,), (x23, OBJECT), (x23, "a"), (x23, 1.5), (x23, True), (x23, 7), (x23, -9), (x23, x4),
            (x23, x4, x4), (x23, x23, "a"), (x23, x23, 7), (x0,), (x0, 0), (x23, None)]
#: errors that name another thing, and why: the generator argument, and Tensor(), which from_dlpack's
#: requires_grad goes to
OTHER_NAME = {"poisson": "generator", "binomial": "generator", "from_dlpack": "Tensor"}
#: functions that take any object: it is a question about it (is_tensor)
TAKE_ANY_OBJECT = {"minitx.is_tensor"}


def _assert_names_itself(label, name, function, call):
    """Each call with bad_arguments() that raises says first the function called: its name, its own
    (x.absolute is abs), its in-place or _with_indices form's op, its linalg name (x.det's linalg.det) or
    OTHER_NAME's;
    never tensor(), an op it is built from (nanmean's sum, conv2d's Function ConvNd), or nothing (NumPy's
    "operands could not be broadcast", Python's comparisons). Given an object, it must raise."""
    own = inspect.unwrap(function).__name__
    allowed = {name, own, name.rstrip("_"), own.rstrip("_"), name.removesuffix("_with_indices"), OTHER_NAME.get(name),
               *(f"{module}.{n}" for module in ("linalg", "special") for n in (name, own))}
    for args in bad_arguments():
        try:
            call(*args)
        except Exception as error:  # noqa: BLE001  (any error: its words are what is checked)
            first = re.match(r"(?:Tensor\.)?([\w.]+)(: |\(\) )", str(error))
            assert first and first.group(1) in allowed, (f"{label}.{name}", args, str(error)[:200])
        else:
            assert args[-1] is not OBJECT or f"{label}.{name}" in TAKE_ANY_OBJECT, \
                f"{label}.{name}{args} took the object (F.unique(x, object()) read it as True)"


FUNCTIONS = [(label, name) for label, module in (("F", F), ("linalg", minitx.linalg), ("special", minitx.special),
                                                 ("minitx", minitx))
             for name in sorted(dir(module)) if not name.startswith("_") and inspect.isfunction(getattr(module, name))]
MODULES = {"F": F, "linalg": minitx.linalg, "special": minitx.special, "minitx": minitx}


@pytest.mark.parametrize("label, name", FUNCTIONS)
def test_every_function_names_itself_in_its_errors(label, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # (minitx.save(x, "a") writes a file)
    function = getattr(MODULES[label], name)
    _assert_names_itself(label, name, function, function)


#: ops where a list is a list of tensors, each converted (PyTorch's atleast_1d([a, b]) is (a, b))
LISTS_OF_TENSORS = {"atleast_1d", "atleast_2d", "atleast_3d"}
#: ops whose two calls draw different samples
DRAWN = {"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "rrelu", "rrelu_",
         "gumbel_softmax"}


@pytest.mark.parametrize("name", sorted(set(PUBLIC) - LISTS_OF_TENSORS))
def test_every_function_takes_a_list_where_it_takes_a_tensor(name):
    """Python lists become tensors at every op (minitx/ops/_args.py): F.sum([[...]]) as F.mean's, not
    "sum: input 0 is list, expected a Tensor" while its neighbours take one. Where the op takes the
    list, the result is the one the same tensor gives."""
    values = [[0.5, 0.25], [0.75, 0.125]]
    op = getattr(F, name)
    try:
        expected = op(minitx.tensor(values))
    except Exception:  # noqa: BLE001  (an op that needs more arguments, or other data: not this test's)
        return
    try:
        got = op(values)
    except (TypeError, AttributeError) as error:
        raise AssertionError(f"{name} takes a tensor but refuses the same list: {error}") from None
    for ours, theirs in zip(*(r if isinstance(r, (tuple, list)) else (r,) for r in (got, expected))):
        if isinstance(theirs, minitx.Tensor) and name not in DRAWN:
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_the_list_test_runs_on_the_functions_that_take_one_tensor():
    """test_every_function_takes_a_list_where_it_takes_a_tensor returns for a function that needs more than
    one tensor: so that it cannot pass by returning, this many take the tensor alone (156 at writing)."""
    taking = 0
    for name in sorted(set(PUBLIC) - LISTS_OF_TENSORS):
        try:
            getattr(F, name)(minitx.tensor([[0.5, 0.25], [0.75, 0.125]]))
            taking += 1
        except Exception:  # noqa: BLE001, S112  (needs more arguments, or other data)
            continue
    assert taking >= 150


METHODS = sorted(name for name in dir(minitx.Tensor) if not name.startswith("_")
                 and callable(getattr(minitx.Tensor, name, None)) and not isinstance(getattr(minitx.Tensor, name), type))


@pytest.mark.parametrize("name", METHODS)
def test_every_method_names_itself_in_its_errors(name):
    """As the functions (x.clamp's errors say clamp, not the clip it calls; x.eq's eq, not Python's False)."""
    def call(*args):
        x, rest = (args[0], args[1:]) if isinstance(args[0], minitx.Tensor) else (minitx.ones(2, 3), args)
        return getattr(x, name)(*rest)

    _assert_names_itself("Tensor", name, getattr(minitx.Tensor, name), call)


def test_what_the_checks_take_as_before_and_as_pytorch():
    """The checks refuse what no op could use, not what the ops took: a 0-d tensor or array as a number
    (PyTorch's Scalar), a NumPy bool or an int for shuffle, arrays and ranges of axes, cut points and
    lengths, a 0-d integer tensor as a count, lists as a layer's input."""
    x = minitx.tensor([-2.0, 0.5])
    assert F.leaky_relu(x, minitx.tensor(0.5)).tolist() == [-1.0, 0.5]
    assert F.hardtanh(x, np.array(-1.0), minitx.tensor(1.0)).tolist() == [-1.0, 0.5]
    assert F.dropout(x, minitx.tensor(0.0)) is x
    # a float64 number beside float32 values leaves them float32 (its NumPy scalar made them float64)
    for op in (lambda t: F.leaky_relu(t, np.float64(0.1)), lambda t: F.elu(t, np.float64(0.5)),
               lambda t: F.softplus(t, np.float64(2.0)), lambda t: F.hardtanh(t, np.float64(-1.0), np.float64(1.0))):
        assert op(x).dtype == np.float32
    assert len(list(minitx.utils.data.DataLoader([1, 2, 3], shuffle=np.True_))) == 3
    y = minitx.ones(2, 3, 4)
    assert F.permute(y, np.array([2, 0, 1])).shape == (4, 2, 3) and F.transpose(y, range(2, -1, -1)).shape == (4, 3, 2)
    assert len(F.split(minitx.ones(6), np.array([2, 4]))) == 3 and len(minitx.ones(6).split_with_sizes(range(1, 4))) == 3
    assert F.broadcast_to(minitx.ones(1, 3), np.array([2, 3])).shape == (2, 3)
    assert nn.LayerNorm(3)([[1.0, 2.0, 3.0]]).shape == (1, 3)


def test_dropout_checks_p_when_it_does_nothing_too():
    """As PyTorch's: p = 1.5 is refused in eval mode as in training (the short cut returned x)."""
    with pytest.raises(ValueError, match=r"^dropout: p must be in \[0, 1\), got 1.5"):
        F.dropout(minitx.ones(3), 1.5, training=False)


def test_a_renamed_error_keeps_its_traceback_and_the_users_own_tensor_call_keeps_its_name():
    """The op's name replaces tensor's in place: the traceback still runs to where it was raised. A
    tensor() call of the user's own below the op (a generator, a callback) is not the op's to name."""
    import traceback

    try:
        F.softmax("a")
    except TypeError as error:
        frames = [frame.name for frame in traceback.extract_tb(error.__traceback__)]
        assert "_infer_dtype" in frames and str(error).startswith("softmax: cannot make a tensor")
    with pytest.raises(TypeError, match=r"^tensor: cannot make a tensor from data of type list"):
        F.stack(minitx.tensor(row) for row in [[1.0, 2.0], ["3", "x"]])
    with pytest.raises(TypeError, match=r"^selu: cannot make a tensor"):  # (not the elu selu calls)
        F.selu("a")


def test_warnings_point_at_the_users_line():
    """cov's, var's and std's warnings of no degrees of freedom name the line that called them."""
    import warnings

    for call in (lambda: F.cov(minitx.randn(3, 1)), lambda: F.var(minitx.ones(1), ddof=1),
                 lambda: minitx.ones(1).std(correction=1)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert caught and caught[0].filename == __file__, [w.filename for w in caught]


def test_cat_refuses_one_pytorch_tensor_as_it_refuses_one_of_its_own():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match=r"^concatenate: expected a list or tuple of tensors, got torch.Tensor"):
        minitx.cat(torch.ones(2, 3))
