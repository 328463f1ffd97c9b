"""numpy.linalg's svd and svdvals of complex matrices (LAPACK's gesdd on the parts
interleaved) and what reads singular values (norms of orders 2, -2, 'nuc', cond,
matrix_rank), pinv and lstsq (NumPy's recipes over the SVD), matrix_power and
multi_dot: NumPy's values to rounding and NumPy's dtypes; singular vectors by what
defines them (U diag(s) Vh = A, orthonormal columns), their phases being LAPACK's
choice; and derivatives by JAX's convention against central differences."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jitflow
from complex_checks import assert_gradient_matches_central_differences, assert_complex_same
from test_complex_decompositions import complex_normal

pytestmark = pytest.mark.usefixtures("backend")


@settings(max_examples=12)
@given(batch=st.sampled_from([(), (2,), (1, 2)]), m=st.integers(0, 4), n=st.integers(0, 4),
       full=st.booleans(), dtype=st.sampled_from([np.complex64, np.complex128]),
       seed=st.integers(0, 2**16))
def test_svd_gives_numpys_singular_values_and_true_vectors(batch, m, n, full, dtype, seed):
    a = complex_normal(np.random.default_rng(seed), batch + (m, n), dtype)
    u, s, vh = jitflow.function(lambda a: np.linalg.svd(a, full_matrices=full))(a)
    values = jitflow.function(np.linalg.svdvals)(a)
    expected_u, expected_s, expected_vh = np.linalg.svd(a, full_matrices=full)
    eps = 32 * np.finfo(dtype).eps * max(m, n, 1)
    scale = max(1.0, float(np.max(np.abs(a), initial=0)) * max(m, n))
    for got in (s, values):
        assert_complex_same(got, expected_s, scale=scale, eps=eps)
    assert u.dtype == vh.dtype == dtype
    assert u.shape == expected_u.shape and vh.shape == expected_vh.shape
    k = min(m, n)
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a,
                               atol=eps * scale)
    for unitary, axis in ((u, -2), (np.swapaxes(vh, -1, -2), -2)):
        gram = np.conj(np.swapaxes(unitary, -1, -2)) @ unitary
        np.testing.assert_allclose(gram, np.broadcast_to(np.eye(gram.shape[-1]), gram.shape),
                                   atol=eps)


rng = np.random.default_rng(5)
WIDE = complex_normal(rng, (2, 3, 4))
SQUARE = complex_normal(rng, (3, 3)) + 2 * np.eye(3)
TALL = complex_normal(rng, (5, 3))
VECTOR = complex_normal(rng, (5,))
RANK_ONE = np.outer(VECTOR[:3], VECTOR[1:4])

FUNCTIONS = {
    "norm 2": (lambda a: np.linalg.norm(a, 2), SQUARE),
    "norm -2 over axes, kept": (lambda a: np.linalg.norm(a, -2, axis=(2, 0), keepdims=True),
                                WIDE),
    "norm nuc": (lambda a: np.linalg.norm(a, "nuc"), TALL),
    "matrix_norm 2": (lambda a: np.linalg.matrix_norm(a, ord=2), WIDE),
    "vector_norm 3": (lambda a: np.linalg.vector_norm(a, ord=3, axis=-1), WIDE),
    "cond": (np.linalg.cond, WIDE),
    "cond -2": (lambda a: np.linalg.cond(a, -2), SQUARE),
    "cond fro": (lambda a: np.linalg.cond(a, "fro"), SQUARE),
    "matrix_rank": (np.linalg.matrix_rank, WIDE),
    "matrix_rank of rank one": (np.linalg.matrix_rank, RANK_ONE),
    "matrix_rank tol": (lambda a: np.linalg.matrix_rank(a, tol=1.0), TALL),
    "pinv": (np.linalg.pinv, WIDE),
    "pinv rtol": (lambda a: np.linalg.pinv(a, rtol=0.5), TALL),
    "pinv of rank one": (np.linalg.pinv, RANK_ONE),
    "lstsq vector": (lambda a: np.linalg.lstsq(a, VECTOR), TALL),
    "lstsq matrix": (lambda a: np.linalg.lstsq(a, TALL[:, :2].real), TALL),
    "lstsq underdetermined": (lambda a: np.linalg.lstsq(a, VECTOR[:3]), TALL.T),
    "matrix_power 5": (lambda a: np.linalg.matrix_power(a, 5), SQUARE),
    "matrix_power -2": (lambda a: np.linalg.matrix_power(a, -2), SQUARE),
    "matrix_power 0": (lambda a: np.linalg.matrix_power(a, 0), SQUARE),
    "multi_dot": (lambda a: np.linalg.multi_dot([VECTOR[:3], a, a.real, TALL.T]), SQUARE),
    "single precision": (lambda a: (np.linalg.norm(a, 2), np.linalg.pinv(a),
                                    np.linalg.matrix_power(a, 3)),
                         SQUARE.astype(np.complex64)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_functions_of_singular_values_are_numpys(name):
    fn, a = FUNCTIONS[name]
    got, expected = jitflow.function(fn)(a), fn(a)
    got, expected = (got, expected) if isinstance(expected, tuple) else ((got,), (expected,))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = np.asarray(e)
        eps = 64 * np.finfo(e.dtype).eps if e.dtype.kind in "fc" else 0
        scale = max(1.0, float(np.max(np.abs(e), initial=0))) * np.linalg.cond(a).max()
        assert_complex_same(np.asarray(g), e, scale=scale, eps=eps, what=name)


def test_under_vmap_and_clear_errors():
    got = jitflow.vmap(lambda a: np.linalg.norm(a, "nuc"))(WIDE)
    np.testing.assert_allclose(got, np.linalg.norm(WIDE, "nuc", axis=(1, 2)), rtol=1e-14)
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        jitflow.function(np.linalg.svd)(VECTOR)
    with pytest.raises(NotImplementedError, match="full_matrices=True"):
        jitflow.grad(lambda a: np.abs(np.linalg.svd(a)[0]).sum())(TALL)
    with pytest.raises(ValueError, match="both set"):
        jitflow.function(lambda a: np.linalg.pinv(a, rcond=0.1, rtol=0.1))(SQUARE)
    with pytest.raises(TypeError, match="integer"):
        jitflow.function(lambda a: np.linalg.matrix_power(a, 1.5))(SQUARE)


W = rng.standard_normal(3)
LOSSES = {
    "svdvals": lambda z: np.sum(np.linalg.svdvals(z) * W),
    "svd, values only": lambda z: np.sum(np.linalg.svd(z)[1] ** 2 * W),
    "svd, |U| and |Vh|": lambda z: (lambda u, s, vh: np.sum(np.abs(u) * W) + np.sum(
        np.abs(vh) ** 3 * W[:, None]))(*np.linalg.svd(z, full_matrices=False)),
    "svd, U S Vh": lambda z: (lambda u, s, vh: np.sum(np.abs(
        (u[..., :2] * s[:2]) @ vh[:2] + 1)))(*np.linalg.svd(z, full_matrices=False)),
    "svd, projectors": lambda z: np.sum(np.real((lambda u: u @ np.conj(u.T))(
        np.linalg.svd(z, full_matrices=False)[0][:, :2]) * W[0])),
    "norm 2": lambda z: np.linalg.norm(z, 2),
    "norm nuc": lambda z: np.linalg.norm(z, "nuc"),
    "cond": lambda z: np.linalg.cond(z),
    "pinv": lambda z: np.abs(np.linalg.pinv(z) @ VECTOR[:z.shape[0]] + 1).sum(),
    "lstsq": lambda z: np.abs(np.linalg.lstsq(z, VECTOR[:z.shape[0]])[0]).sum(),
    "matrix_power": lambda z: np.abs(np.linalg.matrix_power(z, -3)).sum(),
}
SHAPES = {"square": SQUARE, "tall": TALL, "wide": TALL.T.copy()}
GRADIENT_CASES = [(name, shape) for name in sorted(LOSSES) for shape in SHAPES
                  if shape == "square" or "svd" in name or name in ("pinv", "lstsq")]


@pytest.mark.parametrize("name, shape", GRADIENT_CASES)
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_gradients_match_central_differences(name, shape, compiled):
    assert_gradient_matches_central_differences(LOSSES[name], SHAPES[shape], compiled)
