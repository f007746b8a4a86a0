"""minitx.linalg's matrix functions (minitx/ops/matrix.py): det, slogdet, inv, solve, cholesky,
matrix_power, multi_dot, vecdot, eigh, eigvalsh, svd, svdvals, matrix_norm's 'nuc', 2, -2, qr, pinv,
lstsq, solve_triangular (triangular_solve), lu_factor, lu, lu_unpack, lu_solve, cholesky_solve,
cholesky_inverse, matrix_rank, cond, matrix_exp, linalg.diagonal, vander (both), tensorinv and tensorsolve.

The matrices are drawn with known factors, A = Q1 diag(s) Q2^T (Q1, Q2 orthogonal, from a drawn
seed), s bounded away from 0 and its entries apart from each other: the forward is checked against
those factors (det = det Q1 det Q2 prod s, eigenvalues and singular values = s) and numpy.linalg;
the float64 gradient checks step across no singular matrix and no tie; PyTorch gets the same
inputs. Eigenvectors and singular vectors have arbitrary signs, so what is checked of them does not
depend on the signs: v_i ∘ v_i and V diag(c) V^T.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitx
import minitx.linalg as LA
from minitx.ops.matrix import (QR, SVD, Cholesky, CholeskySolve, Det, Eigh, Eigvalsh, Inv, LogAbsDet, LUFactor,
                               MatrixExp, Solve, SolveTriangular, Svdvals)
from minitx.testing import gradcheck
from minitx.testing import check_backward_hygiene, check_gradients, leaf
from _torch_kit import import_torch, parity, torch_in_example

BATCHES = st.sampled_from([(), (2,), (0,), (2, 1), (1, 0, 3)])


def _orthogonals(rng, batch, n):
    """[*batch, n, n] orthogonal matrices: the Q of QR of normal ones."""
    return np.linalg.qr(rng.standard_normal(batch + (n, n)))[0]


def _spread(rng, batch, k, low, gap):
    """[*batch, k] values from ``low`` up, each at least ``gap`` above the one before, shuffled."""
    steps = gap + rng.uniform(0, 0.5, batch + (k,))
    return rng.permuted(low + np.cumsum(steps, axis=-1) - steps[..., :1], axis=-1)


@st.composite
def factored(draw, kind, square=True):
    """(A, s, Q1, Q2) with A = Q1 diag(s) Q2^T [*batch, m, n]. kind 'general': s in [1, ...) apart
    by 0.3, Q2 another orthogonal matrix; 'symmetric': Q2 = Q1, s from -1.5 up apart by 0.4;
    'spd': Q2 = Q1, s from 1 up."""
    batch, seed = draw(BATCHES, label="batch"), draw(st.integers(0, 2**32 - 1), label="seed")
    m = draw(st.integers(1, 4), label="m")
    n = m if square else draw(st.integers(1, 4), label="n")
    rng = np.random.default_rng(seed)
    k = min(m, n)
    s = _spread(rng, batch, k, 1.0, 0.3)
    if kind == "symmetric":
        s = _spread(rng, batch, k, -1.5, 0.4)
    Q1 = _orthogonals(rng, batch, m)
    Q2 = Q1 if kind != "general" else _orthogonals(rng, batch, n)
    A = (Q1[..., :, :k] * s[..., None, :]) @ np.swapaxes(Q2[..., :, :k], -1, -2)
    return A, s, Q1, Q2


def _sym(t):
    """(t + t^T) / 2: eigh and cholesky read one triangle, so their gradient checks go through this."""
    return (t + t.mT) / 2


def _compare_with_torch(fn, torch_fn, *arrays):
    torch = torch_in_example()
    if torch is not None:
        parity(fn, torch_fn, *[leaf(a) for a in arrays], rtol=1e-8, atol=1e-10)


# ---------------------------------------------------------------- det, slogdet, inv


@given(factored("general"))
def test_det_slogdet_and_inv_as_their_factors_numpy_and_pytorch(drawn):
    A, s, Q1, Q2 = drawn
    det = np.linalg.det(Q1) * np.linalg.det(Q2) * np.prod(s, axis=-1)
    np.testing.assert_allclose(LA.det(leaf(A)).numpy(), det, rtol=1e-10)
    np.testing.assert_allclose(LA.det(leaf(A)).numpy(), np.linalg.det(A), rtol=1e-10)
    sign, logabsdet = LA.slogdet(leaf(A))
    np.testing.assert_array_equal(sign.numpy(), np.sign(det))
    np.testing.assert_allclose(logabsdet.numpy(), np.log(np.prod(s, axis=-1)), rtol=1e-10, atol=1e-12)
    inverse = (Q2 / s[..., None, :]) @ np.swapaxes(Q1, -1, -2)  # Q2 diag(1/s) Q1^T
    np.testing.assert_allclose(LA.inv(leaf(A)).numpy(), inverse, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(LA.inv(leaf(A)).numpy(), np.linalg.inv(A), rtol=1e-9, atol=1e-12)
    for op in (LA.det, lambda t: LA.slogdet(t).logabsdet, LA.inv):
        assert check_gradients(op, leaf(A))
    torch = import_torch()
    _compare_with_torch(LA.det, torch.linalg.det, A)
    _compare_with_torch(lambda t: LA.slogdet(t).logabsdet, lambda t: torch.linalg.slogdet(t).logabsdet, A)
    _compare_with_torch(LA.inv, torch.linalg.inv, A)
    _compare_with_torch(minitx.logdet, torch.logdet, A)


def test_det_of_a_singular_matrix_is_0_and_its_gradient_the_cofactors():
    """Rank n - 1: det 0 (to rounding), gradient the cofactor matrix, computed here from minors, as
    PyTorch's; rank n - 2: det and gradient 0."""
    rng = np.random.default_rng(1)
    A = rng.standard_normal((3, 2)) @ rng.standard_normal((2, 3))
    cofactors = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(A, i, 0), j, 1)) for j in range(3)]
                          for i in range(3)])
    x = leaf(A)
    y = LA.det(x)
    assert abs(y.item()) < 1e-12
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), cofactors, rtol=1e-9, atol=1e-12)
    torch = import_torch()
    parity(LA.det, torch.linalg.det, leaf(A), rtol=1e-8, atol=1e-12)
    x = leaf(np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0]))
    LA.det(x).backward()
    assert np.abs(x.grad.numpy()).max() < 1e-12
    assert LA.det(leaf(np.zeros((2, 0, 0)))).numpy().tolist() == [1.0, 1.0]  # the empty product, as PyTorch


def test_slogdet_and_logdet_of_singular_and_negative_determinants():
    torch = import_torch()
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    sign, logabsdet = LA.slogdet(leaf(singular))
    assert sign.item() == 0 and logabsdet.item() == -np.inf
    assert minitx.logdet(leaf(singular)).item() == -np.inf
    x = leaf(singular)
    LA.slogdet(x).logabsdet.backward()
    assert (np.abs(x.grad.numpy()) > 1e12).all()  # inf, or huge where the SVD left s tiny (PyTorch's: ±inf)
    negative = np.array([[0.0, 1.0], [1.0, 0.0]])  # det -1: logdet NaN, its gradient 0, as PyTorch's
    parity(minitx.logdet, torch.logdet, leaf(negative))
    parity(lambda t: t.logdet(), lambda t: t.logdet(), leaf(negative))


def test_inv_and_solve_refuse_a_singular_matrix_by_name():
    singular = leaf(np.array([[1.0, 2.0], [2.0, 4.0]]))
    for call, op in ((lambda: LA.inv(singular), "linalg.inv"), (lambda: minitx.inverse(singular), "linalg.inv"),
                     (lambda: LA.solve(singular, leaf(np.ones(2))), "linalg.solve"),
                     (lambda: LA.matrix_power(singular, -2), "linalg.matrix_power")):
        with pytest.raises(LA.LinAlgError, match=rf"^{op}: the input matrix is singular"):
            call()
    assert issubclass(LA.LinAlgError, RuntimeError)  # as torch.linalg.LinAlgError
    with pytest.raises(LA.LinAlgError, match=r"^linalg.cholesky: the factorization could not be completed because "
                                             r"the input is not positive-definite"):
        LA.cholesky(leaf(-np.eye(3)))


# ---------------------------------------------------------------- solve


@given(factored("general"), st.data())
def test_solve_as_its_residual_numpy_and_pytorch(drawn, data):
    A, s, _, _ = drawn
    n = A.shape[-1]
    left = data.draw(st.booleans(), label="left")
    vector = left and data.draw(st.booleans(), label="vector")  # (PyTorch refuses a vector B with left=False)
    k = data.draw(st.integers(1, 3), label="k")
    B_shape = (A.shape[:-1] if data.draw(st.booleans(), label="batched B") else (n,)) if vector else \
        (1,) * data.draw(st.integers(0, 1), label="B's extra axis") + A.shape[:-2] + ((n, k) if left else (k, n))
    B = np.random.default_rng(data.draw(st.integers(0, 99), label="B seed")).standard_normal(B_shape)
    X = LA.solve(leaf(A), leaf(B), left=left).numpy()
    Xc = X[..., :, None] if vector and left else X[..., None, :] if vector else X
    Bc = np.broadcast_to(B[..., :, None] if vector and left else B[..., None, :] if vector else B,
                         np.broadcast_shapes(Xc.shape, Xc.shape))
    residual = A @ Xc if left else Xc @ A
    np.testing.assert_allclose(residual, np.broadcast_to(Bc, residual.shape), rtol=1e-9, atol=1e-10)
    assert check_gradients(lambda a, b: LA.solve(a, b, left=left), leaf(A), leaf(B))
    torch = import_torch()
    _compare_with_torch(lambda a, b: LA.solve(a, b, left=left), lambda a, b: torch.linalg.solve(a, b, left=left),
                        A, B)


# ---------------------------------------------------------------- cholesky, matrix_power, multi_dot, vecdot


@given(factored("spd"), st.booleans())
def test_cholesky_as_its_product_numpy_and_pytorch(drawn, upper):
    A = drawn[0]
    L = LA.cholesky(leaf(A), upper=upper).numpy()
    lower = np.swapaxes(L, -1, -2) if upper else L
    np.testing.assert_array_equal(lower, np.tril(lower))
    assert (np.diagonal(lower, axis1=-2, axis2=-1) > 0).all()
    np.testing.assert_allclose(lower @ np.swapaxes(lower, -1, -2), A, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lower, np.linalg.cholesky(A), rtol=1e-10, atol=1e-12)
    assert check_gradients(lambda t: LA.cholesky(_sym(t), upper=upper), leaf(A))
    torch = import_torch()
    _compare_with_torch(lambda t: LA.cholesky(t, upper=upper), lambda t: torch.linalg.cholesky(t, upper=upper), A)


