"""The CTC loss (CtcLoss in minitx/ops/ctc.py): F.ctc_loss and nn.CTCLoss.

Forward against a brute force written here (every path of classes over the frames, collapsed and
compared with the targets, their probabilities summed), float64 gradients (check_gradients), and
PyTorch parity for every reduction, padded and concatenated targets, infeasible targets, a blank
other than 0 and empty targets. PyTorch's gradient with respect to log_probs adds exp(log_probs)
(what log_softmax's backward cancels), so the gradients are compared through log_softmax, and
minitx's own against PyTorch's less that term.
"""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx import nn
from minitx.testing import check_forward, check_gradients, leaf
from minitx.testing import strategies as mst
from _torch_kit import import_torch, parity, torch_in_example

REDUCTIONS = ["mean", "sum", "none"]


def _collapse(path, blank):
    """A path of classes, one per frame, as the labels it spells: repeats merged, blanks dropped."""
    return tuple(c for c, _ in itertools.groupby(path) if c != blank)


def _brute_force(lp, rows, input_lengths, blank):
    """Each entry's -log of the summed probability of the paths over its frames that spell its row."""
    losses = []
    for n, (row, frames) in enumerate(zip(rows, input_lengths)):
        total = sum(np.exp(sum(lp[t, n, c] for t, c in enumerate(path)))
                    for path in itertools.product(range(lp.shape[2]), repeat=frames)
                    if _collapse(path, blank) == tuple(row))
        losses.append(-np.log(total) if total > 0 else np.inf)
    return np.array(losses)


def _reduce(losses, reduction, target_lengths, zero_infinity):
    if zero_infinity:
        losses = np.where(np.isinf(losses), 0.0, losses)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return (losses / np.maximum(target_lengths, 1)).mean()


@st.composite
def _case(draw, max_frames=5):
    """log_probs [T, N, C] (any values: the brute force does not need them normalised), targets
    padded (pads that are no class, or the blank) or concatenated, lengths, blank and options."""
    frames, batch, classes = draw(st.integers(1, max_frames)), draw(st.integers(1, 3)), draw(st.integers(1, 4))
    blank = draw(st.integers(0, classes - 1))
    labels = [c for c in range(classes) if c != blank]
    input_lengths = [draw(st.integers(0, frames)) for _ in range(batch)]
    rows = [[draw(st.sampled_from(labels)) for _ in range(draw(st.integers(0, 3)))] if labels else []
            for _ in range(batch)]
    target_lengths = [len(row) for row in rows]
    if draw(st.booleans()):
        targets = np.array([c for row in rows for c in row], dtype=np.int64)
    else:
        width = max(target_lengths) + draw(st.integers(0, 1))
        targets = np.full((batch, width), draw(st.sampled_from([-1, blank, 99])), dtype=np.int64)
        for n, row in enumerate(rows):
            targets[n, :len(row)] = row
    as_tensors = draw(st.booleans())
    lengths = [minitx.tensor(v, dtype="int64") if as_tensors else tuple(v) for v in (input_lengths, target_lengths)]
    x = draw(mst.tensors((frames, batch, classes)))
    return (x, minitx.tensor(targets), rows, input_lengths, target_lengths, lengths, blank,
            draw(st.sampled_from(REDUCTIONS)), draw(st.booleans()))


