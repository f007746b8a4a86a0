"""The margin and ranking losses (cosine_embedding_loss, margin_ranking_loss, hinge_embedding_loss,
soft_margin_loss, multilabel_soft_margin_loss, multi_margin_loss, multilabel_margin_loss,
triplet_margin_loss, triplet_margin_with_distance_loss) and the Poisson and Gaussian negative
log-likelihoods (poisson_nll_loss, GaussianNll), in minitx/ops/loss.py.

Each: the forward against NumPy written here, float64 gradients (check_gradients) on drawn shapes
and options, with the hinges' arguments drawn away from their kinks, and PyTorch parity for the
three reductions; then the edge values against PyTorch: ties at the hinge, 0 margins, empty
batches (a mean over nothing is 0 in minitx, NaN in PyTorch), infinities; and the errors.
"""
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity

REDUCTIONS = ["mean", "sum", "none"]
ROWS = mst.shapes(min_dims=1, max_dims=2, max_side=4)  # [D] or [N, D]
KINK = 0.01  # how far a hinge's argument stays from 0 in the gradient checks


def _tf():
    return import_torch().nn.functional


def _np_reduce(loss, reduction):
    if reduction == "none":
        return loss
    return loss.sum() / max(loss.size, 1) if reduction == "mean" else loss.sum()


def _signs(draw, shape):
    return leaf(np.where(draw(mst.float_arrays(shape, min_value=-1.0, max_value=1.0)) < 0, -1.0, 1.0),
                requires_grad=False)


# ---------------------------------------------------------------- cosine and hinge embedding, ranking


def _np_cosine(a, b):
    return (a * b).sum(-1) / np.sqrt(((a * a).sum(-1) + 1e-12) * ((b * b).sum(-1) + 1e-12))


@given(shape=ROWS, data=st.data())
def test_cosine_embedding_loss(shape, data):
    x1, x2 = data.draw(mst.tensors(shape)), data.draw(mst.tensors(shape))
    y = _signs(data.draw, shape[:-1])
    margin = data.draw(st.sampled_from([-0.5, 0.0, 0.5]))
    reduction = data.draw(st.sampled_from(REDUCTIONS))
    cos = _np_cosine(x1.numpy(), x2.numpy())
    assume((np.abs(cos - margin) > KINK).all())
    # (within 1e-6 of a zero vector the 1e-12 under the root bends the loss: the edge cases compare it)
    assume(min(np.linalg.norm(v.numpy(), axis=-1).min() for v in (x1, x2)) > 0.1)

    def reference(a, b):
        c = _np_cosine(a, b)
        return _np_reduce(np.where(y.numpy() == 1, 1 - c, np.maximum(0, c - margin)), reduction)

    fn = lambda a, b: F.cosine_embedding_loss(a, b, y, margin, reduction)  # noqa: E731
    check_forward(fn, reference, x1, x2, rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, x1, x2)
    parity(fn, lambda a, b: _tf().cosine_embedding_loss(a, b, import_torch().tensor(y.numpy()), margin,
                                                         reduction=reduction), leaf(x1.numpy()), leaf(x2.numpy()))


@given(shape=mst.shapes(max_dims=3, max_side=4), data=st.data())
def test_margin_ranking_loss(shape, data):
    x1, x2, y = data.draw(mst.tensors(shape)), data.draw(mst.tensors(shape)), _signs(data.draw, shape)
    y.requires_grad_(data.draw(st.booleans()))  # PyTorch's composition gives the targets a gradient too
    margin, reduction = data.draw(st.sampled_from([0.0, 0.5])), data.draw(st.sampled_from(REDUCTIONS))
    assume((np.abs(-y.numpy() * (x1.numpy() - x2.numpy()) + margin) > KINK).all())
    fn = lambda a, b, t: F.margin_ranking_loss(a, b, t, margin, reduction)  # noqa: E731
    check_forward(fn, lambda a, b, t: _np_reduce(np.maximum(0, -t * (a - b) + margin), reduction), x1, x2, y,
                  rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, x1, x2, y)
    parity(fn, lambda a, b, t: _tf().margin_ranking_loss(a, b, t, margin, reduction=reduction),
           *(leaf(v.numpy(), v.requires_grad) for v in (x1, x2, y)))


@given(shape=mst.shapes(max_dims=3, max_side=4), data=st.data())
def test_hinge_embedding_loss(shape, data):
    x, y = data.draw(mst.tensors(shape)), _signs(data.draw, shape)
    margin, reduction = data.draw(st.sampled_from([0.0, 1.0, 2.0])), data.draw(st.sampled_from(REDUCTIONS))
    assume((np.abs(margin - x.numpy()) > KINK).all())
    fn = lambda a: F.hinge_embedding_loss(a, y, margin, reduction)  # noqa: E731
    check_forward(fn, lambda a: _np_reduce(np.where(y.numpy() == 1, a, np.maximum(0, margin - a)), reduction), x,
                  rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, x)
    parity(fn, lambda a: _tf().hinge_embedding_loss(a, import_torch().tensor(y.numpy()), margin,
                                                    reduction=reduction), leaf(x.numpy()))