@given(factored("general"), st.integers(-3, 4))
def test_matrix_power_as_numpy_and_pytorch(drawn, n):
    A = drawn[0]
    np.testing.assert_allclose(LA.matrix_power(leaf(A), n).numpy(), np.linalg.matrix_power(A, n), rtol=1e-9,
                               atol=1e-10)
    if n:
        assert check_gradients(lambda t: LA.matrix_power(t, n), leaf(A))
    torch = import_torch()
    if n:
        _compare_with_torch(lambda t: LA.matrix_power(t, n), lambda t: torch.linalg.matrix_power(t, n), A)
        _compare_with_torch(lambda t: t.matrix_power(n), lambda t: t.matrix_power(n), A)
    else:
        assert not LA.matrix_power(leaf(A), 0).requires_grad  # the identity, a constant


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 80])
def test_matrix_power_of_integers_keeps_their_dtype_as_pytorch(dtype, n):
    """A^n of an integer matrix is a product of matmuls, exact in A's dtype (matmul's rule, and
    PyTorch's); a power in float32 would round F^80 of the Fibonacci matrix (entries near 4e16)."""
    A = np.array([[1, 1], [1, 0]], dtype=dtype)
    y = LA.matrix_power(minitx.tensor(A), n)
    expected = np.eye(2, dtype=dtype)
    for _ in range(n):
        expected = expected @ A
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y.numpy(), expected)
    torch = import_torch()
    np.testing.assert_array_equal(y.numpy(), torch.linalg.matrix_power(torch.tensor(A), n).numpy())
    # a negative power inverts, and an inverse of integers is computed in float32 (PyTorch refuses it)
    assert LA.matrix_power(minitx.tensor(A), -1).dtype == np.float32


@given(st.lists(st.integers(1, 4), min_size=3, max_size=6), st.booleans(), st.booleans(), st.integers(0, 99))
def test_multi_dot_as_numpy_and_pytorch(sides, first_vector, last_vector, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((a, b)) for a, b in zip(sides, sides[1:])]
    if first_vector:
        arrays[0] = arrays[0][0]
    if last_vector:
        arrays[-1] = arrays[-1][:, 0]
    np.testing.assert_allclose(LA.multi_dot([leaf(a) for a in arrays]).numpy(), np.linalg.multi_dot(arrays),
                               rtol=1e-10, atol=1e-12)
    assert check_gradients(lambda *ts: LA.multi_dot(ts), *[leaf(a) for a in arrays])
    torch = import_torch()
    _compare_with_torch(lambda *ts: LA.multi_dot(ts), lambda *ts: torch.linalg.multi_dot(ts), *arrays)


def test_multi_dot_takes_the_cheapest_order():
    """[10, 1] @ [1, 10] @ [10, 1]: right first costs 20 products, left first 200; the result has the
    same value either way, so the order is seen in the graph: the last product's left operand."""
    a, b, c = leaf(np.ones((10, 1))), leaf(np.ones((1, 10))), leaf(np.ones((10, 1)))
    y = LA.multi_dot([a, b, c])
    assert y.numpy().ravel().tolist() == [10.0] * 10
    assert y._ctx.inputs[0] is a and y._ctx.inputs[1].shape == (1, 1)


@given(st.integers(0, 99), st.sampled_from([((3,), (2, 3), -1), ((2, 1, 4), (3, 4), -1), ((2, 3), (2, 1), 0)]))
def test_vecdot_as_numpy_and_pytorch(seed, case):
    x_shape, y_shape, axis = case
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(x_shape), rng.standard_normal(y_shape)
    np.testing.assert_allclose(LA.vecdot(leaf(x), leaf(y), dim=axis).numpy(), (x * y).sum(axis=axis), rtol=1e-12)
    assert check_gradients(lambda a, b: LA.vecdot(a, b, dim=axis), leaf(x), leaf(y))
    torch = import_torch()
    _compare_with_torch(lambda a, b: LA.vecdot(a, b, dim=axis), lambda a, b: torch.linalg.vecdot(a, b, dim=axis), x, y)


# ---------------------------------------------------------------- eigh, eigvalsh


def _eigh_unsigned(t, UPLO="L"):
    """What of eigh does not depend on the eigenvectors' signs: w, v_i ∘ v_i and V diag(c) V^T."""
    w, V = LA.eigh(t, UPLO)
    c = minitx.tensor(np.linspace(-1.0, 2.0, V.shape[-1]))
    return w, V * V, (V * c) @ V.mT


def _torch_eigh_unsigned(t, UPLO="L"):
    torch = import_torch()
    w, V = torch.linalg.eigh(t, UPLO)
    c = torch.linspace(-1.0, 2.0, V.shape[-1], dtype=torch.float64)
    return w, V * V, (V * c) @ V.mT


def _joined(fn):
    """fn's outputs flattened into one tensor (parity compares one output)."""
    return lambda *args: (lambda outs: _cat(outs))(fn(*args))


def _cat(outs):
    if isinstance(outs[0], minitx.Tensor):
        return minitx.cat([o.reshape(-1) for o in outs])
    import torch
    return torch.cat([o.reshape(-1) for o in outs])


@given(factored("symmetric"), st.sampled_from(["L", "U"]))
def test_eigh_and_eigvalsh_as_their_factors_numpy_and_pytorch(drawn, UPLO):
    A, w, Q, _ = drawn
    w_got, V = LA.eigh(leaf(A), UPLO)
    np.testing.assert_allclose(w_got.numpy(), np.sort(w, axis=-1), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(LA.eigvalsh(leaf(A), UPLO).numpy(), np.linalg.eigvalsh(A, UPLO), rtol=1e-10, atol=1e-12)
    V = V.numpy()
    np.testing.assert_allclose(A @ V, V * w_got.numpy()[..., None, :], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.swapaxes(V, -1, -2) @ V, np.broadcast_to(np.eye(A.shape[-1]), A.shape), atol=1e-10)
    assert check_gradients(lambda t: _eigh_unsigned(_sym(t), UPLO), leaf(A))
    assert check_gradients(lambda t: LA.eigvalsh(_sym(t), UPLO), leaf(A))
    assert check_backward_hygiene(lambda t: Eigh(UPLO)(t), leaf(A))
    torch = import_torch()
    _compare_with_torch(_joined(lambda t: _eigh_unsigned(t, UPLO)), _joined(lambda t: _torch_eigh_unsigned(t, UPLO)), A)
    _compare_with_torch(lambda t: LA.eigvalsh(t, UPLO), lambda t: torch.linalg.eigvalsh(t, UPLO), A)


def test_eigh_reads_the_triangle_uplo_names():
    A = np.array([[2.0, 100.0], [1.0, 3.0]])
    np.testing.assert_allclose(LA.eigvalsh(leaf(A), "L").numpy(), np.linalg.eigvalsh([[2.0, 1.0], [1.0, 3.0]]))
    np.testing.assert_allclose(LA.eigh(leaf(A), "U")[0].numpy(), np.linalg.eigvalsh([[2.0, 100.0], [100.0, 3.0]]))


def test_eigh_at_repeated_eigenvalues():
    """Through the eigenvalues alone the gradient is finite (PyTorch's too); through the eigenvectors
    it is not, as PyTorch's, whose docs say it is finite only for distinct eigenvalues."""
    torch = import_torch()
    A = np.diag([1.0, 1.0, 2.0])
    parity(lambda t: LA.eigh(t).eigenvalues, lambda t: torch.linalg.eigh(t).eigenvalues, leaf(A))
    parity(lambda t: LA.eigh(t)[0] * 2, lambda t: torch.linalg.eigh(t)[0] * 2, leaf(A))
    x, theirs = leaf(A), torch.tensor(A, requires_grad=True)
    (LA.eigh(x).eigenvectors @ leaf([[1.0], [2.0], [3.0]])).sum().backward()
    (torch.linalg.eigh(theirs).eigenvectors @ torch.tensor([[1.0], [2.0], [3.0]], dtype=torch.float64)).sum().backward()
    assert not np.isfinite(x.grad.numpy()).all() and not torch.isfinite(theirs.grad).all()


# ---------------------------------------------------------------- svd, svdvals, matrix_norm


def test_svd_at_tied_singular_values_is_finite_through_s_alone_as_pytorch():
    """At A = I every singular value ties: through S the gradient is finite; through U and Vh it is NaN, as
    PyTorch's, even for U Vh, whose value does not depend on which U was chosen (0 / 0: its limit is lost)."""
    torch = import_torch()
    A = np.eye(3)
    parity(lambda t: LA.svd(t).S, lambda t: torch.linalg.svd(t).S, leaf(A))
    for fn, torch_fn in ((lambda t: _matrix_of_the_vectors(LA.svd(t)), lambda t: _matrix_of_the_vectors(torch.linalg.svd(t))),
                         (lambda t: LA.svd(t).U.sum() + LA.svd(t).S.sum(), lambda t: torch.linalg.svd(t).U.sum() + torch.linalg.svd(t).S.sum())):
        x, theirs = leaf(A), torch.tensor(A, requires_grad=True)
        fn(x).sum().backward()
        torch_fn(theirs).sum().backward()
        assert np.isnan(x.grad.numpy()).all() and torch.isnan(theirs.grad).all()
    batch = leaf(np.stack([np.eye(2), np.diag([2.0, 1.0])]))  # matrix by matrix: the second's gradient is finite
    _matrix_of_the_vectors(LA.svd(batch)).sum().backward()
    assert np.isnan(batch.grad.numpy()[0]).all() and np.isfinite(batch.grad.numpy()[1]).all()


def _matrix_of_the_vectors(usv):
    """U Vh: the polar factor of A, which the singular vectors' signs do not change."""
    return usv[0] @ usv[2]




def _svd_unsigned(t):
    """What of svd does not depend on the singular vectors' joint signs: S, U ∘ U, Vh ∘ Vh, U diag(c) Vh."""
    U, S, Vh = LA.svd(t, full_matrices=False)
    c = minitx.tensor(np.linspace(-1.0, 2.0, S.shape[-1]))
    return S, U * U, Vh * Vh, (U * c) @ Vh


def _torch_svd_unsigned(t):
    torch = import_torch()
    U, S, Vh = torch.linalg.svd(t, full_matrices=False)
    c = torch.linspace(-1.0, 2.0, S.shape[-1], dtype=torch.float64)
    return S, U * U, Vh * Vh, (U * c) @ Vh


@given(factored("general", square=False))
def test_svd_and_svdvals_as_their_factors_numpy_and_pytorch(drawn):
    A, s, _, _ = drawn
    m, n = A.shape[-2:]
    U, S, Vh = LA.svd(leaf(A), full_matrices=False)
    np.testing.assert_allclose(S.numpy(), -np.sort(-s, axis=-1), rtol=1e-10)
    np.testing.assert_allclose(LA.svdvals(leaf(A)).numpy(), np.linalg.svd(A, compute_uv=False), rtol=1e-10)
    np.testing.assert_allclose((U.numpy() * S.numpy()[..., None, :]) @ Vh.numpy(), A, rtol=1e-9, atol=1e-10)
    Uf, Sf, Vhf = LA.svd(leaf(A))  # full_matrices=True: square U and Vh, orthogonal
    assert Uf.shape == A.shape[:-2] + (m, m) and Vhf.shape == A.shape[:-2] + (n, n)
    for Q in (Uf.numpy(), Vhf.numpy()):
        np.testing.assert_allclose(np.swapaxes(Q, -1, -2) @ Q, np.broadcast_to(np.eye(Q.shape[-1]), Q.shape),
                                   atol=1e-10)
    np.testing.assert_allclose((Uf.numpy()[..., :, :S.shape[-1]] * Sf.numpy()[..., None, :]) @
                               Vhf.numpy()[..., :S.shape[-1], :], A, rtol=1e-9, atol=1e-10)
    assert check_gradients(_svd_unsigned, leaf(A))
    assert check_gradients(LA.svdvals, leaf(A))
    assert check_backward_hygiene(lambda t: SVD()(t), leaf(A))
    torch = import_torch()
    _compare_with_torch(_joined(_svd_unsigned), _joined(_torch_svd_unsigned), A)
    _compare_with_torch(LA.svdvals, torch.linalg.svdvals, A)
    _compare_with_torch(lambda t: (lambda u, s, v: (u * s.unsqueeze(-2)) @ v.mT)(*t.svd()),
                        lambda t: (lambda u, s, v: (u * s.unsqueeze(-2)) @ v.mT)(*t.svd()), A)  # Tensor.svd: V, not Vh
    for ord in ("nuc", 2, -2):
        np.testing.assert_allclose(LA.matrix_norm(leaf(A), ord).numpy(),
                                   {"nuc": np.sum, 2: np.max, -2: np.min}[ord](s, axis=-1), rtol=1e-10)
        assert check_gradients(lambda t: LA.matrix_norm(t, ord), leaf(A))
        _compare_with_torch(lambda t: LA.matrix_norm(t, ord), lambda t: torch.linalg.matrix_norm(t, ord), A)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 2)])
