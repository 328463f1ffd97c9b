"""numpy.poly where complex values are involved, installed as jitflow.numpy.poly: the
characteristic polynomial of a square matrix, from its eigenvalues (complex), and the
refusal of complex roots, whose polynomial's dtype depends on their values; roots,
from a companion matrix's eigenvalues; and polyfit of complex points or values."""

import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from ..numpy.polynomials import least_squares_fit
from .functions import call
from .linalg import _eager, eigvals
from .parts import is_complex

_real_poly = jnp.poly  # (routed: complex arguments reach `call`)


def poly(seq_of_zeros):
    """NumPy's: for a square matrix, the product of (x - w) over its eigenvalues w,
    multiplied out in complex numbers; a real matrix's come in conjugate pairs, so
    NumPy returns the real part, as here."""
    if is_complex(seq_of_zeros):
        raise TypeError(at_user_line(
            "jitflow.numpy.poly of complex roots: NumPy returns real coefficients where "
            "the roots come in conjugate pairs and complex ones otherwise, a dtype that "
            "depends on the values, which compiled code cannot have; multiply out "
            "np.convolve(c, [1, -root]) over the roots for complex coefficients"))
    shape = np.shape(seq_of_zeros)
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] == 0:
        return _real_poly(seq_of_zeros)
    if _eager(seq_of_zeros):
        return np.poly(seq_of_zeros)
    values = eigvals(seq_of_zeros)
    coefficients = jnp.ones(1, values.dtype)
    for i in range(shape[0]):
        factor = jnp.concatenate([jnp.ones(1, values.dtype), -values[i:i + 1]])
        coefficients = call("convolve", coefficients, factor)
    return coefficients.real


def roots(p, *, strip_zeros=True):
    """NumPy's roots: the eigenvalues of p's companion matrix. NumPy first trims p's
    leading and trailing zeros (appending a zero root per trailing zero), so how many
    roots there are depends on p's values: traced coefficients need
    strip_zeros=False, as in JAX. Then there are len(p) - 1 roots, always complex:
    NumPy's (in its order), a zero for each trailing zero, and NaN for each leading one.
    The companion matrix keeps its size: the trimmed polynomial's block, and a zero
    block that LAPACK splits off, for the zeros."""
    if strip_zeros:
        if _eager(p):
            return np.roots(p)
        raise TypeError(at_user_line(
            "numpy.roots of traced coefficients: it trims their leading and trailing "
            "zeros, so how many roots it gives depends on their values; call "
            "jitflow.numpy.roots(p, strip_zeros=False): len(p) - 1 complex roots, NaN "
            "for each leading zero"))
    p = jnp.atleast_1d(p)
    if jnp.ndim(p) != 1:
        raise ValueError(at_user_line("Input must be a rank-1 array."))
    if not is_complex(p) and np.dtype(p.dtype).kind != "f":
        p = jnp.astype(p, np.float64)
    n = jnp.shape(p)[0] - 1
    complex_dtype = np.result_type(p.dtype, np.complex64)
    if n < 1:
        return jnp.zeros(0, complex_dtype)
    nonzero = jnp.not_equal(p, 0)
    leading = jnp.where(jnp.any(nonzero), jnp.argmax(nonzero), n + 1)
    trailing = jnp.argmax(nonzero[::-1])
    kept = n - leading - trailing  # the trimmed polynomial's degree (or less: all zero)
    rolled = jnp.take(p, jnp.remainder(jnp.arange(n + 1) + leading, n + 1))
    first = jnp.where(jnp.equal(rolled[0], 0), jnp.ones_like(rolled[0]), rolled[0])
    top = jnp.reshape(-rolled[1:] / first, (1, n))
    rows = jnp.arange(1, n)[:, None]
    below = jnp.where(jnp.logical_and(jnp.equal(rows, jnp.arange(n)[None, :] + 1),
                                      jnp.less(rows, kept)), 1, 0)
    companion = jnp.concatenate([top, jnp.astype(below, top.dtype)], axis=0)
    values = jnp.astype(eigvals(companion), complex_dtype)
    position = jnp.arange(n)
    zero, nan = complex_dtype.type(0), complex_dtype.type(complex(np.nan, np.nan))
    return jnp.where(jnp.greater_equal(position, n - leading), nan,
                     jnp.where(jnp.greater_equal(position, kept), zero, values))


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """NumPy 2.4's recipe where x, y or w is complex: jitflow.numpy.polyfit's, with the
    namespace's functions, which take complex values (columns scaled by the complex
    root of their complex squares summed, complex least squares)."""
    return least_squares_fit(jnp, x, y, deg, rcond, full, w, cov)
