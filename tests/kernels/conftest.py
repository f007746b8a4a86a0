"""Shared fixtures for the kernel tests.

The CPU harness compiles every .cu file of minitx/kernels with g++ (cached in
.kernel_build/); the first test session builds them all in parallel.
"""
import warnings

import pytest

from minitx.kernels import _runtime, cpu_harness, ladder

_built = {"ok": None, "why": ""}


def _build_all():
    if _built["ok"] is None:
        if not cpu_harness.available():
            _built["ok"] = False
            _built["why"] = "g++ not found: CPU kernel harness skipped"
            warnings.warn(_built["why"])
        else:
            cpu_harness.build_many(
                (_runtime.KERNEL_DIR / f, ks) for f, ks in {**_runtime.KERNELS, **ladder.KERNELS}.items())
            _built["ok"] = True
    return _built["ok"]


@pytest.fixture(scope="session")
def cpu():
    """The CPU back end (skips the test, visibly, when g++ is missing)."""
    if not _build_all():
        pytest.skip(_built["why"])
    return cpu_harness.cpu_backend()


@pytest.fixture(params=["forward", "reverse", "random", "drift"])
def any_schedule(request, cpu):
    """Run a test under each thread ordering of the emulator."""
    with cpu_harness.schedule(request.param):
        yield request.param


def pytest_report_header(config):
    msgs = []
    if not cpu_harness.available():
        msgs.append("minitx kernels: g++ missing -> CPU kernel harness tests SKIPPED")
    import shutil
    if shutil.which("nvcc") is None:
        msgs.append("minitx kernels: nvcc missing -> CUDA compile checks SKIPPED")
    return msgs


@pytest.fixture
def tf32(tf32_switch):
    """TF32 allowed (as --precision tf32 sets it): float32 attention may take the tensor cores."""
    tf32_switch(True)
