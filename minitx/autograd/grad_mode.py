"""Switching graph recording off and on: ``no_grad`` and ``enable_grad``.

While recording is off, ops still compute their outputs but remember nothing for backward:
no saved arrays, no links to inputs. Use it for evaluation and for optimizer updates.
"""
from __future__ import annotations

import functools
import inspect
import threading

_state = threading.local()


def is_grad_enabled() -> bool:
    return getattr(_state, "enabled", True)


def is_inference_mode_enabled() -> bool:
    """Whether an inference_mode(True) block is in force, innermost first (PyTorch's name); no_grad
    is not one."""
    return getattr(_state, "inference", False)


class _GradMode:
    """A context manager that is also a decorator."""

    enabled: bool

    def __enter__(self):
        self._previous = is_grad_enabled()
        _state.enabled = self.enabled
        return self

    def __exit__(self, *exc):
        _state.enabled = self._previous
        return False

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return _each_step(fn, self.__class__)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


def _each_step(fn, mode):
    """The generator function ``fn`` decorated with ``mode`` (a callable making the context):
    its body runs at each next(), send() or throw(), after the decorating call has returned, so
    each step runs in the mode and the caller's code between steps in its own, as PyTorch's."""

    @functools.wraps(fn)
    def generator(*args, **kwargs):
        steps = fn(*args, **kwargs)
        try:
            with mode():
                response = steps.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with mode():
                        steps.close()
                    raise
                except BaseException as error:  # thrown in by the caller: on into fn, in the mode
                    with mode():
                        response = steps.throw(error)
                else:
                    with mode():
                        response = steps.send(request)
        except StopIteration as done:  # fn returned: so does this generator, with its value
            return done.value

    return generator


class _NoArguments(_GradMode):
    """A mode that takes no arguments, so also a decorator without parentheses: ``@no_grad``
    wraps the function as ``@no_grad()`` does (as PyTorch's)."""

    def __new__(cls, *args):
        if not args:
            return super().__new__(cls)
        if len(args) == 1 and callable(args[0]):
            return cls()(args[0])  # used bare: Python passed the function being decorated
        raise TypeError(f"{cls.__name__}: takes no arguments (or, used bare as a decorator, the function "
                        f"to wrap), got {', '.join(type(a).__name__ for a in args)}")


class no_grad(_NoArguments):
    """``with minitx.no_grad(): ...``, or ``@minitx.no_grad()`` (``@minitx.no_grad`` too): record no graph."""

    enabled = False


class enable_grad(_NoArguments):
    """Turn recording back on inside a ``no_grad`` region (``@enable_grad`` or ``@enable_grad()``
    for a whole function)."""

    enabled = True


class inference_mode(_GradMode):
    """PyTorch's name for evaluation without a graph; in minitx it is ``no_grad``.
    ``inference_mode(False)`` (PyTorch's ``mode`` argument) records the graph, as PyTorch's does,
    so code that switches it by a flag (``inference_mode(not training)``) runs unchanged."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):  # used bare: Python passed the function being decorated
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        if not isinstance(mode, (bool, int)):
            raise TypeError(f"inference_mode: mode must be True or False, got {type(mode).__name__}")
        self.mode = bool(mode)
        self.enabled = not self.mode

    def __enter__(self):
        self._previous_mode = is_inference_mode_enabled()
        _state.inference = self.mode
        return super().__enter__()

    def __exit__(self, *exc):
        _state.inference = self._previous_mode
        return super().__exit__(*exc)

    def __call__(self, fn):
        mode = self.mode
        if inspect.isgeneratorfunction(fn):
            return _each_step(fn, lambda: inference_mode(mode))

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` turns recording off when called, as PyTorch's: alone it stays
    so until set again; as a context (``with``) it is restored at the end; as a decorator it
    applies inside the function only (decorating changes nothing outside it)."""

    def __init__(self, mode: bool):
        self.enabled = bool(mode)
        self._previous = is_grad_enabled()
        _state.enabled = self.enabled

    def __enter__(self):
        return self  # (set when made; __exit__ restores what was before)

    def __call__(self, fn):
        _state.enabled = self._previous  # made to decorate: the mode outside stays as it was
        if inspect.isgeneratorfunction(fn):
            return _each_step(fn, lambda: set_grad_enabled(self.enabled))

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(self.enabled):
                return fn(*args, **kwargs)

        return wrapper
