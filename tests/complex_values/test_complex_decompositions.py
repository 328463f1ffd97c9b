"""numpy.linalg's det, slogdet, eigh, eigvalsh, eig and eigvals of complex matrices
(LAPACK's getrf, heevd and geev on the parts interleaved) against NumPy's: values to
rounding and NumPy's dtypes, batched, under vmap, singular matrices; eigenvectors by
what defines them (A v = v w, unit or orthonormal columns, phase-free |v|), since each
one's phase is LAPACK's choice; and derivatives by JAX's convention against central
differences (eig's: of the eigenvalues)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jitflow
from complex_checks import assert_gradient_matches_central_differences, assert_complex_same

pytestmark = pytest.mark.usefixtures("backend")

DTYPES = [np.complex64, np.complex128]


def complex_normal(rng, shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def hermitian_of_lower(a):
    """The Hermitian matrix eigh reads from a's lower triangle."""
    lower = np.tril(a, -1)
    diagonal = np.real(np.diagonal(a, axis1=-2, axis2=-1))
    return lower + np.conj(np.swapaxes(lower, -1, -2)) + \
        diagonal[..., None] * np.eye(a.shape[-1])


def _eps(dtype, n):
    return 32 * np.finfo(dtype).eps * max(n, 1)


@settings(max_examples=12)
@given(batch=st.sampled_from([(), (2,), (2, 1)]), n=st.integers(0, 4),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**16))
def test_determinants_are_numpys(batch, n, dtype, seed):
    a = complex_normal(np.random.default_rng(seed), batch + (n, n), dtype) + 2 * np.eye(n)
    a = a.astype(dtype)
    sign, logabsdet = jitflow.function(np.linalg.slogdet)(a)
    det = jitflow.function(np.linalg.det)(a)
    expected_sign, expected_log = np.linalg.slogdet(a)
    eps = _eps(dtype, n)
    assert_complex_same(sign, expected_sign, scale=1, eps=eps)
    assert_complex_same(logabsdet, expected_log, scale=max(1, n), eps=eps)
    expected = np.linalg.det(a)
    assert_complex_same(det, expected, scale=np.abs(expected), eps=eps * 4)


@settings(max_examples=12)
@given(batches=st.sampled_from([((), ()), ((2,), ()), ((2, 1), (3,)), ((), (2,))]),
       n=st.integers(0, 4), columns=st.sampled_from([None, 1, 2]),
       dtypes=st.sampled_from([(np.complex64, np.complex64), (np.complex128, np.float64),
                               (np.float32, np.complex64), (np.complex64, np.float64)]),
       seed=st.integers(0, 2**16))
def test_solve_and_inv_are_numpys(batches, n, columns, dtypes, seed):
    """LAPACK's gesv, as NumPy's: b a vector (columns None) or a stack of matrices,
    batch axes broadcast, a real operand promoted as NumPy promotes it."""
    rng = np.random.default_rng(seed)
    a = complex_normal(rng, batches[0] + (n, n)) + 3 * np.eye(n)
    a = a.astype(dtypes[0]) if np.dtype(dtypes[0]).kind == "c" else a.real.astype(dtypes[0])
    b = complex_normal(rng, (n,) if columns is None else batches[1] + (n, columns))
    b = b.astype(dtypes[1]) if np.dtype(dtypes[1]).kind == "c" else b.real.astype(dtypes[1])
    got, expected = jitflow.function(np.linalg.solve)(a, b), np.linalg.solve(a, b)
    eps = _eps(expected.dtype, n)
    assert_complex_same(got, expected, scale=max(1, np.max(np.abs(expected), initial=0)),
                        eps=eps)
    if np.dtype(dtypes[0]).kind == "c":
        inverse = np.linalg.inv(a)
        assert_complex_same(jitflow.function(np.linalg.inv)(a), inverse,
                            scale=max(1, np.max(np.abs(inverse), initial=0)),
                            eps=_eps(inverse.dtype, n))