def test_svd_gradient_of_a_tall_or_wide_matrix_at_fixed_shapes(shape):
    """A tall or wide A, whatever the draws above give: dU's part inside U's span is not the whole of it
    (nor dV's inside V's), so the gradient through U and Vh is checked at shapes where it matters."""
    rng = np.random.default_rng(3)
    *batch, m, n = shape
    k = min(m, n)
    Q1 = np.linalg.qr(rng.standard_normal((*batch, m, m)))[0][..., :k]
    Q2 = np.linalg.qr(rng.standard_normal((*batch, n, n)))[0][..., :k]
    A = (Q1 * np.linspace(3.0, 1.0, k)) @ np.swapaxes(Q2, -1, -2)  # singular values 3 ... 1, well apart
    assert check_gradients(_svd_unsigned, leaf(A))
    _compare_with_torch(_joined(_svd_unsigned), _joined(_torch_svd_unsigned), A)


def test_matrix_norm_of_singular_values_over_other_axes_and_empty_matrices():
    torch = import_torch()
    A = np.random.default_rng(2).standard_normal((3, 2, 4))
    for ord in ("nuc", 2, -2):
        for keepdim in (False, True):
            parity(lambda t: LA.matrix_norm(t, ord, dim=(2, 0), keepdim=keepdim),
                   lambda t: torch.linalg.matrix_norm(t, ord, dim=(2, 0), keepdim=keepdim), leaf(A))
        parity(lambda t: LA.norm(t, ord), lambda t: torch.linalg.norm(t, ord), leaf(A[0]))
    for ord in ("nuc", 2):
        np.testing.assert_array_equal(LA.matrix_norm(leaf(np.zeros((2, 0, 3))), ord).numpy(), [0.0, 0.0])
    with pytest.raises(ValueError, match=r"^matrix_norm: ord=-2 is the smallest singular value, and A of shape "):
        LA.matrix_norm(leaf(np.zeros((0, 3))), -2)


# ---------------------------------------------------------------- names, errors, dtypes


def test_tensor_methods_and_top_level_names_are_pytorchs():
    torch = import_torch()
    A = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 1.5]])
    for call in (lambda m, t: m.det(t), lambda m, t: m.inverse(t), lambda m, t: m.logdet(t),
                 lambda m, t: m.slogdet(t)[1], lambda m, t: m.matrix_power(t, -2), lambda m, t: t.det(),
                 lambda m, t: t.inverse(), lambda m, t: t.slogdet().logabsdet, lambda m, t: t.cholesky(upper=True)
                 if m is minitx else torch.linalg.cholesky(t, upper=True)):
        parity(lambda t: call(minitx, t), lambda t: call(torch, t), leaf(A))
    sign, logabsdet = minitx.slogdet(leaf(-A))
    assert sign.item() == -1.0 and LA.slogdet(leaf(A))._fields == ("sign", "logabsdet")
    assert LA.eigh(leaf(A))._fields == ("eigenvalues", "eigenvectors") and LA.svd(leaf(A))._fields == ("U", "S", "Vh")


@pytest.mark.parametrize("op", ["det", "slogdet", "inv", "cholesky", "eigh", "eigvalsh"])
def test_a_non_square_matrix_is_refused_by_name(op):
    for shape, got in (((2, 3), "2 by 3 matrices"), ((3,), r"shape \(3,\)")):
        with pytest.raises(ValueError, match=rf"^linalg.{op}: A must be batches of square matrices \[..., n, n\], "
                                             rf"but got {got}"):
            getattr(LA, op)(leaf(np.ones(shape)))


def test_the_other_arguments_are_refused_by_name():
    A, B = leaf(np.eye(3)), leaf(np.ones((2, 3)))
    for call, error, message in [
        (lambda: LA.solve(B, A), ValueError, r"linalg.solve: A must be batches of square matrices"),
        (lambda: LA.solve(A, B), ValueError, r"linalg.solve: incompatible shapes of A \(3, 3\) and B \(2, 3\) for "
                                             r"the equation AX = B"),
        (lambda: LA.solve(A, leaf(np.ones((2, 4, 3, 1)))[:, :, :2], left=False), ValueError,
         r"linalg.solve: incompatible shapes"),
        (lambda: LA.solve(leaf(np.ones((2, 3, 3))), leaf(np.ones((3, 3, 1)))), ValueError,
         r"linalg.solve: the batch axes of A \(2, 3, 3\) and B \(3, 3, 1\) do not broadcast"),
        (lambda: LA.solve(A, leaf(np.ones(3)), left=False), ValueError,
         r"linalg.solve: a vector B \(shape \(3,\)\) with left=False is refused, as PyTorch refuses it"),
        (lambda: LA.solve(A, minitx.ones(3, dtype="float32")), TypeError,
         r"linalg.solve: A and B need one dtype, got float64 and float32"),
        (lambda: LA.matrix_power(B, 2), ValueError, r"linalg.matrix_power: A must be batches of square matrices"),
        (lambda: LA.matrix_power(A, 1.5), TypeError, r"linalg.matrix_power: n must be an integer, got 1.5"),
        (lambda: LA.multi_dot([A]), ValueError, r"linalg.multi_dot: expected at least 2 tensors, got 1"),
        (lambda: LA.multi_dot([A, B, A]), ValueError, r"linalg.multi_dot: tensors 0 and 1 do not chain"),
        (lambda: LA.multi_dot([A, A[0], A]), ValueError, r"linalg.multi_dot: tensors other than the first and "),
        (lambda: LA.eigh(A, "X"), ValueError, r"linalg.eigh: UPLO must be 'L' or 'U', got 'X'"),
        (lambda: LA.eigvalsh(A, UPLO="l"), ValueError, r"linalg.eigvalsh: UPLO must be 'L' or 'U', got 'l'"),
        (lambda: LA.svd(A[0]), ValueError, r"linalg.svd: A must be batches of matrices \[..., m, n\], got shape"),
        (lambda: LA.svdvals(A[0]), ValueError, r"linalg.svdvals: A must be batches of matrices"),
        (lambda: LA.vecdot(A[0], B[0, :2]), ValueError,
         r"linalg.vecdot: x of shape \(3,\) and y of shape \(2,\) do not broadcast"),
        (lambda: LA.vecdot(A, A, dim=2), IndexError, r"linalg.vecdot: axis 2 is out of range"),
    ]:
        with pytest.raises(error, match=f"^{message}"):
            call()


def test_dtypes_float32_stays_and_integers_become_float32():
    A32 = minitx.tensor(np.array([[2.0, 1.0], [1.0, 3.0]], dtype=np.float32), requires_grad=True)
    for out in (LA.det(A32), LA.inv(A32), LA.cholesky(A32), LA.eigh(A32)[1], LA.svd(A32)[0], LA.svdvals(A32),
                LA.solve(A32, A32), LA.slogdet(A32)[1]):
        assert out.dtype == np.float32
    assert LA.det(minitx.tensor([[2, 1], [1, 3]])).dtype == np.float32
    assert LA.det(minitx.tensor([[2, 1], [1, 3]])).item() == pytest.approx(5.0)


@pytest.mark.parametrize("op", [Det, LogAbsDet, Inv, Cholesky, Eigvalsh, Svdvals])
def test_backward_hygiene(op):
    assert check_backward_hygiene(lambda t: op()(t), leaf(np.array([[2.0, 1.0], [1.0, 3.0]])))
    assert check_backward_hygiene(lambda a, b: Solve()(a, b), leaf(np.array([[2.0, 1.0], [1.0, 3.0]])),
                                  leaf(np.ones((2, 1))))


# ---------------------------------------------------------------- qr, pinv, lstsq


def _tall(drawn):
    """A drawn A = Q1 diag(s) Q2^T made tall or square (transposed where m < n), with its factors."""
    A, s, Q1, Q2 = drawn
    return (A, s, Q1, Q2) if A.shape[-2] >= A.shape[-1] else (np.swapaxes(A, -1, -2), s, Q2, Q1)


