"""polyfit of complex points, values or weights (complex_values/polynomials.py),
eager and compiled, against NumPy's to rounding: coefficients, and with full=True
and cov= the residuals, rank, singular values and covariance."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp

pytestmark = pytest.mark.usefixtures("backend")
EXAMPLES = settings(max_examples=10 if settings.default.max_examples < 1000 else 300)
OPTIONS = [{}, {"full": True}, {"cov": True}, {"cov": "unscaled"}]


@st.composite
def fits(draw):
    """(x, y, w or None, deg, dtype): points spread over [-1, 1] (so the Vandermonde
    matrix is well conditioned), complex where drawn."""
    n = draw(st.integers(2, 8))
    deg = draw(st.integers(0, min(3, n - 2)))
    dtype = draw(st.sampled_from([np.complex64, np.complex128]))
    jitter = st.floats(-0.1 / n, 0.1 / n)
    x = np.linspace(-1, 1, n) + np.array(draw(st.lists(jitter, min_size=n, max_size=n)))
    values = st.floats(-10, 10)
    y = np.array([complex(draw(values), draw(values)) for _ in range(n)])
    if draw(st.booleans()):
        x = x + 1j * np.array(draw(st.lists(jitter, min_size=n, max_size=n)))
    elif draw(st.booleans()):
        y = np.stack([y, y[::-1] * 2], axis=1)
    w = np.array(draw(st.lists(st.floats(0.5, 2), min_size=n, max_size=n))) \
        if draw(st.booleans()) else None
    real = np.float32 if dtype == np.complex64 else np.float64
    x = x.astype(dtype if np.iscomplexobj(x) else real)
    return x, y.astype(dtype), w, deg, dtype


@EXAMPLES
@given(fits(), st.sampled_from(OPTIONS))
def test_polyfit_of_complex_values_is_numpys(fit, options):
    x, y, w, deg, dtype = fit
    expected = np.polyfit(x, y, deg, w=w, **options)
    rtol = 1e-3 if dtype == np.complex64 else 1e-9
    # (eagerly, NumPy arrays go to NumPy's own: only traced values reach jitflow's)
    for got in (jitflow.function(lambda x, y: np.polyfit(x, y, deg, w=w, **options))(x, y),
                jitflow.function(lambda x: jnp.polyfit(x, y, deg, w=w, **options))(x)):
        got, want = (got, expected) if isinstance(expected, tuple) else ((got,), (expected,))
        assert len(got) == len(want)
        for g, e in zip(got, want):
            g, e = np.asarray(g), np.asarray(e)
            assert g.dtype == e.dtype and g.shape == e.shape, (g, e)
            np.testing.assert_allclose(g, e, rtol=rtol,
                                       atol=rtol * float(np.max(np.abs(e), initial=1)))


def test_polyfit_checks_its_arguments_as_numpys():
    x, y = np.arange(3.0), np.arange(3) * 1j

    def traced(**options):
        return jitflow.function(lambda y: jnp.polyfit(x, y, **options))(y)
    with pytest.raises(ValueError, match="expected deg >= 0"):
        traced(deg=-1)
    with pytest.raises(TypeError, match="expected w and y to have the same length"):
        traced(deg=1, w=np.ones(2))
    with pytest.raises(ValueError, match="number of data points must exceed order"):
        traced(deg=2, cov=True)
