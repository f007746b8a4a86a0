"""The ops' fused branches, run on the CPU: under ``kernels.emulate_on_cpu()`` the ops take
their kernel branches on NumPy arrays, and the same .cu source runs through the emulation.

For each wired op: the fused branch launches its kernels and equals the reference branch
(forward and gradients, float64 and float32), float64 gradcheck passes through the fused
branch, the fallback conditions really fall back, the switches force the reference path,
and a small Transformer training step gives the same loss, gradients and update both ways.
The emulation is slow (every CUDA thread is a fiber): tiny shapes, few examples.
"""
import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitx
import minitx.functional as F
from minitx import kernels as K
from minitx import backend, optim
from minitx.kernels import cpu_harness
from minitx.testing import gradcheck

import _reference as ref
from _dispatch import (TRAINING_STEP_KERNELS, attention_kernels, assert_bfloat16_follows_float32, assert_paths_agree,
                       assert_softmax_bfloat16_within_rounding, assert_tied_table_adds_into_the_output_layers,
                       assert_layer_norm_adds_the_residual_gradient, with_and_without_a_debugging_hook,
                       attention_case, attention_dropout_both_ways,
                       bias_act_case, both_paths, check_fused_dropout_ops, clip_run, cross_entropy_case,
                       embedding_case, kernel_launches, key_padding_mask, layer_norm_case, leaves, optimizer_run,
                       path_context, softmax_case, tolerance, training_step)

pytestmark = pytest.mark.usefixtures("cpu")  # builds the emulation once; skips without g++

FEW = settings(max_examples=10, deadline=None)
DTYPES = st.sampled_from([np.float64, np.float32])
small_shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)


def fused_gradcheck(fn, *inputs):
    """gradcheck with the kernels on, along a few random directions (few emulated launches)."""
    with K.emulate_on_cpu(), kernel_launches() as names:
        assert gradcheck(fn, *inputs, full_jacobian_limit=0, directions=3)
    assert names, "gradcheck did not go through the fused branch"


# ---------------------------------------------------------------- fused == reference


@FEW
@given(shape=small_shapes, dtype=DTYPES, seed=st.integers(0, 99))
def test_softmax(shape, dtype, seed):
    assert_paths_agree(softmax_case(shape, dtype, seed))


@FEW
@given(shape=small_shapes, dtype=DTYPES, seed=st.integers(0, 99))
def test_layer_norm(shape, dtype, seed):
    assert_paths_agree(layer_norm_case(shape, dtype, seed))


@FEW
@given(rows=st.integers(1, 6), classes=st.integers(1, 7), dtype=DTYPES,
       reduction=st.sampled_from(["mean", "sum", "none"]), smoothing=st.sampled_from([0.0, 0.1]))
def test_cross_entropy(rows, classes, dtype, reduction, smoothing):
    assert_paths_agree(cross_entropy_case(rows, classes, dtype, reduction, smoothing))


@FEW
@given(b=st.integers(1, 2), h=st.integers(1, 2), lq=st.integers(1, 4), lk=st.integers(1, 4),
       d=st.integers(1, 4), dtype=DTYPES, masked=st.booleans(), causal=st.booleans())
def test_attention(b, h, lq, lk, d, dtype, masked, causal):
    if causal and lq not in (1, lk):
        lq = lk  # the other causal shapes fall back (tested below)
    assert_paths_agree(attention_case(b, h, lq, lk, d, dtype, masked, causal))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", ["softmax", "cross_entropy", "attention"])
def test_a_plus_infinite_input_gives_the_same_values_on_both_paths(case, dtype):
    """Rows holding +inf (alone, twice, beside a NaN), a fully masked row and a plain one: the
    kernels and the reference path give the same values, NaN where PyTorch gives NaN (an
    attention query holding +inf: its row of scores is ±inf)."""
    rows = np.array([[np.inf, 0.0, 1.0, 2.0], [np.inf, np.inf, 0.0, 1.0], [np.nan, np.inf, 0.0, 1.0],
                     [-np.inf] * 4, [0.5, -1.0, 3.0, 0.0]], dtype)
    if case == "softmax":
        fn, arrays, kernels = softmax_case((5, 4), dtype)
        arrays = [rows]
    elif case == "cross_entropy":
        fn, arrays, kernels = cross_entropy_case(5, 4, dtype, reduction="none", smoothing=0.1)
        arrays = [rows]
    else:
        fn, arrays, kernels = attention_case(1, 2, 3, 4, 2, dtype, masked=False)
        arrays[0][0, 0, 1, 0] = np.inf
    with np.errstate(invalid="ignore"):
        assert_paths_agree((fn, arrays, kernels))