def _check_qr(A, Q, R, mode):
    """Q orthonormal, R upper triangular, Q R = A, R^T R = A^T A (what does not depend on the signs), and
    the signs LAPACK's, as numpy.linalg.qr gives them."""
    m, n = A.shape[-2:]
    q = m if mode == "complete" else min(m, n)
    assert Q.shape == A.shape[:-2] + (m, q) and R.shape == A.shape[:-2] + (q, n)
    np.testing.assert_allclose(np.swapaxes(Q, -1, -2) @ Q, np.broadcast_to(np.eye(q), Q.shape[:-2] + (q, q)),
                               atol=1e-12)
    np.testing.assert_array_equal(R, np.triu(R))
    np.testing.assert_allclose(Q @ R, A, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(R, -1, -2) @ R, np.swapaxes(A, -1, -2) @ A, rtol=1e-10, atol=1e-12)
    numpy_Q, numpy_R = np.linalg.qr(A, mode=mode)
    np.testing.assert_allclose(Q, numpy_Q, atol=1e-12)
    np.testing.assert_allclose(R, numpy_R, atol=1e-12)


@given(factored("general", square=False), st.sampled_from(["reduced", "complete"]))
def test_qr_as_its_product_numpy_and_pytorch(drawn, mode):
    A = _tall(drawn)[0]
    Q, R = LA.qr(leaf(A), mode)
    _check_qr(A, Q.numpy(), R.numpy(), mode)
    np.testing.assert_array_equal(LA.qr(leaf(A), "r").R.numpy(), LA.qr(leaf(A)).R.numpy())
    torch = import_torch()
    if mode == "complete" and A.shape[-2] > A.shape[-1]:
        return  # (no gradient there: test_qr_refuses_the_gradients_pytorch_refuses)
    assert check_gradients(lambda t: tuple(LA.qr(t, mode)), leaf(A))
    assert check_backward_hygiene(lambda t: QR(mode)(t), leaf(A))
    _compare_with_torch(_joined(lambda t: LA.qr(t, mode)), _joined(lambda t: torch.linalg.qr(t, mode)), A)


