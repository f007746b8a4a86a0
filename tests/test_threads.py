"""minitx.set_num_threads / get_num_threads (minitx/threads.py): the BLAS libraries' threads, as
threadpoolctl itself reports them; refusals that name the call; the count restored after each test."""
import numpy as np
import pytest
from threadpoolctl import threadpool_info

import minitx
from minitx import threads


def blas_threads() -> list:
    """Each loaded BLAS library's thread count, as threadpoolctl reports it."""
    return [library["num_threads"] for library in threadpool_info() if library["user_api"] == "blas"]


@pytest.fixture(autouse=True)
def restored():
    """Whatever a test sets, the next test (and file) finds the count it had."""
    before = minitx.get_num_threads()
    try:
        yield
    finally:
        minitx.set_num_threads(before)
    assert minitx.get_num_threads() == before


@pytest.fixture
def blas():
    """NumPy's wheels bring OpenBLAS; a NumPy built without a BLAS has no threads to set."""
    if not blas_threads():
        pytest.skip("threadpoolctl finds no BLAS library in this NumPy")


@pytest.mark.parametrize("n", [1, 2, np.int64(2), 1, 3])
def test_set_then_get_round_trips_and_the_blas_library_holds_it(blas, n):
    minitx.set_num_threads(n)
    assert minitx.get_num_threads() == n and type(minitx.get_num_threads()) is int
    assert blas_threads() and set(blas_threads()) == {n}


def test_a_product_runs_and_agrees_after_each_setting(blas):
    a = np.random.default_rng(0).standard_normal((64, 48))
    x = minitx.tensor(a)
    expected = a @ a.T
    for n in (2, 1):
        minitx.set_num_threads(n)
        np.testing.assert_allclose((x @ x.T).numpy(), expected, rtol=1e-12)
        assert set(blas_threads()) == {n}


@pytest.mark.parametrize("bad, error, says", [
    (0, ValueError, "expected a positive int (1 or more threads), got 0"),
    (-2, ValueError, "expected a positive int (1 or more threads), got -2"),
    (True, TypeError, "expected a positive int, got bool True"),
    (False, TypeError, "expected a positive int, got bool False"),
    (2.0, TypeError, "expected a positive int, got float 2.0"),
    ("2", TypeError, "expected a positive int, got str '2'"),
    (None, TypeError, "expected a positive int, got NoneType None"),
])
def test_a_bad_count_is_refused_by_name_and_changes_nothing(blas, bad, error, says):
    minitx.set_num_threads(2)
    with pytest.raises(error) as caught:
        minitx.set_num_threads(bad)
    assert str(caught.value) == f"set_num_threads: {says}"
    assert minitx.get_num_threads() == 2 and set(blas_threads()) == {2}


def test_get_reports_the_blas_libraries_only_and_1_without_one(monkeypatch):
    """The largest BLAS count (OpenMP's pools are not NumPy's); none found: 1, NumPy's own loops."""
    found = [{"user_api": "blas", "num_threads": 3}, {"user_api": "openmp", "num_threads": 8},
             {"user_api": "blas", "num_threads": 5}]
    monkeypatch.setattr(threads, "threadpool_info", lambda: found)
    assert minitx.get_num_threads() == 5
    monkeypatch.setattr(threads, "threadpool_info", lambda: found[1:2])
    assert minitx.get_num_threads() == 1
    monkeypatch.setattr(threads, "threadpool_info", lambda: [])
    assert minitx.get_num_threads() == 1
