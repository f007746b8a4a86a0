"""Testing tools that are part of the product: gradient checks, forward checks and hypothesis strategies.

Checks (no extra dependency):

* ``gradcheck(fn, *inputs, eps=1e-6, atol=1e-5, rtol=1e-4, ...)``: backward agrees with central
  finite differences for every float64 input that requires grad; True or ``GradcheckError``
  naming the input, the worst element, both values, the tolerances and fn's last op. fn's
  forward must leave the inputs that require grad unchanged; an empty input or output still
  runs backward once; fn may return a tuple of tensors (its floating ones are checked as one).
* ``check_backward_hygiene(fn, *inputs)``: the backward of fn's last op modifies neither its
  inputs, its saved arrays nor dy, and returns gradients that share no memory with its inputs
  or saved arrays (nor with dy or each other, when the op declares ``fresh_gradients``).
* ``check_gradient_subsets(fn, *inputs)``: with only a subset of the inputs requiring grad
  (each subset of up to 3 inputs), those get the gradient they get with all (one tensor
  passed twice counts once). The gradient checks add into no ``.grad``: they use autograd.grad.
* ``check_gradients(fn, *inputs, **gradcheck_kwargs)``: the three above, in one call; like
  gradcheck it takes a fn returning several tensors (the hygiene check takes the last op of
  each floating one; the subsets check their concatenation, as gradcheck does).
* ``check_forward(fn, reference, *inputs, rtol=1e-7, atol=0.0)``: fn's output (a Tensor or a
  tuple of them) matches ``reference`` run on the inputs' NumPy copies; the failure names the
  worst element. Returns fn's output.
* ``check_low_precision(fn, *inputs, dtype="bfloat16", ulps=4)``: fn on the inputs rounded to
  bfloat16 (or float16) against fn on float32 copies of the same values: the output and each
  gradient come back in that dtype, within ``ulps`` of its eps times the array's largest value.
* ``leaf(data, requires_grad=True)``: a float64 leaf tensor, the kind gradcheck needs.

Strategies, ``from minitx.testing import strategies as mst`` (needs hypothesis:
``pip install "minitx[test]"``; imported on first use). A ``shape`` is a tuple, list, int or a
strategy of shapes; bad arguments raise ValueError when the strategy is built.

* ``shapes(min_dims, max_dims, min_side, max_side)``, ``broadcastable_shapes(num_shapes, ...)``
* ``float_arrays(shape, dtype, min_value, max_value, away_from=(), margin=0.05, distinct=False)``:
  values in [min_value, max_value], at least ``margin`` from each point of ``away_from`` (kinks),
  all different with ``distinct`` (no ties for max/min).
* ``tensors(shape, ..., requires_grad=True, transposed=None, **float_arrays_kwargs)``: float64
  leaves, sometimes non-contiguous views; ``broadcastable_tensors(num=2, ...)``: a tuple of
  tensors whose shapes broadcast together.
* ``index_arrays(shape, size, allow_negative=False)``: int64 indices into an axis of length size;
  ``ids(shape, num_embeddings, padding_idx=None)``: embedding ids, padding_idx now and then;
  ``class_targets(shape, num_classes, ignore_index=None, ignore_probability=0.2)``.
* ``bool_masks(shape, at_least_one_true=False)``; ``attention_masks(batch_shape, lq, lk)``: at
  least one True (may attend) per row.
* ``axes_for(ndim)``: None, an axis or a tuple of axes; ``axes_and_keepdims(ndim)``: (axis, keepdims).

Op-test factory, ``from minitx.testing import arg, op_case, op_test`` (needs hypothesis):
describe the op's arguments and its references in a few lines, get a hypothesis test.

* ``arg(shape=None, *, min_value=-3, max_value=3, away_from=(), margin=0.05, distinct=False,
  ties=False, edges=(), edge_probability=0.25, requires_grad=True, transposed=None, strategy=None,
  dtype="float64")``: one positional argument; by default a float64
  leaf of the shape shared by all such arguments (``broadcast=True``: broadcastable shapes);
  ``shape`` may be a callable of the earlier arguments' shapes; ``edges`` mixes values such as
  0, inf, NaN in; ``strategy`` draws anything else (targets, masks); ``dtype`` "float32" or
  "float16" rounds the values (with ``gradcheck=False``: finite differences need float64).
* ``op_test(op, *args, numpy=None, torch=None, torch_kwargs=None, kwargs=None, shapes=None,
  broadcast=False, gradcheck=True, rtol=1e-10, atol=1e-12, ...)``: a test function that checks
  forward against the NumPy reference, forward and gradients against the torch reference (a
  callable or "torch.name"; skipped without PyTorch), and runs check_gradients (finite
  differences, hygiene and subsets of the inputs requiring grad; not on edge values or ties, where
  only the torch reference checks the gradients: a NumPy reference checks the forward alone).
  It runs without a deadline unless ``settings=hypothesis.settings(...)`` gives one, and has
  its own key in hypothesis' example database.
* ``op_case(...)``: the same checks as a callable of hypothesis' ``data``, for tables of ops.

Op-test example (tests/test_testing_tools.py runs it)::

    import numpy as np
    from hypothesis import strategies as st

    import minitx.functional as F
    from minitx.testing import arg, op_test, strategies as mst

    # y = x @ w^T + b: w's shape follows x's last axis, b's follows w
    test_linear = op_test(F.linear, arg(), arg(shape=lambda x: (2, x[-1])), arg(shape=lambda x, w: w[:1]),
                          numpy=lambda x, w, b: x @ w.T + b, torch="torch.nn.functional.linear",
                          shapes=mst.shapes(min_dims=1, max_dims=3))
    # a reduction over drawn axes, with 0, inf and NaN among the values and empty axes allowed
    test_sum = op_test(F.sum, arg(edges=(0.0, np.inf, np.nan)), shapes=mst.shapes(min_side=0, max_dims=3),
                       numpy=lambda x, axis, keepdims: np.sum(x, axis=axis, keepdims=keepdims),
                       kwargs={"axis": lambda shape: mst.axes_for(len(shape)), "keepdims": st.booleans()})

Example (a test of your own Function; tests/test_testing_tools.py runs it)::

    import numpy as np
    from hypothesis import given

    from minitx import Function
    from minitx.testing import check_forward, check_gradients, strategies as mst


    class LeakyRelu(Function):
        '''y = x for x > 0, 0.1 x otherwise.'''

        def forward(self, x):
            self.save_for_backward(x)
            return np.where(x > 0, x, 0.1 * x)

        def backward(self, dy):
            (x,) = self.saved
            return (np.where(x > 0, dy, 0.1 * dy),)


    # away_from: finite differences across the kink at 0 would not match any derivative
    @given(x=mst.tensors(mst.shapes(max_dims=3), away_from=(0.0,)))
    def test_leaky_relu(x):
        y = check_forward(lambda t: LeakyRelu()(t), lambda a: np.maximum(a, 0.1 * a), x)
        assert y.shape == x.shape
        check_gradients(lambda t: LeakyRelu()(t), x)
"""
from minitx.testing.checks import check_forward, check_gradient_subsets, check_gradients, check_low_precision, leaf
from minitx.testing.gradcheck import GradcheckError, check_backward_hygiene, gradcheck

__all__ = ["gradcheck", "check_backward_hygiene", "check_gradient_subsets", "check_gradients", "check_forward",
           "check_low_precision",
           "leaf", "GradcheckError", "strategies", "arg", "op_case", "op_test"]


_NEED_HYPOTHESIS = {"strategies": "minitx.testing.strategies", "arg": "minitx.testing.factory",
                    "op_case": "minitx.testing.factory", "op_test": "minitx.testing.factory"}


def __getattr__(name):
    if name in _NEED_HYPOTHESIS:  # imported on first use: they need hypothesis, the rest does not
        import importlib

        module = importlib.import_module(_NEED_HYPOTHESIS[name])
        return module if name == "strategies" else getattr(module, name)
    raise AttributeError(f"module 'minitx.testing' has no attribute {name!r}")
