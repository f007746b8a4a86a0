"""Shared test settings: hypothesis profiles, BLAS threads and the gpu marker."""
import os
import sys

# Tests multiply small matrices, where OpenBLAS's thread hand-offs cost more than they save
# (and on a shared 2-core machine a spinning second thread can slow a product tenfold).
# Set before numpy is imported by any test module.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest
from hypothesis import HealthCheck, settings

# 'ci': enough examples to find real bugs within the CI budget, drawn as CI draws them (hypothesis
# derandomizes where CI is set: each test's draws come from its source, so HYPOTHESIS_PROFILE=ci
# repeats CI's run here); 'dev': quick local runs, drawn afresh each time.
settings.register_profile("ci", max_examples=25, deadline=None, print_blob=True, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=8, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_configure(config):
    """Record the arguments the property tests draw for each op (tests/_drawn.py)."""
    import _drawn
    from test_meta import minitx_functions

    config.addinivalue_line("markers", "run_last: run after every other test (it reads what they recorded)")
    _drawn.install(minitx_functions())


def pytest_collection_modifyitems(config, items):
    """The run_last tests go last; whether this run is the whole suite is stashed for them; and
    without a GPU the gpu tests are skipped."""
    import _drawn
    from pathlib import Path

    items.sort(key=lambda item: "run_last" in item.keywords)  # stable: the others keep their order
    # the whole suite: the paths asked for hold this directory (a file skipped whole, say for a
    # missing optional package, still counts), and no -k or -m picks among the tests
    here = Path(__file__).resolve().parent
    asked = [Path(arg.split("::")[0]).resolve() for arg in (config.args or [str(here)])]
    config.stash[_drawn.whole_suite_key()] = (all("::" not in arg for arg in config.args)
                                              and any(here == path or here.is_relative_to(path) for path in asked)
                                              and not config.option.keyword and not config.option.markexpr)

    from minitx import backend

    if backend.cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU with CuPy")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A hypothesis test that skips while it runs fails instead: a skip inside an example stops
    hypothesis after its first (smallest) one and reports the test as skipped, so everything it
    checks would have run once. Skip in a fixture or at collection, or test the optional part
    on its own (as tests/ops/_torch_kit.parity does)."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.skipped and getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid}: a hypothesis test skipped while running ({call.excinfo.value}); "
                           "it would have checked one example. Skip before the test runs instead.")


def pytest_terminal_summary(terminalreporter):
    """One line, even under -q, saying whether the PyTorch comparisons ran: a parity check
    that was skipped proves nothing, and the summary's counts alone do not say which it was."""
    outcomes = {"passed": 0, "failed": 0, "skipped": 0}
    for outcome in outcomes:
        for report in terminalreporter.stats.get(outcome, []):
            if "torch" in report.nodeid.split("::")[0].rsplit("/", 1)[-1] and report.when in ("call", "setup"):
                outcomes[outcome] += 1
    if any(outcomes.values()):
        try:
            import torch  # noqa: PLC0415
            version = f"torch {torch.__version__}"
        except ImportError:
            version = "torch not installed"
        terminalreporter.write_line(
            f"PyTorch parity ({version}): {outcomes['passed']} passed, {outcomes['failed']} failed, "
            f"{outcomes['skipped']} skipped in the tests/**/test_*torch*.py files")
    missed = sys.modules.get("_torch_kit")
    if missed is not None and missed.MISSED[0]:
        terminalreporter.write_line(f"PyTorch parity: {missed.MISSED[0]} comparisons inside property tests left out "
                                    "(PyTorch not installed); their other checks ran on every example")


@pytest.fixture(scope="session")
def cublas_gpu():
    """CuPy, for the tests of minitx.blas's cuBLAS call and of captured steps: skipped without a
    GPU, and without nvmath-python, whose binding the call goes through."""
    from minitx import backend

    if not backend.cuda_available():
        pytest.skip("needs a CUDA GPU with CuPy")
    pytest.importorskip("nvmath.bindings.cublas", reason="minitx.blas calls cuBLAS through nvmath-python")
    import cupy

    return cupy


@pytest.fixture
def tf32_switch(monkeypatch):
    """``set(flag)``: TF32 on or off for the rest of the test (backend.allow_tf32: CuPy's cached
    choice where CuPy runs, CUPY_TF32 where it does not); afterwards the switch as it was."""
    from minitx import backend

    before = backend.tf32_allowed()
    monkeypatch.setenv("CUPY_TF32", os.environ.get("CUPY_TF32", "0"))  # the variable restored too
    yield backend.allow_tf32
    backend.allow_tf32(before)
