"""Differentiable ops, one file per family, each op a ``Function`` subclass (forward and
backward on raw arrays, the math in its docstring) with its public function right beside it:

    elementwise   arithmetic, // and the remainders, exp/log, rounding, trigonometry,
                  comparisons, isclose, bitwise ops, nan_to_num, lerp; divide (rounding_mode=),
                  square, and PyTorch's other names (absolute, arccos, multiply, clamp, ...)
    special       the special functions: erf, erfc, erfinv, erfcx; lgamma, digamma, polygamma, zeta,
                  gammainc, gammaincc, multigammaln (igamma, igammac, mvlgamma); ndtr, log_ndtr, ndtri;
                  xlogy, xlog1py, entr; sinc
    activation    relu, gelu, tanh, sigmoid, silu, ..., hardswish, mish, glu, prelu, softmax, log_softmax
    reduction     sum, mean, max, min, var, std, logsumexp, prod, norm, argmax, argmin, aminmax, nansum,
                  nanmean, sum_to_size, var_mean, std_mean
    scan          cumsum, cumprod, logcumsumexp, diff, cummax, cummin; sort, msort, argsort, topk, searchsorted,
                  bucketize, median, nanmedian, kthvalue, mode, quantile, nanquantile; trapezoid (trapz),
                  cumulative_trapezoid, gradient
    shape         reshape, ravel, transpose, swapdims, movedim, concatenate, stack, hstack, vstack, split,
                  row_stack, column_stack, dstack, atleast_1d/2d/3d, broadcast_tensors, broadcast_shapes,
                  block_diag, cartesian_prod, combinations,
                  tensor_split (hsplit, vsplit, dsplit), flip, fliplr, flipud, rot90, roll, repeat, tile,
                  sliding_windows (Tensor.unfold), pad, meshgrid, pixel_shuffle, channel_shuffle
    indexing      getitem, setitem, select, take, gather, take_along_dim, scatter, scatter_add,
                  slice_scatter, select_scatter, diagonal_scatter, index_put, index_reduce,
                  scatter_reduce, index_add, nonzero, masked_select, tril/triu, diagonal, diag, diagflat,
                  diag_embed, trace, embedding, embedding_bag, one_hot, bincount, histc, histogram, unique,
                  unique_consecutive, unravel_index
    linalg        matmul, mv, linear, bilinear, outer (ger), cross, einsum, tensordot, inner, vdot, kron;
                  addmm, addmv, addbmm, baddbmm, addr; cov, corrcoef; minitx.linalg's vector_norm, matrix_norm and norm
    matrix        minitx.linalg's matrix functions: det, slogdet, inv, solve, cholesky, matrix_power,
                  multi_dot, vecdot, eigh, eigvalsh, svd, svdvals, qr, pinv, lstsq, solve_triangular, lu_factor,
                  lu, lu_solve, cholesky_solve, matrix_rank, cond, matrix_exp, vander, tensorinv, tensorsolve
    norm          layer_norm, rms_norm, group_norm, batch_norm, normalize, cosine_similarity,
                  pairwise_distance, cdist, pdist, dist, local_response_norm
    dropout       dropout, dropout_add, bias_act_dropout (and their Philox masks)
    loss          cross_entropy, nll_loss, binary_cross_entropy(_with_logits), the margin losses
                  (cosine_embedding, margin_ranking, hinge_embedding, soft_margin, multilabel_soft_margin,
                  multi_margin, multilabel_margin, triplet_margin(_with_distance)), mse_loss, l1_loss,
                  smooth_l1_loss, huber_loss, poisson_nll_loss, gaussian_nll_loss, kl_div
    attention     scaled_dot_product_attention (boolean or float masks, grouped-query heads)
    conv          conv1d/2d/3d, conv_transpose1d/2d/3d, unfold and fold (im2col, col2im), max/avg pooling
                  (and adaptive) and power-average (lp_pool) in 1-3 dimensions
    resample      interpolate (nearest, nearest-exact, linear, bilinear, bicubic, area), max_unpool1d/2d/3d,
                  grid_sample, affine_grid
    ctc           ctc_loss (connectionist temporal classification: alpha and beta recursions over the labels)
    bessel        minitx.special's Bessel functions (bessel_j0/j1/y0/y1, i0, i1, i0e, i1e,
                  modified_bessel_k0/k1 and their scaled forms, spherical_bessel_j0, airy_ai) and
                  orthogonal polynomials (Chebyshev's, Hermite's, Laguerre's, Legendre's)
    _args         how the public functions convert their arguments

Use them through ``minitx.functional`` (``F.softmax(x)``) or tensor methods; this package
exports the classes, to be read and to write new ops the same way.

Adding an op:
1. In the family file that holds its kind (or a new one, listed above), write the
   ``Function`` subclass: forward and backward on raw xp arrays, the derivative in its
   docstring, the derivation page (``Derivation: docs/backprop/...``) when it has one and its
   kernel file (``Kernel: minitx/kernels/...cu``) when it calls one.
2. Right after it, its public function: convert the arguments (``_args``), check them with
   errors that name the op, apply the class (an error that names another op, tensor() or nothing is
   told as the function's: the loop at the end of this file wraps every public function). An argument that is an axis is named as NumPy's
   (``axis``, ``keepdims``) and the function decorated with ``@takes_torch_keywords``, which
   takes PyTorch's ``dim=`` and ``keepdim=`` too (minitx/keywords.py; tests/test_torch_spelling.py
   fails without it). Add the class to the file's ``__all__`` and the
   function to ``minitx.functional``'s import list (one of torch.special's to minitx/special.py's
   too, or there alone where PyTorch keeps it only in torch.special); a Tensor method, if it needs
   one, calls the function (minitx/autograd/methods.py).
3. Test it in tests/ops/ with the op-test factory (``minitx.testing.op_test``): the forward
   against an independent NumPy computation, a float64 gradcheck on hypothesis-drawn shapes,
   and PyTorch parity in tests/test_torch_op_parity.py where PyTorch has the op.
tests/ops/test_layout.py holds this layout: it fails when a public function lives outside its
family file or an op that calls a kernel does not name its ``.cu`` file.
"""
from minitx.ops.elementwise import *  # noqa: F401,F403
from minitx.ops.special import *  # noqa: F401,F403
from minitx.ops.activation import *  # noqa: F401,F403
from minitx.ops.reduction import *  # noqa: F401,F403
from minitx.ops.scan import *  # noqa: F401,F403
from minitx.ops.shape import *  # noqa: F401,F403
from minitx.ops.indexing import *  # noqa: F401,F403
from minitx.ops.linalg import *  # noqa: F401,F403
from minitx.ops.matrix import *  # noqa: F401,F403
from minitx.ops.norm import *  # noqa: F401,F403
from minitx.ops.dropout import *  # noqa: F401,F403
from minitx.ops.loss import *  # noqa: F401,F403
from minitx.ops.attention import *  # noqa: F401,F403
from minitx.ops.conv import *  # noqa: F401,F403
from minitx.ops.resample import *  # noqa: F401,F403
from minitx.ops.ctc import *  # noqa: F401,F403
from minitx.ops.bessel import *  # noqa: F401,F403

