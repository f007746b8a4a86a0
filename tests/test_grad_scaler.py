"""GradScaler (minitx.optim.grad_scaler): the dynamic loss scale of float16 training.

Its schedule (back off on an overflow, grow after growth_interval clean steps) against a pure
Python model and against torch.amp.GradScaler("cpu"), bit for bit; an overflowed step skipped
with the parameters and the optimizer's state untouched, eagerly and inside
DeferredChecks.deferring() with no host read; its errors and its saved state."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitx
from minitx import amp, backend, optim, sync
from minitx.optim import SGD, Adam, GradScaler

SHAPES = [(3, 4), (5,)]

# a step's gradients: all finite, or one element inf, -inf or NaN
EVENTS = st.sampled_from(["finite", "finite", "inf", "-inf", "nan"])
FACTORS = dict(init_scale=st.sampled_from([2.0 ** 16, 3.7, 2.0 ** -6, 1e9]),
               growth_factor=st.sampled_from([2.0, 1.5, 3.0]),
               backoff_factor=st.sampled_from([0.5, 0.25, 0.7]),
               growth_interval=st.integers(1, 4))


def model_schedule(events, init_scale, growth_factor, backoff_factor, growth_interval):
    """The schedule in plain Python: (scale, tracker) after each step's update; each product in
    float64 (Python floats), rounded once to float32."""
    scale, tracker, out = float(np.float32(init_scale)), 0, []
    for event in events:
        if event != "finite":
            scale, tracker = float(np.float32(scale * backoff_factor)), 0
        else:
            tracker += 1
            if tracker == growth_interval:
                grown = scale * growth_factor
                if grown <= np.finfo(np.float32).max:  # float32 would round it to inf: the scale stays
                    scale = float(np.float32(grown))
                tracker = 0
        out.append((scale, tracker))
    return out


def scaled_grads(rng, event):
    """The gradients a backward of the scaled loss left, as float32 arrays, one poisoned by ``event``."""
    grads = [(rng.standard_normal(s) * 100).astype(np.float32) for s in SHAPES]
    if event != "finite":
        grads[rng.integers(len(grads))].reshape(-1)[0] = float(event)
    return grads


def params(seed=0):
    rng = np.random.default_rng(seed)
    return [minitx.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True) for s in SHAPES]


@settings(max_examples=30, deadline=None)
@given(events=st.lists(EVENTS, min_size=1, max_size=12), seed=st.integers(0, 10**6), **FACTORS)
def test_the_schedule_follows_the_python_model_and_pytorchs_gradscaler(events, seed, init_scale, growth_factor,
                                                                      backoff_factor, growth_interval):
    """Each step: the same scaled gradients in both frameworks, unscale_, SGD's step, update.
    The unscaled gradients, the scale and the tracker agree bit for bit; the parameters, set
    equal before each step, to float32's rounding of the update (each framework adds lr * g its
    own way), and where the step was skipped, bit for bit as they were."""
    torch = pytest.importorskip("torch")
    factors = dict(init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                   growth_interval=growth_interval)
    scaler, t_scaler = GradScaler(**factors), torch.amp.GradScaler("cpu", **factors)
    ps = params()
    t_ps = [torch.tensor(p.numpy(), requires_grad=True) for p in ps]
    opt, t_opt = SGD(ps, lr=1e-3), torch.optim.SGD(t_ps, lr=1e-3)
    scaler.scale(minitx.tensor(1.0))  # makes the scale (a backward would too; the gradients are set below)
    t_scaler.scale(torch.tensor(1.0))
    rng = np.random.default_rng(seed)
    expected = model_schedule(events, **factors)
    for event, (scale, tracker) in zip(events, expected):
        before = [p.numpy().copy() for p in ps]
        for p, t_p, g in zip(ps, t_ps, scaled_grads(rng, event)):
            p.grad, t_p.grad = minitx.tensor(g), torch.tensor(g)
            with torch.no_grad():
                t_p.copy_(torch.tensor(p.numpy()))
        scaler.unscale_(opt)
        t_scaler.unscale_(t_opt)
        for p, t_p in zip(ps, t_ps):
            np.testing.assert_array_equal(p.grad.numpy(), t_p.grad.numpy())
        scaler.step(opt)
        t_scaler.step(t_opt)
        scaler.update()
        t_scaler.update()
        assert scaler.get_scale() == t_scaler.get_scale() == scale
        assert scaler.state_dict() == {**t_scaler.state_dict(), "scale": scale, "_growth_tracker": tracker}
        for p, t_p, old in zip(ps, t_ps, before):
            step = np.abs(p.numpy() - old).max()
            np.testing.assert_allclose(p.numpy(), t_p.detach().numpy(), rtol=2.0 ** -23, atol=2.0 ** -23 * step)
            if event != "finite":
                np.testing.assert_array_equal(p.numpy(), old)


def test_the_scale_does_not_grow_past_float32():
    """At 2^127 a growth by 2 would be inf in float32: the scale stays, as PyTorch's does."""
    torch = pytest.importorskip("torch")
    scaler = GradScaler(init_scale=2.0 ** 127, growth_interval=1)
    t_scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 127, growth_interval=1)
    p, t_p = minitx.tensor(np.ones(2, np.float32), requires_grad=True), torch.ones(2, requires_grad=True)
    opt, t_opt = SGD([p], lr=0.1), torch.optim.SGD([t_p], lr=0.1)
    scaler.scale((p * 0.25).sum()).backward()
    t_scaler.scale((t_p * 0.25).sum()).backward()
    for s, o in ((scaler, opt), (t_scaler, t_opt)):
        s.step(o)
        s.update()
    assert scaler.get_scale() == t_scaler.get_scale() == 2.0 ** 127
    assert scaler.state_dict()["_growth_tracker"] == 0


