"""A recorded ``x[index] = v`` into x's own array (minitx.autograd.writes.in_place): where nothing
that may read the written region's old values is left, the write goes into x's array, not into a
copy, so a loop writing the rows of a buffer keeps one array, not one per row; where something
is left (an op that saved the region, a view of it, a raw array), it copies as before. Either
way the values and gradients are the same, bit for bit.
"""
import tracemalloc

import numpy as np
import pytest

import minitx
import minitx.functional as F
from minitx.autograd import writes
from minitx.ops import indexing


def _float64(values, **kwargs):
    return minitx.tensor(values, dtype="float64", **kwargs)


def _writes(t):
    """in_place of each SetItem on t's chain of writes, the last write first."""
    found, node = [], t
    while node.grad_fn is not None and type(node.grad_fn) is indexing.SetItem:
        found.append(node.grad_fn.in_place)
        node = node.grad_fn.inputs[0]
    return found


@pytest.fixture
def copying(monkeypatch):
    """Every recorded write into a copy, as before in_place: the reference."""
    monkeypatch.setattr(indexing, "in_place", lambda x, index: False)


def _rnn(T, B=3, H=4, D=2, seed=0, batch_first=False):
    rng = np.random.default_rng(seed)
    W = _float64(rng.standard_normal((H, H)) / 2, requires_grad=True)
    U = _float64(rng.standard_normal((D, H)), requires_grad=True)
    x = _float64(rng.standard_normal((T, B, D)), requires_grad=True)
    c = rng.standard_normal((T, B, H))
    return W, U, x, c


def _buffer_loop(W, U, x, T, batch_first=False):
    """The states h[t] (T, B, H), and the buffer written (the same, or (B, T, H) batch first)."""
    B, H = x.shape[1], W.shape[0]
    if batch_first:
        h = minitx.zeros(B, T, H, dtype="float64")
        for t in range(1, T):
            h[:, t] = F.tanh(h[:, t - 1] @ W + x[t] @ U)
        return h.swapaxes(0, 1), h
    h = minitx.zeros(T, B, H, dtype="float64")
    for t in range(1, T):
        h[t] = F.tanh(h[t - 1] @ W + x[t] @ U)
    return h, h


@pytest.mark.parametrize("T", [2, 3, 5, 17])
@pytest.mark.parametrize("batch_first", [False, True], ids=["h[t]", "h[:, t]"])
def test_an_rnn_writing_rows_of_a_buffer_writes_in_place_with_the_gradients_of_a_stack(T, batch_first):
    W, U, x, c = _rnn(T)
    h, buffer = _buffer_loop(W, U, x, T, batch_first)
    assert _writes(buffer) == [True] * (T - 1)
    (h * _float64(c)).sum().backward()
    got = [t.grad.numpy() for t in (W, U, x)]

    W2, U2, x2, _ = _rnn(T)
    rows = [minitx.zeros(x.shape[1], W.shape[0], dtype="float64")]
    for t in range(1, T):
        rows.append(F.tanh(rows[-1] @ W2 + x2[t] @ U2))
    reference = F.stack(rows)
    (reference * _float64(c)).sum().backward()
    np.testing.assert_allclose(h.numpy(), reference.numpy(), rtol=1e-13, atol=1e-15)
    for ours, theirs in zip(got, (W2.grad.numpy(), U2.grad.numpy(), x2.grad.numpy())):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("batch_first", [False, True], ids=["h[t]", "h[:, t]"])
def test_in_place_gives_the_bits_of_the_copies(batch_first, monkeypatch):
    T = 9
    results = []
    for copy in (False, True):
        if copy:
            monkeypatch.setattr(indexing, "in_place", lambda x, index: False)
        W, U, x, c = _rnn(T, seed=3)
        h, _ = _buffer_loop(W, U, x, T, batch_first)
        early = h[2] * 1.0  # a view read after the writes: made again from the buffer
        (h * _float64(c)).sum().backward()
        results.append([h.numpy().copy(), early.numpy()] + [t.grad.numpy() for t in (W, U, x)])
    for ours, copies in zip(*results):
        np.testing.assert_array_equal(ours, copies)


def _loop_peak(T, B=8, H=32):
    rng = np.random.default_rng(0)
    W = _float64(rng.standard_normal((H, H)) / 8, requires_grad=True)
    tracemalloc.start()
    try:
        h = minitx.zeros(T, B, H, dtype="float64")
        h[0] = _float64(rng.standard_normal((B, H)))
        for t in range(1, T):
            h[t] = F.tanh(h[t - 1] @ W)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return h, peak, T * B * H * 8


