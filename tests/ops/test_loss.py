"""Losses (minitx/ops/loss.py): NllLoss, BinaryCrossEntropy, BinaryCrossEntropyWithLogits and
SoftCrossEntropy (F.cross_entropy with probability targets); MseLoss, SmoothL1Loss (l1, smooth L1,
Huber) and KlDiv.

Forward against NumPy written here, float64 gradients for every float input (check_gradients),
PyTorch parity for all three reductions (PyTorch puts the class axis second; minitx last), and
edge values: probabilities 0 and 1, huge logits, -inf logits, ignored rows.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity, torch_in_example

REDUCTIONS = ["mean", "sum", "none"]
ROWS = mst.shapes(min_dims=1, max_dims=2, max_side=4)  # [N] or [N, L] rows of C classes


def _tf():
    return import_torch().nn.functional


def _class_second(t):
    """[N, ..., C] -> [N, C, ...], PyTorch's layout."""
    return t.movedim(-1, 1) if t.ndim > 2 else t


def _reduce(losses, reduction, count):
    if reduction == "none":
        return losses
    return losses.sum() / max(count, 1) if reduction == "mean" else losses.sum()


def _np_log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


# ---------------------------------------------------------------- nll_loss


@st.composite
def _nll_case(draw, weighted):
    rows, classes = draw(ROWS), draw(st.integers(1, 4))
    x = draw(mst.tensors(rows + (classes,)))
    ignore_index = draw(st.sampled_from([-100, -1, 0]))  # 0: a class that is ignored
    t = minitx.tensor(draw(mst.class_targets(rows, classes, ignore_index=ignore_index)))
    weight = draw(mst.float_arrays((classes,), min_value=0.1, max_value=2.0)) if weighted else None
    return x, t, draw(st.sampled_from(REDUCTIONS)), ignore_index, weight


@pytest.mark.parametrize("weighted", [False, True])  # both, in every run: a drawn one_of could miss one
@given(data=st.data())
def test_nll_loss(weighted, data):
    x, t, reduction, ignore_index, weight = data.draw(_nll_case(weighted))
    w = np.ones(x.shape[-1]) if weight is None else weight

    def reference(a):
        tt = t.numpy()
        valid = tt != ignore_index
        rows = zip(a.reshape(-1, a.shape[-1]), tt.reshape(-1), valid.reshape(-1))
        picked = np.array([-w[c] * row[c] if ok else 0.0 for row, c, ok in rows]).reshape(tt.shape)
        counted = sum(w[c] for c, ok in zip(tt.reshape(-1), valid.reshape(-1)) if ok)  # the weighted mean's divisor
        if reduction == "none":
            return picked
        return picked.sum() / (counted or 1) if reduction == "mean" else picked.sum()

    fn = lambda v: F.nll_loss(v, t, reduction=reduction, ignore_index=ignore_index, weight=weight)  # noqa: E731
    check_forward(fn, reference, x, rtol=1e-12)
    assert check_gradients(fn, x)
    torch = torch_in_example()
    if reduction == "mean" and (t.numpy() == ignore_index).all():  # minitx: 0 over no row; PyTorch: 0/0 = NaN
        assert fn(x).item() == 0.0
    elif torch is not None:
        parity(fn, lambda v: _tf().nll_loss(_class_second(v), torch.from_numpy(t.numpy()), reduction=reduction,
                                            ignore_index=ignore_index,
                                            weight=None if weight is None else torch.from_numpy(weight)),
               leaf(x.numpy()))


def test_nll_loss_errors_name_the_op():
    x = leaf(np.zeros((2, 3)))
    with pytest.raises(IndexError, match=r"nll_loss: target 3 is out of range for 3 classes"):
        F.nll_loss(x, [0, 3])
    with pytest.raises(ValueError, match=r"nll_loss: log-probabilities \(2, 3\) need targets of shape \(2,\)"):
        F.nll_loss(x, [0, 1, 2])
    with pytest.raises(ValueError, match="nll_loss: reduction must be 'mean', 'sum' or 'none', got 'avg'"):
        F.nll_loss(x, [0, 1], reduction="avg")


# ---------------------------------------------------------------- binary cross-entropy


