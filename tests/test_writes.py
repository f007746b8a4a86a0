"""Recorded writes and the tensors around them (minitx.autograd.writes): views taken before a
write are made again from the new array, and a write keeps nothing no op will look for.

PyTorch parity for the values and gradients of views around a write is in tests/ops/test_setitem.py;
for each in-place method's gradient, in tests/test_inplace_methods.py.
"""
import gc
import weakref

import numpy as np
import pytest

import minitx
from torch_reference import import_torch


def _float64(values, **kwargs):
    return minitx.tensor(values, dtype="float64", **kwargs)


@pytest.fixture
def without_gc():
    """Collection off: what a test frees must go when its last reference does (no cycle)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("view", [lambda x: x[1:], lambda x: x.T, lambda x: x.reshape(6), lambda x: x[0].unsqueeze(0),
                                  lambda x: x.detach(), lambda x: x.T[1:].swapaxes(0, 1), lambda x: x.expand(4, 2, 3)],
                         ids=["index", "T", "reshape", "view of a view", "detach", "three views deep", "expand"])
@pytest.mark.parametrize("write", ["exp_", "setitem", "+="])
def test_a_view_taken_before_a_recorded_write_shows_the_new_values(view, write):
    w = _float64(np.arange(6.0).reshape(2, 3) / 10, requires_grad=True)
    x = w * 2
    v = view(x)
    if write == "exp_":
        x.exp_()
    elif write == "setitem":
        x[:, 1] = w[:, 0] * 5
    else:
        x += w
    np.testing.assert_array_equal(v.numpy(), view(x).numpy())
    assert v.requires_grad == (write != "detach" and view(x).requires_grad)


def test_a_view_taken_without_a_gradient_follows_a_write_that_brings_one():
    """A buffer that required no grad, and its view, require grad once a value that does is written."""
    w = _float64([1.0, 2.0], requires_grad=True)
    buffer = minitx.zeros(2, 2, dtype="float64")
    with minitx.no_grad():
        column = buffer[:, 0]
    buffer[1] = w * 3
    assert column.tolist() == [0.0, 3.0] and column.requires_grad
    column.sum().backward()
    assert w.grad.tolist() == [3.0, 0.0]


def test_a_view_that_became_a_parameter_shows_the_write_and_stays_a_leaf():
    w = _float64([4.0], requires_grad=True)
    buffer = minitx.zeros(3, dtype="float64")
    p = buffer[1:].requires_grad_()
    buffer[1] = w * 2
    assert p.is_leaf and p.requires_grad and p.grad_fn is None and p.tolist() == [8.0, 0.0]


def test_a_write_into_a_view_by_its_name_goes_into_the_tensor_it_views_as_pytorch():
    """row = x[0]; row += w writes x's row (Python rebinds the name row to the same tensor)."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in (minitx, torch):
        w = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        x = lib.zeros(2, 2, dtype=lib.float64)
        row = x[0]
        row += w
        x.mul_(w)
        (x * x).sum().backward()
        results.append([t.detach().numpy() for t in (row, x, w.grad)])
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)


def test_many_views_of_one_tensor_are_not_all_kept(without_gc):
    table = minitx.zeros(50, 4)
    for _ in range(1000):
        table[:10].sum()
    assert len(table._views) <= 64


def test_a_graph_with_views_is_freed_without_the_garbage_collector(without_gc):
    """A view's note on its base is weak, and holds its op weakly where the op holds the base."""
    w = minitx.randn(4, 3, requires_grad=True)
    x = w * 2
    v = x.T.reshape(12)
    d = x.detach()
    (v.sum() + d.sum()).sum()
    alive = [weakref.ref(t) for t in (x, v, d)]
    del x, v, d
    assert [ref() for ref in alive] == [None, None, None]


def test_a_write_no_op_took_before_keeps_no_old_node(without_gc):
    """x.mul_(w); x.detach_() in a loop: the old nodes, and the arrays their ops saved, go."""
    w = _float64([0.5, 2.0], requires_grad=True)
    x = w * 1
    first = weakref.ref(x.data)  # saved by the first mul_ for w's gradient
    for _ in range(3):
        x.mul_(w)
        x.detach_()
    assert first() is None and x._cell is None