def test_the_rnn_loop_holds_memory_linear_in_its_length():
    """With a copy per row the loop held T copies of the buffer (T = 120: 60 times its size on
    average); in place, the buffer once and each step's own arrays (a row or two each)."""
    short, short_peak, short_size = _loop_peak(30)
    long, long_peak, long_size = _loop_peak(120)
    assert _writes(long) == [True] * 119
    assert long_peak < 10 * long_size
    assert long_peak < 6 * short_peak  # 4 times the rows: linear, not 16 times


def test_the_rnn_loop_copies_per_row_without_in_place(copying):
    """The check above has teeth: the copies' loop holds a copy per row."""
    h, peak, size = _loop_peak(120)
    assert _writes(h) == [False] * 119
    assert peak > 30 * size


def test_a_row_an_op_saved_is_copied_not_overwritten():
    """mul saved h[1] (its view) for w's gradient: writing h[1] next goes into a copy, or mul
    would read the new values: d/dw (3w * w) = 6w, not 2w + 3w."""
    w = _float64([1.0, 2.0], requires_grad=True)
    h = minitx.zeros(3, 2, dtype="float64")
    h[1] = w * 3
    y = h[1] * w
    h[2] = w * 5  # another row: in place
    h[1] = w * 2  # the row mul saved: a copy
    assert _writes(h) == [False, True, True]
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [6.0, 12.0])


def test_a_write_beside_the_saved_row_goes_in_place_and_keeps_its_gradient(monkeypatch):
    w = _float64([1.0, 2.0], requires_grad=True)
    h = minitx.zeros(3, 2, dtype="float64")
    h[1] = w * 3
    y = h[1] * w
    h[0] = w * 7
    h[2] = w * 5
    assert _writes(h) == [True, True, True]
    (y.sum() + h.sum()).backward()
    np.testing.assert_array_equal(w.grad.numpy(), [6.0 + 15.0, 12.0 + 15.0])


@pytest.mark.parametrize("view", [lambda h: h[1], lambda h: h[:, 0], lambda h: h.T, lambda h: h.reshape(6)[2:4]],
                         ids=["the row", "a column through it", "transpose", "reshape then slice"])
def test_a_view_of_the_written_region_makes_the_write_copy(view):
    """A view's array may be in a caller's hands (v.data): the write does not reach it."""
    w = _float64([1.0, 2.0], requires_grad=True)
    h = minitx.zeros(3, 2, dtype="float64")
    h[1] = w * 1
    v = view(h)
    raw = v.data
    before = raw.copy()
    h[1] = w * 4
    assert _writes(h)[0] is False
    np.testing.assert_array_equal(raw, before)
    np.testing.assert_array_equal(view(minitx.tensor(h.numpy())).numpy(), v.numpy())  # v made again: the new values


def test_a_view_beside_the_written_region_sees_the_write_made_again():
    w = _float64([1.0, 2.0], requires_grad=True)
    h = minitx.zeros(3, 2, dtype="float64")
    v = h[0]
    h[1] = w * 4
    assert _writes(h) == [True]
    np.testing.assert_array_equal(v.numpy(), [0.0, 0.0])  # read: made again from h after the write
    assert v.grad_fn.name == "get_item" and v.grad_fn.inputs[0] is h
    (v.sum() * 2 + h.sum()).backward()
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, 4.0])


@pytest.mark.parametrize("keep", [lambda h, t: h[t], lambda h, t: h[t][:, 1:], lambda h, t: h[t].T],
                         ids=["the row", "a view of the row", "its transpose"])
def test_a_loop_keeping_each_rows_view_writes_in_place_with_the_bits_of_the_copies(keep, monkeypatch):
    """outs.append(h[t]) at each step: each view goes stale at the next write, still showing h's
    array. Unlisted, it made the next write copy (every other step); listed and held by nothing
    else, it reads nothing (made again when read), so every write goes in place."""
    T = 7
    results = []
    for copy in (False, True):
        if copy:
            monkeypatch.setattr(indexing, "in_place", lambda x, index: False)
        W, U, x, _ = _rnn(T, seed=5)
        h = minitx.zeros(T, 3, 4, dtype="float64")
        outs = []
        for t in range(1, T):
            h[t] = F.tanh(h[t - 1] @ W + x[t] @ U)
            outs.append(keep(h, t))
        assert _writes(h) == [not copy] * (T - 1)
        stacked = F.stack(outs)
        (stacked * _float64(np.random.default_rng(1).standard_normal(stacked.shape))).sum().backward()
        results.append([h.numpy().copy(), stacked.numpy()] + [t.grad.numpy() for t in (W, U, x)])
    for ours, copies in zip(*results):
        np.testing.assert_array_equal(ours, copies)