def test_the_scale_multiplies_the_loss_and_its_gradients_exactly():
    """A power-of-two scale is exact in float64: backward gives S times the gradient, and
    unscale_ gives it back bit for bit."""
    x = minitx.tensor(np.random.default_rng(0).standard_normal(5), dtype="float64", requires_grad=True)
    (x * x).sum().backward()
    plain = x.grad.numpy().copy()
    x.grad = None
    scaler = GradScaler(init_scale=2.0 ** 20)
    scaled = scaler.scale((x * x).sum())
    assert scaled.item() == 2.0 ** 20 * (x.numpy() ** 2).sum()
    scaled.backward()
    np.testing.assert_array_equal(x.grad.numpy(), plain * 2.0 ** 20)
    scaler.unscale_(SGD([x], lr=0.1))
    np.testing.assert_array_equal(x.grad.numpy(), plain)


# ------------------------------------------------------------------ the skipped step


def _adam_steps(events, deferred):
    """Adam under a scaler for the events' gradients; returns (params, optimizer, scaler, host reads)."""
    ps = params()
    opt, scaler = Adam(ps, lr=1e-2), GradScaler(init_scale=2.0 ** 8, growth_interval=2)
    checks = sync.DeferredChecks() if deferred else None
    rng = np.random.default_rng(5)
    reads = 0
    for event in events:
        grads = scaled_grads(rng, event)
        with checks.deferring() if deferred else _nothing(), backend.count_host_reads() as counted:
            scaler.scale(minitx.tensor(1.0))
            for p, g in zip(ps, grads):
                p.grad = minitx.tensor(g)
            scaler.step(opt)
            scaler.update()
        reads += counted.count
    if deferred:
        checks.raise_first()  # an overflow under the scaler is no failure: nothing to raise
    return ps, opt, scaler, reads


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("deferred", [False, True])
def test_an_overflowed_step_leaves_the_parameters_and_the_moments_and_halves_the_scale(deferred):
    events = ["finite", "finite", "inf"]
    ps, opt, scaler, _ = _adam_steps(events[:2], deferred)
    before = [p.numpy().copy() for p in ps]
    moments = [{k: np.array(v, copy=True) for k, v in opt.state[p].items() if k != "step"} for p in ps]
    scale = scaler.get_scale()
    ps2, opt2, scaler2, _ = _adam_steps(events, deferred)
    for p, old in zip(ps2, before):
        np.testing.assert_array_equal(p.numpy(), old)
    for p, state in zip(ps2, moments):
        for key, value in state.items():
            np.testing.assert_array_equal(opt2.state[p][key], value)
    assert scaler2.get_scale() == scale / 2
    assert scale == 2.0 ** 9  # the two clean steps grew it once