@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_infinite_output_gradient_gives_the_same_gradients_on_both_paths(dtype):
    """do holding +inf over a column of v with both signs: both paths take delta = do . o (+inf;
    sum_j P dP would be inf - inf), so key 1's dS is -inf on both, not NaN on one
    (tests/ops/test_attention_masks.py holds the reference path to NumPy)."""
    q, k = np.array([[[[0.3, -0.2], [0.1, 0.4]]]], dtype), np.array([[[[0.5, 0.1], [-0.3, 0.2]]]], dtype)
    v, do = np.array([[[[2.0, 1.0], [-1.0, 0.5]]]], dtype), np.array([[[[np.inf, 0.3], [0.2, -0.1]]]], dtype)
    grads = []
    for fused in (False, True):
        with path_context(fused), kernel_launches() as names, np.errstate(invalid="ignore"):
            inputs = leaves([q, k, v])
            F.scaled_dot_product_attention(*inputs).backward(minitx.tensor(do))
        assert ("attention_backward_delta" in names) is fused
        grads.append([t.grad.numpy() for t in inputs])
    for reference, fused in zip(*grads):
        np.testing.assert_allclose(fused, reference, **tolerance(dtype))
    assert np.array_equal(grads[0][1][0, 0, 1], [-np.inf, np.inf])

@FEW
@given(vocab=st.integers(1, 6), ids_shape=small_shapes, dim=st.integers(1, 4), dtype=DTYPES,
       padding=st.booleans())
def test_embedding_backward(vocab, ids_shape, dim, dtype, padding):
    assert_paths_agree(embedding_case(vocab, ids_shape, dim, dtype, 0 if padding else None))


@FEW
@given(vocab=st.integers(1, 6), n=st.integers(0, 20), dim=st.integers(1, 40), dtype=DTYPES,
       padding=st.sampled_from([None, 0, -1]), seed=st.integers(0, 2**31 - 1))
def test_embedding_backward_adds_into_out_as_the_engine_would(vocab, n, dim, dtype, padding, seed):
    """out=: each touched row's sum added into out (out + the zeroed table's result, bit for
    bit); untouched rows and the padding row keep their values."""
    rng = np.random.default_rng(seed)
    ids, dy = rng.integers(0, vocab, (n,)), rng.standard_normal((n, dim)).astype(dtype)
    earlier = rng.standard_normal((vocab, dim)).astype(dtype)
    with K.emulate_on_cpu():
        alone = K.embedding_backward(ids, dy, vocab, padding)
        out = earlier.copy()
        assert K.embedding_backward(ids, dy, vocab, padding, out=out) is out
    np.testing.assert_array_equal(out, earlier + alone)
    untouched = np.setdiff1d(np.arange(vocab), ids)
    if padding is not None:
        untouched = np.union1d(untouched, [padding % vocab])
    np.testing.assert_array_equal(out[untouched], earlier[untouched])


def test_embedding_backward_refuses_an_out_it_cannot_add_into():
    ids, dy = np.array([0, 2]), np.ones((2, 3), np.float32)
    with K.emulate_on_cpu():
        for out in (np.zeros((4, 3), np.float32), np.zeros((3, 3), np.float64), np.zeros((3, 6), np.float32)[:, ::2]):
            with pytest.raises(ValueError, match=r"embedding_backward: out must be a contiguous numpy array of "
                                                 r"shape \(3, 3\) and dtype float32"):
                K.embedding_backward(ids, dy, 3, out=out)


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_a_layer_norm_adds_the_residual_gradient_as_it_writes_dx(dtype, fused, monkeypatch):
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes")
    assert_layer_norm_adds_the_residual_gradient(dtype, "cpu", fused, monkeypatch)


