"""Testing tools that are part of the product: gradient checks and hypothesis strategies.

``gradcheck`` compares an op's backward with finite differences; ``strategies`` draws shapes,
arrays, masks and targets for property-based tests of your own ops. ``strategies`` needs
hypothesis (``pip install minitx[test]``) and is imported on first use.
"""
from minitx.testing.gradcheck import GradcheckError, check_backward_hygiene, gradcheck

__all__ = ["gradcheck", "check_backward_hygiene", "GradcheckError", "strategies"]


def __getattr__(name):
    if name == "strategies":
        import importlib

        return importlib.import_module("minitx.testing.strategies")
    raise AttributeError(f"module 'minitx.testing' has no attribute {name!r}")