def _torch_ctc(torch, lp, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    return torch.nn.functional.ctc_loss(lp, torch.from_numpy(targets.numpy()), list(input_lengths),
                                        list(target_lengths), blank=blank, reduction=reduction,
                                        zero_infinity=zero_infinity)


@given(case=_case())
def test_ctc_loss_against_brute_force_gradients_and_pytorch(case):
    x, targets, rows, input_lengths, target_lengths, lengths, blank, reduction, zero_infinity = case

    def fn(v):
        return F.ctc_loss(v, targets, *lengths, blank=blank, reduction=reduction, zero_infinity=zero_infinity)

    def reference(v):
        return _reduce(_brute_force(v, rows, input_lengths, blank), reduction, target_lengths, zero_infinity)

    out = check_forward(fn, reference, x, rtol=1e-10, atol=1e-12)
    if zero_infinity or np.isfinite(out.numpy()).all():  # (an infinite loss has no derivative)
        assert check_gradients(fn, x)
    torch = torch_in_example()
    if torch is None:
        return
    # through log_softmax, where PyTorch's gradient is the derivative too
    parity(lambda v: fn(F.log_softmax(v, axis=-1)),
           lambda v: _torch_ctc(torch, v.log_softmax(-1), targets, input_lengths, target_lengths, blank, reduction,
                                zero_infinity), leaf(x.numpy()))
    # on log_probs directly: PyTorch's gradient less exp(log_probs) on each entry's frames, times dloss
    ours, theirs = leaf(x.numpy()), torch.tensor(x.numpy(), requires_grad=True)
    loss = fn(ours)
    dy = np.random.default_rng(0).standard_normal(loss.shape)
    loss.backward(dy)
    torch_loss = _torch_ctc(torch, theirs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)
    np.testing.assert_allclose(loss.numpy(), torch_loss.detach().numpy(), rtol=1e-10, atol=1e-12)
    torch_loss.backward(torch.from_numpy(dy))
    dloss = {"none": dy, "sum": np.full(len(rows), dy),
             "mean": dy / len(rows) / np.maximum(target_lengths, 1)}[reduction]
    frames = np.arange(x.shape[0])[:, None] < np.array(input_lengths)
    infinite = np.isinf(_brute_force(x.numpy(), rows, input_lengths, blank))
    term = np.where((frames & ~(infinite & zero_infinity))[..., None], np.exp(x.numpy()) * dloss[:, None], 0.0)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy() - term, rtol=1e-9, atol=1e-12,
                               equal_nan=True)


def _fixed(blank=0):
    """log_probs [6, 3, 5] from log_softmax; targets for blank 0 (or the same rows moved off ``blank``)."""
    x = np.random.default_rng(3).standard_normal((6, 3, 5))
    rows = [[1, 2, 2], [3, 1], [4, 4, 4, 1]]
    rows = [[c if c != blank else 0 for c in row] for row in rows]
    return x, rows


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
@pytest.mark.parametrize("blank", [0, 2, 4])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_matches_pytorch(reduction, layout, blank, zero_infinity):
    """Entry 2's four labels (three equal: two blanks needed) cannot fit into 5 frames: infinite;
    entry 1 has 0 frames (infinite); a fourth entry has no labels."""
    import_torch()
    x, rows = _fixed(blank)
    x = np.concatenate([x, x[:, :1]], axis=1)
    rows = rows + [[]]
    input_lengths, target_lengths = (6, 0, 5, 4), tuple(len(row) for row in rows)
    if layout == "padded":
        targets = np.full((4, 4), -1, dtype=np.int64)
        for n, row in enumerate(rows):
            targets[n, :len(row)] = row
    else:
        targets = np.array([c for row in rows for c in row], dtype=np.int64)
    targets = minitx.tensor(targets)
    out = parity(lambda v: F.ctc_loss(F.log_softmax(v, axis=-1), targets, input_lengths, target_lengths, blank,
                                      reduction, zero_infinity),
                 lambda v: _torch_ctc(import_torch(), v.log_softmax(-1), targets, input_lengths, target_lengths,
                                      blank, reduction, zero_infinity), leaf(x))
    losses = F.ctc_loss(F.log_softmax(leaf(x), axis=-1), targets, input_lengths, target_lengths, blank, "none",
                        zero_infinity).numpy()
    assert np.isfinite(losses[[0, 3]]).all()
    assert (losses[1:3] == 0).all() if zero_infinity else np.isinf(losses[1:3]).all()
    assert np.isfinite(out.numpy()).all() == zero_infinity


def test_an_infinite_loss_has_a_nan_gradient_on_its_frames_or_none_with_zero_infinity():
    x, rows = _fixed()
    lp = F.log_softmax(leaf(x), axis=-1).detach().requires_grad_(True)
    targets = minitx.tensor([[1, 1, 1], [3, 1, 0], [2, 0, 0]])
    for zero_infinity in (False, True):
        lp.grad = None
        loss = F.ctc_loss(lp, targets, (4, 6, 3), (3, 2, 1), reduction="none", zero_infinity=zero_infinity)
        loss.sum().backward()
        grad = lp.grad.numpy()
        if zero_infinity:  # [1, 1, 1] needs 5 frames; its loss and gradient are 0
            assert loss.numpy()[0] == 0 and not grad[:, 0].any()
        else:
            assert np.isinf(loss.numpy()[0]) and np.isnan(grad[:4, 0]).all() and not grad[4:, 0].any()
        assert np.isfinite(grad[:, 1:]).all() and not grad[3:, 2].any()  # entry 2: 3 frames