def test_a_step_under_the_scaler_reads_nothing_from_the_device_and_gives_the_eager_result():
    """Adam skips on the device in both modes: no host read, eager or deferred, the same bits;
    and its step count t leaves the skipped steps out (as PyTorch's Adam, which does not step then)."""
    events = ["finite", "nan", "finite", "finite", "-inf", "finite"]
    eager, eager_opt, eager_scaler, eager_reads = _adam_steps(events, False)
    free, free_opt, free_scaler, free_reads = _adam_steps(events, True)
    assert eager_reads == free_reads == 0
    for a, b in zip(eager, free):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert eager_scaler.state_dict() == free_scaler.state_dict()
    assert [int(s["step"]) for s in eager_opt.state.values()] == [int(s["step"]) for s in free_opt.state.values()] \
        == [4, 4]  # six steps, two skipped


@pytest.mark.parametrize("deferred", [False, True])
def test_adam_under_the_scaler_follows_pytorchs_and_skipped_steps_do_not_count(deferred):
    """Adam(W) with the loss scaler against torch.optim.Adam(W) with torch.amp.GradScaler("cpu"),
    the same scaled gradients each step, two of them overflowing: the parameters agree after
    every step to float32's rounding, and t counts the steps taken (4 of 6), so the bias
    corrections of the steps after a skip agree too (counting the skipped ones, as minitx did,
    put the parameters 1.4e-3 away from PyTorch's after the third step, at lr 1e-2)."""
    torch = pytest.importorskip("torch")
    events = ["finite", "inf", "finite", "nan", "finite", "finite"]
    for opt_class, t_class in ((optim.Adam, torch.optim.Adam), (optim.AdamW, torch.optim.AdamW)):
        ps = params()
        t_ps = [torch.tensor(p.numpy(), requires_grad=True) for p in ps]
        opt, t_opt = opt_class(ps, lr=1e-2, weight_decay=0.1), t_class(t_ps, lr=1e-2, weight_decay=0.1)
        scaler, t_scaler = GradScaler(init_scale=2.0 ** 10), torch.amp.GradScaler("cpu", init_scale=2.0 ** 10)
        checks = sync.DeferredChecks()
        rng = np.random.default_rng(7)
        for step, event in enumerate(events):
            scaler.scale(minitx.tensor(1.0))
            t_scaler.scale(torch.tensor(1.0))
            for p, t_p, g in zip(ps, t_ps, scaled_grads(rng, event)):
                p.grad, t_p.grad = minitx.tensor(g), torch.tensor(g)
            with checks.deferring() if deferred else _nothing():
                scaler.step(opt)
                scaler.update()
            t_scaler.step(t_opt)
            t_scaler.update()
            for p, t_p in zip(ps, t_ps):
                np.testing.assert_allclose(p.numpy(), t_p.detach().numpy(), rtol=1e-6, atol=1e-7,
                                           err_msg=f"{opt_class.__name__}, after step {step + 1}")
        checks.raise_first()
        assert [int(s["step"]) for s in opt.state.values()] == [int(t_opt.state[p]["step"]) for p in t_ps] == [4, 4]


def test_sgd_reads_the_flag_once_and_cannot_step_inside_deferring():
    ps = params()
    opt, scaler = SGD(ps, lr=0.1), GradScaler()
    scaler.scale(minitx.tensor(1.0))
    for p in ps:
        p.grad = minitx.tensor(np.ones(p.shape, np.float32))
    with backend.count_host_reads() as reads:
        scaler.step(opt)
    assert reads.count == 1  # the scaler's flag (SGD's own NaN/inf check reads too, counted on a GPU)
    scaler.update()
    scaler.scale(minitx.tensor(1.0))
    with sync.DeferredChecks().deferring(), pytest.raises(TypeError, match="SGD.step: a step inside Deferred"):
        scaler.step(opt)


def test_unscale_before_clipping_clips_the_true_gradients():
    ps = params()
    opt, scaler = Adam(ps, lr=1e-2), GradScaler(init_scale=1024.0)
    grads = scaled_grads(np.random.default_rng(1), "finite")
    scaler.scale(minitx.tensor(1.0))
    for p, g in zip(ps, grads):
        p.grad = minitx.tensor(g)
    scaler.unscale_(opt)
    norm = optim.clip_grad_norm_(ps, max_norm=1.0)
    true = [g / np.float32(1024) for g in grads]
    assert norm == pytest.approx(math.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in true)), rel=1e-6)
    scaler.step(opt)  # not unscaled twice
    scaler.update()
    assert scaler.get_scale() == 1024.0


