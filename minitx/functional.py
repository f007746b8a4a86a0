"""The public op API: ``import minitx.functional as F``.

Each function is defined in ``minitx/ops/<family>.py`` right beside the op it applies (its
``Function`` class, with forward, backward and the math), so ``F.softmax`` is read in
minitx/ops/activation.py, next to ``Softmax``. This module only gathers them. The functions
check and convert their arguments (Python numbers become constant tensors of the other
operand's dtype); argument names follow numpy (``axis``, ``keepdims``), and PyTorch's
(``dim``, ``keepdim``) are taken too where they mean the same (minitx/keywords.py).
"""
# ruff: noqa: F401  (everything here is re-exported)

from minitx.ops.elementwise import (
    add, sub, mul, div, neg, pow, exp, log, sqrt, abs, maximum, minimum, clip, where, masked_fill,
    astype, to_device, sin, cos, sign, floor, ceil, round, trunc, log2, exp2, log1p, expm1,
    rsqrt, reciprocal, equal, not_equal, less, less_equal, greater, greater_equal, logical_not,
    isnan, isinf, isfinite, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, log10,
    atan2, hypot, copysign, floor_divide, remainder, fmod, isclose, allclose, bitwise_and, bitwise_or,
    bitwise_xor, bitwise_not, bitwise_left_shift, bitwise_right_shift, nan_to_num, lerp, addcmul, addcdiv,
    divide, subtract, positive, square,
    logaddexp, logaddexp2, logit, heaviside, fmax, fmin, frac,
    deg2rad, rad2deg, float_power, ldexp, gcd, lcm, nextafter, signbit, isposinf, isneginf, isreal,
    frexp, isin, rsub,
    # PyTorch's other names for the ops above (minitx/ops/elementwise.py's last lines)
    absolute, negative, multiply, true_divide, clamp, fix, sgn, arccos, arccosh, arcsin, arcsinh, arctan, arctanh, arctan2,
    eq, ne, lt, le, gt, ge)
from minitx.ops.special import (
    erf, erfc, erfinv, lgamma, digamma, polygamma, xlogy, sinc,
    # PyTorch's other names (minitx/ops/special.py's last lines)
    igamma, igammac, mvlgamma)
from minitx.ops.bessel import i0
from minitx.ops.activation import (
    relu, gelu, tanh, sigmoid, silu, leaky_relu, elu, softplus, logsigmoid, hardtanh, softmax,
    log_softmax, hardsigmoid, hardswish, relu6, selu, celu, softsign, mish, glu, prelu, threshold, softmin,
    hardshrink, softshrink, tanhshrink, rrelu, gumbel_softmax,
    relu_, elu_, leaky_relu_, hardtanh_, threshold_, celu_, selu_, rrelu_)
from minitx.ops.reduction import (
    sum, mean, max, min, var, std, logsumexp, prod, norm, argmax, argmin, aminmax, nansum, nanmean, sum_to_size,
    var_mean, std_mean)
from minitx.ops.scan import (
    cumsum, cumprod, logcumsumexp, diff, cummax, cummin, sort, argsort, topk, searchsorted, bucketize, median,
    nanmedian, kthvalue, mode, quantile, nanquantile, msort, trapezoid, trapz, cumulative_trapezoid, gradient)
from minitx.ops.shape import (
    reshape, transpose, permute, swapaxes, broadcast_to, squeeze, unsqueeze, concatenate, stack,
    split, tensor_split, hsplit, vsplit, dsplit, flip, roll, repeat, tile, pad, pixel_shuffle, pixel_unshuffle, hstack,
    vstack, meshgrid, sliding_windows, channel_shuffle, native_channel_shuffle, ravel, swapdims, movedim, moveaxis,
    fliplr, flipud, rot90, row_stack, column_stack, dstack, atleast_1d, atleast_2d, atleast_3d, broadcast_shapes,
    broadcast_tensors, block_diag, cartesian_prod, combinations)
from minitx.ops.indexing import (
    getitem, setitem, gather, take_along_dim, scatter, scatter_add, scatter_reduce, index_add, index_fill, index_copy,
    tril, triu, diagonal, diag, diag_embed, trace, embedding, embedding_bag, one_hot, nonzero, argwhere, masked_select,
    masked_scatter, bincount, histc, histogram, histogramdd, unique, unique_consecutive, select, take, diagflat,
    unravel_index, slice_scatter, select_scatter, diagonal_scatter, index_put, index_reduce)
from minitx.ops.linalg import (
    matmul, linear, outer, cross, einsum, tensordot, inner, vdot, kron, bilinear, ger, mv, addmm, addmv, addbmm,
    baddbmm, addr, cov, corrcoef)
from minitx.ops.norm import (
    batch_norm, group_norm, layer_norm, rms_norm, normalize, cosine_similarity, instance_norm, pairwise_distance, cdist,
    pdist, local_response_norm, dist, renorm)
from minitx.ops.dropout import (
    dropout, dropout_add, bias_act_dropout, dropout1d, dropout2d, dropout3d, alpha_dropout, feature_alpha_dropout)
from minitx.ops.loss import (
    cross_entropy, nll_loss, binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss,
    margin_ranking_loss, hinge_embedding_loss, soft_margin_loss, multilabel_soft_margin_loss, multi_margin_loss,
    multilabel_margin_loss, triplet_margin_loss, triplet_margin_with_distance_loss, mse_loss, l1_loss,
    smooth_l1_loss, huber_loss, poisson_nll_loss, gaussian_nll_loss, kl_div)
from minitx.ops.attention import (
    scaled_dot_product_attention)
from minitx.ops.conv import (
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, max_pool1d, max_pool2d,
    max_pool3d, avg_pool1d, avg_pool2d, avg_pool3d, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
    adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d, unfold, fold, max_pool1d_with_indices,
    max_pool2d_with_indices, max_pool3d_with_indices, adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices, adaptive_max_pool3d_with_indices, lp_pool1d, lp_pool2d, lp_pool3d,
    fractional_max_pool2d, fractional_max_pool3d, fractional_max_pool2d_with_indices, fractional_max_pool3d_with_indices)
from minitx.ops.resample import (
    interpolate, max_unpool2d, max_unpool1d, max_unpool3d, grid_sample, affine_grid)
from minitx.ops.ctc import (
    ctc_loss)