@st.composite
def _binary_case(draw, logits):
    shape = draw(mst.shapes(min_dims=1, max_dims=3, max_side=4))
    x = draw(mst.tensors(shape, min_value=-30.0, max_value=30.0) if logits else
             mst.tensors(shape, min_value=0.05, max_value=0.95))
    y = draw(mst.tensors(shape, min_value=0.0, max_value=1.0))
    return x, y, draw(st.sampled_from(REDUCTIONS))


@given(case=_binary_case(logits=False))
def test_binary_cross_entropy(case):
    p, y, reduction = case
    fn = lambda a, b: F.binary_cross_entropy(a, b, reduction)  # noqa: E731
    check_forward(fn, lambda a, b: _reduce(-(b * np.log(a) + (1 - b) * np.log1p(-a)), reduction, a.size), p, y,
                  rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, p, y)
    parity(fn, lambda a, b: _tf().binary_cross_entropy(a, b, reduction=reduction), leaf(p.numpy()), leaf(y.numpy()))


def test_binary_cross_entropy_at_probabilities_0_and_1_is_finite_as_in_pytorch():
    p, y = leaf([0.0, 1.0, 0.0, 1.0, 0.5]), leaf([0.0, 1.0, 1.0, 0.0, 0.3], requires_grad=False)
    # rtol 1e-8: at p = 0 or 1 both divide by the 1e-12 floor, PyTorch's rounded to float32
    out = parity(lambda a, b: F.binary_cross_entropy(a, b, "none"),
                 lambda a, b: _tf().binary_cross_entropy(a, b, reduction="none"), p, y, rtol=1e-8)
    np.testing.assert_allclose(out.numpy()[:4], [0.0, 0.0, 100.0, 100.0])
    # the targets' gradient is that of the floored loss, log(1 - p) - log(p) in [-100, 100] (PyTorch: ±inf)
    y.requires_grad_(True)
    F.binary_cross_entropy(p, y, "sum").backward()
    np.testing.assert_allclose(y.grad.numpy(), [100.0, -100.0, 100.0, -100.0, 0.0])
    with pytest.raises(ValueError, match=r"binary_cross_entropy: every input must be a probability in \[0, 1\]"):
        F.binary_cross_entropy(leaf([1.5]), leaf([1.0]))
    with pytest.raises(ValueError, match=r"binary_cross_entropy: targets of shape \(2,\) must match the input's "
                                         r"shape \(1,\)"):
        F.binary_cross_entropy(leaf([0.5]), leaf([1.0, 0.0]))


@pytest.mark.parametrize("pos_weight", [None, 3.0, "per-class"])
@given(case=_binary_case(logits=True))
def test_binary_cross_entropy_with_logits(pos_weight, case):
    x, y, reduction = case
    w = np.linspace(0.5, 2.0, x.shape[-1]) if pos_weight == "per-class" else pos_weight
    weight = minitx.tensor(w) if isinstance(w, np.ndarray) else w
    fn = lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction, pos_weight=weight)  # noqa: E731

    def reference(a, b):  # log sigma(a) = -log(1 + e^-a), log(1 - sigma(a)) = -log(1 + e^a)
        ww = 1.0 if w is None else w
        return _reduce(ww * b * np.logaddexp(0, -a) + (1 - b) * np.logaddexp(0, a), reduction, a.size)

    check_forward(fn, reference, x, y, rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, x, y)
    torch = torch_in_example()
    if torch is not None:
        torch_weight = None if w is None else torch.as_tensor(w, dtype=torch.float64)
        parity(fn, lambda a, b: _tf().binary_cross_entropy_with_logits(a, b, reduction=reduction,
                                                                       pos_weight=torch_weight),
               leaf(x.numpy()), leaf(y.numpy()))


def test_a_pos_weight_that_would_add_entries_is_refused_naming_both_shapes():
    """A (2, 3) weight over (3,) logits made the mean divide six losses by three (PyTorch refuses it)."""
    with pytest.raises(ValueError, match=r"binary_cross_entropy_with_logits: pos_weight of shape \(2, 3\) must "
                                         r"broadcast to the logits' shape \(3,\)"):
        F.binary_cross_entropy_with_logits(leaf(np.zeros(3)), leaf(np.ones(3)), pos_weight=np.full((2, 3), 2.0))
    with pytest.raises(ValueError, match=r"pos_weight of shape \(4,\) must broadcast"):
        F.binary_cross_entropy_with_logits(leaf(np.zeros(3)), leaf(np.ones(3)), pos_weight=np.ones(4))