def test_two_optimizers_back_off_once_when_either_overflowed():
    a, b = params(1), params(2)
    opt_a, opt_b, scaler = SGD(a, lr=0.1), SGD(b, lr=0.1), GradScaler(init_scale=8.0, growth_interval=1)
    scaler.scale(minitx.tensor(1.0))
    for p in a + b:
        p.grad = minitx.tensor(np.ones(p.shape, np.float32))
    b[1].grad.data[0] = np.inf
    scaler.step(opt_a)
    scaler.step(opt_b)
    scaler.update()
    assert scaler.get_scale() == 4.0


def test_disabled_it_passes_everything_through():
    ps = params()
    scaler = GradScaler(enabled=False)
    loss = (ps[0] * ps[0]).sum()
    assert scaler.scale(loss) is loss and not scaler.is_enabled()
    loss.backward()
    opt = SGD(ps[:1], lr=0.1)
    expected = ps[0].numpy() - np.float32(0.1) * ps[0].grad.numpy()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(ps[0].numpy(), expected)
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {}


def test_the_settings_getters_and_setters_steer_the_schedule_as_pytorchs():
    """get_/set_growth_factor, get_/set_backoff_factor, get_/set_growth_interval between the steps
    of a run: the scale after each update is PyTorch's, bit for bit, and the settings read back and
    survive a state_dict round trip."""
    torch = pytest.importorskip("torch")
    scaler, t_scaler = GradScaler(init_scale=8.0, growth_interval=6), torch.amp.GradScaler("cpu", init_scale=8.0,
                                                                                         growth_interval=6)
    ps, t_p = params(), torch.zeros(3, requires_grad=True)
    opt, t_opt = SGD(ps[:1], lr=0.0), torch.optim.SGD([t_p], lr=0.0)
    scaler.scale(minitx.tensor(1.0))
    t_scaler.scale(torch.tensor(1.0))
    settings_then = {2: ("set_growth_factor", 3.0), 3: ("set_growth_interval", 4), 7: ("set_backoff_factor", 0.25),
                     9: ("set_growth_interval", 1)}
    for i, event in enumerate(["finite"] * 6 + ["inf", "finite", "inf", "finite", "finite"]):
        if i in settings_then:
            name, value = settings_then[i]
            getattr(scaler, name)(value)
            getattr(t_scaler, name)(value)
        grad = np.full(SHAPES[0], np.inf if event == "inf" else 1.0, np.float32)
        ps[0].grad, t_p.grad = minitx.tensor(grad), torch.tensor(grad[0, :3])
        for sc, o in ((scaler, opt), (t_scaler, t_opt)):
            sc.step(o)
            sc.update()
        assert scaler.get_scale() == t_scaler.get_scale()
        assert scaler.state_dict() == t_scaler.state_dict()
        assert [scaler.get_growth_factor(), scaler.get_backoff_factor(), scaler.get_growth_interval()] == \
               [t_scaler.get_growth_factor(), t_scaler.get_backoff_factor(), t_scaler.get_growth_interval()]
    assert scaler.get_scale() == 8.0 * 3.0 * 0.5 * 0.25 * 3.0 ** 2  # grown at step 3, backed off twice, grown twice
    restored = GradScaler()
    restored.load_state_dict(scaler.state_dict())
    assert (restored.get_growth_factor(), restored.get_backoff_factor(), restored.get_growth_interval()) == (3.0, 0.25, 1)


def test_an_interval_cut_below_the_clean_steps_counted_grows_at_the_next_clean_step():
    """5 clean steps counted, the interval cut to 3: the tracker is kept at 2, so the state saved then
    loads back, and the next clean step grows S (PyTorch's tracker counts on past the interval, and
    its S does not grow again: docs/ops.md)."""
    scaler, opt = GradScaler(init_scale=8.0, growth_interval=6), SGD(params()[:1], lr=0.0)
    scaler.scale(minitx.tensor(1.0))
    for step in range(6):
        if step == 5:
            scaler.set_growth_interval(3)
            assert scaler.state_dict()["_growth_tracker"] == 2
            GradScaler().load_state_dict(scaler.state_dict())
        opt.param_groups[0]["params"][0].grad = minitx.ones(*SHAPES[0])
        scaler.step(opt)
        scaler.update()
    assert scaler.get_scale() == 16.0 and scaler.state_dict()["_growth_tracker"] == 0


