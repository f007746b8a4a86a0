"""PyTorch for the parity tests (tests/test_torch_*.py): skipped where it is not installed,
but an error in CI (the CI variable set), where .ci/run installs it as a test-only step: a
parity check that skips there silently would prove nothing on any run."""
import os

import pytest


def import_torch():
    if os.environ.get("CI"):
        import torch  # noqa: PLC0415  (missing in CI: the ImportError fails the run, by design)

        return torch
    return pytest.importorskip("torch")
