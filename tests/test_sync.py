"""Host reads, counted, and checks kept on the device (minitx.sync).

A training step on the GPU must not read the device back: each read drains the launch queue,
and a captured CUDA graph cannot contain one. These tests count the reads (the count is the
same on NumPy, where the code paths are the same), check that deferred checks raise the same
errors as eager ones, naming the step, and that a deferred optimizer step and clipping give
the same bits as eager ones when nothing fails and change nothing when a gradient is NaN.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitx
from minitx import backend, optim, sync
from minitx.optim.clip import clip_grads_on_device


def test_every_host_read_is_counted():
    a = np.arange(6)
    with backend.count_host_reads() as reads:
        backend.to_host(a)
        backend.host_ints(a.min(), a.max())
        backend.to_numpy(a)  # already on the host: no read
    assert reads.count == 2


def _ids_error(value):
    return IndexError(f"lookup: id {value} is out of range for a table of 5 rows")


def test_check_in_range_raises_at_once_outside_deferring():
    sync.check_in_range(np.array([0, 4, 2]), 5, _ids_error)
    with pytest.raises(IndexError, match="id 7 is out of range"):
        sync.check_in_range(np.array([0, 7, 2]), 5, _ids_error)
    with pytest.raises(IndexError, match="id -1 is out of range"):
        sync.check_in_range(np.array([-1, 7]), 5, _ids_error)
    sync.check_in_range(np.zeros(0, dtype=np.int64), 5, _ids_error)  # empty: nothing to check


def test_deferred_checks_record_without_reading_and_raise_the_first_failure_with_its_step():
    checks = sync.DeferredChecks()
    with backend.count_host_reads() as reads, checks.deferring():
        for ids in ([0, 1], [2, 9], [-3, 1], [1, 1]):
            checks.begin_step()
            sync.check_in_range(np.array(ids), 5, _ids_error)
    assert reads.count == 0
    with pytest.raises(IndexError, match=r"id 9 is out of range for a table of 5 rows \(at step 2\)"):
        checks.raise_first()
    assert [step for step, _ in checks.failures()] == [2]  # one record per check: its first failure
    checks.clear()
    checks.raise_first()  # nothing left


def test_deferred_checks_order_failures_of_different_checks_by_step():
    checks = sync.DeferredChecks()
    checks.set_step(10)
    with checks.deferring():
        checks.begin_step()
        sync.check_in_range(np.array([0, 8]), 8, lambda v: IndexError(f"targets: {v} not in [0, 8)"))
        checks.begin_step()
        sync.check_in_range(np.array([6]), 5, _ids_error)
    failures = checks.failures()
    assert [step for step, _ in failures] == [11, 12]
    assert str(failures[0][1]) == "targets: 8 not in [0, 8)"


def _model_and_grads(seed, nan_at=None, scale=1.0):
    rng = np.random.default_rng(seed)
    params = [minitx.tensor(rng.normal(size=shape).astype(np.float32), requires_grad=True)
              for shape in ((3, 4), (4,), (2, 2))]
    for k, p in enumerate(params):
        g = (scale * rng.normal(size=p.shape)).astype(np.float32)
        if k == nan_at:
            g.reshape(-1)[0] = np.nan
        p.grad = minitx.tensor(g)
    return params


def _adam(params):
    return optim.Adam(params, lr=1e-2, betas=(0.9, 0.98), eps=1e-9, weight_decay=0.01)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 1000), steps=st.integers(1, 3))
def test_a_deferred_adam_step_gives_the_eager_bits(seed, steps):
    eager, deferred = _model_and_grads(seed), _model_and_grads(seed)
    opt_eager, opt_deferred = _adam(eager), _adam(deferred)
    checks = sync.DeferredChecks()
    for _ in range(steps):
        opt_eager.step()
        with backend.count_host_reads() as reads, checks.deferring():
            opt_deferred.step()
        assert reads.count == 0
    for a, b in zip(eager, deferred):
        np.testing.assert_array_equal(a.data, b.data)
    for a, b in zip(eager, deferred):
        for key in ("exp_avg", "exp_avg_sq"):
            np.testing.assert_array_equal(opt_eager.state[a][key], opt_deferred.state[b][key])
    checks.raise_first()  # no failure recorded


def test_a_non_finite_gradient_skips_the_deferred_step_and_raises_the_eager_error_later():
    params = _model_and_grads(0)
    opt = _adam(params)
    opt.step()  # state exists, so the skipped step has moments to leave alone
    before = [p.data.copy() for p in params] + [opt.state[p][key].copy() for p in params
                                                 for key in ("exp_avg", "exp_avg_sq")]
    for p, g in zip(params, _model_and_grads(1, nan_at=1)):
        p.grad = g.grad
    checks = sync.DeferredChecks()
    checks.set_step(41)
    with checks.deferring():
        checks.begin_step()
        opt.step()
    after = [p.data for p in params] + [opt.state[p][key] for p in params for key in ("exp_avg", "exp_avg_sq")]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(FloatingPointError) as deferred_error:
        checks.raise_first()
    with pytest.raises(FloatingPointError) as eager_error:
        opt.step()
    assert str(deferred_error.value) == f"{eager_error.value} (at step 42)"


def test_an_optimizer_that_cannot_skip_refuses_deferred_steps():
    params = _model_and_grads(0)
    with sync.DeferredChecks().deferring(), pytest.raises(TypeError, match="SGD.step: .*cannot"):
        optim.SGD(params, lr=0.1).step()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 1000), max_norm=st.sampled_from([0.0, 0.5, 1.0, 3.0, 1e6]),
       scale=st.sampled_from([1e-3, 1.0, 1e3]), dtype=st.sampled_from([np.float32, np.float64]))
def test_clipping_on_the_device_gives_the_bits_of_clip_grad_norm(seed, max_norm, scale, dtype):
    eager = [p.grad.data.astype(dtype) for p in _model_and_grads(seed, scale=scale)]
    device = [g.copy() for g in eager]
    holders = [minitx.tensor(np.zeros_like(g)) for g in eager]
    for holder, g in zip(holders, eager):
        holder.grad = minitx.Tensor(g)  # clip_grad_norm_ scales holder.grad.data, which is g
    total_eager = optim.clip_grad_norm_(holders, max_norm)
    with backend.count_host_reads() as reads:
        total = clip_grads_on_device(device, max_norm)
    assert reads.count == 0
    assert float(total) == total_eager
    for a, b in zip(eager, device):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("max_norm", [0.1, 1e6])
def test_clipping_on_the_device_scales_every_gradient_in_one_launch_through_the_kernels(max_norm, monkeypatch):
    """On the kernel path (their CPU build) the factor min(1, max_norm / (norm + 1e-6)) scales
    every contiguous gradient in one launch, a non-contiguous one elementwise, each as
    g * factor in float32 would: the same bits."""
    from minitx import kernels
    from minitx.kernels import cpu_harness

    grads = [p.grad.data.astype(np.float32) for p in _model_and_grads(5)]
    grads.append(np.random.default_rng(2).standard_normal((6, 4)).astype(np.float32).T)  # a transposed view
    originals = [g.copy() for g in grads]
    launched, backend_ = [], cpu_harness.cpu_backend()
    original_launch = backend_.launch
    monkeypatch.setattr(backend_, "launch", lambda file, kernel, *a, **k: (launched.append(kernel),
                                                                           original_launch(file, kernel, *a, **k))[1])
    with kernels.emulate_on_cpu(), backend.count_host_reads() as reads:
        total = clip_grads_on_device(grads, max_norm)
    assert reads.count == 0 and launched.count("scale_inplace") == 1
    factor = np.float32(min(1.0, max_norm / (float(total) + 1e-6)))
    for got, before in zip(grads, originals):
        np.testing.assert_array_equal(got, before * factor)


def test_clipping_on_the_device_leaves_non_finite_gradients_alone():
    grads = [p.grad.data for p in _model_and_grads(3, nan_at=0)]
    copies = [g.copy() for g in grads]
    total = clip_grads_on_device(grads, 0.1)
    assert np.isnan(total)
    for a, b in zip(grads, copies):
        np.testing.assert_array_equal(a, b)


def test_one_gradient_listed_twice_is_scaled_twice_on_the_kernel_path_too():
    """scale_all keeps the elementwise meaning for an array that appears twice (scaled by f * f):
    the one-launch kernel would have two blocks write the same elements, so it is not used."""
    from minitx import kernels
    from minitx.optim.clip import scale_all

    g = np.arange(1, 9, dtype=np.float32)
    with kernels.emulate_on_cpu():
        scale_all([g, g], np.array(0.5, np.float32))
    np.testing.assert_array_equal(g, np.arange(1, 9, dtype=np.float32) * 0.25)
