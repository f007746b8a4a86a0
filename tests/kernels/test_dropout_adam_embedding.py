"""dropout (Philox), multi-tensor Adam/AdamW + grad norm, embedding backward."""
import functools

import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

from minitx import backend
from minitx import kernels as K

import _reference as ref

SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


# ------------------------------------------------------------------ dropout
def test_philox_reference_matches_published_vectors():
    # Known-answer vectors of Philox-4x32-10 (Random123 distribution).
    out = ref.philox4x32_10(np.zeros((1, 4), np.uint32), (0, 0))[0]
    assert [hex(int(x)) for x in out] == ["0x6627e8d5", "0xe169c58d", "0xbc57ac4c", "0x9b00dbd8"]
    out = ref.philox4x32_10(np.full((1, 4), 0xFFFFFFFF, np.uint32), (0xFFFFFFFF, 0xFFFFFFFF))[0]
    assert [hex(int(x)) for x in out] == ["0x408f276d", "0x41c83b0e", "0xa20bc7c6", "0x6d5451fd"]
    ctr = np.array([[0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344]], np.uint32)
    out = ref.philox4x32_10(ctr, (0xA4093822, 0x299F31D0))[0]
    assert [hex(int(x)) for x in out] == ["0xd16cfe09", "0x94fdcceb", "0x5001e420", "0x24126ea1"]