def test_the_setters_refuse_what_the_constructor_refuses():
    scaler = GradScaler(enabled=False)
    assert not scaler.is_enabled() and scaler.get_growth_interval() == 2000 and scaler.get_growth_factor() == 2.0
    for call, message in ((lambda: scaler.set_growth_factor(1.0), "GradScaler.set_growth_factor: invalid new_factor 1.0"),
                          (lambda: scaler.set_backoff_factor(1.0), "GradScaler.set_backoff_factor: invalid new_factor 1.0"),
                          (lambda: scaler.set_backoff_factor(math.nan), "set_backoff_factor: invalid new_factor nan"),
                          (lambda: scaler.set_growth_interval(0), "GradScaler.set_growth_interval: invalid new_interval 0"),
                          (lambda: scaler.set_growth_interval(2.5), "set_growth_interval: invalid new_interval 2.5")):
        with pytest.raises(ValueError, match=message):
            call()
    fresh = GradScaler(growth_interval=5)
    fresh.load_state_dict({**fresh.state_dict(), "_growth_tracker": 4})
    fresh.set_growth_interval(2)  # before the first scale(): the tracker to be made is kept below it too
    assert fresh.state_dict()["_growth_tracker"] == 1 and fresh.get_growth_interval() == 2


# ------------------------------------------------------------------ state and errors


def test_the_state_round_trips_before_and_after_the_first_scale():
    fresh = GradScaler(init_scale=512.0, growth_interval=3)
    assert fresh.state_dict() == {"scale": 512.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                  "growth_interval": 3, "_growth_tracker": 0}
    ps, opt, scaler, _ = _adam_steps(["finite", "inf", "finite"], False)
    saved = scaler.state_dict()
    assert saved["scale"] == 128.0 and saved["_growth_tracker"] == 1 and saved["growth_interval"] == 2
    fresh.load_state_dict(saved)  # before its first scale(): the scale is made from the saved one
    assert fresh.state_dict() == saved
    used = GradScaler()
    used.scale(minitx.tensor(1.0))
    used.load_state_dict(saved)  # after: written into the device scalars
    assert used.state_dict() == saved and used.get_scale() == 128.0


@pytest.mark.parametrize("edit, message", [
    ({"scale": 0.0}, "invalid scale 0.0; expected a finite number 0 < scale"),
    ({"scale": 1e39}, "invalid scale 1e\\+39; expected a finite number 0 < scale <= 3.4"),
    ({"growth_factor": 1.0}, "invalid growth_factor 1.0"),
    ({"backoff_factor": 1.0}, "invalid backoff_factor 1.0"),
    ({"growth_interval": 0}, "invalid growth_interval 0; expected a whole number >= 1"),
    ({"_growth_tracker": 2.5}, "invalid _growth_tracker 2.5"),
    ({"_growth_tracker": 2000}, "_growth_tracker 2000 must count below growth_interval 2000"),
    ({"extra": 1}, "the state has keys"),
])
def test_a_bad_state_is_refused_and_nothing_changes(edit, message):
    scaler = GradScaler(init_scale=4.0)
    with pytest.raises(ValueError, match=message):
        scaler.load_state_dict({**GradScaler().state_dict(), **edit})
    assert scaler.state_dict() == GradScaler(init_scale=4.0).state_dict()
    with pytest.raises(ValueError, match="expected the dict of a GradScaler's state_dict"):
        scaler.load_state_dict({})


@pytest.mark.parametrize("kwargs, message", [
    (dict(init_scale=0), "GradScaler: invalid init_scale 0"),
    (dict(init_scale=math.inf), "GradScaler: invalid init_scale inf"),
    (dict(init_scale=1e39), "GradScaler: invalid init_scale 1e\\+39"),
    (dict(growth_factor=0.5), "GradScaler: invalid growth_factor 0.5"),
    (dict(backoff_factor=0), "GradScaler: invalid backoff_factor 0"),
    (dict(growth_interval=1.5), "GradScaler: invalid growth_interval 1.5"),
    (dict(enabled=1), "GradScaler: enabled must be True or False, got 1"),
])
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        GradScaler(**kwargs)


def test_pytorchs_device_is_taken_by_name_and_refused_in_init_scales_place():
    """torch.amp.GradScaler("cuda"), ported as it is, put "cuda" in init_scale's place and was
    refused as an invalid init_scale; the message now says where the device goes."""
    assert GradScaler(device="cuda", init_scale=8.0).state_dict() == GradScaler(init_scale=8.0).state_dict()
    with pytest.raises(TypeError, match=r"GradScaler: got 'cuda' for init_scale, the first argument; PyTorch's "
                                        r"torch.amp.GradScaler takes the device first, .*GradScaler\(device='cuda'\)"):
        GradScaler("cuda")
    with pytest.raises(ValueError, match="GradScaler: unknown device 'tpu'; expected 'cpu' or 'cuda'"):
        GradScaler(device="tpu")