@pytest.mark.parametrize("shape", [(3, 5), (2, 2, 4), (1, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_of_a_wide_matrix_at_fixed_shapes(shape, mode):
    """m < n: A = [X | Y] with X square and well-conditioned (its singular values 3 ... 1), which
    the gradient needs (QR's docstring); Y enters through R's last columns."""
    rng = np.random.default_rng(4)
    *batch, m, n = shape
    X = (_orthogonals(rng, tuple(batch), m) * np.linspace(3.0, 1.0, m)) @ _orthogonals(rng, tuple(batch), m)
    A = np.concatenate([X, rng.standard_normal((*batch, m, n - m))], axis=-1)
    Q, R = LA.qr(leaf(A), mode)
    _check_qr(A, Q.numpy(), R.numpy(), mode)
    assert check_gradients(lambda t: tuple(LA.qr(t, mode)), leaf(A))
    torch = import_torch()
    parity(_joined(lambda t: LA.qr(t, mode)), _joined(lambda t: torch.linalg.qr(t, mode)), leaf(A),
           rtol=1e-8, atol=1e-10)


def test_qr_refuses_the_gradients_pytorch_refuses():
    torch = import_torch()
    A = np.random.default_rng(5).standard_normal((4, 3))
    for mode, message in (("r", r"linalg.qr: the gradient needs Q, which mode='r' does not compute"),
                          ("complete", r"linalg.qr: mode='complete' with more rows than columns \(4 > 3\) has no "
                                       "gradient")):
        with pytest.raises(RuntimeError, match=f"^{message}"):
            LA.qr(leaf(A), mode).R.sum().backward()
        with pytest.raises(RuntimeError):
            torch.linalg.qr(torch.tensor(A, requires_grad=True), mode).R.sum().backward()
    assert LA.qr(leaf(A), "r").Q.shape == tuple(torch.linalg.qr(torch.tensor(A), "r").Q.shape) == (0,)
    assert LA.qr(leaf(np.zeros((2, 3, 0)))).Q.shape == (2, 3, 0)  # empty matrices, as NumPy's and PyTorch's


@given(factored("general", square=False), st.sampled_from([{}, {"atol": 0.5}, {"rtol": 0.1}, {"atol": 0.0}]))
def test_pinv_as_its_factors_numpy_and_pytorch(drawn, tolerance):
    """(The drawn singular values are 1 and up, within a factor 3.4: no tolerance drawn drops one.)"""
    A, s, Q1, Q2 = drawn
    k = s.shape[-1]
    inverse = (Q2[..., :, :k] / s[..., None, :]) @ np.swapaxes(Q1[..., :, :k], -1, -2)  # Q2 diag(1/s) Q1^T
    np.testing.assert_allclose(LA.pinv(leaf(A), **tolerance).numpy(), inverse, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(LA.pinv(leaf(A)).numpy(), np.linalg.pinv(A), rtol=1e-9, atol=1e-12)
    assert check_gradients(lambda t: LA.pinv(t, **tolerance), leaf(A))
    assert check_backward_hygiene(lambda t: LA.pinv(t, **tolerance), leaf(A))
    torch = import_torch()
    _compare_with_torch(lambda t: LA.pinv(t, **tolerance), lambda t: torch.linalg.pinv(t, **tolerance), A)
    _compare_with_torch(lambda t: t.pinverse(), lambda t: t.pinverse(), A)


@given(factored("symmetric"))
def test_pinv_of_a_symmetric_matrix_through_eigh(drawn):
    A, s, Q1, _ = drawn
    inverse = (Q1 / s[..., None, :]) @ np.swapaxes(Q1, -1, -2)
    np.testing.assert_allclose(LA.pinv(leaf(A), hermitian=True).numpy(), inverse, rtol=1e-9, atol=1e-12)
    assert check_gradients(lambda t: LA.pinv(_sym(t), hermitian=True), leaf(A))
    torch = import_torch()
    _compare_with_torch(lambda t: LA.pinv(_sym(t), hermitian=True),
                        lambda t: torch.linalg.pinv((t + t.mT) / 2, hermitian=True), A)


def test_pinv_hermitian_reads_the_lower_triangle_and_differentiates_that_matrix():
    """hermitian=True inverts the symmetric matrix of A's lower triangle: its value and its gradient (the
    gradient as if A were that matrix, as eigh's) are that matrix's, whatever A's upper triangle holds."""
    A = np.random.default_rng(8).standard_normal((2, 3, 3)) + 3 * np.eye(3)
    inverted = np.tril(A) + np.swapaxes(np.tril(A, -1), -1, -2)
    dy = np.random.default_rng(9).standard_normal(A.shape)
    x, y = leaf(A), leaf(inverted)
    LA.pinv(x, hermitian=True).backward(dy)
    LA.pinv(y, hermitian=True).backward(dy)
    np.testing.assert_allclose(LA.pinv(leaf(A), hermitian=True).numpy(), np.linalg.pinv(inverted), rtol=1e-10)
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("hermitian", [False, True])
def test_pinv_drops_the_singular_values_below_its_cutoff_as_pytorch(hermitian):
    """Below rtol * the largest (or atol) a singular value counts as 0; rtol's default is max(m, n) * eps.
    The gradient where a nonzero one is dropped is Pinv's formula at the X computed, as PyTorch's."""
    torch = import_torch()
    A = np.diag([2.0, -1e-3, 1e-17])
    np.testing.assert_allclose(LA.pinv(leaf(A), hermitian=hermitian).numpy(), np.diag([0.5, -1e3, 0.0]))
    np.testing.assert_allclose(LA.pinv(leaf(A), rtol=1e-2, hermitian=hermitian).numpy(), np.diag([0.5, 0.0, 0.0]))
    for keywords in ({}, {"atol": 1e-4}, {"rtol": 1e-2}, {"atol": 1e-2}, {"atol": 1e-4, "rtol": 1e-2}):
        parity(lambda t: LA.pinv(t, hermitian=hermitian, **keywords),
               lambda t: torch.linalg.pinv(t, hermitian=hermitian, **keywords), leaf(A), rtol=1e-9, atol=1e-9)
    parity(lambda t: minitx.pinverse(t, 1e-2), lambda t: torch.pinverse(t, 1e-2), leaf(A))
    assert LA.pinv(leaf(np.zeros((2, 0, 3)))).shape == tuple(torch.linalg.pinv(torch.zeros(2, 0, 3)).shape)


@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("A", [np.eye(3), np.diag([2.0, 2.0, 1.0]), np.diag([3.0, 1.0, 0.0]), np.zeros((2, 2)),
                               2 * np.linalg.qr(np.random.default_rng(7).standard_normal((4, 4)))[0]],
                         ids=["identity", "tied", "rank 2", "zero", "2 Q"])
def test_pinv_gradient_at_tied_and_zero_singular_values_as_pytorch(A, hermitian):
    """Where singular values tie (I, 2 Q) svd's backward divides by 0, but pinv's own (Pinv) does not:
    finite, and PyTorch's. At A = I: X = A^-1, so d sum(X) / dA = -X^T 1 1^T X^T, every entry -1."""
    torch = import_torch()
    if hermitian:
        A = A @ A.T
    x = leaf(A)
    LA.pinv(x, hermitian=hermitian).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    if np.array_equal(A, np.eye(3)):
        np.testing.assert_allclose(x.grad.numpy(), -np.ones((3, 3)))
    parity(lambda t: LA.pinv(t, hermitian=hermitian), lambda t: torch.linalg.pinv(t, hermitian=hermitian), leaf(A),
           rtol=1e-9, atol=1e-12)


def test_pinv_and_matrix_rank_take_pytorchs_older_spellings_and_tolerances_over_the_batch():
    """pinv's rcond (rtol with atol 0) and matrix_rank's tol (atol with rtol 0), positional or named, refused
    beside atol=/rtol=; tolerance tensors broadcast A's batch (the result's batch is the broadcast one)."""
    torch = import_torch()
    A = np.diag([10.0, 1.0, 0.05, 1e-3])
    for old in (0.0, 0.01, 0.5, 2.0):
        parity(lambda t: LA.pinv(t, old), lambda t: torch.linalg.pinv(t, old), leaf(A), rtol=1e-9, atol=1e-12)
        parity(lambda t: LA.pinv(t, rcond=old, hermitian=True), lambda t: torch.linalg.pinv(t, rcond=old, hermitian=True),
               leaf(A), rtol=1e-9, atol=1e-12)
        expected = int((np.diag(A) > old).sum())
        assert LA.matrix_rank(leaf(A), old).item() == LA.matrix_rank(leaf(A), tol=old, hermitian=True).item() == expected
        if torch_in_example() is not None:
            assert torch.linalg.matrix_rank(torch.tensor(A), tol=old).item() == expected
    tiny = leaf(np.diag([10.0, 1e-16]))  # tol=0 keeps it (rtol 0); atol=0 leaves rtol's default, which drops it
    assert (LA.matrix_rank(tiny, tol=0.0).item(), LA.matrix_rank(tiny, atol=0.0).item()) == (2, 1)
    tolerances = np.array([0.01, 0.5])
    assert LA.pinv(leaf(A), rtol=minitx.tensor(tolerances)).shape == (2, 4, 4)
    parity(lambda t, r: LA.pinv(t, rtol=r), lambda t, r: torch.linalg.pinv(t, rtol=r), leaf(A), minitx.tensor(tolerances),
           rtol=1e-9, atol=1e-12)
    parity(lambda t, r: LA.pinv(t, atol=r), lambda t, r: torch.linalg.pinv(t, atol=r), leaf(A), minitx.tensor(tolerances),
           rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(LA.matrix_rank(leaf(A), tol=minitx.tensor(tolerances)).numpy(), [3, 2])
    for call, message in ((lambda: LA.pinv(leaf(A), 0.1, atol=0.2), r"linalg.pinv: rcond= is PyTorch's older spelling "
                                                                      r"of rtol=; give it or atol=/rtol=, not both"),
                          (lambda: LA.matrix_rank(leaf(A), 0.1, rtol=0.2), r"linalg.matrix_rank: tol= is PyTorch's "
                                                                             r"older spelling of atol=")):
        with pytest.raises(TypeError, match=message):
            call()
    with pytest.raises(ValueError, match=r"linalg.pinv: rtol of shape \(3,\) does not broadcast against the batch"):
        LA.pinv(leaf(np.stack([A, A])), rtol=minitx.tensor([0.1, 0.2, 0.3]))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_pinv_matrix_rank_and_lstsq_in_16_bits(dtype):
    """PyTorch's CPU linalg refuses 16 bits; minitx computes them in float32 (as every op does) and rounds
    the result once. The default rtol is max(m, n) * eps of the 16-bit dtype."""
    A = np.array([[2.0, 1.0], [1.0, 3.0], [0.0, 1.0]])
    a = minitx.tensor(A, dtype=dtype, requires_grad=True)
    wide = minitx.tensor(A.astype(np.float32), dtype="float32")
    X = LA.pinv(a)
    assert X.dtype == a.dtype
    np.testing.assert_array_equal(X.numpy(), LA.pinv(minitx.tensor(a.numpy().astype(np.float32))).to(dtype).numpy())
    X.sum().backward()
    assert a.grad.dtype == a.dtype and np.isfinite(a.grad.numpy().astype(np.float32)).all()
    assert LA.matrix_rank(a).item() == 2 and LA.matrix_rank(minitx.tensor(np.diag([1.0, 1e-3]), dtype=dtype)).item() == 1
    assert LA.lstsq(a, a).solution.dtype == a.dtype
    np.testing.assert_allclose(LA.lstsq(a, a).solution.numpy().astype(np.float32),
                               LA.lstsq(wide, wide).solution.numpy(), atol=2e-2)


@given(factored("general", square=False), st.integers(1, 3), st.booleans())
def test_lstsq_as_its_factors_the_normal_equations_and_pytorch(drawn, k, vector):
    A, s, Q1, Q2 = _tall(drawn)
    rng = np.random.default_rng(int(abs(A).sum() * 1000) % 2**32)
    B = rng.standard_normal(A.shape[:-1] + (() if vector else (k,)))
    Bm = B[..., None] if vector else B
    n = A.shape[-1]
    X = (Q2 / s[..., None, :]) @ np.swapaxes(Q1[..., :, :n], -1, -2) @ Bm  # A^+ B = Q2 diag(1/s) Q1^T B
    result = LA.lstsq(leaf(A), leaf(B))
    assert result._fields == ("solution", "residuals", "rank", "singular_values")
    np.testing.assert_allclose(result.solution.numpy(), X[..., 0] if vector else X, rtol=1e-9, atol=1e-12)
    AT = np.swapaxes(A, -1, -2)
    normal = np.linalg.solve(AT @ A, AT @ Bm) if A.size else X
    np.testing.assert_allclose(result.solution.numpy(), normal[..., 0] if vector else normal, rtol=1e-7, atol=1e-10)
    assert check_gradients(lambda a, b: LA.lstsq(a, b).solution, leaf(A), leaf(B))
    torch = import_torch()
    _compare_with_torch(lambda a, b: LA.lstsq(a, b).solution, lambda a, b: torch.linalg.lstsq(a, b).solution, A, B)
    if torch_in_example() is not None:  # gelsy's other fields, on CPU
        theirs = torch.linalg.lstsq(torch.tensor(A), torch.tensor(B))
        np.testing.assert_array_equal(result.rank.numpy(), theirs.rank.numpy())
        assert result.rank.dtype == np.int64 and result.residuals.shape == tuple(theirs.residuals.shape) == (0,)
        assert result.singular_values.shape == tuple(theirs.singular_values.shape) == (0,)


def test_lstsq_broadcasts_batch_axes_as_pytorch():
    rng = np.random.default_rng(6)
    A, B = rng.standard_normal((2, 5, 3)), rng.standard_normal((1, 5, 2))
    torch = import_torch()
    parity(lambda a, b: LA.lstsq(a, b).solution, lambda a, b: torch.linalg.lstsq(a, b).solution, leaf(A), leaf(B),
           rtol=1e-8, atol=1e-10)
    assert LA.lstsq(leaf(A), leaf(B)).rank.numpy().tolist() == [3, 3]


def test_qr_pinv_and_lstsq_refuse_bad_input_by_name():
    A, wide = leaf(np.eye(3)), leaf(np.ones((2, 3)))
    for call, error, message in [
        (lambda: LA.qr(A[0]), ValueError, r"linalg.qr: A must be batches of matrices \[..., m, n\], got shape \(3,\)"),
        (lambda: LA.qr(A, "full"), ValueError, r"linalg.qr: mode must be 'reduced', 'complete' or 'r', got 'full'"),
        (lambda: LA.pinv(A[0]), ValueError, r"linalg.pinv: A must be batches of matrices"),
        (lambda: LA.pinv(wide, hermitian=True), ValueError, r"linalg.pinv: A must be batches of square matrices"),
        (lambda: LA.lstsq(A[0], A[0]), ValueError, r"linalg.lstsq: A must be batches of matrices"),
        (lambda: LA.lstsq(A, wide), ValueError, r"linalg.lstsq: incompatible shapes of A \(3, 3\) and B \(2, 3\)"),
        (lambda: LA.lstsq(leaf(np.ones((2, 3, 3))), leaf(np.ones((3, 3, 1)))), ValueError,
         r"linalg.lstsq: the batch axes of A \(2, 3, 3\) and B \(3, 3, 1\) do not broadcast"),
        (lambda: LA.lstsq(A, minitx.ones(3, 1, dtype="float32")), TypeError,
         r"linalg.lstsq: A and B need one dtype, got float64 and float32"),
        (lambda: LA.lstsq(A, A, driver="gelsd"), ValueError,
         r"linalg.lstsq: minitx has only the driver 'gelsy' \(PyTorch's CPU default\), got 'gelsd'"),
    ]:
        with pytest.raises(error, match=f"^{message}"):
            call()


@pytest.mark.filterwarnings("ignore:torch.qr is deprecated")
def test_qr_and_pinverse_tensor_methods_are_pytorchs():
    torch = import_torch()
    A = np.random.default_rng(7).standard_normal((4, 3))
    for some in (True, False):
        Q, R = leaf(A).qr(some=some)
        tQ, tR = torch.tensor(A).qr(some=some)
        np.testing.assert_allclose(Q.numpy(), tQ.numpy(), atol=1e-12)
        np.testing.assert_allclose(R.numpy(), tR.numpy(), atol=1e-12)
    A32 = minitx.tensor(A.astype(np.float32))
    assert LA.qr(A32).Q.dtype == LA.pinv(A32).dtype == LA.lstsq(A32, A32).solution.dtype == np.float32


# ---------------------------------------------------------------- triangular systems, LU


def _triangular(A, upper, unitriangular):
    """The matrix solve_triangular reads from A: its triangle, its diagonal 1 when unitriangular."""
    T = np.triu(A) if upper else np.tril(A)
    if unitriangular:
        T = T - np.diagonal(T, axis1=-2, axis2=-1)[..., None] * np.eye(A.shape[-1]) + np.eye(A.shape[-1])
    return T


@given(factored("general"), st.data())
def test_solve_triangular_as_numpy_and_pytorch(drawn, data):
    """A's diagonal is lifted to 2 + |A_ii| (a triangle's eigenvalues are its diagonal: no near-zero
    pivot), the other triangle holds values the op must not read."""
    A = drawn[0] + (2 + 2 * np.abs(drawn[0])) * np.eye(drawn[0].shape[-1])
    upper, left, unit = (data.draw(st.booleans(), label=name) for name in ("upper", "left", "unitriangular"))
    n, k = A.shape[-1], data.draw(st.integers(1, 3), label="k")
    B_shape = (1,) * data.draw(st.integers(0, 1), label="B's extra axis") + A.shape[:-2] + ((n, k) if left else (k, n))
    B = np.random.default_rng(data.draw(st.integers(0, 99), label="B seed")).standard_normal(B_shape)
    T = _triangular(A, upper, unit)
    X = LA.solve_triangular(leaf(A), leaf(B), upper=upper, left=left, unitriangular=unit).numpy()
    expected = np.linalg.solve(T, B) if left else np.swapaxes(np.linalg.solve(np.swapaxes(T, -1, -2),
                                                                             np.swapaxes(B, -1, -2)), -1, -2)
    np.testing.assert_allclose(X, expected, rtol=1e-9, atol=1e-11)
    fn = lambda a, b: LA.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)  # noqa: E731
    assert check_gradients(fn, leaf(A), leaf(B))
    torch = import_torch()
    _compare_with_torch(fn, lambda a, b: torch.linalg.solve_triangular(a, b, upper=upper, left=left,
                                                                       unitriangular=unit), A, B)


@pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")
def test_solve_triangular_at_a_zero_pivot_and_triangular_solve_as_pytorch():
    torch = import_torch()
    singular, B = np.array([[1.0, 2.0], [0.0, 0.0]]), np.array([[1.0], [1.0]])
    parity(lambda a, b: LA.solve_triangular(a, b, upper=True), lambda a, b: torch.linalg.solve_triangular(
        a, b, upper=True), leaf(singular, requires_grad=False), leaf(B, requires_grad=False))  # -inf, inf
    A = np.array([[2.0, 1.0, 0.5], [0.3, 3.0, 0.2], [0.5, 0.2, 1.5]])
    B = np.random.default_rng(3).standard_normal((2, 3, 2))
    for transpose in (False, True):
        for upper in (False, True):
            for call in (lambda m, b, a: m.triangular_solve(b, a, upper, transpose)[0],
                         lambda m, b, a: b.triangular_solve(a, upper=upper, transpose=transpose).solution):
                parity(lambda b, a: call(minitx, b, a), lambda b, a: call(torch, b, a), leaf(B), leaf(A))
    assert minitx.triangular_solve(leaf(B), leaf(A))._fields == ("solution", "cloned_coefficient")


def _check_lu(A, P, L, U, pivots):
    """A = P L U, P a permutation, L unit lower triangular with |L| <= 1 (partial pivoting), U upper."""
    m, n = A.shape[-2:]
    k = min(m, n)
    np.testing.assert_allclose(P @ L @ U, A, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(np.sort(np.argmax(P, axis=-2), axis=-1), np.broadcast_to(np.arange(m), P.shape[:-1]))
    np.testing.assert_array_equal(L, np.tril(L))
    np.testing.assert_array_equal(np.diagonal(L, axis1=-2, axis2=-1), np.ones(A.shape[:-2] + (k,)))
    assert (np.abs(L) <= 1).all()
    np.testing.assert_array_equal(U, np.triu(U))
    assert pivots.dtype == np.int32 and pivots.shape == A.shape[:-2] + (k,)
    assert ((pivots >= np.arange(1, k + 1)) & (pivots <= m)).all()  # row i swaps with a row at or below it


@given(factored("general", square=False))
def test_lu_factor_lu_and_lu_unpack_as_their_product_and_pytorch(drawn):
    A = drawn[0]
    LU, pivots = LA.lu_factor(leaf(A))
    P, L, U = minitx.lu_unpack(LU, pivots)
    _check_lu(A, P.numpy(), L.numpy(), U.numpy(), pivots.numpy())
    for got, expected in zip(LA.lu(leaf(A)), (P, L, U)):
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert check_gradients(lambda a: LA.lu_factor(a).LU, leaf(A))
    assert check_gradients(lambda a: LA.lu(a)[1:], leaf(A))
    torch = import_torch()
    _compare_with_torch(lambda a: LA.lu_factor(a).LU, lambda a: torch.linalg.lu_factor(a).LU, A)
    _compare_with_torch(lambda a: LA.lu(a).L, lambda a: torch.linalg.lu(a).L, A)
    _compare_with_torch(lambda a: LA.lu(a).U, lambda a: torch.linalg.lu(a).U, A)
    if torch_in_example() is not None:
        theirs = torch.linalg.lu_factor(torch.tensor(A))
        np.testing.assert_array_equal(pivots.numpy(), theirs.pivots.numpy())
        np.testing.assert_array_equal(P.numpy(), torch.linalg.lu(torch.tensor(A)).P.numpy())


@given(factored("general"), st.data())
def test_lu_solve_as_numpy_and_pytorch(drawn, data):
    A = drawn[0]
    left, adjoint = data.draw(st.booleans(), label="left"), data.draw(st.booleans(), label="adjoint")
    n, k = A.shape[-1], data.draw(st.integers(1, 3), label="k")
    B = np.random.default_rng(data.draw(st.integers(0, 99), label="B seed")).standard_normal(
        A.shape[:-2] + ((n, k) if left else (k, n)))
    Aa = np.swapaxes(A, -1, -2) if adjoint else A
    expected = np.linalg.solve(Aa, B) if left else np.swapaxes(np.linalg.solve(np.swapaxes(Aa, -1, -2),
                                                                              np.swapaxes(B, -1, -2)), -1, -2)
    LU, pivots = LA.lu_factor(leaf(A))
    np.testing.assert_allclose(LA.lu_solve(LU, pivots, leaf(B), left=left, adjoint=adjoint).numpy(), expected,
                               rtol=1e-9, atol=1e-11)
    pivots = pivots.numpy()
    assert check_gradients(lambda lu, b: LA.lu_solve(lu, minitx.tensor(pivots), b, left=left, adjoint=adjoint),
                           leaf(LU.numpy()), leaf(B))
    torch = import_torch()
    _compare_with_torch(lambda a, b: LA.lu_solve(*LA.lu_factor(a), b, left=left, adjoint=adjoint),
                        lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, left=left, adjoint=adjoint),
                        A, B)


def test_lu_of_a_singular_matrix_and_a_column_of_zeros():
    """lu_factor refuses a zero on U's diagonal by its place, as PyTorch's; lu factors it, as PyTorch's,
    its zero pivot eliminating nothing (LAPACK's getrf)."""
    torch = import_torch()
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(LA.LinAlgError, match=r"^linalg.lu_factor: U\[1, 1\] is zero: A is singular"):
        LA.lu_factor(leaf(singular))
    with pytest.raises(LA.LinAlgError, match=r"^linalg.lu_factor: \(batch element 1\): U\[0, 0\] is zero"):
        LA.lu_factor(leaf(np.stack([np.eye(2), np.zeros((2, 2))])))
    zero_column = np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 1.0], [0.0, 1.0, 5.0]])
    for A in (singular, zero_column, np.zeros((2, 3, 2))):
        for field in range(3):
            parity(lambda a: LA.lu(a)[field], lambda a: torch.linalg.lu(a)[field], leaf(A, requires_grad=False))
    for shape in ((0, 0), (2, 0, 3), (0, 3, 3), (3, 0)):  # empty matrices and batches, as PyTorch's
        theirs = torch.linalg.lu_factor(torch.zeros(shape, dtype=torch.float64))
        for ours, their in zip(LA.lu_factor(leaf(np.zeros(shape))), theirs):
            assert ours.shape == tuple(their.shape)
    with minitx.backend.count_host_reads() as reads:
        LA.lu_factor(leaf(np.eye(3)))
    assert reads.count == 1  # the check of U's diagonal


# ---------------------------------------------------------------- cholesky_solve, cholesky_inverse, matrix_rank, cond


@given(factored("spd"), st.booleans(), st.integers(1, 3), st.integers(0, 99))
def test_cholesky_solve_and_cholesky_inverse_as_numpy_and_pytorch(drawn, upper, k, seed):
    A = drawn[0]
    L = np.linalg.cholesky(A)
    factor = np.swapaxes(L, -1, -2) if upper else L
    B = np.random.default_rng(seed).standard_normal(A.shape[:-1] + (k,))
    np.testing.assert_allclose(minitx.cholesky_solve(leaf(B), leaf(factor), upper).numpy(), np.linalg.solve(A, B),
                               rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(minitx.cholesky_inverse(leaf(factor), upper).numpy(), np.linalg.inv(A),
                               rtol=1e-9, atol=1e-11)
    # the factor's other triangle is not read, but PyTorch's gradient (and so CholeskySolve's) counts it:
    # the finite differences see the triangle's part of it, through triu/tril (PyTorch is checked below)
    tri = minitx.triu if upper else minitx.tril
    assert check_gradients(lambda b, f: minitx.cholesky_solve(b, tri(f), upper), leaf(B), leaf(factor))
    assert check_gradients(lambda f: minitx.cholesky_inverse(tri(f), upper), leaf(factor))
    import_torch()  # (the comparisons below are of Tensor methods)
    _compare_with_torch(lambda b, f: b.cholesky_solve(f, upper), lambda b, f: b.cholesky_solve(f, upper), B, factor)
    _compare_with_torch(lambda f: f.cholesky_inverse(upper), lambda f: f.cholesky_inverse(upper), factor)


@given(factored("general", square=False), st.sampled_from([None, 2, -2, "fro", "nuc", np.inf, -np.inf, 1, -1]))
def test_cond_and_matrix_rank_as_their_factors_numpy_and_pytorch(drawn, p):
    A, s = drawn[0], drawn[1]
    square = A.shape[-1] == A.shape[-2]
    if p not in (None, 2, -2) and not square:
        A, s = drawn[0][..., :1, :1], drawn[1][..., :1]  # (the other orders need a square A)
    if A.shape[-1]:
        expected = s.max(-1) / s.min(-1) if p in (None, 2) else s.min(-1) / s.max(-1) if p == -2 else \
            np.linalg.cond(A, p) if A.size else np.zeros(A.shape[:-2])
        np.testing.assert_allclose(LA.cond(leaf(A), p).numpy(), expected, rtol=1e-9)
        assert check_gradients(lambda a: LA.cond(a, p), leaf(A))
    np.testing.assert_array_equal(LA.matrix_rank(leaf(A)).numpy(), np.full(A.shape[:-2], min(A.shape[-2:])))
    torch = import_torch()
    if A.size:  # (PyTorch's cond of an empty batch records no gradient)
        # PyTorch's cond for the orders other than 2, -2 and 'nuc' has a backward that raises (an in-place
        # write into its inverse): its gradient is compared with that of the same composition in PyTorch
        norms = torch.linalg.matrix_norm
        _compare_with_torch(lambda a: LA.cond(a, p), lambda a: torch.linalg.cond(a, p) if p in (None, 2, -2, "nuc")
                            else norms(a, p) * norms(torch.linalg.inv(a), p), A)
        parity(lambda a: LA.cond(a, p), lambda a: torch.linalg.cond(a, p), leaf(A, requires_grad=False), rtol=1e-8)
    if torch_in_example() is not None:
        theirs = torch.linalg.matrix_rank(torch.tensor(A))
        np.testing.assert_array_equal(LA.matrix_rank(leaf(A)).numpy(), theirs.numpy())


def test_cond_of_empty_matrices_is_0_as_pytorch():
    """NumPy defines no condition number for an empty matrix; PyTorch's is 0 for every order (after its check
    that 'fro' and 'nuc' have square matrices), and an empty batch gives an empty result."""
    torch = import_torch()
    for shape in [(0, 0), (3, 0), (0, 3), (2, 0, 0), (0, 3, 3)]:
        for p in (None, 2, -2, "fro", "nuc", np.inf, -np.inf, 1, -1):
            A = np.zeros(shape, dtype=np.float32)
            if p in ("fro", "nuc") and shape[-1] != shape[-2]:
                with pytest.raises(ValueError, match=r"linalg.cond: A must be batches of square matrices"):
                    LA.cond(minitx.tensor(A), p)
                continue
            y = LA.cond(minitx.tensor(A), p)
            assert y.shape == shape[:-2] and y.dtype == np.float32
            assert (y.numpy() == 0).all()
            if torch is not None:
                np.testing.assert_array_equal(y.numpy(), torch.linalg.cond(torch.tensor(A), p).numpy())


def test_cond_and_matrix_rank_of_singular_matrices_and_their_tolerances_as_pytorch():
    torch = import_torch()
    singular = np.stack([np.array([[1.0, 2.0], [2.0, 4.0]]), np.array([[2.0, 1.0], [1.0, 3.0]])])
    for p in ("fro", "nuc", np.inf, -np.inf, 1, -1):
        if p == "nuc":  # through the SVD, as PyTorch's: huge, not inf, and its size is rounding's
            assert LA.cond(leaf(singular), p).numpy()[0] > 1e15
            assert torch.linalg.cond(torch.tensor(singular), p)[0] > 1e15
            continue
        parity(lambda a: LA.cond(a, p), lambda a: torch.linalg.cond(a, p), leaf(singular, requires_grad=False))
        x = leaf(singular)
        LA.cond(x, p).sum().backward()  # inf for the singular matrix, and no gradient from it
        assert (x.grad.numpy()[0] == 0).all() and np.isfinite(x.grad.numpy()[1]).all()
    D = np.diag([1.0, 1e-3, 1e-9, 0.0]).astype(np.float32)
    for atol, rtol, hermitian in [(None, None, False), (0.0, None, False), (1e-2, None, True), (1e-12, None, False),
                                  (None, 1e-6, False), (1e-4, 1e-2, True), (None, None, True)]:
        ours = LA.matrix_rank(minitx.tensor(-D if hermitian else D), atol=atol, rtol=rtol, hermitian=hermitian)
        theirs = torch.linalg.matrix_rank(torch.tensor(-D if hermitian else D), atol=atol, rtol=rtol,
                                          hermitian=hermitian)
        assert ours.dtype == np.int64 and ours.item() == theirs.item(), (atol, rtol, hermitian)


def test_matrix_rank_with_tolerances_as_tensors_broadcast_against_the_batch_as_pytorch():
    """atol and rtol as tensors (a number each per matrix, or more: the result is the broadcast shape), rtol
    0 only where that matrix's atol is > 0, as torch.linalg.matrix_rank."""
    torch = import_torch()
    A = np.stack([np.diag([1.0, 1e-3, 1e-17, 0.0]), np.diag([5.0, 2.0, 1.0, 0.5]), np.diag([1.0, 0.1, 0.0, 0.0])])
    for atol, rtol in [(np.array([0.0, 1.0, 10.0]), None), (None, np.array([[0.0], [0.5]])),
                       (np.array(1.0), np.array([0.1, 0.2, 0.3])), (np.array([0.0, 1e-2, 0.0]), None),
                       (np.array([0, 1, 1]), None), (np.array(0.5), np.array([1e-4, 0.2, 1e-4]))]:
        ours = LA.matrix_rank(minitx.tensor(A), atol=None if atol is None else minitx.tensor(atol),
                              rtol=None if rtol is None else minitx.tensor(rtol))
        theirs = torch.linalg.matrix_rank(torch.tensor(A), atol=None if atol is None else torch.tensor(atol),
                                          rtol=None if rtol is None else torch.tensor(rtol))
        assert ours.dtype == np.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=str((atol, rtol)))
    # (a number beside a tensor, which PyTorch's overloads refuse, is taken as that number's 0-d tensor)
    np.testing.assert_array_equal(LA.matrix_rank(minitx.tensor(A), atol=0.5, rtol=minitx.tensor([1e-4, 0.2, 1e-4])).numpy(),
                                  ours.numpy())
    with pytest.raises(ValueError, match=r"linalg.matrix_rank: atol of shape \(2,\) does not broadcast against the "
                                         r"batch of A's shape \(3, 4, 4\)"):
        LA.matrix_rank(minitx.tensor(A), atol=minitx.tensor([0.0, 1.0]))


@pytest.mark.filterwarnings("ignore:torch.lu is deprecated", "ignore:torch.lu_solve is deprecated")
def test_the_older_lu_and_lu_solve_as_pytorchs():
    """minitx.lu and Tensor.lu (torch.lu: lu_factor's pair, get_infos=True a third, the first zero on U's
    diagonal, 1-based, without raising), minitx.lu_solve and Tensor.lu_solve (b first), the values and the
    gradients of b and LU as PyTorch's."""
    torch = import_torch()
    rng = np.random.default_rng(3)
    A = rng.standard_normal((2, 3, 3))
    A[1] = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]  # singular: U[2, 2] exactly 0
    wide = rng.standard_normal((4, 3))
    for M in (A, wide):
        for ours, theirs in ((minitx.lu(leaf(M), get_infos=True), torch.lu(torch.tensor(M), get_infos=True)),
                             (leaf(M).lu(get_infos=True), torch.tensor(M).lu(get_infos=True))):
            for o, t in zip(ours, theirs):
                assert o.dtype.name == str(t.dtype).removeprefix("torch.")
                np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)
        assert len(minitx.lu(leaf(M))) == 2
    assert minitx.lu(leaf(A), get_infos=True).info.numpy().tolist() == [0, 3]
    square, b = A[:1], rng.standard_normal((2, 3, 2))
    LU, pivots = minitx.lu(leaf(square))
    their_LU, their_pivots = torch.lu(torch.tensor(square))
    for call in (lambda lib, b, LU, p: lib.lu_solve(b, LU, p), lambda lib, b, LU, p: b.lu_solve(LU, p)):
        ours_b, ours_LU = leaf(b), leaf(LU.numpy())
        theirs_b = torch.tensor(b, requires_grad=True)
        theirs_LU = their_LU.detach().clone().requires_grad_(True)
        ours, theirs = call(minitx, ours_b, ours_LU, pivots), call(torch, theirs_b, theirs_LU, their_pivots)
        np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-10)
        ours.sum().backward()
        theirs.sum().backward()
        np.testing.assert_allclose(ours_b.grad.numpy(), theirs_b.grad.numpy(), rtol=1e-10)
        np.testing.assert_allclose(ours_LU.grad.numpy(), theirs_LU.grad.numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=r"^lu: LU without pivoting \(pivot=False\) is not implemented"):
        minitx.lu(leaf(square), pivot=False)