def test_a_stale_view_nothing_else_holds_lets_a_write_over_its_region_go_in_place():
    """v went stale at the write into h[2]; h[1] written next goes into h's array, v's region too:
    v is made again when read, with the values a copy gives it."""
    w = _float64([1.0, 2.0], requires_grad=True)
    h = minitx.zeros(3, 2, dtype="float64")
    v = h[1]
    h[2] = w * 5
    h[1] = w * 4
    assert _writes(h) == [True, True]
    np.testing.assert_array_equal(v.numpy(), [4.0, 8.0])
    (v * _float64([1.0, 10.0])).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, 40.0])


@pytest.mark.parametrize("hold", [lambda v: v.data, lambda v: np.asarray(v), lambda v: v.detach()],
                         ids=["v.data", "np.asarray", "v.detach()"])
def test_a_stale_view_whose_array_another_holds_makes_the_write_copy(hold):
    """Taken before v went stale, the raw array is v's own array object: it keeps its values,
    whichever row is written next (a copy, as before; it shares no memory with h after)."""
    w = _float64([1.0, 2.0], requires_grad=True)
    h = minitx.zeros(4, 2, dtype="float64")
    v = h[1]
    held = hold(v)
    h[2] = w * 5  # beside v: in place, v stale
    h[1] = w * 4  # v's region: a copy
    assert _writes(h) == [False, True]
    h[3] = w * 3  # the copy's views are made stale, not v's old array
    with minitx.no_grad():
        h[0] = 9.0
        h[1] = 9.0
    np.testing.assert_array_equal(np.asarray(held), [0.0, 0.0])
    np.testing.assert_array_equal(v.numpy(), [9.0, 9.0])
    h2 = minitx.zeros(4, 2, dtype="float64")
    v2 = h2[1]
    held2 = hold(v2)
    h2[2] = w * 5
    h2[3] = w * 3  # beside v2's region, but its array is held: a copy, as before
    assert _writes(h2) == [False, True]
    with minitx.no_grad():
        h2[1] = 9.0
    np.testing.assert_array_equal(np.asarray(held2), [0.0, 0.0])


def test_a_view_of_a_view_made_again_before_its_base_stays_made_again():
    """A write in place leaves c, stale, listed on v, stale too. Reading c made it again, then v
    (c's base): v's old array and c's new one show h's same memory, so v made c stale again, and
    the hook registered on c in between went with c's old node, never to fire. v is made again
    first."""
    w = _float64([1.0, 2.0], requires_grad=True)
    h = minitx.zeros(3, 2, dtype="float64")
    h[0] = w * 3
    v = h[0:2]
    c = v.T
    h[2] = w * 5
    assert _writes(h) == [True, True]
    seen = []
    c.register_hook(lambda g: seen.append(np.array(g.data if isinstance(g, minitx.Tensor) else g)))
    weights = _float64([[1.0, 10.0], [100.0, 1000.0]])
    (c * weights).sum().backward()
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], weights.numpy())
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 300.0])


def test_a_write_over_what_an_op_saved_whole_copies():
    """y = x * w saved x's array whole for w's gradient: a write into any part of x copies, and
    exp_ on the whole of x computes a new array, as before; y's gradient sees x as it was."""
    w = _float64([1.0, 2.0, 3.0], requires_grad=True)
    x = w * 1
    y = x * w
    old = x.data
    x[0] = w[1] * 3
    assert _writes(x) == [False] and x.data is not old
    saved = x.data
    z = x * 2
    x.exp_()
    assert x.data is not saved
    np.testing.assert_array_equal(old, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(saved, [6.0, 2.0, 3.0])
    (y.sum() + z.sum() + x.sum()).backward()
    e = 2 + np.exp([6.0, 2.0, 3.0])  # d/dx of z and exp_'s sums
    expected = 2 * w.numpy() + [0.0, 3 * e[0] + e[1], e[2]]  # y; x[0] = 3 w[1], x[1:] = w[1:]
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-15)


@pytest.mark.parametrize("hold", [lambda h: h.data, lambda h: np.asarray(h), lambda h: minitx.Tensor(h.data),
                                  lambda h: h.data[0], lambda h: h[0].detach()],
                         ids=["x.data", "np.asarray", "Tensor(x.data)", "a raw view of another row", "detached view"])
def test_an_array_minitx_does_not_see_keeps_its_values(hold):
    """Raw arrays and tensors wrapping the array keep the old values, as before: the write copies."""
    w = _float64([1.0, 2.0], requires_grad=True)
    h = minitx.zeros(3, 2, dtype="float64")
    h[1] = w * 1
    held = hold(h)
    before = np.array(held, copy=True)
    h[2] = w * 4
    assert _writes(h) == [False, True]
    np.testing.assert_array_equal(np.asarray(held), before)
    h[0] = w * 5  # into the copy, which nothing else holds
    assert _writes(h) == [True, False, True]


