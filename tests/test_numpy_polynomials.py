"""Polynomial functions (jitflow/numpy/polynomials.py) against NumPy: values, dtypes and
shapes eagerly, traced, and through NumPy's own functions on traced values; NumPy's
errors; derivatives, polyfit's among them."""
import warnings

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import given_per_backend
from jitflow.testing import check_grads
from numpy_programs import check_program
from strategies import DTYPES, arrays

pytestmark = pytest.mark.usefixtures("backend")

X = np.array([0.0, 0.3, 0.5, 1.1, 1.7, 2.0, 2.6])
Y = np.array([[1.0, -2.0], [0.5, 0.25], [2.0, 1.0], [-1.5, 0.5], [3.0, 2.5], [0.0, 1.0],
              [4.0, -3.0]])
P = np.array([3, -1, 0, 2], np.int32)

PROGRAMS = {
    "polyadd": lambda xp, x, y, p: xp.polyadd(p, x[:2]),
    "polyadd_int": lambda xp, x, y, p: xp.polyadd(p[:2], p),
    "polysub": lambda xp, x, y, p: xp.polysub(x, p),
    "polysub_scalar": lambda xp, x, y, p: xp.polysub(p, x[3]),
    "polymul": lambda xp, x, y, p: xp.polymul(x[1:4], p),
    "polymul_int": lambda xp, x, y, p: xp.polymul(p, p[1:]),
    "polyder": lambda xp, x, y, p: xp.polyder(x),
    "polyder_twice_int": lambda xp, x, y, p: xp.polyder(p, 2),
    "polyder_zero": lambda xp, x, y, p: xp.polyder(x, 0),
    "polyder_beyond": lambda xp, x, y, p: xp.polyder(p, 5),
    "polyder_negative": lambda xp, x, y, p: xp.polyder(x, -1),
    "polyint": lambda xp, x, y, p: xp.polyint(x),
    "polyint_k": lambda xp, x, y, p: xp.polyint(p, 2, k=[1.5, -2.0]),
    "polyint_traced_k": lambda xp, x, y, p: xp.polyint(x[:3], 3, k=x[4]),
    "polyint_float32": lambda xp, x, y, p: xp.polyint(x.astype(np.float32)),
    "polyint_short_k": lambda xp, x, y, p: xp.polyint(x, 3, k=[1.0, 2.0]),
    "vander": lambda xp, x, y, p: xp.vander(x[:4]),
    "vander_int": lambda xp, x, y, p: xp.vander(p, 3, increasing=True),
    "vander_float32": lambda xp, x, y, p: xp.vander(x.astype(np.float32), 2),
    "vander_empty": lambda xp, x, y, p: xp.vander(x, 0),
    "vander_2d": lambda xp, x, y, p: xp.vander(y),
    "poly": lambda xp, x, y, p: xp.poly(x[:4]),
    "poly_int": lambda xp, x, y, p: xp.poly(p),
    "poly_float32": lambda xp, x, y, p: xp.poly(x[1:3].astype(np.float32)),
    "poly_bad_shape": lambda xp, x, y, p: xp.poly(y),
    # a square matrix's characteristic polynomial, from its eigenvalues (complex pairs
    # among them, multiplied out in complex numbers, the real part kept)
    "poly_matrix": lambda xp, x, y, p: xp.poly(xp.stack([x[:3], -x[3:6], x[4:7]])),
    "poly_matrix_float32": lambda xp, x, y, p: xp.poly(y[:2].astype(np.float32)),
    "poly_matrix_int": lambda xp, x, y, p: xp.poly(xp.reshape(p, (2, 2))),
    "polyfit": lambda xp, x, y, p: xp.polyfit(x, y[:, 0], 2),
    "polyfit_2d": lambda xp, x, y, p: xp.polyfit(x, y, 3),
    "polyfit_weights": lambda xp, x, y, p: xp.polyfit(x, y[:, 1], 1, w=x + 1),
    "polyfit_cov": lambda xp, x, y, p: xp.polyfit(x, y[:, 1], 2, cov=True),
    "polyfit_cov_unscaled": lambda xp, x, y, p: xp.polyfit(x, y, 1, cov="unscaled"),
    "polyfit_int": lambda xp, x, y, p: xp.polyfit(p, p * 2 + 1, 1),
    "polyfit_lengths": lambda xp, x, y, p: xp.polyfit(x[:3], y[:, 0], 1),
    "polyfit_negative_degree": lambda xp, x, y, p: xp.polyfit(x, y[:, 0], -1),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_numpy(name, backend):
    # polyfit: NumPy solves with LAPACK's gelsd, jitflow through the SVD; a matrix's
    # poly goes through its eigenvalues, rounded by another LAPACK build
    tolerance = {"rtol": 1e-9, "atol": 1e-12} if name.startswith("polyfit") else \
        {"rtol": 1e-6} if name == "poly_matrix_float32" else \
        {"rtol": 1e-13, "atol": 1e-15} if name.startswith("poly_matrix") else {"rtol": 1e-14}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        check_program(PROGRAMS[name], X, Y, P, what=name, **tolerance)


def test_polyfit_full_and_the_rank_warning(backend):
    c, residuals, rank, s, rcond = jnp.polyfit(X, Y[:, 0], 2, full=True)
    expected = np.polyfit(X, Y[:, 0], 2, full=True)
    for got, wanted in zip((c, residuals, rank, s, rcond), expected):
        np.testing.assert_allclose(got, wanted, rtol=1e-9)
    with pytest.warns(np.exceptions.RankWarning):
        jnp.polyfit(X[:3], Y[:3, 0], 4)


def test_polymul_trims_eager_leading_zeros_and_keeps_traced_ones(backend):
    a, b = np.array([0.0, 0.0, 1.0, 2.0]), np.array([0.0, 3.0])
    np.testing.assert_array_equal(jnp.polymul(a, b), np.polymul(a, b))
    traced = jitflow.function(jnp.polymul)(a, b)
    np.testing.assert_array_equal(traced, np.convolve(a, b))


def test_poly_of_complex_roots_is_refused_for_its_dtype(backend):
    # NumPy's result is real for roots in conjugate pairs, complex otherwise
    with pytest.raises(TypeError, match="poly of complex roots.*depends on the values"):
        jitflow.function(np.poly)(np.array([1 + 1j, 1 - 1j]))


@given_per_backend(data=st.data())
def test_polyder_and_polyint_on_drawn_coefficients(data):
    dtype = data.draw(st.sampled_from([d for d in DTYPES if d != np.bool_]), label="dtype")
    p = data.draw(arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=1, max_side=6)),
                  label="p")
    m = data.draw(st.integers(0, 3), label="m")
    check_program(lambda xp, p: xp.polyder(p, m), p, what="polyder")
    check_program(lambda xp, p: xp.polyint(p, m), p, what="polyint", rtol=1e-14)