# ---------------------------------------------------------------- soft margins


@given(shape=mst.shapes(max_dims=3, max_side=4), data=st.data())
def test_soft_margin_loss(shape, data):
    x, y = data.draw(mst.tensors(shape, min_value=-20.0, max_value=20.0)), _signs(data.draw, shape)
    reduction = data.draw(st.sampled_from(REDUCTIONS))
    fn = lambda a: F.soft_margin_loss(a, y, reduction)  # noqa: E731
    check_forward(fn, lambda a: _np_reduce(np.logaddexp(0, -y.numpy() * a), reduction), x, rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, x)
    parity(fn, lambda a: _tf().soft_margin_loss(a, import_torch().tensor(y.numpy()), reduction=reduction),
           leaf(x.numpy()))


@given(shape=ROWS, data=st.data())
def test_multilabel_soft_margin_loss(shape, data):
    x = data.draw(mst.tensors(shape, min_value=-20.0, max_value=20.0))
    y = data.draw(mst.tensors(shape, min_value=0.0, max_value=1.0))
    weighted, reduction = data.draw(st.booleans()), data.draw(st.sampled_from(REDUCTIONS))
    w = data.draw(mst.float_arrays(shape[-1:], min_value=0.1, max_value=2.0)) if weighted else None

    def reference(a, b):
        each = b * np.logaddexp(0, -a) + (1 - b) * np.logaddexp(0, a)
        return _np_reduce((each * (1.0 if w is None else w)).mean(-1), reduction)

    fn = lambda a, b: F.multilabel_soft_margin_loss(a, b, w, reduction)  # noqa: E731
    check_forward(fn, reference, x, y, rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, x, y)
    torch = import_torch()
    parity(fn, lambda a, b: _tf().multilabel_soft_margin_loss(
        a, b, None if w is None else torch.tensor(w), reduction=reduction), leaf(x.numpy()), leaf(y.numpy()))


# ---------------------------------------------------------------- multi-class and multi-label margins


@given(shape=ROWS, data=st.data())
def test_multi_margin_loss(shape, data):
    x = data.draw(mst.tensors(shape))
    classes = shape[-1]
    t = minitx.tensor(data.draw(mst.class_targets(shape[:-1], classes)))
    p, margin = data.draw(st.sampled_from([1, 2])), data.draw(st.sampled_from([0.0, 0.5, 1.0]))
    weighted, reduction = data.draw(st.booleans()), data.draw(st.sampled_from(REDUCTIONS))
    w = data.draw(mst.float_arrays((classes,), min_value=0.1, max_value=2.0)) if weighted else None
    rows, ids = x.numpy().reshape(-1, classes), t.numpy().reshape(-1)
    hinges = margin - rows[np.arange(len(ids)), ids][:, None] + rows
    assume((np.abs(hinges) > KINK).all() or p == 2)  # (squared, the hinge has no kink)

    def reference(a):
        out = []
        for row, c in zip(a.reshape(-1, classes), ids):
            terms = [max(0.0, margin - row[c] + row[i]) ** p for i in range(classes) if i != c]
            out.append(sum(terms) * (1.0 if w is None else w[c]) / classes)
        return _np_reduce(np.array(out).reshape(t.shape), reduction)

    fn = lambda a: F.multi_margin_loss(a, t, p, margin, w, reduction)  # noqa: E731
    check_forward(fn, reference, x, rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, x)
    torch = import_torch()
    parity(fn, lambda a: _tf().multi_margin_loss(a, torch.tensor(t.numpy()), p, margin,
                                                 None if w is None else torch.tensor(w), reduction=reduction),
           leaf(x.numpy()))


@st.composite
def _multilabel_targets(draw, shape):
    """Rows of class ids (distinct, or one repeated), then -1, then anything in [-1, C)."""
    classes, rows = shape[-1], []
    for _ in range(int(np.prod(shape[:-1]))):
        listed = draw(st.permutations(range(classes)))[:draw(st.integers(0, classes))]
        if listed and draw(st.booleans()):
            listed = listed + listed[:1]  # an id listed twice counts twice
        listed = listed[:classes]
        tail = [draw(st.integers(-1, classes - 1)) for _ in range(classes - len(listed) - 1)]
        rows.append((list(listed) + [-1] + tail)[:classes])
    return np.array(rows, dtype=np.int64).reshape(shape)