def test_calls_out_of_order_are_refused():
    ps = params()
    opt, scaler = SGD(ps, lr=0.1), GradScaler()
    with pytest.raises(RuntimeError, match="GradScaler.unscale_: no scale yet"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="GradScaler.update: no scale yet"):
        scaler.update()
    scaler.scale(minitx.tensor(1.0))
    with pytest.raises(RuntimeError, match="GradScaler.update: no optimizer was unscaled or stepped"):
        scaler.update()
    for p in ps:
        p.grad = minitx.tensor(np.ones(p.shape, np.float32))
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_: already called on this optimizer since the last update"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="GradScaler.step: already called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="GradScaler.unscale_: called after step"):
        scaler.unscale_(opt)
    scaler.update(new_scale=3.0)
    assert scaler.get_scale() == 3.0
    with pytest.raises(ValueError, match="GradScaler.update: invalid new_scale -1"):
        scaler.update(new_scale=-1)
    with pytest.raises(ValueError, match="GradScaler.update: invalid new_scale 1e\\+39"):  # past float32: inf
        scaler.update(new_scale=1e39)


def test_bad_inputs_are_refused():
    scaler = GradScaler()
    with pytest.raises(TypeError, match="GradScaler.scale: expected the loss Tensor, got float"):
        scaler.scale(1.0)
    with pytest.raises(TypeError, match="GradScaler.scale: the loss has dtype int64"):
        scaler.scale(minitx.tensor([1, 2]))
    low = minitx.tensor(np.ones(2, np.float32), requires_grad=True)
    low.grad = minitx.tensor(np.ones(2, np.float32)).astype("bfloat16")
    scaler.scale(minitx.tensor(1.0))
    with pytest.raises(ValueError, match="the gradient of parameter 0 is bfloat16; the parameters .* must be float32"):
        scaler.unscale_(SGD([low], lr=0.1))


def test_the_precision_table_makes_a_scaler_for_fp16_only():
    assert amp.GradScaler is GradScaler
    assert isinstance(amp.loss_scaler("fp16"), GradScaler) and amp.loss_scaler("fp16").get_scale() == 2.0 ** 16
    assert all(amp.loss_scaler(name) is None for name in ("fp32", "tf32", "bf16"))
    with amp.step_precision("fp16", "cpu")():
        assert amp.active() == np.float16
    with pytest.raises(ValueError, match="precision must be one of fp32, tf32, bf16, fp16, got 'fp8'"):
        amp.loss_scaler("fp8")


def test_a_scaled_loss_whose_graph_is_kept_does_not_stop_the_update():
    """The product keeps its own copy of S: update() writes S while a graph (never backward) holds
    the scaled loss, and a later backward of it still uses the S it was made with."""
    x = minitx.tensor(np.ones(2, np.float32), requires_grad=True)
    scaler, opt = GradScaler(init_scale=4.0), SGD([x], lr=0.1)
    kept = scaler.scale((x * x).sum())
    scaler.update(new_scale=8.0)
    kept.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [8.0, 8.0])  # 4 * 2x
    scaler.step(opt)


def test_step_passes_its_arguments_and_returns_the_optimizers_result_as_pytorchs():
    """PyTorch's scaler.step(opt, *args, **kwargs) returns opt.step(*args, **kwargs); it refuses a
    closure while enabled. Disabled, the closure's loss comes back; enabled, None (no closure)."""
    p = minitx.tensor(np.ones(2, np.float32), requires_grad=True)
    opt = SGD([p], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    assert float(GradScaler(enabled=False).step(opt, closure)) == 2.0
    np.testing.assert_array_equal(p.numpy(), [0.0, 0.0])
    scaler = GradScaler()
    with pytest.raises(RuntimeError, match=r"GradScaler.step: a closure is not supported while the scaler is enabled"):
        scaler.step(opt, closure=closure)
    for o in (opt, Adam([p], lr=0.1)):
        scaler.scale((p * 3.0).sum()).backward()
        assert scaler.step(o) is None
        scaler.update()
    with pytest.raises(TypeError, match=r"GradScaler.step: Adam's step is skipped on the device .* takes no "
                                        r"arguments then; got 1"):
        scaler.scale((p * 3.0).sum()).backward()
        scaler.step(Adam([p], lr=0.1), closure)