def test_a_state_written_read_and_detached_every_step_keeps_no_step_behind(without_gc):
    """Truncated backpropagation through time with the state written in place: each step's old
    nodes live as long as the ops that took the state, not as long as the state."""
    w = minitx.randn(4, 4, requires_grad=True)
    h, firsts = minitx.zeros(2, 4), []
    for _ in range(4):
        firsts.append(weakref.ref(h.data))
        for _ in range(3):
            h.mul_(0.9)
            h.add_(h @ w)
        (h * h).sum().backward()
        h.detach_()
    assert sum(ref() is not None for ref in firsts) <= 1


def test_an_op_that_took_x_before_a_write_still_reaches_its_old_values():
    w = _float64([0.5, 2.0], requires_grad=True)
    x = w * 1
    y = x * 3
    x.mul_(w)
    x.detach_()
    y.sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


@pytest.mark.gpu
def test_a_view_is_made_again_on_the_gpu():
    w = minitx.tensor([[0.5, 1.0], [2.0, 3.0]], device="cuda", requires_grad=True)
    x = w * 2
    v = x[1]
    x.exp_()
    np.testing.assert_allclose(v.numpy(), np.exp([4.0, 6.0]), rtol=1e-6)
    v.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[0.0, 0.0], 2 * np.exp([4.0, 6.0])], rtol=1e-6)


def test_tensors_with_views_pickle_and_deepcopy_without_their_notes():
    """A viewed tensor, a view and a detached tensor pickle (a dataset sent to loader workers) and
    deep-copy; the copies share no array, so they note no views."""
    import copy
    import pickle

    table = minitx.arange(10.0)
    row, detached = table[2:5], table.detach()
    for t in (table, row, detached):
        for again in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
            np.testing.assert_array_equal(again.numpy(), t.numpy())
            assert again._views is None and again._base is None and not again.requires_grad
    w = minitx.tensor([1.0, 2.0], requires_grad=True)
    assert pickle.loads(pickle.dumps(w)).requires_grad


def test_a_computed_tensor_copies_as_a_leaf_and_refuses_deepcopy_as_pytorch():
    """pickle and copy.copy give a computed tensor's values as a leaf (its graph stays behind;
    requires_grad kept), copy.deepcopy refuses it, as PyTorch's do; nothing warns when the copies
    are collected (the saved-array guards were copied once and released twice)."""
    import copy
    import gc
    import pickle
    import warnings

    torch = import_torch()
    ours, theirs = [], []
    for lib, made in ((minitx, ours), (torch, theirs)):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        for again in (pickle.loads(pickle.dumps(y)), copy.copy(y)):
            made.append((again.numpy().tolist() if lib is minitx else again.detach().numpy().tolist(),
                         again.requires_grad, again.is_leaf, again.grad_fn is None))
        with pytest.raises(RuntimeError, match="deepcopy" if lib is minitx else "graph leaves"):
            copy.deepcopy(y)
    assert ours == theirs
    x = minitx.tensor([1.0, 2.0], requires_grad=True)
    x.grad = minitx.tensor([3.0, 4.0])
    twin = copy.deepcopy(x)
    assert twin.requires_grad and twin.grad.numpy().tolist() == [3.0, 4.0] and twin.data is not x.data
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (an exception in __del__ is reported as an unraisable warning)
        y = (x * x).sum()
        del twin
        copies = [pickle.loads(pickle.dumps(y)), copy.copy(y)]
        del copies, y
        gc.collect()


def test_views_are_made_again_when_read_not_at_every_write():
    """A buffer written row by row from the row before: each row's view, held by the graph, is
    not made again at each later write (the ops recorded grow with the rows, not their square)."""
    from minitx.autograd import function

    counted = []
    w = _float64(np.eye(3) * 0.5, requires_grad=True)
    state = minitx.zeros(41, 3, dtype="float64")
    state[0] = w[0]
    function.forward_hooks.append(lambda fn, inputs, output: counted.append(fn.name))
    try:
        for t in range(1, 41):
            state[t] = (state[t - 1] @ w).tanh()
    finally:
        function.forward_hooks.pop()
    assert len(counted) <= 5 * 40
    state.sum().backward()
    assert w.grad is not None and np.isfinite(w.grad.numpy()).all()