def test_a_detached_tensor_takes_the_write_as_it_takes_a_new_array():
    w = _float64([1.0, 2.0], requires_grad=True)
    h = minitx.zeros(3, 2, dtype="float64")
    d = h.detach()
    h[1] = w * 4
    assert _writes(h) == [True]
    np.testing.assert_array_equal(d.numpy(), h.numpy())


def test_the_saved_arrays_stay_guarded_and_unchanged_after_writes_in_place():
    """The NumPy lock on the buffer comes back after each write, no version is counted (backward
    runs), and the checksums of the saved rows still match."""
    W, U, x, c = _rnn(6)
    with minitx.autograd.check_saved_arrays():
        h, _ = _buffer_loop(W, U, x, 6)
    assert _writes(h) == [True] * 5
    with pytest.raises(ValueError, match="read-only"):
        h.data[0, 0, 0] = 1.0
    (h * _float64(c)).sum().backward()
    assert np.isfinite(W.grad.numpy()).all()


def test_a_write_not_recorded_after_all_puts_the_region_back(monkeypatch):
    w = _float64([1.0, 2.0], requires_grad=True)
    h = minitx.zeros(3, 2, dtype="float64")
    h[1] = w * 3
    before, ctx = h.numpy().copy(), h.grad_fn

    def fails(x, old):
        raise KeyboardInterrupt

    monkeypatch.setattr(writes, "_leave_old_node", fails)
    with pytest.raises(KeyboardInterrupt):
        h[2] = w * 5
    np.testing.assert_array_equal(h.numpy(), before)
    assert h.grad_fn is ctx


def test_a_debugging_tool_watching_the_forward_sees_copies():
    """detect_anomaly reads an op's inputs after its forward: x's old values must be there."""
    w = _float64([1.0, 2.0], requires_grad=True)
    h = minitx.zeros(3, 2, dtype="float64")
    with minitx.autograd.detect_anomaly():
        h[1] = w * 3
    assert _writes(h) == [False]


def test_an_empty_region_copies_so_a_raw_holder_and_an_op_saving_x_whole_keep_their_array():
    """x[0:0] = ... writes nothing, so in place gains nothing; taken in place it skipped the holder
    checks, and x kept the array a raw holder (or an op that saved x whole) shares: a later write
    not recorded reached them, where after a copy it does not."""
    w = _float64([1.0, 2.0], requires_grad=True)
    x = w * 1
    raw = x.data
    x[0:0] = w[:0]
    assert _writes(x) == [False]
    with minitx.no_grad():
        x[1] = 7.0
    assert raw.tolist() == [1.0, 2.0]
    w = _float64([1.0, 2.0], requires_grad=True)
    x = w * 1
    y = (x * w).sum()  # mul saved x's array whole
    x[1:1] = w[:0]
    with minitx.no_grad():
        x[0] = 5.0  # into x's new array, not the one mul saved
    y.backward()
    assert w.grad.tolist() == [2.0, 4.0]


def test_a_buffer_the_user_made_read_only_is_written_through_a_copy():
    """Read-only before any op saved a part of it, the array is not the guard's to unlock: the
    write copies (in place it raised 'assignment destination is read-only')."""
    w = _float64([1.0, 2.0], requires_grad=True)
    x = minitx.zeros(3, 2, dtype="float64")
    x.data.setflags(write=False)
    y = (x[0] * w).sum()
    x[1] = w * 3
    assert _writes(x) == [False]
    y.backward()
    assert x.data[1].tolist() == [3.0, 6.0] and w.grad.tolist() == [0.0, 0.0]


def test_a_collection_during_the_check_does_not_hide_a_raw_holder(monkeypatch):
    """A holder counted as known (here a detached tensor kept only by a garbage cycle) that the
    collector frees before the references are counted left the count one short of the known
    holders, hiding a raw array: the write went in place and the raw array saw it. The check holds
    what it counted until the count."""
    import gc

    counted = writes._holders

    def collecting_first(x):  # a collection here, as any allocation in the check may start one
        gc.collect()
        return counted(x)

    monkeypatch.setattr(writes, "_holders", collecting_first)
    w = _float64([1.0, 2.0], requires_grad=True)
    x = minitx.zeros(3, 2, dtype="float64")
    detached = x.detach()
    cycle = [detached]
    cycle.append(cycle)
    del detached, cycle
    raw = x.data
    x[1] = w * 4
    assert _writes(x) == [False] and raw.tolist() == [[0.0, 0.0]] * 3