@given(shape=ROWS, data=st.data())
def test_multilabel_margin_loss(shape, data):
    x = data.draw(mst.tensors(shape))
    t = minitx.tensor(data.draw(_multilabel_targets(shape)))
    reduction = data.draw(st.sampled_from(REDUCTIONS))
    classes = shape[-1]

    def reference(a):
        out = []
        for row, ids in zip(a.reshape(-1, classes), t.numpy().reshape(-1, classes)):
            listed = list(ids[:list(ids).index(-1)] if -1 in ids else ids)
            out.append(sum(max(0.0, 1 - (row[j] - row[i])) for j in listed for i in range(classes)
                           if i not in listed) / classes)
        return _np_reduce(np.array(out).reshape(shape[:-1]), reduction)

    rows = x.numpy().reshape(-1, classes)
    assume((np.abs(1 - rows[:, :, None] + rows[:, None, :]) > KINK).all())
    fn = lambda a: F.multilabel_margin_loss(a, t, reduction)  # noqa: E731
    check_forward(fn, reference, x, rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, x)
    parity(fn, lambda a: _tf().multilabel_margin_loss(a, import_torch().tensor(t.numpy()), reduction=reduction),
           leaf(x.numpy()))


# ---------------------------------------------------------------- triplets


def _np_distance(u, v, p, eps):
    return (np.abs(u - v + eps) ** p).sum(-1) ** (1 / p)


@given(shape=ROWS, data=st.data())
def test_triplet_margin_loss(shape, data):
    a, pos, neg = (data.draw(mst.tensors(shape)) for _ in range(3))
    margin, p = data.draw(st.sampled_from([0.5, 1.0])), data.draw(st.sampled_from([1, 2, 3]))
    eps, swap = data.draw(st.sampled_from([0.0, 1e-6])), data.draw(st.booleans())
    reduction = data.draw(st.sampled_from(REDUCTIONS))

    def losses(u, v, w):
        d_pos, d_neg, d_swap = _np_distance(u, v, p, eps), _np_distance(u, w, p, eps), _np_distance(v, w, p, eps)
        return margin + d_pos - (np.minimum(d_neg, d_swap) if swap else d_neg), d_neg - d_swap

    arrays = [t.numpy() for t in (a, pos, neg)]
    hinge, gap = losses(*arrays)
    assume((np.abs(hinge) > KINK).all() and (not swap or (np.abs(gap) > KINK).all()))
    assume(all((np.abs(u - v) > KINK).all() for u, v in ((arrays[0], arrays[1]), (arrays[0], arrays[2]),
                                                           (arrays[1], arrays[2]))))  # |.|'s kink at p = 1
    fn = lambda u, v, w: F.triplet_margin_loss(u, v, w, margin, p, eps, swap, reduction)  # noqa: E731
    check_forward(fn, lambda u, v, w: _np_reduce(np.maximum(0, losses(u, v, w)[0]), reduction), a, pos, neg,
                  rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, a, pos, neg)
    parity(fn, lambda u, v, w: _tf().triplet_margin_loss(u, v, w, margin, p, eps, swap, reduction=reduction),
           *(leaf(v) for v in arrays))


@given(shape=ROWS, data=st.data())
def test_triplet_margin_with_distance_loss(shape, data):
    """With a cosine distance (any callable of two tensors), and without one: pairwise_distance."""
    a, pos, neg = (data.draw(mst.tensors(shape)) for _ in range(3))
    cosine, swap = data.draw(st.booleans()), data.draw(st.booleans())
    margin, reduction = data.draw(st.sampled_from([0.5, 1.0])), data.draw(st.sampled_from(REDUCTIONS))
    torch = import_torch()
    ours_distance = (lambda u, v: 1 - F.cosine_similarity(u, v, axis=-1)) if cosine else None
    theirs_distance = (lambda u, v: 1 - torch.cosine_similarity(u, v, dim=-1)) if cosine else None

    def np_distance(u, v):
        if not cosine:
            return _np_distance(u, v, 2, 1e-6)
        return 1 - (u * v).sum(-1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))

    def losses(u, v, w):
        d_neg, d_swap = np_distance(u, w), np_distance(v, w)
        return margin + np_distance(u, v) - (np.minimum(d_neg, d_swap) if swap else d_neg), d_neg - d_swap

    arrays = [t.numpy() for t in (a, pos, neg)]
    assume(all(np.linalg.norm(u, axis=-1).min() > 0.1 for u in arrays))  # (the cosine's and the norm's kinks)
    assume(all(np.linalg.norm(u - v, axis=-1).min() > 0.1 for u, v in ((arrays[0], arrays[1]),
                                                                         (arrays[0], arrays[2]),
                                                                         (arrays[1], arrays[2]))))
    hinge, gap = losses(*arrays)
    assume((np.abs(hinge) > KINK).all() and (not swap or (np.abs(gap) > KINK).all()))
    fn = lambda u, v, w: F.triplet_margin_with_distance_loss(  # noqa: E731
        u, v, w, distance_function=ours_distance, margin=margin, swap=swap, reduction=reduction)
    check_forward(fn, lambda u, v, w: _np_reduce(np.maximum(0, losses(u, v, w)[0]), reduction), a, pos, neg,
                  rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, a, pos, neg)
    parity(fn, lambda u, v, w: _tf().triplet_margin_with_distance_loss(
        u, v, w, distance_function=theirs_distance, margin=margin, swap=swap, reduction=reduction),
        *(leaf(v) for v in arrays))