def test_a_detached_tensor_keeps_no_graph_alive(without_gc):
    """h = h.detach() between chunks (truncated backpropagation through time): nothing of the
    chunk before stays."""
    w = minitx.randn(8, 8, requires_grad=True)
    h, alive = minitx.zeros(2, 8), []
    for _ in range(4):
        for _ in range(3):
            h = (h @ w).tanh()
        alive.append(weakref.ref(h))
        h.sum().backward()
        h = h.detach()
    assert not any(ref() is not None for ref in alive)


def test_a_write_into_a_view_makes_no_reference_cycle(without_gc):
    w = _float64([1.0, 2.0, 3.0], requires_grad=True)
    x = w * 2
    v = x[1:]
    v.exp_()
    buffer = minitx.zeros(3, 2, dtype="float64")
    buffer[0] += w[:2]  # Python's buffer[0] = (buffer[0] += w[:2]): the second write is the first's
    alive = [weakref.ref(t) for t in (x, v, buffer)]
    del x, v, buffer
    assert [ref() for ref in alive] == [None, None, None]


@pytest.mark.parametrize("write", [
    lambda x: x.__setitem__(slice(1, None), x[:-1] * 0.5),       # from a view of x taken for the write
    lambda x: x.mul_(x.exp()),                                    # from an op that took x itself
    lambda x: x[0].copy_(x[1:].sum() * x[0]),                     # into a view, from x's other rows
])
def test_a_write_computed_from_the_tensor_itself_makes_no_reference_cycle(without_gc, write):
    """The ops that took x before its write hold it through their cells, which take its old node
    at the write: x's new graph reaches them, not x, and its arrays go with its last reference."""
    w = _float64([1.0, 2.0, 3.0], requires_grad=True)
    x = w * 2
    write(x)
    x.sum().backward()
    x2 = w * 2
    write(x2)
    alive = weakref.ref(x2)
    del x2
    assert alive() is None


def test_the_ops_that_took_a_tensor_before_its_write_hold_its_old_node_not_it(without_gc):
    w = _float64([1.0, 2.0], requires_grad=True)
    x = w * 2
    y = x * 3
    v = x[1:]
    z = v + 1
    x.exp_()
    assert y.grad_fn.inputs[0] is not x and z.grad_fn.inputs[0] is not v
    assert y.grad_fn.inputs[0].grad_fn is x.grad_fn.inputs[0].grad_fn  # both the old node of x: mul's output
    (y.sum() + z.sum() + v.sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), [6.0, 6.0 + 2.0 + 2 * np.exp(4.0)])


def test_a_tensor_written_from_a_view_of_another_gets_an_array_of_its_own():
    """x.copy_(t[1:]) while recording: x takes the values, not t's memory; a later write into t
    leaves x as it was, as PyTorch copies."""
    w = _float64([1.0, 2.0, 3.0], requires_grad=True)
    x = minitx.zeros(2, dtype="float64")
    t = w * 1
    x.copy_(t[1:])
    with minitx.no_grad():
        t[1] = 100.0
    assert x.tolist() == [2.0, 3.0] and not np.shares_memory(x.numpy(), t.numpy())


def test_an_augmented_write_into_a_part_writes_once():
    """x[0] += v is Python's x[0] = (x[0] += v): the += wrote into x through the view x[0], so
    the assignment that follows records nothing more (one write_through_view, no set_item)."""
    from minitx.autograd import function

    w = _float64([1.0, 2.0], requires_grad=True)
    buffer = minitx.zeros(3, 2, dtype="float64")
    ops = []
    function.forward_hooks.append(lambda fn, inputs, output: ops.append(fn.name))
    try:
        buffer[0] += w * 1
    finally:
        function.forward_hooks.pop()
    assert ops.count("write_through_view") == 1 and "set_item" not in ops
    buffer.sum().backward()
    assert w.grad.numpy().tolist() == [1.0, 1.0]