# Each family's public function names itself in its errors: given data no tensor holds (F.softmax("a")),
# not tensor(), which converts its arguments inside it; and not the op it is built from (F.nanmean's
# sum, F.logaddexp's Function LogAddExp) (minitx.autograd.tensor.naming). Done here, once every family
# is loaded and before minitx.functional, minitx.special and minitx.linalg gather the functions, so
# that each is one object under all its names (F.arccos is F.acos, and says acos).
import inspect as _inspect  # noqa: E402
import sys as _sys  # noqa: E402

from minitx.autograd.function import Function as _Function, _snake_case  # noqa: E402
from minitx.autograd.tensor import OP_NAMES as _OP_NAMES, naming as _naming  # noqa: E402

_named = {}  # each function's one wrapper, whatever names it goes by
for _module in [m for n, m in list(_sys.modules.items()) if n.startswith(__name__ + ".") and "._" not in n]:
    for _name, _op in list(vars(_module).items()):
        if _inspect.isclass(_op) and issubclass(_op, _Function) and _op.__module__ == _module.__name__:
            _OP_NAMES.add(_snake_case(_op.__name__))  # (the name its instances give: LogAddExp's log_add_exp)
        elif _inspect.isfunction(_op) and not _name.startswith("_") and _op.__module__ == _module.__name__:
            if _op not in _named:
                _named[_op] = _naming(_op, _op.__name__)  # (a module exporting it by another name says so)
            setattr(_module, _name, _named[_op])
            _OP_NAMES.update((_name, _op.__name__))
del _inspect, _sys, _Function, _snake_case, _OP_NAMES, _naming, _named, _module, _name, _op