# ---------------------------------------------------------------- Poisson and Gaussian likelihoods


def _np_poisson(x, y, log_input, full, eps):
    loss = np.exp(x) - y * x if log_input else x - y * np.log(x + eps)
    if full:
        safe = np.where(y > 1, y, 2.0)
        loss = loss + np.where(y > 1, safe * np.log(safe) - safe + 0.5 * np.log(2 * np.pi * safe), 0.0)
    return loss


@given(shape=mst.shapes(max_dims=3, max_side=4), data=st.data())
def test_poisson_nll_loss(shape, data):
    log_input, full = data.draw(st.booleans()), data.draw(st.booleans())
    eps, reduction = data.draw(st.sampled_from([1e-8, 0.5])), data.draw(st.sampled_from(REDUCTIONS))
    x = data.draw(mst.tensors(shape) if log_input else mst.tensors(shape, min_value=0.05, max_value=5.0))
    counts = data.draw(mst.float_arrays(shape, min_value=0.0, max_value=6.0, away_from=(1.0,)))
    counts = np.where(data.draw(mst.float_arrays(shape, min_value=0.0, max_value=1.0)) < 0.3, np.round(counts), counts)
    assume(not full or (np.abs(counts - 1) > KINK).all())  # (the Stirling term starts at y = 1 with a jump)
    y = leaf(counts)
    fn = lambda a, b: F.poisson_nll_loss(a, b, log_input, full, eps, reduction)  # noqa: E731
    check_forward(fn, lambda a, b: _np_reduce(_np_poisson(a, b, log_input, full, eps), reduction), x, y,
                  rtol=1e-12, atol=1e-12)
    assert check_gradients(fn, x, y)
    # y = 0 under full: PyTorch's target gradient is 0/0 = NaN there (the masked log's), minitx's 0
    y_grad = not (full and (counts == 0).any())
    parity(fn, lambda a, b: _tf().poisson_nll_loss(a, b, log_input, full, eps=eps, reduction=reduction),
           leaf(x.numpy()), leaf(counts, y_grad))


