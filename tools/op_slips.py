"""The ops' slips for tools/plant_slips.py --ops: one plausible one-line mistake per op of issue 26
(its backward, or its forward where it has none), and the issue's named slips (col2im's padding,
avg_pool's divisor, gather's backward, roll's integer shift) taken from plant_slips.SLIPS. The
second pass added one per op of the issue's later items: floor division, the remainders, the
bitwise ops, isclose, nonzero, masked_select, scatter_reduce (one per reduction), interpolate,
max_unpool, the n-d and transposed convolutions and their pooling options, float attention masks
and grouped heads, cropping pad, the dtype rules, GradScaler and the layers over these ops.

Each slip names the test files that should catch it; plant_slips plants each in a scratch copy
of the committed tree and runs those files.
"""
from __future__ import annotations

from plant_slips import SLIPS, Slip

_UNARY = ("tests/ops/test_unary.py",)
_BINARY = ("tests/ops/test_elementwise.py", "tests/ops/test_unary.py")
_SCAN = ("tests/ops/test_scan.py",)
_NORMS = ("tests/ops/test_norms.py",)
_MODULES = ("tests/nn/test_pytorch_names.py", "tests/nn/test_module.py")
_E = "minitx/ops/elementwise.py"
_N = "minitx/ops/norm.py"
_L = "minitx/nn/layers.py"
_INTEGER = ("tests/ops/test_integer_math.py",)
_SELECTION = ("tests/ops/test_selection.py",)
_INDEXING = ("tests/ops/test_indexing.py",)
_SETITEM = ("tests/ops/test_setitem.py",)
_RESAMPLE = ("tests/ops/test_resample.py",)
_CONV = ("tests/ops/test_conv.py",)
_ATTENTION = ("tests/ops/test_attention_masks.py",)
_SHAPE = ("tests/ops/test_shape.py",)
_DTYPES = ("tests/ops/test_dtypes.py",)
_SCALER = ("tests/test_grad_scaler.py",)
_LOW = ("tests/test_low_precision_ops.py",)
_I = "minitx/ops/indexing.py"
_R = "minitx/ops/resample.py"
_C = "minitx/ops/conv.py"
_A = "minitx/ops/attention.py"
_G = "minitx/optim/grad_scaler.py"

#: the issue's named slips, already in plant_slips.SLIPS: run again here, with the new ops
_NAMED = ("conv col2im", "avg_pool backward", "gather backward", "roll backward")