def test_binary_cross_entropy_with_logits_is_stable_for_huge_logits():
    x = minitx.tensor([-1e4, -50.0, 50.0, 1e4], requires_grad=True)
    y = minitx.tensor([0.0, 1.0, 0.0, 1.0])
    loss = F.binary_cross_entropy_with_logits(x, y, "none")
    np.testing.assert_allclose(loss.numpy(), [0.0, 50.0, 50.0, 0.0], rtol=1e-6)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, -1.0, 1.0, 0.0], atol=1e-6)


# ---------------------------------------------------------------- cross-entropy with probability targets


@st.composite
def _soft_case(draw):
    rows, classes = draw(ROWS), draw(st.integers(1, 4))
    x = draw(mst.tensors(rows + (classes,)))
    weights = draw(mst.float_arrays(rows + (classes,), min_value=0.0, max_value=1.0))
    q = leaf(weights / np.maximum(weights.sum(-1, keepdims=True), 1e-9))  # rows of probabilities (or all 0)
    return x, q, draw(st.sampled_from(REDUCTIONS)), draw(st.sampled_from([0.0, 0.1]))


@given(case=_soft_case())
def test_cross_entropy_with_probability_targets(case):
    x, q, reduction, smoothing = case
    fn = lambda a, b: F.cross_entropy(a, b, label_smoothing=smoothing, reduction=reduction)  # noqa: E731

    def reference(a, b):
        smoothed = (1 - smoothing) * b + smoothing / a.shape[-1]
        losses = -(smoothed * _np_log_softmax(a)).sum(-1)
        return _reduce(losses, reduction, losses.size)

    check_forward(fn, reference, x, q, rtol=1e-12, atol=1e-14)
    assert check_gradients(fn, x, q)
    parity(fn, lambda a, b: _tf().cross_entropy(_class_second(a), _class_second(b), label_smoothing=smoothing,
                                                reduction=reduction), leaf(x.numpy()), leaf(q.numpy()))


def test_probability_targets_are_routed_and_agree_with_class_targets():
    """One-hot probability targets give the class-target loss and gradient (ops.SoftCrossEntropy
    vs ops.CrossEntropy), smoothing included."""
    x = leaf(np.random.default_rng(0).standard_normal((3, 4)))
    t = [2, 0, 3]
    for smoothing in (0.0, 0.2):
        soft = F.cross_entropy(x, leaf(np.eye(4)[t], requires_grad=False), label_smoothing=smoothing)
        assert soft._ctx.name == "soft_cross_entropy"
        soft.backward()
        soft_grad, x.grad = x.grad.numpy(), None
        hard = F.cross_entropy(x, t, label_smoothing=smoothing)
        hard.backward()
        np.testing.assert_allclose(soft.item(), hard.item(), rtol=1e-12)
        np.testing.assert_allclose(soft_grad, x.grad.numpy(), rtol=1e-12, atol=1e-15)
        x.grad = None


def test_probability_targets_with_a_nan_logit_give_nan_as_in_pytorch():
    x, q = leaf([[0.0, np.nan, 1.0], [0.5, 0.0, 1.0]]), leaf([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    out = parity(lambda a, b: F.cross_entropy(a, b, reduction="none"),
                 lambda a, b: _tf().cross_entropy(a, b, reduction="none"), x, q)
    assert np.isnan(out.numpy()[0]) and np.isfinite(out.numpy()[1])


def test_probability_targets_with_minus_infinity_logits():
    """A class with logit -inf and probability 0 adds nothing (not 0 * -inf = NaN)."""
    x = leaf([[0.0, -np.inf, 1.0]])
    q = leaf([[0.5, 0.0, 0.5]], requires_grad=False)
    loss = F.cross_entropy(x, q)
    expected = -(0.5 * (0 - np.logaddexp(0, 1)) + 0.5 * (1 - np.logaddexp(0, 1)))
    np.testing.assert_allclose(loss.item(), expected, rtol=1e-14)
    loss.backward()
    assert np.isfinite(x.grad.numpy()).all() and x.grad.numpy()[0, 1] == 0.0
    with pytest.raises(ValueError, match=r"cross_entropy: float targets of shape \(1, 2\) are class probabilities"):
        F.cross_entropy(x, leaf([[0.5, 0.5]]))


def test_nll_loss_ignores_an_ignored_row_even_at_minus_inf():
    """-inf * 0 would be NaN: an ignored row contributes nothing, whatever it holds."""
    x = leaf(np.array([[-np.inf, 0.0], [0.0, -1.0]]))
    loss = F.nll_loss(x, minitx.tensor([-100, 0]))
    assert loss.item() == 0.0
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 0.0], [-1.0, 0.0]])