@st.composite
def _variance_shape(draw, shape):
    """var's shapes in PyTorch's rules: the input's, without its last axis, or 1 on one axis."""
    kinds = ["same", "number"] + (["rows"] if shape else []) + (["one axis"] if any(n > 1 for n in shape) else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "rows":
        return shape[:-1]
    if kind == "one axis":
        axis = draw(st.sampled_from([i for i, n in enumerate(shape) if n > 1]))
        return shape[:axis] + (1,) + shape[axis + 1:]
    return None if kind == "number" else shape


@given(shape=mst.shapes(max_dims=3, max_side=4), data=st.data())
def test_gaussian_nll_loss(shape, data):
    x, y = data.draw(mst.tensors(shape)), data.draw(mst.tensors(shape))
    var_shape = data.draw(_variance_shape(shape))
    full, reduction = data.draw(st.booleans()), data.draw(st.sampled_from(REDUCTIONS))
    var = 0.7 if var_shape is None else data.draw(mst.tensors(var_shape, min_value=0.1, max_value=3.0))
    eps = data.draw(st.sampled_from([1e-6, 0.05]), label="eps")  # (below var: the clamp's own test is below)

    def reference(a, b, v):
        v = np.asarray(v)
        v = v[..., None] if v.shape == shape[:-1] and v.shape != shape else v
        v = np.maximum(v, eps)
        return _np_reduce(0.5 * (np.log(v) + (a - b) ** 2 / v) + (0.5 * np.log(2 * np.pi) if full else 0), reduction)

    fn = lambda a, b, v: F.gaussian_nll_loss(a, b, v, full, eps, reduction=reduction)  # noqa: E731
    inputs = (x, y, var)
    check_forward(fn, reference, *inputs, rtol=1e-12, atol=1e-12)
    assert check_gradients(fn, *inputs)
    parity(fn, lambda a, b, v: _tf().gaussian_nll_loss(a, b, v, full, eps, reduction=reduction),
           leaf(x.numpy()), leaf(y.numpy()), var if var_shape is None else leaf(var.numpy()))


def test_gaussian_nll_loss_passes_the_gradient_through_the_clamp_as_pytorch():
    """Below eps the loss is flat in var, yet PyTorch's gradient (its clamp unrecorded) is that at v = eps."""
    x, y = leaf([0.0, 1.0, 2.0, -1.0]), leaf([0.5, 1.0, 0.0, 1.0])
    var = leaf([0.0, 0.1, 0.3, 2.0])  # the first three below eps = 0.5
    out = parity(lambda a, b, v: F.gaussian_nll_loss(a, b, v, eps=0.5, reduction="sum"),
                 lambda a, b, v: _tf().gaussian_nll_loss(a, b, v, eps=0.5, reduction="sum"), x, y, var)
    d, v = np.array([-0.5, 0.0, 2.0, -2.0]), np.array([0.5, 0.5, 0.5, 2.0])
    assert out.item() == pytest.approx((0.5 * (np.log(v) + d * d / v)).sum(), rel=1e-14)
    var.grad = None
    F.gaussian_nll_loss(x, y, var, eps=0.5, reduction="sum").backward()
    np.testing.assert_allclose(var.grad.numpy(), 0.5 * (1 / v - d * d / v ** 2), rtol=1e-14)


# ---------------------------------------------------------------- edge values against PyTorch


def _ties_and_zero_margins():
    """(name, minitx call, PyTorch call, inputs): each hinge's argument exactly 0 somewhere, at
    margin 0 where the loss takes one; PyTorch's clamp_min passes dy there, its multi-margin
    kernels do not."""
    torch = import_torch()
    tF = torch.nn.functional
    rows = np.array([[1.0, 0.0, 0.5], [0.0, 0.0, 0.0]])
    ids, lists = np.array([0, 2]), np.array([[0, -1, 1], [2, 1, -1]])
    return [
        ("margin_ranking", lambda a, b: F.margin_ranking_loss(a, b, [1.0, -1.0, 1.0], 0.0, "sum"),
         lambda a, b: tF.margin_ranking_loss(a, b, torch.tensor([1.0, -1.0, 1.0], dtype=torch.float64), 0.0,
                                             reduction="sum"), [[1.0, 2.0, 0.5], [1.0, 2.0, 1.0]]),
        ("hinge_embedding", lambda a: F.hinge_embedding_loss(a, [-1, -1, 1, -1], 1.0, "sum"),
         lambda a: tF.hinge_embedding_loss(a, torch.tensor([-1, -1, 1, -1]), 1.0, reduction="sum"),
         [[1.0, 0.5, 0.0, 2.0]]),
        ("hinge_embedding margin 0", lambda a: F.hinge_embedding_loss(a, [-1, -1], 0.0, "sum"),
         lambda a: tF.hinge_embedding_loss(a, torch.tensor([-1, -1]), 0.0, reduction="sum"), [[0.0, -1.0]]),
        ("cosine_embedding margin 0", lambda a, b: F.cosine_embedding_loss(a, b, [-1, -1], 0.0, "sum"),
         lambda a, b: tF.cosine_embedding_loss(a, b, torch.tensor([-1, -1]), 0.0, reduction="sum"),
         [[[1.0, 0.0], [1.0, 2.0]], [[0.0, 1.0], [2.0, -1.0]]]),
        ("cosine_embedding of a zero vector", lambda a, b: F.cosine_embedding_loss(a, b, [1, -1], 0.0, "sum"),
         lambda a, b: tF.cosine_embedding_loss(a, b, torch.tensor([1, -1]), 0.0, reduction="sum"),
         [[[0.0, 0.0], [0.0, 0.0]], [[1.0, 2.0], [0.5, 1.0]]]),
        ("multi_margin", lambda a: F.multi_margin_loss(a, ids, 1, 1.0, None, "sum"),
         lambda a: tF.multi_margin_loss(a, torch.tensor(ids), 1, 1.0, reduction="sum"), [rows]),
        ("multi_margin margin 0", lambda a: F.multi_margin_loss(a, ids, 1, 0.0, None, "sum"),
         lambda a: tF.multi_margin_loss(a, torch.tensor(ids), 1, 0.0, reduction="sum"), [rows]),
        ("multilabel_margin", lambda a: F.multilabel_margin_loss(a, lists, "sum"),
         lambda a: tF.multilabel_margin_loss(a, torch.tensor(lists), reduction="sum"), [rows]),
        ("triplet", lambda a, p, n: F.triplet_margin_loss(a, p, n, 1.0, eps=0.0, reduction="sum"),
         lambda a, p, n: tF.triplet_margin_loss(a, p, n, 1.0, eps=0.0, reduction="sum"),
         [[[0.0, 0.0]], [[1.0, 0.0]], [[0.0, 2.0]]]),
        ("triplet swap tie", lambda a, p, n: F.triplet_margin_loss(a, p, n, 2.0, eps=0.0, swap=True,
                                                                   reduction="sum"),
         lambda a, p, n: tF.triplet_margin_loss(a, p, n, 2.0, eps=0.0, swap=True, reduction="sum"),
         [[[0.0, 0.0]], [[2.0, 0.0]], [[1.0, 1.0]]]),
    ]


@pytest.mark.parametrize("name, ours, theirs, inputs", _ties_and_zero_margins(), ids=lambda v: v if isinstance(v, str) else "")
def test_ties_at_the_hinge_and_zero_margins_match_pytorch(name, ours, theirs, inputs):
    parity(ours, theirs, *(leaf(np.array(v)) for v in inputs), rtol=1e-8)  # (a zero vector's 1e6 gradients)


def _empty_cases():
    torch = import_torch()
    tF = torch.nn.functional
    e2, e1 = np.zeros((0, 3)), np.zeros(0)
    long_rows, long_lists = np.zeros(0, np.int64), np.zeros((0, 3), np.int64)
    return {
        "cosine_embedding": ((e2, e2), lambda r, a, b: F.cosine_embedding_loss(a, b, e1, reduction=r),
                             lambda r, a, b: tF.cosine_embedding_loss(a, b, torch.tensor(e1), reduction=r)),
        "margin_ranking": ((e1, e1), lambda r, a, b: F.margin_ranking_loss(a, b, e1, reduction=r),
                           lambda r, a, b: tF.margin_ranking_loss(a, b, torch.tensor(e1), reduction=r)),
        "hinge_embedding": ((e2,), lambda r, a: F.hinge_embedding_loss(a, e2, reduction=r),
                            lambda r, a: tF.hinge_embedding_loss(a, torch.tensor(e2), reduction=r)),
        "soft_margin": ((e2,), lambda r, a: F.soft_margin_loss(a, e2, reduction=r),
                        lambda r, a: tF.soft_margin_loss(a, torch.tensor(e2), reduction=r)),
        "multilabel_soft_margin": ((e2,), lambda r, a: F.multilabel_soft_margin_loss(a, e2, reduction=r),
                                   lambda r, a: tF.multilabel_soft_margin_loss(a, torch.tensor(e2), reduction=r)),
        "multi_margin": ((e2,), lambda r, a: F.multi_margin_loss(a, long_rows, reduction=r),
                         lambda r, a: tF.multi_margin_loss(a, torch.tensor(long_rows), reduction=r)),
        "multilabel_margin": ((e2,), lambda r, a: F.multilabel_margin_loss(a, long_lists, reduction=r),
                              lambda r, a: tF.multilabel_margin_loss(a, torch.tensor(long_lists), reduction=r)),
        "triplet_margin": ((e2, e2, e2), lambda r, a, p, n: F.triplet_margin_loss(a, p, n, reduction=r),
                           lambda r, a, p, n: tF.triplet_margin_loss(a, p, n, reduction=r)),
        "triplet_margin_with_distance": (
            (e2, e2, e2), lambda r, a, p, n: F.triplet_margin_with_distance_loss(a, p, n, reduction=r),
            lambda r, a, p, n: tF.triplet_margin_with_distance_loss(a, p, n, reduction=r)),
        "poisson_nll": ((e2, e2), lambda r, a, b: F.poisson_nll_loss(a, b, full=True, reduction=r),
                        lambda r, a, b: tF.poisson_nll_loss(a, b, full=True, reduction=r)),
        "gaussian_nll": ((e2, e2, np.ones((0, 3))), lambda r, a, b, v: F.gaussian_nll_loss(a, b, v, reduction=r),
                         lambda r, a, b, v: tF.gaussian_nll_loss(a, b, v, reduction=r)),
    }


@pytest.mark.parametrize("name", sorted(_empty_cases()))
def test_an_empty_batch_sums_to_0_and_its_mean_is_0(name):
    """'none' and 'sum' as PyTorch's (empty, 0); 'mean' over nothing is 0 (PyTorch: NaN, or for the
    multi-margin losses whatever its uninitialized result holds)."""
    arrays, ours, theirs = _empty_cases()[name]
    for reduction in ("none", "sum"):
        parity(lambda *v: ours(reduction, *v), lambda *v: theirs(reduction, *v), *(leaf(a) for a in arrays))
    inputs = [leaf(a) for a in arrays]
    loss = ours("mean", *inputs)
    assert loss.item() == 0.0
    loss.backward()
    assert all(v.grad.shape == v.shape for v in inputs)


def test_infinities_match_pytorch():
    torch = import_torch()
    tF = torch.nn.functional
    inf = np.inf
    x1, x2 = leaf([inf, -inf, 1.0, 0.0]), leaf([0.0, 0.0, inf, 1.0])
    parity(lambda a, b: F.margin_ranking_loss(a, b, [1.0, 1.0, 1.0, -1.0], 0.5, "none"),
           lambda a, b: tF.margin_ranking_loss(a, b, torch.tensor([1.0, 1.0, 1.0, -1.0], dtype=torch.float64), 0.5,
                                               reduction="none"), x1, x2)
    parity(lambda a: F.hinge_embedding_loss(a, [1, -1, -1], 1.0, "none"),
           lambda a: tF.hinge_embedding_loss(a, torch.tensor([1, -1, -1]), 1.0, reduction="none"),
           leaf([inf, -inf, inf]))
    parity(lambda a: F.multi_margin_loss(a, [0, 1], reduction="none"),
           lambda a: tF.multi_margin_loss(a, torch.tensor([0, 1]), reduction="none"), leaf([[inf, 1.0], [0.0, -inf]]))
    parity(lambda a, b: F.poisson_nll_loss(a, b, reduction="none"),
           lambda a, b: tF.poisson_nll_loss(a, b, reduction="none"), leaf([-inf, 1.0]), leaf([0.0, inf]))
    parity(lambda a, b, v: F.gaussian_nll_loss(a, b, v, reduction="none"),
           lambda a, b, v: tF.gaussian_nll_loss(a, b, v, reduction="none"), leaf([inf, 0.0]), leaf([0.0, 0.0]),
           leaf([1.0, inf]))


def test_soft_margin_loss_stays_finite_where_pytorchs_overflows():
    """log1p(exp(1000)) is inf in PyTorch; -logsigmoid(-1000) is 1000. The gradients agree."""
    x = leaf([-1000.0, 1000.0])
    loss = F.soft_margin_loss(x, [1.0, -1.0], "none")
    np.testing.assert_array_equal(loss.numpy(), [1000.0, 1000.0])
    assert np.isinf(_tf().soft_margin_loss(import_torch().tensor([-1000.0]), import_torch().tensor([1.0])).item())
    loss.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [-1.0, 1.0])


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("call, error, message", [
    (lambda: F.cosine_embedding_loss(np.ones((2, 3)), np.ones((2, 3)), [1, 0]), ValueError,
     r"cosine_embedding_loss: targets must be 1 or -1, got 0"),
    (lambda: F.cosine_embedding_loss(np.ones((2, 3)), np.ones((2, 3)), [1, 1, 1]), ValueError,
     r"cosine_embedding_loss: inputs of shapes \(2, 3\) and \(2, 3\) with targets of shape \(3,\); expected"),
    (lambda: F.cosine_embedding_loss(np.ones((2, 3)), np.ones((1, 3)), [1, 1]), ValueError,
     r"cosine_embedding_loss: inputs of shapes \(2, 3\) and \(1, 3\)"),
    (lambda: F.margin_ranking_loss(np.ones(2), np.ones(1), np.ones(2)), ValueError,
     r"margin_ranking_loss: input2 of shape \(1,\) must match the input's shape \(2,\)"),
    (lambda: F.margin_ranking_loss(np.ones(2), np.ones(2), np.ones(2), reduction="avg"), ValueError,
     r"margin_ranking_loss: reduction must be 'mean', 'sum' or 'none', got 'avg'"),
    (lambda: F.hinge_embedding_loss(np.ones(2), [1.0, 0.5]), ValueError,
     r"hinge_embedding_loss: targets must be 1 or -1, got 0.5"),
    (lambda: F.hinge_embedding_loss(np.ones((1, 2)), [1, -1]), ValueError,
     r"hinge_embedding_loss: targets of shape \(2,\) must match the input's shape \(1, 2\)"),
    (lambda: F.soft_margin_loss(np.ones((1, 2)), np.ones((2, 1))), ValueError,
     r"soft_margin_loss: targets of shape \(2, 1\) must match the input's shape \(1, 2\)"),
    (lambda: F.multilabel_soft_margin_loss(np.ones((2, 3)), np.ones((2, 3)), weight=np.ones(2)), ValueError,
     r"multilabel_soft_margin_loss: weight of shape \(2,\) must broadcast to the input's shape \(2, 3\)"),
    (lambda: F.multi_margin_loss(np.ones((2, 3)), [0, 3]), IndexError,
     r"multi_margin_loss: target 3 is out of range for 3 classes"),
    (lambda: F.multi_margin_loss(np.ones((2, 3)), [0.0, 1.0]), TypeError, r"multi_margin_loss: targets must"),
    (lambda: F.multi_margin_loss(np.ones((2, 3)), [0, 1], p=3), ValueError, r"multi_margin_loss: p must be 1 or 2, got 3"),
    (lambda: F.multi_margin_loss(np.ones((2, 3)), [0, 1], weight=np.ones(2)), ValueError,
     r"multi_margin_loss: weight has shape \(2,\), expected \(3,\)"),
    (lambda: F.multi_margin_loss(np.ones((2, 0)), [0, 1]), ValueError,
     r"multi_margin_loss: input must be \[N, C\] or \[C\] with C > 0, got \(2, 0\)"),
    (lambda: F.multi_margin_loss(np.ones((2, 3)), [0]), ValueError,
     r"multi_margin_loss: input of shape \(2, 3\) needs targets of shape \(2,\), got \(1,\)"),
    (lambda: F.multilabel_margin_loss(np.ones((1, 3)), [[0, -2, 1]]), IndexError,
     r"multilabel_margin_loss: target -2 is out of range for 3 classes"),
    (lambda: F.multilabel_margin_loss(np.ones((1, 3)), [[0, -1]]), ValueError,
     r"multilabel_margin_loss: targets of shape \(1, 2\) must match the input's shape \(1, 3\)"),
    (lambda: F.triplet_margin_loss(np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3)), margin=0), ValueError,
     r"triplet_margin_loss: margin must be a number > 0, got 0"),
    (lambda: F.triplet_margin_loss(np.ones((2, 3)), np.ones((1, 3)), np.ones((2, 3))), ValueError,
     r"triplet_margin_loss: positive of shape \(1, 3\) must match the input's shape \(2, 3\)"),
    (lambda: F.triplet_margin_with_distance_loss(np.ones((2, 3)), np.ones(3), np.ones((2, 3))), ValueError,
     r"triplet_margin_with_distance_loss: anchor, positive and negative must have one number of axes"),
    (lambda: F.triplet_margin_with_distance_loss(np.ones((2, 3)), np.ones((2, 3)), np.ones((1, 3)),
                                                 distance_function=lambda u, v: F.sum(v, axis=-1)),
     ValueError, r"triplet_margin_with_distance_loss: the distances to the positive \(2,\) and to the negative \(1,\)"),
    (lambda: F.poisson_nll_loss(np.ones(3), np.ones(2)), ValueError,
     r"poisson_nll_loss: targets of shape \(2,\) must match the input's shape \(3,\)"),
    (lambda: F.gaussian_nll_loss(np.ones((2, 3)), np.ones((2, 3)), -np.ones((2, 3))), ValueError,
     r"gaussian_nll_loss: every variance must be >= 0, got -1.0"),
    (lambda: F.gaussian_nll_loss(np.ones((2, 3)), np.ones((2, 3)), np.ones((1, 1))), ValueError,
     r"gaussian_nll_loss: var of shape \(1, 1\) does not fit the input's shape \(2, 3\)"),
    (lambda: F.gaussian_nll_loss(np.ones((2, 3)), np.ones((2, 3)), np.ones(3)), ValueError,
     r"gaussian_nll_loss: var of shape \(3,\) does not fit"),
])
def test_errors_name_the_loss_what_it_got_and_what_it_expected(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_pytorch_refuses_the_var_shapes_minitx_refuses():
    torch = import_torch()
    for var in (torch.ones(1, 1), torch.ones(3)):
        with pytest.raises(ValueError, match="var is of incorrect size"):
            _tf().gaussian_nll_loss(torch.ones(2, 3), torch.ones(2, 3), var)


@pytest.mark.parametrize("name, call", [
    ("cosine_embedding_loss", lambda x, y: F.cosine_embedding_loss(x, x, y[:, 0])),
    ("hinge_embedding_loss", lambda x, y: F.hinge_embedding_loss(x, y)),
    ("gaussian_nll_loss", lambda x, y: F.gaussian_nll_loss(x, x, y * y)),
    ("binary_cross_entropy", lambda x, y: F.binary_cross_entropy(F.sigmoid(x), (y + 1) / 2)),
    ("kl_div", lambda x, y: F.kl_div(x, (y + 1) / 2, reduction="sum")),
])
def test_a_check_of_the_targets_values_is_one_counted_host_read(name, call):
    """A loss that checks its targets' values (signs, variances, probabilities) reads the device
    for it: through backend.to_host, counted, so that a training step held to no reads (sync.py,
    tests/train/test_sync_free.py) sees it, as it would stall the GPU's queue."""
    x = leaf(np.linspace(-1, 1, 6).reshape(3, 2))
    y = leaf(np.array([[1.0, -1.0], [-1.0, 1.0], [1.0, 1.0]]), requires_grad=False)
    with minitx.backend.count_host_reads() as reads:
        call(x, y)
    assert reads.count == 1, name