def test_layer_norm_backward_refuses_a_plus_unlike_x():
    dy = x = np.ones((2, 3), np.float32)
    mean, rstd = np.zeros(2, np.float32), np.ones(2, np.float32)
    with K.emulate_on_cpu():
        for plus in (np.ones((2, 4), np.float32), np.ones((2, 3), np.float64)):
            with pytest.raises(ValueError, match=r"layer_norm_backward: plus must be \(2, 3\) float32"):
                K.layer_norm_backward(dy, x, None, mean, rstd, plus=plus)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_a_tied_table_takes_its_embedding_gradients_into_the_output_layers(dtype, monkeypatch):
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes")
    assert_tied_table_adds_into_the_output_layers(dtype, "cpu", monkeypatch)


@FEW
@given(shape=small_shapes, activation=st.sampled_from(["identity", "relu", "gelu_tanh"]), dtype=DTYPES)
def test_bias_act_without_dropout(shape, activation, dtype):
    assert_paths_agree(bias_act_case(shape, activation, dtype))


def test_grouped_query_attention_fuses_on_the_repeated_heads():
    """enable_gqa: the kernels run on k, v repeated to the query heads; dk, dv sum each group."""
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in ((2, 4, 3, 2), (2, 2, 3, 2), (2, 2, 3, 2))]
    mask = key_padding_mask(2, 3)

    def attend(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, mask=minitx.tensor(mask, device=q.device), causal=True,
                                              enable_gqa=True)
    assert_paths_agree((attend, arrays, attention_kernels(np.float64, 2, 3)))
    fused_gradcheck(attend, *leaves(arrays))


def test_attention_3d_and_single_query_causal():
    assert_paths_agree(attention_case(1, 3, 1, 4, 2, np.float64, causal=True))  # Lq == 1 sees every key
    q, k, v = (np.random.default_rng(i).standard_normal((3, 2, 2)) for i in range(3))
    assert_paths_agree(((lambda q, k, v: F.scaled_dot_product_attention(q, k, v)), [q, k, v],
                        ["attention_forward"]))


# ---------------------------------------------------------------- bfloat16 storage, float32 arithmetic


@pytest.fixture
def ml_dtypes():
    return pytest.importorskip("ml_dtypes")


@pytest.mark.parametrize("case", [
    layer_norm_case((4, 9), np.float32),
    cross_entropy_case(5, 6, np.float32, "mean"),
    cross_entropy_case(4, 3, np.float32, "none", smoothing=0.0),
    attention_case(1, 2, 3, 5, 4, np.float32, masked=True),
    attention_case(2, 1, 4, 4, 3, np.float32, masked=False, causal=True),
    embedding_case(5, (2, 3), 4, np.float32, padding_idx=1),
    bias_act_case((3, 6), "gelu_tanh", np.float32),
], ids=["layer_norm", "cross_entropy_mean", "cross_entropy_none", "attention_masked",
        "attention_causal", "embedding", "bias_gelu"])
def test_bfloat16_arrays_take_the_kernels_and_follow_float32(case, ml_dtypes):
    assert_bfloat16_follows_float32(case)


@pytest.mark.parametrize("shape", [(3, 7), (64, 37, 33)])
def test_bfloat16_softmax_stays_within_its_rounding_bound(shape, ml_dtypes):
    assert_softmax_bfloat16_within_rounding(shape)


def test_bfloat16_statistics_in_another_dtype_keep_the_reference_path(ml_dtypes):
    """A launcher's statistics (layer norm's mean and rstd, attention's lse) must be float32 beside
    bfloat16 arrays; any other dtype there is not the kernels' contract."""
    x = np.zeros((2, 3), ml_dtypes.bfloat16)
    with K.emulate_on_cpu():
        assert K.enabled(x, stats=(np.zeros(2, np.float32),))
        assert not K.enabled(x, stats=(np.zeros(2, ml_dtypes.bfloat16),))
        assert not K.enabled(x, x.astype(np.float32))
        assert K.enabled(x.astype(np.float64), stats=(np.zeros(2, np.float64),))
        assert not K.enabled(x.astype(np.float64), stats=(np.zeros(2, np.float32),))


# ---------------------------------------------------------------- gradcheck through the kernels