OP_SLIPS = [
    # elementwise math: one derivative each, mistaken as it is easily mistaken
    Slip("tan backward: tanh's 1 - y^2", _E, "return (dy * (1 + y * y),)", "return (dy * (1 - y * y),)",
         _UNARY),
    Slip("asin backward: sqrt(1 + x^2)", _E, "return (dy / get_array_module(x).sqrt(1 - x * x),)",
         "return (dy / get_array_module(x).sqrt(1 + x * x),)", _UNARY),
    Slip("acos backward: asin's sign", _E, "return (-dy / get_array_module(x).sqrt(1 - x * x),)",
         "return (dy / get_array_module(x).sqrt(1 - x * x),)", _UNARY),
    Slip("atan backward: atanh's 1 - x^2", _E, "return (dy / (1 + x * x),)", "return (dy / (1 - x * x),)", _UNARY),
    Slip("sinh backward: sinh for cosh", _E, "return (dy * hyperbolic_values(x)[1],)",
         "return (dy * hyperbolic_values(x)[0],)", _UNARY),
    Slip("cosh backward: cosh for sinh", _E, "return (dy * hyperbolic_values(x)[0],)",
         "return (dy * hyperbolic_values(x)[1],)", _UNARY),
    Slip("asinh backward: acosh's x^2 - 1", _E, "return (dy / get_array_module(x).sqrt(x * x + 1),)",
         "return (dy / get_array_module(x).sqrt(x * x - 1),)", _UNARY),
    Slip("acosh backward: asinh's x^2 + 1", _E, "return (dy / get_array_module(x).sqrt(x * x - 1),)",
         "return (dy / get_array_module(x).sqrt(x * x + 1),)", _UNARY),
    Slip("atanh backward: atan's 1 + x^2", _E, "return (dy / (1 - x * x),)", "return (dy / (1 + x * x),)", _UNARY),
    Slip("log10 backward: log2's constant", _E, "return (dy / (x * _LN10),)", "return (dy / (x * _LN2),)", _UNARY),
    Slip("atan2 backward: db's sign", _E, "return dy * b / r2, -dy * a / r2", "return dy * b / r2, dy * a / r2",
         _BINARY),
    Slip("hypot backward: db copied from da", _E, "return dy * a / y, dy * b / y", "return dy * a / y, dy * a / y",
         _BINARY),
    Slip("copysign backward: sign(b) for b's sign bit (0 at b = ±0)", _E,
         "xp.where(xp.signbit(b), -1.0, 1.0), xp.zeros_like(b)", "xp.sign(b), xp.zeros_like(b)", _BINARY),
    # scans and ordering
    Slip("cummax backward: dy not moved to the front axis", "minitx/ops/scan.py",
         "xp.arange(rest)[None, :]), front.reshape(length, rest))",
         "xp.arange(rest)[None, :]), dy.reshape(length, rest))", _SCAN),
    Slip("cummin: the earliest of equal minima", "minitx/ops/scan.py", "later_wins = staticmethod(lambda a, b: a <= b)",
         "later_wins = staticmethod(lambda a, b: a < b)", _SCAN),
    Slip("sort backward: put back along the last axis", "minitx/ops/scan.py",
         "dy.reshape(self.order.shape), axis=self.scan_axis)", "dy.reshape(self.order.shape), axis=-1)", _SCAN),
    Slip("argsort: descending not passed on", "minitx/ops/scan.py", "return sort(x, axis, descending)[1]",
         "return sort(x, axis)[1]", _SCAN),
    Slip("topk: the first k taken along the last axis", "minitx/ops/scan.py", "index[axis] = slice(0, int(k))",
         "index[-1] = slice(0, int(k))", _SCAN),
    # creation
    Slip("eye: m dropped", "minitx/creation.py", "xp.eye(n, m, dtype=d)", "xp.eye(n, dtype=d)",
         ("tests/test_tensor.py",)),
    Slip("linspace: the end left out", "minitx/creation.py", "xp.linspace(start, end, steps).astype(d)",
         "xp.linspace(start, end, steps, endpoint=False).astype(d)", ("tests/test_tensor.py",)),
    Slip("*_like: the tensor's dtype not carried", "minitx/creation.py",
         '"dtype": t.dtype if dtype is None else dtype', '"dtype": dtype',
         ("tests/test_tensor.py", "tests/test_creation.py")),
    Slip("empty: a shape given as a tuple not flattened", "minitx/creation.py",
         "xp.empty(s, dtype=d), _flat(shape), dtype", "xp.empty(s, dtype=d), shape, dtype", ("tests/test_tensor.py",)),
    # losses
    Slip("nll_loss(weight): the mean divided by the row count", "minitx/ops/loss.py",
         "return self._reduce(xp.where(valid, -picked * row_weight, 0), row_weight.sum())",
         "return self._reduce(xp.where(valid, -picked * row_weight, 0), count)", ("tests/ops/test_loss.py",)),
    # norms
    Slip("rms norm backward: the projection without the weight", _N,
         "dx = rrms * (g - xhat * mean_last(g, xhat)[..., None])",
         "dx = rrms * (g - xhat * mean_last(dy, xhat)[..., None])", _NORMS),
    Slip("group norm backward: g without the weight", _N,
         "g = (dy * _per_channel(w, dy.ndim)).reshape(self.grouped)",
         "g = dy.reshape(self.grouped)", _NORMS),
    Slip("batch norm backward: dw asked of the bias' flag", _N,
         "dw = (dy * xhat).sum(axis=axes) if self.needs_input_grad[1] else None",
         "dw = (dy * xhat).sum(axis=axes) if self.needs_input_grad[2] else None", _NORMS),
    Slip("batch norm: the running statistics' momentum the wrong way round", _N,
         "stat.data[...] = (1 - momentum) * stat.data + momentum * batch.astype(stat.dtype)",
         "stat.data[...] = momentum * stat.data + (1 - momentum) * batch.astype(stat.dtype)", _NORMS),
    # hooks
    Slip("Tensor.register_hook: a returned gradient not passed on", "minitx/autograd/engine.py",
         "                g = _run_tensor_hooks(node, g, user_errstate)",
         "                _run_tensor_hooks(node, g, user_errstate)",
         ("tests/nn/test_module.py",)),
    Slip("full backward hook: every input's gradient filed under the last input", "minitx/nn/module.py",
         "register_hook(lambda g, i=i: self._arrived(i, g))", "register_hook(lambda g: self._arrived(i, g))",
         ("tests/nn/test_module.py",)),
    # nn modules
    Slip("Flatten: start_dim off by one", _L, "x.shape[:start] + (math.prod(", "x.shape[:start + 1] + (math.prod(", _MODULES),
    Slip("Unflatten: the axis replaced is one further", _L, "x.shape[:dim] + self._sizes(x.shape, dim) + x.shape[dim + 1:]",
         "x.shape[:dim] + self._sizes(x.shape, dim) + x.shape[dim + 2:]", _MODULES),
    Slip("Softmax: dim not carried", _L, "return F.softmax(x, axis=self.dim)", "return F.softmax(x)", _MODULES),
    Slip("ModuleDict: modules registered in name order", _L, "for name, module in dict(modules or {}).items():",
         "for name, module in sorted(dict(modules or {}).items()):", _MODULES),
    Slip("ParameterList: indexed in reverse", _L, "return list(self._parameters.values())[i]",
         "return list(self._parameters.values())[-i]", _MODULES),
    Slip("nn.RMSNorm: eps not carried", _L, "return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)",
         "return F.rms_norm(x, self.normalized_shape, self.weight)", _MODULES + _NORMS),
    Slip("nn.BatchNorm: num_batches_tracked counted in eval too", _L,
         "if self.training and self.track_running_stats:\n            self.num_batches_tracked",
         "if self.track_running_stats:\n            self.num_batches_tracked", _MODULES + _NORMS),
    Slip("nn.CrossEntropyLoss: label_smoothing not carried", "minitx/nn/loss.py",
         "F.cross_entropy(logits, targets, self.ignore_index, self.label_smoothing, self.reduction)",
         "F.cross_entropy(logits, targets, self.ignore_index, reduction=self.reduction)", _MODULES),
    Slip("nn.NLLLoss: weight not carried", "minitx/nn/loss.py",
         "return F.nll_loss(log_probs, targets, self.ignore_index, self.reduction, weight=self.weight)",
         "return F.nll_loss(log_probs, targets, self.ignore_index, self.reduction)", _MODULES),
    Slip("nn.BCEWithLogitsLoss: pos_weight not carried", "minitx/nn/loss.py",
         "pos_weight = None if self.pos_weight is None else _like(self.pos_weight, logits)",
         "pos_weight = None", _MODULES),
    # pooling
    Slip("max_pool on integers: padded with int64's minimum whatever the dtype", "minitx/ops/conv.py",
         'else np.iinfo(dtype).min if kind in "iu"', 'else np.iinfo(np.int64).min if kind in "iu"',
         ("tests/ops/test_conv.py",)),
    # integer math (today's): floor division, the remainders, bitwise ops, isclose
    Slip("floor_divide: rounds toward zero (C's /)", _E, "            return get_array_module(a).floor_divide(a, b)",
         "            return get_array_module(a).floor_divide(a - get_array_module(a).fmod(a, b), b)", _INTEGER),
    Slip("remainder backward: db's sign", _E, "return dy, -dy * self.quotient(a, b)",
         "return dy, dy * self.quotient(a, b)", _INTEGER),
    Slip("remainder backward: the quotient truncated (fmod's)", _E,
         "    def quotient(self, a, b):\n        return get_array_module(a).floor_divide(a, b)",
         "    def quotient(self, a, b):\n        return get_array_module(a).trunc(a / b)", _INTEGER),
    Slip("fmod backward: the quotient floored (remainder's)", _E, "return get_array_module(a).trunc(a / b)",
         "return get_array_module(a).floor(a / b)", _INTEGER),
    Slip("bitwise shifts: left and right swapped", _E,
         '_UFUNCS = {"bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift"}',
         '_UFUNCS = {"bitwise_left_shift": "right_shift", "bitwise_right_shift": "left_shift"}', _INTEGER),
    Slip("bitwise_xor: computed as or", _E, 'def bitwise_xor(a, b): return _bits("bitwise_xor", a, b)',
         'def bitwise_xor(a, b): return _bits("bitwise_or", a, b)', _INTEGER),
    Slip("bitwise_and: computed as xor", _E, 'def bitwise_and(a, b): return _bits("bitwise_and", a, b)',
         'def bitwise_and(a, b): return _bits("bitwise_xor", a, b)', _INTEGER),
    Slip("bitwise shifts: two booleans let through", _E, "a, b = _operands(op, a, b, two_bools)",
         "a, b = _operands(op, a, b, True)", _INTEGER),
    Slip("bitwise_not: negation for inversion", _E, "return Tensor(get_array_module(x.data).invert(x.data))",
         "return Tensor(get_array_module(x.data).negative(x.data))", _INTEGER),
    Slip("isclose: rtol relative to a, not b", _E, "<= atol + rtol * xp.abs(y)", "<= atol + rtol * xp.abs(x)",
         _INTEGER),
    Slip("isclose: a finite a close to an infinite b", _E, "rtol * xp.abs(y)) & xp.isfinite(y) | (x == y)",
         "rtol * xp.abs(y)) | (x == y)", _INTEGER),
    Slip("allclose: equal_nan not passed on", _E, '_isclose("allclose", a, b, rtol, atol, equal_nan).data.all()',
         '_isclose("allclose", a, b, rtol, atol, False).data.all()', _INTEGER),
    # selection and scatter_reduce
    Slip("nonzero: the index columns in reverse axis order", _I,
         "return Tensor(xp.stack(xp.unravel_index(positions, x.shape), axis=1))",
         "return Tensor(xp.stack(xp.unravel_index(positions, x.shape)[::-1], axis=1))", _SELECTION),
    Slip("nonzero, masked_select: the positions counted from 0 (the j-th True found at count j)", _I,
         "xp.searchsorted(xp.cumsum(flat), xp.arange(1, count + 1))",
         "xp.searchsorted(xp.cumsum(flat), xp.arange(count))", _SELECTION),
    Slip("diagonal backward: the offset taken below the diagonal for above", _I,
         "        rows, cols = k + max(-self.offset, 0), k + max(self.offset, 0)",
         "        rows, cols = k + max(self.offset, 0), k + max(-self.offset, 0)", _INDEXING),
    Slip("mse_loss backward: the factor 2 dropped", "minitx/ops/loss.py",
         "        dx = self._row_gradient(dy) * 2 * d", "        dx = self._row_gradient(dy) * d", ("tests/ops/test_loss.py",)),
    Slip("smooth_l1_loss backward: the quadratic piece's slope not divided by beta", "minitx/ops/loss.py",
         "        slope = xp.where(self.near, d / self.beta, xp.sign(d)) if self.beta else xp.sign(d)",
         "        slope = xp.where(self.near, d, xp.sign(d)) if self.beta else xp.sign(d)", ("tests/ops/test_loss.py",)),
    Slip("kl_div backward: dx of the wrong sign", "minitx/ops/loss.py",
         "        dx = -dloss * y\n", "        dx = dloss * y\n", ("tests/ops/test_loss.py",)),
    Slip("hardsigmoid backward: the slope 1/6 taken at the kinks too", "minitx/ops/activation.py",
         "        self.save_for_backward((x > -3) & (x < 3))", "        self.save_for_backward((x >= -3) & (x <= 3))",
         ("tests/ops/test_activation.py",)),
    Slip("hardswish backward: 2x + 3 for 2x + 3 over 6", "minitx/ops/activation.py",
         "xp.where(x < 3, dy * (2 * x + 3) / 6, dy)", "xp.where(x < 3, dy * (2 * x + 3), dy)",
         ("tests/ops/test_activation.py",)),
    Slip("norm backward: y^p for y^(p-1)", "minitx/ops/reduction.py",
         "            scale = y if p == 2 else y ** (p - 1)", "            scale = y if p == 2 else y ** p",
         ("tests/ops/test_reduction.py",)),
    Slip("setitem backward: the values a write replaced keep their gradient", _I,
         "            dx.reshape(-1)[places] = 0\n", "            pass\n", _SETITEM),
    Slip("setitem backward: every write to a repeated element gets its gradient", _I,
         "            dv[entries] = dy.reshape(-1)[places]\n", "            dv[...] = dy[self.index]\n", _SETITEM),
    Slip("masked_select backward: dy laid at the front, not at the mask's positions", _I,
         "dx[self.positions] = dy", "dx[:dy.size] = dy", _SELECTION),
    Slip("scatter_reduce sum backward: dsrc read at src's own positions, not its targets", _I,
         "return g, g[self.target]", "return g, g[self.used]", _INDEXING),
    Slip("scatter_reduce prod backward: a zero contributor gets the product beside a second zero", _I,
         "return xp.where(v == 0, xp.where(z == 1, p, 0),", "return xp.where(v == 0, p,", _INDEXING),
    Slip("scatter_reduce mean backward: the count without include_self", _I,
         "g = dy / xp.maximum(count + self.include_self, 1).astype(dy.dtype)",
         "g = dy / xp.maximum(count, 1).astype(dy.dtype)", _INDEXING),
    Slip("scatter_reduce amax/amin backward: every tie gets the whole dy", _I, "g = dy / ties", "g = dy",
         _INDEXING),
    # resampling
    Slip("interpolate backward: dy assigned, not added, where outputs share a source", _R,
         "add_at(dx, (slice(None),) * axis + (index,), _weighted(dy, w))",
         "dx[(slice(None),) * axis + (index,)] = _weighted(dy, w)", _RESAMPLE),
    Slip("interpolate linear: the two weights swapped", _R,
         "return [(i0, 1.0 - lam), (np.minimum(i0 + 1, n - 1), lam)]",
         "return [(i0, lam), (np.minimum(i0 + 1, n - 1), 1.0 - lam)]", _RESAMPLE),
    Slip("interpolate align_corners: (n - 1) / m for (n - 1) / (m - 1)", _R,
         "t = i * ((n - 1) / (m - 1) if m > 1 else 0.0)", "t = i * ((n - 1) / m if m > 1 else 0.0)", _RESAMPLE),
    Slip("interpolate nearest-exact: the half-pixel offset dropped", _R,
         'ft(0.5 if mode == "nearest-exact" else 0.0)', "ft(0.0)", _RESAMPLE),
    Slip("max_unpool backward: dy read with its spatial axes swapped", _R,
         "return dy.reshape(n, c, math.prod(self.size))[self.where]",
         "return dy.swapaxes(-1, -2).reshape(n, c, math.prod(self.size))[self.where]", _RESAMPLE),
    # convolution and pooling (today's: n-d, transposed, ceil_mode, indices, "same", divisor_override)
    Slip("conv_transpose: output_padding ignored in the output size", _C,
         "sizes = tuple((m - 1) * s - 2 * p + d * (k - 1) + q + 1 for",
         "sizes = tuple((m - 1) * s - 2 * p + d * (k - 1) + 1 for", _CONV),
    Slip("conv_transpose backward: dx through the flipped kernel", _C,
         "dx = (weights @ dcols).reshape(self.shapes[0])", "dx = (weights[..., ::-1] @ dcols).reshape(self.shapes[0])",
         _CONV),
    Slip("n-d windows: the loop over spatial axes stops after two (3-D's width dropped)", _C,
         "for t, axis in enumerate(SPATIAL[dims]):", "for t, axis in enumerate(SPATIAL[dims][:2]):", _CONV),
    Slip("n-d windows: inside() checks the first two spatial axes only", _C,
         "for rows, lo, hi in zip(self.index, low, high):", "for rows, lo, hi in zip(self.index[:2], low, high):",
         _CONV),
    Slip("ceil_mode: a last window starting at the right padding's first position kept", _C,
         "if ceil_mode and (out - 1) * stride >= length + before:",
         "if ceil_mode and (out - 1) * stride > length + before:", _CONV),
    Slip("max_pool return_indices: indices into the padded plane", _C,
         "flat = flat * n + i * self.stride[t] + a * self.dilation[t] - before",
         "flat = flat * n + i * self.stride[t] + a * self.dilation[t]", _CONV),
    Slip("padding='same': the odd extra padding before, not after", _C,
         "return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for",
         "return tuple((d * (k - 1) - d * (k - 1) // 2, d * (k - 1) // 2) for", _CONV),
    Slip("avg_pool2d: divisor_override not passed on", _C,
         "op = AvgPoolNd(2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)",
         "op = AvgPoolNd(2, kernel_size, stride, padding, ceil_mode, count_include_pad)", _CONV),
    # attention: float masks, grouped heads
    Slip("attention backward: a float mask's gradient scaled as the scores' are", _A,
         "dmask = ds.astype(mask.dtype, copy=False)", "dmask = (ds * self.scale_used).astype(mask.dtype, copy=False)",
         _ATTENTION),
    Slip("attention backward: a float mask's gradient not returned", _A,
         "return grads + (dmask,)", "return grads + (None,)", _ATTENTION),
    Slip("grouped heads backward: groups summed in tiled order (repeat's interleaved one)", _A,
         "(dx.shape[-3] // groups, groups) + dx.shape[-2:]).sum(axis=-3)",
         "(groups, dx.shape[-3] // groups) + dx.shape[-2:]).sum(axis=-4)", _ATTENTION),
    # pad with negative widths
    Slip("pad backward: a cropped axis's gradient placed from x's start, not after the crop", "minitx/ops/shape.py",
         "dx[self.kept] = dy[self.placed]",
         "dx[tuple(slice(0, s.stop - s.start) for s in self.kept)] = dy[self.placed]", _SHAPE),
    # dtype rules
    Slip("accumulate: int32 not widened to int64", "minitx/ops/_args.py",
         'if np.dtype(dtype).kind in "biu" and np.dtype(dtype).itemsize < 8:',
         'if np.dtype(dtype).kind in "biu" and np.dtype(dtype).itemsize < 4:', _DTYPES),
    Slip("a Python integer: the dtype's largest value refused (range check off by one)", "minitx/autograd/tensor.py",
         "not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:",
         "not np.iinfo(dtype).min <= value < np.iinfo(dtype).max:", _DTYPES),
    # GradScaler
    Slip("GradScaler: growth and backoff factors swapped", _G,
         "self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)",
         "self._growth_factor, self._backoff_factor = float(backoff_factor), float(growth_factor)", _SCALER),
    Slip("GradScaler: the growth tracker not reset on overflow", _G,
         "self._growth_tracker[...] = xp.where(found_inf | grow, 0, successful)",
         "self._growth_tracker[...] = xp.where(grow, 0, successful)", _SCALER),
    # nn layers of today's ops
    Slip("nn.MaxUnpool: stride and padding passed in each other's place", "minitx/nn/conv.py",
         "self.kernel_size, self.stride, self.padding, output_size)",
         "self.kernel_size, self.padding, self.stride, output_size)", _MODULES + _RESAMPLE),
    Slip("nn.Upsample: size and scale_factor passed in each other's place", "minitx/nn/conv.py",
         "F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners)",
         "F.interpolate(x, self.scale_factor, self.size, self.mode, self.align_corners)", _MODULES + _RESAMPLE),
    # 16 bits computed in float32, integer and boolean inputs, the device-side NaN/inf flags
    Slip("16-bit ops: computed step by step in 16 bits (the float32 upcast dropped)", "minitx/autograd/function.py",
         "if low is not None and not self._computes_as_they_are(arrays):",
         "if low is not None and False:", _LOW),
    Slip("16-bit backward: dy left in 16 bits", "minitx/autograd/engine.py",
         "g = g.astype(fn.computed_in, copy=False)", "g = g", _LOW),
    Slip("16-bit broadcast gradients summed in 16 bits", "minitx/autograd/engine.py",
         'wide = np.float32 if dtype == np.float16 or dtype.name == "bfloat16" else None', "wide = None", _LOW),
    Slip("tensor(): an integer array turned into int64 again", "minitx/autograd/tensor.py",
         "dtype = data.dtype if is_array else _infer_dtype(data)", "dtype = _infer_dtype(data)",
         ("tests/test_tensor.py",) + _DTYPES),
    Slip("a fill value past the integer dtype's maximum let through (off by one)", "minitx/ops/_args.py",
         "and low <= value <= high):", "and low <= value <= high + 1):", _DTYPES),
    Slip("mean of integers in float64 again", "minitx/ops/reduction.py",
         "return Mean(axis, keepdims)(floating(x))", "return Mean(axis, keepdims)(x)",
         _DTYPES + ("tests/test_integer_inputs.py",)),
    Slip("a boolean max-pool padded with -inf (True)", _C,
         'return False if kind == "b" else np.iinfo(dtype).min if kind in "iu" else -np.inf',
         'return np.iinfo(dtype).min if kind in "iu" else -np.inf', _CONV),
    Slip("a window of padding only let through", _C,
         "if not self.windows.in_input().any(axis=0).all():", "if False:", _CONV + _RESAMPLE),
    Slip("nonfinite_flags: a running count, not each tensor's own", "minitx/kernels/adam.py",
         "    counts[1:] -= running[:-1]", "    counts[1:] -= 0",
         ("tests/kernels/test_dropout_adam_embedding.py",)),
    *[s for s in SLIPS if s.name.startswith(_NAMED)],
]