def test_a_view_made_again_after_a_write_of_another_layout_is_a_view_still():
    """x.copy_(u) of a column-major u: x keeps its layout, so its reshape stays a view of it."""
    u = minitx.tensor(np.asfortranarray(np.arange(12.0).reshape(3, 4)), requires_grad=True)
    w = _float64(np.arange(12.0), requires_grad=True)
    x = minitx.zeros(3, 4, dtype="float64")
    flat = x.reshape(12)
    x.copy_(u)
    flat.mul_(w)
    np.testing.assert_array_equal(x.reshape(12).numpy(), np.arange(12.0).reshape(3, 4).ravel() * np.arange(12.0))
    np.testing.assert_array_equal(flat.numpy(), x.reshape(12).numpy())


def test_detaching_a_view_in_place_is_refused_as_pytorch():
    w = _float64([1.0, 2.0, 3.0], requires_grad=True)
    v = (w * 2)[1:]
    with pytest.raises(RuntimeError, match=r"^detach_: this tensor is a view of another tensor .*v = v\.detach\(\)"):
        v.detach_()


def test_a_detached_parameter_is_not_written_while_recording():
    """p.detach() shares p's array; a recorded write would give it an array of its own."""
    p = _float64([1.0, 1.0], requires_grad=True)
    w = _float64([2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^copy_: the tensor shares its array with the tensor it was detached"):
        p.detach().copy_(w * 5)
    assert p.tolist() == [1.0, 1.0]


class Tagged(minitx.Tensor):
    """A subclass with attributes of its own (pickle finds it by its module's name)."""


def test_a_subclass_keeps_its_own_attributes_through_pickle():
    import pickle

    t = Tagged([1.0, 2.0])
    t.tag = "kept"
    assert pickle.loads(pickle.dumps(t)).tag == "kept"


# ---------------------------------------------------------------------- stale views: read when, and how
def _agree(run, rtol=None):
    """run(lib, make) for minitx and PyTorch, in float64: each of the results it returns must be the
    same in both (equal, or within ``rtol``)."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in (minitx, torch):
        def make(values, lib=lib, **kwargs):
            return lib.tensor(values, dtype=lib.float64, **kwargs)
        results.append([np.asarray(r.detach().numpy() if hasattr(r, "detach") else r) for r in run(lib, make)])
    for mine, reference in zip(*results, strict=True):
        if rtol is None:
            np.testing.assert_array_equal(mine, reference)
        else:
            np.testing.assert_allclose(mine, reference, rtol=rtol)


def test_a_hook_that_reads_a_stale_view_during_backward_changes_no_gradient():
    """A view read by a hook during backward is made again: the graph being walked holds its old
    node, so the gradients stay PyTorch's."""
    def run(lib, make):
        w = make([1.0, 2.0, 3.0], requires_grad=True)
        b = w * 1
        v = b[1:]
        u = v * 2
        b[0] = 5.0  # v is stale
        seen = []
        u.register_hook(lambda g: seen.append(float((v * v).sum())))
        (u.sum() + b.sum()).backward()
        return [w.grad, np.array(seen)]

    _agree(run)


def test_another_threads_backward_walk_leaves_this_threads_stale_views_to_be_made_again():
    """While thread A's backward waits in a hook, thread B's stale view is made again when read: it
    requires grad from then, as PyTorch's view of a base written with a gradient does."""
    import threading

    w = _float64([1.0, 2.0], requires_grad=True)
    inside, done = threading.Event(), threading.Event()
    loss = (w * 3).sum()
    loss.register_hook(lambda g: (inside.set(), done.wait(10))[0])
    walker = threading.Thread(target=loss.backward)
    walker.start()
    try:
        assert inside.wait(10)
        x = minitx.zeros(3, dtype="float64")
        v = x[1:]
        x.add_(1.0)
        x[0] = w[0] * 1  # recorded: x takes a new array, v is stale
        assert v.requires_grad and not v.is_leaf
        v.data[0] = 7.0
        assert x.numpy().tolist() == [1.0, 7.0, 1.0]
    finally:
        done.set()
        walker.join()
    assert w.grad.numpy().tolist() == [3.0, 3.0]


def test_a_view_of_a_view_is_made_again_from_the_root_as_pytorch():
    """v = x[1:], vv = v[1:], then a write into x: vv is made again from x, not through v, so a
    hook registered on v after the write neither sees nor scales vv's gradient."""
    def run(lib, make):
        w = make([1.0, 1.0, 1.0, 1.0], requires_grad=True)
        x = w * 1.0
        v = x[1:]
        vv = v[1:]
        x.mul_(2.0)
        if lib is not minitx:
            v.grad_fn  # (PyTorch 2.13 crashes registering a hook on a view whose grad_fn is still to be made)
        calls = []
        v.register_hook(lambda g: calls.append(1) or g * 3)
        loss = (vv * 10).sum()
        (gv,) = lib.autograd.grad(loss, [v], retain_graph=True, allow_unused=True)
        loss.backward()
        return [gv is None, w.grad, len(calls)]

    _agree(run)


def test_a_stale_view_is_made_again_before_deepcopy_refuses_it_as_pytorch():
    """A stale view's grad_fn is the op that made it until it is read; deepcopy reads it first."""
    import copy

    w = _float64([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = minitx.zeros(2, 4, dtype="float64")
    v = b[0]
    b[1] = w * 2
    with pytest.raises(RuntimeError, match="^deepcopy: the tensor was computed by the recorded op"):
        copy.deepcopy(v)


def test_a_stale_view_requires_grad_once_its_base_does_and_records_its_writes():
    def run(lib, make):
        w = make([1.0, 2.0], requires_grad=True)
        b = lib.zeros(3, dtype=lib.float64)
        v = b[1:]
        b[1:] = w * 1
        flags = [v.requires_grad, v.is_leaf]
        v.exp_()
        b.sum().backward()
        return [np.array(flags), b, w.grad]

    _agree(run, rtol=1e-15)


def test_a_hook_registered_on_a_stale_view_fires():
    seen = []
    w = _float64([1.0, 2.0, 3.0], requires_grad=True)
    b = w * 1
    v = b[1:]
    b.mul_(2)
    v.register_hook(lambda g: seen.append(g.tolist()))
    (v * 3).sum().backward()
    assert seen == [[3.0, 3.0]] and w.grad.tolist() == [0.0, 6.0, 6.0]


def test_a_view_taken_without_a_graph_keeps_no_graph_alive(without_gc):
    w = minitx.randn(4, 4, requires_grad=True)
    logged, alive = [], []
    for _ in range(3):
        h = (w * 2).tanh()
        alive.append(weakref.ref(h))
        with minitx.no_grad():
            logged.append(h[0])
        h.sum().backward()
        del h
    assert not any(ref() is not None for ref in alive)
    assert all(row.shape == (4,) for row in logged)


def test_an_error_while_a_view_is_made_again_leaves_it_stale():
    from minitx.autograd.debug import detect_anomaly

    w = _float64([1.0, 2.0, 3.0], requires_grad=True)
    b = w * 1
    v = b[1:]
    b[2] = float("nan")
    with detect_anomaly(), pytest.raises(FloatingPointError):
        v * 1
    assert np.isnan(v.numpy()[1]) and v.numpy()[0] == 2.0


def test_a_reshape_view_stays_a_view_over_writes_before_it_is_read():
    def run(lib, make):
        x = make([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        b = x.T * 1  # column-major
        r = b.T.reshape(6)
        b[0, 0] = 10.0
        b[1, 2] = 20.0
        r * 1
        b[0, 1] = 30.0
        return [r]

    _agree(run)


def test_an_array_given_to_a_stale_view_is_kept():
    w = _float64([1.0, 2.0, 3.0], requires_grad=True)
    b = w * 1
    v = b[1:]
    b.mul_(2)
    v.data = np.array([7.0, 8.0])
    assert v.tolist() == [7.0, 8.0]


def test_an_index_of_true_is_not_the_index_1():
    """x[True] = x[1] writes x[1] everywhere (NumPy's True: a new axis over all of x), unlike x[1] = x[1]."""
    x = minitx.tensor([[1.0, 2.0], [3.0, 4.0]])
    x[True] = x[1]
    assert x.tolist() == [[3.0, 4.0], [3.0, 4.0]]


def test_the_graph_drawn_from_a_result_is_the_one_recorded_before_a_write():
    from minitx.autograd import graph

    w = _float64([1.0, 2.0, 3.0], requires_grad=True)
    b = w * 1
    u = b[1:] * 2
    b[0] = 5.0
    assert "set_item" not in graph.to_tree(u.sum())


def test_a_tensor_written_twice_from_its_own_rows_is_written_again_as_pytorch():
    """x[0] = x[1] leaves x's old node in the view x[1]'s graph: x is not a view for that."""
    def run(lib, make):
        w = make([[-1.0, 2.0], [3.0, -4.0], [5.0, 6.0]], requires_grad=True)
        x = w * 1.0
        x[0] = x[1]
        x[2] = 5.0
        lib.nn.functional.relu_(x) if lib is not minitx else minitx.functional.relu_(x)
        y = w * 1.0
        y += y.detach()
        y.relu_()
        (x * x).sum().backward()
        return [x, y, w.grad]

    _agree(run)


def test_a_view_of_a_temporary_buffer_is_written_as_pytorch():
    """minitx.zeros(12).reshape(3, 4): the view alone holds the buffer, which a write reaches."""
    def run(lib, make):
        w = make([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        x = lib.zeros(12, dtype=lib.float64).reshape(3, 4)
        x[0] = w * 2
        (x * x).sum().backward()
        return [x, w.grad]

    _agree(run)


def test_a_view_taken_before_its_base_became_a_parameter_is_not_written_while_recording():
    b = minitx.zeros(2, 2, dtype="float64")
    v = b[0]
    b.requires_grad_(True)
    w = _float64([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="setitem: the tensor is a view of a leaf that requires grad"):
        v[...] = w * 2
    assert b.is_leaf and b.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_requires_grad_on_a_stale_view_keeps_the_graph_it_has_now():
    def run(lib, make):
        w = make([1.0, 2.0], requires_grad=True)
        b = lib.zeros(2, 2, dtype=lib.float64)
        v = b[0]
        b[0] = w * 2
        v.requires_grad_(True)
        (v * v).sum().backward()
        return [np.array([v.is_leaf]), w.grad]

    _agree(run)


def test_a_write_in_a_backward_hook_builds_no_graph_and_loses_no_gradient():
    """Hooks run under no_grad, as PyTorch's backward runs them."""
    def run(lib, make):
        w = make([1.0, 2.0], requires_grad=True)
        x = w * 3
        y = x + 5  # (add saves nothing: a write into x leaves its backward as it was)

        def write_x(g):
            x.mul_(1.0)

        y.register_hook(write_x)
        (y.sum() + (x + 0).sum()).backward()
        return [w.grad]

    _agree(run)


def test_an_interrupt_inside_a_write_leaves_the_tensor_and_its_views_agreeing(monkeypatch):
    """Ctrl-C while views are marked stale: x keeps its old array, and every view shows x."""
    from minitx.autograd import writes

    w = _float64([1.0, 2.0, 3.0], requires_grad=True)
    x = w * 1
    views = [x[1:], x[:2], x.reshape(3)]
    real, second = writes._root, views[1].data

    def interrupt_on_the_second_view(array):
        if array is second:
            raise KeyboardInterrupt
        return real(array)

    monkeypatch.setattr(writes, "_root", interrupt_on_the_second_view)
    with pytest.raises(KeyboardInterrupt):
        x.exp_()
    monkeypatch.setattr(writes, "_root", real)
    for view, pick in zip(views, (lambda t: t[1:], lambda t: t[:2], lambda t: t.reshape(3))):
        np.testing.assert_array_equal(view.numpy(), pick(x).numpy())