def test_the_triangular_lu_and_rank_functions_refuse_bad_input_by_name():
    A, wide = leaf(np.eye(3)), leaf(np.ones((2, 3)))
    for call, error, message in [
        (lambda: LA.solve_triangular(wide, A, upper=True), ValueError,
         r"linalg.solve_triangular: A must be batches of square matrices"),
        (lambda: LA.solve_triangular(A, leaf(np.ones(3)), upper=True), ValueError,
         r"linalg.solve_triangular: incompatible shapes of A \(3, 3\) and B \(3,\) for the equation AX = B \(B is "),
        (lambda: LA.solve_triangular(A, wide.mT, upper=True, left=False), ValueError,
         r"linalg.solve_triangular: incompatible shapes of A \(3, 3\) and B \(3, 2\) for the equation XA = B"),
        (lambda: LA.solve_triangular(A, minitx.ones(3, 1, dtype="float32"), upper=False), TypeError,
         r"linalg.solve_triangular: A and B need one dtype, got float64 and float32"),
        (lambda: LA.solve_triangular(leaf(np.ones((2, 3, 3))), leaf(np.ones((3, 3, 1))), upper=True), ValueError,
         r"linalg.solve_triangular: the batch axes of A \(2, 3, 3\) and B \(3, 3, 1\) do not broadcast"),
        (lambda: LA.lu_factor(A[0]), ValueError, r"linalg.lu_factor: A must be batches of matrices"),
        (lambda: LA.lu_factor(A, pivot=False), ValueError,
         r"linalg.lu_factor: LU without pivoting \(pivot=False\) is not implemented, as in PyTorch on the CPU"),
        (lambda: LA.lu(A, pivot=False), ValueError, r"linalg.lu: LU without pivoting"),
        (lambda: minitx.lu_unpack(A, minitx.tensor([1, 2, 3])), ValueError,
         r"lu_unpack: LU_pivots must be int32 of shape \(3,\) \(LU_data's batch and min\(m, n\)\), got int64"),
        (lambda: LA.lu_solve(A, LA.lu_factor(A).pivots, wide), ValueError,
         r"linalg.lu_solve: incompatible shapes of LU \(3, 3\) and B \(2, 3\) for the equation AX = B"),
        (lambda: LA.lu_solve(A, LA.lu_factor(A).pivots, minitx.ones(3, 1, dtype="float32")), TypeError,
         r"linalg.lu_solve: LU and B need one dtype, got float64 and float32"),
        (lambda: minitx.cholesky_solve(wide, A), ValueError,
         r"cholesky_solve: incompatible shapes of B \(2, 3\) and L \(3, 3\): B must be \[..., n, k\]"),
        (lambda: minitx.cholesky_solve(A, wide), ValueError, r"cholesky_solve: L must be batches of square"),
        (lambda: minitx.cholesky_inverse(wide), ValueError, r"cholesky_inverse: L must be batches of square"),
        (lambda: LA.matrix_rank(A[0]), ValueError, r"linalg.matrix_rank: A must be batches of matrices"),
        (lambda: LA.matrix_rank(wide, hermitian=True), ValueError, r"linalg.matrix_rank: A must be batches of square"),
        (lambda: LA.cond(A, 3), ValueError,
         r"linalg.cond: p must be None, 2, -2, 'fro', 'nuc', inf, -inf, 1 or -1, got 3"),
        (lambda: LA.cond(wide, "fro"), ValueError, r"linalg.cond: A must be batches of square matrices"),
    ]:
        with pytest.raises(error, match=f"^{message}"):
            call()