# ---------------------------------------------------------------- regression losses, KL divergence
def _np_smooth_l1(d, beta):
    return np.abs(d) if beta == 0 else np.where(np.abs(d) < beta, 0.5 * d * d / beta, np.abs(d) - 0.5 * beta)


def _np_reduce(loss, reduction):
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


REGRESSION = {  # name -> (minitx, PyTorch, NumPy of d = x - y), each with its option drawn
    "mse_loss": (lambda x, y, r, k: F.mse_loss(x, y, r), lambda x, y, r, k: _tf().mse_loss(x, y, reduction=r),
                 lambda d, k: d * d),
    "l1_loss": (lambda x, y, r, k: F.l1_loss(x, y, r), lambda x, y, r, k: _tf().l1_loss(x, y, reduction=r),
                lambda d, k: np.abs(d)),
    "smooth_l1_loss": (lambda x, y, r, k: F.smooth_l1_loss(x, y, r, beta=k),
                       lambda x, y, r, k: _tf().smooth_l1_loss(x, y, reduction=r, beta=k), _np_smooth_l1),
    "huber_loss": (lambda x, y, r, k: F.huber_loss(x, y, r, delta=k),
                   lambda x, y, r, k: _tf().huber_loss(x, y, reduction=r, delta=k),
                   lambda d, k: k * _np_smooth_l1(d, k)),
}


@pytest.mark.parametrize("name", REGRESSION)
@given(shape=mst.shapes(max_dims=3, max_side=4), data=st.data())
def test_regression_losses(name, shape, data):
    """Drawn away from d = 0 and from |d| = beta, the kinks where a finite difference straddles two pieces."""
    ours, theirs, reference = REGRESSION[name]
    reduction = data.draw(st.sampled_from(REDUCTIONS), label="reduction")
    k = data.draw(st.sampled_from([0.0, 0.5, 2.0] if name == "smooth_l1_loss" else [0.5, 2.0]), label="beta")
    y = data.draw(mst.tensors(shape), label="y")
    d = data.draw(mst.float_arrays(shape, away_from=(0.0, k, -k)), label="d")
    x = leaf(y.numpy() + d)
    check_forward(lambda a, b: ours(a, b, reduction, k), lambda a, b: _np_reduce(reference(a - b, k), reduction), x, y,
                  rtol=1e-12, atol=1e-12)
    assert check_gradients(lambda a, b: ours(a, b, reduction, k), x, y)
    parity(lambda a, b: ours(a, b, reduction, k), lambda a, b: theirs(a, b, reduction, k), leaf(x.numpy()),
           leaf(y.numpy()))


@pytest.mark.parametrize("name", REGRESSION)
def test_regression_losses_at_their_kinks_match_pytorch(name):
    """d = 0 (the absolute value's kink: gradient 0) and |d| = beta (where the pieces meet)."""
    ours, theirs, _ = REGRESSION[name]
    x, y = leaf(np.array([0.0, 0.5, -0.5, 1.0])), leaf(np.zeros(4))
    parity(lambda a, b: ours(a, b, "sum", 0.5), lambda a, b: theirs(a, b, "sum", 0.5), x, y)