def test_a_frame_of_probability_0_gets_the_gradient_0():
    """lp = -inf at a class no alignment can avoid there... is avoided: the derivative of the loss in
    that entry is 0, its limit (PyTorch's exp(res + nll - lp) is NaN there: -inf + inf)."""
    x, _ = _fixed()
    lp = x - np.logaddexp.reduce(x, axis=-1, keepdims=True)
    lp[2, 0, 3] = -np.inf
    v = leaf(lp)
    loss = F.ctc_loss(v, minitx.tensor([[1, 2, 2], [3, 1, 0], [4, 1, 0]]), (6, 6, 6), (3, 2, 2), reduction="sum")
    loss.backward()
    assert np.isfinite(loss.item()) and v.grad.numpy()[2, 0, 3] == 0 and np.isfinite(v.grad.numpy()).all()


def test_unbatched_input_and_lengths_as_numbers():
    torch = import_torch()
    x, rows = _fixed()
    for reduction in REDUCTIONS:
        one = leaf(x[:, 0])
        out = parity(lambda v: F.ctc_loss(F.log_softmax(v, axis=-1), minitx.tensor(rows[0]), minitx.tensor(6),
                                          minitx.tensor(3), reduction=reduction),
                     lambda v: torch.nn.functional.ctc_loss(v.log_softmax(-1), torch.tensor(rows[0]),
                                                            torch.tensor(6), torch.tensor(3), reduction=reduction),
                     one)
        assert out.shape == ()
        again = F.ctc_loss(F.log_softmax(one, axis=-1), rows[0], 6, 3, reduction=reduction)  # lists and ints
        np.testing.assert_allclose(again.numpy(), out.numpy(), rtol=1e-14)


def test_zero_length_targets_and_no_frames():
    """No labels: the one alignment is all blanks, loss = -sum_t lp[t, n, blank]. No frames and no
    labels: the empty alignment, loss 0 (PyTorch refuses an empty log_probs: T = 0 or N = 0)."""
    x, _ = _fixed()
    lp = leaf(x)
    loss = F.ctc_loss(lp, minitx.tensor(np.zeros((3, 0), dtype=np.int64)), (6, 2, 0), (0, 0, 0), blank=1,
                      reduction="none")
    np.testing.assert_allclose(loss.numpy(), [-x[:6, 0, 1].sum(), -x[:2, 1, 1].sum(), 0.0], rtol=1e-13)
    empty = F.ctc_loss(leaf(np.zeros((0, 2, 3))), [], (0, 0), (0, 0), reduction="none")
    np.testing.assert_array_equal(empty.numpy(), [0.0, 0.0])
    assert F.ctc_loss(leaf(np.zeros((0, 2, 3))), [1, 2], (0, 0), (1, 1), reduction="none").numpy().tolist() == \
        [np.inf, np.inf]
    no_batch = leaf(np.zeros((4, 0, 3)))
    mean = F.ctc_loss(no_batch, np.zeros((0, 2), dtype=np.int64), (), ())
    assert mean.item() == 0.0  # the mean over no entry, as minitx's other losses
    mean.backward()
    assert no_batch.grad.shape == (4, 0, 3)


def test_float32_stays_float32_and_bfloat16_is_computed_in_float32():
    x, rows = _fixed()
    targets = minitx.tensor([[1, 2, 2], [3, 1, 0], [4, 1, 0]])
    lengths = ((6, 6, 5), (3, 2, 2))
    exact = F.ctc_loss(minitx.tensor(x), targets, *lengths).item()
    for dtype, rtol in (("float32", 1e-5), ("bfloat16", 2e-2)):
        v = minitx.tensor(x, dtype=dtype, requires_grad=True)
        loss = F.ctc_loss(v, targets, *lengths)
        loss.backward()
        assert loss.dtype == v.grad.dtype == v.dtype
        np.testing.assert_allclose(float(loss.item()), exact, rtol=rtol)


def test_nn_ctc_loss_matches_pytorch():
    torch = import_torch()
    x, rows = _fixed()
    targets = np.array([[1, 3, 3], [3, 1, 0], [4, 1, 0]])  # (no 2: the blank)
    for reduction in REDUCTIONS:
        module = nn.CTCLoss(2, reduction, zero_infinity=True)
        theirs = torch.nn.CTCLoss(2, reduction, zero_infinity=True)
        assert repr(module) == f"CTCLoss(blank=2, reduction={reduction!r}, zero_infinity=True)"
        parity(lambda v: module(F.log_softmax(v, axis=-1), minitx.tensor(targets),
                                minitx.tensor([6, 4, 2]), minitx.tensor([3, 2, 2])),
               lambda v: theirs(v.log_softmax(-1), torch.tensor(targets), torch.tensor([6, 4, 2]),
                                torch.tensor([3, 2, 2])), leaf(x))
    with pytest.raises(ValueError, match="CTCLoss: reduction must be 'mean', 'sum' or 'none', got 'avg'"):
        nn.CTCLoss(reduction="avg")