@pytest.mark.parametrize("upper", [False, True])
def test_the_new_classes_gradients_at_fixed_inputs(upper):
    """SolveTriangular, LUFactor (tall, square, wide) and CholeskySolve on their own, with gradcheck."""
    rng = np.random.default_rng(11)
    A, B = rng.standard_normal((3, 3)) + 3 * np.eye(3), rng.standard_normal((3, 2))
    for unitriangular in (False, True):
        assert gradcheck(lambda a, b: SolveTriangular(upper, unitriangular)(a, b), leaf(A), leaf(B))
    for shape in ((4, 2), (3, 3), (2, 4)):
        assert gradcheck(lambda a: LUFactor()(a), leaf(rng.standard_normal(shape)))
    L = np.linalg.cholesky(A @ A.T)
    assert gradcheck(lambda b, f: CholeskySolve()(b, minitx.tril(f)), leaf(B), leaf(L))
    assert gradcheck(lambda a: MatrixExp()(a), leaf(A if upper else -A / 2))


# ---------------------------------------------------------------- lstsq's minimum-norm solution


@given(factored("general", square=False), st.integers(0, 2), st.integers(1, 3), st.integers(0, 99))
def test_lstsq_of_a_wide_or_rank_deficient_matrix_is_its_minimum_norm_solution_as_pytorch(drawn, dropped, k, seed):
    """A = Q1 diag(s) Q2^T with its ``dropped`` smallest s set to 0: X = Q2 diag(1 / s) Q1^T B over the
    rest, the minimum-norm solution (gelsy's, PyTorch's CPU default)."""
    A, s, Q1, Q2 = drawn
    s = np.where(np.argsort(np.argsort(s, axis=-1), axis=-1) < dropped, 0.0, s)  # the smallest `dropped` to 0
    r = s.shape[-1]
    A = (Q1[..., :, :r] * s[..., None, :]) @ np.swapaxes(Q2[..., :, :r], -1, -2)
    B = np.random.default_rng(seed).standard_normal(A.shape[:-1] + (k,))
    inverse = np.where(s > 0, 1 / np.where(s > 0, s, 1), 0.0)
    X = (Q2[..., :, :r] * inverse[..., None, :]) @ np.swapaxes(Q1[..., :, :r], -1, -2) @ B
    result = LA.lstsq(leaf(A), leaf(B))
    np.testing.assert_allclose(result.solution.numpy(), X, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(result.rank.numpy(), (s > 0).sum(-1))
    if A.size:  # (the dropped values are 0 here: a step of the finite differences moves them, not the kept ones)
        assert check_gradients(lambda b: LA.lstsq(minitx.tensor(A), b).solution, leaf(B))
    torch = import_torch()
    _compare_with_torch(lambda a, b: LA.lstsq(a, b).solution, lambda a, b: torch.linalg.lstsq(a, b).solution, A, B)
    if torch_in_example() is not None:
        np.testing.assert_array_equal(result.rank.numpy(), torch.linalg.lstsq(torch.tensor(A), torch.tensor(B)).rank)


def test_lstsq_of_a_wide_matrix_has_pinvs_gradient():
    A, B = np.random.default_rng(4).standard_normal((2, 2, 4)), np.random.default_rng(5).standard_normal((2, 2, 3))
    assert check_gradients(lambda a, b: LA.lstsq(a, b).solution, leaf(A), leaf(B))
    with minitx.backend.count_host_reads() as reads:
        LA.lstsq(leaf(np.swapaxes(A, -1, -2)), leaf(np.ones((2, 4, 3))))
    assert reads.count == 1  # a tall A: whether one is rank-deficient, so which way, QR or pinv (a wide A: no read)


# ---------------------------------------------------------------- matrix_exp, diagonal, vander, tensorinv, tensorsolve


@given(factored("general"), st.sampled_from([0.1, 1.0, 4.0, 30.0]))
def test_matrix_exp_as_its_eigendecomposition_and_pytorch(drawn, scale):
    """exp(A) = W diag(e^w) W^-1 from NumPy's eig (complex where A's eigenvalues are); the scales take A
    past theta_13, so that it is scaled and squared, the gradient check at the smaller ones."""
    A = drawn[0] * scale * np.where(np.arange(drawn[0].shape[-1]) % 2, -1.0, 1.0)  # (not symmetric)
    w, W = np.linalg.eig(A)
    expected = ((W * np.exp(w)[..., None, :]) @ np.linalg.inv(W)).real if A.size else A
    got = LA.matrix_exp(leaf(A)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-10 * max(1.0, np.abs(expected).max(initial=0)))
    if scale < 10:
        assert check_gradients(LA.matrix_exp, leaf(A))
    torch = import_torch()
    parity(LA.matrix_exp, torch.linalg.matrix_exp, leaf(A), rtol=1e-8, atol=1e-10 * max(1.0, np.abs(expected).max(initial=0)))
    parity(lambda t: t.matrix_exp(), lambda t: t.matrix_exp(), leaf(A), rtol=1e-8, atol=1e-10 * max(1.0, np.abs(expected).max(initial=0)))


def test_matrix_exp_at_its_edges_as_pytorch():
    torch = import_torch()
    for A in (np.zeros((3, 3)), np.zeros((2, 0, 0)), np.array([[0.0, 1.0], [0.0, 0.0]]), np.diag([700.0, -700.0]),
              np.array([[np.nan, 0.0], [0.0, 1.0]]), np.array([[1e-300, 0.0], [0.0, 0.0]])):
        parity(LA.matrix_exp, torch.linalg.matrix_exp, leaf(A, requires_grad=False), rtol=1e-12)
    np.testing.assert_allclose(LA.matrix_exp(leaf(np.array([[0.0, 1.0], [0.0, 0.0]]))).numpy(), [[1, 1], [0, 1]],
                               rtol=1e-15)  # I + A, A^2 = 0
    assert LA.matrix_exp(minitx.tensor([[1, 0], [0, 1]])).dtype == np.float32


@given(st.integers(0, 99), st.integers(-2, 2), st.sampled_from([(-2, -1), (0, 2), (-1, 0)]))
def test_linalg_diagonal_and_both_vanders_as_numpy_and_pytorch(seed, offset, dims):
    rng = np.random.default_rng(seed)
    A, x = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3))
    np.testing.assert_array_equal(LA.diagonal(leaf(A), offset=offset, dim1=dims[0], dim2=dims[1]).numpy(),
                                  np.diagonal(A, offset, *dims))
    np.testing.assert_array_equal(LA.diagonal(leaf(A), offset=offset).numpy(), np.diagonal(A, offset, -2, -1))
    np.testing.assert_allclose(LA.vander(leaf(x), N=4).numpy(), x[..., None] ** np.arange(4), rtol=1e-15)
    np.testing.assert_allclose(minitx.vander(leaf(x[0])).numpy(), np.vander(x[0]), rtol=1e-15)
    assert check_gradients(lambda t: LA.vander(t, N=4), leaf(x))
    torch = import_torch()
    parity(lambda a: LA.diagonal(a, offset=offset, dim1=dims[0], dim2=dims[1]),
           lambda a: torch.linalg.diagonal(a, offset=offset, dim1=dims[0], dim2=dims[1]), leaf(A))
    parity(lambda a: LA.diagonal(a, offset=offset), lambda a: torch.linalg.diagonal(a, offset=offset), leaf(A))
    parity(lambda t: LA.vander(t, N=4), lambda t: torch.linalg.vander(t, N=4), leaf(x))
    # torch.vander's backward raises (an in-place write into its cumprod): its gradient is linalg.vander's
    parity(lambda t: minitx.vander(t, N=3), lambda t: torch.linalg.vander(t, N=3).flip(-1), leaf(x[0]))
    parity(lambda t: minitx.vander(t, N=3, increasing=True), lambda t: torch.vander(t.detach(), N=3, increasing=True),
           leaf(x[0], requires_grad=False))