@given(shape=mst.shapes(min_dims=1, max_dims=3, max_side=4), data=st.data())
def test_kl_div(shape, data):
    reduction = data.draw(st.sampled_from(REDUCTIONS + ["batchmean"]), label="reduction")
    log_target = data.draw(st.booleans(), label="log_target")
    x = data.draw(mst.tensors(shape, max_value=0.0), label="log-probabilities")
    y = data.draw(mst.tensors(shape, min_value=0.05, max_value=1.0), label="targets")
    t = leaf(np.log(y.numpy())) if log_target else y

    def reference(a, b):
        p = np.exp(b) if log_target else b
        loss = p * (np.log(p) - a)
        total = loss.sum()
        return {"none": loss, "sum": total, "mean": total / loss.size, "batchmean": total / a.shape[0]}[reduction]

    fn = lambda a, b: F.kl_div(a, b, reduction, log_target)  # noqa: E731
    check_forward(fn, reference, x, t, rtol=1e-12, atol=1e-12)
    assert check_gradients(fn, x, t)
    parity(fn, lambda a, b: _tf().kl_div(a, b, reduction=reduction, log_target=log_target), leaf(x.numpy()),
           leaf(t.numpy()))


def test_kl_div_of_a_zero_target_and_the_errors():
    """y log y is 0 at y = 0, as PyTorch's; its slope there is the one-sided limit -inf (PyTorch: NaN)."""
    x = leaf(np.array([[-1.0, -2.0, -0.5]]))
    y = leaf(np.array([[0.0, 0.5, 0.5]]))
    loss = F.kl_div(x, y, "sum")
    loss.backward()
    torch = import_torch()
    tx, ty = torch.tensor(x.numpy(), requires_grad=True), torch.tensor(y.numpy(), requires_grad=True)
    theirs = _tf().kl_div(tx, ty, reduction="sum")
    theirs.backward()
    assert loss.item() == pytest.approx(theirs.item(), rel=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-14)
    assert y.grad.numpy()[0, 0] == -np.inf and np.isnan(ty.grad.numpy()[0, 0])
    np.testing.assert_allclose(y.grad.numpy()[0, 1:], ty.grad.numpy()[0, 1:], rtol=1e-14)
    with pytest.raises(ValueError, match="kl_div: every target must be a probability .>= 0.; for log-probabilities"):
        F.kl_div(x, leaf(np.array([[0.5, -0.1, 0.6]])))
    with pytest.raises(ValueError, match=r"kl_div: targets of shape \(3,\) must match the input's shape \(1, 3\)"):
        F.kl_div(x, leaf(np.ones(3)))
    with pytest.raises(ValueError, match="kl_div: reduction must be 'batchmean', 'mean', 'sum' or 'none'"):
        F.kl_div(x, y, "avg")


def test_regression_losses_refuse_what_would_broadcast_silently():
    x = leaf(np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"mse_loss: targets of shape \(3,\) must match the input's shape \(3, 1\)"):
        F.mse_loss(x, leaf(np.ones(3)))
    with pytest.raises(ValueError, match="huber_loss: delta must be a number > 0, got 0"):
        F.huber_loss(x, x, delta=0)
    with pytest.raises(ValueError, match="smooth_l1_loss: beta must be a number >= 0, got -1"):
        F.smooth_l1_loss(x, x, beta=-1)



@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                                  "binary_cross_entropy_with_logits", "kl_div"])
def test_an_integer_target_takes_the_inputs_float_dtype(name):
    """float32 beside int64 is float32, as PyTorch promotes it (the regression losses, where PyTorch
    takes such a target) and as a * b does here; NumPy's promotion computed the loss in float64."""
    x = minitx.tensor(np.array([0.25, 0.75], np.float32), requires_grad=True)
    target = np.array([0, 1])
    loss = getattr(F, name)(x, minitx.tensor(target))
    loss.backward()
    assert loss.dtype == x.grad.dtype == np.float32
    expected = getattr(F, name)(minitx.tensor(np.array([0.25, 0.75])), minitx.tensor(target, dtype="float64"))
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6)
    if name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
        torch = import_torch()
        theirs = getattr(_tf(), name)(torch.tensor([0.25, 0.75]), torch.tensor(target))
        assert theirs.dtype == torch.float32 and theirs.item() == pytest.approx(loss.item(), rel=1e-6)


