"""L-BFGS (Liu & Nocedal, 1989), as PyTorch defines it: a quasi-Newton method for small, deterministic
problems (fitting a curve, a few thousand weights, the whole data set in every evaluation).

Newton's method steps by -H g, H the inverse of the Hessian. L-BFGS never forms H: it estimates H g
from the last few steps s and the changes y of the gradient over them (``two_loop_direction``),
then walks along that direction, by a fixed rate or as far as a line search finds a good point
(``strong_wolfe``). One ``step(closure)`` runs up to ``max_iter`` such iterations and calls the
closure each time it needs the loss and the gradient at a new point:

    def closure():
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        return loss

    opt = optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
    for _ in range(5):
        opt.step(closure)

All parameters are handled as one flat vector x (every parameter's values, one after another), and
their gradients as one flat g: so PyTorch's LBFGS takes one parameter group only, and so does this one.
"""
from __future__ import annotations

import math

import numpy as np

from minitx import backend, interop
from minitx.autograd.grad_mode import enable_grad
from minitx.autograd.inplace import mark_modified
from minitx.autograd.tensor import Tensor
from minitx.optim.optimizer import Optimizer, _is_torch_tensor, check_count, check_number

#: the strong Wolfe conditions' constants: sufficient decrease (c1) and curvature (c2), PyTorch's
C1, C2 = 1e-4, 0.9


def two_loop_direction(g, old_dirs, old_stps, ro, H_diag):
    """The L-BFGS direction d = -H g: Newton's step with H, the inverse Hessian, estimated from the
    last m steps, without ever forming H (the two-loop recursion, Nocedal & Wright, algorithm 7.4).

    With s_i the i-th kept step (``old_stps[i]``, x after it minus x before), y_i the change of the
    gradient over it (``old_dirs[i]``) and rho_i = 1 / (y_i . s_i) (``ro[i]``), oldest first:

        q = -g
        for i = m-1 down to 0:    al_i = rho_i * (s_i . q);    q = q - al_i * y_i
        r = H_diag * q                          (H's first guess: H_diag * I)
        for i = 0 up to m-1:      be_i = rho_i * (y_i . r);    r = r + (al_i - be_i) * s_i
        d = r

    H is the matrix that maps each y_i back onto its s_i (a secant condition per pair, the latest
    ones exactly) and stays nearest H_diag * I otherwise; H_diag = (y . s) / (y . y) of the latest
    pair, the curvature along it. With no pairs (m = 0), d = -H_diag * g.
    """
    q = -g
    al = [0.0] * len(old_dirs)
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = float(old_stps[i] @ q) * ro[i]
        q = q - al[i] * old_dirs[i]
    r = q * H_diag
    for i in range(len(old_dirs)):
        be_i = float(old_dirs[i] @ r) * ro[i]
        r = r + (al[i] - be_i) * old_stps[i]
    return r


def cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """Where the cubic through (x1, f1) with slope g1 and (x2, f2) with slope g2 has its minimum,
    clamped into ``bounds`` (by default the interval between x1 and x2). For x1 <= x2:

        d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
        d2 = sqrt(d1^2 - g1 * g2)
        x = x2 - (x2 - x1) * (g2 + d2 - d1) / (g2 - g1 + 2 * d2)

    (for x1 > x2 the same with the two points' roles swapped). When d1^2 < g1 * g2 the cubic has
    no minimum there: the middle of the bounds; so too where the formula would divide by zero
    (x1 = x2, or g2 - g1 + 2 * d2 = 0: no cubic, or a flat one), where PyTorch's gives NaN.
    """
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    middle = (low + high) / 2.0
    if x1 == x2:
        return middle
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return middle
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        denominator = g2 - g1 + 2 * d2
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / denominator) if denominator != 0 else middle
    else:
        denominator = g1 - g2 + 2 * d2
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / denominator) if denominator != 0 else middle
    return min(max(x, low), high)