def test_gradcheck_through_the_fused_branches():
    rng = np.random.default_rng(0)
    x, w, b = leaves([rng.standard_normal((2, 5)), rng.standard_normal(5), rng.standard_normal(5)])
    fused_gradcheck(lambda x: F.softmax(x), x)
    fused_gradcheck(lambda x, w, b: F.layer_norm(x, w, b, eps=1e-3), x, w, b)
    t = minitx.tensor([1, -100])
    fused_gradcheck(lambda x: F.cross_entropy(x, t, label_smoothing=0.1), x)
    q, k, v = leaves([rng.standard_normal((1, 2, 3, 2)) for _ in range(3)])
    mask = key_padding_mask(1, 3)
    fused_gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask=mask, causal=True), q, k, v)
    # a scale other than 1/sqrt(d), so a backward that ignored it would show
    fused_gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, mask=mask, scale=1.7), q, k, v)
    fused_gradcheck(lambda w: F.embedding(minitx.tensor([[0, 4, 4]]), w), leaves([rng.standard_normal((5, 2))])[0])


def test_gradcheck_through_fused_dropout_ops():
    # a fixed seed gives every call of gradcheck the same Philox mask
    rng = np.random.default_rng(1)
    x, r, b = leaves([rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.standard_normal(4)])
    fused_gradcheck(lambda x, r: F.dropout_add(x, r, 0.4, seed=7), x, r)
    fused_gradcheck(lambda x, b: F.bias_act_dropout(x, b, "gelu_tanh", 0.4, seed=7), x, b)
    x = leaves([np.where(rng.random((3, 4)) < 0.5, -1.0, 1.0) * rng.uniform(0.1, 2, (3, 4))])[0]
    fused_gradcheck(lambda x: F.bias_act_dropout(x, None, "relu", 0.4, seed=7), x)


# ---------------------------------------------------------------- dropout: the Philox mask


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fused_dropout_ops_use_the_philox_mask(dtype):
    check_fused_dropout_ops(dtype)


def test_fused_dropout_masks_follow_manual_seed():
    x, r = np.ones((4, 8)), np.zeros((4, 8))

    def two_calls():
        with K.emulate_on_cpu():
            return [F.dropout_add(*leaves([x, r]), 0.5).numpy() for _ in range(2)]

    minitx.manual_seed(3)
    first = two_calls()
    assert not np.array_equal(first[0], first[1])  # each call takes the next Philox offset
    minitx.manual_seed(3)
    np.testing.assert_array_equal(two_calls(), first)
    assert minitx.random.next_philox_seed_offset("cpu") == (3, 2)
    state = minitx.random.get_state()
    minitx.random.set_state(state)
    assert minitx.random.next_philox_seed_offset("cpu") == (3, 3)


def test_plain_dropout_draws_philox_masks_that_a_checkpoint_can_replay():
    """Where the kernels run, F.dropout and attention dropout (reference ops) also take their
    masks from Philox (seed, offset) pairs: a checkpoint's random state replays them exactly."""
    x = np.ones((3, 8))
    q, v = np.zeros((1, 1, 4, 2)), np.random.default_rng(0).standard_normal((1, 1, 4, 3))

    def masks():  # the second output depends on its dropout mask through the dropped weights
        with K.emulate_on_cpu():
            plain = F.dropout(leaves([x])[0], 0.5).numpy()
            attention = F.scaled_dot_product_attention(*leaves([q, q, v]), dropout_p=0.5).numpy()
        return plain, attention

    minitx.manual_seed(4)
    plain, attention = masks()
    offset = minitx.random.next_philox_seed_offset("cpu")[1]
    np.testing.assert_array_equal(plain, np.where(ref.dropout_keep(x.size, 0.5, 4, 0), 2.0, 0.0).reshape(x.shape))
    assert offset == 2  # one pair for each mask
    minitx.manual_seed(4)
    masks()
    state = minitx.random.get_state()  # what a checkpoint saves after these two masks
    later = masks()
    minitx.manual_seed(99)
    minitx.random.set_state(state)
    for got, want in zip(masks(), later):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_dropout_is_the_same_fused_and_unfused(causal):
    attention_dropout_both_ways(causal)