def test_a_mean_over_no_elements_is_0_for_every_loss_and_loss_module():
    """minitx's rule (docs/ops.md): a mean loss over nothing is 0, where PyTorch's is NaN."""
    from minitx import nn

    empty = leaf(np.zeros((0, 3)))
    for loss in (F.mse_loss(empty, empty), F.l1_loss(empty, empty), F.huber_loss(empty, empty),
                 F.smooth_l1_loss(empty, empty), F.kl_div(empty, empty, "batchmean"), F.kl_div(empty, empty),
                 F.binary_cross_entropy(empty, empty), F.binary_cross_entropy_with_logits(empty, empty),
                 nn.BCELoss(weight=np.ones(3))(empty, empty), nn.BCEWithLogitsLoss(weight=np.ones(3))(empty, empty),
                 nn.MSELoss()(empty, empty)):
        assert loss.item() == 0.0


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_targets_laid_out_as_pytorchs_name_the_permute_to_write(loss):
    """PyTorch's (N, C, H, W) logits with (N, H, W) targets: minitx wants the classes last, and
    says which permutation puts them there; that permutation gives PyTorch's loss."""
    rng = np.random.default_rng(0)
    logits, targets = rng.standard_normal((2, 3, 4, 5)), rng.integers(0, 3, (2, 4, 5))
    with pytest.raises(ValueError, match=r"the classes are the last axis in minitx \(PyTorch: axis 1\): move them "
                                         r"there, x.permute\(0, 2, 3, 1\)$"):
        getattr(F, loss)(minitx.tensor(logits), minitx.tensor(targets))
    torch = torch_in_example()
    ours = getattr(F, loss)(minitx.tensor(logits).permute(0, 2, 3, 1), minitx.tensor(targets))
    theirs = getattr(torch.nn.functional, loss)(torch.tensor(logits), torch.tensor(targets))
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("soft", [False, True])
def test_cross_entropy_takes_class_weights_as_pytorchs(reduction, smoothing, soft):
    """F.cross_entropy(weight=), as torch.nn.functional.cross_entropy's: values and gradients,
    with ignored rows among class ids, or probability targets."""
    torch = torch_in_example()
    rng = np.random.default_rng(3)
    logits, weight = rng.standard_normal((2, 5, 4)), rng.random(4) + 0.2
    if soft:
        targets = rng.dirichlet(np.ones(4), (2, 5))
    else:
        targets = rng.integers(0, 4, (2, 5))
        targets[0, 1] = -100
    torch_targets = torch.tensor(targets)
    x = minitx.tensor(logits, requires_grad=True)
    ours = F.cross_entropy(x, minitx.tensor(targets), label_smoothing=smoothing, reduction=reduction,
                           weight=minitx.tensor(weight))
    tx = torch.tensor(logits, requires_grad=True)
    theirs = torch.nn.functional.cross_entropy(tx.permute(0, 2, 1), torch_targets.permute(0, 2, 1) if soft
                                               else torch_targets, weight=torch.tensor(weight),
                                               label_smoothing=smoothing, reduction=reduction)
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-12)
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_cross_entropy_with_pytorchs_positional_weight_says_to_name_it():
    logits, targets = minitx.tensor(np.zeros((3, 3))), minitx.tensor([0, 1, 2])
    for op in ("cross_entropy", "nll_loss"):  # (3 classes, 3 rows: read as ignore_index, rows would drop silently)
        with pytest.raises(TypeError, match=rf"{op}: ignore_index must be an int, got Tensor; PyTorch's third "
                                            r"argument is the class weights: give them as weight="):
            getattr(F, op)(logits, targets, minitx.tensor([0.0, 1.0, 5.0]))
    with pytest.raises(ValueError, match=r"cross_entropy: weight has shape \(2,\), expected \(3,\)"):
        F.cross_entropy(logits, targets, weight=[1.0, 2.0])


def test_nll_loss_backward_selects_dy_so_an_inf_or_nan_dy_reaches_its_target_alone():
    """dy * one-hot made 0 * inf = NaN in every other class and in ignored rows (PyTorch: 0)."""
    log_p = leaf(np.log(np.full((2, 3), 1 / 3)))
    F.nll_loss(log_p, minitx.tensor([1, -100]), reduction="none").backward(np.array([np.inf, np.nan]))
    np.testing.assert_array_equal(log_p.grad.numpy(), [[0.0, -np.inf, 0.0], [0.0, 0.0, 0.0]])
