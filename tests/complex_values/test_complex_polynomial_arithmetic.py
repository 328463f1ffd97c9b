"""NumPy's polynomial arithmetic on complex coefficients (complex_values/
polynomial_arithmetic.py), compiled: polyadd, polysub, polyder, polyint and vander
against NumPy bit for bit (NaN, infinities and signed zeros among the coefficients),
polymul and polydiv to rounding."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from complex_checks import assert_complex_same
from test_complex_truth_and_parts import assert_all_same, complex_vectors, numpy_and_compiled

pytestmark = pytest.mark.usefixtures("backend")
EXAMPLES = settings(max_examples=10 if settings.default.max_examples < 1000 else 300)

# name: NumPy's function of a complex vector z and the real vector r = z.real
EXACT = {
    "polyadd": lambda z, r: np.polyadd(z, r[:2]),
    "polysub": lambda z, r: np.polysub(r[1:], z),
    "polyder": lambda z, r: np.polyder(z, 2),
    "polyint": lambda z, r: np.polyint(z, 2, k=[1j, -0.0]),
    "polyint of real coefficients": lambda z, r: np.polyint(r, 1, k=3 - 1j),
    "vander": lambda z, r: np.vander(z),
    "vander increasing": lambda z, r: np.vander(z, 3, increasing=True),
}


@EXAMPLES
@given(complex_vectors(min_side=2), st.sampled_from(sorted(EXACT)))
def test_sums_derivatives_integrals_and_vander_are_numpys(z, name):
    got, expected = numpy_and_compiled(EXACT[name], z, z.real)
    assert_all_same(got, expected, name)


def finite_coefficients(min_size=1):
    return st.lists(st.complex_numbers(max_magnitude=1e3, allow_nan=False,
                                       allow_infinity=False), min_size=min_size, max_size=5)


DTYPES = st.sampled_from([np.complex64, np.complex128])


@EXAMPLES
@given(finite_coefficients(), DTYPES)
def test_polymul_is_numpys_convolution(coefficients, dtype):
    """(on finite coefficients: NumPy's convolve and jitflow's part ways on infinities,
    as their products do; traced leading coefficients are taken as nonzero, as in
    README, where NumPy trims zeros)"""
    z = np.array(coefficients, dtype)
    assume(z[0] != 0 and z[-1] != 0)  # (in the dtype)
    got, expected = numpy_and_compiled(lambda z: np.polymul(z, z[::-1] * 2), z)
    assert_complex_same(got, expected, scale=np.abs(z).sum() ** 2 * 2,
                        eps=8 * np.finfo(dtype).eps, what="polymul")


def _division_scale(u, v):
    """A bound on the magnitudes NumPy's long division of u by v meets (the quotient's
    and the remainder's terms): each step multiplies by at most |v| / |v[0]| more."""
    growth = 1 + np.abs(v).sum() / np.abs(v[0])
    return np.abs(u).sum() * growth ** len(u) * max(1, 1 / np.abs(v[0]))


@EXAMPLES
@given(finite_coefficients(), finite_coefficients(), DTYPES, st.booleans())
def test_polydiv_is_numpys_long_division(u, v, dtype, real_divisor):
    """Quotient and remainder within rounding of NumPy's, eagerly and with a known
    remainder (its leading near-zero coefficients dropped as NumPy drops them); traced,
    trim_leading_zeros=False keeps all len(u) remainder coefficients."""
    u = np.array(u, dtype)
    v = np.array(v, dtype).real if real_divisor else np.array(v, dtype)
    assume(abs(v[0]) > 1e-2 and (len(u) < len(v) or np.abs(u).max() > 0))
    expected = np.polydiv(u, v)
    scale = _division_scale(u, v)
    eps = 64 * np.finfo(dtype).eps
    quotient, remainder = jnp.polydiv(u, v)
    assert_complex_same(quotient, expected[0], scale=scale, eps=eps, what="quotient")
    if remainder.shape == expected[1].shape:  # (a rounding apart from 1e-8 may trim one more)
        assert_complex_same(remainder, expected[1], scale=scale, eps=eps, what="remainder")
    quotient, remainder = jitflow.function(
        lambda u, v: jnp.polydiv(u, v, trim_leading_zeros=False))(u, v)
    assert remainder.shape == u.shape and remainder.dtype == expected[1].dtype
    assert_complex_same(quotient, expected[0], scale=scale, eps=eps, what="quotient")
    kept = expected[1].shape[0]
    assert_complex_same(remainder[-kept:], expected[1], scale=scale, eps=eps,
                        what="untrimmed remainder")


def test_polydiv_of_traced_coefficients_asks_to_keep_the_remainders_zeros():
    u, v = np.array([1 + 2j, -3, 0.5j, 4]), np.array([2 - 1j, 1])
    with pytest.raises(jitflow.ConcretizationError, match="trim_leading_zeros=False"):
        jitflow.function(lambda u, v: np.polydiv(u, v))(u, v)
    with pytest.raises(IndexError, match="index 0 is out of bounds"):
        jnp.polydiv(u, np.zeros(0, complex))