def strong_wolfe(phi, t, d, f, g, gtd, tolerance_change=1e-9, max_ls=25):
    """A step length t along the direction d that satisfies the strong Wolfe conditions (Nocedal &
    Wright, algorithms 3.5 and 3.6, as PyTorch's port of minFunc). With phi(t) = f(x + t d) and
    phi'(t) = g(x + t d) . d (phi'(0) = gtd < 0: d goes downhill):

        phi(t) <= phi(0) + c1 * t * phi'(0)          (sufficient decrease: the Armijo condition)
        |phi'(t)| <= -c2 * phi'(0)                   (strong curvature: near a minimum along d)

    with c1 = 1e-4, c2 = 0.9 (C1, C2). First a bracket: from the given t, try longer steps (each
    a cubic interpolation's guess, between 1.01 t and 10 t) until a t satisfies both conditions,
    or an interval [t_prev, t] must hold such a point (phi rose, or its slope turned upward).
    Then a zoom: shrink the interval, trying the minimum of the cubic through its ends (kept off
    the ends by at least a tenth of its length), until a point satisfies both conditions, the
    interval is shorter than ``tolerance_change`` (measured as its length times max |d|) or the
    search has taken ``max_ls`` evaluations past its first.

    ``phi(t)`` returns (f, g): the loss (a float) and the flat gradient at x + t d. ``f``, ``g``
    and ``gtd`` are phi(0), its gradient and phi'(0). Returns (f, g, t, evaluations): the
    lowest point found, its gradient, its step and how many times phi was called.
    """
    d_norm = float(abs(d).max())
    f_new, g_new = phi(t)
    evaluations = 1
    gtd_new = float(g_new @ d)

    # bracketing: look further along d until an interval holds a point that satisfies both conditions
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > f + C1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):  # too far: phi rose
            bracket, bracket_f, bracket_g, bracket_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -C2 * gtd:  # both conditions hold at t
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:  # phi's slope turned upward: a minimum lies behind t
            bracket, bracket_f, bracket_g, bracket_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        # still going down steeply: extrapolate, between 1.01 t and 10 t
        t_next = cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = phi(t)
        evaluations += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
    if ls_iter == max_ls:  # no bracket in max_ls tries: the interval from 0 to the last t
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink [bracket[low_pos], bracket[high_pos]], low_pos the end with the lower phi
    insufficient_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:  # the interval is too short
            break
        t = cubic_minimum(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # a t within a tenth of the interval's length from an end: moved a tenth in, if the last
        # try was this close too, or t is at an end (else the interval would barely shrink)
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = phi(t)
        evaluations += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
        if f_new > f + C1 * t * gtd or f_new >= bracket_f[low_pos]:
            # no sufficient decrease, or no lower than the low end: t is the new high end
            bracket[high_pos], bracket_f[high_pos], bracket_g[high_pos], bracket_gtd[high_pos] = \
                t, f_new, g_new, gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -C2 * gtd:  # both conditions hold at t
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # phi slopes up from t towards the high end: the minimum lies on the low end's side
                bracket[high_pos], bracket_f[high_pos], bracket_g[high_pos], bracket_gtd[high_pos] = \
                    bracket[low_pos], bracket_f[low_pos], bracket_g[low_pos], bracket_gtd[low_pos]
            # t is the new low end
            bracket[low_pos], bracket_f[low_pos], bracket_g[low_pos], bracket_gtd[low_pos] = \
                t, f_new, g_new, gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], evaluations