@settings(max_examples=12)
@given(batch=st.sampled_from([(), (3,), (1, 2)]), n=st.integers(0, 4),
       dtype=st.sampled_from(DTYPES), uplo=st.sampled_from("LU"),
       seed=st.integers(0, 2**16))
def test_hermitian_eigenvalues_and_vectors(batch, n, dtype, uplo, seed):
    a = complex_normal(np.random.default_rng(seed), batch + (n, n), dtype)
    w, v = jitflow.function(lambda a: np.linalg.eigh(a, UPLO=uplo))(a)
    values = jitflow.function(lambda a: np.linalg.eigvalsh(a, UPLO=uplo))(a)
    expected = np.linalg.eigvalsh(a, UPLO=uplo)
    scale = max(1.0, float(np.max(np.abs(a), initial=0)) * n)
    eps = _eps(dtype, n)
    for got in (w, values):
        assert_complex_same(got, expected, scale=scale, eps=eps)
    assert v.dtype == dtype and v.shape == a.shape
    h = hermitian_of_lower(a if uplo == "L" else np.conj(np.swapaxes(a, -1, -2)))
    np.testing.assert_allclose(h @ v, v * w[..., None, :], atol=eps * scale)
    gram = np.conj(np.swapaxes(v, -1, -2)) @ v
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(n), gram.shape), atol=eps)
    # |v| does not depend on the phases; the eigenvalues of a random matrix are apart
    np.testing.assert_allclose(np.abs(v), np.abs(np.linalg.eigh(a, UPLO=uplo)[1]),
                               atol=eps * 1e3)


@settings(max_examples=12)
@given(batch=st.sampled_from([(), (2,), (1, 2)]), n=st.integers(0, 4),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**16))
def test_general_eigenvalues_and_vectors(batch, n, dtype, seed):
    """The same algorithm as NumPy's, from another build of LAPACK: NumPy's eigenvalues
    as a set, and unit vectors with A v = v w."""
    a = complex_normal(np.random.default_rng(seed), batch + (n, n), dtype)
    w, v = jitflow.function(np.linalg.eig)(a)
    values = jitflow.function(np.linalg.eigvals)(a)
    assert w.dtype == v.dtype == values.dtype == dtype and v.shape == a.shape
    scale = max(1.0, float(np.max(np.abs(a), initial=0)) * n)
    eps = _eps(dtype, n)
    expected = np.sort_complex(np.linalg.eigvals(a))
    for got in (w, values):
        assert_complex_same(np.sort_complex(got), expected, scale=scale, eps=eps * 4)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=eps * scale)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=eps)


def test_singular_and_degenerate_matrices():
    singular = np.array([[1 + 1j, 2 - 1j], [2 + 2j, 4 - 2j]])  # second row twice the first
    for a in (np.zeros((3, 3), np.complex64), singular, np.zeros((2, 0, 0), complex)):
        sign, logabsdet = jitflow.function(np.linalg.slogdet)(a)
        expected_sign, expected_log = np.linalg.slogdet(a)
        assert_complex_same(sign, expected_sign, scale=1, eps=1e-12, zero_sign=False)
        assert_complex_same(logabsdet, expected_log, scale=1, eps=1e-12)
        assert_complex_same(jitflow.function(np.linalg.det)(a), np.linalg.det(a),
                            scale=1, eps=1e-12, zero_sign=False)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        jitflow.function(np.linalg.inv)(singular)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        jitflow.function(np.linalg.solve)(singular, np.ones(2))
    # a repeated eigenvalue: the vectors are still an orthonormal basis
    w, v = jitflow.function(np.linalg.eigh)(np.eye(3, dtype=complex) * (2 + 5j))
    np.testing.assert_array_equal(w, [2, 2, 2])
    np.testing.assert_allclose(np.conj(v.T) @ v, np.eye(3), atol=1e-15)