@SETTINGS
@given(n=st.integers(1, 700), p=st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]),
       seed=st.integers(0, 2**64 - 1), offset=st.integers(0, 2**64 - 1),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_dropout_add_matches_philox_reference(cpu, n, p, seed, offset, dtype):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(dtype)
    r = rng.standard_normal(n).astype(dtype)
    y = K.dropout_add_forward(x, r, p, seed, offset)
    keep = ref.dropout_keep(n, p, seed, offset)
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    np.testing.assert_allclose(y, r + np.where(keep, x * dtype(scale), 0), rtol=1e-6, atol=1e-6)
    dy = rng.standard_normal(n).astype(dtype)
    dx, dres = K.dropout_add_backward(dy, p, seed, offset)
    assert dres is dy
    np.testing.assert_allclose(dx, np.where(keep, dy * dtype(scale), 0), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(K.dropout_apply(dy, p, seed, offset), dx)  # plain dropout: the same mask


def test_dropout_reads_its_seed_and_base_offset_from_memory(cpu):
    """What a captured step replays with: every launch of one seed reads the same two words of
    memory (philox_memory), and the mask of a call with offset c under base b is the mask of
    offset b + c; the fused attention's dropout too. Backward, reading the same memory,
    regenerates the forward's mask."""
    rng = np.random.default_rng(8)
    x, r = rng.standard_normal(257), rng.standard_normal(257)
    q, k, v = (rng.standard_normal((2, 5, 8)) for _ in range(3))
    seed, base, call = 12345, 2**40 + 3, 7
    words = K.philox_memory(cpu, seed)
    assert K.philox_memory(cpu, seed) is words and words.tolist() == [seed, 0]
    expect = K.dropout_add_forward(x, r, 0.5, seed, base + call)
    expect_attention = K.attention_forward(q, k, v, dropout_p=0.3, seed=seed, offset=base + call)[0]
    try:
        words[1] = base
        np.testing.assert_array_equal(K.dropout_add_forward(x, r, 0.5, seed, call), expect)
        np.testing.assert_array_equal(K.attention_forward(q, k, v, dropout_p=0.3, seed=seed, offset=call)[0],
                                      expect_attention)
        dx, _ = K.dropout_add_backward(np.ones_like(x), 0.5, seed, call)
        np.testing.assert_array_equal(dx != 0, ref.dropout_keep(x.size, 0.5, seed, base + call))
    finally:
        words[1] = 0
    assert not np.array_equal(K.dropout_add_forward(x, r, 0.5, seed, call), expect)


def test_dropout_mask_properties(cpu):
    n = 200_003
    ones = np.ones(n, np.float32)
    zeros = np.zeros(n, np.float32)
    p = 0.3
    a = K.dropout_add_forward(ones, zeros, p, seed=1234, offset=0) != 0
    b = K.dropout_add_forward(ones, zeros, p, seed=1234, offset=0) != 0
    c = K.dropout_add_forward(ones, zeros, p, seed=1235, offset=0) != 0
    d = K.dropout_add_forward(ones, zeros, p, seed=1234, offset=1) != 0
    assert np.array_equal(a, b)                       # same seed -> same mask
    assert not np.array_equal(a, c) and not np.array_equal(a, d)
    assert abs(np.mean(a != c) - 2 * p * (1 - p)) < 0.01  # independent streams
    assert abs(a.mean() - (1 - p)) < 0.005             # keep fraction ~ 1 - p
    y = K.dropout_add_forward(ones, zeros, p, seed=1234, offset=0)
    np.testing.assert_allclose(y[a], 1 / (1 - p), rtol=1e-6)
    dx, _ = K.dropout_add_backward(ones, p, seed=1234, offset=0)
    assert np.array_equal(dx != 0, a)                 # backward uses the same mask


@SETTINGS
@given(rows=st.integers(1, 4), cols=st.integers(1, 70), act=st.sampled_from([None, "relu", "gelu"]),
       p=st.sampled_from([0.0, 0.25, 0.6]), bias=st.booleans(), seed=st.integers(0, 2**40),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_bias_act_dropout(cpu, rows, cols, act, p, bias, seed, dtype):
    rng = np.random.default_rng(seed % 1000)
    x = rng.standard_normal((rows, cols)).astype(dtype)
    b = rng.standard_normal(cols).astype(dtype) if bias else None
    y = K.bias_act_dropout_forward(x, b, act, p, seed, 7)
    u = x.astype(np.float64) + (b if b is not None else 0)
    f = {None: lambda z: z, "relu": lambda z: np.maximum(z, 0), "gelu": ref.gelu_tanh}[act]
    fg = {None: np.ones_like, "relu": lambda z: (z > 0).astype(float), "gelu": ref.gelu_tanh_grad}[act]
    keep = ref.dropout_keep(rows * cols, p, seed, 7).reshape(rows, cols)
    s = 1 / (1 - p)
    t = dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(y, np.where(keep, f(u) * s, 0), **t)
    dy = rng.standard_normal((rows, cols)).astype(dtype)
    dx, db = K.bias_act_dropout_backward(dy, x, b, act, p, seed, 7)
    dx_ref = np.where(keep, dy * s * fg(u), 0)
    np.testing.assert_allclose(dx, dx_ref, **t)
    if bias:
        np.testing.assert_allclose(db, dx_ref.sum(0), **t)
    else:
        assert db is None


@pytest.mark.parametrize("act", [None, "relu", "gelu"])
def test_bias_act_dropout_keeps_nan_and_inf_as_the_reference_path_does(cpu, act):
    """A NaN or inf is never hidden: relu keeps a NaN and passes dy there, and a dropped position
    is the value times 0 (NaN for NaN and inf), as the reference multiplies by its mask; the
    plain dropout kernels too. Finite values drop to 0."""
    x = np.array([[np.nan, np.inf, -np.inf, 1.0, -1.0, np.nan, np.inf, 2.0] * 4])
    p, seed = 0.5, 11
    keep = ref.dropout_keep(x.size, p, seed, 7).reshape(x.shape)
    assert keep.any() and not keep.all()
    f = {None: lambda z: z, "relu": lambda z: np.maximum(z, 0), "gelu": ref.gelu_tanh}[act]
    fg = {None: np.ones_like, "relu": lambda z: (~(z <= 0)).astype(float), "gelu": ref.gelu_tanh_grad}[act]
    same = functools.partial(np.testing.assert_allclose, rtol=1e-12, atol=0)  # (NaN where NaN; gelu's last bit)
    with np.errstate(invalid="ignore", over="ignore"):
        same(K.bias_act_dropout_forward(x, None, act, p, seed, 7), f(x) * (keep * 2.0))
        dy = np.ones_like(x)
        same(K.bias_act_dropout_backward(dy, x, None, act, p, seed, 7)[0], dy * fg(x) * (keep * 2.0))
        same(K.dropout_add_forward(x, np.zeros_like(x), p, seed, 7), x * (keep * 2.0))
        same(K.dropout_apply(x, p, seed, 7), x * (keep * 2.0))


def placed(a, k):
    """A copy of ``a`` whose first element lies k elements past a 16-byte boundary. The CPU
    harness keeps an argument's address modulo 16, so the dropout kernels read and write it
    4 elements (a group) at a time where k * itemsize is a multiple of the group's alignment
    (16 bytes; 8 for bfloat16), else an element at a time."""
    a = np.asarray(a)
    buf = np.empty(a.nbytes + 32, np.uint8)
    start = -buf.ctypes.data % 16 + k * a.itemsize
    out = buf[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def alignments(data, count, dt):
    """Placements (k of :func:`placed`) of ``count`` input arrays: all aligned, all one element
    off, and one drawn placement per array."""
    drawn = data.draw(st.lists(st.integers(0, 16 // dt.itemsize - 1), min_size=count, max_size=count))
    return [[0] * count, [1] * count, drawn]


def assert_same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


# every n % 4, several full groups; p = 1 drops all
@SETTINGS
@given(n=st.integers(1, 150), p=st.sampled_from([0.0, 0.3, 1.0]), seed=st.integers(0, 2**64 - 1),
       dtype=st.sampled_from(["float32", "float64", "bfloat16"]), data=st.data())
def test_dropout_add_and_apply_give_the_same_bits_at_any_alignment(cpu, n, p, seed, dtype, data):
    """dropout_add_forward and dropout_apply (the mask apply) read a full group of 4 elements
    in one access where every array is aligned for it, else one element at a time: the same
    bits either way, and NumPy's: the same operations in the compute dtype (float32 for
    bfloat16), rounded once to the storage dtype."""
    dt = backend.resolve_dtype(dtype)
    T = backend.resolve_dtype("float32") if dtype == "bfloat16" else dt
    rng = np.random.default_rng(n)
    x, r = (rng.standard_normal(n).astype(np.float32).astype(dt) for _ in range(2))
    keep = ref.dropout_keep(n, p, seed, 11)
    s = T.type(0.0 if p == 1.0 else 1.0 / (1.0 - p))
    dropped = np.where(keep, x.astype(T) * s, T.type(0))
    for kx, kr in alignments(data, 2, dt):
        assert_same_bits(K.dropout_add_forward(placed(x, kx), placed(r, kr), p, seed, 11),
                         (r.astype(T) + dropped).astype(dt))
        assert_same_bits(K.dropout_apply(placed(x, kx), p, seed, 11), dropped.astype(dt))


# cols multiples of 4 and not; rows * cols any n % 4
@SETTINGS
@given(rows=st.integers(1, 5), cols=st.sampled_from([1, 2, 3, 4, 5, 7, 8, 12, 33, 64]),
       act=st.sampled_from([None, "relu", "gelu"]), p=st.sampled_from([0.0, 0.3]), bias=st.booleans(),
       seed=st.integers(0, 2**40), dtype=st.sampled_from(["float32", "float64", "bfloat16"]), data=st.data())
def test_bias_act_dropout_gives_the_same_bits_at_any_alignment(cpu, rows, cols, act, p, bias, seed, dtype, data):
    """bias_act_dropout forward and backward: the same bits whether the arrays are aligned for
    4-element accesses or not (bias, read by column, aligned or not). Identity and relu: also
    NumPy's bits, the same operations in the compute dtype; gelu (tanh, whose last bit NumPy's
    need not share) is held to the reference by test_bias_act_dropout on aligned arrays."""
    dt = backend.resolve_dtype(dtype)
    T = backend.resolve_dtype("float32") if dtype == "bfloat16" else dt
    rng = np.random.default_rng(seed % 1000)
    x, dy = (rng.standard_normal((rows, cols)).astype(np.float32).astype(dt) for _ in range(2))
    b = rng.standard_normal(cols).astype(np.float32).astype(dt) if bias else None

    def run(kx, kdy, kb):  # (y, dx) with x, dy and bias placed at kx, kdy, kb
        xk, bk = placed(x, kx), placed(b, kb) if bias else None
        return (K.bias_act_dropout_forward(xk, bk, act, p, seed, 7),
                K.bias_act_dropout_backward(placed(dy, kdy), xk, bk, act, p, seed, 7)[0])

    y, dx = run(0, 0, 0)
    if act != "gelu":
        keep = ref.dropout_keep(rows * cols, p, seed, 7).reshape(rows, cols)
        s, zero = T.type(1 / (1 - p)), T.type(0)
        u = x.astype(T) + b.astype(T) if bias else x.astype(T)
        f, g = (u, T.type(1)) if act is None else (np.where(u > 0, u, zero), np.where(u > 0, T.type(1), zero))
        assert_same_bits(y, np.where(keep, f * s, zero).astype(dt))
        assert_same_bits(dx, np.where(keep, dy.astype(T) * s * g, zero).astype(dt))
    for ks in alignments(data, 3, dt):
        got_y, got_dx = run(*ks)
        assert_same_bits(got_y, y)
        assert_same_bits(got_dx, dx)


# --------------------------------------------------------------------- adam
@pytest.mark.parametrize("decoupled", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adam_multi_tensor(cpu, decoupled, dtype):
    rng = np.random.default_rng(int(decoupled))
    shapes = [(3,), (5000,), (17, 9), (1,), (0,), (4097,)]  # > chunk, empty, odd sizes
    params = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [rng.standard_normal(s).astype(dtype) for s in shapes]
    ms = [rng.standard_normal(s).astype(dtype) * 0.1 for s in shapes]
    vs = [rng.random(s).astype(dtype) * 0.01 for s in shapes]
    expect = [ref.adam(params[i], grads[i], ms[i], vs[i], 1e-2, 0.9, 0.98, 1e-8, 0.1, decoupled,
                       3) for i in range(len(shapes))]
    K.adam_step(params, grads, ms, vs, lr=1e-2, beta1=0.9, beta2=0.98, eps=1e-8,
                weight_decay=0.1, decoupled=decoupled, step=3)
    t = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    for i, (pe, me, ve) in enumerate(expect):
        np.testing.assert_allclose(params[i], pe, **t)
        np.testing.assert_allclose(ms[i], me, **t)
        np.testing.assert_allclose(vs[i], ve, **t)


@pytest.mark.parametrize("skip", [True, False])
def test_adam_skip_flag_is_read_by_the_kernel(cpu, skip):
    """skip = [True] leaves parameters and moments bit for bit as they were; [False] is the
    step without a flag, bit for bit."""
    rng = np.random.default_rng(3)
    arrays = [[rng.standard_normal(s) for s in ((3,), (4100,))] for _ in range(4)]
    flagged = [[a.copy() for a in group] for group in arrays]
    unflagged = [[a.copy() for a in group] for group in arrays]
    K.adam_step(*flagged, lr=1e-2, weight_decay=0.1, step=2, skip=np.array(skip))
    K.adam_step(*unflagged, lr=1e-2, weight_decay=0.1, step=2)
    for i in (0, 2, 3):  # parameters and both moments (grads, i = 1, are read only)
        for got, before, stepped in zip(flagged[i], arrays[i], unflagged[i]):
            np.testing.assert_array_equal(got, before if skip else stepped)
    if not skip:
        assert not np.array_equal(unflagged[0][0], arrays[0][0])


def test_adam_reads_the_learning_rate_and_step_counts_from_memory(cpu):
    """What a captured step replays with: the kernel's lr and step counts are arrays it reads,
    so the same launch, its arguments unchanged, steps by whatever those arrays then hold; and
    each tensor's bias corrections come from its own count."""
    rng = np.random.default_rng(4)
    p, g, m, v = ([rng.standard_normal(5), rng.standard_normal(3)] for _ in range(4))
    v = [np.abs(a) for a in v]
    lr, steps = np.zeros(1), np.zeros(2, dtype=np.int64)
    arrays = [[a.copy() for a in group] for group in (p, g, m, v)]
    for rate, counts in ((1e-2, (1, 4)), (3e-3, (7, 2))):
        lr[0], steps[:] = rate, counts
        expect = [ref.adam(*(group[i] for group in arrays), rate, 0.9, 0.999, 1e-8, 0.0, False, counts[i])
                  for i in range(2)]
        K.adam_step(*arrays, lr=lr, step=steps)
        for i, (pe, me, ve) in enumerate(expect):
            for got, want in zip((arrays[0][i], arrays[2][i], arrays[3][i]), (pe, me, ve)):
                np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("lr, step, match", [
    (np.zeros(1, np.float32), 1, "lr must be a number or a float64 array of one element, got float32"),
    (np.zeros(2), 1, "lr must be a number or a float64 array of one element, got float64 \\(2,\\)"),
    (1e-3, np.ones(1, np.int64), "step must be an int64 array of one count per tensor \\(2\\), got int64 \\(1,\\)"),
    (1e-3, np.ones(2, np.int32), "step must be an int64 array .* got int32"),
    (1e-3, 0, "step must be >= 1, got 0")])
def test_adam_step_and_lr_are_checked(cpu, lr, step, match):
    arrays = [[np.zeros(3), np.zeros(2)] for _ in range(4)]
    with pytest.raises((TypeError, ValueError), match="adam_step: " + match):
        K.adam_step(*arrays, lr=lr, step=step)


def test_adam_skip_must_be_one_boolean(cpu):
    arrays = [[np.zeros(3)] for _ in range(4)]
    for bad in (np.array(1), np.array([True, False])):
        with pytest.raises(TypeError, match="adam_step: skip must be a boolean array of one element"):
            K.adam_step(*arrays, lr=1e-3, skip=bad)


def test_grad_norm(cpu):
    rng = np.random.default_rng(5)
    grads = [rng.standard_normal(s) for s in [(10,), (3, 3000), (7,)]]
    norm = K.grad_norm(grads)
    assert norm.shape == ()
    expected = np.sqrt(sum((g**2).sum() for g in grads))
    np.testing.assert_allclose(norm, expected, rtol=1e-12)
    norm32 = K.grad_norm([g.astype(np.float32) for g in grads])
    np.testing.assert_allclose(norm32, expected, rtol=1e-5)


@SETTINGS
@given(sizes=st.lists(st.integers(1, 9000), min_size=1, max_size=6), data=st.data())
def test_work_table_covers_every_element_once(cpu, sizes, data):
    """The (tensor, start) chunks of the table tile every tensor exactly, in order; asking
    again returns the kept table rather than a new one."""
    from minitx.kernels import adam

    sizes_dev, tensor_idx, starts, n_chunks = adam._work_table(cpu, sizes)
    assert list(sizes_dev) == sizes and len(tensor_idx) == len(starts) == n_chunks
    expected = [(t, s) for t, n in enumerate(sizes) for s in range(0, n, adam._CHUNK)]
    assert list(zip(tensor_idx.tolist(), starts.tolist())) == expected
    assert adam._work_table(cpu, list(sizes))[1] is tensor_idx


@SETTINGS
@given(sizes=st.lists(st.integers(0, 9000), min_size=1, max_size=5), bad=st.data(),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_nonfinite_counts(cpu, sizes, bad, dtype):
    """Per array, the number of NaN, +inf and -inf elements; huge finite values (whose squares
    overflow) and empty arrays count nothing."""
    rng = np.random.default_rng(len(sizes))
    arrays = [rng.standard_normal(n).astype(dtype) for n in sizes]
    for a in arrays:
        if a.size:
            a[bad.draw(st.lists(st.integers(0, a.size - 1), max_size=4))] = bad.draw(
                st.sampled_from([np.nan, np.inf, -np.inf, np.finfo(dtype).max]))
    expected = [int((~np.isfinite(a)).sum()) for a in arrays]
    assert K.nonfinite_counts(arrays).tolist() == expected
    assert K.nonfinite_counts([]).tolist() == []
    with backend.count_host_reads() as reads:  # the deferred check's flags: the same launch, nothing read
        flags = K.nonfinite_flags(arrays)
    assert reads.count == 0 and flags.dtype == np.bool_
    assert flags.tolist() == [n == 0 for n in expected]


@SETTINGS
@given(sizes=st.lists(st.integers(0, 9000), min_size=1, max_size=5), factor=st.sampled_from([0.0, 0.37, 1.0, 3.5]),
       dtype=st.sampled_from(["float32", "float64", "bfloat16"]))
def test_scale_in_place_is_the_elementwise_product_bit_for_bit(cpu, sizes, factor, dtype):
    """One launch scales every array in place: x * factor as NumPy computes it elementwise in
    the arrays' dtype (bfloat16: in float32, rounded once), for arrays across chunk boundaries
    and empty ones."""
    dt = backend.resolve_dtype(dtype)
    rng = np.random.default_rng(len(sizes))
    arrays = [rng.standard_normal(n).astype(np.float32).astype(dt) for n in sizes]
    f = np.full(1, factor).astype(dt)
    expected = [a * f for a in arrays]
    K.scale_in_place(arrays, f)
    for got, want in zip(arrays, expected):
        assert got.dtype == dt
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_scale_in_place_refuses_what_it_cannot_scale_in_place(cpu):
    with pytest.raises(ValueError, match=r"array 1 of shape \(4, 2\) is not contiguous"):
        K.scale_in_place([np.ones(3), np.ones((4, 4))[:, ::2]], np.ones(1))
    with pytest.raises(TypeError, match="factor must be one element of the arrays' dtype float32, got float64"):
        K.scale_in_place([np.ones(3, np.float32)], np.ones(1))


def test_adam_rejects_noncontiguous(cpu):
    p = np.zeros((4, 4))[:, ::2]
    with pytest.raises(ValueError, match="contiguous"):
        K.adam_step([p], [np.zeros((4, 2))], [np.zeros((4, 2))], [np.zeros((4, 2))], lr=1e-3)


# ---------------------------------------------------------------- embedding
@SETTINGS
@given(n=st.integers(1, 60), num=st.integers(1, 12), dim=st.sampled_from([1, 5, 32, 33, 300]),
       pad=st.sampled_from([None, 0, -1, 3]), dtype=st.sampled_from([np.float32, np.float64]),
       seed=st.integers(0, 2**31))
def test_embedding_backward(cpu, n, num, dim, pad, dtype, seed):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, num, (n,))  # many repeats when n > num
    dy = rng.standard_normal((n, dim)).astype(dtype)
    if pad is not None and pad >= num:
        pad = None
    dw = K.embedding_backward(ids.reshape(1, n), dy.reshape(1, n, dim), num, pad)
    expect = np.zeros((num, dim))
    pad_n = None if pad is None else pad % num
    for i, r in zip(ids, dy):
        if i != pad_n:
            expect[i] += r
    np.testing.assert_allclose(dw, expect, rtol=1e-5, atol=1e-5)
    if pad_n is not None:
        assert np.all(dw[pad_n] == 0)


def test_embedding_backward_with_workers(cpu, monkeypatch):
    monkeypatch.setenv("MINITX_CPU_WORKERS", "2")  # blocks on 2 OS threads
    ids = np.array([1, 1, 1, 2] * 50)
    dy = np.ones((200, 3))
    out = K.embedding_backward(ids, dy, 4)
    np.testing.assert_array_equal(out[:, 0], [0, 150, 50, 0])


@pytest.mark.parametrize("position_blocks", [1024, 7])
@pytest.mark.parametrize("workers", ["0", "2"])
def test_embedding_backward_adds_in_one_fixed_order(cpu, any_schedule, workers, position_blocks, monkeypatch):
    """Bit for bit the written-out order, whatever order the threads and blocks run in: the
    gradient is the same on every run (atomicAdd would add in the threads' arrival order).
    With 7 blocks along the sorted positions each block strides over many of them (a batch of
    more lookups than POSITION_BLOCKS does that on a GPU)."""
    monkeypatch.setenv("MINITX_CPU_WORKERS", workers)
    monkeypatch.setattr(K.embedding, "POSITION_BLOCKS", position_blocks)
    rng = np.random.default_rng(11)
    ids = rng.integers(-1, 7, 300)  # -1 and 6 lie outside the 6-row table: skipped
    ids[:40] = 2  # one long run: every lane has lookups
    dy = rng.standard_normal((300, 45)).astype(np.float32)  # 45 columns: a partial 32-column tile
    expected = ref.embedding_backward_in_kernel_order(ids, dy, 6, K.embedding.ROW_LANES, padding_idx=3)
    np.testing.assert_array_equal(K.embedding_backward(ids, dy, 6, padding_idx=3), expected)


@pytest.mark.parametrize("decoupled", [False, True])
def test_adam_without_weight_decay_leaves_an_infinite_weight_infinite(cpu, decoupled):
    """weight_decay 0 adds no term at all (0 * inf would be NaN, and the NaN would stay in m and v),
    as the host path and PyTorch."""
    p, g = [np.array([1.0, np.inf, -np.inf, np.nan])], [np.array([0.0, 0.0, 1.0, 1.0])]
    m, v = [np.zeros(4)], [np.zeros(4)]
    K.adam_step(p, g, m, v, lr=1e-2, decoupled=decoupled)
    np.testing.assert_array_equal(p[0], [1.0, np.inf, -np.inf, np.nan])
    np.testing.assert_allclose(m[0], [0.0, 0.0, 0.1, 0.1])
    np.testing.assert_allclose(v[0], [0.0, 0.0, 1e-3, 1e-3])