class LBFGS(Optimizer):
    """L-BFGS with PyTorch's arguments in its order. ``step(closure)`` runs, over the flat vector x
    of all parameters, with the loss f and its gradient g from the closure (k counts iterations
    over every step so far; t is the step length, d the direction):

        f, g = closure()                              (at the current x)
        if max|g| <= tolerance_grad: return           (already at a minimum)
        repeat up to max_iter times:
            if k = 1:  d = -g                         (no history yet: steepest descent)
            else:      y = g - g_prev;  s = t * d     (the last step, and the gradient's change over it)
                       if y . s > 1e-10: keep (y, s) (the last history_size pairs) and H_diag = (y . s) / (y . y)
                       d = two_loop_direction(g, ...) (-H g, H estimated from the kept pairs)
            t = lr * min(1, 1 / sum|g|)  if k = 1  else  lr
            if g . d > -tolerance_change: stop       (d does not go downhill)
            line_search_fn None:          x = x + t * d; f, g = closure()     (not after the last iteration)
            line_search_fn 'strong_wolfe': t = strong_wolfe(...) from this t;  x = x + t * d
            stop when: max_iter iterations, max_eval closure calls in this step, max|g| <= tolerance_grad,
                       max|t * d| <= tolerance_change, or |f - f_prev| < tolerance_change

    A pair with y . s <= 1e-10 is dropped: it would make H lose its positive curvature. The
    default max_eval is max_iter * 5 // 4. Returns what the closure returned at the step's start.

    One parameter group only (all parameters form one vector), on one device. The state is
    one for all the parameters, kept (as PyTorch's) as parameter 0's: 'func_evals' and 'n_iter'
    (the closure calls and iterations so far), 'd', 't', 'old_dirs' (the kept y), 'old_stps' (the
    kept s), 'ro' (their 1 / (y . s)), 'H_diag', 'prev_flat_grad' and 'prev_loss'. PyTorch's also
    holds 'al', a scratch list that every two-loop recursion writes before it reads it: not
    kept here, and dropped from PyTorch's state dict.

    ``check_finite`` (minitx's): every loss and gradient the closure gives is checked; a NaN or an
    infinity raises FloatingPointError, and the parameters and the state are put back as they
    were before the step. With check_finite=False they flow on as PyTorch's do.
    """

    STATE = {"func_evals": "count", "n_iter": "count", "d": "flat", "t": "number", "old_dirs": "flats",
             "old_stps": "flats", "ro": "numbers", "H_diag": "number", "prev_flat_grad": "flat",
             "prev_loss": "number"}

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None, *, check_finite=True):
        if not isinstance(params, (Tensor, dict)):
            params = list(params)
            groups = sum(isinstance(p, dict) for p in params)
            if groups > 1:
                raise ValueError(f"LBFGS: got {groups} parameter groups; expected one (LBFGS works over all its "
                                 "parameters as one flat vector, as PyTorch's): give all the parameters in one list")
        if max_eval is None:
            max_eval = check_count("LBFGS", "max_iter", max_iter, low=1) * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults, check_finite=check_finite)
        self._params = self.param_groups[0]["params"]
        devices = sorted({str(p.device) for p in self._params})
        if len(devices) > 1:
            raise ValueError(f"LBFGS: parameters on {' and '.join(devices)}; expected one device (they are "
                             "joined into one vector)")
        self._dtype = np.result_type(*(p.dtype for p in self._params))  # the flat vectors'
        self._numel = sum(p.data.size for p in self._params)

    def add_param_group(self, group: dict) -> None:
        if self.param_groups:
            raise ValueError("LBFGS: got a second parameter group; expected one (LBFGS works over all its "
                             "parameters as one flat vector, as PyTorch's)")
        super().add_param_group(group)

    def _check_group(self, group):
        check_number("LBFGS", "lr", group["lr"], low=0)
        for name in ("max_iter", "max_eval", "history_size"):
            check_count("LBFGS", name, group[name], low=1)
        check_number("LBFGS", "tolerance_grad", group["tolerance_grad"], low=0)
        check_number("LBFGS", "tolerance_change", group["tolerance_change"], low=0)
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: invalid line_search_fn {group['line_search_fn']!r}; expected None or "
                             "'strong_wolfe'")

    # ------------------------------------------------------------------ the flat vector
    def _flat_grad(self):
        """g: every parameter's gradient, flattened and joined (zeros for a parameter without one)."""
        xp = backend.get_array_module(self._params[0].data)
        parts = []
        for index, p in enumerate(self._params):
            if p.grad is None:
                parts.append(xp.zeros(p.data.size, dtype=self._dtype))
            elif p.grad.shape != p.shape:
                raise ValueError(f"LBFGS.step: parameter {index} has shape {p.shape} but its gradient has "
                                 f"shape {p.grad.shape}")
            else:
                parts.append(p.grad.data.reshape(-1).astype(self._dtype, copy=False))
        return xp.concatenate(parts)

    def _add_to_params(self, t, d):
        """x = x + t * d, in place, each parameter taking its slice of d."""
        mark_modified(*self._params)  # graphs that saved a parameter must refuse backward
        offset = 0
        for p in self._params:
            n = p.data.size
            p.data += t * d[offset:offset + n].reshape(p.shape)
            offset += n

    def _set_params(self, values):
        """Each parameter's values back to the array of ``values`` (a copy made earlier)."""
        mark_modified(*self._params)
        for p, value in zip(self._params, values):
            p.data[...] = value

    def _evaluate(self, closure):
        """Run the closure at the parameters' current values: (what it returned, the loss as a float,
        the flat gradient)."""
        self._calls += 1  # in this step, for the error below
        with enable_grad():  # the closure calls backward, even where the caller turned recording off
            returned = closure()
        if returned is None:
            raise TypeError("LBFGS.step: the closure returned None; expected the loss (after its backward)")
        loss = float(returned)
        g = self._flat_grad()
        if self.check_finite:
            xp = backend.get_array_module(g)
            what = "loss" if not math.isfinite(loss) else "gradient" if not bool(xp.isfinite(g).all()) else None
            if what is not None:
                raise FloatingPointError(
                    f"LBFGS.step: the closure's {what} is not finite (NaN or inf) at its call {self._calls} of this "
                    "step; the parameters and the state are as they were before the step. Lower lr, try "
                    "line_search_fn='strong_wolfe', or check the loss; check_finite=False disables this check")
        return returned, loss, g

    # ------------------------------------------------------------------ the step
    def step(self, closure=None):
        """Run up to max_iter L-BFGS iterations (see the class); ``closure`` re-evaluates the model:
        it zeroes the gradients, computes the loss, calls backward and returns the loss. Returns
        what the closure returned at the step's start."""
        if not callable(closure):
            raise TypeError("LBFGS.step: expected a closure (a function that zeroes the gradients, computes the "
                            f"loss, calls backward and returns the loss), got {closure!r:.60}; LBFGS evaluates the "
                            "loss several times per step")
        for index, p in enumerate(self._params):
            if p.dtype.name == "bfloat16":  # cast after the optimizer took it (model.bfloat16())
                raise self._bfloat16_error("LBFGS.step", index)
        start = [p.data.copy() for p in self._params] if self.check_finite else None
        self._calls = 0
        try:
            return self._run(closure)
        except FloatingPointError:
            if start is not None:
                self._set_params(start)
            raise

    def _run(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search = group["history_size"], group["line_search_fn"]
        state = self.state.get(self._params[0], {})  # (its one state, kept as PyTorch's)
        func_evals, total_iter = state.get("func_evals", 0), state.get("n_iter", 0)

        orig_loss, loss, flat_grad = self._evaluate(closure)
        current_evals = 1
        func_evals += 1
        if float(abs(flat_grad).max()) <= tolerance_grad:  # already optimal: nothing moves
            self.state[self._params[0]] = {**state, "func_evals": func_evals, "n_iter": total_iter}
            return orig_loss

        # the state from the last step; new lists and arrays, so that it stays as it is until the end
        d, t, H_diag = state.get("d"), state.get("t"), state.get("H_diag")
        old_dirs, old_stps, ro = list(state.get("old_dirs", [])), list(state.get("old_stps", [])), \
            list(state.get("ro", []))
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        opt_cond = False  # max|g| <= tolerance_grad
        while n_iter < max_iter:
            n_iter += 1
            total_iter += 1

            # the direction
            if total_iter == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1.0
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = float(y @ s)
                if ys > 1e-10:  # positive curvature along s: keep the pair
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / float(y @ y)
                d = two_loop_direction(flat_grad, old_dirs, old_stps, ro, H_diag)
            prev_flat_grad, prev_loss = flat_grad, loss

            # the step length
            t = min(1.0, 1.0 / float(abs(flat_grad).sum())) * lr if total_iter == 1 else lr
            gtd = float(flat_grad @ d)  # the slope along d
            if gtd > -tolerance_change:
                break

            if line_search == "strong_wolfe":
                x_init = [p.data.copy() for p in self._params]

                def phi(step, x=x_init, d=d):
                    """f and g at x + step * d; the parameters are then put back at x."""
                    self._add_to_params(step, d)
                    _, f_step, g_step = self._evaluate(closure)
                    self._set_params(x)
                    return f_step, g_step

                # (PyTorch's search keeps its own tolerance_change of 1e-9, whatever the group's)
                loss, flat_grad, t, ls_func_evals = strong_wolfe(phi, t, d, loss, flat_grad, gtd,
                                                                 max_ls=max_eval - current_evals)
                self._add_to_params(t, d)
                opt_cond = float(abs(flat_grad).max()) <= tolerance_grad
            else:
                self._add_to_params(t, d)
                ls_func_evals = 0
                if n_iter != max_iter:  # (no evaluation after the last iteration: the next step makes it)
                    _, loss, flat_grad = self._evaluate(closure)
                    opt_cond = float(abs(flat_grad).max()) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            func_evals += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if float(abs(d * t).max()) <= tolerance_change:  # the step barely moved x
                break
            if abs(loss - prev_loss) < tolerance_change:  # nor the loss
                break

        self.state[self._params[0]] = dict(func_evals=func_evals, n_iter=total_iter, d=d, t=t, old_dirs=old_dirs,
                                           old_stps=old_stps, ro=ro, H_diag=H_diag, prev_flat_grad=prev_flat_grad,
                                           prev_loss=prev_loss)
        return orig_loss

    # ------------------------------------------------------------------ saving
    def state_dict(self) -> dict:
        """As Optimizer.state_dict: the state (parameter 0's) with NumPy copies of its vectors."""
        saved = super().state_dict()
        entry = saved["state"][0]
        for key in ("old_dirs", "old_stps"):
            if key in entry:
                entry[key] = [np.array(backend.to_numpy(a), copy=True) for a in entry[key]]
        if "ro" in entry:
            entry["ro"] = list(entry["ro"])
        return saved

    def _entry_from_pytorch(self, name, index, entry):
        """PyTorch's LBFGS state: its vectors (and lists of them) as arrays, its scalars (0-d tensors,
        H_diag's first 1) as floats, its scratch list 'al' dropped."""
        if not isinstance(entry, dict):
            return entry

        def converted(value):
            if isinstance(value, list):
                return [converted(v) for v in value]
            if _is_torch_tensor(value):
                return float(value) if value.ndim == 0 else interop.as_array(value.detach(), name)
            return value

        return {key: converted(value) for key, value in entry.items() if key != "al"}

    def _checked_entry(self, name, index, entry, kinds):
        if entry and index != 0:
            raise ValueError(f"{name}: state for parameter {index}; LBFGS keeps its one state as parameter 0's")
        if isinstance(entry, dict) and entry and set(entry) == {"func_evals", "n_iter"}:
            return entry  # steps that found the start optimal: no direction yet
        entry = super()._checked_entry(name, index, entry, kinds)
        if entry:
            lengths = {key: len(entry[key]) if isinstance(entry[key], list) else None
                       for key in ("old_dirs", "old_stps", "ro")}
            if None in lengths.values() or len(set(lengths.values())) != 1:
                raise ValueError(f"{name}: 'old_dirs', 'old_stps' and 'ro' are lists of one length, one entry per "
                                 f"kept pair; got {lengths}")
        return entry

    def _restored_state(self, name, index, p, key, value, kinds):
        where = f"state '{key}' of parameter {index}"
        kind = kinds[key]
        if kind == "count":  # n_iter is 0 after steps that found the start optimal
            return check_count(name, where, value, low=1 if key == "func_evals" else 0)
        if kind == "number":
            check_number(name, where, value)
            return float(value)
        if kind == "numbers":
            for k, number in enumerate(value):
                check_number(name, f"{where}, entry {k},", number, low=0, low_open=True)  # each 1 / (y . s) > 0
            return [float(number) for number in value]
        if kind == "flats":
            return [self._restored_flat(name, f"{where}, entry {k}", a) for k, a in enumerate(value)]
        return self._restored_flat(name, where, value)

    def _restored_flat(self, name, where, value):
        """A saved flat vector, checked (a float array of shape (number of weights,), finite) and
        copied onto the parameters' device in their dtype."""
        shape = (self._numel,)
        if not (hasattr(value, "shape") and hasattr(value, "dtype")) or not backend.is_floating(value.dtype):
            what = np.dtype(value.dtype).name if hasattr(value, "dtype") else type(value).__name__
            raise TypeError(f"{name}: {where} is {what}; expected a float array of shape {shape}")
        if tuple(value.shape) != shape:
            raise ValueError(f"{name}: {where} has shape {tuple(value.shape)}; expected {shape}, the parameters' "
                             "number of weights")
        host = np.array(backend.to_numpy(value), dtype=self._dtype, copy=True)
        if not np.isfinite(host.astype(np.float64)).all():
            raise ValueError(f"{name}: {where} holds NaN or inf; a run never saves one (it stops first)")
        return backend.to_device(host, self._params[0].device)