DIFFERENTIABLE = {
    "polyfit": lambda x, y: jnp.polyfit(x, y, 2),
    "polyfit_weights": lambda x, y: jnp.polyfit(x, y, 1, w=x * x + 1),
    "polymul": lambda x, y: jnp.polymul(x[:3], y[:2]),
    "polyder_polyint": lambda x, y: jnp.polyint(jnp.polyder(y, 1), 1, k=x[0]),
    "poly": lambda x, y: jnp.poly(x[:3]),
    "poly_matrix": lambda x, y: jnp.poly(jnp.stack([x[:3], y[1:4], x[2:] * y[:3]])),
    "vander": lambda x, y: jnp.vander(y[:3], 4),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_derivatives(name, backend):
    x, y = np.array([0.1, 0.4, 0.9, 1.3, 2.0]), np.array([1.0, -0.5, 0.75, 2.0, 0.25])
    fn = DIFFERENTIABLE[name]
    check_grads(fn, (x, y), order=1, rtol=1e-4, atol=1e-6)
    check_grads(jitflow.function(fn), (x, y), order=1, rtol=1e-4, atol=1e-6)


ROOTS = {  # coefficients: NumPy's roots, then a zero per trailing zero, NaN per leading
    "distinct": np.poly([2.0, -1.0, 0.5, 3.0]), "complex pairs": np.array([1.0, 0, 2, 0, 1.5]),
    "leading zeros": np.array([0.0, 0.0, 1.0, -3.0, 2.0]),
    "trailing zeros": np.array([1.0, -3.0, 2.0, 0.0, 0.0]),
    "both": np.array([0.0, 2.0, 0.0, -8.0, 0.0]), "all zero": np.zeros(3),
    "constant": np.array([0.0, 4.0]), "int32": np.array([1, 2, 3], np.int32),
    "float32": np.array([1.0, -1.0, 0.5], np.float32),
    "complex": np.array([1 + 1j, 2, -1j]),
}


@pytest.mark.parametrize("name", sorted(ROOTS))
def test_roots_of_traced_coefficients_keep_their_count(name, backend):
    p = ROOTS[name]
    got = jitflow.function(lambda p: jnp.roots(p, strip_zeros=False))(p)
    nonzero = np.flatnonzero(p)
    leading = nonzero[0] if nonzero.size else len(p)
    expected = np.roots(p) if nonzero.size else np.zeros(0)
    dtype = np.result_type(p.dtype if p.dtype.kind in "fc" else np.float64, np.complex64)
    assert got.dtype == dtype and got.shape == (len(p) - 1,)
    found, undefined = np.split(got, [max(len(got) - leading, 0)])
    assert np.all(np.isnan(undefined))
    np.testing.assert_allclose(np.sort_complex(found), np.sort_complex(expected),
                               rtol=1e-5 if dtype == np.complex64 else 1e-12, atol=1e-12)


def test_roots_needs_strip_zeros_false_when_traced(backend):
    with pytest.raises(TypeError, match=r"roots of traced coefficients.*strip_zeros=False"):
        jitflow.function(np.roots)(ROOTS["distinct"])
    np.testing.assert_array_equal(jnp.roots(ROOTS["distinct"]), np.roots(ROOTS["distinct"]))
    check_grads(lambda p: jnp.abs(jnp.roots(p, strip_zeros=False)), (ROOTS["distinct"],),
                order=1, rtol=1e-5, atol=1e-7)
