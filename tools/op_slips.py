"""The ops' slips for tools/plant_slips.py --ops: one plausible one-line mistake per op of issue 26
(its backward, or its forward where it has none), and the issue's named slips (col2im's padding,
avg_pool's divisor, gather's backward, roll's integer shift) taken from plant_slips.SLIPS.

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
    Slip("linspace: the end left out", "minitx/creation.py", "xp.linspace(start, end, steps, dtype=d)",
         "xp.linspace(start, end, steps, endpoint=False, dtype=d)", ("tests/test_tensor.py",)),
    Slip("full_like: the tensor's dtype not carried", "minitx/creation.py",
         "return full(t.shape, value, dtype=dtype or t.dtype, device=t.device)",
         "return full(t.shape, value, dtype=dtype, device=t.device)", ("tests/test_tensor.py",)),
    Slip("empty: a shape given as a tuple not flattened", "minitx/creation.py",
         "xp.empty(s, dtype=d), _flat(shape), dtype", "xp.empty(s, dtype=d), shape, dtype", ("tests/test_tensor.py",)),
    # losses
    Slip("nll_loss(weight): the mean divided by the row count", "minitx/ops/loss.py",
         "return self._reduce(xp.where(valid, -picked * row_weight, 0), row_weight.sum())",
         "return self._reduce(xp.where(valid, -picked * row_weight, 0), count)", ("tests/ops/test_loss.py",)),
    # norms
    Slip("rms norm backward: the projection without the weight", _N,
         "dx = rrms * (g - xhat * (g * xhat).mean(axis=-1, keepdims=True))",
         "dx = rrms * (g - xhat * (dy * xhat).mean(axis=-1, keepdims=True))", _NORMS),
    Slip("group norm backward: g without the weight", _N,
         "g = (dy * _per_channel(w, dy.ndim)).reshape(rstd.shape[:2] + (-1,))",
         "g = dy.reshape(rstd.shape[:2] + (-1,))", _NORMS),
    Slip("batch norm backward: dw asked of the bias' flag", _N,
         "dw = (dy * xhat).sum(axis=axes) if self.needs_input_grad[1] else None",
         "dw = (dy * xhat).sum(axis=axes) if self.needs_input_grad[2] else None", _NORMS),
    Slip("batch norm: the running statistics' momentum the wrong way round", _N,
         "stat.data[...] = (1 - momentum) * stat.data + momentum * batch.astype(stat.dtype)",
         "stat.data[...] = momentum * stat.data + (1 - momentum) * batch.astype(stat.dtype)", _NORMS),
    # hooks
    Slip("Tensor.register_hook: a returned gradient not passed on", "minitx/autograd/engine.py",
         "            g = _run_tensor_hooks(node, g)", "            _run_tensor_hooks(node, g)",
         ("tests/nn/test_module.py",)),
    Slip("full backward hook: every input's gradient filed under the last input", "minitx/nn/module.py",
         "register_hook(lambda g, i=i: self._arrived(i, g))", "register_hook(lambda g: self._arrived(i, g))",
         ("tests/nn/test_module.py",)),
    # nn modules
    Slip("Flatten: start_dim off by one", _L, "x.shape[:start] + (-1,)", "x.shape[:start + 1] + (-1,)", _MODULES),
    Slip("Unflatten: the axis replaced is one further", _L, "x.shape[:dim] + self.sizes + x.shape[dim + 1:]",
         "x.shape[:dim] + self.sizes + x.shape[dim + 2:]", _MODULES),
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
         "self.reduction, weight=self.weight)", "self.reduction)", _MODULES),
    Slip("nn.BCEWithLogitsLoss: pos_weight not carried", "minitx/nn/loss.py",
         "self.reduction, self.pos_weight)", "self.reduction)", _MODULES),
    # pooling
    Slip("max_pool on integers: padded with int64's minimum whatever the dtype", "minitx/ops/conv.py",
         "return np.iinfo(dtype).min if", "return np.iinfo(np.int64).min if", ("tests/ops/test_conv.py",)),
    *[s for s in SLIPS if s.name.startswith(_NAMED)],
]