def test_vander_at_zeros_and_integers_and_its_errors_as_pytorch():
    torch = import_torch()
    x = np.array([0.0, 2.0, -1.0])
    parity(lambda t: LA.vander(t), torch.linalg.vander, leaf(x))  # 0 * x^-1 never formed: 0^0 = 1, its gradient 0
    for dtype in ("int32", "int64", "uint8"):
        ours, theirs = minitx.vander(minitx.tensor([1, 2, 3], dtype=dtype)), torch.vander(torch.tensor([1, 2, 3]))
        assert ours.dtype == np.int64 and ours.numpy().tolist() == theirs.tolist()
        assert LA.vander(minitx.tensor([[1, 2]], dtype=dtype)).dtype == np.int64
    assert minitx.vander(minitx.tensor([True, False])).dtype == np.int64
    assert minitx.vander(leaf(x), N=0).shape == tuple(torch.vander(torch.tensor(x), N=0).shape) == (3, 0)
    for call, error, message in [
        (lambda: minitx.vander(leaf(np.ones((2, 2)))), ValueError, r"vander: x must be 1-d, got shape \(2, 2\)"),
        (lambda: minitx.vander(leaf(x), N=-1), ValueError, r"vander: N must be a non-negative integer, got -1"),
        (lambda: LA.vander(leaf(x), N=1), ValueError, r"linalg.vander: N must be an integer greater than 1, got 1"),
        (lambda: LA.vander(minitx.tensor([True])), TypeError, r"linalg.vander: x must be a tensor of numbers with at"),
        (lambda: LA.vander(leaf(np.array(2.0))), TypeError, r"linalg.vander: x must be a tensor of numbers"),
    ]:
        with pytest.raises(error, match=f"^{message}"):
            call()


@given(factored("general"), st.data())
def test_tensorinv_and_tensorsolve_as_inv_solve_and_pytorch(drawn, data):
    """A [n, n] of the drawn factors, its axes split as [2, n / 2, ...] or kept: tensorinv's and
    tensorsolve's matrix is A itself."""
    A = drawn[0].reshape(-1, *drawn[0].shape[-2:])[:1].reshape(drawn[0].shape[-2:]) if drawn[0].size else np.eye(2)
    n = A.shape[-1]
    rows = (2, n // 2) if n % 2 == 0 else (n,)
    T = A.reshape(rows + (n,))
    inverse = LA.tensorinv(leaf(T), ind=len(rows))
    np.testing.assert_allclose(inverse.numpy().reshape(n, n), np.linalg.inv(A), rtol=1e-9, atol=1e-12)
    B = np.random.default_rng(data.draw(st.integers(0, 99), label="B seed")).standard_normal(rows)
    X = LA.tensorsolve(leaf(T), leaf(B))
    np.testing.assert_allclose(X.numpy(), np.linalg.solve(A, B.reshape(-1)), rtol=1e-9, atol=1e-12)
    moved = np.moveaxis(T, -1, 0)  # the solution's axis first: dims=(0,) moves it back
    assert check_gradients(lambda a, b: LA.tensorsolve(a, b, dims=(0,)), leaf(moved), leaf(B))
    assert check_gradients(lambda a: LA.tensorinv(a, ind=len(rows)), leaf(T))
    torch = import_torch()
    _compare_with_torch(lambda a: LA.tensorinv(a, ind=len(rows)), lambda a: torch.linalg.tensorinv(a, ind=len(rows)),
                        T)
    _compare_with_torch(lambda a, b: LA.tensorsolve(a, b, dims=(0,)),
                        lambda a, b: torch.linalg.tensorsolve(a, b, dims=(0,)), moved, B)


def test_tensorinv_and_tensorsolve_refuse_bad_input_by_name():
    for call, error, message in [
        (lambda: LA.tensorinv(leaf(np.ones((2, 3, 4))), ind=1), ValueError,
         r"linalg.tensorinv: A's first 1 axes \(2,\) and the others \(3, 4\) must have as many entries, got 2 and 12"),
        (lambda: LA.tensorinv(leaf(np.ones((2, 2))), ind=0), ValueError,
         r"linalg.tensorinv: ind must be an integer from 1 to A's 2 dimensions, got 0"),
        (lambda: LA.tensorinv(leaf(np.ones((2, 2))), ind=1), LA.LinAlgError, r"^linalg.tensorinv: the input matrix is singular"),
        (lambda: LA.tensorsolve(leaf(np.ones((2, 3, 4))), leaf(np.ones((2, 3)))), ValueError,
         r"linalg.tensorsolve: A \(2, 3, 4\) must start with B's shape \(2, 3\) and its other axes have as many"),
        (lambda: LA.matrix_exp(leaf(np.ones((2, 3)))), ValueError, r"linalg.matrix_exp: A must be batches of square"),
    ]:
        with pytest.raises(error, match=f"^{message}"):
            call()
