"""Which arguments of each op the property tests draw: a record kept while the suite runs.

Every Function of minitx is wrapped at the start of the session so that constructing it inside
a hypothesis example (``hypothesis.currently_in_test_context()``) records the value of each of
its ``__init__`` parameters. At the end, a parameter that took fewer than two values inside
examples was never drawn: the property tests ran that op with one setting only, and a slip in
the math of the others (non-square padding, count_include_pad=False, an integer shift) would go
unseen. test_parameters_drawn.py fails on each such parameter, by name.
"""
from __future__ import annotations

import collections
import functools
import inspect
import types

#: (op, parameter) that need not be drawn, each with the reason (listed in the failure report)
NOT_DRAWN = {
    ("ToDevice", "device"): "the other device is a GPU: tests/kernels/test_gpu.py moves tensors there",
    ("Mode", "skip_nan"): "Median's nanmedian switch, which Mode inherits: mode has no NaN-skipping form (always False)",
}

DRAWN: dict = collections.defaultdict(lambda: collections.defaultdict(set))  # op -> parameter -> values


def whole_suite_key():
    """The config stash key under which conftest.py says whether this run collected every test."""
    import pytest  # noqa: PLC0415

    global _WHOLE_SUITE
    if _WHOLE_SUITE is None:
        _WHOLE_SUITE = pytest.StashKey[bool]()
    return _WHOLE_SUITE


_WHOLE_SUITE = None


def parameters(cls) -> list:
    """The parameters of ``cls.__init__`` (its own or inherited), without self."""
    init = next((k.__dict__["__init__"] for k in cls.__mro__ if "__init__" in k.__dict__), object.__init__)
    if init is object.__init__:
        return []
    return [name for name, p in inspect.signature(init).parameters.items()
            if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _recording(cls, init):
    signature = inspect.signature(init)

    @functools.wraps(init)
    def wrapped(self, *args, **kwargs):
        from hypothesis import currently_in_test_context  # noqa: PLC0415

        if currently_in_test_context():
            try:
                bound = signature.bind(self, *args, **kwargs)
            except TypeError:
                pass  # the op's own __init__ raises the error below
            else:
                bound.apply_defaults()
                for name, value in list(bound.arguments.items())[1:]:
                    DRAWN[type(self).__name__][name].add(_key(value))
        return init(self, *args, **kwargs)

    # Its frame reads as the op's own module's: minitx's errors name the function called only where no
    # code but minitx's ran between it and the raise (minitx.autograd.tensor.naming), which this
    # recording, wrapped around the op's own __init__, must not change.
    wrapped = types.FunctionType(wrapped.__code__, {**wrapped.__globals__, "__name__": cls.__module__},
                                 wrapped.__name__, wrapped.__defaults__, wrapped.__closure__)
    functools.update_wrapper(wrapped, init)
    wrapped.records_drawn = True
    return wrapped


def _key(value) -> str:
    """A hashable stand-in for a drawn value (arrays and lists included)."""
    return f"{type(value).__name__}:{value!r}"[:200]


def install(functions) -> None:
    """Wrap the ``__init__`` of every class in ``functions`` ({name: class}) that defines one."""
    for cls in functions.values():
        for owner in cls.__mro__:
            init = owner.__dict__.get("__init__")
            if init is not None and owner.__module__.startswith("minitx.") and not hasattr(init, "records_drawn"):
                owner.__init__ = _recording(owner, init)


def undrawn(functions, drawn=DRAWN, allowed=NOT_DRAWN) -> list:
    """(op, parameter, values seen) for every parameter of ``functions`` drawn fewer than twice."""
    missing = []
    for name, cls in sorted(functions.items()):
        for parameter in parameters(cls):
            values = drawn.get(name, {}).get(parameter, set())
            if len(values) < 2 and (name, parameter) not in allowed:
                missing.append((name, parameter, sorted(values)))
    return missing
