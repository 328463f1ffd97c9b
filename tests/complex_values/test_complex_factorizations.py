"""numpy.linalg's cholesky and qr of complex matrices (LAPACK's potrf, geqrf and ungqr
on the parts interleaved) against NumPy's: values to rounding, NumPy's dtypes and
shapes, every mode, batched, under vmap, their errors; and derivatives by JAX's
convention against central differences (both factorizations are unique: cholesky's
diagonal is positive, and LAPACK keeps R's diagonal real)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jitflow
from complex_checks import assert_gradient_matches_central_differences, assert_complex_same
from test_complex_decompositions import complex_normal

pytestmark = pytest.mark.usefixtures("backend")


@settings(max_examples=12)
@given(batch=st.sampled_from([(), (2,), (1, 2)]), m=st.integers(0, 4), n=st.integers(0, 4),
       mode=st.sampled_from(["reduced", "complete", "r"]),
       dtype=st.sampled_from([np.complex64, np.complex128]), seed=st.integers(0, 2**16))
def test_qr_is_numpys(batch, m, n, mode, dtype, seed):
    a = complex_normal(np.random.default_rng(seed), batch + (m, n), dtype)
    got = jitflow.function(lambda a: np.linalg.qr(a, mode=mode))(a)
    expected = np.linalg.qr(a, mode=mode)
    got, expected = ((got,), (expected,)) if mode == "r" else (got, expected)
    scale = max(1.0, float(np.max(np.abs(a), initial=0)) * max(m, n))
    for g, e in zip(got, expected):
        assert_complex_same(g, e, scale=scale, eps=32 * np.finfo(dtype).eps * max(m, n, 1))


@settings(max_examples=12)
@given(batch=st.sampled_from([(), (3,), (2, 1)]), n=st.integers(0, 4), upper=st.booleans(),
       dtype=st.sampled_from([np.complex64, np.complex128]), seed=st.integers(0, 2**16))
def test_cholesky_is_numpys(batch, n, upper, dtype, seed):
    a = complex_normal(np.random.default_rng(seed), batch + (n, n), dtype)
    hermitian = (a @ np.conj(np.swapaxes(a, -1, -2)) + np.eye(n)).astype(dtype)
    got = jitflow.function(lambda h: np.linalg.cholesky(h, upper=upper))(hermitian)
    expected = np.linalg.cholesky(hermitian, upper=upper)
    scale = max(1.0, float(np.max(np.abs(hermitian), initial=0)))
    assert_complex_same(got, expected, scale=scale, eps=32 * np.finfo(dtype).eps * max(n, 1))


def test_under_vmap_and_clear_errors():
    a = complex_normal(np.random.default_rng(2), (3, 4, 2))
    q, r = jitflow.vmap(np.linalg.qr)(a)
    expected_q, expected_r = np.linalg.qr(a)
    assert_complex_same(q, expected_q, scale=1, eps=1e-14)
    assert_complex_same(r, expected_r, scale=10, eps=1e-14)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        jitflow.function(np.linalg.cholesky)(-np.eye(3) * (1 + 0j))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        jitflow.function(np.linalg.cholesky)(a)
    with pytest.raises(NotImplementedError, match="raw"):
        jitflow.function(lambda a: np.linalg.qr(a, mode="raw"))(a)
    with pytest.raises(NotImplementedError, match="at least as many rows"):
        jitflow.grad(lambda a: np.abs(np.linalg.qr(a)[1]).sum())(a[0].T)


rng = np.random.default_rng(9)
TALL = complex_normal(rng, (4, 3))
SQUARE = complex_normal(rng, (3, 3)) + 2 * np.eye(3)
WEIGHTS = complex_normal(rng, (4, 3))


def _positive_definite(z):
    return z @ np.conj(z.T) + np.eye(z.shape[0])


LOSSES = {
    "qr, Q": (lambda z: np.sum((np.linalg.qr(z)[0] * WEIGHTS).real), TALL),
    "qr, R": (lambda z: np.sum(np.abs(np.linalg.qr(z)[1] + WEIGHTS[:3])), TALL),
    "qr, both, square": (lambda z: np.sum((np.linalg.qr(z)[0] @ np.linalg.qr(z, "r")
                                           * WEIGHTS[:3]).imag), SQUARE),
    "qr complete, square": (lambda z: np.sum(np.abs(np.linalg.qr(z, "complete")[0] - 1)),
                            SQUARE),
    "cholesky": (lambda z: np.sum((np.linalg.cholesky(_positive_definite(z))
                                   * WEIGHTS[:3]).real), SQUARE),
    "cholesky, upper": (lambda z: np.sum(np.abs(np.linalg.cholesky(
        _positive_definite(z), upper=True) + WEIGHTS[1:])), SQUARE),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_gradients_match_central_differences(name, compiled):
    loss, a = LOSSES[name]
    assert_gradient_matches_central_differences(loss, a, compiled)