def test_under_vmap_and_clear_errors():
    a = complex_normal(np.random.default_rng(3), (4, 3, 3))
    got = jitflow.vmap(lambda m: np.linalg.slogdet(m)[0])(a)
    assert_complex_same(got, np.linalg.slogdet(a)[0], scale=1, eps=1e-14)
    got = jitflow.vmap(np.linalg.eigvalsh)(a)
    assert_complex_same(got, np.linalg.eigvalsh(a), scale=10, eps=1e-14)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        jitflow.function(np.linalg.det)(np.ones((2, 3), complex))
    with pytest.raises(ValueError, match="UPLO"):
        jitflow.function(lambda a: np.linalg.eigh(a, UPLO="X"))(a)
    got = jitflow.vmap(np.linalg.eigvals)(a)
    assert_complex_same(np.sort_complex(got), np.sort_complex(np.linalg.eigvals(a)),
                        scale=10, eps=1e-14)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        jitflow.function(np.linalg.eig)(np.ones((2, 3), complex))

    # second derivatives: of the eigenvalues, through the eigenvectors the rules use
    loss = lambda a: np.sum(np.abs(np.linalg.eigvals(a)) ** 2)  # noqa: E731
    tangent = np.random.default_rng(4).standard_normal(a[0].shape) * (1 - 1j)
    hessian_times = jitflow.jvp(jitflow.grad(loss), (a[0],), (tangent,))[1]
    first, h = jitflow.grad(loss), 1e-5
    np.testing.assert_allclose(hessian_times,
                               (first(a[0] + h * tangent) - first(a[0] - h * tangent)) / (2 * h),
                               rtol=1e-5, atol=1e-5)


rng = np.random.default_rng(7)
A = complex_normal(rng, (3, 3)) + 2 * np.eye(3)
W = rng.standard_normal(3)


def _hermitian(z):
    return (z + np.conj(np.swapaxes(z, -1, -2))) / 2


LOSSES = {
    "log|det|": lambda z: np.linalg.slogdet(z)[1],
    "angle of det": lambda z: np.angle(np.linalg.slogdet(z)[0]),
    "sign parts": lambda z: np.linalg.slogdet(z)[0].real + 2 * np.linalg.slogdet(z)[0].imag,
    "det": lambda z: np.abs(np.linalg.det(z) + 1j),
    "eigvalsh": lambda z: np.sum(np.linalg.eigvalsh(_hermitian(z)) * W),
    "eigvals": lambda z: np.sum(np.abs(np.linalg.eigvals(z) + 1) * W[0]) +
    np.sum(np.linalg.eigvals(z).imag ** 2),
    "eig, values only": lambda z: np.sum(np.angle(np.linalg.eig(z)[0] + 2j)),
    "eigh, phase-free": lambda z: np.sum(np.abs(np.linalg.eigh(_hermitian(z))[1]) ** 2 * W),
    "eigh, projectors": lambda z: np.sum(np.real(
        (lambda v: v[:, :1] * np.conj(v[:, :1]).T)(np.linalg.eigh(_hermitian(z))[1]) * A)),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_gradients_match_central_differences(name, compiled):
    assert_gradient_matches_central_differences(LOSSES[name], A, compiled)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_forward_derivative_of_eigenvalues(compiled):
    """jvp of eigvals (holomorphic in a): dw = diag(V^-1 da V), against central
    differences of NumPy's eigenvalues (which keep their order for so small a step)."""
    direction = complex_normal(np.random.default_rng(8), A.shape)
    forward = lambda a, d: jitflow.jvp(np.linalg.eigvals, (a,), (d,))[1]  # noqa: E731
    if compiled:
        forward = jitflow.function(forward)
    h = 1e-6
    expected = (np.linalg.eigvals(A + h * direction) -
                np.linalg.eigvals(A - h * direction)) / (2 * h)
    np.testing.assert_allclose(forward(A, direction), expected, rtol=1e-6, atol=1e-6)