def test_ctc_loss_errors_name_the_op():
    lp = leaf(np.zeros((5, 2, 4)))
    t = minitx.tensor([[1, 2], [3, 0]])
    ok = ((5, 4), (2, 1))
    cases = [
        (ValueError, r"ctc_loss: log_probs must be \[T, N, C\] or unbatched \[T, C\], got shape \(5,\)",
         lambda: F.ctc_loss(leaf(np.zeros(5)), t, *ok)),
        (ValueError, r"ctc_loss: blank 4 is out of range for 4 classes", lambda: F.ctc_loss(lp, t, *ok, blank=4)),
        (ValueError, r"ctc_loss: blank -1 is out of range", lambda: F.ctc_loss(lp, t, *ok, blank=-1)),
        (ValueError, r"ctc_loss: blank True is out of range", lambda: F.ctc_loss(lp, t, *ok, blank=True)),
        (ValueError, r"ctc_loss: reduction must be 'mean', 'sum' or 'none', got 'avg'",
         lambda: F.ctc_loss(lp, t, *ok, reduction="avg")),
        (TypeError, r"ctc_loss: targets must be an integer tensor, got dtype float64",
         lambda: F.ctc_loss(lp, leaf(np.ones((2, 2))), *ok)),
        (TypeError, r"ctc_loss: input_lengths must be integers \(a tensor or a tuple of ints\), got dtype float32",
         lambda: F.ctc_loss(lp, t, minitx.tensor([5.0, 4.0]), (2, 1))),
        (ValueError, r"ctc_loss: target_lengths must hold one length per batch entry \(2\), got shape \(3,\)",
         lambda: F.ctc_loss(lp, t, (5, 4), (2, 1, 1))),
        (ValueError, r"ctc_loss: input_lengths must hold one length per batch entry \(2\), got shape \(1, 2\)",
         lambda: F.ctc_loss(lp, t, minitx.tensor([[5, 4]]), (2, 1))),
        (ValueError, r"ctc_loss: input_lengths must be >= 0, got -1", lambda: F.ctc_loss(lp, t, (5, -1), (2, 1))),
        (ValueError, r"ctc_loss: target_lengths must be >= 0, got -2", lambda: F.ctc_loss(lp, t, (5, 4), (-2, 1))),
        (ValueError, r"ctc_loss: input_lengths must be at most the 5 frames of log_probs, got 6",
         lambda: F.ctc_loss(lp, t, (6, 4), (2, 1))),
        (ValueError, r"ctc_loss: target_lengths must be at most the padded targets' length 2, got 3",
         lambda: F.ctc_loss(lp, t, (5, 4), (3, 1))),
        (ValueError, r"ctc_loss: padded targets \(1, 2\) must have one row per batch entry \(2\)",
         lambda: F.ctc_loss(lp, t[:1], *ok)),
        (ValueError, r"ctc_loss: concatenated targets must hold sum\(target_lengths\) = 3 labels, got 4",
         lambda: F.ctc_loss(lp, [1, 2, 3, 1], *ok)),
        (ValueError, r"ctc_loss: targets must be padded \[N, S\] or concatenated \[sum of target_lengths\], "
                     r"got shape \(1, 2, 2\)", lambda: F.ctc_loss(lp, t.reshape(1, 2, 2), *ok)),
        (IndexError, r"ctc_loss: target 4 is out of range for 4 classes",
         lambda: F.ctc_loss(lp, minitx.tensor([[1, 4], [3, 0]]), *ok)),
        (IndexError, r"ctc_loss: target -3 is out of range for 4 classes",
         lambda: F.ctc_loss(lp, [1, -3, 3], *ok)),
        (ValueError, r"ctc_loss: the targets hold the blank \(0\) within their lengths; a label cannot be the blank",
         lambda: F.ctc_loss(lp, minitx.tensor([[1, 0], [3, 0]]), *ok)),
    ]
    for error, message, call in cases:
        with pytest.raises(error, match=message):
            call()
    # pads past each length are never read: the blank, -1 or 99 there is fine
    for pad in (0, -1, 99):
        F.ctc_loss(lp, minitx.tensor([[1, 2], [3, pad]]), *ok)