def test_attention_dropout_fused_forward_unfused_backward():
    """A backward that cannot take the kernels after a forward that did (here the kernels are
    switched off in between) redraws the forward's mask: the gradients of the all-fused run."""
    rng = np.random.default_rng(12)
    arrays = [rng.standard_normal((2, 2, 5, 4)) for _ in range(3)]

    def grads(fused_backward):
        minitx.manual_seed(6)
        q, k, v = leaves(arrays)
        with K.emulate_on_cpu(), kernel_launches() as names:
            out = F.scaled_dot_product_attention(q, k, v, causal=True, dropout_p=0.5)
        with contextlib.nullcontext() if fused_backward else K.use_fused(False):
            with K.emulate_on_cpu(), kernel_launches() as back_names:
                out.sum().backward()
        assert "attention_forward" in names
        assert ("attention_backward_delta" in back_names) == fused_backward
        return [t.grad.numpy() for t in (q, k, v)]

    for got, want in zip(grads(False), grads(True)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- what falls back


def _attention_launches(mask=None, lq=3, lk=3, dv=2, **kwargs):
    rng = np.random.default_rng(3)
    q, k, v = leaves([rng.standard_normal(s) for s in ((2, 2, lq, 2), (2, 2, lk, 2), (2, 2, lk, dv))])
    with K.emulate_on_cpu(), kernel_launches() as names:
        out = F.scaled_dot_product_attention(q, k, v, mask=mask, **kwargs)
        out = out[0] if isinstance(out, tuple) else out
        out.sum().backward()
    return [n for n in names if n.startswith("attention")]


def test_attention_falls_back_where_the_kernel_does_not_apply():
    assert _attention_launches(key_padding_mask(2, 3)) != []  # the control
    assert _attention_launches(dropout_p=0.3, seed=1) != []       # dropout on the weights fuses too
    full = np.random.default_rng(0).random((2, 1, 3, 3)) < 0.8
    full[..., 0] = True
    assert _attention_launches(full) == []                        # a per-query mask
    per_query = np.array([[True, False, True], [True, True, True]])
    assert _attention_launches(per_query, lq=2) == []             # [2, Lk] on 4-D q: rows are queries
    assert _attention_launches(lq=2, lk=3, causal=True) == []     # bottom-right causal, Lq != Lk
    assert _attention_launches(dv=3) == []                        # value size != key size
    assert _attention_launches(np.where(key_padding_mask(2, 3), 0.0, -np.inf)) == []  # a float mask
    # weights requested: the forward needs P, the backward (from o and lse) may still fuse
    assert "attention_forward" not in _attention_launches(return_weights=True)


def test_other_fallbacks():
    rng = np.random.default_rng(4)
    x = leaves([rng.standard_normal((3, 4))])[0]
    with K.emulate_on_cpu(), kernel_launches() as names:
        F.softmax(x, axis=0).sum().backward()           # softmax over a non-last axis
        F.softmax(x.astype("float32"), -1)               # fine on its own ...
        F.layer_norm(x, minitx.ones(4, dtype="float32"), minitx.zeros(4, dtype="float32"))  # ... mixed dtypes: no
    assert names == ["softmax_forward"]


def test_an_embedding_wider_than_the_kernels_grid_takes_the_reference_path():
    """Rows of more than 65,535 tiles of 32 columns (grid.y's limit): the launcher refuses them,
    naming the limit, and the op sums them on the reference path."""
    dim = K.EMBEDDING_MAX_DIM + 1
    ids, dy = np.array([3, 1, 3]), np.ones((3, dim), np.float32)
    with pytest.raises(ValueError, match=f"embedding_backward: rows of {dim} columns need 65536 tiles of 32 along "
                                         "grid.y, which takes at most 65535"):
        K.embedding_backward(ids, dy, 5)
    w = minitx.zeros((5, dim), dtype="float32", requires_grad=True)
    with K.emulate_on_cpu(), kernel_launches() as names:
        F.embedding(minitx.tensor(ids), w).backward(dy)
    assert names == [] and (w.grad.numpy()[3] == 2).all() and (w.grad.numpy()[[0, 2, 4]] == 0).all()


@pytest.mark.parametrize("shape", [(2, 0), (0, 3), (0, 0)])
def test_layer_norm_of_empty_rows_or_no_rows_is_the_reference_paths_on_both(shape):
    """Rows of no elements launch nothing (the reference's empty output and gradients); no rows
    go through the kernels, which launch nothing either."""
    x = np.zeros(shape, np.float32)
    fn = lambda x, w, b: F.layer_norm(x, w, b)  # noqa: E731
    (ref_out, ref_grads), (out, grads), names = both_paths(fn, [x, np.ones(shape[-1:], np.float32),
                                                                np.zeros(shape[-1:], np.float32)])
    assert out.shape == ref_out.shape == shape and names == []
    for got, want in zip(grads, ref_grads):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("switch", ["use_fused", "environment"])
def test_switches_force_the_reference_path(switch, monkeypatch):
    fn, arrays, _ = softmax_case((2, 3), np.float64)
    if switch == "environment":
        monkeypatch.setenv("MINITX_FUSED", "0")
        (ref_out, _), (out, _), names = both_paths(fn, arrays)
    else:
        with K.use_fused(False):
            (ref_out, _), (out, _), names = both_paths(fn, arrays)
    assert names == []
    np.testing.assert_array_equal(out, ref_out)


# ---------------------------------------------------------------- optimizer, clipping, a training step


def test_adam_launches_read_the_same_lr_and_step_memory_every_step():
    """What lets a captured step replay Adam: each step's launch gets the same lr array and a
    view of the same step counts (arguments a graph would bake in), and those hold the step's
    values: the lr the schedule set, t advanced on the device."""
    from minitx.kernels import cpu_harness

    params = leaves([np.ones(3), np.ones((2, 2))])
    opt = optim.Adam(params, lr=0.1)
    be = cpu_harness.cpu_backend()
    seen = []  # (lr array, step counts array, their values) of each adam_step launch

    def launch(filename, kernel, dtype, grid, block, args, **kwargs):
        if kernel == "adam_step":
            seen.append((args[9], args[10], float(args[9][0]), args[10].tolist()))
        return type(be).launch(be, filename, kernel, dtype, grid, block, args, **kwargs)

    be.launch = launch
    try:
        with K.emulate_on_cpu():
            for step, lr in enumerate((0.1, 0.05, 0.02)):
                opt.param_groups[0]["lr"] = lr
                for p in params:
                    p.grad = minitx.tensor(np.full(p.shape, step + 1.0))
                opt.step()
    finally:
        del be.launch
    assert [(rate, counts) for _, _, rate, counts in seen] == [(0.1, [1, 1]), (0.05, [2, 2]), (0.02, [3, 3])]
    first_lr, first_steps = seen[0][:2]
    for lr, steps, _, _ in seen[1:]:
        assert np.shares_memory(lr, first_lr) and np.shares_memory(steps, first_steps)
    assert [int(s["step"]) for s in opt.state.values()] == [3, 3]


@pytest.mark.parametrize("opt_class", [optim.Adam, optim.AdamW])
def test_adam_fused_equals_reference(opt_class):
    params, states, names = optimizer_run(opt_class, fused=True)
    ref_params, ref_states, ref_names = optimizer_run(opt_class, fused=False)
    assert names.count("adam_step") == 3 and ref_names == []  # 1 launch per step, two step counts read in it
    for got, want in zip(params + states, ref_params + ref_states):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert names.count("nonfinite_partial") == 3  # the NaN/inf check: one launch per step


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("fused", [True, False])
def test_adam_refuses_a_nonfinite_gradient_on_both_paths(bad, fused):
    """The kernel's count and the per-gradient reduction name the same parameter, and nothing
    is updated."""
    rng = np.random.default_rng(8)
    params = leaves([rng.standard_normal(s) for s in ((3,), (5000,), (2, 2))], "cpu")
    before = [p.numpy().copy() for p in params]
    for p in params:
        p.grad = minitx.tensor(rng.standard_normal(p.shape))
    params[1].grad.data[4321] = bad
    opt = optim.Adam(params, lr=0.1)
    with path_context(fused), kernel_launches() as names:
        with pytest.raises(FloatingPointError, match=r"parameter 1 \(shape \(5000,\)\) contains NaN or inf"):
            opt.step()
    assert ("nonfinite_partial" in names) == fused and "adam_step" not in names
    for p, b in zip(params, before):
        np.testing.assert_array_equal(p.numpy(), b)


@pytest.mark.parametrize("fused", [True, False])
def test_a_deferred_step_with_a_nonfinite_gradient_is_skipped_on_both_paths(fused):
    """Inside DeferredChecks.deferring() the check cannot raise: the kernel reads the skip flag
    itself (no copies of the parameters), the reference path writes its copies back nowhere.
    Either way nothing changes, and the error comes at raise_first()."""
    from minitx import sync

    rng = np.random.default_rng(8)
    params = leaves([rng.standard_normal(s) for s in ((3,), (5000,))], "cpu")
    opt = optim.AdamW(params, lr=0.1)
    for p in params:
        p.grad = minitx.tensor(rng.standard_normal(p.shape))
    opt.step()  # the moments exist, so the skipped step has state to leave alone
    before = [p.numpy().copy() for p in params] + [backend.to_numpy(s[k]).copy() for s in opt.state.values()
                                                    for k in ("exp_avg", "exp_avg_sq")]
    params[1].grad.data[17] = np.nan
    checks = sync.DeferredChecks()
    with path_context(fused), kernel_launches() as names, checks.deferring():
        opt.step()
    assert ("adam_step" in names) == fused
    after = [p.numpy() for p in params] + [backend.to_numpy(s[k]) for s in opt.state.values()
                                           for k in ("exp_avg", "exp_avg_sq")]
    for a, b in zip(after, before):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(FloatingPointError, match="parameter 1"):
        checks.raise_first()


@pytest.mark.parametrize("scale, max_norm", [(1.0, 100.0), (3.0, 1.0), (np.inf, 1.0)])
def test_clip_grad_norm_fused_equals_reference(scale, max_norm):
    norm, grads, names = clip_run(scale, max_norm, fused=True)
    ref_norm, ref_grads, _ = clip_run(scale, max_norm, fused=False)
    assert "sumsq_partial" in names
    assert norm == pytest.approx(ref_norm, rel=1e-12)
    for got, want in zip(grads, ref_grads):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_transformer_training_step_is_the_same_both_ways():
    loss, norm, grads, params, names = training_step(fused=True)
    ref_loss, ref_norm, ref_grads, ref_params, ref_names = training_step(fused=False)
    assert ref_names == set()
    assert TRAINING_STEP_KERNELS <= names
    assert loss == pytest.approx(ref_loss, rel=1e-10)
    assert norm == pytest.approx(ref_norm, rel=1e-10)
    for got, want in zip(grads + params, ref_grads + ref_params):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


def test_an_autocast_step_takes_the_bfloat16_attention_kernels_and_follows_the_reference(ml_dtypes, monkeypatch):
    """Under autocast the attention's q, k, v are bfloat16, so the fused path runs attention.cu's
    bfloat16 instantiation (or attention_mma.cu's, on the tensor cores); the rest of the step is
    float32 on its kernels. The reference path
    computes the same step in NumPy bfloat16 arithmetic, rounding after every op where the
    kernel rounds once, so the two agree as two bfloat16 computations do: the loss to 1%, each
    gradient's direction (cosine > 0.99)."""
    launched = []
    original = cpu_harness.CpuBackend.launch

    def launch(self, filename, kernel, dtype, *args, **kwargs):
        launched.append((kernel, np.dtype(dtype).name))
        return original(self, filename, kernel, dtype, *args, **kwargs)

    monkeypatch.setattr(cpu_harness.CpuBackend, "launch", launch)  # under kernel_launches' instance patch
    loss, norm, grads, params, names = training_step(fused=True, autocast=True)
    ref_loss, ref_norm, ref_grads, _, _ = training_step(fused=False, autocast=True)
    assert ("attention_forward", "bfloat16") in launched and ("attention_backward_onepass", "bfloat16") in launched
    assert ("layer_norm_forward", "float32") in launched and ("adam_step", "float32") in launched
    assert_follows_the_bfloat16_reference(loss, grads, ref_loss, ref_grads)
    # the same step with attention on the tensor cores (attention_mma.cu, through the ops' dispatch)
    launched.clear()
    with K.use_tensor_core_attention():
        loss, norm, grads, params, names = training_step(fused=True, autocast=True)
    for kernel in ("attention_mma_forward", "attention_mma_backward_dkdv", "attention_mma_backward_dq"):
        assert (kernel, "bfloat16") in launched
    assert not {name for name, _ in launched} & {"attention_forward", "attention_backward_dq", "attention_backward_onepass"}
    assert_follows_the_bfloat16_reference(loss, grads, ref_loss, ref_grads)


def assert_follows_the_bfloat16_reference(loss, grads, ref_loss, ref_grads):
    """Two bfloat16 computations of one step agree: the loss to 1%, each gradient's direction
    (cosine > 0.99)."""
    assert loss == pytest.approx(ref_loss, rel=1e-2)
    for got, want in zip(grads, ref_grads):
        assert got.dtype == np.float32
        if np.linalg.norm(want) > 1e-6:
            assert got.ravel() @ want.ravel() / (np.linalg.norm(got) * np.linalg.norm(want)) > 0.99


# ---------------------------------------------------------------- the sync-free step on the kernel path


def _transformer_step(sync_free):
    """One train_step of a small float32 Transformer with dropout, on the kernels (emulated):
    returns (its host reads, loss, parameters, checks)."""
    from minitx import backend, sync
    from minitx.nn import Transformer
    from minitx.train import train_step

    minitx.manual_seed(0)
    model = Transformer(9, 11, d_model=8, num_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=12,
                        max_len=8, dropout=0.1, positional="learned")
    opt = optim.Adam(model.parameters(), lr=1e-2)
    src = np.array([[3, 4, 5, 6, 2], [7, 8, 2, 0, 0]])
    tgt = np.array([[1, 5, 6, 7, 2], [1, 9, 10, 2, 0]])

    def loss_fn(model, batch):
        logits = model(src, tgt[:, :-1])
        return F.cross_entropy(logits, minitx.tensor(tgt[:, 1:]), ignore_index=0, label_smoothing=0.1), 7

    checks = sync.DeferredChecks() if sync_free else None
    with K.emulate_on_cpu(), kernel_launches() as names, backend.count_host_reads() as reads:
        loss, _ = train_step(model, None, loss_fn, opt, clip_norm=0.5, checks=checks)
    assert {"adam_step", "cross_entropy_forward", "layer_norm_forward"} <= set(names)
    return reads.count, float(loss), [p.numpy() for p in model.parameters()], checks


def test_a_sync_free_step_on_the_kernels_reads_nothing_and_gives_the_eager_bits():
    eager_reads, eager_loss, eager_params, _ = _transformer_step(False)
    reads, loss, params, checks = _transformer_step(True)
    assert eager_reads > 0 and reads == 0
    assert loss == eager_loss
    for a, b in zip(eager_params, params):
        np.testing.assert_array_equal(a, b)
    checks.raise_first()


@pytest.mark.parametrize("fused", [False, True])
def test_a_layer_norm_adds_into_x_only_when_everything_is_of_x_dtype(fused, monkeypatch):
    """float32 x with float64 weights: dx is computed in float64 and cast, so the layer norm
    leaves the sum to the engine (adding before the cast would round once where the engine
    rounds twice): the bits with and without a debugging hook are the same, and NaN where the
    engine's sum is NaN (which of two NaNs a sum keeps, sign included, is the compiler's and the
    hardware's choice; the reference path adds in the engine's order, pending + dx)."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((16, 6)).astype(np.float32)
    x[0, 0] = np.inf  # a NaN row of gradients from both terms
    scale = rng.standard_normal((16, 6)).astype(np.float32)
    scale[0] = np.nan
    cases = [(x, rng.standard_normal(6), rng.standard_normal(6)),                       # wider w and b
             (x, rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32))]
    for arrays in cases:
        def gradient():
            xt, w, b = leaves(arrays)
            with np.errstate(all="ignore"):
                (xt * scale + F.layer_norm(xt, w, b)).sum().backward()
            return xt.grad.numpy()

        with path_context(fused):
            fast, plain = with_and_without_a_debugging_hook(gradient, monkeypatch)
        nan = np.isnan(plain)
        assert nan[0].all() and (np.isnan(fast) == nan).all()
        np.testing.assert_array_equal(fast[~nan].view(np.uint32), plain[~nan].view(np.uint32))
        if not fused:
            np.testing.assert_array_equal(fast.view(np.uint32), plain.view(np.uint32))
